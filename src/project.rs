//! Per-root configuration, found the way the host agent finds it.
//!
//! Agent Zero lets a project carry its own Prompt Include settings in
//! `.a0proj/`. The host takes the first file that exists **as a whole**
//! (nothing is merged): with an agent profile `P` it looks only at
//! `.a0proj/agents/P/plugins/_promptinclude/config.json`, without one only
//! at `.a0proj/plugins/_promptinclude/config.json` (a host quirk). A key
//! missing from such a file falls back to the plugin's default, except
//! `gitignore`, which falls back to the empty text: no filtering at all.
//!
//! Because roots may now carry different configurations, a [`Resolver`]
//! decides the configuration of each root, and a caller that scans many
//! roots keeps one compiled scanner per distinct configuration
//! (see [`crate::batch`]).

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize, Serializer};

use crate::config::{Config, UnknownKey};
use crate::error::Error;

/// Where the configuration of a root came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigSource {
    /// The built-in defaults (plus any command-line overrides).
    Default,
    /// A configuration file: a project's `.a0proj` file, or one given by the caller.
    File(PathBuf),
}

impl ConfigSource {
    /// `"default"`, or the file's path.
    pub fn describe(&self) -> String {
        match self {
            ConfigSource::Default => "default".to_string(),
            ConfigSource::File(path) => path.to_string_lossy().into_owned(),
        }
    }

    /// Parses what [`ConfigSource::describe`] wrote.
    pub fn parse(text: &str) -> ConfigSource {
        if text == "default" {
            ConfigSource::Default
        } else {
            ConfigSource::File(PathBuf::from(text))
        }
    }
}

impl fmt::Display for ConfigSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

impl Serialize for ConfigSource {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.describe())
    }
}

impl<'de> Deserialize<'de> for ConfigSource {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(|s| ConfigSource::parse(&s))
    }
}

/// Keys set explicitly by the caller (command-line flags); they win over
/// every file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Overrides {
    /// `name_pattern`, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_pattern: Option<String>,
    /// `max_depth`, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_depth: Option<i64>,
    /// `max_file_tokens`, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_file_tokens: Option<i64>,
    /// `max_file_count`, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_file_count: Option<i64>,
    /// `max_total_tokens`, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_total_tokens: Option<i64>,
    /// `gitignore`, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gitignore: Option<String>,
}

impl Overrides {
    /// Sets every given key on `config`.
    pub fn apply(&self, config: &mut Config) {
        if let Some(p) = &self.name_pattern {
            config.name_pattern = p.clone();
        }
        if let Some(n) = self.max_depth {
            config.max_depth = n;
        }
        if let Some(n) = self.max_file_tokens {
            config.max_file_tokens = n;
        }
        if let Some(n) = self.max_file_count {
            config.max_file_count = n;
        }
        if let Some(n) = self.max_total_tokens {
            config.max_total_tokens = n;
        }
        if let Some(g) = &self.gitignore {
            config.gitignore = g.clone();
        }
    }
}

/// The base a project's `config.json` is merged over: the plugin's
/// defaults, except that a missing `gitignore` means no filtering.
pub fn project_base() -> Config {
    Config {
        gitignore: String::new(),
        ..Config::default()
    }
}

/// The project configuration file the host consults for `abs_root`
/// (whether or not it exists).
pub fn project_config_path(abs_root: &Path, agent_profile: Option<&str>) -> PathBuf {
    let a0 = abs_root.join(".a0proj");
    match agent_profile {
        Some(profile) => a0
            .join("agents")
            .join(profile)
            .join("plugins/_promptinclude/config.json"),
        None => a0.join("plugins/_promptinclude/config.json"),
    }
}

/// Checks an agent profile name: one plain path component, so that the
/// configuration path stays inside `.a0proj/agents/`.
pub fn validate_profile(profile: &str) -> Result<(), String> {
    if profile.is_empty() || profile == "." || profile == ".." || profile.contains(['/', '\0']) {
        Err(format!(
            "invalid agent profile {profile:?}: expected a plain name (no '/', not '.' or '..')"
        ))
    } else {
        Ok(())
    }
}

