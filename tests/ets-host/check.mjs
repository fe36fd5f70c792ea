// Host checks of the hvigor project, run by scripts/check-ets.sh:
//   node check.mjs parse|lint|typecheck|project|all   (or `sdk`: which ArkTS declarations they use)
// Each check prints its problems and a one-line result; the exit code is non-zero on failure.
import { checkParse } from './lib/parse.mjs';
import { lint, sdkTypecheck } from './lib/lint.mjs';
import { describeSdk } from './lib/sdk.mjs';
import { checkProject } from './lib/project.mjs';
import { checkRules } from './lib/rules.mjs';
import { checkSince } from './lib/since.mjs';
import { typecheck } from './lib/stage.mjs';

const CHECKS = {
  parse: ['every .ets / .json5 / .json parses (ohos-typescript, json5)', checkParse],
  project: ['hvigor project files are consistent', checkProject],
  rules: ['what es2abc, worker threads and obfuscation need beyond the linter: @Concurrent closures, no librum_native.so value import reachable from @Concurrent/@Sendable modules, keep lists cover index.d.ts', checkRules],
  lint: ['ArkTS linter (ohos-typescript ArkTSLinter 1.1): the real SDK, or the stand-ins on non-UI .ets', lint],
  typecheck: [
    'type check, errors and warnings: ohos-typescript on every .ets against the real SDK, or tsc on non-UI .ets against the stand-ins',
    () => sdkTypecheck() ?? typecheck()
  ],
  since: [
    'API levels: no SDK declaration the code uses is @since above compatibleSdkVersion, which is the highest one used',
    checkSince
  ]
};

const wanted = process.argv.slice(2);
if (wanted.includes('sdk')) {
  console.log(describeSdk());
  process.exit(0);
}
const names = wanted.length === 0 || wanted.includes('all') ? Object.keys(CHECKS) : wanted;
let failed = 0;
for (const name of names) {
  const check = CHECKS[name];
  if (!check) {
    console.error(`unknown check ${name}; known: ${Object.keys(CHECKS).join(', ')}, all`);
    process.exit(2);
  }
  const [title, run] = check;
  let result;
  try {
    result = await run();
  } catch (e) {
    result = { problems: [`crashed: ${e && e.stack ? e.stack : e}`], summary: '' };
  }
  for (const p of result.problems) {
    console.log(`  ${p}`);
  }
  const ok = result.problems.length === 0;
  if (!ok) {
    failed++;
  }
  console.log(`${ok ? 'PASS' : 'FAIL'} ${name}: ${title} (${result.summary}${ok ? '' : `; ${result.problems.length} problem(s)`})`);
}
process.exit(failed === 0 ? 0 : 1);
