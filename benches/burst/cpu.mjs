// CPU time of the main (UI) thread and of the whole process, read by the sample process on its
// main thread.
//
// - Process: process.cpuUsage() (getrusage RUSAGE_SELF: user + system of every thread, the native
//   writer thread, libuv's pool and V8's helper threads included), in µs.
// - Main thread: Linux's per-thread accounting of the thread whose tid is the pid (the JS thread of
//   the sample). /proc/self/task/<pid>/schedstat gives its run time in ns; its first field is only
//   brought up to date when the thread is scheduled, so a reading is preceded by a 0.1 ms
//   Atomics.wait (the thread blocks, the kernel settles its run time). Where schedstat is missing,
//   /proc/self/task/<pid>/stat's utime + stime is used (clock ticks: 10 ms on most kernels, too
//   coarse for a 1,000-action burst; the report names the source).
// On another OS the main-thread figure is null.

import fs from 'node:fs';

const TICK_MS = 10; // USER_HZ = 100 on every Linux ABI Node supports
const settle = new Int32Array(new SharedArrayBuffer(4));
const MAIN = `/proc/self/task/${process.pid}`;

function readSchedstat() {
  try {
    const ns = Number(fs.readFileSync(`${MAIN}/schedstat`, 'utf8').split(' ')[0]);
    return Number.isFinite(ns) ? ns / 1e6 : null;
  } catch {
    return null;
  }
}

/** The main thread's stat fields from field 3 (state) on, or null. */
function statFields() {
  try {
    const s = fs.readFileSync(`${MAIN}/stat`, 'utf8');
    return s.slice(s.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

function readStat() {
  const f = statFields();
  return f === null ? null : (Number(f[11]) + Number(f[12])) * TICK_MS; // fields 14 utime, 15 stime
}

/**
 * The main thread's minor page faults so far (field 10): a count, not a time, so it backs a claim
 * about memory the thread touches fresh (a text copied into new pages) where its CPU time is noisy.
 */
function readFaults() {
  const f = statFields();
  return f === null ? null : Number(f[7]);
}

export const MAIN_THREAD_SOURCE = readSchedstat() !== null ? 'schedstat' : readStat() !== null ? 'stat' : null;

/** A reading: { processMs, threadMs, threadFaults } (the thread's null where the OS does not say). */
export function cpuNow() {
  Atomics.wait(settle, 0, 0, 0.1);
  const threadMs = MAIN_THREAD_SOURCE === 'schedstat' ? readSchedstat() : MAIN_THREAD_SOURCE === 'stat' ? readStat() : null;
  const c = process.cpuUsage();
  return { processMs: (c.user + c.system) / 1000, threadMs, threadFaults: readFaults() };
}

/** CPU spent since reading `a`: { processMs, threadMs, threadFaults }. */
export function cpuSince(a) {
  const b = cpuNow();
  const since = (k) => (a[k] === null || b[k] === null ? null : b[k] - a[k]);
  return { processMs: b.processMs - a.processMs, threadMs: since('threadMs'), threadFaults: since('threadFaults') };
}
