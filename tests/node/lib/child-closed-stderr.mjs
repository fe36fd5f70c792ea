// A child process for crash.test.mjs, started with its stderr a pipe whose reading end the parent
// closed: the library's log lines then fail to write (EPIPE; Node ignores SIGPIPE). A flush that
// times out logs a warning; it must return false, not throw, and the pipeline must keep working.
// Prints one JSON line. Usage: node child-closed-stderr.mjs <storageDir>

import { loadNative } from './native.mjs';

const [dir] = process.argv.slice(2);
const { RumPipeline } = loadNative();
// native.mjs quiets the library's warnings; this child wants them written (and failing).
delete process.env.RUM_NATIVE_QUIET;
const p = new RumPipeline({
  storageDir: dir,
  applicationId: 'closed-stderr',
  flushTimeoutMs: 1,
  turnBudgetMs: 1,
  queueCapacity: 1e6,
  diskQuotaBytes: 2 ** 28,
  batchMaxBytes: 2 ** 20,
});
p.startView('v', 'Closed stderr');
const pad = 's'.repeat(500);
const result = {};
for (let round = 0; round < 3; round++) {
  for (let seq = 0; seq < 20_000; seq++) p.addAction('tap', `a${seq}`, { seq, pad });
  try {
    result[`flush${round}`] = p.flush();
  } catch (e) {
    result[`flush${round}`] = { threw: String(e?.message) };
  }
}
result.stopped = (() => {
  try {
    return p.stop();
  } catch (e) {
    return { threw: String(e?.message) };
  }
})();
process.stdout.write(`${JSON.stringify(result)}\n`);
