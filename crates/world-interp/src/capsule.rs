//! The capsule's interpreter-independent layer (transitions.md §6, rules R1, R9, R10, R12).
//!
//! [`run_phase`] takes a transition source, the input JSON text and a deadline, and returns
//! the output bytes or a typed [`CapsuleError`]. It builds the Args bytes (the input as a
//! Go-json **string**), enforces `MaxInput`, calls whichever [`Interpreter`] is pinned, and
//! validates what came back. Staging, process groups and stream caps are the
//! interpreter's business ([`super::external`]).

use std::time::Instant;

use super::{Interpreter, RunError, RunLimits};

/// `MaxInput`: the largest input JSON text a transition accepts, in bytes (R1).
pub const MAX_INPUT: usize = 1024 * 1024;

/// `MaxOutput`: the largest output (after stripping one trailing LF), in bytes (R12).
pub const MAX_OUTPUT: usize = 1024 * 1024;

/// How much interpreter stderr an error quotes, in bytes.
pub const QUOTE_LIMIT: usize = 400;

/// Why a capsule call produced no output.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CapsuleError {
    /// The call itself is invalid (R1: the input is over `MaxInput`). `InvalidCallError`.
    #[error("invalid call: {field} is {size} bytes; limit is {limit}")]
    InvalidCall {
        /// The offending field (`input`).
        field: &'static str,
        /// Its size in bytes.
        size: usize,
        /// The limit in bytes.
        limit: usize,
    },
    /// The source cannot be called this way: `ARG_DECODE_MISMATCH` or no `main` (R9).
    /// `IncompatibleError`.
    #[error("transition is incompatible with the calling convention: {stderr}")]
    Incompatible {
        /// Interpreter stderr, trimmed to 400 bytes.
        stderr: String,
    },
    /// The program exited non-zero for any other reason (R10). `ExecError{Stderr}`.
    #[error("transition failed (exit status {exit_code}): {stderr}")]
    Execution {
        /// The interpreter's exit status.
        exit_code: i32,
        /// Interpreter stderr, trimmed to 400 bytes.
        stderr: String,
    },
    /// The output is unusable (R12). `OutputError`; the text is `is not a JSON object`
    /// or `exceeds the output cap`.
    #[error("transition output {0}")]
    Output(&'static str),
    /// The deadline passed; the interpreter's process group was killed. `TimeoutError`.
    #[error("transition run exceeded its deadline")]
    Timeout,
    /// stdout or stderr passed the 8 MiB stream cap. `OutputLimitError`, never a timeout.
    #[error("transition {stream} exceeded the {cap}-byte stream cap")]
    OutputLimit {
        /// `stdout` or `stderr`.
        stream: &'static str,
        /// The cap in bytes.
        cap: usize,
    },
    /// The archived interpreter's bytes changed since archiving; it was not executed.
    /// `HashMismatchError` (integrity, exit 3).
    #[error(
        "interpreter {expected} failed its integrity check: the archived bytes hash to {actual}"
    )]
    Integrity {
        /// The pinned ref.
        expected: String,
        /// What the file hashes to now.
        actual: String,
    },
    /// The interpreter could not be resolved or started (`absent_artifact`,
    /// `unsupported_platform`, `exec_failure`).
    #[error("interpreter unavailable: {0}")]
    Unavailable(String),
    /// Staging or pipe I/O failed.
    #[error("capsule I/O: {0}")]
    Io(#[source] std::io::Error),
}

impl CapsuleError {
    /// The same error with the capsule's file path (`host/capsule/main.ail`) in quoted
    /// interpreter stderr replaced by `label`, the file the source was published from
    /// (issue 14 §5); unchanged when `label` is `None`.
    pub fn naming(self, label: Option<&str>) -> Self {
        let Some(label) = label else { return self };
        let swap = |s: String| s.replace(super::external::SOURCE_PATH, label);
        match self {
            CapsuleError::Incompatible { stderr } => CapsuleError::Incompatible {
                stderr: swap(stderr),
            },
            CapsuleError::Execution { exit_code, stderr } => CapsuleError::Execution {
                exit_code,
                stderr: swap(stderr),
            },
            other => other,
        }
    }
}

impl From<RunError> for CapsuleError {
    fn from(err: RunError) -> Self {
        match err {
            RunError::Timeout => CapsuleError::Timeout,
            RunError::OutputLimit { stream, cap } => CapsuleError::OutputLimit { stream, cap },
            RunError::HashMismatch { expected, actual } => {
                CapsuleError::Integrity { expected, actual }
            }
            RunError::Unavailable(why) => CapsuleError::Unavailable(why),
            RunError::Io(e) => CapsuleError::Io(e),
        }
    }
}

