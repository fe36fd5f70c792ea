// Reads the HAR's committed index.d.ts (generated from the Rust code by scripts/gen-dts.sh), so
// tests take the interface's lists from it instead of copying them.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { REPO_ROOT } from './native.mjs';

export const NATIVE_DTS = path.join(REPO_ROOT, 'ets/src/main/cpp/types/librum_native/index.d.ts');

const dts = () => fs.readFileSync(NATIVE_DTS, 'utf8');

/** The field names index.d.ts declares for `interface name`. */
export function declaredFields(name) {
  const body = dts().match(new RegExp(`export interface ${name} \\{([\\s\\S]*?)\\n\\}`))?.[1];
  assert.ok(body, `index.d.ts declares interface ${name}`);
  return [...body.matchAll(/^\s+(\w+)\??: /gm)].map((m) => m[1]);
}

/** The string values of `export type name = 'a' | 'b' | ...`. */
export function declaredUnion(name) {
  const line = dts().match(new RegExp(`^export type ${name} = (.*)$`, 'm'))?.[1];
  assert.ok(line, `index.d.ts declares type ${name}`);
  return [...line.matchAll(/'([^']*)'/g)].map((m) => m[1]);
}
