//! The documents the scope tree builds: the RUM JSON shape docs/design.md lists, view counters and
//! versions, the launch view, resource pairing and its limits, global attributes.

mod dispatch_support;

use dispatch_support::*;
use rum_native::core::config::{MAX_PENDING_RESOURCES_PER_VIEW, MAX_STOPPED_VIEWS_WITH_PENDING};
use rum_native::core::document::Document;
use rum_native::core::event::{ActionType, ErrorSource, EventKind, HttpMethod, ResourceKind, UserInfo};
use rum_native::core::scope::LAUNCH_VIEW_NAME;
use rum_native::core::storage::json;
use serde_json::{json, Value};

/// The line the writer writes, checked byte for byte against serde_json's serialization of the
/// same document (the writer uses its own faster serializer, `core::storage::json`).
fn to_json(d: &Document) -> Value {
    let mut line = Vec::new();
    json::to_writer(&mut line, d).expect("serialize");
    let reference = serde_json::to_vec(d).expect("serde_json serializes");
    assert_eq!(String::from_utf8_lossy(&line), String::from_utf8_lossy(&reference), "same bytes as serde_json");
    serde_json::from_slice(&line).expect("valid JSON")
}

fn start_resource(key: &str) -> EventKind {
    EventKind::StartResource { key: key.into(), method: HttpMethod::Get, url: format!("https://api.example/{key}") }
}

fn stop_resource(key: &str) -> EventKind {
    EventKind::StopResource {
        key: key.into(),
        status_code: 200,
        kind: ResourceKind::Fetch,
        size: Some(512),
        details: None,
    }
}

fn check_common(v: &Value, ty: &str, date: i64) {
    assert_eq!(v["type"], ty);
    assert_eq!(v["date"], date);
    assert_eq!(v["_dd"]["format_version"], 2);
    assert_eq!(v["_dd"]["session"]["plan"], 1);
    assert_eq!(v["application"]["id"], "app-1");
    assert_eq!(v["session"]["type"], "user");
    assert_eq!(v["session"]["id"].as_str().map(str::len), Some(36));
    assert_eq!(v["source"], "harmony");
    assert_eq!(v["service"], "svc");
    assert_eq!(v["version"], "1.0.0");
    assert_eq!(v["_dd"]["configuration"], json!({ "session_sample_rate": 100 }));
    let sdk = rum_native::core::document::SDK_VERSION;
    assert_eq!(v["ddtags"], format!("service:svc,version:1.0.0,sdk_version:{sdk}"), "no env set: none in ddtags");
    assert!(v.get("env").is_none(), "the format has no top-level env");
    assert_eq!(v["usr"], json!({ "id": "u1", "name": "Ann", "plan": "pro" }));
}

