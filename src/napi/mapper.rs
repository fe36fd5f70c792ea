//! The host's event mapper, `setEventMapper(fn)`: called on the JS thread with each non-view
//! document as a plain object; returns it (changed or not), or `null` to drop it.

use serde_json::Value as Json;

use super::args::{take_exception, ArgError, Args};
use super::js::{EnvHandle, Js, Strong, Value, ValueType};
use crate::core::document::Document;
use crate::core::seam::{EventMapper, MapOutcome, MapperError};

pub struct JsMapper {
    env: EnvHandle,
    func: Strong,
    /// A returned document may not grow past this (the event size limit, with room for edits).
    max_bytes: usize,
}

impl JsMapper {
    pub fn new(js: Js<'_>, func: Value<'_>, max_bytes: usize) -> napi_ohos::Result<Self> {
        Ok(Self { env: js.keep_env(), func: Strong::new(js, func)?, max_bytes })
    }
}

impl EventMapper for JsMapper {
    /// Runs in a handle scope of its own: a drain maps thousands of documents in one native call,
    /// and without it every document object (and every value read back) stayed alive until that
    /// call returned, which ran the JS heap out of memory on large queues.
    fn map(&mut self, doc: &Document) -> Result<MapOutcome, MapperError> {
        let value = serde_json::to_value(doc).map_err(|e| MapperError(format!("cannot build the document: {e}")))?;
        let (func, max_bytes) = (&self.func, self.max_bytes);
        self.env
            .js()
            .scope(|js| map_in_scope(js, func, max_bytes, value))
            .unwrap_or_else(|| Err(MapperError("cannot open a handle scope".into())))
    }
}

fn map_in_scope(js: Js<'_>, func: &Strong, max_bytes: usize, value: Json) -> Result<MapOutcome, MapperError> {
    let func = func.get(js).ok_or_else(|| MapperError("the mapper function is gone".into()))?;
    let Some(arg) = to_js(js, &value) else {
        // A setter on Object.prototype may have thrown: never leave it pending.
        let why = take_exception(js).unwrap_or_else(|| "cannot create a JS value".to_owned());
        return Err(MapperError(why));
    };
    let result = js.undefined().and_then(|undefined| js.call(undefined, func, [arg]));
    let Some(result) = result else {
        let why = take_exception(js).unwrap_or_else(|| "the call failed".to_owned());
        return Err(MapperError(format!("it threw: {why}")));
    };
    let args = Args::new(js, "eventMapper");
    match args.kind(result) {
        // `undefined` (no return) keeps the document; `null` drops it.
        ValueType::Undefined => return Ok(MapOutcome::Keep),
        ValueType::Null => return Ok(MapOutcome::Drop),
        ValueType::Object => {}
        _ => return Err(MapperError("it must return the document object or null".into())),
    }
    match args.document(result, "result", max_bytes) {
        Ok(map) => {
            let changed = Json::Object(map);
            Ok(if changed == value { MapOutcome::Keep } else { MapOutcome::Replace(changed) })
        }
        Err(ArgError::Type(m) | ArgError::Range(m) | ArgError::Js(m)) => Err(MapperError(m)),
    }
}

/// A JSON value as a new JS value (None when the engine refused one; an exception may be pending).
fn to_js<'e>(js: Js<'e>, value: &Json) -> Option<Value<'e>> {
    Some(match value {
        Json::Null => js.null()?,
        Json::Bool(b) => js.boolean(*b)?,
        Json::Number(n) => js.double(n.as_f64().unwrap_or(f64::NAN))?,
        Json::String(s) => js.string(s)?,
        Json::Array(items) => {
            let out = js.array(items.len())?;
            for (i, item) in items.iter().enumerate() {
                js.set_element(out, i as u32, to_js(js, item)?).ok()?;
            }
            out
        }
        Json::Object(map) => {
            let out = js.object()?;
            let mut members = Vec::with_capacity(map.len());
            for (k, item) in map {
                members.push((js.string(k)?, to_js(js, item)?));
            }
            js.define_data(out, &members).ok()?;
            out
        }
    })
}
