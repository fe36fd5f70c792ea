//! Identifiers for sessions, views, actions, errors and resources: random UUID v4 strings.
//!
//! The intake only needs them unique, not unpredictable, so a splitmix64 stream seeded once per
//! pipeline is enough, and it costs a few nanoseconds where a system RNG call would cost a
//! syscall. A fixed seed makes the ids reproducible, which the dispatcher's property tests use to
//! compare a sliced run with an all-inline run of the same calls.

use std::time::{SystemTime, UNIX_EPOCH};

/// A UUID v4 generator.
#[derive(Clone, Debug)]
pub struct IdGen {
    state: u64,
}

const HEX: &[u8; 16] = b"0123456789abcdef";

impl IdGen {
    /// A generator with a fixed seed: the same seed gives the same ids in the same order.
    pub fn with_seed(seed: u64) -> Self {
        Self { state: seed }
    }

    /// A generator seeded from the clock, the process id and an address, so two pipelines (or two
    /// processes started in the same nanosecond) do not share a stream.
    pub fn from_entropy() -> Self {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
        let local = 0u8;
        let addr = &local as *const u8 as u64;
        let mut seed = Self::with_seed(nanos ^ u64::from(std::process::id()).rotate_left(32) ^ addr);
        // Stir once so nearby seeds do not give nearby first ids.
        let stirred = seed.next_u64();
        Self::with_seed(stirred)
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in [0, 100): a session's sampling draw.
    pub fn percent(&mut self) -> f64 {
        // The top 53 bits: every value a double holds exactly, evenly spread.
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 100.0
    }

    /// A new lowercase UUID v4: `xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`.
    pub fn uuid(&mut self) -> Uuid {
        let hi = (self.next_u64() & !0xF000) | 0x4000; // version 4 in bits 12..16 of the third group
        let lo = (self.next_u64() & !(0b11 << 62)) | (0b10 << 62); // RFC 4122 variant
        let (hi, lo) = (hex16(hi), hex16(lo));
        let mut out = [b'-'; 36];
        out[..8].copy_from_slice(&hi[..8]);
        out[9..13].copy_from_slice(&hi[8..12]);
        out[14..18].copy_from_slice(&hi[12..]);
        out[19..23].copy_from_slice(&lo[..4]);
        out[24..].copy_from_slice(&lo[4..]);
        Uuid(out)
    }
}

/// `v`'s 16 hex digits, most significant first.
fn hex16(v: u64) -> [u8; 16] {
    let mut digits = [0u8; 16];
    for (i, d) in digits.iter_mut().enumerate() {
        *d = HEX[((v >> (60 - 4 * i)) & 0xF) as usize];
    }
    digits
}

/// A UUID as its 36 ASCII characters, held inline: an action's, error's or resource's id costs no
/// allocation on the JS thread and no free on the writer thread.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Uuid([u8; 36]);

impl Uuid {
    pub fn as_str(&self) -> &str {
        // Only IdGen::uuid makes one, of ASCII hex digits and dashes.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl std::fmt::Display for Uuid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Debug for Uuid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl serde::Serialize for Uuid {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl From<Uuid> for std::sync::Arc<str> {
    fn from(id: Uuid) -> Self {
        Self::from(id.as_str())
    }
}

/// Whether `s` is a lowercase UUID (`8-4-4-4-12` hex digits), as the RUM event format's
/// `application.id` pattern wants.
pub fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, &c)| match i {
            8 | 13 | 18 | 23 => c == b'-',
            _ => c.is_ascii_digit() || (b'a'..=b'f').contains(&c),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_recognised_as_the_format_writes_them() {
        assert!(is_uuid("0f8e2a6b-1c3d-4e5f-8a9b-0c1d2e3f4a5b"));
        assert!(is_uuid(IdGen::with_seed(7).uuid().as_str()));
        for bad in [
            "app",
            "0F8E2A6B-1C3D-4E5F-8A9B-0C1D2E3F4A5B",
            "0f8e2a6b1c3d4e5f8a9b0c1d2e3f4a5b",
            "0f8e2a6b-1c3d-4e5f-8a9b-0c1d2e3f4a5g",
            "",
        ] {
            assert!(!is_uuid(bad), "{bad}");
        }
    }

    #[test]
    fn uuids_are_v4_shaped_and_distinct() {
        let mut ids = IdGen::from_entropy();
        let a = ids.uuid();
        let b = ids.uuid();
        assert_ne!(a, b);
        for id in [a.as_str(), b.as_str()] {
            assert_eq!(id.len(), 36);
            let groups: Vec<&str> = id.split('-').collect();
            assert_eq!(groups.iter().map(|g| g.len()).collect::<Vec<_>>(), vec![8, 4, 4, 4, 12]);
            assert!(groups[2].starts_with('4'), "{id}");
            assert!(matches!(groups[3].as_bytes()[0], b'8' | b'9' | b'a' | b'b'), "{id}");
        }
    }

    #[test]
    fn the_digits_are_the_two_draws_in_order() {
        let (mut ids, mut draws) = (IdGen::with_seed(11), IdGen::with_seed(11));
        for _ in 0..100 {
            let id = ids.uuid();
            let hi = (draws.next_u64() & !0xF000) | 0x4000;
            let lo = (draws.next_u64() & !(0b11 << 62)) | (0b10 << 62);
            let hex = format!("{hi:016x}{lo:016x}");
            let want = [&hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..]].join("-");
            assert_eq!(id.as_str(), want);
            assert_eq!(format!("{id}"), want);
            assert_eq!(serde_json::to_string(&id).unwrap(), format!("\"{want}\""));
        }
    }

    #[test]
    fn a_seed_fixes_the_stream() {
        let (mut x, mut y) = (IdGen::with_seed(7), IdGen::with_seed(7));
        assert_eq!(x.uuid(), y.uuid());
        assert_eq!(x.uuid(), y.uuid());
        assert_ne!(IdGen::with_seed(8).uuid(), IdGen::with_seed(7).uuid());
    }
}
