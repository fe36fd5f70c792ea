/* Stand-in for the SDK's api/@ohos.zlib.d.ts (subset: the in-memory deflate stream). */
declare namespace zlib {
  enum CompressLevel {
    COMPRESS_LEVEL_NO_COMPRESSION = 0,
    COMPRESS_LEVEL_BEST_SPEED = 1,
    COMPRESS_LEVEL_BEST_COMPRESSION = 9,
    COMPRESS_LEVEL_DEFAULT_COMPRESSION = -1
  }
  enum CompressStrategy {
    COMPRESS_STRATEGY_DEFAULT_STRATEGY = 0,
    COMPRESS_STRATEGY_FILTERED = 1,
    COMPRESS_STRATEGY_HUFFMAN_ONLY = 2,
    COMPRESS_STRATEGY_RLE = 3,
    COMPRESS_STRATEGY_FIXED = 4
  }
  enum MemLevel {
    MEM_LEVEL_MIN = 1,
    MEM_LEVEL_MAX = 9,
    MEM_LEVEL_DEFAULT = 8
  }
  enum CompressFlushMode {
    NO_FLUSH = 0,
    PARTIAL_FLUSH = 1,
    SYNC_FLUSH = 2,
    FULL_FLUSH = 3,
    FINISH = 4,
    BLOCK = 5,
    TREES = 6
  }
  enum ReturnStatus {
    OK = 0,
    STREAM_END = 1,
    NEED_DICT = 2
  }
  enum CompressMethod {
    DEFLATED = 8
  }
  interface ZStream {
    nextIn?: ArrayBuffer;
    availableIn?: number;
    totalIn?: number;
    nextOut?: ArrayBuffer;
    availableOut?: number;
    totalOut?: number;
    dataType?: number;
    adler?: number;
  }
  interface Zip {
    getZStream(): Promise<ZStream>;
    deflateInit2(strm: ZStream, level: CompressLevel, method: CompressMethod, windowBits: number, memLevel: MemLevel,
      strategy: CompressStrategy): Promise<ReturnStatus>;
    deflate(strm: ZStream, flush: CompressFlushMode): Promise<ReturnStatus>;
    deflateEnd(strm: ZStream): Promise<ReturnStatus>;
    deflateBound(strm: ZStream, sourceLength: number): Promise<number>;
  }
  function createZip(): Promise<Zip>;
  function createZipSync(): Zip;
}

export default zlib;
