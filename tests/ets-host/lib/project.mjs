// The hvigor project's files agree with each other, as hvigor and ohpm will require:
// module names and paths, task types, model versions, package names and dependencies, the
// resources and source files that module.json5 / app.json5 reference, and the HAR's TS-file
// generation for its @Sendable classes.
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { HAR_PACKAGE, REPO_ROOT, harEtsFiles, read } from './files.mjs';
import { apiLevel } from './since.mjs';

const require = createRequire(import.meta.url);
const JSON5 = require('json5');

function load(problems, path) {
  const full = join(REPO_ROOT, path);
  if (!existsSync(full)) {
    problems.push(`${path}: missing`);
    return null;
  }
  try {
    return JSON5.parse(read(full));
  } catch (e) {
    problems.push(`${path}: ${e.message}`);
    return null;
  }
}

function expectTasks(problems, path, tasks) {
  const full = join(REPO_ROOT, path);
  if (!existsSync(full)) {
    problems.push(`${path}: missing`);
    return;
  }
  const text = read(full);
  if (!new RegExp(`import\\s*\\{\\s*${tasks}\\s*\\}\\s*from\\s*'@ohos/hvigor-ohos-plugin'`).test(text) ||
    !new RegExp(`system:\\s*${tasks}`).test(text)) {
    problems.push(`${path}: must export { system: ${tasks} } from @ohos/hvigor-ohos-plugin`);
  }
}

/** `$kind:name` references of a profile resolve in `resourceDirs` (base/element, base/media, base/profile). */
function checkResources(problems, where, json, resourceDirs) {
  const text = JSON.stringify(json);
  for (const m of text.matchAll(/"\$(string|color|float|media|profile):([A-Za-z0-9_]+)"/g)) {
    const [, kind, name] = m;
    const found = resourceDirs.some((dir) => {
      const base = join(REPO_ROOT, dir, 'base');
      if (kind === 'media' || kind === 'profile') {
        const folder = join(base, kind);
        return existsSync(folder) && readdirSync(folder).some((f) => f.replace(/\.[^.]+$/, '') === name);
      }
      const file = join(base, 'element', `${kind}.json`);
      return existsSync(file) && (JSON.parse(read(file))[kind] ?? []).some((e) => e.name === name);
    });
    if (!found) {
      problems.push(`${where}: $${kind}:${name} is not defined in ${resourceDirs.join(' or ')}`);
    }
  }
}

/** The API level the project targets: the DevEco Studio / SDK release that ships it builds it. */
export const TARGET_API = 26;

