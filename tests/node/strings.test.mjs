// Strings cross into native code exactly: every length around the stack-buffer boundary of the
// argument copy (1 KiB of UTF-8), with 1- to 4-byte characters straddling it, arrives unchanged in
// the written documents, as an argument and as an attribute value.

import assert from 'node:assert/strict';
import test from 'node:test';

import { ofType, openPipeline, readBatchFiles } from './lib/helpers.mjs';

const CHARS = ['a', 'é', '€', '😀']; // 1, 2, 3 and 4 bytes of UTF-8

function stringsAroundTheBoundary() {
  const out = [];
  for (const ch of CHARS) {
    const width = Buffer.byteLength(ch);
    for (let bytes = 1000; bytes <= 1040; bytes++) {
      // ASCII up to the point where `ch` makes the total `bytes` long, then `ch` at the end.
      if (bytes < width) continue;
      out.push('x'.repeat(bytes - width) + ch);
    }
  }
  out.push('😀'.repeat(300)); // 1,200 bytes of 4-byte characters
  out.push('é'.repeat(2_000)); // 4,000 bytes of 2-byte characters
  out.push('€'.repeat(2_000)); // 6,000 bytes: three a UTF-16 unit, the most the longer copy's buffer allows for
  return out;
}

test('strings of every length around the copy buffer arrive byte for byte', (t) => {
  const { p, dir } = openPipeline(t);
  p.startView('home', 'Home');
  const strings = stringsAroundTheBoundary();
  strings.forEach((s, i) => p.addAction('custom', s, { i, s }));
  assert.equal(p.flush(), true);
  const actions = ofType(readBatchFiles(dir).docs, 'action');
  assert.equal(actions.length, strings.length);
  for (const a of actions) {
    const expected = strings[a.context.i];
    assert.equal(a.action.target.name, expected, `name #${a.context.i} (${Buffer.byteLength(expected)} bytes)`);
    assert.equal(a.context.s, expected, `attribute #${a.context.i}`);
  }
});
