//! What the tokenizer's test files share: a seeded generator and fresh,
//! printed seeds.

#![allow(dead_code)] // each test file uses its own part

/// xorshift64* — deterministic, dependency-free.
pub struct Rng(pub u64);

impl Rng {
    /// A generator for any seed (xorshift must not start at 0).
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15 | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
    /// A character in `lo..=hi` (surrogates skipped).
    pub fn char_in(&mut self, lo: u32, hi: u32) -> char {
        loop {
            if let Some(c) = char::from_u32(lo + self.below((hi - lo + 1) as usize) as u32) {
                return c;
            }
        }
    }
}

/// The seed from `var`, or a fresh one; printed either way.
pub fn fresh_seed(var: &str) -> u64 {
    let seed = std::env::var(var)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("seed {seed} ({var}={seed} repeats it)");
    seed
}

/// Iterations scaled for the build: full in release, a tenth in debug builds,
/// times `PI_SOAK` (e.g. `PI_SOAK=20` for a long soak run).
pub fn iterations(release: usize) -> usize {
    let soak: usize = std::env::var("PI_SOAK")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let base = if cfg!(debug_assertions) {
        release / 10
    } else {
        release
    };
    base * soak
}
