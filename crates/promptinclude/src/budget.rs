//! The budget pass: the reference's sequential, alphabetical allocation of
//! the per-file and total token budgets.
//!
//! It runs over the candidates in sorted order and reads a file only when
//! the pass reaches it, so files past the point where the budget is
//! exhausted (or `max_file_count` is reached) are never read or tokenized.

use crate::config::number::ArithmeticError;
use crate::config::{Config, Key, Number};
use crate::discover::Candidate;
use crate::model::{Disposition, FileEntry, ScanResult, Status};
use crate::read::ReadOutcome;
use crate::tokenize;

/// Facts about a candidate the pass read, for reports (not part of the reference output).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadFacts {
    /// Full token count of the file's text (0 when not read or blank).
    pub tokens: i64,
    /// U+FFFD characters inserted by decoding.
    pub replaced: usize,
}

/// The budget pass's full outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allocation {
    /// The reference's result.
    pub result: ScanResult,
    /// One disposition per candidate.
    pub dispositions: Vec<Disposition>,
    /// One entry per candidate.
    pub facts: Vec<ReadFacts>,
    /// The total budget the included files use as the reference counts it:
    /// each one's path cost plus its tokens.
    pub budget_used: i64,
}

/// Token cost of listing a path: its own tokens plus 5.
pub fn path_cost(candidate: &Candidate) -> i64 {
    tokenize::count(&candidate.token_text()) as i64 + 5
}

/// The point where the reference raises for a value: Python's arithmetic
/// in `trim_to_tokens` fails (`int()` of an infinite or NaN float, or a
/// true division out of float range), so the reference returns nothing for
/// the root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Raised {
    /// The rule file being cropped.
    pub path: String,
    /// The limit it was being cropped to, as Python prints it.
    pub limit: String,
    /// The key that limit comes from.
    pub key: Key,
    /// The exception.
    pub error: ArithmeticError,
}

impl std::fmt::Display for Raised {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the reference raises {} cropping this rule file to {} tokens",
            self.error, self.limit
        )
    }
}

impl std::error::Error for Raised {}

/// The reference's `trim_to_tokens(raw, max, "start")` (with
/// `full_count == count(raw)`) and the tokens of what it keeps.
fn crop(
    raw: &str,
    full_count: i64,
    max: &Number,
    key: Key,
    path: &str,
) -> Result<(String, i64, Status), Raised> {
    if max.is_ge_int(full_count) {
        return Ok((raw.to_string(), full_count, Status::Cropped));
    }
    let n_chars = raw.chars().count();
    let keep = max
        .trim_keep(n_chars, full_count as usize)
        .map_err(|error| Raised {
            path: path.to_string(),
            limit: max.to_string(),
            key,
            error,
        })?;
    let text = python_prefix(raw, n_chars, keep);
    let tokens = tokenize::count(&text) as i64;
    Ok((text, tokens, Status::Cropped))
}

/// `text[:keep] + "..."` with Python's slice rules (a negative `keep`
/// counts from the end; past either end it clamps).
fn python_prefix(text: &str, n_chars: usize, keep: i64) -> String {
    let keep = if keep < 0 {
        (n_chars as i64 + keep).max(0) as usize
    } else {
        (keep as u64).min(n_chars as u64) as usize
    };
    let end = text.char_indices().nth(keep).map_or(text.len(), |(i, _)| i);
    let mut out = String::with_capacity(end + 3);
    out.push_str(&text[..end]);
    out.push_str("...");
    out
}

/// The token counts the budget pass needs, which a caller that has seen
/// the same texts before may already know ([`crate::index`]); [`Fresh`]
/// counts every one.
pub(crate) trait TokenCounts {
    /// `count(text)` for the text read from `candidate`.
    fn text(&mut self, candidate: &Candidate, text: &str) -> usize;
    /// [`path_cost`] of `candidate`.
    fn path(&mut self, candidate: &Candidate) -> i64;
}

/// Counts every text as it comes.
pub(crate) struct Fresh;

impl TokenCounts for Fresh {
    fn text(&mut self, _: &Candidate, text: &str) -> usize {
        tokenize::count(text)
    }
    fn path(&mut self, candidate: &Candidate) -> i64 {
        path_cost(candidate)
    }
}

/// Runs the reference's budget pass over `candidates` (already sorted),
/// calling `read` for each candidate the pass reaches, in order.
pub fn allocate(
    root: String,
    candidates: &[Candidate],
    config: &Config,
    read: impl FnMut(&Candidate) -> ReadOutcome,
) -> Result<Allocation, Raised> {
    allocate_with(root, candidates, config, read, &mut Fresh)
}

