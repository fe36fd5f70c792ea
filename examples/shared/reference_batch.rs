//! The reference batch: what `examples/gzip_levels.rs` measures the zlib levels on and what
//! `tests/compression.rs` holds the level in use to. Included by path (`#[path]`), not a target
//! of its own.

/// One batch's NDJSON, as the writer seals it: action documents with a 350-character attribute
/// and unique ids, and a view document every 50 actions.
pub fn reference_batch() -> Vec<u8> {
    let text: String = "lorem ipsum dolor sit amet, ".chars().cycle().take(350).collect();
    let mut out = Vec::new();
    let mut i = 0u64;
    while out.len() < 512 * 1024 {
        let line = format!(
            r#"{{"type":"action","date":{},"_dd":{{"format_version":2,"session":{{"plan":1}},"configuration":{{"session_sample_rate":100}}}},"application":{{"id":"4b2f7c1e-9d3a-4e8b-a1c2-3d4e5f6a7b8c"}},"session":{{"id":"5f3c1c7e-0000-4000-8000-000000000001","type":"user"}},"source":"harmony","service":"shop","version":"1.2.0","ddtags":"service:shop,version:1.2.0,sdk_version:0.1.0","context":{{"message":"{text}","seq":{i}}},"view":{{"id":"8c1d9b7e-1111-4222-8333-444455556666","name":"Chat","url":"pages/Chat"}},"action":{{"id":"{:08x}-{:04x}-4000-8000-{:012x}","type":"tap","target":{{"name":"sync message"}}}}}}"#,
            1_700_000_000_000 + i * 3,
            i.wrapping_mul(2_654_435_761) & 0xffff_ffff,
            i % 65_536,
            i * 7919
        );
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
        i += 1;
    }
    out
}
