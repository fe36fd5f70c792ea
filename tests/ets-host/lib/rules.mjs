// Rules the real toolchain enforces that ohos-typescript's linter does not:
//   - a `@Concurrent` function uses only its parameters, its own locals and imported names: es2abc
//     stops the build with 10705000 "Concurrent function should only use import variable or local
//     variable" for a name declared at the top of the same file (a constant included);
//   - a file loaded on a TaskPool or Worker thread imports librum_native.so only with `import type`:
//     a @Concurrent function's module and a @Sendable class's module are loaded again on every
//     thread that runs or receives them, with everything they import as values (ets-loader keeps
//     imports as written, `importsNotUsedAsValues: preserve`, so `import { T }` of a type still
//     loads the module); the native module must be loaded only on the thread that creates the
//     pipeline;
//   - the obfuscation keep lists (ets/consumer-rules.txt for apps that obfuscate while depending
//     on the HAR, ets/obfuscation-rules.txt for the HAR's own release build) name every property
//     and method of librum_native.so's index.d.ts: the library reads and defines them by name, and
//     a renamed one reads as undefined (a gzip batch's `encoding` would be lost, and the uploader
//     would gzip it twice).
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { HAR_PACKAGE, NATIVE_DTS, REPO_ROOT, etsFiles, read, rel } from './files.mjs';
import { ETS_OPTIONS } from './parse.mjs';

const require = createRequire(import.meta.url);
const ts = require('ohos-typescript');

export const KEEP_FILES = ['ets/consumer-rules.txt', 'ets/obfuscation-rules.txt'];

const parse = (f, text) => ts.createSourceFile(f, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.ETS, { ets: ETS_OPTIONS });

function line(sf, node) {
  return sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
}

// TypeScript allows no decorator on a function, so the parser keeps ArkTS's `@Concurrent` among
// the node's illegalDecorators.
const isConcurrent = (node) =>
  [...(ts.getDecorators?.(node) ?? []), ...(node.illegalDecorators ?? [])]
    .some((d) => ts.isIdentifier(d.expression) && d.expression.text === 'Concurrent');

/** Names a file declares at its top level other than by import: what a @Concurrent function may not use. */
function topLevelNames(sf) {
  const names = new Set();
  for (const st of sf.statements) {
    if (ts.isVariableStatement(st)) {
      for (const d of st.declarationList.declarations) {
        collectBindingNames(d.name, names);
      }
    } else if ((ts.isFunctionDeclaration(st) || ts.isClassDeclaration(st) || ts.isEnumDeclaration(st)) && st.name) {
      names.add(st.name.text);
    }
  }
  return names;
}

function collectBindingNames(name, into) {
  if (ts.isIdentifier(name)) {
    into.add(name.text);
  } else {
    for (const el of name.elements) {
      if (!ts.isOmittedExpression(el)) {
        collectBindingNames(el.name, into);
      }
    }
  }
}

