//! JSON string escaping exactly as serde_json does it (`"`, `\\` and the controls below 0x20;
//! nothing else), eight bytes at a time: used by the writer's serializer and by the binding, which
//! encodes a call's attributes as JSON text while it copies them (`core::attrs`).

/// Bytes that JSON requires to be escaped: `"`, `\` and the controls below 0x20.
pub fn needs_escape(b: u8) -> bool {
    ESCAPED[usize::from(b)]
}

/// [`needs_escape`] as a table: one load a byte, for the short strings (keys) that are most of
/// a document's strings.
static ESCAPED: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Whether any of the eight bytes needs escaping (SWAR: a byte's high bit in the result is set
/// when it is `"`, `\` or below 0x20; borrows only ever add bits above a byte that matched).
pub fn chunk_needs_escape(chunk: u64) -> bool {
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v;
    let control = chunk.wrapping_sub(ONES * 0x20) & !chunk;
    let quote = has_zero(chunk ^ (ONES * u64::from(b'"')));
    let backslash = has_zero(chunk ^ (ONES * u64::from(b'\\')));
    (control | quote | backslash) & HIGHS != 0
}

/// Whether any byte of `bytes` needs escaping, eight at a time.
pub fn any_needs_escape(bytes: &[u8]) -> bool {
    let mut chunks = bytes.chunks_exact(8);
    let found =
        chunks.by_ref().any(|c| c.first_chunk::<8>().is_some_and(|c| chunk_needs_escape(u64::from_le_bytes(*c))));
    found || chunks.remainder().iter().any(|&b| needs_escape(b))
}

/// serde_json's escapes: the short forms where JSON has one, `\u00XX` (lowercase) otherwise.
pub fn write_escape(out: &mut Vec<u8>, b: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short = match b {
        b'"' => b'"',
        b'\\' => b'\\',
        b'\n' => b'n',
        b'\r' => b'r',
        b'\t' => b't',
        0x08 => b'b',
        0x0c => b'f',
        _ => {
            out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xf)]]);
            return;
        }
    };
    out.extend_from_slice(&[b'\\', short]);
}

/// Appends `s` as a JSON string, escaped byte for byte as serde_json escapes it.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    if !any_needs_escape(bytes) {
        // Almost every string: one check, one copy.
        out.push(b'"');
        out.extend_from_slice(bytes);
        out.push(b'"');
        return;
    }
    out.push(b'"');
    let mut run = 0; // start of the bytes not yet copied
    let mut i = 0;
    while i < bytes.len() {
        if let Some(chunk) = bytes[i..].first_chunk::<8>() {
            if !chunk_needs_escape(u64::from_le_bytes(*chunk)) {
                i += 8;
                continue;
            }
        }
        let b = bytes[i];
        if needs_escape(b) {
            out.extend_from_slice(&bytes[run..i]);
            write_escape(out, b);
            run = i + 1;
        }
        i += 1;
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_swar_check_finds_an_escape_at_every_position_of_a_chunk() {
        for pos in 0..8 {
            for b in [0u8, 0x1f, b'"', b'\\', b'\n'] {
                let mut chunk = *b"abcdefgh";
                chunk[pos] = b;
                assert!(chunk_needs_escape(u64::from_le_bytes(chunk)), "{b:#04x} at {pos}");
            }
        }
        for clean in [*b"abcdefgh", *b"        ", [0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xff]] {
            assert!(!chunk_needs_escape(u64::from_le_bytes(clean)), "{clean:?}");
        }
    }

    #[test]
    fn the_escaped_bytes_are_json_s() {
        for b in 0..=255u8 {
            assert_eq!(needs_escape(b), b < 0x20 || b == b'"' || b == b'\\', "{b:#04x}");
        }
    }

    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        let controls: String = (0u8..0x20).map(char::from).collect();
        for s in ["", "type", "a\"b", "\\", "tab\there", "é and 日本", "long clean text past one chunk", &controls] {
            for padded in [s.to_owned(), format!("{s}{s}{s}"), format!("0123456{s}89")] {
                let mut out = Vec::new();
                write_str(&mut out, &padded);
                assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(&padded).unwrap());
            }
        }
    }

    #[test]
    fn a_text_needs_escaping_when_one_of_its_bytes_does_wherever_it_is() {
        let clean: Vec<u8> = (0x20..=0xff).filter(|&b| !needs_escape(b)).cycle().take(61).collect();
        assert!(!any_needs_escape(&clean));
        assert!(!any_needs_escape(b""));
        for len in [1, 7, 8, 9, 16, 61] {
            for pos in 0..len {
                for b in [0u8, 0x1f, b'"', b'\\'] {
                    let mut text = clean[..len].to_vec();
                    text[pos] = b;
                    assert!(any_needs_escape(&text), "{b:#04x} at {pos} of {len}");
                }
            }
        }
    }
}