/// Run one phase of a transition in the capsule and return its output JSON bytes
/// (transitions.md §6).
///
/// `source` is the `canon.Source` payload; `input_json_text` is the input JSON text (pure:
/// the invocation input; effectful: the Go-json phase input), passed to `main` as a JSON
/// string. The output is stdout with exactly one trailing `\n` removed; it is at most
/// 1 MiB and a non-null JSON object. Stream caps are 8 MiB each.
///
/// Errors, in the order checked: [`CapsuleError::InvalidCall`] (input over 1 MiB, nothing
/// run); interpreter failures ([`CapsuleError::Integrity`], [`CapsuleError::Unavailable`],
/// [`CapsuleError::Timeout`], [`CapsuleError::OutputLimit`], [`CapsuleError::Io`]);
/// non-zero exit → [`CapsuleError::Incompatible`] when stderr contains
/// `ARG_DECODE_MISMATCH` or `entrypoint 'main' not found`, else [`CapsuleError::Execution`];
/// then [`CapsuleError::Output`].
pub fn run_phase(
    interp: &dyn Interpreter,
    source: &[u8],
    input_json_text: &[u8],
    deadline: Instant,
) -> Result<Vec<u8>, CapsuleError> {
    if input_json_text.len() > MAX_INPUT {
        return Err(CapsuleError::InvalidCall {
            field: "input",
            size: input_json_text.len(),
            limit: MAX_INPUT,
        });
    }
    let args = args_bytes(input_json_text);
    let outcome = interp.run(source, &args, RunLimits::until(deadline))?;
    if outcome.exit_code != 0 {
        return Err(exit_error(outcome.exit_code, &outcome.stderr));
    }
    validate_output(outcome.stdout)
}

/// The Args bytes for an input JSON text: its Go-json encoding as a JSON string, so
/// `{"a":1}` becomes `"{\"a\":1}"` (transitions.md §6).
pub fn args_bytes(input_json_text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(input_json_text.len() + 16);
    write_go_string(&mut out, input_json_text);
    out
}

/// Map a non-zero exit to R9 (`Incompatible`) or R10 (`Execution`).
pub fn exit_error(exit_code: i32, stderr: &[u8]) -> CapsuleError {
    let incompatible = contains(stderr, b"ARG_DECODE_MISMATCH")
        || contains(stderr, b"entrypoint 'main' not found");
    let stderr = quote(stderr);
    if incompatible {
        CapsuleError::Incompatible { stderr }
    } else {
        CapsuleError::Execution { exit_code, stderr }
    }
}

/// Strip exactly one trailing `\n` and apply R12: at most 1 MiB, a non-null JSON object.
pub fn validate_output(mut stdout: Vec<u8>) -> Result<Vec<u8>, CapsuleError> {
    if stdout.last() == Some(&b'\n') {
        stdout.pop();
    }
    if stdout.len() > MAX_OUTPUT {
        return Err(CapsuleError::Output("exceeds the output cap"));
    }
    match serde_json::from_slice::<serde_json::Value>(&stdout) {
        Ok(serde_json::Value::Object(_)) => Ok(stdout),
        _ => Err(CapsuleError::Output("is not a JSON object")),
    }
}