/** Parameters and locals declared anywhere inside `fn` (a name declared there shadows the file's). */
function declaredInside(fn) {
  const names = new Set();
  const visit = (node) => {
    if (ts.isParameter(node) || ts.isVariableDeclaration(node)) {
      collectBindingNames(node.name, names);
    } else if ((ts.isFunctionDeclaration(node) || ts.isClassDeclaration(node)) && node.name && node !== fn) {
      names.add(node.name.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(fn);
  return names;
}

/** An identifier that names a value here, not a property name, a type or a label. */
function isValueReference(id) {
  const p = id.parent;
  if ((ts.isPropertyAccessExpression(p) && p.name === id) || (ts.isQualifiedName(p) && p.right === id)) {
    return false;
  }
  if ((ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p) || ts.isMethodDeclaration(p) ||
    ts.isPropertySignature(p)) && p.name === id) {
    return false;
  }
  for (let n = p; n; n = n.parent) {
    if (ts.isTypeNode(n)) {
      return false;
    }
  }
  return true;
}

/** Returns problems: top-level names of the same file used inside a @Concurrent function. */
export function concurrentProblems(file, text) {
  const sf = parse(file, text);
  const outside = topLevelNames(sf);
  const problems = [];
  for (const st of sf.statements) {
    if (!ts.isFunctionDeclaration(st) || !isConcurrent(st) || !st.body) {
      continue;
    }
    const inside = declaredInside(st);
    const visit = (node) => {
      if (ts.isIdentifier(node) && outside.has(node.text) && !inside.has(node.text) && isValueReference(node)) {
        problems.push(`${rel(file)}:${line(sf, node)}: @Concurrent function ${st.name?.text ?? ''} uses '${node.text}', ` +
          'declared in the same file: a concurrent function may use only imports, parameters and its own locals (es2abc 10705000)');
      }
      ts.forEachChild(node, visit);
    };
    visit(st.body);
  }
  return problems;
}

export const NATIVE_MODULE = 'librum_native.so';

/**
 * What makes other threads load `sf` ('@Concurrent function work', '@Sendable class RumAction'),
 * or null: a TaskPool thread loads a @Concurrent function's module to run it, and a thread that
 * receives a Sendable object loads its class's module.
 */
function loadedOnOtherThreads(sf) {
  const isSendable = (node) =>
    ts.isClassDeclaration(node) && (ts.getDecorators?.(node) ?? node.decorators ?? [])
      .some((d) => ts.isIdentifier(d.expression) && d.expression.text === 'Sendable');
  for (const st of sf.statements) {
    if (ts.isFunctionDeclaration(st) && isConcurrent(st)) {
      return `@Concurrent function ${st.name?.text ?? ''}`;
    }
    if (isSendable(st)) {
      return `@Sendable class ${st.name?.text ?? ''}`;
    }
  }
  return null;
}

/**
 * The module specifiers `sf` loads when it is loaded: imports and re-exports that are not
 * `import type` / `export type` (with `importsNotUsedAsValues: preserve` an import of types only
 * through `import { T }` or `import { type T }` still loads its module), and `import(...)` calls.
 */
export function valueImports(sf) {
  const found = [];
  for (const st of sf.statements) {
    if (ts.isImportDeclaration(st) && ts.isStringLiteral(st.moduleSpecifier) && !st.importClause?.isTypeOnly) {
      found.push({ spec: st.moduleSpecifier.text, node: st });
    } else if (ts.isExportDeclaration(st) && st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier) &&
      !st.isTypeOnly) {
      found.push({ spec: st.moduleSpecifier.text, node: st });
    }
  }
  const visit = (node) => {
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments.length > 0 && ts.isStringLiteral(node.arguments[0])) {
      found.push({ spec: node.arguments[0].text, node });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

/** The project file a specifier names (relative .ets, or the HAR package's Index.ets), or null. */
function resolveProjectImport(from, spec, sources) {
  if (spec === HAR_PACKAGE) {
    return join(REPO_ROOT, 'ets', 'Index.ets');
  }
  if (!spec.startsWith('.')) {
    return null;
  }
  const base = resolve(dirname(from), spec);
  for (const candidate of [base, `${base}.ets`, `${base}.ts`, join(base, 'Index.ets'), join(base, 'index.ets')]) {
    if (candidate.endsWith('.ets') || candidate.endsWith('.ts')) {
      if (sources.has(candidate) || existsSync(candidate)) {
        return candidate;
      }
    }
  }
  return null;
}

/**
 * Returns problems: a file reachable through value imports from a module with a @Concurrent
 * function or a @Sendable class that imports librum_native.so as a value. `sources` maps file
 * paths to their text (the project's .ets files; imports outside it are not followed).
 */
export function threadImportProblems(sources) {
  const parsed = new Map();
  const sourceFile = (f) => {
    if (!parsed.has(f)) {
      parsed.set(f, sources.has(f) ? parse(f, sources.get(f)) : null);
    }
    return parsed.get(f);
  };
  const problems = [];
  for (const root of [...sources.keys()].sort()) {
    const rootSf = sourceFile(root);
    const why = rootSf === null ? null : loadedOnOtherThreads(rootSf);
    if (why === null) {
      continue;
    }
    // Breadth-first over value imports, remembering how each file was reached.
    const via = new Map([[root, null]]);
    const queue = [root];
    while (queue.length > 0) {
      const file = queue.shift();
      const sf = sourceFile(file);
      if (sf === null) {
        continue;
      }
      for (const { spec, node } of valueImports(sf)) {
        if (spec === NATIVE_MODULE) {
          const chain = [];
          for (let f = file; f !== null; f = via.get(f)) {
            chain.unshift(rel(f));
          }
          problems.push(`${rel(file)}:${line(sf, node)}: imports ${NATIVE_MODULE} as a value, so every ` +
            `TaskPool/Worker thread that loads ${rel(root)} (${why}) loads the native module` +
            `${chain.length > 1 ? ` (${chain.join(' -> ')})` : ''}: ` +
            'import its types with `import type`, and the module itself only where the pipeline is created');
          continue;
        }
        const target = resolveProjectImport(file, spec, sources);
        if (target !== null && !via.has(target)) {
          via.set(target, file);
          queue.push(target);
        }
      }
    }
  }
  return [...new Set(problems)];
}

/** Property and method names of index.d.ts's interfaces and classes. */
export function nativeApiNames(dtsText) {
  const sf = ts.createSourceFile(NATIVE_DTS, dtsText, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const names = new Set();
  const visit = (node) => {
    if ((ts.isInterfaceDeclaration(node) || ts.isClassDeclaration(node)) && node.name) {
      if (ts.isClassDeclaration(node)) {
        names.add(node.name.text);
      }
      for (const m of node.members) {
        if (m.name && (ts.isIdentifier(m.name) || ts.isStringLiteral(m.name)) && !ts.isConstructorDeclaration(m)) {
          names.add(m.name.text);
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return names;
}

/** The names after `-keep-property-name` in a rules file (one per line, `#` comments). */
export function keptNames(rulesText) {
  const kept = new Set();
  let inKeep = false;
  for (const raw of rulesText.split('\n')) {
    const l = raw.trim();
    if (l === '' || l.startsWith('#')) {
      continue;
    }
    if (l.startsWith('-')) {
      inKeep = l === '-keep-property-name';
      continue;
    }
    if (inKeep) {
      kept.add(l);
    }
  }
  return kept;
}

export function keepProblems(dtsText, rules) {
  const api = nativeApiNames(dtsText);
  const problems = [];
  for (const [file, text] of rules) {
    const kept = keptNames(text);
    const missing = [...api].filter((n) => !kept.has(n)).sort();
    if (missing.length > 0) {
      problems.push(`${file}: -keep-property-name lacks ${missing.length} name(s) of index.d.ts, which librum_native.so reads or defines by name: ${missing.join(', ')}`);
    }
  }
  return problems;
}

export function checkRules() {
  const problems = [];
  const files = etsFiles();
  for (const f of files) {
    problems.push(...concurrentProblems(f, read(f)));
  }
  problems.push(...threadImportProblems(new Map(files.map((f) => [f, read(f)]))));
  const rules = KEEP_FILES.map((f) => [f, read(join(REPO_ROOT, f))]);
  const dts = read(NATIVE_DTS);
  problems.push(...keepProblems(dts, rules));
  return {
    problems,
    summary: `@Concurrent closures and ${NATIVE_MODULE} value imports reachable from @Concurrent/@Sendable modules in ${files.length} .ets; ${nativeApiNames(dts).size} index.d.ts names in ${KEEP_FILES.length} keep lists`
  };
}