/// How the configuration of each root is decided.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resolver {
    /// The configuration for roots without a project file (defaults, or the caller's file).
    pub base: Config,
    /// Where [`Resolver::base`] came from.
    pub base_source: ConfigSource,
    /// The unknown keys of [`Resolver::base_source`]'s file (for the audit;
    /// not part of a bundle's recorded settings).
    #[serde(skip)]
    pub base_unknown_keys: Vec<UnknownKey>,
    /// Keys that win over every file.
    pub overrides: Overrides,
    /// The agent profile (`--agent-profile`), if any.
    pub agent_profile: Option<String>,
    /// Whether project files are consulted at all.
    pub project_config: bool,
}

impl Default for Resolver {
    fn default() -> Self {
        Resolver {
            base: Config::default(),
            base_source: ConfigSource::Default,
            base_unknown_keys: Vec::new(),
            overrides: Overrides::default(),
            agent_profile: None,
            project_config: true,
        }
    }
}

/// The configuration decided for one root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// Which file applied.
    pub source: ConfigSource,
    /// The configuration, overrides applied.
    pub config: Config,
    /// The unknown keys of the file that applied.
    pub unknown_keys: Vec<UnknownKey>,
}

impl Resolver {
    /// Decides the configuration of the root whose absolute path is
    /// `abs_root`. A project file that exists but cannot be read or parsed
    /// is an error naming the file.
    pub fn resolve(&self, abs_root: Option<&Path>) -> Result<Resolved, Error> {
        let project_file = abs_root
            .filter(|_| self.project_config)
            .map(|root| project_config_path(root, self.agent_profile.as_deref()))
            .filter(|path| path.is_file());
        let (source, mut config, unknown_keys) = match project_file {
            Some(path) => {
                let (config, unknown) = Config::load_file_with_unknown(&path, &project_base())?;
                (ConfigSource::File(path), config, unknown)
            }
            None => (
                self.base_source.clone(),
                self.base.clone(),
                self.base_unknown_keys.clone(),
            ),
        };
        self.overrides.apply(&mut config);
        Ok(Resolved {
            source,
            config,
            unknown_keys,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_path_and_fallback() {
        let root = Path::new("/r");
        assert_eq!(
            project_config_path(root, Some("dev")),
            Path::new("/r/.a0proj/agents/dev/plugins/_promptinclude/config.json")
        );
        assert_eq!(
            project_config_path(root, None),
            Path::new("/r/.a0proj/plugins/_promptinclude/config.json")
        );
        assert!(validate_profile("../x").is_err());
        assert!(validate_profile("..").is_err());
        assert!(validate_profile("dev-2").is_ok());
    }

    #[test]
    fn project_file_wins_whole_and_missing_gitignore_means_none() {
        let dir = tempfile::tempdir().unwrap();
        let file = project_config_path(dir.path(), None);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, r#"{"max_depth": 3}"#).unwrap();
        let resolver = Resolver {
            base: Config {
                max_total_tokens: 1234,
                ..Config::default()
            },
            overrides: Overrides {
                max_file_count: Some(7),
                ..Overrides::default()
            },
            ..Resolver::default()
        };
        let got = resolver.resolve(Some(dir.path())).unwrap();
        assert_eq!(got.source, ConfigSource::File(file.clone()));
        assert_eq!(
            got.config,
            Config {
                max_depth: 3,
                max_file_count: 7,
                gitignore: String::new(),
                ..Config::default()
            }
        );
        // Turned off, or a profile set: the project-level file is not consulted.
        for r in [
            Resolver {
                project_config: false,
                ..Resolver::default()
            },
            Resolver {
                agent_profile: Some("dev".into()),
                ..Resolver::default()
            },
        ] {
            assert_eq!(
                r.resolve(Some(dir.path())).unwrap().source,
                ConfigSource::Default
            );
        }
    }
}
