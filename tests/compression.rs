//! The compression sealed batches get: what the quota's promise rests on (README: the default
//! quota keeps a 100,000-action burst whole).

use std::io::Write;

use flate2::write::GzEncoder;
use flate2::Compression;
use rum_native::core::config::GZIP_LEVEL;

#[path = "../examples/shared/reference_batch.rs"]
mod reference_batch;

#[test]
fn a_batch_of_burst_actions_shrinks_at_least_32_times_at_the_level_in_use() {
    // zlib-rs at level 2 gives 36x; miniz_oxide at level 1, used before, 25.7x.
    let data = reference_batch::reference_batch();
    let mut enc = GzEncoder::new(Vec::new(), Compression::new(GZIP_LEVEL));
    enc.write_all(&data).unwrap();
    let gz = enc.finish().unwrap();
    let ratio = data.len() as f64 / gz.len() as f64;
    assert!(ratio >= 32.0, "{ratio:.1}x smaller");
}
