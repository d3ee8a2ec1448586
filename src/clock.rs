//! The one clock every command reads (issue 17 §4): the system clock, or a fixed instant.
//!
//! The library never reads the wall clock or a test variable itself for the logical time of a
//! command: the binary builds a [`Clock`] once ([`Clock::from_env`], which honours the
//! test-only hook `WORLD_TEST_NOW` in test builds only — [`crate::testhook`], spec README
//! "Clock") and passes it down. A fixed clock makes
//! every read return the same instant, so tests and replays are deterministic.

/// A source of "now".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Clock {
    /// The system clock.
    #[default]
    System,
    /// A fixed instant, Unix seconds (`WORLD_TEST_NOW`, or a test's choice).
    Fixed(i64),
}

impl Clock {
    /// `Fixed(n)` when the test hook `WORLD_TEST_NOW` holds an integer `n` (test builds only,
    /// [`crate::testhook`]), else `System`. Called by the binary's entry points (`cli`,
    /// `serve`), never inside the library's workflows.
    pub fn from_env() -> Clock {
        crate::testhook::var("WORLD_TEST_NOW")
            .and_then(|v| v.parse().ok())
            .map_or(Clock::System, Clock::Fixed)
    }

    /// Now in Unix seconds (0 if the system clock is before 1970).
    pub fn now_unix(self) -> i64 {
        match self {
            Clock::Fixed(s) => s,
            Clock::System => std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0),
        }
    }

    /// Now in Unix milliseconds: `seconds × 1000` for a fixed clock (negative clamps to 0),
    /// the wall clock's milliseconds otherwise. The limits ledger and missions count in ms.
    pub fn now_ms(self) -> u128 {
        match self {
            Clock::Fixed(s) => (s.max(0) as u128) * 1000,
            Clock::System => std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis())
                .unwrap_or(0),
        }
    }

    /// `true` for a fixed clock (the ledger then checks `now` as given instead of taking
    /// `max(now, last recorded time)`, limits.md DEC-LIM-18).
    pub fn is_fixed(self) -> bool {
        matches!(self, Clock::Fixed(_))
    }
}

#[cfg(test)]
mod tests {
    use super::Clock;

    #[test]
    fn a_fixed_clock_is_stable_and_counts_ms_from_seconds() {
        let c = Clock::Fixed(1_700_000_000);
        assert_eq!(c.now_unix(), 1_700_000_000);
        assert_eq!(c.now_ms(), 1_700_000_000_000);
        assert!(c.is_fixed());
        assert_eq!(Clock::Fixed(-5).now_ms(), 0);
    }

    #[test]
    fn the_system_clock_is_after_2020() {
        assert!(Clock::System.now_unix() > 1_577_836_800);
        assert!(Clock::System.now_ms() > 1_577_836_800_000);
        assert!(!Clock::System.is_fixed());
    }
}
