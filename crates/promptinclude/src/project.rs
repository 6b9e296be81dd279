//! Per-root configuration, found the way the host agent finds it.
//!
//! Agent Zero lets a project carry its own Prompt Include settings in
//! `.a0proj/`. The host takes the first file that exists **as a whole**
//! (nothing is merged): with an agent profile `P` it looks only at
//! `.a0proj/agents/P/plugins/_promptinclude/config.json`, without one only
//! at `.a0proj/plugins/_promptinclude/config.json` (a host quirk). A key
//! missing from such a file falls back to the plugin's default, except
//! `gitignore`, which falls back to the empty text: no filtering at all.
//! The file is read under the policy that reads the root's rule files
//! ([`crate::trust`]): unattended, one whose real path leaves the root or
//! lies in `.git` is not read, and the root gets an error naming it.
//!
//! Because roots may now carry different configurations, a [`Resolver`]
//! decides the configuration of each root, and a caller that scans many
//! roots keeps one compiled scanner per distinct configuration
//! (see [`crate::batch`]).

use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize, Serializer};

use crate::config::{env, Config, ConfigError, Key, KeyKind, LoadNotes, Setting};
use crate::discover::Candidate;
use crate::trust::{Guard, ReadPolicy};

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
    pub(crate) fn describe(&self) -> String {
        match self {
            ConfigSource::Default => "default".to_string(),
            ConfigSource::File(path) => path.to_string_lossy().into_owned(),
        }
    }

    /// Parses what `ConfigSource::describe` wrote.
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
/// every file. In JSON, a map from key name to value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    values: Vec<(Key, Setting)>,
}

impl Overrides {
    /// Sets `key` (replacing an earlier value for it).
    pub fn set(&mut self, key: Key, setting: Setting) {
        self.values.retain(|(k, _)| *k != key);
        self.values.push((key, setting));
    }

    /// Sets every given key on `config`.
    pub fn apply(&self, config: &mut Config) {
        for (key, setting) in &self.values {
            config.set(*key, setting.clone());
        }
    }
}

impl Serialize for Overrides {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.values.len()))?;
        for (key, setting) in &self.values {
            map.serialize_entry(key.name(), setting)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Overrides {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let map = serde_json::Map::<String, serde_json::Value>::deserialize(deserializer)?;
        let mut overrides = Overrides::default();
        for (name, value) in map {
            let key = Key::from_name(&name)
                .ok_or_else(|| D::Error::custom(format!("unknown key {name}")))?;
            let setting = match (key.kind(), value) {
                (KeyKind::Number, v) => Setting::Number(
                    crate::config::Number::deserialize(v).map_err(D::Error::custom)?,
                ),
                (_, serde_json::Value::String(s)) => Setting::Text(s),
                _ => return Err(D::Error::custom(format!("bad value for {name}"))),
            };
            overrides.set(key, setting);
        }
        Ok(overrides)
    }
}

/// The base a project's `config.json` is merged over: the plugin's
/// defaults, except that a missing `gitignore` means no filtering.
fn project_base() -> Config {
    Config {
        gitignore: String::new(),
        ..Config::default()
    }
}

/// The project configuration file the host consults for `abs_root`
/// (whether or not it exists).
pub(crate) fn project_config_path(abs_root: &Path, agent_profile: Option<&str>) -> PathBuf {
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
pub fn validate_profile(profile: &str) -> Result<(), InvalidProfile> {
    if profile.is_empty() || profile == "." || profile == ".." || profile.contains(['/', '\0']) {
        Err(InvalidProfile(profile.to_string()))
    } else {
        Ok(())
    }
}

/// An agent profile name that is not one plain path component (the name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidProfile(pub String);

impl std::fmt::Display for InvalidProfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "invalid agent profile {:?}: expected a plain name (no '/', not '.' or '..')",
            self.0
        )
    }
}

impl std::error::Error for InvalidProfile {}

