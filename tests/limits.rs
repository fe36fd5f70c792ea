//! Every limit is stated once, with its reason, in `src/core/config.rs`. The places that repeat a
//! value for a reader (the README's limits table, the options' `@default`s in the generated
//! `index.d.ts`, the defaults named in `docs/design.md`, `docs/how-it-works.md` and the README's
//! introduction) are checked against the constants here,
//! so changing a number in `config.rs` fails this test until each of them says the same.

use std::fs;
use std::path::Path;

use rum_native::core::config::*;

fn read(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// `4 ms`, `1 s`, `10 min`, `23 h`: the largest unit that divides the value.
fn human_ms(ms: u64) -> String {
    match ms {
        0 => "0 ms".to_owned(),
        ms if ms.is_multiple_of(3_600_000) => format!("{} h", ms / 3_600_000),
        ms if ms.is_multiple_of(60_000) => format!("{} min", ms / 60_000),
        ms if ms.is_multiple_of(1_000) => format!("{} s", ms / 1_000),
        ms => format!("{ms} ms"),
    }
}

/// `4 MiB`, `512 KiB`, or bytes.
fn human_bytes(b: u64) -> String {
    match b {
        b if b > 0 && b.is_multiple_of(1 << 20) => format!("{} MiB", b >> 20),
        b if b > 0 && b.is_multiple_of(1 << 10) => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// `5,000`, `100,000`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `half`, `a third`, ... of a share `1/n`.
fn share(n: u64) -> String {
    match n {
        1 => "all".to_owned(),
        2 => "half".to_owned(),
        3 => "a third".to_owned(),
        4 => "a quarter".to_owned(),
        16 => "a sixteenth".to_owned(),
        n => format!("1/{n}"),
    }
}

/// What the README's limits table must say: limit → (default, option).
fn readme_rows() -> Vec<(&'static str, String, &'static str)> {
    let view_updates = if VIEW_UPDATE_INTERVAL_MS == 1_000 {
        "1 per s per view".to_owned()
    } else {
        format!("1 per {} per view", human_ms(VIEW_UPDATE_INTERVAL_MS.into()))
    };
    vec![
        ("turn budget", human_ms(TURN_BUDGET_MS.into()), "`turnBudgetMs`"),
        ("queue capacity", format!("{} events", grouped(QUEUE_CAPACITY as u64)), "`queueCapacity`"),
        ("slices in parse", format!("{MAX_RUNS_IN_PARSE} per JS thread"), "—"),
        (
            "kept handover buffer",
            format!("{} of capacity per JS thread", human_bytes(MAX_SPARE_TEXT_BYTES as u64)),
            "—",
        ),
        ("batch size", human_bytes(BATCH_MAX_BYTES), "`batchMaxBytes`"),
        ("batch window", human_ms(BATCH_WINDOW_MS), "`batchWindowMs`"),
        ("disk quota", human_bytes(DISK_QUOTA_BYTES), "`diskQuotaBytes`"),
        ("batch files", grouped(MAX_BATCH_FILES.into()), "`maxBatchFiles`"),
        ("batch age", human_ms(BATCH_MAX_AGE_MS), "`batchMaxAgeMs`"),
        ("event size", human_bytes(EVENT_MAX_BYTES), "`eventMaxBytes`"),
        ("pre-consent buffer", human_bytes(PRE_CONSENT_MAX_BYTES), "—"),
        ("claim timeout", human_ms(CLAIM_TIMEOUT_MS), "—"),
        ("flush timeout", human_ms(FLUSH_TIMEOUT_MS.into()), "`flushTimeoutMs`"),
        ("writer hold", format!("{}, {}", human_ms(WRITER_HOLD_MAX_MS), human_bytes(WRITER_HOLD_MAX_BYTES)), "—"),
        ("capture linger", human_ms(CAPTURE_LINGER_MS), "RumMonitor's `pipeline.captureLingerMs`"),
        ("writer linger", human_ms(WRITER_LINGER_MS), "—"),
        ("upload wait", human_ms(UPLOAD_LOCK_WAIT_MS), "—"),
        (
            "session",
            format!(
                "{} idle, {} total",
                human_ms(SESSION_INACTIVITY_MS as u64),
                human_ms(SESSION_MAX_DURATION_MS as u64)
            ),
            "—",
        ),
        ("sessions tracked", format!("{SESSION_SAMPLE_RATE} %"), "`sessionSampleRate`"),
        ("pending resources", format!("{MAX_PENDING_RESOURCES_PER_VIEW} per view"), "—"),
        ("actions per `addActions`", grouped(MAX_ACTIONS_PER_CALL.into()), "—"),
        ("global attributes", format!("{} of `eventMaxBytes`", share(GLOBAL_ATTRIBUTES_SHARE)), "—"),
        ("view updates", view_updates, "`viewUpdateIntervalMs`"),
        ("sealed batches", format!("gzip, level {GZIP_LEVEL}"), "`batchEncoding`"),
    ]
}

/// The cells of each row of the README's table under `## Limits`.
fn readme_table(readme: &str) -> Vec<Vec<String>> {
    let section = readme.split("\n## Limits\n").nth(1).expect("README has a `## Limits` section");
    let section = section.split("\n## ").next().unwrap_or(section);
    section
        .lines()
        .filter(|l| l.starts_with('|'))
        .skip(2) // header and separator
        .map(|l| l.trim_matches('|').split('|').map(|c| c.trim().to_owned()).collect())
        .collect()
}

#[test]
fn the_readme_limits_table_says_what_config_rs_says() {
    let table = readme_table(&read("README.md"));
    let expected = readme_rows();
    let mut wrong = Vec::new();
    for (limit, default, option) in &expected {
        match table.iter().find(|row| row.first().map(String::as_str) == Some(*limit)) {
            None => wrong.push(format!("no row `{limit}`")),
            Some(row) => {
                if row.get(1) != Some(default) {
                    wrong.push(format!("`{limit}`: default {:?}, config.rs says {default:?}", row.get(1)));
                }
                if row.get(2).map(String::as_str) != Some(*option) {
                    wrong.push(format!("`{limit}`: option {:?}, expected {option:?}", row.get(2)));
                }
            }
        }
    }
    for row in &table {
        let name = row.first().map(String::as_str).unwrap_or("");
        if !expected.iter().any(|(limit, _, _)| *limit == name) {
            wrong.push(format!("row `{name}` is not checked against config.rs: add it to readme_rows()"));
        }
    }
    let batch_size = table.iter().find(|r| r[0] == "batch size").map(|r| r.join(" | ")).unwrap_or_default();
    let max = format!("at most {}", human_bytes(MAX_BATCH_MAX_BYTES));
    if !batch_size.contains(&max) {
        wrong.push(format!("`batch size` should say {max:?} (MAX_BATCH_MAX_BYTES)"));
    }
    assert!(wrong.is_empty(), "README.md's limits table vs src/core/config.rs:\n{}", wrong.join("\n"));
}

/// Each property of `interface PipelineOptions` in `index.d.ts` with its doc comment.
fn option_docs(dts: &str) -> Vec<(String, String)> {
    let block = dts.split("export interface PipelineOptions {").nth(1).expect("index.d.ts declares PipelineOptions");
    let block = block.split("\n}").next().unwrap_or(block);
    let mut out = Vec::new();
    let mut doc = String::new();
    for line in block.lines().map(str::trim) {
        if line.starts_with("/**") || line.starts_with('*') {
            let text = line.trim_start_matches("/**").trim_end_matches("*/").trim_start_matches('*').trim();
            doc.push(' ');
            doc.push_str(text);
        } else if let Some((name, _)) = line.split_once(':') {
            out.push((name.trim_end_matches('?').to_owned(), std::mem::take(&mut doc)));
        }
    }
    out
}

#[test]
fn the_options_defaults_in_index_d_ts_are_config_rs_values() {
    let dts = read("ets/src/main/cpp/types/librum_native/index.d.ts");
    let d = Config::default();
    let quoted = |s: &str| format!("\"{s}\"");
    // option → what its doc must say (`@default` and any bound it states).
    let expected: Vec<(&str, Vec<String>)> = vec![
        ("service", vec![format!("@default {}", quoted(&d.service))]),
        ("version", vec![format!("@default {}", quoted(&d.version))]),
        ("trackingConsent", vec![format!("@default {}", quoted(d.tracking_consent.as_str()))]),
        ("turnBudgetMs", vec![format!("@default {TURN_BUDGET_MS}")]),
        ("queueCapacity", vec![format!("@default {QUEUE_CAPACITY}")]),
        (
            "batchMaxBytes",
            vec![format!("@default {BATCH_MAX_BYTES}"), format!("at most {}", human_bytes(MAX_BATCH_MAX_BYTES))],
        ),
        ("batchWindowMs", vec![format!("@default {BATCH_WINDOW_MS}")]),
        ("diskQuotaBytes", vec![format!("@default {DISK_QUOTA_BYTES}")]),
        ("maxBatchFiles", vec![format!("@default {MAX_BATCH_FILES}")]),
        ("batchMaxAgeMs", vec![format!("@default {BATCH_MAX_AGE_MS} ({})", human_ms(BATCH_MAX_AGE_MS))]),
        (
            "eventMaxBytes",
            vec![
                format!("@default {EVENT_MAX_BYTES}"),
                format!("at most {MAX_EVENT_MAX_BYTES} ({})", human_bytes(MAX_EVENT_MAX_BYTES)),
            ],
        ),
        ("flushTimeoutMs", vec![format!("@default {FLUSH_TIMEOUT_MS}")]),
        (
            "batchEncoding",
            vec![format!("@default {}", quoted(d.batch_encoding.as_str())), format!("zlib level {GZIP_LEVEL}")],
        ),
        (
            "viewUpdateIntervalMs",
            vec![format!("@default {VIEW_UPDATE_INTERVAL_MS}"), format!("at most {MAX_VIEW_UPDATE_INTERVAL_MS}")],
        ),
        ("source", vec![format!("@default {}", quoted(DEFAULT_SOURCE))]),
        ("sessionSampleRate", vec![format!("@default {SESSION_SAMPLE_RATE}")]),
    ];
    let docs = option_docs(&dts);
    let mut wrong = Vec::new();
    for (option, phrases) in &expected {
        let Some((_, doc)) = docs.iter().find(|(name, _)| name == option) else {
            wrong.push(format!("`{option}` is not in PipelineOptions"));
            continue;
        };
        for phrase in phrases {
            // `@default 4` must not pass for `@default 40` or `@default 4.5`.
            let found = doc.match_indices(phrase.as_str()).any(|(i, _)| {
                let mut after = doc[i + phrase.len()..].chars();
                match after.next() {
                    Some(c) if c.is_ascii_alphanumeric() => false,
                    Some('.') => !after.next().is_some_and(|c| c.is_ascii_digit()),
                    _ => true,
                }
            });
            if !found {
                wrong.push(format!("`{option}` should say {phrase:?}; its doc is:{doc}"));
            }
        }
    }
    for (name, doc) in &docs {
        if doc.contains("@default") && !expected.iter().any(|(option, _)| option == name) {
            wrong.push(format!("`{name}` has a @default that is not checked against config.rs: add it here"));
        }
    }
    // The upload side's wait, stated in nextBatch()'s and stats()'s docs.
    let wait = format!("{UPLOAD_LOCK_WAIT_MS} ms");
    for phrase in [format!("for over {wait}"), format!("their {wait} wait")] {
        if !dts.contains(&phrase) {
            wrong.push(format!("index.d.ts should say {phrase:?} (UPLOAD_LOCK_WAIT_MS)"));
        }
    }
    assert!(
        wrong.is_empty(),
        "index.d.ts (from src/napi/options.rs, src/napi/stats.rs and src/interface.rs by scripts/gen-dts.sh) \
         vs src/core/config.rs:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_defaults_docs_design_md_names_are_config_rs_values() {
    // Lines wrap anywhere: compare with runs of white space as one space.
    let design = read("docs/design.md").split_whitespace().collect::<Vec<_>>().join(" ");
    let phrases = [
        format!("`turnBudgetMs`, default {}", human_ms(TURN_BUDGET_MS.into())),
        format!("`queueCapacity` (default {} events)", grouped(QUEUE_CAPACITY as u64)),
        format!("`viewUpdateIntervalMs` (default {};", human_ms(VIEW_UPDATE_INTERVAL_MS.into())),
        format!("`WRITER_HOLD_MAX_MS` ({})", human_ms(WRITER_HOLD_MAX_MS)),
        format!("`WRITER_HOLD_MAX_BYTES` ({})", human_bytes(WRITER_HOLD_MAX_BYTES)),
        format!("`eventMaxBytes` (default {})", human_bytes(EVENT_MAX_BYTES)),
        format!("`batchMaxBytes` (default {})", human_bytes(BATCH_MAX_BYTES)),
        format!("`batchWindowMs` (default {})", human_ms(BATCH_WINDOW_MS)),
        format!("`GZIP_LEVEL` = {GZIP_LEVEL}"),
        format!("`diskQuotaBytes` (default {})", human_bytes(DISK_QUOTA_BYTES)),
        format!("`maxBatchFiles` (default {MAX_BATCH_FILES})"),
        format!("`batchMaxAgeMs` (default {})", human_ms(BATCH_MAX_AGE_MS)),
        format!("`PRE_CONSENT_MAX_BYTES` ({})", human_bytes(PRE_CONSENT_MAX_BYTES)),
        format!("`flushTimeoutMs` (default {})", human_ms(FLUSH_TIMEOUT_MS.into())),
        format!("`CLAIM_TIMEOUT_MS` ({})", human_ms(CLAIM_TIMEOUT_MS)),
        format!("`UPLOAD_LOCK_WAIT_MS` ({})", human_ms(UPLOAD_LOCK_WAIT_MS)),
        format!("`WRITER_LINGER_MS` ({})", human_ms(WRITER_LINGER_MS)),
        format!("`SESSION_INACTIVITY_MS` ({})", human_ms(SESSION_INACTIVITY_MS as u64)),
        format!("`SESSION_MAX_DURATION_MS` ({})", human_ms(SESSION_MAX_DURATION_MS as u64)),
        format!("{} of `eventMaxBytes` (`GLOBAL_ATTRIBUTES_SHARE`)", share(GLOBAL_ATTRIBUTES_SHARE)),
        format!("`source` (default `\"{DEFAULT_SOURCE}\"`)"),
        format!(
            "{} of the budget (`LIGHT_TURN_SHARE`: {} µs of the default {})",
            share(LIGHT_TURN_SHARE),
            u64::from(TURN_BUDGET_MS) * 1_000 / LIGHT_TURN_SHARE,
            human_ms(TURN_BUDGET_MS.into())
        ),
    ];
    let missing: Vec<&String> = phrases.iter().filter(|p| !design.contains(p.as_str())).collect();
    assert!(missing.is_empty(), "docs/design.md should say (from src/core/config.rs): {missing:#?}");
}

#[test]
fn the_defaults_how_it_works_and_the_readme_introduction_name_are_config_rs_values() {
    let flat = |rel: &str| read(rel).split_whitespace().collect::<Vec<_>>().join(" ");
    let how = flat("docs/how-it-works.md");
    let budget = human_ms(TURN_BUDGET_MS.into());
    let phrases = [
        format!("spent less than **{budget}** in the SDK"),
        format!("bounded at **{}**", grouped(QUEUE_CAPACITY as u64)),
        format!("processed in {budget} slices"),
        format!("`viewUpdateIntervalMs` (default **{}**;", human_ms(VIEW_UPDATE_INTERVAL_MS.into())),
        format!("under a **{}** quota", human_bytes(DISK_QUOTA_BYTES)),
        format!("at most {} (a frame) and {}", human_ms(WRITER_HOLD_MAX_MS), human_bytes(WRITER_HOLD_MAX_BYTES)),
    ];
    let missing: Vec<&String> = phrases.iter().filter(|p| !how.contains(p.as_str())).collect();
    assert!(missing.is_empty(), "docs/how-it-works.md should say (from src/core/config.rs): {missing:#?}");
    let readme = flat("README.md");
    let intro = format!("less than {budget} in the SDK the calls are processed on the spot, past that they wait and are processed in {budget} slices");
    assert!(readme.contains(&intro), "README.md's introduction should say: {intro}");
}

#[test]
fn the_unit_formatting_is_what_the_docs_write() {
    assert_eq!(
        (human_ms(4), human_ms(1_000), human_ms(600_000), human_ms(82_800_000)),
        ("4 ms".into(), "1 s".into(), "10 min".into(), "23 h".into())
    );
    assert_eq!(
        (human_bytes(524_288), human_bytes(4 << 20), human_bytes(1000)),
        ("512 KiB".into(), "4 MiB".into(), "1000 bytes".into())
    );
    assert_eq!((grouped(200), grouped(5_000), grouped(100_000)), ("200".into(), "5,000".into(), "100,000".into()));
}

#[test]
fn the_capture_buffer_lingers_as_long_as_config_rs_says() {
    let ets = read("ets/src/main/ets/capture/CallBuffer.ets");
    let stated = format!("export const CAPTURE_LINGER_MS: number = {CAPTURE_LINGER_MS};");
    assert!(ets.contains(&stated), "CallBuffer.ets should say `{stated}` (src/core/config.rs)");
    // By default what a kill may lose of a stream (the two lingers together) is at most a quarter
    // of a second: checked when this file compiles.
    const { assert!(CAPTURE_LINGER_MS + WRITER_LINGER_MS <= 250) };
}
