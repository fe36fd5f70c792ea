// Run-time stand-in for @kit.CryptoArchitectureKit on the host: cryptoFramework.createMd
// (message digests with updateSync / digestSync and their promise forms), backed by node:crypto.
import { createHash } from 'node:crypto';

const ALGORITHMS = { SHA1: 'sha1', SHA224: 'sha224', SHA256: 'sha256', SHA384: 'sha384', SHA512: 'sha512', MD5: 'md5' };

function businessError(code, message) {
  const e = new Error(message);
  e.code = code;
  return e;
}

class Md {
  #hash;

  constructor(algName) {
    this.algName = algName;
    this.#hash = createHash(ALGORITHMS[algName]);
  }

  updateSync(input) {
    this.#hash.update(Buffer.from(input.data.buffer, input.data.byteOffset, input.data.byteLength));
  }

  async update(input) {
    this.updateSync(input);
  }

  digestSync() {
    return { data: new Uint8Array(this.#hash.digest()) };
  }

  async digest() {
    return this.digestSync();
  }

  getMdLength() {
    return this.#hash.copy().digest().length;
  }
}

export const cryptoFramework = {
  createMd(algName) {
    if (!(algName in ALGORITHMS)) {
      throw businessError(401, `unknown digest ${algName}`);
    }
    return new Md(algName);
  }
};
