// Helpers the Node tests (tests/node) and the facade's host tests (tests/ets-host) share.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';

/**
 * A fresh temp directory, removed after the test `t` (node:test's context), or at process exit
 * when no test is given.
 */
export function tmpDir(t, prefix = 'rum-test-') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  // Retried: a pipeline a test left running may still be adding a file while the tree goes.
  const remove = () => fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 20 });
  if (t) t.after(remove);
  else if (t === undefined) process.on('exit', remove);
  return dir;
}

/** Parses NDJSON strictly: `\n`-terminated, every line one JSON document. `body` is text or bytes. */
export function parseNdjson(body, where = 'NDJSON') {
  const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
  if (text.length === 0) return [];
  assert.ok(text.endsWith('\n'), `${where}: NDJSON must end with \\n (ends with ${JSON.stringify(text.slice(-40))})`);
  const lines = text.slice(0, -1).split('\n');
  return lines.map((line, i) => {
    assert.ok(line.length > 0, `${where}: line ${i + 1} is empty`);
    try {
      return JSON.parse(line);
    } catch (e) {
      assert.fail(`${where}: line ${i + 1} is not JSON (${e.message}): ${line.slice(0, 200)}`);
    }
  });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` on later turns until it returns truthy (and returns that); fails after `timeoutMs`. */
export async function until(fn, timeoutMs, what) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(5);
  }
}

/**
 * The NDJSON text of a batch file: sealed batches are stored gzip-compressed (`.ndjson.gz`,
 * claimed or not), the active one and plain ones as they are. A seal's temporary file holds
 * nothing yet.
 */
export function batchFileText(file) {
  const name = path.basename(file);
  if (name.endsWith('.tmp')) return '';
  const raw = fs.readFileSync(file);
  return (/\.ndjson\.gz(\.|$)/.test(name) ? zlib.gunzipSync(raw) : raw).toString('utf8');
}
