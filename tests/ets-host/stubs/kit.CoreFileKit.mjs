// Run-time stand-in for @kit.CoreFileKit on the host: fileIo's synchronous calls over node:fs.
// `fileIo.host.failWrites = true` makes writes throw, as a full or read-only disk does.
import fs from 'node:fs';

const host = { failWrites: false };

const OpenMode = { READ_ONLY: 0o0, WRITE_ONLY: 0o1, READ_WRITE: 0o2, CREATE: 0o100, TRUNC: 0o1000, APPEND: 0o2000 };

function flags(mode = 0) {
  let f = mode & 0o3;
  if (mode & OpenMode.CREATE) f |= fs.constants.O_CREAT;
  if (mode & OpenMode.TRUNC) f |= fs.constants.O_TRUNC;
  if (mode & OpenMode.APPEND) f |= fs.constants.O_APPEND;
  return f;
}

function businessError(e) {
  return Object.assign(new Error(e.message), { code: 13900002 });
}

function wrap(fn) {
  return (...args) => {
    try {
      return fn(...args);
    } catch (e) {
      throw businessError(e);
    }
  };
}

export const fileIo = {
  OpenMode,
  accessSync: (p) => fs.existsSync(p),
  mkdirSync: wrap((p, recursion) => fs.mkdirSync(p, { recursive: recursion === true })),
  openSync: wrap((p, mode) => {
    if (host.failWrites && (mode ?? 0) & 0o3) throw new Error('ENOSPC: no space left on device');
    const fd = fs.openSync(p, flags(mode), 0o600);
    return { fd, path: p, name: p.split('/').pop() };
  }),
  writeSync: wrap((fd, buffer) => fs.writeSync(fd, typeof buffer === 'string' ? buffer : Buffer.from(buffer))),
  fsyncSync: wrap((fd) => fs.fsyncSync(fd)),
  closeSync: wrap((file) => fs.closeSync(typeof file === 'number' ? file : file.fd)),
  readTextSync: wrap((p) => fs.readFileSync(p, 'utf8')),
  renameSync: wrap((a, b) => fs.renameSync(a, b)),
  unlinkSync: wrap((p) => fs.unlinkSync(p)),
  listFileSync: wrap((p) => fs.readdirSync(p)),
  host,
};
