#!/usr/bin/env node
// Rewrites the export lists in this folder from a checkout of OpenHarmony's interface_sdk_c, the
// repository whose *.ndk.json files the NDK's stub libraries are generated from:
//
//   node scripts/ohos-ndk/update.mjs <interface_sdk_c checkout> [commit it is at]
//
// Each list is one exported name per line, sorted, under a header naming its source file; after
// the name, `variable` marks a data symbol and `since=N` the API level that introduced it (the
// source's first_introduced; no mark: there from the first NDK). scripts/link-ohos.sh builds stand-in libraries from them and
// scripts/check-ohos-lib.sh checks a built library's imports against them.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));

/** Library (its SONAME) → its description file in interface_sdk_c. */
export const LISTS = [
  { soname: 'libace_napi.z.so', source: 'arkui/napi/libnapi.ndk.json', what: 'Node-API (ArkUI napi)' },
  { soname: 'libhilog_ndk.z.so', source: 'hiviewdfx/hilog/libhilog.ndk.json', what: 'HiLog' },
  { soname: 'libc.so', source: 'third_party/musl/ndk_script/adapter/libc.ndk.json', what: 'the C library (musl; also libm, libdl, libpthread)' },
];

function main(argv) {
  const [checkout, commit] = argv;
  if (!checkout) {
    console.error('usage: node scripts/ohos-ndk/update.mjs <interface_sdk_c checkout> [commit]');
    process.exit(2);
  }
  for (const { soname, source, what } of LISTS) {
    const file = join(checkout, source);
    let entries;
    try {
      entries = JSON.parse(readFileSync(file, 'utf8'));
    } catch (e) {
      console.error(`update: cannot read ${file}: ${e.message}`);
      process.exit(1);
    }
    if (!Array.isArray(entries) || entries.some((e) => typeof e?.name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(e.name))) {
      console.error(`update: ${file} is not a list of { "name": <C identifier> } entries`);
      process.exit(1);
    }
    const line = (e) => {
      // libhilog.ndk.json spells it first_instroduced.
      const since = e.first_introduced ?? e.first_instroduced;
      return [e.name, e.type === 'variable' ? 'variable' : '', since ? `since=${since}` : ''].filter(Boolean).join(' ');
    };
    const lines = [...new Set(entries.map(line))].sort();
    const header = [
      `# Symbols ${soname} exports to applications: ${what}.`,
      `# Source: OpenHarmony interface_sdk_c, ${source}${commit ? ` (commit ${commit})` : ''},`,
      '# the description the NDK\'s stub library is generated from. One name per line; "variable" marks',
      '# data, "since=N" the API level that introduced it. Regenerate with scripts/ohos-ndk/update.mjs;',
      '# used by scripts/ohos-cross.sh (stand-in libraries), scripts/check-ohos-lib.sh and',
      '# scripts/check-napi-symbols.sh (allowed imports).',
    ];
    const out = join(HERE, `${soname.replace(/\.so$/, '')}.txt`);
    writeFileSync(out, `${header.join('\n')}\n${lines.join('\n')}\n`);
    console.log(`${out}: ${lines.length} symbols`);
  }
}

main(process.argv.slice(2));
