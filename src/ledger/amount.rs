//! Canonical unsigned decimal amounts (limits.md §1 number grammar, P1).
//!
//! Every amount, bound, usage, clock value and revision the ledger exposes is a decimal string
//! matching `^(0|[1-9][0-9]*)$` whose value fits in a `u128`. Arithmetic is checked: an overflow
//! is a typed rejection (`overflows_amount` on input, `overflows_usage` on a sum), never a wrap.

use std::fmt;

/// Why a text is not a canonical amount.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AmountError {
    /// Not `0` or a digit string without a leading zero (signs, fractions, exponents, spaces,
    /// an empty string or leading zeros). Result code `amount_invalid`.
    #[error("{0:?} is not a canonical unsigned decimal (expected ^(0|[1-9][0-9]*)$)")]
    Invalid(String),
    /// Canonical digits whose value is above 2^128 − 1. Result code `overflows_amount`.
    #[error("{0:?} is above 2^128 - 1")]
    Overflow(String),
}

/// A canonical unsigned decimal amount held as a `u128` (limits.md §1).
///
/// The unit is whatever the ledger config's `unit` says (cost units, milliseconds or a count);
/// the type does not know it. `Display` and `Serialize` give the canonical decimal string.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Amount(pub u128);

impl Amount {
    /// Zero.
    pub const ZERO: Amount = Amount(0);

    /// Parse a canonical decimal string.
    ///
    /// # Errors
    /// [`AmountError::Invalid`] for anything outside `^(0|[1-9][0-9]*)$` (`-1`, `01`, `1.5`,
    /// `1e3`, `""`, `+1`, ` 1`); [`AmountError::Overflow`] for canonical digits above
    /// 2^128 − 1.
    pub fn parse(text: &str) -> Result<Amount, AmountError> {
        let bytes = text.as_bytes();
        let canonical = match bytes {
            [] => false,
            [b'0'] => true,
            [first, rest @ ..] => {
                (b'1'..=b'9').contains(first) && rest.iter().all(|b| b.is_ascii_digit())
            }
        };
        if !canonical {
            return Err(AmountError::Invalid(text.to_string()));
        }
        let mut value: u128 = 0;
        for b in bytes {
            value = value
                .checked_mul(10)
                .and_then(|v| v.checked_add(u128::from(b - b'0')))
                .ok_or_else(|| AmountError::Overflow(text.to_string()))?;
        }
        Ok(Amount(value))
    }

    /// The value.
    pub fn get(self) -> u128 {
        self.0
    }

    /// `self + other`, `None` on overflow.
    pub fn checked_add(self, other: Amount) -> Option<Amount> {
        self.0.checked_add(other.0).map(Amount)
    }

    /// `self - other`, `None` when `other > self`.
    pub fn checked_sub(self, other: Amount) -> Option<Amount> {
        self.0.checked_sub(other.0).map(Amount)
    }

    /// `self - other`, floored at zero.
    pub fn saturating_sub(self, other: Amount) -> Amount {
        Amount(self.0.saturating_sub(other.0))
    }
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl From<u128> for Amount {
    fn from(v: u128) -> Self {
        Amount(v)
    }
}

impl serde::Serialize for Amount {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Amount {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Amount::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_decimals_parse_to_their_value() {
        assert_eq!(Amount::parse("0"), Ok(Amount(0)));
        assert_eq!(Amount::parse("100"), Ok(Amount(100)));
        assert_eq!(
            Amount::parse(&u128::MAX.to_string()),
            Ok(Amount(u128::MAX)),
            "2^128 - 1 is the largest amount"
        );
    }

    #[test]
    fn non_canonical_texts_are_invalid() {
        for bad in [
            "-1", "01", "00", "1.5", "1e3", "", "+1", " 1", "1 ", "0x10", "١",
        ] {
            assert_eq!(
                Amount::parse(bad),
                Err(AmountError::Invalid(bad.to_string())),
                "{bad:?} must be refused"
            );
        }
    }

    #[test]
    fn two_to_the_128_overflows() {
        let text = "340282366920938463463374607431768211456";
        assert_eq!(
            Amount::parse(text),
            Err(AmountError::Overflow(text.to_string()))
        );
        assert!(matches!(
            Amount::parse("9999999999999999999999999999999999999999999"),
            Err(AmountError::Overflow(_))
        ));
    }

    #[test]
    fn display_round_trips_and_arithmetic_is_checked() {
        assert_eq!(Amount(1234).to_string(), "1234");
        assert_eq!(Amount(u128::MAX).checked_add(Amount(1)), None);
        assert_eq!(Amount(1).checked_sub(Amount(2)), None);
        assert_eq!(Amount(1).saturating_sub(Amount(2)), Amount(0));
        assert_eq!(serde_json::to_string(&Amount(7)).ok(), Some("\"7\"".into()));
        assert!(serde_json::from_str::<Amount>("\"07\"").is_err());
        assert!(serde_json::from_str::<Amount>("7").is_err());
    }
}
