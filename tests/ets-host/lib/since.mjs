// The API level the code needs, against the project's compatibleSdkVersion: every SDK declaration
// the .ets files of ets/ and entry/ use, resolved by the type checker (ohos-typescript, the program
// of lib/lint.mjs), and its JSDoc `@since`.
//
// What counts as a use: a name that resolves to a declaration in the SDK (imports followed to
// what they import; a call or `new` to the overload the checker picked; a member of an object
// literal to the property of its contextual type, e.g. a callback interface's method; decorators
// and ArkUI components and attributes alike). A declaration's API level is its own `@since`, else
// its nearest enclosing declaration's (a namespace's, a class's). Tags as the SDK writes them:
// `@since 9`, `@since 26.0.0` (API 26 on), `@since 20 dynamic` (ArkTS 1.1, what this project is);
// `@since 22 static` / `staticonly` is the static ArkTS's and does not count. Several overloads or
// declarations of one name: the lowest counts unless the checker resolved one signature.
import { createRequire } from 'node:module';
import { join, resolve, sep } from 'node:path';
import { REPO_ROOT, read, rel } from './files.mjs';

const require = createRequire(import.meta.url);
const ts = require('ohos-typescript');
const JSON5 = require('json5');

/**
 * The API level of a version as build-profile.json5 writes it: 26 for "26.0.0" (API 26 on),
 * 20 for "6.0.0(20)" (before API 26), a number as is; NaN when unreadable.
 */
export function apiLevel(version) {
  if (typeof version === 'number') {
    return version;
  }
  const text = String(version ?? '').trim();
  // hvigor reads "<x.y.z>(<api>)" below API 26 and exactly three numbers from 26 on (it refuses
  // "26.0.0(26)" and takes "6.0.0" for no API at all).
  const paren = /^\d+\.\d+\.\d+\((\d+)\)$/.exec(text);
  if (paren) {
    return Number(paren[1]) < 26 ? Number(paren[1]) : NaN;
  }
  const dotted = /^(\d{1,2})\.\d{1,2}\.\d{1,2}$/.exec(text);
  return dotted && Number(dotted[1]) >= 26 ? Number(dotted[1]) : NaN;
}

/** The default product's compatibleSdkVersion and targetSdkVersion (root build-profile.json5). */
export function projectSdkVersions() {
  const profile = JSON5.parse(read(join(REPO_ROOT, 'build-profile.json5')));
  const product = (profile.app?.products ?? []).find((p) => p.name === 'default') ?? {};
  return { compatible: product.compatibleSdkVersion, target: product.targetSdkVersion };
}

/**
 * The API level in one `@since` tag's text, or null when the tag is not for dynamic ArkTS
 * (`static`, `staticonly`) or unreadable.
 */
export function sinceLevel(text) {
  const m = /^\s*(\d+)(?:\.\d+){0,2}\s*([A-Za-z]*)/.exec(text ?? '');
  if (!m) {
    return null;
  }
  const phase = m[2].toLowerCase();
  return phase === 'static' || phase === 'staticonly' ? null : Number(m[1]);
}

/** The lowest dynamic `@since` of the JSDoc blocks written on `node` itself, or null. */
function ownSince(node) {
  let best = null;
  for (const doc of node.jsDoc ?? []) {
    for (const tag of doc.tags ?? []) {
      if (tag.tagName.text !== 'since') {
        continue;
      }
      const level = sinceLevel(ts.getTextOfJSDocComment(tag.comment));
      if (level !== null && (best === null || level < best)) {
        best = level;
      }
    }
  }
  return best;
}

/** A declaration's API level: its own `@since`, else the nearest enclosing declaration's. */
export function declarationSince(decl) {
  for (let n = decl; n && !ts.isSourceFile(n); n = n.parent) {
    const level = ownSince(n);
    if (level !== null) {
      return level;
    }
  }
  return null;
}

/**
 * Returns `{ problems, needed, uses }`: each use in `files` of an SDK declaration (a file under
 * `sdkDir`) whose API level is above `level`, the highest level used (and where), and how many
 * uses were looked at.
 */
