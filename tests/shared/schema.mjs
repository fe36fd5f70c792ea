// The RUM event format's JSON schemas as the intake's judge: every document the pipeline writes
// or hands to an uploader must validate against the schema of its `type`. Ajv 8 with ajv-formats,
// draft-07, every schema added by its `$id`, `strict: false`: how the format validates itself.
//
// The schemas live beside the repository (../shared/rum-events-format, as CI lays it out, or
// $RUM_EVENTS_FORMAT); a clone without them gets `null` from schemaValidator() and its tests skip
// with a note saying so.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

import { REPO_ROOT } from './native.mjs';

const require = createRequire(path.join(REPO_ROOT, 'tests', 'package.json'));

export const FORMAT_DIR = process.env.RUM_EVENTS_FORMAT ?? path.resolve(REPO_ROOT, '..', 'shared', 'rum-events-format');

/** The schema `$id` each document type validates against. */
const SCHEMA_OF_TYPE = {
  view: 'rum/view-schema.json',
  action: 'rum/action-schema.json',
  error: 'rum/error-schema.json',
  resource: 'rum/resource-schema.json',
  long_task: 'rum/long_task-schema.json',
  // The only vital the pipeline writes: the app launch (ttid).
  vital: 'rum/vital-app-launch-schema.json',
};

function schemaFiles(dir, out = []) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) schemaFiles(p, out);
    else if (e.name.endsWith('.json')) out.push(p);
  }
  return out;
}

let cached;

/**
 * `{ validate(doc) -> string[] }` (the errors, empty when valid), or null when the schemas are not
 * there. `where` names the document in messages.
 */
export function schemaValidator() {
  if (cached !== undefined) return cached;
  const schemas = path.join(FORMAT_DIR, 'schemas');
  if (!fs.existsSync(schemas)) {
    cached = null;
    return cached;
  }
  const Ajv = require('ajv').default;
  const addFormats = require('ajv-formats').default;
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  for (const f of schemaFiles(schemas)) ajv.addSchema(JSON.parse(fs.readFileSync(f, 'utf8')));
  const compiled = new Map();
  const compile = (id) => {
    if (!compiled.has(id)) compiled.set(id, ajv.getSchema(id));
    return compiled.get(id);
  };
  cached = {
    validate(doc) {
      const id = SCHEMA_OF_TYPE[doc?.type];
      if (!id) return [`no schema for document type ${JSON.stringify(doc?.type)}`];
      const v = compile(id);
      if (!v) return [`schema ${id} not found under ${schemas}`];
      return v(doc) ? [] : v.errors.map((e) => `${e.instancePath || '/'} ${e.message}${e.params ? ' ' + JSON.stringify(e.params) : ''}`);
    },
  };
  return cached;
}

export const SCHEMAS_MISSING_NOTE = `the RUM event format's schemas are not at ${FORMAT_DIR} (set RUM_EVENTS_FORMAT): schema checks skipped`;
