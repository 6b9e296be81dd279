//! Turning arguments into the per-root configuration rule ([`Resolver`]), the root list and the thread pool.

use std::io::Read;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use promptinclude::artifact::merge::{parse_root_list, read_root_list};
use promptinclude::config::{env, Config, Key, LoadNotes, Setting};
use promptinclude::project::{ConfigSource, Overrides, Resolver};
use promptinclude::shard::Shard;

use super::args::{ConfigArgs, RootArgs};

/// Builds the per-root configuration rule: defaults or `--config`, replaced
/// by a root's project file (unless `--no-project-config`), then the flags.
pub fn resolver(args: &ConfigArgs) -> Result<Resolver> {
    let mut base = Config::default();
    let mut base_source = ConfigSource::Default;
    let mut base_notes = LoadNotes::default();
    if let Some(path) = &args.config {
        let (loaded, notes) =
            Config::load_file_with_notes(path, &base).map_err(promptinclude::Error::from)?;
        for unknown in &notes.unknown_keys {
            eprintln!(
                "promptinclude: warning: {}{}: unknown key `{}` ignored (known: {})",
                path.display(),
                unknown.line.map_or(String::new(), |n| format!(":{n}")),
                unknown.key,
                Key::known_names()
            );
        }
        base = loaded;
        base_source = ConfigSource::File(path.clone());
        base_notes = notes;
    } else if !args.no_env {
        // The host applies A0_SET_ values only to its default configuration.
        base_notes.env = env::apply(&mut base, env::from_process);
        for value in base_notes.env.iter().filter(|v| !v.applied) {
            eprintln!(
                "promptinclude: warning: {}={:?}: not an integer, the default {} stays",
                value.variable,
                value.raw,
                Config::default().get(value.key)
            );
        }
    }
    let mut overrides = Overrides::default();
    let flags = [
        (Key::MaxDepth, &args.max_depth),
        (Key::MaxFileTokens, &args.max_file_tokens),
        (Key::MaxFileCount, &args.max_file_count),
        (Key::MaxTotalTokens, &args.max_total_tokens),
    ];
    for (key, value) in flags {
        if let Some(n) = value {
            overrides.set(key, Setting::Number(n.clone()));
        }
    }
    if let Some(pattern) = &args.name_pattern {
        overrides.set(Key::NamePattern, Setting::Text(pattern.clone()));
    }
    if let Some(path) = &args.gitignore_file {
        overrides.set(
            Key::Gitignore,
            Setting::Text(read_text_file(path, "gitignore file")?),
        );
    }
    Ok(Resolver {
        base,
        base_source,
        env: base_notes.env.clone(),
        base_notes,
        overrides,
        agent_profile: args.agent_profile.clone(),
        project_config: !args.no_project_config,
    })
}

/// Reads a UTF-8 text file, naming it in the error.
pub fn read_text_file(path: &Path, what: &str) -> Result<String> {
    let bytes =
        std::fs::read(path).with_context(|| format!("cannot read {what} {}", path.display()))?;
    String::from_utf8(bytes)
        .map_err(|e| anyhow::anyhow!("{what} {}: not valid UTF-8 ({e})", path.display()))
}

/// The roots to scan: positional ones, then those from `--roots-from`; `.` if none at all.
fn collect_roots(args: &RootArgs) -> Result<Vec<PathBuf>> {
    let mut roots = args.roots.clone();
    if let Some(from) = &args.roots_from {
        roots.extend(read_roots_file(from)?);
    } else if roots.is_empty() {
        roots.push(PathBuf::from("."));
    }
    Ok(roots)
}

/// Roots from FILE, one per line (`-` = standard input; empty lines and a
/// line's trailing `\r` are left out).
pub fn read_roots_file(from: &Path) -> Result<Vec<PathBuf>> {
    if from.as_os_str() != "-" {
        return Ok(read_root_list(from)?);
    }
    let mut data = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut data)
        .context("cannot read roots from standard input")?;
    Ok(parse_root_list(&data))
}

/// The roots this process takes: all of them, or its shard's (`--shard`,
/// `--shard-from-env`), each with its index in the whole list (counted from
/// `--list-offset`). The index names a root's files in `render --out-dir`
/// and `bundle`, so that shards never clash and a merge gives the unsharded
/// run's names.
pub fn select_roots(args: &RootArgs) -> Result<(Vec<PathBuf>, Vec<usize>)> {
    let roots = collect_roots(args)?;
    let shard = match (args.shard, args.shard_from_env) {
        (Some(shard), _) => Some(shard),
        (None, Some(count)) => {
            const VAR: &str = "JOB_COMPLETION_INDEX";
            let index = std::env::var(VAR)
                .with_context(|| format!("--shard-from-env: ${VAR} is not set"))?;
            let index = index.trim().parse::<u64>().map_err(|_| {
                anyhow::anyhow!("--shard-from-env: ${VAR}={index:?} is not a whole number")
            })?;
            Some(Shard::new(index, count).map_err(|e| anyhow::anyhow!("--shard-from-env: {e}"))?)
        }
        (None, None) => None,
    };
    Ok(match shard {
        None => {
            let indices = (args.list_offset..).take(roots.len()).collect();
            (roots, indices)
        }
        Some(shard) => roots
            .into_iter()
            .enumerate()
            .filter(|(_, root)| shard.takes(root))
            .map(|(i, root)| (root, args.list_offset + i))
            .unzip(),
    })
}

/// Sizes the global rayon pool (`-j`; default: the number of CPUs), whose
/// threads keep the interrupt signals off ([`crate::interrupt`]). Every
/// command that uses the pool calls it first, with `None` when it has no
/// `-j`.
pub fn init_threads(threads: Option<NonZeroUsize>) -> Result<()> {
    let mut builder =
        rayon::ThreadPoolBuilder::new().start_handler(|_| crate::interrupt::block_in_this_thread());
    if let Some(n) = threads {
        builder = builder.num_threads(n.get());
    }
    if let Err(e) = builder.build_global() {
        bail!("cannot start worker threads: {e}");
    }
    Ok(())
}

/// Reads paths for `check-ignore --stdin`, newline- or NUL-separated.
pub fn read_stdin_paths(nul: bool) -> Result<Vec<String>> {
    let sep = if nul { b'\0' } else { b'\n' };
    let mut data = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut data)
        .context("cannot read paths from standard input")?;
    // One record per terminator; a last record without one counts too.
    // Records are kept exactly as given: empty ones, and a trailing `\r`.
    if data.is_empty() {
        return Ok(Vec::new());
    }
    let data = data.strip_suffix(&[sep]).unwrap_or(&data);
    Ok(data
        .split(|&b| b == sep)
        .map(|item| String::from_utf8_lossy(item).into_owned())
        .collect())
}