#[test]
fn documents_have_the_rum_event_format_shape() {
    let mut h = harness(1_000, 1_000, 0);
    let t0 = WALL_BASE_MS;
    h.d.call(EventKind::AddAttribute { key: "g".into(), value: json!(1) }, no_attrs());
    h.d.call(EventKind::AddAttribute { key: "shared".into(), value: json!("global") }, no_attrs());
    let extra = attrs(json!({ "plan": "pro" })).to_map();
    h.d.call(
        EventKind::SetUser(Some(UserInfo { id: Some("u1".into()), name: Some("Ann".into()), email: None, extra })),
        no_attrs(),
    );
    h.d.call(start_view("home"), attrs(json!({ "screen": "main" })));
    h.clock.advance(5 * MS);
    let long = "x".repeat(350);
    h.d.call(
        EventKind::Action { action_type: ActionType::Tap, name: "buy".into() },
        attrs(json!({ "shared": "call", "long": long })),
    );
    h.d.call(
        EventKind::Error {
            message: "m".into(),
            source: ErrorSource::Network,
            stack: Some("s".into()),
            is_crash: false,
            details: None,
        },
        no_attrs(),
    );
    h.d.call(start_resource("r1"), attrs(json!({ "phase": "start" })));
    h.clock.advance(7 * MS);
    h.d.call(stop_resource("r1"), attrs(json!({ "phase": "stop" })));
    assert_eq!(h.sink.shape(), "vavevrv");
    let docs: Vec<Value> = h.sink.docs().iter().map(to_json).collect();
    let view_id = docs[0]["view"]["id"].clone();
    let view_ref = json!({ "id": view_id, "name": "home", "url": "home" });

    let action = &docs[1];
    check_common(action, "action", t0 + 5);
    assert_eq!(action["context"], json!({ "g": 1, "shared": "call", "long": long }), "the call's attributes win");
    assert_eq!(action["view"], view_ref);
    assert_eq!(action["action"]["type"], "tap");
    assert_eq!(action["action"]["target"], json!({ "name": "buy" }));
    assert_eq!(action["action"]["id"].as_str().map(str::len), Some(36));

    let error = &docs[3];
    check_common(error, "error", t0 + 5);
    assert_eq!(error["view"], view_ref);
    let e = &error["error"];
    assert_eq!((&e["message"], &e["source"], &e["stack"]), (&json!("m"), &json!("network"), &json!("s")));
    assert_eq!((&e["is_crash"], &e["handling"]), (&json!(false), &json!("handled")));

    let resource = &docs[5];
    check_common(resource, "resource", t0 + 5); // dated by its start
    assert_eq!(resource["context"], json!({ "g": 1, "shared": "global", "phase": "stop" }));
    let r = &resource["resource"];
    assert_eq!(r["type"], "fetch");
    assert_eq!(r["url"], "https://api.example/r1");
    assert_eq!(r["method"], "GET");
    assert_eq!(r["status_code"], 200);
    assert_eq!(r["size"], 512);
    assert_eq!(r["duration"], 7 * MS);

    let view = &docs[6];
    check_common(view, "view", t0);
    assert_eq!(view["_dd"]["document_version"], 4);
    assert_eq!(view["context"], json!({ "g": 1, "shared": "global", "screen": "main" }));
    let v = &view["view"];
    assert_eq!((&v["id"], &v["name"], &v["url"]), (&view_id, &json!("home"), &json!("home")));
    assert_eq!(v["time_spent"], 12 * MS);
    assert_eq!(v["is_active"], true);
    assert_eq!(
        (&v["action"], &v["error"], &v["resource"], &v["crash"]),
        (&json!({ "count": 1 }), &json!({ "count": 1 }), &json!({ "count": 1 }), &json!({ "count": 0 }))
    );
}

#[test]
fn absent_stack_and_size_are_omitted_not_null() {
    let mut h = harness(1_000, 1_000, 0);
    h.d.call(start_view("home"), no_attrs());
    h.d.call(error("no stack"), no_attrs());
    h.d.call(start_resource("r"), no_attrs());
    h.d.call(
        EventKind::StopResource {
            key: "r".into(),
            status_code: 204,
            kind: ResourceKind::Xhr,
            size: None,
            details: None,
        },
        no_attrs(),
    );
    let docs: Vec<Value> = h.sink.non_view_docs().iter().map(to_json).collect();
    assert!(docs[0]["error"].as_object().is_some_and(|e| !e.contains_key("stack")), "{}", docs[0]);
    assert!(docs[1]["resource"].as_object().is_some_and(|r| !r.contains_key("size")), "{}", docs[1]);
}

#[test]
fn a_crash_counts_on_its_view_and_ends_it() {
    let mut h = harness(1_000, 1_000, 0);
    h.d.call(start_view("home"), no_attrs());
    h.clock.advance(3 * MS);
    let crash = EventKind::Error {
        message: "boom".into(),
        source: ErrorSource::Source,
        stack: None,
        is_crash: true,
        details: None,
    };
    h.d.call(crash, no_attrs());
    let last_view = h.sink.view_docs().pop().map(|d| to_json(&d)).expect("a view document after the crash");
    let v = &last_view["view"];
    assert_eq!((&v["crash"], &v["error"]), (&json!({ "count": 1 }), &json!({ "count": 1 })));
    assert_eq!(v["is_active"], false, "the crashed view is closed, as the mobile SDKs report it");
    assert_eq!(v["time_spent"], 3 * MS, "time spent up to the crash");
    let crash_doc = to_json(&h.sink.non_view_docs()[0]);
    assert_eq!((&crash_doc["error"]["is_crash"], &crash_doc["error"]["handling"]), (&json!(true), &json!("unhandled")));
    // A later action lands on a launch view, not on the crashed one.
    h.d.call(action("after"), no_attrs());
    let after = to_json(h.sink.non_view_docs().last().expect("the action"));
    assert_eq!(after["view"]["name"], rum_native::core::scope::LAUNCH_VIEW_NAME);
}

