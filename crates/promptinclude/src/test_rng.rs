//! Random numbers for the crate's randomized tests: a fresh seed each run,
//! printed, so that a failure can be replayed (`PROMPTINCLUDE_TEST_SEED`).

/// `next(n)`: a number below `n` (> 0), from xorshift64 over a fresh seed
/// (or `PROMPTINCLUDE_TEST_SEED`'s), which is printed first.
pub(crate) fn seeded() -> impl FnMut(usize) -> usize {
    let seed = std::env::var("PROMPTINCLUDE_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        })
        | 1;
    eprintln!("seed {seed} (PROMPTINCLUDE_TEST_SEED replays it)");
    let mut state = seed;
    move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    }
}