/// Interpreter text for an error message: whitespace-trimmed, invalid UTF-8 replaced, cut
/// to at most 400 bytes on a character boundary.
pub fn quote(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim();
    let mut end = text.len().min(QUOTE_LIMIT);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(..end).unwrap_or_default().to_string()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Append `bytes` as a Go `encoding/json` string literal, quotes included (the shared
/// Go-json encoder: HTML and U+2028/9 escaping, one `\ufffd` per invalid byte).
pub fn write_go_string(out: &mut Vec<u8>, bytes: &[u8]) {
    world_encoding::gojson::write_bytes_as_str(out, bytes);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CheckOutcome, RunOutcome};
    use std::sync::Mutex;
    use std::time::Duration;

    fn enc(b: &[u8]) -> String {
        String::from_utf8(args_bytes(b)).unwrap()
    }

    #[test]
    fn args_are_the_input_as_a_go_json_string() {
        assert_eq!(enc(br#"{"a":1}"#), r#""{\"a\":1}""#);
        assert_eq!(
            enc(b"<&>\\\n\r\t\x08\x0c\x01\x1f\x7f"),
            "\"\\u003c\\u0026\\u003e\\\\\\n\\r\\t\\b\\f\\u0001\\u001f\x7f\""
        );
        assert_eq!(
            enc("\u{2028}\u{2029}é☕".as_bytes()),
            "\"\\u2028\\u2029é☕\""
        );
        // Go replaces invalid UTF-8 byte by byte: a truncated 4-byte sequence gives three.
        assert_eq!(enc(b"a\xf0\x9f\x98b"), r#""a\ufffd\ufffd\ufffdb""#);
        assert_eq!(enc(b"\xff\xc3"), r#""\ufffd\ufffd""#);
        assert_eq!(enc(b""), r#""""#);
    }

    #[test]
    fn output_rules() {
        assert_eq!(
            validate_output(b"{\"a\":1}\n".to_vec()).unwrap(),
            b"{\"a\":1}"
        );
        assert_eq!(validate_output(b"{}".to_vec()).unwrap(), b"{}");
        // Exactly one LF is stripped: a second one stays (still valid JSON whitespace).
        assert_eq!(validate_output(b"{}\n\n".to_vec()).unwrap(), b"{}\n");
        for bad in [&b"null\n"[..], b"[1]", b"\"s\"", b"", b"{", b"not json"] {
            let err = validate_output(bad.to_vec()).unwrap_err();
            assert_eq!(
                err.to_string(),
                "transition output is not a JSON object",
                "{bad:?}"
            );
        }
        let mut big = b"{\"a\":\"".to_vec();
        big.resize(MAX_OUTPUT - 2, b'x');
        big.extend_from_slice(b"\"}");
        assert_eq!(validate_output(big.clone()).unwrap().len(), MAX_OUTPUT);
        big.insert(7, b'x');
        let err = validate_output(big).unwrap_err();
        assert_eq!(err.to_string(), "transition output exceeds the output cap");
    }

    #[test]
    fn exit_mapping() {
        assert!(matches!(
            exit_error(1, b"Error: ARG_DECODE_MISMATCH: expected (), got string"),
            CapsuleError::Incompatible { .. }
        ));
        assert!(matches!(
            exit_error(1, b"Error: entrypoint 'main' not found in module"),
            CapsuleError::Incompatible { .. }
        ));
        match exit_error(
            1,
            format!("  Error: MOD010: x{}\n", "y".repeat(1000)).as_bytes(),
        ) {
            CapsuleError::Execution {
                exit_code: 1,
                stderr,
            } => {
                assert_eq!(stderr.len(), QUOTE_LIMIT);
                assert!(stderr.starts_with("Error: MOD010"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(quote("é".repeat(300).as_bytes()).len(), 400);
        assert_eq!(
            quote(
                &[b'a'; 399]
                    .iter()
                    .copied()
                    .chain("é".bytes())
                    .collect::<Vec<_>>()
            )
            .len(),
            399
        );
    }

    /// An in-process interpreter recording what it was given (not a stand-in for ailang:
    /// it exercises the trait boundary only).
    struct Canned {
        seen: Mutex<Vec<Vec<u8>>>,
        result: fn() -> Result<RunOutcome, RunError>,
    }

    impl Interpreter for Canned {
        fn interpreter_ref(&self) -> &str {
            "sha256:0000000000000000000000000000000000000000000000000000000000000000"
        }
        fn version_text(&self) -> &str {
            "canned"
        }
        fn check(&self, _: &[u8], _: RunLimits) -> Result<CheckOutcome, RunError> {
            Ok(CheckOutcome::default())
        }
        fn run(&self, _: &[u8], args: &[u8], _: RunLimits) -> Result<RunOutcome, RunError> {
            self.seen.lock().unwrap().push(args.to_vec());
            (self.result)()
        }
    }

    #[test]
    fn run_phase_checks_input_then_maps_the_outcome() {
        let deadline = Instant::now() + Duration::from_secs(5);
        let ok = Canned {
            seen: Mutex::new(Vec::new()),
            result: || {
                Ok(RunOutcome {
                    exit_code: 0,
                    stdout: b"{\"ok\":true}\n".to_vec(),
                    stderr: b"warn".to_vec(),
                })
            },
        };
        assert_eq!(
            run_phase(&ok, b"src", b"{\"a\":1}", deadline).unwrap(),
            b"{\"ok\":true}"
        );
        assert_eq!(
            ok.seen.lock().unwrap().as_slice(),
            &[br#""{\"a\":1}""#.to_vec()]
        );

        let input = vec![b' '; MAX_INPUT + 1];
        let err = run_phase(&ok, b"src", &input, deadline).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid call: input is 1048577 bytes; limit is 1048576"
        );
        assert_eq!(
            ok.seen.lock().unwrap().len(),
            1,
            "nothing runs on an invalid call"
        );

        let timeout = Canned {
            seen: Mutex::new(Vec::new()),
            result: || Err(RunError::Timeout),
        };
        assert!(matches!(
            run_phase(&timeout, b"", b"{}", deadline),
            Err(CapsuleError::Timeout)
        ));
        let tampered = Canned {
            seen: Mutex::new(Vec::new()),
            result: || {
                Err(RunError::HashMismatch {
                    expected: "a".into(),
                    actual: "b".into(),
                })
            },
        };
        assert!(matches!(
            run_phase(&tampered, b"", b"{}", deadline),
            Err(CapsuleError::Integrity { .. })
        ));
        let failed = Canned {
            seen: Mutex::new(Vec::new()),
            result: || {
                Ok(RunOutcome {
                    exit_code: 2,
                    stdout: b"{}".to_vec(),
                    stderr: b"Error: RT: boom".to_vec(),
                })
            },
        };
        match run_phase(&failed, b"", b"{}", deadline) {
            Err(CapsuleError::Execution {
                exit_code: 2,
                stderr,
            }) => assert_eq!(stderr, "Error: RT: boom"),
            other => panic!("{other:?}"),
        }
    }
}