#[test]
fn usr_is_absent_until_a_user_is_set_and_versions_increase_per_view_document() {
    let mut h = harness(1_000, 1_000, 0);
    h.d.call(start_view("home"), no_attrs());
    h.d.call(action("a"), no_attrs());
    h.d.call(action("b"), no_attrs());
    let docs: Vec<Value> = h.sink.docs().iter().map(to_json).collect();
    assert!(docs.iter().all(|d| d.get("usr").is_none()));
    let versions: Vec<&Value> =
        docs.iter().filter(|d| d["type"] == "view").map(|d| &d["_dd"]["document_version"]).collect();
    assert_eq!(versions, [&json!(1), &json!(2), &json!(3)]);
}

#[test]
fn an_action_or_error_without_a_view_opens_the_launch_view() {
    let mut h = harness(1_000, 1_000, 0);
    h.d.call(action("early"), no_attrs());
    h.d.call(error("early error"), no_attrs());
    h.d.call(start_view("home"), no_attrs());
    let docs = h.sink.docs();
    assert_eq!(h.sink.shape(), "avevvv");
    let (Document::Action(a), Document::View(launch)) = (&docs[0], &docs[3]) else { panic!() };
    assert_eq!(&*launch.view.name, LAUNCH_VIEW_NAME);
    assert_eq!(a.view.id, launch.view.id);
    assert_eq!((launch.action_count, launch.error_count), (1, 1));
    let Document::View(launch_final) = &docs[4] else { panic!() };
    assert_eq!(launch_final.view.id, launch.view.id);
    assert!(!launch_final.is_active, "a started view ends the launch view");
}

#[test]
fn resources_pair_by_key_and_at_most_the_limit_stay_pending_per_view() {
    let mut h = harness(1_000, 1_000, 0);
    h.d.call(start_view("home"), no_attrs());
    for i in 0..=MAX_PENDING_RESOURCES_PER_VIEW {
        h.d.call(start_resource(&format!("r{i}")), no_attrs());
    }
    assert_eq!(h.counters.resources_dropped.get(), 1, "the oldest is dropped past the limit");
    h.d.call(stop_resource("r0"), no_attrs());
    assert_eq!(h.counters.resources_unmatched.get(), 1);
    h.d.call(start_resource("r5"), no_attrs()); // restarted before it stopped
    assert_eq!(h.counters.resources_dropped.get(), 2);
    h.d.call(stop_resource("r1"), no_attrs());
    h.d.call(stop_resource("r5"), no_attrs());
    h.d.call(stop_resource("r5"), no_attrs());
    assert_eq!(h.counters.resources_unmatched.get(), 2);
    let urls: Vec<String> = h
        .sink
        .docs()
        .iter()
        .filter_map(|d| if let Document::Resource(r) = d { Some(r.url.clone()) } else { None })
        .collect();
    assert_eq!(urls, ["https://api.example/r1", "https://api.example/r5"]);
    assert_eq!(h.d.sequencer().with_scopes(|s| s.pending_resources()), MAX_PENDING_RESOURCES_PER_VIEW - 2);
}

#[test]
fn a_resource_that_outlives_its_view_is_counted_on_that_view() {
    let mut h = harness(1_000, 1_000, 0);
    h.d.call(start_view("v1"), no_attrs());
    h.d.call(start_resource("img"), no_attrs());
    h.d.call(start_view("v2"), no_attrs());
    h.sink.clear();
    h.d.call(stop_resource("img"), no_attrs());
    let docs = h.sink.docs();
    assert_eq!(h.sink.shape(), "rv");
    let (Document::Resource(r), Document::View(v1)) = (&docs[0], &docs[1]) else { panic!() };
    assert_eq!(r.view.id, v1.view.id);
    assert_eq!((&*v1.view.name, v1.is_active, v1.resource_count), ("v1", false, 1));
}

