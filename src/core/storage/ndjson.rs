//! What an uploader may receive: strict NDJSON, every line valid UTF-8 JSON of one document (an
//! object). The writer's own lines are that by construction; a file found at open (or a
//! pre-consent chunk) may hold anything a crash, a bad disk or another program left: invalid
//! UTF-8, binary garbage, NUL runs, empty lines. Such lines are dropped and counted
//! (`invalidLinesDropped`), on the writer thread.

use serde::de::IgnoredAny;

use super::segment::lines;

/// One line (without its `\n`) is one JSON object.
pub(crate) fn is_document(line: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(line) else { return false };
    text.trim_start().starts_with('{') && serde_json::from_str::<IgnoredAny>(text).is_ok()
}

/// The whole `\n`-terminated lines of `data` that are documents, and how many were not.
pub(crate) fn keep_documents(data: &[u8]) -> (Vec<u8>, u64) {
    let mut out = Vec::with_capacity(data.len());
    let mut dropped = 0;
    for line in lines(data) {
        if line.last() == Some(&b'\n') && is_document(&line[..line.len() - 1]) {
            out.extend_from_slice(line);
        } else {
            dropped += 1;
        }
    }
    (out, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_json_objects_are_documents() {
        for good in [&b"{}"[..], b"{\"type\":\"action\",\"a\":[1,2]}", b"  {\"x\":\"\xc3\xa9\"}  "] {
            assert!(is_document(good), "{}", String::from_utf8_lossy(good));
        }
        for bad in [
            &b""[..],
            b"   ",
            b"\0\0\0\0",
            b"[1,2]",
            b"\"text\"",
            b"42",
            b"{\"a\":1",
            b"{\"a\":1}{\"b\":2}",
            b"{\"a\":\"\xff\"}",
            b"not json",
        ] {
            assert!(!is_document(bad), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn keeps_the_documents_in_their_order() {
        let data = b"{\"a\":1}\n\n\0\0\0\n{\"b\":2}\ngarbage\xff\n{\"c\":3}\n";
        let (kept, dropped) = keep_documents(data);
        assert_eq!(kept, b"{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n");
        assert_eq!(dropped, 3);
    }
}
