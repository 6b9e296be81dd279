//! Turning arguments into the per-root configuration rule ([`Resolver`]), the root list and the thread pool.

use std::io::{BufRead, Read};
use std::num::NonZeroUsize;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use promptinclude::config::Config;
use promptinclude::project::{ConfigSource, Overrides, Resolver};

use super::args::{ConfigArgs, RootArgs};

/// Builds the per-root configuration rule: defaults or `--config`, replaced
/// by a root's project file (unless `--no-project-config`), then the flags.
pub fn resolver(args: &ConfigArgs) -> Result<Resolver> {
    let mut base = Config::default();
    let mut base_source = ConfigSource::Default;
    let mut base_unknown_keys = Vec::new();
    if let Some(path) = &args.config {
        let (loaded, unknown) =
            Config::load_file_with_unknown(path, &base).map_err(promptinclude::Error::from)?;
        for unknown in &unknown {
            eprintln!(
                "promptinclude: warning: {}{}: unknown key `{}` ignored (known: {})",
                path.display(),
                unknown.line.map_or(String::new(), |n| format!(":{n}")),
                unknown.key,
                promptinclude::config::KEYS.join(", ")
            );
        }
        base = loaded;
        base_source = ConfigSource::File(path.clone());
        base_unknown_keys = unknown;
    }
    let overrides = Overrides {
        name_pattern: args.name_pattern.clone(),
        max_depth: args.max_depth.map(i64::from),
        max_file_tokens: args.max_file_tokens.map(i64::from),
        max_file_count: args.max_file_count.map(i64::from),
        max_total_tokens: args.max_total_tokens.map(i64::from),
        gitignore: match &args.gitignore_file {
            Some(path) => Some(read_text_file(path, "gitignore file")?),
            None => None,
        },
    };
    Ok(Resolver {
        base,
        base_source,
        base_unknown_keys,
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
pub fn collect_roots(args: &RootArgs) -> Result<Vec<PathBuf>> {
    let mut roots = args.roots.clone();
    if let Some(from) = &args.roots_from {
        let mut data = Vec::new();
        if from.as_os_str() == "-" {
            std::io::stdin()
                .lock()
                .read_to_end(&mut data)
                .context("cannot read roots from standard input")?;
        } else {
            data = std::fs::read(from)
                .with_context(|| format!("cannot read roots from {}", from.display()))?;
        }
        for line in data.as_slice().split(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if !line.is_empty() {
                roots.push(PathBuf::from(std::ffi::OsString::from_vec(line.to_vec())));
            }
        }
    } else if roots.is_empty() {
        roots.push(PathBuf::from("."));
    }
    Ok(roots)
}

/// Sizes the global rayon pool (`-j`; default: the number of CPUs).
pub fn init_threads(threads: Option<NonZeroUsize>) -> Result<()> {
    let mut builder = rayon::ThreadPoolBuilder::new();
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
    let mut out = Vec::new();
    for item in std::io::stdin().lock().split(sep) {
        let item = item.context("cannot read paths from standard input")?;
        let item = if nul {
            &item[..]
        } else {
            item.strip_suffix(b"\r").unwrap_or(&item)
        };
        if !item.is_empty() {
            out.push(String::from_utf8_lossy(item).into_owned());
        }
    }
    Ok(out)
}
