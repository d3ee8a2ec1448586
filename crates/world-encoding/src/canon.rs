//! `canon.Source`: text canonicalisation for transition sources and journal payloads
//! (store-format.md §7.3).

/// Why a text cannot be canonicalised.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CanonError {
    /// The input starts with a UTF-8 byte-order mark (EF BB BF).
    #[error("source starts with a UTF-8 byte-order mark")]
    Bom,
    /// The input is not valid UTF-8; `offset` is the byte offset of the first bad sequence.
    #[error("source is not valid UTF-8 (first bad byte at offset {offset})")]
    InvalidUtf8 {
        /// Byte offset of the first invalid sequence.
        offset: usize,
    },
    /// The input holds a NUL byte at `offset`.
    #[error("source contains a NUL byte at offset {offset}")]
    Nul {
        /// Byte offset of the NUL.
        offset: usize,
    },
}

/// Canonicalise `input`: refuse a BOM, invalid UTF-8 and NUL; split lines on CRLF, CR and LF;
/// strip trailing ASCII spaces and tabs from each line; drop trailing empty lines; join with LF
/// and end with exactly one LF. Empty or all-blank input gives zero bytes. Idempotent.
pub fn source(input: &[u8]) -> Result<Vec<u8>, CanonError> {
    if input.starts_with(&[0xEF, 0xBB, 0xBF]) {
        return Err(CanonError::Bom);
    }
    let text = std::str::from_utf8(input).map_err(|e| CanonError::InvalidUtf8 {
        offset: e.valid_up_to(),
    })?;
    if let Some(offset) = input.iter().position(|&b| b == 0) {
        return Err(CanonError::Nul { offset });
    }
    let mut lines: Vec<&str> = Vec::new();
    let mut rest = text;
    loop {
        match rest.find(['\r', '\n']) {
            None => {
                lines.push(rest);
                break;
            }
            Some(i) => {
                lines.push(&rest[..i]);
                let skip = if rest[i..].starts_with("\r\n") { 2 } else { 1 };
                rest = &rest[i + skip..];
            }
        }
    }
    let mut stripped: Vec<&str> = lines
        .into_iter()
        .map(|l| l.trim_end_matches([' ', '\t']))
        .collect();
    while stripped.last().is_some_and(|l| l.is_empty()) {
        stripped.pop();
    }
    if stripped.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = stripped.join("\n").into_bytes();
    out.push(b'\n');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn spec_vectors() {
        let cases: &[(&str, &str)] = &[
            ("line1  \r\nline2\t\n\n\n", "line1\nline2\n"),
            ("a\r\nb\rc\nd", "a\nb\nc\nd\n"),
            ("code \t \t\n", "code\n"),
            ("a\n   \n\t\n", "a\n"),
            ("solo", "solo\n"),
            ("\n\n\n", ""),
            ("   \n\t\n  ", ""),
            ("\n\na\n", "\n\na\n"),
            ("x  \r\n", "x\n"),
            (
                "  indented\tcode  \nrésumé — café ☕\n",
                "  indented\tcode\nrésumé — café ☕\n",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(
                source(input.as_bytes()).unwrap(),
                want.as_bytes(),
                "input {input:?}"
            );
        }
    }

    #[test]
    fn spec_rejections() {
        assert!(matches!(
            source(b"a\x80b"),
            Err(CanonError::InvalidUtf8 { offset: 1 })
        ));
        assert_eq!(source(b"\xEF\xBB\xBFx"), Err(CanonError::Bom));
        assert_eq!(
            source(b"valid\x00text\n"),
            Err(CanonError::Nul { offset: 5 })
        );
    }

    proptest! {
        #[test]
        fn idempotent_and_deterministic(s in "[ a-z\t\r\n\u{e9}]{0,64}") {
            let once = source(s.as_bytes()).unwrap();
            prop_assert_eq!(source(s.as_bytes()).unwrap(), once.clone());
            prop_assert_eq!(source(&once).unwrap(), once);
        }
    }
}
