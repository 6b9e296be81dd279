//! Numbers with Python's semantics, as the host hands them to the scanner.
//!
//! The host loads `max_depth`, `max_file_tokens`, `max_file_count` and
//! `max_total_tokens` with `json.loads` or PyYAML and passes them on as they
//! are, so the reference's budget arithmetic runs on whatever came out: an
//! `int` of any size, a `float` (including `nan` and `±inf`), or a `bool`
//! (which Python treats as the integer 0 or 1). [`Number`] keeps that type
//! and implements exactly the operations the reference performs on it:
//! comparisons with integers and with each other (exact, as Python compares
//! `int` with `float`), adding and subtracting small integers, and the true
//! division inside `trim_to_tokens`.
//!
//! Integers beyond `i128` are kept as their sign, an `f64` approximation of
//! their magnitude and their digits (for display). Every comparison the
//! reference makes between such an integer and anything the scan produces
//! (token counts, path costs, depths) is decided by the sign alone; the only
//! place the magnitude matters is the `OverflowError` Python raises when the
//! true division leaves the range of a float, which is decided on the
//! approximation (exact unless the value is within one part in 2^53 of that
//! boundary).

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

/// A Python `int`, `float` or `bool` used as a configuration number.
#[derive(Clone, Debug)]
pub enum Number {
    /// A `bool`: arithmetic sees 0 or 1.
    Bool(bool),
    /// An `int` that fits in `i128`.
    Int(i128),
    /// An `int` beyond `i128`.
    Huge(HugeInt),
    /// A `float`.
    Float(f64),
}

/// An integer too large for `i128`.
#[derive(Clone, Debug)]
pub struct HugeInt {
    negative: bool,
    /// `abs(value)` rounded to `f64` (`inf` beyond its range).
    magnitude: f64,
    /// The value in decimal, as Python prints it.
    digits: Box<str>,
}

/// A Python exception the reference's arithmetic raises for a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithmeticError {
    /// `OverflowError`: a float result out of range, or `int(inf)`.
    Overflow,
    /// `ValueError`: `int(nan)`.
    NotANumber,
}

impl fmt::Display for ArithmeticError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ArithmeticError::Overflow => "OverflowError (a float result out of range)",
            ArithmeticError::NotANumber => "ValueError (cannot convert float NaN to integer)",
        })
    }
}

