//! The compression level of sealed batches, by measurement: ratio and time to compress one
//! 512 KiB batch of reference-burst action documents (and a view per 50 actions) at zlib levels
//! 1, 3, 6 and 9, median of 9 runs. Prints the figures; asserts nothing.
//! Run: `cargo run --release --no-default-features --example gzip_levels`.

use std::io::Write;
use std::time::Instant;

use flate2::write::GzEncoder;
use flate2::Compression;

/// One batch's NDJSON, as the writer seals it: action documents with a 350-character attribute
/// and unique ids, and a view document every 50 actions.
fn batch() -> Vec<u8> {
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

fn main() {
    let plain = batch();
    println!("one batch: {} bytes of NDJSON", plain.len());
    for level in [1u32, 2, 3, 6, 9] {
        let mut times = Vec::new();
        let mut size = 0;
        for _ in 0..9 {
            let t = Instant::now();
            let mut enc = GzEncoder::new(Vec::new(), Compression::new(level));
            enc.write_all(&plain).expect("in memory");
            let gz = enc.finish().expect("in memory");
            times.push(t.elapsed().as_secs_f64() * 1e3);
            size = gz.len();
        }
        times.sort_by(f64::total_cmp);
        println!(
            "level {level}: {size} bytes ({:.1}x smaller), {:.2} ms per batch (median of 9)",
            plain.len() as f64 / size as f64,
            times[4]
        );
    }
}
