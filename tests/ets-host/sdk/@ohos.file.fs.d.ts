/* Stand-in for the SDK's api/@ohos.file.fs.d.ts (the synchronous calls the demo and the crash state use). */
declare namespace fileIo {
  export {
    accessSync, closeSync, fsyncSync, listFileSync, mkdirSync, openSync, readSync, readTextSync, renameSync, statSync,
    unlinkSync, writeSync
  };
  export { File, Stat, ReadOptions, ReadTextOptions, WriteOptions, ListFileOptions };

  export namespace OpenMode {
    const READ_ONLY = 0o0;
    const WRITE_ONLY = 0o1;
    const READ_WRITE = 0o2;
    const CREATE = 0o100;
    const TRUNC = 0o1000;
    const APPEND = 0o2000;
  }
}

declare function accessSync(path: string): boolean;
declare function closeSync(file: number | File): void;
declare function fsyncSync(fd: number): void;
declare function listFileSync(path: string, options?: ListFileOptions): string[];
declare function mkdirSync(path: string, recursion?: boolean): void;
declare function openSync(path: string, mode?: number): File;
declare function readSync(fd: number, buffer: ArrayBuffer, options?: ReadOptions): number;
declare function readTextSync(filePath: string, options?: ReadTextOptions): string;
declare function renameSync(oldPath: string, newPath: string): void;
declare function statSync(file: string | number): Stat;
declare function unlinkSync(path: string): void;
declare function writeSync(fd: number, buffer: ArrayBuffer | string, options?: WriteOptions): number;

declare interface File {
  readonly fd: number;
  readonly path: string;
  readonly name: string;
}

declare interface Stat {
  readonly size: number;
  readonly mtime: number;
  isDirectory(): boolean;
  isFile(): boolean;
}

export interface ReadOptions {
  offset?: number;
  length?: number;
}

export interface ReadTextOptions extends ReadOptions {
  encoding?: string;
}

export interface WriteOptions {
  offset?: number;
  length?: number;
  encoding?: string;
}

export interface ListFileOptions {
  recursion?: boolean;
  listNum?: number;
}

export default fileIo;