export function checkProject() {
  const problems = [];
  expectTasks(problems, 'hvigorfile.ts', 'appTasks');
  const profile = load(problems, 'build-profile.json5');
  const ohPackage = load(problems, 'oh-package.json5');
  const hvigorConfig = load(problems, 'hvigor/hvigor-config.json5');
  if (ohPackage && hvigorConfig && ohPackage.modelVersion !== hvigorConfig.modelVersion) {
    problems.push(`modelVersion differs: oh-package.json5 ${ohPackage.modelVersion}, ` +
      `hvigor/hvigor-config.json5 ${hvigorConfig.modelVersion}`);
  }
  // Version strings as DevEco Studio 26 writes them: "26.0.0" from API 26 on (also modelVersion),
  // "<x.y.z>(<api>)" below it, e.g. "6.0.0(20)"; the since check decides compatibleSdkVersion.
  for (const [where, v] of [['oh-package.json5', ohPackage?.modelVersion], ['hvigor/hvigor-config.json5', hvigorConfig?.modelVersion]]) {
    if (v !== undefined && v !== `${TARGET_API}.0.0`) {
      problems.push(`${where}: modelVersion ${v}, expected ${TARGET_API}.0.0 (the DevEco Studio release that ships API ${TARGET_API})`);
    }
  }
  for (const p of profile?.app?.products ?? []) {
    const compatible = apiLevel(p.compatibleSdkVersion);
    const target = apiLevel(p.targetSdkVersion);
    for (const [field, value, level] of [['compatibleSdkVersion', p.compatibleSdkVersion, compatible], ['targetSdkVersion', p.targetSdkVersion, target]]) {
      if (Number.isNaN(level)) {
        problems.push(`build-profile.json5: product ${p.name}: ${field} ${JSON.stringify(value)} is not "<api>.0.0" ` +
          '(API 26 on, e.g. "26.0.0") nor "<x.y.z>(<api>)" (below 26, e.g. "6.0.0(20)")');
      }
    }
    if (target !== TARGET_API) {
      problems.push(`build-profile.json5: product ${p.name}: targetSdkVersion ${p.targetSdkVersion}, expected ${TARGET_API}.0.0`);
    }
    if (compatible > target) {
      problems.push(`build-profile.json5: product ${p.name}: compatibleSdkVersion above targetSdkVersion`);
    }
    // A module's oh-package.json5 need not repeat them (hvigor writes compatibleSdkVersion into a
    // packaged HAR's); one that does must agree with the project.
    for (const file of ['ets/oh-package.json5', 'entry/oh-package.json5']) {
      const pkg = existsSync(join(REPO_ROOT, file)) ? JSON5.parse(read(join(REPO_ROOT, file))) : {};
      if (pkg.modelVersion !== undefined && pkg.modelVersion !== ohPackage?.modelVersion) {
        problems.push(`${file}: modelVersion ${pkg.modelVersion}, the project's is ${ohPackage?.modelVersion}`);
      }
      if (pkg.compatibleSdkVersion !== undefined && apiLevel(pkg.compatibleSdkVersion) !== compatible) {
        problems.push(`${file}: compatibleSdkVersion ${pkg.compatibleSdkVersion}, build-profile.json5's is ${p.compatibleSdkVersion}`);
      }
    }
    if ('compileSdkVersion' in p) {
      problems.push(`build-profile.json5: product ${p.name}: leave compileSdkVersion out (runtimeOS HarmonyOS builds with the SDK of the DevEco Studio that opens it)`);
    }
    if (p.runtimeOS !== 'HarmonyOS') {
      problems.push(`build-profile.json5: product ${p.name}: runtimeOS must be HarmonyOS`);
    }
  }

  const app = load(problems, 'AppScope/app.json5');
  if (app) {
    for (const field of ['bundleName', 'versionCode', 'versionName', 'icon', 'label']) {
      if (app.app?.[field] === undefined) {
        problems.push(`AppScope/app.json5: app.${field} is missing`);
      }
    }
    checkResources(problems, 'AppScope/app.json5', app, ['AppScope/resources']);
  }

  const modules = new Map((profile?.modules ?? []).map((m) => [m.name, m]));
  const expected = [['entry', './entry', 'entry', 'hapTasks'], ['rum_native', './ets', 'har', 'harTasks']];
  for (const [name, srcPath, type, tasks] of expected) {
    const m = modules.get(name);
    if (!m) {
      problems.push(`build-profile.json5: modules must list ${name} (${srcPath})`);
      continue;
    }
    if (m.srcPath !== srcPath) {
      problems.push(`build-profile.json5: module ${name} srcPath ${m.srcPath}, expected ${srcPath}`);
    }
    const dir = srcPath.replace(/^\.\//, '');
    expectTasks(problems, `${dir}/hvigorfile.ts`, tasks);
    const moduleProfile = load(problems, `${dir}/build-profile.json5`);
    if (moduleProfile && moduleProfile.apiType !== 'stageMode') {
      problems.push(`${dir}/build-profile.json5: apiType must be stageMode`);
    }
    if (moduleProfile && !(moduleProfile.targets ?? []).some((t) => t.name === 'default')) {
      problems.push(`${dir}/build-profile.json5: needs a "default" target`);
    }
    const moduleJson = load(problems, `${dir}/src/main/module.json5`);
    if (moduleJson) {
      if (moduleJson.module?.name !== name) {
        problems.push(`${dir}/src/main/module.json5: module.name ${moduleJson.module?.name}, expected ${name}`);
      }
      if (moduleJson.module?.type !== type) {
        problems.push(`${dir}/src/main/module.json5: module.type ${moduleJson.module?.type}, expected ${type}`);
      }
      checkResources(problems, `${dir}/src/main/module.json5`, moduleJson, [`${dir}/src/main/resources`]);
    }
  }

  // The HAR: package name, entry file, the native library's type package, TS files for Sendable.
  const har = load(problems, 'ets/oh-package.json5');
  if (har) {
    if (har.name !== HAR_PACKAGE) {
      problems.push(`ets/oh-package.json5: name ${har.name}, expected ${HAR_PACKAGE}`);
    }
    if (!existsSync(join(REPO_ROOT, 'ets', har.main ?? 'Index.ets'))) {
      problems.push(`ets/oh-package.json5: main ${har.main} does not exist`);
    }
    const dep = har.dependencies?.['librum_native.so'];
    if (dep !== 'file:./src/main/cpp/types/librum_native') {
      problems.push('ets/oh-package.json5: dependencies must map librum_native.so to file:./src/main/cpp/types/librum_native');
    }
    const types = load(problems, 'ets/src/main/cpp/types/librum_native/oh-package.json5');
    if (types && (types.name !== 'librum_native.so' || types.types !== './index.d.ts')) {
      problems.push('ets/src/main/cpp/types/librum_native/oh-package.json5: name librum_native.so, types ./index.d.ts');
    }
    if (!existsSync(join(REPO_ROOT, 'ets/src/main/cpp/types/librum_native/index.d.ts'))) {
      problems.push('ets/src/main/cpp/types/librum_native/index.d.ts: missing');
    }
  }
  const harModule = load(problems, 'ets/src/main/module.json5');
  const sendable = harEtsFiles().some((f) => /@Sendable\b/.test(read(f)));
  const useTsHar = (harModule?.module?.metadata ?? []).some((m) => m.name === 'UseTsHar' && m.value === 'true');
  if (sendable && !useTsHar) {
    problems.push('ets/src/main/module.json5: the HAR exports @Sendable classes: set metadata UseTsHar = "true"');
  }
  if (!/^\/libs\s*$/m.test(read(join(REPO_ROOT, 'ets/.gitignore')))) {
    problems.push('ets/.gitignore: /libs (filled by scripts/build-ohos.sh) must be ignored');
  }

  // The HAP: depends on the HAR by path, its ability and pages exist, it may use the network.
  const entry = load(problems, 'entry/oh-package.json5');
  if (entry && entry.dependencies?.[HAR_PACKAGE] !== 'file:../ets') {
    problems.push(`entry/oh-package.json5: dependencies must map ${HAR_PACKAGE} to file:../ets`);
  }
  const entryModule = load(problems, 'entry/src/main/module.json5')?.module;
  if (entryModule) {
    const abilities = entryModule.abilities ?? [];
    if (!abilities.some((a) => a.name === entryModule.mainElement)) {
      problems.push(`entry/src/main/module.json5: mainElement ${entryModule.mainElement} is not an ability`);
    }
    for (const a of abilities) {
      if (!existsSync(join(REPO_ROOT, 'entry/src/main', a.srcEntry))) {
        problems.push(`entry/src/main/module.json5: ability ${a.name} srcEntry ${a.srcEntry} does not exist`);
      }
    }
    if (!(entryModule.requestPermissions ?? []).some((p) => p.name === 'ohos.permission.INTERNET')) {
      problems.push('entry/src/main/module.json5: requestPermissions needs ohos.permission.INTERNET (uploads)');
    }
    const pagesRef = /^\$profile:(\w+)$/.exec(entryModule.pages ?? '');
    const pages = pagesRef ? load(problems, `entry/src/main/resources/base/profile/${pagesRef[1]}.json`) : null;
    for (const page of pages?.src ?? []) {
      const file = join(REPO_ROOT, 'entry/src/main/ets', `${page}.ets`);
      if (!existsSync(file) || !/@Entry\b/.test(read(file))) {
        problems.push(`entry pages: ${page} is not an @Entry component in entry/src/main/ets/${page}.ets`);
      }
    }
  }
  return { problems, summary: 'root, AppScope, entry (HAP), ets (HAR)' };
}