impl Number {
    /// Parses Python's decimal integer text (an optional sign and digits).
    /// Returns `None` if `text` is not of that form.
    pub fn parse_decimal_int(text: &str) -> Option<Number> {
        let (negative, digits) = match text.as_bytes().first()? {
            b'-' => (true, &text[1..]),
            b'+' => (false, &text[1..]),
            _ => (false, text),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(Number::from_digits(negative, digits, 10))
    }

    /// The integer `±digits` in `radix` (2, 8, 10 or 16; digits already checked).
    pub fn from_digits(negative: bool, digits: &str, radix: u32) -> Number {
        let mut value: Option<i128> = Some(0);
        let mut magnitude = 0f64;
        for c in digits.chars() {
            let d = c.to_digit(radix).unwrap_or(0);
            value = value
                .and_then(|v| v.checked_mul(i128::from(radix)))
                .and_then(|v| v.checked_add(i128::from(d)));
            magnitude = magnitude * f64::from(radix) + f64::from(d);
        }
        match value {
            Some(v) => Number::Int(if negative { -v } else { v }),
            None => {
                let decimal = if radix == 10 {
                    digits.trim_start_matches('0').to_string()
                } else {
                    to_decimal(digits, radix)
                };
                Number::Huge(HugeInt {
                    negative,
                    magnitude,
                    digits: format!("{}{decimal}", if negative { "-" } else { "" }).into(),
                })
            }
        }
    }

    /// A small integer.
    pub fn int(value: i64) -> Number {
        Number::Int(i128::from(value))
    }

    /// Whether Python's `bool(value)` is false (0, 0.0, -0.0, False).
    pub(crate) fn is_falsy(&self) -> bool {
        match self {
            Number::Bool(b) => !b,
            Number::Int(v) => *v == 0,
            Number::Huge(_) => false,
            Number::Float(f) => *f == 0.0,
        }
    }

    /// Python's `self < other` etc.: `None` when a NaN is involved (every
    /// comparison is then false).
    fn partial_cmp_num(&self, other: &Number) -> Option<Ordering> {
        match (self.as_exact(), other.as_exact()) {
            (Exact::Int(a), Exact::Int(b)) => Some(a.cmp(&b)),
            (Exact::Int(a), Exact::Float(b)) => cmp_int_float(a, b),
            (Exact::Float(a), Exact::Int(b)) => cmp_int_float(b, a).map(Ordering::reverse),
            (Exact::Float(a), Exact::Float(b)) => a.partial_cmp(&b),
            (Exact::Huge(a), Exact::Huge(b)) => Some(a.signed().total_cmp(&b.signed())),
            (Exact::Huge(a), Exact::Int(_)) => Some(a.sign_order()),
            (Exact::Int(_), Exact::Huge(b)) => Some(b.sign_order().reverse()),
            (Exact::Huge(a), Exact::Float(b)) => cmp_huge_float(a, b),
            (Exact::Float(a), Exact::Huge(b)) => cmp_huge_float(b, a).map(Ordering::reverse),
        }
    }

    /// Python's `int_value > self`.
    pub fn is_lt_int(&self, int_value: i64) -> bool {
        self.partial_cmp_num(&Number::int(int_value)) == Some(Ordering::Less)
    }

    /// Python's `int_value >= self`.
    pub fn is_le_int(&self, int_value: i64) -> bool {
        matches!(
            self.partial_cmp_num(&Number::int(int_value)),
            Some(Ordering::Less | Ordering::Equal)
        )
    }

    /// Python's `self >= int_value`.
    pub fn is_ge_int(&self, int_value: i64) -> bool {
        matches!(
            self.partial_cmp_num(&Number::int(int_value)),
            Some(Ordering::Greater | Ordering::Equal)
        )
    }

    /// Python's `self > other`.
    pub fn gt(&self, other: &Number) -> bool {
        self.partial_cmp_num(other) == Some(Ordering::Greater)
    }

    /// Python's `self + int_value` (a `bool` becomes an `int`).
    pub fn add_int(&self, int_value: i64) -> Number {
        let n = i128::from(int_value);
        match self.as_exact() {
            Exact::Int(v) => match v.checked_add(n) {
                Some(sum) => Number::Int(sum),
                // Only reachable from i128's edges: the result is a huge int.
                None => Number::Huge(HugeInt::approx(v as f64 + n as f64)),
            },
            // Python converts the int to float first; exact for our small ints.
            Exact::Float(f) => Number::Float(f + int_value as f64),
            // A small change to a value beyond i128 keeps its sign and (to f64
            // precision) its magnitude.
            Exact::Huge(h) => Number::Huge(h.clone()),
        }
    }

    /// The smallest non-negative integer `d` with `d >= self` in Python,
    /// or `None` when there is none (NaN, `+inf`, or beyond `u64`). A limit
    /// test `count >= self` over non-negative integers is `count >= d`.
    pub fn integer_threshold(&self) -> Option<u64> {
        match self.as_exact() {
            Exact::Int(v) if v <= 0 => Some(0),
            Exact::Int(v) => u64::try_from(v).ok(),
            Exact::Huge(h) if h.negative => Some(0),
            Exact::Huge(_) => None,
            Exact::Float(f) if f.is_nan() => None,
            Exact::Float(f) if f <= 0.0 => Some(0),
            Exact::Float(f) if f < 1.8e19 => Some(f.ceil() as u64),
            Exact::Float(_) => None,
        }
    }

    /// `int(n_chars * (self / n_tokens) * 0.8)`, the number of characters
    /// `trim_to_tokens` keeps, for `n_tokens >= 1`; may be negative (Python's
    /// slice then counts from the end). Saturates at the `i64` range, which
    /// leaves every slice of a text the same.
    pub fn trim_keep(&self, n_chars: usize, n_tokens: usize) -> Result<i64, ArithmeticError> {
        let tokens = n_tokens as f64;
        // Python's true division: int/int is correctly rounded; for |v| <= 2^53
        // both operands are exact floats and one IEEE division is exactly that.
        // Beyond 2^53 the quotient is so large that the slice is empty either
        // way (see the module docs).
        let quotient = match self.as_exact() {
            Exact::Int(v) => v as f64 / tokens,
            Exact::Float(f) => f / tokens,
            Exact::Huge(h) => {
                let q = h.magnitude / tokens;
                if q.is_infinite() {
                    return Err(ArithmeticError::Overflow);
                }
                if h.negative {
                    -q
                } else {
                    q
                }
            }
        };
        let keep = n_chars as f64 * quotient * 0.8;
        if keep.is_nan() {
            Err(ArithmeticError::NotANumber)
        } else if keep.is_infinite() {
            Err(ArithmeticError::Overflow)
        } else {
            // `as` truncates toward zero like int() and saturates.
            Ok(keep as i64)
        }
    }

    /// Whether this is a `float`.
    pub fn is_float(&self) -> bool {
        matches!(self, Number::Float(_))
    }

    /// Whether this is a `bool`.
    pub fn is_bool(&self) -> bool {
        matches!(self, Number::Bool(_))
    }

    /// Whether the value is below zero.
    pub fn is_negative(&self) -> bool {
        self.partial_cmp_num(&Number::Int(0)) == Some(Ordering::Less)
    }

    /// The value as an `f64` (for ratios in reports).
    pub fn to_f64(&self) -> f64 {
        match self.as_exact() {
            Exact::Int(v) => v as f64,
            Exact::Float(f) => f,
            Exact::Huge(h) => h.signed(),
        }
    }

    /// The value as an `i64` when it is an integer (or `bool`) in range.
    pub fn as_i64(&self) -> Option<i64> {
        match self.as_exact() {
            Exact::Int(v) => i64::try_from(v).ok(),
            _ => None,
        }
    }

    fn as_exact(&self) -> Exact<'_> {
        match self {
            Number::Bool(b) => Exact::Int(i128::from(*b)),
            Number::Int(v) => Exact::Int(*v),
            Number::Huge(h) => Exact::Huge(h),
            Number::Float(f) => Exact::Float(*f),
        }
    }
}