export function sinceProblems(program, files, sdkDir, level) {
  const checker = program.getTypeChecker();
  const sdkPrefix = resolve(sdkDir) + sep;
  const inSdk = (decl) => resolve(decl.getSourceFile().fileName).startsWith(sdkPrefix);
  const problems = [];
  let needed = { level: 0, where: '', name: '' };
  let uses = 0;

  const resolveSymbol = (symbol) =>
    symbol && symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;

  for (const file of files) {
    const sf = program.getSourceFile(file);
    if (!sf) {
      continue;
    }
    const report = (node, name, decls) => {
      const levels = decls.filter(inSdk).map(declarationSince).filter((l) => l !== null);
      if (levels.length === 0) {
        return;
      }
      uses++;
      const used = Math.min(...levels);
      const { line, character } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
      const where = `${rel(file)}:${line + 1}:${character + 1}`;
      if (used > needed.level) {
        needed = { level: used, where, name };
      }
      if (used > level) {
        const decl = decls.find((d) => inSdk(d) && declarationSince(d) === used);
        problems.push(`${where}: '${name}' is @since ${used} (${rel(decl.getSourceFile().fileName)}), ` +
          `above compatibleSdkVersion's API ${level}`);
      }
    };

    const visit = (node) => {
      if (ts.isCallExpression(node) || ts.isNewExpression(node) || ts.isDecorator(node) ||
        ts.isTaggedTemplateExpression(node)) {
        let signature;
        try {
          signature = checker.getResolvedSignature(node);
        } catch {
          signature = undefined;
        }
        const decl = signature?.declaration;
        if (decl && !ts.isJSDocSignature(decl)) {
          const callee = ts.isDecorator(node) ? node.expression : ts.isTaggedTemplateExpression(node) ? node.tag : node.expression;
          report(callee, callee.getText(sf), [decl]);
        }
      }
      if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) {
        const parent = node.parent;
        let decls = null;
        if (parent && (ts.isPropertyAssignment(parent) || ts.isShorthandPropertyAssignment(parent) ||
          ts.isMethodDeclaration(parent)) && parent.name === node && ts.isObjectLiteralExpression(parent.parent)) {
          // A member of an object literal: the property of the type the literal is written for.
          const type = checker.getContextualType(parent.parent);
          const prop = type?.getProperty?.(node.text) ??
            type?.types?.map((t) => t.getProperty(node.text)).find((p) => p !== undefined);
          decls = prop?.declarations ?? null;
        } else {
          const symbol = resolveSymbol(checker.getSymbolAtLocation(node));
          decls = symbol?.declarations ?? null;
        }
        if (decls && decls.length > 0) {
          report(node, node.text, decls);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return { problems: [...new Set(problems)], needed, uses };
}

/**
 * The check: with the real SDK, no use above compatibleSdkVersion, and compatibleSdkVersion no
 * higher than the highest level used (it is the lowest API the code needs, so no device that could
 * run the app is refused). Without an SDK there are no @since tags to read: skipped, and said so.
 */
export async function checkSince() {
  const { findSdk } = await import('./sdk.mjs');
  const { sdkProgram } = await import('./lint.mjs');
  const sdk = findSdk();
  const { compatible, target } = projectSdkVersions();
  const level = apiLevel(compatible);
  if (Number.isNaN(level)) {
    return { problems: [`build-profile.json5: compatibleSdkVersion ${compatible} is not "<x.y.z>(<api>)" (below API 26, e.g. "6.0.0(20)") nor "<api>.0.0" (API 26 on)`], summary: '' };
  }
  if (sdk === null) {
    return { problems: [], summary: `skipped: no SDK, so no @since tags to read (compatibleSdkVersion ${compatible})` };
  }
  const { builder, files } = sdkProgram(sdk);
  const { problems, needed, uses } = sinceProblems(builder.getProgram(), files, sdk.etsDir, level);
  if (problems.length === 0 && needed.level < level) {
    problems.push(`build-profile.json5: compatibleSdkVersion ${compatible} (API ${level}) but the code needs only ` +
      `API ${needed.level} ('${needed.name}' at ${needed.where}): lower it so API ${needed.level} devices can install the app`);
  }
  return {
    problems,
    summary: `${uses} uses of SDK declarations in ${files.length} .ets files; highest @since ${needed.level} ` +
      `('${needed.name}' at ${needed.where}); compatibleSdkVersion ${compatible} (API ${level}), targetSdkVersion ${target}`
  };
}