#[test]
fn stopped_views_waiting_for_resources_are_bounded() {
    let mut h = harness(1_000, 1_000, 0);
    for i in 0..MAX_STOPPED_VIEWS_WITH_PENDING + 3 {
        h.d.call(start_view(&format!("v{i}")), no_attrs());
        h.d.call(start_resource(&format!("r{i}")), no_attrs());
    }
    h.d.call(start_view("last"), no_attrs());
    assert_eq!(h.counters.resources_dropped.get(), 3, "the oldest stopped views gave theirs up");
    assert_eq!(h.d.sequencer().with_scopes(|s| s.pending_resources()), MAX_STOPPED_VIEWS_WITH_PENDING);
}

#[test]
fn views_stop_by_key_with_their_stop_attributes() {
    let mut h = harness(1_000, 1_000, 0);
    h.d.call(start_view("home"), attrs(json!({ "a": 1 })));
    h.d.call(stop_view("other"), no_attrs()); // not the active view: ignored
    assert_eq!(h.sink.shape(), "v");
    h.clock.advance(3 * MS);
    h.d.call(stop_view("home"), attrs(json!({ "b": 2 })));
    let Some(Document::View(v)) = h.sink.docs().pop() else { panic!() };
    assert!(!v.is_active);
    assert_eq!(v.time_spent_ns, 3 * MS);
    assert_eq!(serde_json::Value::Object(v.common.attrs.to_map()), json!({ "a": 1, "b": 2 }));
    h.d.call(action("after"), no_attrs());
    let Some(Document::View(launch)) = h.sink.docs().pop() else { panic!() };
    assert_eq!(&*launch.view.name, LAUNCH_VIEW_NAME, "no active view left");
}

#[test]
fn global_attributes_apply_to_later_calls_only() {
    let mut h = harness(1_000, 1_000, 0);
    h.d.call(start_view("home"), no_attrs());
    h.d.call(EventKind::AddAttribute { key: "k".into(), value: json!("v1") }, no_attrs());
    h.d.call(action("a1"), no_attrs());
    h.d.call(EventKind::AddAttribute { key: "k".into(), value: json!("v2") }, no_attrs());
    h.d.call(action("a2"), no_attrs());
    h.d.call(EventKind::RemoveAttribute { key: "k".into() }, no_attrs());
    h.d.call(action("a3"), no_attrs());
    let contexts: Vec<Value> = h.sink.non_view_docs().iter().map(|d| to_json(d)["context"].clone()).collect();
    assert_eq!(contexts, [json!({ "k": "v1" }), json!({ "k": "v2" }), json!({})]);
}

#[test]
fn add_timing_lands_in_the_view_as_ns_since_its_start() {
    let mut h = harness(1_000, 1_000, 0);
    h.d.call(start_view("home"), no_attrs());
    h.clock.advance(7 * MS);
    h.d.call(EventKind::AddTiming { name: "first_paint".into() }, no_attrs());
    h.clock.advance(3 * MS);
    h.d.call(EventKind::AddTiming { name: "hero_image".into() }, no_attrs());
    h.clock.advance(2 * MS);
    h.d.call(EventKind::AddTiming { name: "first_paint".into() }, no_attrs()); // the last call wins

    let views: Vec<Value> = h.sink.view_docs().iter().map(to_json).collect();
    assert_eq!(views.len(), 4, "the start and one view document per timing");
    assert!(views[0]["view"].get("custom_timings").is_none(), "no timings yet: no field");
    assert_eq!(views[1]["view"]["custom_timings"], json!({ "first_paint": 7 * MS }));
    assert_eq!(views[2]["view"]["custom_timings"], json!({ "first_paint": 7 * MS, "hero_image": 10 * MS }));
    assert_eq!(views[3]["view"]["custom_timings"], json!({ "first_paint": 12 * MS, "hero_image": 10 * MS }));
    // An earlier document keeps the timings it was built with.
    assert_eq!(to_json(&h.sink.view_docs()[1])["view"]["custom_timings"], json!({ "first_paint": 7 * MS }));
}