/// How the configuration of each root is decided.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resolver {
    /// The configuration for roots without a project file (defaults, or the caller's file).
    pub base: Config,
    /// Where [`Resolver::base`] came from.
    pub base_source: ConfigSource,
    /// What loading [`Resolver::base_source`] found (for the audit; its
    /// `A0_SET_` values are recorded in [`Resolver::env`]).
    #[serde(skip)]
    pub base_notes: LoadNotes,
    /// The `A0_SET_` environment values applied to the defaults (empty when
    /// a `--config` file is the base or `--no-env` is given).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<env::EnvValue>,
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
            base_notes: LoadNotes::default(),
            env: Vec::new(),
            overrides: Overrides::default(),
            agent_profile: None,
            project_config: true,
        }
    }
}

impl Resolver {
    /// The rule for scanning revision `rev` (when there is one): project
    /// files on disk are not consulted, since they may not be the
    /// revision's.
    pub fn for_rev(mut self, rev: Option<&str>) -> Resolver {
        if rev.is_some() {
            self.project_config = false;
        }
        self
    }
}

/// The configuration decided for one root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// Which file applied.
    pub source: ConfigSource,
    /// The configuration, overrides applied.
    pub config: Config,
    /// What loading the file that applied found (unknown keys, lines, `A0_SET_` values).
    pub notes: LoadNotes,
}

impl Resolver {
    /// Decides the configuration of the root whose absolute path is
    /// `abs_root`, reading its project file (if any) under `policy`. A
    /// project file that exists but cannot be read, is withheld by the
    /// policy, or cannot be parsed is an error naming the file.
    pub fn resolve(
        &self,
        abs_root: Option<&Path>,
        policy: &ReadPolicy,
    ) -> Result<Resolved, ConfigError> {
        let project = abs_root.filter(|_| self.project_config).and_then(|root| {
            let path = project_config_path(root, self.agent_profile.as_deref());
            path.is_file().then_some((root, path))
        });
        let (source, mut config, notes) = match project {
            Some((root, path)) => {
                let (config, notes) = load_project_file(root, &path, policy)?;
                (ConfigSource::File(path), config, notes)
            }
            None => (
                self.base_source.clone(),
                self.base.clone(),
                self.base_notes.clone(),
            ),
        };
        self.overrides.apply(&mut config);
        Ok(Resolved {
            source,
            config,
            notes,
        })
    }
}

/// Loads the project file `path` of `root`, read as `policy` reads a rule
/// file ([`Guard`]): the reference's policy follows its links wherever they
/// lead, [`ReadPolicy::unattended`] not past the root's real path nor into
/// `.git`. A file the policy withholds is an error naming only the file and
/// the reason: its text is never read, so no message can quote it (a parse
/// error quotes the value it rejects).
fn load_project_file(
    root: &Path,
    path: &Path,
    policy: &ReadPolicy,
) -> Result<(Config, LoadNotes), ConfigError> {
    let in_file = |message: String| ConfigError {
        file: Some(path.to_path_buf()),
        ..ConfigError::plain(message)
    };
    let guard = Guard::new(root, policy, None);
    match guard.read_bytes(&Candidate::new(path.as_os_str().as_bytes().to_vec())) {
        Ok(Ok(bytes)) => Config::from_file_bytes(path, bytes, &project_base()),
        Ok(Err(e)) => Err(in_file(format!("cannot read: {e}"))),
        Err(withheld) => Err(in_file(format!(
            "not read ({}): a project configuration is read under the policy that \
             reads rule files",
            withheld.kind()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Number;

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
        let mut overrides = Overrides::default();
        overrides.set(Key::MaxFileCount, Setting::Number(Number::int(7)));
        let resolver = Resolver {
            base: Config {
                max_total_tokens: Number::int(1234),
                ..Config::default()
            },
            overrides,
            ..Resolver::default()
        };
        let got = resolver
            .resolve(Some(dir.path()), &ReadPolicy::reference())
            .unwrap();
        assert_eq!(got.source, ConfigSource::File(file.clone()));
        assert_eq!(
            got.config,
            Config {
                max_depth: Number::int(3),
                max_file_count: Number::int(7),
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
                r.resolve(Some(dir.path()), &ReadPolicy::reference())
                    .unwrap()
                    .source,
                ConfigSource::Default
            );
        }
    }
}
