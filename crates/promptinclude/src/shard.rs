//! Which shard of a sharded run takes a root.
//!
//! A batch split over N processes (`--shard K/N`, a Kubernetes Indexed Job,
//! a CI matrix) gives each root to exactly one shard, decided by the root
//! alone, as given (its bytes, not its absolute path):
//!
//! 1. `key` = the first 8 bytes of SHA-256 of the root's bytes, read as a
//!    big-endian unsigned 64-bit integer;
//! 2. shard = `jump_consistent_hash(key, N)` (Lamping and Veach, 2014), a
//!    number from 0 to N-1.
//!
//! So adding or removing roots never moves another root, and going from N
//! to N+1 shards moves only about 1/(N+1) of the roots. The same root given
//! twice lands in the same shard, where the two keep their relative order.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use sha2::{Digest, Sha256};

/// Most shards a run can be split into.
pub(crate) const MAX_SHARDS: u32 = 1 << 20;

/// Shard `index` of `count` (0 ≤ index < count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This shard's number, from 0.
    pub index: u32,
    /// How many shards the run is split into.
    pub count: u32,
}

/// Why a shard's number and count make no shard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShardError {
    /// The count is 0 or past `MAX_SHARDS`.
    Count(u64),
    /// The number is not below the count.
    NoSuchShard {
        /// The shard's number.
        index: u64,
        /// The count of shards.
        count: u64,
    },
    /// The text (given) is not `K/N`.
    NotKN(String),
    /// The text (given) is `K/N` with something other than whole numbers.
    NotWhole(String),
}

impl std::fmt::Display for ShardError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShardError::Count(count) => {
                write!(f, "the shard count must be 1 to {MAX_SHARDS}, not {count}")
            }
            ShardError::NoSuchShard { index, count } => write!(
                f,
                "shard {index} of {count} does not exist (shards are numbered 0 to {})",
                count - 1
            ),
            ShardError::NotKN(text) => write!(f, "{text:?} is not K/N (for example 0/4)"),
            ShardError::NotWhole(text) => {
                write!(f, "{text:?} is not K/N with whole numbers K and N")
            }
        }
    }
}

impl std::error::Error for ShardError {}

impl Shard {
    /// A shard, or why `index`/`count` make none.
    pub fn new(index: u64, count: u64) -> Result<Shard, ShardError> {
        if count == 0 || count > u64::from(MAX_SHARDS) {
            return Err(ShardError::Count(count));
        }
        if index >= count {
            return Err(ShardError::NoSuchShard { index, count });
        }
        // Both are at most MAX_SHARDS, so they fit.
        Ok(Shard {
            index: index as u32,
            count: count as u32,
        })
    }

    /// Parses `K/N` (for example `0/4`, the first of four shards).
    pub fn parse(text: &str) -> Result<Shard, ShardError> {
        let (k, n) = text
            .split_once('/')
            .ok_or_else(|| ShardError::NotKN(text.to_string()))?;
        let number = |s: &str| {
            s.trim()
                .parse::<u64>()
                .map_err(|_| ShardError::NotWhole(text.to_string()))
        };
        Shard::new(number(k)?, number(n)?)
    }

    /// Whether this shard takes `root`.
    pub fn takes(&self, root: &Path) -> bool {
        shard_of(root.as_os_str().as_bytes(), self.count) == self.index
    }
}

/// The shard (0 to `count`-1) that takes the root whose bytes are `root`;
/// 0 when `count` is 0.
fn shard_of(root: &[u8], count: u32) -> u32 {
    let digest = Sha256::digest(root);
    let mut key = [0u8; 8];
    key.copy_from_slice(&digest[..8]);
    jump_consistent_hash(u64::from_be_bytes(key), count)
}

/// Lamping and Veach's jump consistent hash: a bucket from 0 to
/// `buckets`-1 (0 when `buckets` is 0).
fn jump_consistent_hash(mut key: u64, buckets: u32) -> u32 {
    let (mut b, mut j): (i64, i64) = (-1, 0);
    while j < i64::from(buckets) {
        b = j;
        key = key.wrapping_mul(2_862_933_555_777_941_757).wrapping_add(1);
        // (key >> 33) + 1 is at least 1 and below 2^31: the division is exact
        // enough in f64 and the quotient is finite.
        j = ((b + 1) as f64 * ((1u64 << 31) as f64 / ((key >> 33) + 1) as f64)) as i64;
    }
    b.max(0) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_refuses() {
        assert_eq!(Shard::parse("0/4"), Ok(Shard { index: 0, count: 4 }));
        assert_eq!(Shard::parse("6/7"), Ok(Shard { index: 6, count: 7 }));
        for bad in ["4/4", "1/0", "x/2", "1", "-1/2", "0/2000000"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_root_in_exactly_one_shard_and_stable() {
        // Pinned values: the assignment is part of the documented contract.
        assert_eq!(shard_of(b"repo-a", 7), shard_of(b"repo-a", 7));
        assert_eq!(
            (0..4)
                .map(|i| shard_of(format!("r{i}").as_bytes(), 4))
                .collect::<Vec<_>>(),
            PINNED
        );
        let roots: Vec<String> = (0..5000).map(|i| format!("/srv/repos/{i}")).collect();
        let mut sizes = [0usize; 7];
        for root in &roots {
            let s = shard_of(root.as_bytes(), 7);
            sizes[s as usize] += 1;
            let takers = (0..7)
                .filter(|&k| Shard::new(k, 7).unwrap().takes(Path::new(root)))
                .count();
            assert_eq!(takers, 1);
        }
        // Balanced within 20% of 5000/7.
        assert!(sizes.iter().all(|&n| (571..=857).contains(&n)), "{sizes:?}");
        // Going from 7 to 8 shards moves about 1/8 of the roots, all to the new one.
        let moved: Vec<&String> = roots
            .iter()
            .filter(|r| shard_of(r.as_bytes(), 7) != shard_of(r.as_bytes(), 8))
            .collect();
        assert!(moved.len() < 5000 / 8 + 150, "{}", moved.len());
        assert!(moved.iter().all(|r| shard_of(r.as_bytes(), 8) == 7));
    }

    const PINNED: [u32; 4] = [1, 1, 0, 3];
}