enum Exact<'a> {
    Int(i128),
    Huge(&'a HugeInt),
    Float(f64),
}

impl HugeInt {
    fn approx(signed: f64) -> HugeInt {
        HugeInt {
            negative: signed < 0.0,
            magnitude: signed.abs(),
            digits: format!("{signed:.0}").into(),
        }
    }

    fn signed(&self) -> f64 {
        if self.negative {
            -self.magnitude
        } else {
            self.magnitude
        }
    }

    /// How this compares with any `i128`.
    fn sign_order(&self) -> Ordering {
        if self.negative {
            Ordering::Less
        } else {
            Ordering::Greater
        }
    }
}

/// The decimal digits of the non-negative integer `digits` in `radix`
/// (digits already checked), as Python prints it.
fn to_decimal(digits: &str, radix: u32) -> String {
    // Little-endian limbs of 10^9.
    const BASE: u64 = 1_000_000_000;
    let mut limbs: Vec<u64> = vec![0];
    for c in digits.chars() {
        let mut carry = u64::from(c.to_digit(radix).unwrap_or(0));
        for limb in &mut limbs {
            let v = *limb * u64::from(radix) + carry;
            *limb = v % BASE;
            carry = v / BASE;
        }
        if carry > 0 {
            limbs.push(carry);
        }
    }
    let mut out = limbs.last().map_or_else(String::new, u64::to_string);
    for limb in limbs.iter().rev().skip(1) {
        out.push_str(&format!("{limb:09}"));
    }
    out
}