/// [`allocate`], taking the token counts of texts and paths from `counts`.
pub(crate) fn allocate_with(
    root: String,
    candidates: &[Candidate],
    config: &Config,
    mut read: impl FnMut(&Candidate) -> ReadOutcome,
    counts: &mut dyn TokenCounts,
) -> Result<Allocation, Raised> {
    let total = &config.max_total_tokens;
    // `len(files) >= max_file_count` over non-negative lengths.
    let file_limit = config.max_file_count.integer_threshold();
    let mut files: Vec<FileEntry> = Vec::new();
    let mut dispositions = Vec::with_capacity(candidates.len());
    let mut facts = vec![ReadFacts::default(); candidates.len()];
    let (mut used, mut skipped, mut exhausted) = (0i64, 0i64, false);
    for (i, candidate) in candidates.iter().enumerate() {
        if exhausted || file_limit.is_some_and(|limit| files.len() as u64 >= limit) {
            skipped += 1;
            dispositions.push(Disposition::NotReached);
            continue;
        }
        let decoded = match read(candidate) {
            ReadOutcome::Text(decoded) => decoded,
            ReadOutcome::Blank => {
                dispositions.push(Disposition::Blank);
                continue;
            }
            ReadOutcome::Unreadable(reason) => {
                skipped += 1;
                dispositions.push(Disposition::Unreadable(reason));
                continue;
            }
            // Counted as the reference counts a file it cannot read.
            ReadOutcome::Withheld(why) => {
                skipped += 1;
                dispositions.push(Disposition::Withheld(why));
                continue;
            }
        };
        let raw = decoded.text;
        let n = counts.text(candidate, &raw) as i64;
        facts[i] = ReadFacts {
            tokens: n,
            replaced: decoded.replaced,
        };
        let p = counts.path(candidate);
        let path = candidate.display();
        // `used + path_tokens > max_total_tokens`
        if total.is_lt_int(used + p) {
            skipped += 1;
            exhausted = true;
            dispositions.push(Disposition::PathOverBudget { tokens: n });
            continue;
        }
        // `capped = min(file_tokens, max_file_tokens)`: Python's min keeps
        // the first argument unless the second is smaller.
        let capped = if config.max_file_tokens.is_lt_int(n) {
            config.max_file_tokens.clone()
        } else {
            Number::int(n)
        };
        dispositions.push(Disposition::Included(files.len()));
        let (content, token_count, status) = if capped.add_int(used + p).gt(total) {
            exhausted = true;
            let remaining = total.add_int(-used).add_int(-p);
            if remaining.gt(&Number::int(50)) {
                crop(&raw, n, &remaining, Key::MaxTotalTokens, &path)?
            } else {
                (String::new(), 0, Status::Skipped)
            }
        } else if capped.is_lt_int(n) {
            crop(&raw, n, &config.max_file_tokens, Key::MaxFileTokens, &path)?
        } else {
            (raw, n, Status::Ok)
        };
        if status != Status::Skipped {
            used += p + token_count;
        }
        files.push(FileEntry {
            path,
            content,
            token_count,
            status,
        });
    }
    // Reconciliation: blank files end up counted here.
    let unaccounted = candidates.len() as i64 - files.len() as i64 - skipped;
    if unaccounted > 0 {
        skipped += unaccounted;
    }
    Ok(Allocation {
        result: ScanResult {
            root,
            files,
            skipped_count: skipped,
        },
        dispositions,
        facts,
        budget_used: used,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_slices() {
        assert_eq!(python_prefix("abcdef", 6, 2), "ab...");
        assert_eq!(python_prefix("abcdef", 6, -2), "abcd...");
        assert_eq!(python_prefix("abcdef", 6, -9), "...");
        assert_eq!(python_prefix("abcdef", 6, 99), "abcdef...");
        assert_eq!(python_prefix("éé", 2, 1), "é...");
    }

    #[test]
    fn crop_raises_where_python_does() {
        let inf = Number::Float(f64::NEG_INFINITY);
        let err = crop("some text here", 3, &inf, Key::MaxFileTokens, "/r/a.md").unwrap_err();
        assert_eq!(err.error, ArithmeticError::Overflow);
        let (text, _, _) = crop(
            "abcdefghij",
            5,
            &Number::int(-1),
            Key::MaxFileTokens,
            "/r/a.md",
        )
        .unwrap();
        // int(10 * (-1 / 5) * 0.8) == -1
        assert_eq!(text, "abcdefghi...");
    }
}
