//! The JS interface of `RumPipeline`, declared once: every method JS and ArkTS can call, with its
//! arguments, its TypeScript signature and its documentation. The binding makes each method's
//! checked callback from this list (`src/napi/methods.rs`), and `examples/ts_class.rs` writes the
//! class of `index.d.ts` from it (`scripts/gen-dts.sh`), so adding a line here is the one way to
//! add a method, and a method cannot be callable without being typed, or typed without being
//! callable.
//!
//! The list is plain tokens: it is compiled without the binding too (the example needs no JS
//! engine). Each entry is `rust_method "jsName" (arguments) "TypeScript arguments" -> "TypeScript
//! result";` and the binding calls `pipeline.rust_method(js, arguments...)`.

/// Calls `$m! { ... }` with every method of `RumPipeline`, in the order `index.d.ts` lists them.
#[macro_export]
#[doc(hidden)]
macro_rules! for_each_pipeline_method {
    ($m:ident) => {
        $m! {
            /// Starts (or restarts) the view `key`.
            start_view "startView" (key, name, attributes)
                "key: string, name: string, attributes?: Attributes" -> "void";
            /// Stops the view `key` (its final document has `is_active: false`).
            stop_view "stopView" (key, attributes) "key: string, attributes?: Attributes" -> "void";
            /// Records a user action on the current view.
            add_action "addAction" (action_type, name, attributes)
                "type: ActionType, name: string, attributes?: Attributes" -> "void";
            /// Records many actions in one call: `events` is an array (or a Sendable `collections.Array`)
            /// of `{ type, name, attributes? }`. All are checked before any is recorded.
            add_actions "addActions" (events) "events: Array<ActionEvent>" -> "void";
            /// Records an error; everything called before it is processed first.
            /// `details` adds the error's type, category, handling, the time it happened, or `isCrash` for
            /// a crash of an earlier process reported after the fact.
            add_error "addError" (message, source, stack, attributes, details)
                "message: string, source: ErrorSource, stack?: string, attributes?: Attributes, details?: ErrorDetails"
                -> "void";
            /// Records a crash after everything called before it, writes it to disk and fsyncs. Returns
            /// false as `flush()` does. `details` as `addError`'s (the error's type, say).
            mark_crash "markCrash" (message, stack, details)
                "message: string, stack?: string, details?: ErrorDetails" -> "boolean";
            /// Starts a resource (a network request) identified by `key`.
            start_resource "startResource" (key, method, url, attributes)
                "key: string, method: string, url: string, attributes?: Attributes" -> "void";
            /// Stops the resource `key` and records it. `details` adds its timing breakdown (dns, connect,
            /// ssl, first byte, download, redirect: each `{ start, duration }` in ms since the resource
            /// started) and the ids of the `traceparent` header it carried (`traceId`, `spanId`).
            stop_resource "stopResource" (key, status_code, kind, size_bytes, attributes, details)
                "key: string, statusCode: number, kind: ResourceKind, sizeBytes?: number, attributes?: Attributes, details?: ResourceDetails"
                -> "void";
            /// The resource `key` failed without a response (a transport error): records an error of
            /// source `network` naming the request (`error.resource`, status 0) instead of the
            /// resource. Everything called before it is processed first, as for `addError`.
            stop_resource_with_error "stopResourceWithError" (key, message, error_type, attributes)
                "key: string, message: string, errorType?: string, attributes?: Attributes" -> "void";
            /// Records a long task on the current view: the JS thread was busy for `durationMs`
            /// (a frozen frame from 700 ms). `startedAt` (ms since the Unix epoch) when the task's start
            /// is known; otherwise it started `durationMs` before the call.
            add_long_task "addLongTask" (duration_ms, attributes, started_at)
                "durationMs: number, attributes?: Attributes, startedAt?: number" -> "void";
            /// Records a cold start's time to initial display (the `app_launch` vital, `ttid`):
            /// `durationMs` from the process start, `startedAt` (ms since the Unix epoch), to the first
            /// page's first frame.
            add_app_launch "addAppLaunch" (duration_ms, started_at, attributes)
                "durationMs: number, startedAt: number, attributes?: Attributes" -> "void";
            /// Records a named timing on the current view: `view.custom_timings[name]`, ns since the view
            /// started (a later call with the same name replaces it).
            add_timing "addTiming" (name) "name: string" -> "void";
            /// Sets a global attribute for events called after this.
            add_attribute "addAttribute" (key, value) "key: string, value: AttributeValue" -> "void";
            /// Removes a global attribute for events called after this.
            remove_attribute "removeAttribute" (key) "key: string" -> "void";
            /// Sets (or with `null`, clears) the user. Events called before keep the previous user.
            set_user "setUser" (user) "user: UserInfo | null" -> "void";
            /// `granted` writes batches; `pending` buffers; `not_granted` drops. Events called before keep
            /// the consent of their call.
            set_tracking_consent "setTrackingConsent" (consent) "consent: TrackingConsent" -> "void";
            /// Sets the connectivity documents carry from this call on (`connectivity` of the RUM event
            /// format): call it when the network changes.
            set_connectivity "setConnectivity" (connectivity) "connectivity: ConnectivityInfo" -> "void";
            /// Takes a run of calls that the package's capture buffer (`CallBuffer`) checked, copied and
            /// stamped at their calls, in one crossing: `calls` is `JSON.stringify([now, ...calls])`
            /// (docs/how-it-works.md, "Capture in JS"), then, when their values have long strings
            /// that travel beside it (pieces), each of those after a line feed, which the text never
            /// holds raw. `slice` runs them as a slice of their own turn;
            /// otherwise they are calls of this turn, which has spent `spentMs` in the SDK's JS
            /// already. `skipped`: calls the buffer skipped as untracked since its last handover.
            /// Text that breaks the format is a TypeError and records nothing. Returns whether the
            /// live session is untracked (`sessionSampleRate`), so the buffer can skip later calls.
            ingest "ingest" (calls, slice, spent_ms, skipped)
                "calls: string, slice: boolean, spentMs: number, skipped: number" -> "boolean";
            /// The current session id after everything called before (null before the first event).
            session_id "sessionId" () "" -> "string | null";
            /// Ends the session; the next event starts a new one.
            stop_session "stopSession" () "" -> "void";
            /// Keeps the session alive (call on background and periodically).
            keep_alive "keepAlive" () "" -> "void";
            /// Processes everything called before, writes it and seals the active batch. Returns false
            /// when the writer did not finish within `flushTimeoutMs`, or when a write failed since the
            /// previous flush (logged; counted in `stats().writeErrors`).
            flush "flush" () "" -> "boolean";
            /// Drains and flushes; afterwards every call is processed on the caller's turn.
            stop "stop" () "" -> "boolean";
            /// Installs (or with `null`, removes) a function run on this thread for each non-view
            /// document before it is written: return the document (changed or not, its `type` kept),
            /// or null to drop it. A mapper that throws, or changes or removes `type`, has failed: the
            /// document is written as it was and `stats().mapperErrors` counts it.
            set_event_mapper "setEventMapper" (mapper)
                "mapper: ((document: RumDocument) => RumDocument | null) | null" -> "void";
            /// The pipeline's counters.
            stats "stats" () "" -> "PipelineStats";
            /// Claims the oldest sealed batch for upload: `{ id, encoding, body, eventCount, bytes }` (the
            /// body is gzip-compressed NDJSON when `encoding` is "gzip", the default `batchEncoding`: send
            /// it with `Content-Encoding: gzip`; plain NDJSON when "identity"), or null when
            /// none is ready — or when the writer has held the directory for over 16 ms (a stalled disk;
            /// counted in `stats().uploadWaitsGivenUp`): the UI thread does not wait on the disk — or when
            /// claiming or reading the batch failed (logged, counted in `stats().uploadErrors`). After a
            /// null, `pendingBatches()` tells "nothing to send" (0) from "not ready yet".
            next_batch "nextBatch" () "" -> "NextBatch | null";
            /// Ends a claim: `delivered` deletes the batch, otherwise it is released for a retry. An id
            /// that is not exactly one `nextBatch()` returned for a claim still held (a compressed
            /// batch's id with `.gz` taken out is not) is a RangeError naming the id as given, and
            /// changes nothing; a file operation that fails is logged and counted
            /// (`stats().uploadErrors`), not thrown. When the writer holds the batch directory past
            /// the call's 16 ms wait, the id is checked against the ids `nextBatch()` handed out and
            /// nothing ended yet, and the change is left to the writer (the call is counted in
            /// `stats().uploadWaitsGivenUp`).
            complete_batch "completeBatch" (id, delivered) "id: string, delivered: boolean" -> "void";
            /// Sealed batches waiting for `nextBatch()`: not claimed, still to be uploaded
            /// (`stats().batchesPending`; read without waiting for the writer). When `nextBatch()`
            /// returns null while this is above 0, batches exist but are not ready yet: right after
            /// open the writer is still checking the compressed batches it found (one decompression each),
            /// or it holds the directory (a seal, a stalled disk). Ask again shortly, backing off;
            /// 0 means nothing to send.
            pending_batches "pendingBatches" () "" -> "number";
        }
    };
}

