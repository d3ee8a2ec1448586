//! The coordinator formulas for `entryHash` and `worldRef` (store-format.md §8.2–§8.3).

use crate::encoding::gojson::Obj;
use crate::encoding::HashRef;

use super::{Header, WorldRow};

/// `entryHash = sha256(GoJSON(entryWire))`, members in the order `entryIndex`,
/// `semanticsEpoch`, `transitionFn`, `interpreter`, `prevEntryHash`, `writtenBy`,
/// `transitionRef` (refs as text), no trailing LF.
pub fn entry_hash(header: &Header, transition_ref: &str) -> HashRef {
    HashRef::of(&entry_wire(header, transition_ref))
}

/// The Go-json preimage of [`entry_hash`].
pub fn entry_wire(header: &Header, transition_ref: &str) -> Vec<u8> {
    Obj::new()
        .int("entryIndex", header.entry_index)
        .int("semanticsEpoch", header.semantics_epoch)
        .str("transitionFn", &header.transition_fn)
        .str("interpreter", &header.interpreter)
        .str("prevEntryHash", &header.prev_entry_hash)
        .str("writtenBy", &header.written_by)
        .str("transitionRef", transition_ref)
        .finish()
}

/// `ref = sha256(GoJSON({"revision":R,"stateRoot":…,"logHead":…}))`, no LF.
pub fn world_ref(revision: i64, state_root: &str, log_head: &str) -> HashRef {
    HashRef::of(
        &Obj::new()
            .int("revision", revision)
            .str("stateRoot", state_root)
            .str("logHead", log_head)
            .finish(),
    )
}

/// Build the world row whose ref follows from its other three fields.
pub fn world_row(revision: i64, state_root: &str, log_head: &str) -> WorldRow {
    WorldRow {
        reference: world_ref(revision, state_root, log_head).to_string(),
        revision,
        state_root: state_root.to_string(),
        log_head: log_head.to_string(),
    }
}

/// Is this entry written by a coordinator (or `world genesis`), so its hashes are recomputable?
pub fn is_coordinator(written_by: &str) -> bool {
    written_by.starts_with("coordinator:") || written_by == "world:genesis"
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worked example of store-format.md §14, continued to entry 1 and world 1.
    #[test]
    fn worked_example_chain() {
        let fnr = HashRef::of(b"fn").to_string();
        let interp = HashRef::of(b"interp").to_string();
        let prev = HashRef::of(b"genesis-entry").to_string();
        assert_eq!(
            fnr,
            "sha256:0f1e18bb4143dc4be22e61ea4deb0491c2bf7018c6504ad631038aed5ca4a0ca"
        );
        assert_eq!(
            interp,
            "sha256:109b10f2281b9ad3c946d2c21576779a80d371e065c540b4c1a375bea1fd5467"
        );
        assert_eq!(
            prev,
            "sha256:d7bea843de70b7d54803e1ddb16ef083923229616397de6e0b2221f41e5e0702"
        );
        let record = "sha256:ed2d235feb247d02d32baa53565786e4728b1c8eb517c1e493bc1c7375921237";
        let header = Header {
            entry_index: 1,
            semantics_epoch: 1,
            transition_fn: fnr.clone(),
            interpreter: interp.clone(),
            prev_entry_hash: prev.clone(),
            written_by: "coordinator:a2a".into(),
        };
        let wire = String::from_utf8(entry_wire(&header, record)).unwrap();
        assert_eq!(
            wire,
            format!(
                r#"{{"entryIndex":1,"semanticsEpoch":1,"transitionFn":"{fnr}","interpreter":"{interp}","prevEntryHash":"{prev}","writtenBy":"coordinator:a2a","transitionRef":"{record}"}}"#
            )
        );
        let eh = entry_hash(&header, record);
        assert_eq!(eh, HashRef::of(wire.as_bytes()));
        let output = "sha256:4062edaf750fb8074e7e83e0c9028c94e32468a8b6f1614774328ef045150f93";
        let w = world_row(1, output, &eh.to_string());
        let pre = format!(r#"{{"revision":1,"stateRoot":"{output}","logHead":"{eh}"}}"#);
        assert_eq!(w.reference, HashRef::of(pre.as_bytes()).to_string());
        // Pinned so any change to the formulas fails loudly.
        assert_eq!(eh.to_string(), PINNED_ENTRY_1);
        assert_eq!(w.reference, PINNED_WORLD_1);
    }

    const PINNED_ENTRY_1: &str =
        "sha256:016cfb71afbecaedf8ca4caea97b4d0688c7b71b0c0bc506428b1b9e57a7787a";
    const PINNED_WORLD_1: &str =
        "sha256:12bc9cf3d549d5b742cc2c3bfdc194b0cef906796ace9ccc07c642304c6b5a7e";
}