/// Python's exact comparison of an `int` with a `float`.
fn cmp_int_float(a: i128, b: f64) -> Option<Ordering> {
    if b.is_nan() {
        return None;
    }
    if b >= 1.7e38 {
        return Some(Ordering::Less);
    }
    if b <= -1.7e38 {
        return Some(Ordering::Greater);
    }
    // |b| < 2^127: its integer part is exact in i128.
    let whole = b.trunc();
    match a.cmp(&(whole as i128)) {
        Ordering::Equal => (0.0).partial_cmp(&(b - whole)),
        other => Some(other),
    }
}

fn cmp_huge_float(a: &HugeInt, b: f64) -> Option<Ordering> {
    if b.is_nan() {
        return None;
    }
    if b.abs() < 1.7e38 {
        return Some(a.sign_order());
    }
    a.signed().partial_cmp(&b)
}

impl PartialEq for Number {
    /// Same type and same value (NaN equals itself here, so configurations
    /// can be compared and hashed).
    fn eq(&self, other: &Number) -> bool {
        match (self, other) {
            (Number::Bool(a), Number::Bool(b)) => a == b,
            (Number::Int(a), Number::Int(b)) => a == b,
            (Number::Huge(a), Number::Huge(b)) => a.digits == b.digits,
            (Number::Float(a), Number::Float(b)) => a.to_bits() == b.to_bits(),
            _ => false,
        }
    }
}

impl Eq for Number {}

impl Hash for Number {
    fn hash<H: Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        match self {
            Number::Bool(b) => b.hash(state),
            Number::Int(v) => v.hash(state),
            Number::Huge(h) => h.digits.hash(state),
            Number::Float(f) => f.to_bits().hash(state),
        }
    }
}

impl fmt::Display for Number {
    /// Python's `repr`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Number::Bool(true) => f.write_str("True"),
            Number::Bool(false) => f.write_str("False"),
            Number::Int(v) => write!(f, "{v}"),
            Number::Huge(h) => f.write_str(&h.digits),
            Number::Float(x) => f.write_str(&py_float_repr(*x)),
        }
    }
}

/// Python's `repr(float)`: shortest round-trip digits, exponent form below
/// 1e-4 and from 1e16 on, `nan`, `inf`, `-inf`.
fn py_float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    // `{:e}` gives the shortest round-trip digits as d.ddde±x.
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..16).contains(&exp) {
        let plain = format!("{x}");
        if plain.contains('.') {
            plain
        } else {
            format!("{plain}.0")
        }
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    }
}