/// The class's own documentation and its constructor's signature.
const CLASS_DOC: &str = "A RUM pipeline on this JS thread: capture, adaptive dispatch, coalescing, batch writer.";
const CONSTRUCTOR: &str = "constructor(options: PipelineOptions)";

/// One method as `index.d.ts` declares it.
struct MethodDecl {
    doc: &'static [&'static str],
    js: &'static str,
    ts_args: &'static str,
    ts_result: &'static str,
}

macro_rules! method_decls {
    ($($(#[doc = $doc:literal])* $fn:ident $js:literal ($($arg:ident),*) $ts:literal -> $ret:literal;)*) => {
        const METHODS: &[MethodDecl] =
            &[$(MethodDecl { doc: &[$($doc),*], js: $js, ts_args: $ts, ts_result: $ret }),*];
    };
}
for_each_pipeline_method!(method_decls);

/// A JSDoc comment from doc lines (each with the space `///` leaves), indented by `indent`.
fn js_doc(lines: &[&str], indent: &str) -> String {
    match lines {
        [] => String::new(),
        [one] => format!("{indent}/** {} */\n", one.trim()),
        many => {
            let body: String = many.iter().map(|l| format!("{indent} * {}\n", l.trim())).collect();
            format!("{indent}/**\n{body}{indent} */\n")
        }
    }
}

/// The `RumPipeline` class of `index.d.ts`.
pub fn pipeline_class_dts() -> String {
    let mut out = js_doc(&[CLASS_DOC], "");
    out.push_str("export declare class RumPipeline {\n");
    out.push_str(&format!("  {CONSTRUCTOR}\n"));
    for m in METHODS {
        out.push_str(&js_doc(m.doc, "  "));
        out.push_str(&format!("  {}({}): {}\n", m.js, m.ts_args, m.ts_result));
    }
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_is_declared_once_with_a_camel_case_name() {
        let mut names: Vec<_> = METHODS.iter().map(|m| m.js).collect();
        assert!(names.iter().all(|n| n.chars().next().is_some_and(|c| c.is_ascii_lowercase()) && !n.contains('_')));
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), METHODS.len(), "a JS name is declared twice");
    }

    #[test]
    fn the_class_declares_each_method_with_its_documentation() {
        let dts = pipeline_class_dts();
        assert!(dts.contains("  addAction(type: ActionType, name: string, attributes?: Attributes): void\n"));
        assert!(dts.contains("  /** Records a user action on the current view. */\n  addAction("));
        assert!(dts.contains("  /**\n   * Records many actions in one call:"));
        assert!(dts.contains("  sessionId(): string | null\n"));
        for m in METHODS {
            assert_eq!(dts.matches(&format!("\n  {}(", m.js)).count(), 1, "{}", m.js);
        }
    }
}