/// The global attributes' budget (half of `eventMaxBytes`) holds where they are applied: calls
/// from several threads are applied in another order than the binding checked them at their
/// calls, and an add past the budget then is not applied (counted) instead of making every later
/// document too large to keep.
#[test]
fn global_attributes_past_their_budget_are_not_applied() {
    let config = rum_native::core::config::Config { event_max_bytes: 1024, ..config(1_000, 1_000) };
    let mut h = harness_with(&config, vec![0], 42);
    let big = |c: char| json!(c.to_string().repeat(300));
    h.d.call(start_view("home"), no_attrs());
    h.d.call(EventKind::AddAttribute { key: "a".into(), value: big('a') }, no_attrs());
    h.d.call(EventKind::AddAttribute { key: "b".into(), value: big('b') }, no_attrs());
    h.d.call(action("one"), no_attrs());
    assert_eq!(h.counters.attributes_refused.get(), 1);
    h.d.call(EventKind::AddAttribute { key: "a".into(), value: json!(1) }, no_attrs()); // a smaller value
    h.d.call(EventKind::AddAttribute { key: "b".into(), value: big('b') }, no_attrs());
    h.d.call(action("two"), no_attrs());
    h.d.call(EventKind::RemoveAttribute { key: "a".into() }, no_attrs());
    h.d.call(EventKind::AddAttribute { key: "c".into(), value: json!("c".repeat(150)) }, no_attrs());
    h.d.call(action("three"), no_attrs());
    let keys: Vec<Vec<String>> = h
        .sink
        .non_view_docs()
        .iter()
        .map(|d| to_json(d)["context"].as_object().unwrap().keys().cloned().collect())
        .collect();
    assert_eq!(keys, [vec!["a"], vec!["a", "b"], vec!["b", "c"]]);
    assert_eq!(h.counters.attributes_refused.get(), 1, "room was made by a smaller value and a remove");
}