/// JSON form (bundle manifests): a `bool`, an integer, or a finite float
/// as JSON numbers; `nan`, `inf`, `-inf` and integers beyond 64 bits as
/// strings (`"nan"`, `"123…"`), so that every value round-trips with its type.
impl serde::Serialize for Number {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Number::Bool(b) => s.serialize_bool(*b),
            Number::Int(v) => match (i64::try_from(*v), u64::try_from(*v)) {
                (Ok(v), _) => s.serialize_i64(v),
                (_, Ok(v)) => s.serialize_u64(v),
                _ => s.serialize_str(&v.to_string()),
            },
            Number::Huge(h) => s.serialize_str(&h.digits),
            Number::Float(f) if f.is_finite() => s.serialize_f64(*f),
            Number::Float(f) => s.serialize_str(&py_float_repr(*f)),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Number {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Number, D::Error> {
        use serde::de::Error;
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::Bool(b) => Ok(Number::Bool(b)),
            serde_json::Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(v), _, _) if !n.is_f64() => Ok(Number::Int(i128::from(v))),
                (_, Some(v), _) if !n.is_f64() => Ok(Number::Int(i128::from(v))),
                (_, _, Some(f)) => Ok(Number::Float(f)),
                _ => Err(D::Error::custom("not a number")),
            },
            serde_json::Value::String(s) => match s.as_str() {
                "nan" => Ok(Number::Float(f64::NAN)),
                "inf" => Ok(Number::Float(f64::INFINITY)),
                "-inf" => Ok(Number::Float(f64::NEG_INFINITY)),
                _ => Number::parse_decimal_int(&s).ok_or_else(|| D::Error::custom("not a number")),
            },
            _ => Err(D::Error::custom("expected a number")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(text: &str) -> Number {
        Number::parse_decimal_int(text).unwrap()
    }

    #[test]
    fn compares_like_python() {
        // 2**53 + 1 > 2.0**53 in Python (exact int/float comparison).
        assert!(n("9007199254740993").gt(&Number::Float(9007199254740992.0)));
        assert!(!Number::Float(f64::NAN).gt(&Number::Int(0)));
        assert!(!Number::Int(0).gt(&Number::Float(f64::NAN)));
        assert!(Number::Float(2.5).is_lt_int(3));
        assert!(!Number::Float(3.0).is_lt_int(3));
        assert!(Number::Float(3.0).is_le_int(3));
        assert!(Number::Bool(true).is_le_int(1));
        let huge = n("100000000000000000000000000000000000000000000");
        assert!(huge.gt(&Number::Int(i128::MAX)));
        assert!(n("-100000000000000000000000000000000000000000000").is_lt_int(i64::MIN));
        assert!(huge.gt(&Number::Float(1e40)));
        assert!(!huge.gt(&Number::Float(f64::INFINITY)));
    }

    #[test]
    fn thresholds() {
        assert_eq!(Number::Float(2.5).integer_threshold(), Some(3));
        assert_eq!(Number::Float(-0.0).integer_threshold(), Some(0));
        assert_eq!(Number::Float(f64::NAN).integer_threshold(), None);
        assert_eq!(Number::Float(f64::INFINITY).integer_threshold(), None);
        assert_eq!(
            Number::Float(f64::NEG_INFINITY).integer_threshold(),
            Some(0)
        );
        assert_eq!(Number::Bool(true).integer_threshold(), Some(1));
        assert_eq!(Number::Int(-5).integer_threshold(), Some(0));
        assert_eq!(
            n("-1000000000000000000000000000000000000000000").integer_threshold(),
            Some(0)
        );
    }

    #[test]
    fn trim_keep_like_python() {
        // int(10 * (5 / 20) * 0.8) == 2; int(10 * (-5 / 20) * 0.8) == -2
        assert_eq!(Number::Int(5).trim_keep(10, 20), Ok(2));
        assert_eq!(Number::Int(-5).trim_keep(10, 20), Ok(-2));
        assert_eq!(Number::Float(100.5).trim_keep(1000, 300), Ok(268));
        assert_eq!(
            Number::Float(f64::NEG_INFINITY).trim_keep(10, 3),
            Err(ArithmeticError::Overflow)
        );
        assert_eq!(
            Number::Float(-1e308).trim_keep(10, 3),
            Err(ArithmeticError::Overflow)
        );
        let big = format!("-1{}", "0".repeat(400));
        assert_eq!(n(&big).trim_keep(10, 3), Err(ArithmeticError::Overflow));
        let big = format!("-1{}", "0".repeat(300));
        assert!(n(&big).trim_keep(10, 3).unwrap() < -1_000_000);
    }

    #[test]
    fn float_repr_like_python() {
        for (x, want) in [
            (100.0, "100.0"),
            (0.1, "0.1"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (-0.0, "-0.0"),
            (1.5e300, "1.5e+300"),
            (f64::INFINITY, "inf"),
        ] {
            assert_eq!(py_float_repr(x), want);
        }
        assert_eq!(n("-0").to_string(), "0");
        assert_eq!(n("+0012").to_string(), "12");
        let big = format!("1{}", "0".repeat(50));
        assert_eq!(n(&big).to_string(), big);
        // 16**40 written in hex prints (and reloads) in decimal, as Python's int.
        let hex = Number::from_digits(false, &format!("1{}", "0".repeat(40)), 16);
        assert_eq!(
            hex.to_string(),
            "1461501637330902918203684832716283019655932542976"
        );
        let json = serde_json::to_string(&hex).unwrap();
        assert_eq!(serde_json::from_str::<Number>(&json).unwrap(), hex);
        assert_eq!(n(&format!("-{big}")).to_string(), format!("-{big}"));
    }
}
