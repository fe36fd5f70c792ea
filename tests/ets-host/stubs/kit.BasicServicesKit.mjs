// Run-time stand-in for @kit.BasicServicesKit on the host:
//   zlib       — the in-memory deflate stream of @ohos.zlib (createZipSync → Zip with
//                deflateInit2 / deflateBound / deflate / getZStream / deflateEnd), backed by
//                node:zlib: windowBits > 15 writes a gzip stream, 8..15 zlib, < 0 raw deflate;
//                one deflate(FINISH) call with room enough compresses the whole input, as
//                the uploader uses it;
//   deviceInfo — the values of a phone; a test may change them (deviceInfo.deviceType = 'tablet')
//                and put them back with resetDeviceInfo().
import * as nodeZlib from 'node:zlib';

const CompressLevel = {
  COMPRESS_LEVEL_NO_COMPRESSION: 0, COMPRESS_LEVEL_BEST_SPEED: 1, COMPRESS_LEVEL_BEST_COMPRESSION: 9,
  COMPRESS_LEVEL_DEFAULT_COMPRESSION: -1
};
const CompressStrategy = {
  COMPRESS_STRATEGY_DEFAULT_STRATEGY: 0, COMPRESS_STRATEGY_FILTERED: 1, COMPRESS_STRATEGY_HUFFMAN_ONLY: 2,
  COMPRESS_STRATEGY_RLE: 3, COMPRESS_STRATEGY_FIXED: 4
};
const MemLevel = { MEM_LEVEL_MIN: 1, MEM_LEVEL_MAX: 9, MEM_LEVEL_DEFAULT: 8 };
const CompressFlushMode = { NO_FLUSH: 0, PARTIAL_FLUSH: 1, SYNC_FLUSH: 2, FULL_FLUSH: 3, FINISH: 4, BLOCK: 5, TREES: 6 };
const ReturnStatus = { OK: 0, STREAM_END: 1, NEED_DICT: 2 };
const CompressMethod = { DEFLATED: 8 };

/** A rejected call, shaped like the SDK's BusinessError (17800004: stream error). */
function businessError(code, message) {
  const e = new Error(message);
  e.code = code;
  return e;
}

/** Every Zip stream created (for tests: did the uploader compress, and how?). */
const streams = [];

class Zip {
  #init = null;
  #state = {};

  async deflateInit2(strm, level, method, windowBits, memLevel, strategy) {
    if (method !== CompressMethod.DEFLATED || typeof windowBits !== 'number') {
      throw businessError(401, 'deflateInit2: bad parameters');
    }
    this.#init = { level, windowBits, memLevel, strategy };
    this.#state = { totalIn: 0, totalOut: 0, availableIn: 0, availableOut: 0 };
    return ReturnStatus.OK;
  }

  async deflateBound(strm, sourceLength) {
    // zlib's deflateBound for the gzip wrapper, generously: the stored-block bound plus header.
    return sourceLength + Math.ceil(sourceLength / 16383) * 5 + 64;
  }

  async deflate(strm, flush) {
    if (this.#init === null) {
      throw businessError(17800004, 'deflate before deflateInit2');
    }
    if (flush !== CompressFlushMode.FINISH) {
      throw businessError(401, 'the host stand-in supports deflate(FINISH) only');
    }
    const input = Buffer.from(strm.nextIn, 0, strm.availableIn ?? strm.nextIn.byteLength);
    const { level, windowBits, memLevel, strategy } = this.#init;
    const opts = { level, memLevel, strategy, windowBits: Math.min(Math.abs(windowBits) & 15 || 15, 15) };
    const out = windowBits > 15 ? nodeZlib.gzipSync(input, opts)
      : windowBits < 0 ? nodeZlib.deflateRawSync(input, opts) : nodeZlib.deflateSync(input, opts);
    const room = strm.availableOut ?? strm.nextOut.byteLength;
    if (out.length > room) {
      throw businessError(17800007, 'the output buffer is too small');
    }
    new Uint8Array(strm.nextOut).set(out, 0);
    this.#state = { totalIn: input.length, totalOut: out.length, availableIn: 0, availableOut: room - out.length };
    streams.push({ windowBits, inBytes: input.length, outBytes: out.length });
    return ReturnStatus.STREAM_END;
  }

  async getZStream() {
    return { ...this.#state };
  }

  async deflateEnd() {
    this.#init = null;
    return ReturnStatus.OK;
  }
}

export const zlib = {
  createZipSync: () => new Zip(),
  createZip: async () => new Zip(),
  CompressLevel, CompressStrategy, MemLevel, CompressFlushMode, ReturnStatus, CompressMethod,
  streams
};

// systemDateTime: the monotonic clock (process.hrtime) and the wall clock.
export const systemDateTime = {
  TimeType: { STARTUP: 0, ACTIVE: 1 },
  getTime: (isNanoseconds = false) => (isNanoseconds ? Date.now() * 1e6 : Date.now()),
  getUptime: (timeType, isNanoseconds = false) => {
    const ns = Number(process.hrtime.bigint());
    return isNanoseconds ? ns : Math.floor(ns / 1e6);
  }
};

const DEVICE_INFO = Object.freeze({
  deviceType: 'phone',
  brand: 'HUAWEI',
  marketName: 'HUAWEI Mate 60',
  productModel: 'ALN-AL00',
  osFullName: 'HarmonyOS-5.0.0.120',
  displayVersion: 'ALN-AL00 5.0.0.120',
  sdkApiVersion: 12,
  abiList: 'arm64-v8a',
  majorVersion: 5,
  distributionOSName: 'HarmonyOS',
  distributionOSVersion: '5.0.0'
});

export const deviceInfo = { ...DEVICE_INFO };

/** Restores deviceInfo's phone values (drops fields a test added). */
export function resetDeviceInfo() {
  for (const key of Object.keys(deviceInfo)) {
    delete deviceInfo[key];
  }
  Object.assign(deviceInfo, DEVICE_INFO);
}