#[test]
fn a_resource_writes_the_timing_phases_and_the_trace_it_was_given() {
    use rum_native::core::event::{Phase, ResourceDetails, ResourceTiming, TraceIds};
    let mut h = harness(1_000, 1_000, 0);
    h.d.call(start_view("home"), no_attrs());
    h.d.call(start_resource("r"), no_attrs());
    let timing = ResourceTiming {
        dns: Some(Phase { start: 0, duration: 2 * MS }),
        first_byte: Some(Phase { start: 5 * MS, duration: 10 * MS }),
        ..ResourceTiming::default()
    };
    let stop = EventKind::StopResource {
        key: "r".into(),
        status_code: 200,
        kind: ResourceKind::Native,
        size: Some(3),
        details: Some(Box::new(ResourceDetails {
            timing,
            trace: Some(TraceIds { trace_id: 0x4bf92f3577b34da6a3ce929d0e0e4736, span_id: 0x00f067aa0ba902b7 }),
        })),
    };
    h.d.call(stop, no_attrs());
    let doc = to_json(&h.sink.non_view_docs()[0]);
    assert_eq!(doc["_dd"]["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736", "128-bit hex, as the format takes it");
    assert_eq!(doc["_dd"]["span_id"], 0x00f067aa0ba902b7u64.to_string(), "decimal");
    assert_eq!(doc["_dd"]["format_version"], 2, "beside the fields every document has");
    let r = &doc["resource"];
    assert_eq!(r["dns"], json!({ "start": 0, "duration": 2 * MS }));
    assert_eq!(r["first_byte"], json!({ "start": 5 * MS, "duration": 10 * MS }));
    assert!(r.get("connect").is_none() && r.get("ssl").is_none(), "phases not given are absent: {r}");
}

#[test]
fn a_failed_resource_is_a_network_error_naming_it_and_counted_as_an_error() {
    let mut h = harness(1_000, 1_000, 0);
    h.d.call(start_view("home"), no_attrs());
    h.d.call(start_resource("r"), attrs(json!({ "phase": "start" })));
    h.clock.advance(4 * MS);
    let failed = EventKind::StopResourceWithError {
        key: "r".into(),
        message: "Couldn't resolve host name".into(),
        error_type: Some("2300006".into()),
    };
    h.d.call(failed, no_attrs());
    let docs: Vec<Value> = h.sink.non_view_docs().iter().map(to_json).collect();
    assert_eq!(docs.len(), 1, "an error and no resource: {docs:?}");
    let e = &docs[0];
    assert_eq!(e["type"], "error");
    assert_eq!(e["date"], WALL_BASE_MS + 4, "dated at the failure");
    assert_eq!(e["context"]["phase"], "start", "the start's attributes");
    assert_eq!(
        (&e["error"]["source"], &e["error"]["category"], &e["error"]["type"]),
        (&json!("network"), &json!("Network"), &json!("2300006"))
    );
    assert_eq!(e["error"]["resource"], json!({ "method": "GET", "status_code": 0, "url": "https://api.example/r" }));
    let view = to_json(&h.sink.view_docs().pop().expect("a view document"));
    assert_eq!((&view["view"]["error"], &view["view"]["resource"]), (&json!({ "count": 1 }), &json!({ "count": 0 })));
    // The key is no longer pending: a late stop pairs with nothing.
    h.d.call(stop_resource("r"), no_attrs());
    assert_eq!(h.sink.non_view_docs().len(), 1);
}

#[test]
fn long_tasks_are_dated_at_their_start_and_counted_with_frozen_frames_apart() {
    let mut h = harness(1_000, 1_000, 0);
    h.d.call(start_view("home"), no_attrs());
    h.clock.advance(500 * MS);
    h.d.call(EventKind::LongTask { duration_ns: 150 * MS, start_wall_ms: None }, no_attrs());
    h.d.call(EventKind::LongTask { duration_ns: 900 * MS, start_wall_ms: Some(WALL_BASE_MS - 2_000) }, no_attrs());
    let docs: Vec<Value> = h.sink.non_view_docs().iter().map(to_json).collect();
    assert_eq!(docs[0]["type"], "long_task");
    assert_eq!(docs[0]["date"], WALL_BASE_MS + 500 - 150, "ended at the call");
    assert_eq!(
        (&docs[0]["long_task"]["duration"], &docs[0]["long_task"]["is_frozen_frame"]),
        (&json!(150 * MS), &json!(false))
    );
    assert_eq!(docs[1]["date"], WALL_BASE_MS - 2_000, "the start the reporter gave");
    assert_eq!(docs[1]["long_task"]["is_frozen_frame"], true);
    assert_eq!(docs[0]["long_task"]["id"].as_str().map(str::len), Some(36));
    let view = to_json(&h.sink.view_docs().pop().expect("a view document"));
    assert_eq!(
        (&view["view"]["long_task"], &view["view"]["frozen_frame"]),
        (&json!({ "count": 2 }), &json!({ "count": 1 }))
    );
}

#[test]
fn the_app_launch_is_a_ttid_vital_dated_at_the_process_start() {
    let mut h = harness(1_000, 1_000, 0);
    h.d.call(EventKind::AppLaunch { duration_ns: 812 * MS, start_wall_ms: WALL_BASE_MS - 812 }, no_attrs());
    let v = to_json(&h.sink.non_view_docs()[0]);
    assert_eq!((&v["type"], &v["date"]), (&json!("vital"), &json!(WALL_BASE_MS - 812)));
    assert_eq!(v["view"]["name"], LAUNCH_VIEW_NAME, "before the first page: on the launch view");
    let vital = &v["vital"];
    assert_eq!(
        (&vital["type"], &vital["app_launch_metric"], &vital["name"], &vital["duration"]),
        (&json!("app_launch"), &json!("ttid"), &json!("time_to_initial_display"), &json!(812 * MS))
    );
}
