// The platform audit stays complete: every Node-API function the built library imports has its
// row in docs/arkts-napi.md (what the binding relies on, Node's and ArkTS's behaviour, what the
// binding does about a difference), and the library imports none of the functions the audit
// found unusable on ArkTS.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT, libraryPath } from '../shared/native.mjs';

/** The napi_* functions the library imports (nm from binutils, which scripts/test.sh installs). */
function imports() {
  const out = execFileSync('nm', ['-D', '--undefined-only', libraryPath()], { encoding: 'utf8' });
  return [...new Set(out.split('\n').map((l) => l.trim().split(/\s+/).pop()).filter((s) => /^napi_/.test(s ?? '')))].sort();
}

/** The functions with a row in the audit's table: `| \`napi_x\` | ...`. */
function auditedRows() {
  const text = fs.readFileSync(path.join(REPO_ROOT, 'docs/arkts-napi.md'), 'utf8');
  const rows = new Map();
  for (const line of text.split('\n')) {
    const m = line.match(/^\|\s*`(napi_\w+)`\s*\|(.*)\|\s*$/);
    if (m) rows.set(m[1], m[2].split('|').map((c) => c.trim()));
  }
  return rows;
}

test('every Node-API function the library imports has a complete row in docs/arkts-napi.md', () => {
  const rows = auditedRows();
  const imported = imports();
  assert.ok(imported.length > 20, `only ${imported.length} napi_* imports found: is this the built library?`);
  const missing = imported.filter((f) => !rows.has(f));
  assert.deepEqual(missing, [], 'imported without a row in docs/arkts-napi.md');
  for (const f of imported) {
    const cells = rows.get(f);
    assert.ok(cells.length >= 4 && cells.every((c) => c.length > 0), `${f}: every column of its row is filled`);
  }
});

test('the library identifies its objects without type tags (ArkTS stores them as enumerable BigInt properties)', () => {
  const imported = imports();
  for (const f of ['napi_type_tag_object', 'napi_check_object_type_tag']) {
    assert.ok(!imported.includes(f), `${f} is imported`);
  }
});
