//! The compression level of sealed batches, by measurement: ratio and time to compress one
//! 512 KiB batch of reference-burst action documents (and a view per 50 actions) at zlib levels
//! 1, 3, 6 and 9, median of 9 runs. Prints the figures; asserts nothing.
//! Run: `cargo run --release --no-default-features --example gzip_levels`.

use std::io::Write;
use std::time::Instant;

use flate2::write::GzEncoder;
use flate2::Compression;

#[path = "shared/reference_batch.rs"]
mod reference_batch;

fn main() {
    let plain = reference_batch::reference_batch();
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
