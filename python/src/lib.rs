//! `promptinclude._native`: the Rust side of the Python package.
//!
//! The public functions (signatures, defaults, docstrings) live in
//! `promptinclude/__init__.py`; this module converts Python values with the
//! reference's semantics, runs the library with the GIL released and builds
//! the reference's plain dicts, lists, `str`s and `int`s.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, TryLockError};

use promptinclude::audit::audit_root;
use promptinclude::budget::path_cost;
use promptinclude::config::number::ArithmeticError as ArithmeticErrorKind;
use promptinclude::config::{Config, Key, KeyKind, LoadNotes, Setting, Value};
use promptinclude::discover::gitwildmatch::{IgnoreSpec, PatternError, PatternErrorKind};
use promptinclude::index::Index;
use promptinclude::model::{Disposition, FileEntry, ScanResult, Status};
use promptinclude::project::ConfigSource;
use promptinclude::pystr::STAND_IN_BASE;
use promptinclude::RootScan;
use promptinclude::{Error, Scanner};
use pyo3::exceptions::{
    PyAttributeError, PyOverflowError, PyRuntimeError, PyTypeError, PyUnicodeEncodeError,
    PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString};

// ------------------------------------------------------------------
// Python text <-> Rust text (lone surrogates as the library's stand-ins)
// ------------------------------------------------------------------

/// A Python `str` as the library's text: lone surrogates U+DC80..U+DCFF (what
/// `surrogateescape` makes of undecodable bytes) become the library's
/// stand-ins, so patterns match file names exactly as in Python.
fn rust_text(s: &Bound<'_, PyString>) -> PyResult<String> {
    if let Ok(text) = s.extract::<String>() {
        return Ok(text);
    }
    let encoded = s.call_method1("encode", ("utf-32-le", "surrogatepass"))?;
    let bytes = encoded.cast::<PyBytes>()?.as_bytes();
    Ok(bytes
        .chunks_exact(4)
        .map(|c| {
            let code = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            char::from_u32(code)
                .unwrap_or_else(|| promptinclude::config::value::lone_surrogate_stand_in(code))
        })
        .collect())
}

/// Library text back to a Python `str`: stand-ins become lone surrogates again.
fn py_text<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    let is_stand_in = |c: char| (STAND_IN_BASE + 0x80..=STAND_IN_BASE + 0xFF).contains(&(c as u32));
    if !text.chars().any(is_stand_in) {
        return Ok(PyString::new(py, text).into_any());
    }
    let mut utf32 = Vec::with_capacity(text.len() * 4);
    for c in text.chars() {
        let code = if is_stand_in(c) {
            0xDC00 + (c as u32 - STAND_IN_BASE)
        } else {
            c as u32
        };
        utf32.extend_from_slice(&code.to_le_bytes());
    }
    PyBytes::new(py, &utf32).call_method1("decode", ("utf-32-le", "surrogatepass"))
}

/// A full path as Python's `os.walk` + `os.path.join` print it: `os.fsdecode`
/// of its bytes (undecodable bytes as lone surrogates).
fn py_path<'py>(py: Python<'py>, bytes: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(PyString::new(py, text).into_any()),
        Err(_) => py
            .import("os")?
            .call_method1("fsdecode", (PyBytes::new(py, bytes),)),
    }
}

/// `root` (str or os.PathLike[str]) as the bytes the reference walks, or
/// `None` for a `str` no file name can have (one `os.fsencode` refuses, such
/// as a lone surrogate outside U+DC80..U+DCFF): the reference's
/// `os.path.isdir` is false for it (a `UnicodeEncodeError` is a
/// `ValueError`, which `isdir` takes as "no"), so its scan is empty.
fn root_path(root: &Bound<'_, PyAny>) -> PyResult<Option<PathBuf>> {
    let py = root.py();
    let os = py.import("os")?;
    let path = os.call_method1("fspath", (root,))?;
    if !path.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(format!(
            "root must be str or os.PathLike[str], not {} (the reference cannot match \
             bytes names against a str name_pattern)",
            path.get_type().name()?
        )));
    }
    let encoded = match os.call_method1("fsencode", (path,)) {
        Ok(encoded) => encoded,
        Err(e) if e.is_instance_of::<PyUnicodeEncodeError>(py) => return Ok(None),
        Err(e) => return Err(e),
    };
    let bytes = encoded.cast::<PyBytes>()?.as_bytes();
    Ok(Some(PathBuf::from(std::ffi::OsStr::from_bytes(bytes))))
}

/// The reference's result for a root that is not a directory.
fn empty_result(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("files", PyList::empty(py))?;
    out.set_item("skipped_count", 0)?;
    Ok(out)
}

// ------------------------------------------------------------------
// Configuration values with Python semantics
// ------------------------------------------------------------------

/// A Python object as a configuration [`Value`] (`None`: not a value the
/// library models; the caller decides from its truthiness).
fn to_value(obj: &Bound<'_, PyAny>) -> PyResult<Option<Value>> {
    use promptinclude::config::Number;
    if obj.is_none() {
        return Ok(Some(Value::Null));
    }
    if obj.is_instance_of::<PyBool>() {
        return Ok(Some(Value::Number(Number::Bool(obj.is_truthy()?))));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(v) = obj.extract::<i64>() {
            return Ok(Some(Value::Number(Number::int(v))));
        }
        // An int subclass prints like int through int.__repr__.
        let digits: String = py_int_repr(obj)?;
        return Ok(Number::parse_decimal_int(&digits).map(Value::Number));
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(Some(Value::Number(Number::Float(obj.extract::<f64>()?))));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Some(Value::Str(rust_text(s)?)));
    }
    if obj.is_instance_of::<PyList>() {
        return Ok(Some(Value::List(obj.len()?)));
    }
    if obj.is_instance_of::<PyDict>() {
        return Ok(Some(Value::Map(obj.len()?)));
    }
    Ok(None)
}

fn py_int_repr(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    let py = obj.py();
    let int_type = py.get_type::<PyInt>();
    int_type.call_method1("__repr__", (obj,))?.extract()
}

/// Checks `obj` for `key` as the reference would use it; raises the
/// exception type the reference raises (eagerly: it raises only once the
/// value is first used, which we document).
fn accept(key: Key, obj: &Bound<'_, PyAny>) -> PyResult<Setting> {
    let type_name = obj.get_type().name()?.to_string();
    let repr = obj
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "?".into());
    let repr = if repr.chars().count() > 60 {
        format!("{}...", repr.chars().take(60).collect::<String>())
    } else {
        repr
    };
    let value = to_value(obj)?;
    if key.kind() == KeyKind::Lines {
        if let Ok(b) = obj.cast::<PyBytes>() {
            // bytes has .strip(): all-whitespace bytes are "no patterns"; any other
            // bytes raise TypeError at `.startswith("#")`.
            if b.call_method0("strip")?.is_truthy()? {
                return Err(PyTypeError::new_err(format!(
                    "gitignore must be a str, not bytes ({repr}): the reference raises \
                     TypeError (bytes.startswith with a str)"
                )));
            }
            return Ok(Setting::Text(String::new()));
        }
        if value.is_none() {
            if obj.is_truthy()? {
                return Err(PyAttributeError::new_err(format!(
                    "gitignore must be a str or a false value, not {type_name} ({repr}): \
                     the reference raises AttributeError ('{type_name}' object has no \
                     attribute 'strip')"
                )));
            }
            return Ok(Setting::Text(String::new()));
        }
    }
    let wrong_type = || match key.kind() {
        KeyKind::Lines => PyAttributeError::new_err(format!(
            "gitignore must be a str or a false value, not {type_name} ({repr}): the reference \
             raises AttributeError ('{type_name}' object has no attribute 'strip')"
        )),
        KeyKind::Number => PyTypeError::new_err(format!(
            "{} must be a number (int, float, bool, or another of Python's numbers such as \
             Decimal or Fraction), not {type_name} ({repr}): the reference raises TypeError \
             comparing it with an int",
            key.name()
        )),
        KeyKind::Text => PyTypeError::new_err(format!(
            "{} must be a str, not {type_name} ({repr}): the reference raises TypeError in \
             fnmatch",
            key.name()
        )),
    };
    let Some(value) = value else {
        return Err(wrong_type());
    };
    key.accept(value).map_err(|_| wrong_type())
}

/// The scan's defaults: `scan_promptinclude_files`'s keyword defaults (no
/// gitignore patterns).
fn function_defaults() -> Config {
    Config {
        gitignore: String::new(),
        ..Config::default()
    }
}

/// A `Config` from the six values (in `Key::ALL` order).
///
/// Checked in the reference's order: it builds the gitignore spec first (a
/// wrong `gitignore` or an invalid line raises before anything else), then
/// uses the other values.
fn config_from_values(values: [&Bound<'_, PyAny>; 6]) -> PyResult<Config> {
    let mut config = function_defaults();
    let pairs: Vec<(Key, &Bound<'_, PyAny>)> = Key::ALL.into_iter().zip(values).collect();
    for (key, obj) in pairs.iter().filter(|(k, _)| *k == Key::Gitignore) {
        set_gitignore_first(&mut config, *key, obj)?;
    }
    for (key, obj) in pairs.iter().filter(|(k, _)| *k != Key::Gitignore) {
        config.set(*key, accept(*key, obj)?);
    }
    Ok(config)
}

/// Accepts `gitignore` and compiles it, raising what the reference's
/// `_build_ignore_spec` raises (its first step).
fn set_gitignore_first(config: &mut Config, key: Key, obj: &Bound<'_, PyAny>) -> PyResult<()> {
    let setting = accept(key, obj)?;
    if let Setting::Text(text) = &setting {
        if !cached_scanner_has_gitignore(text) {
            IgnoreSpec::from_gitignore_text(text).map_err(|e| pattern_error(obj.py(), &e))?;
        }
    }
    config.set(key, setting);
    Ok(())
}

/// The last compiled scanner, with the current directory it was made in
/// (it resolves relative roots against it): Agent Zero scans with the same
/// configuration every turn, and compiling the patterns costs more than
/// scanning a small project.
type CachedScanner = (Config, Option<PathBuf>, Arc<Scanner>);
static LAST_SCANNER: Mutex<Option<CachedScanner>> = Mutex::new(None);

/// Whether the cached scanner was compiled from this gitignore text (so it is valid).
fn cached_scanner_has_gitignore(text: &str) -> bool {
    let cache = LAST_SCANNER.lock().unwrap_or_else(|e| e.into_inner());
    cache.as_ref().is_some_and(|(c, _, _)| c.gitignore == text)
}

/// A compiled scanner for `config`: the cached one when the configuration and the
/// current directory are the same, else one compiled (with the GIL released) and
/// cached afterwards.
///
/// `LAST_SCANNER` is locked only with the GIL held ([`ScannerFor::new`],
/// [`ScannerFor::remember`], `cached_scanner_has_gitignore`) and never across a
/// Python call, so no thread holds it when `os.fork()` (which runs with the GIL
/// held) forks: a forked child can always scan.
struct ScannerFor {
    config: Config,
    cwd: Option<PathBuf>,
    cached: Option<Arc<Scanner>>,
    made: OnceLock<Arc<Scanner>>,
}

impl ScannerFor {
    /// Looks up the cache. Call with the GIL held.
    fn new(config: Config) -> ScannerFor {
        let cwd = std::env::current_dir().ok();
        let cache = LAST_SCANNER.lock().unwrap_or_else(|e| e.into_inner());
        let cached = cache
            .as_ref()
            .filter(|(c, d, _)| *c == config && *d == cwd)
            .map(|(_, _, scanner)| Arc::clone(scanner));
        drop(cache);
        ScannerFor {
            config,
            cwd,
            cached,
            made: OnceLock::new(),
        }
    }

    /// The scanner (compiled on first use when the cache had none).
    fn get(&self) -> Result<Arc<Scanner>, Error> {
        if let Some(scanner) = self.cached.as_ref().or(self.made.get()) {
            return Ok(Arc::clone(scanner));
        }
        let scanner = Arc::new(Scanner::new(self.config.clone())?);
        Ok(Arc::clone(self.made.get_or_init(|| scanner)))
    }

    /// Caches a scanner compiled by [`ScannerFor::get`]. Call with the GIL held.
    fn remember(self) {
        if let Some(scanner) = self.made.into_inner() {
            let mut cache = LAST_SCANNER.lock().unwrap_or_else(|e| e.into_inner());
            *cache = Some((self.config, self.cwd, scanner));
        }
    }
}

/// A `Config` from an optional dict holding any of the six keys.
fn config_from_dict(config: Option<&Bound<'_, PyAny>>) -> PyResult<Config> {
    let mut out = function_defaults();
    let Some(config) = config.filter(|c| !c.is_none()) else {
        return Ok(out);
    };
    let dict = config.cast::<PyDict>().map_err(|_| {
        PyTypeError::new_err("config must be a dict with any of the six keys, or None")
    })?;
    if let Some(value) = dict.get_item("gitignore")? {
        set_gitignore_first(&mut out, Key::Gitignore, &value)?;
    }
    for (name, value) in dict.iter() {
        let name_str: String = name.extract().map_err(|_| {
            PyTypeError::new_err(format!("config keys must be str, not {}", name.get_type()))
        })?;
        let key = Key::from_name(&name_str).ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown config key {name_str:?} (known: {})",
                Key::known_names()
            ))
        })?;
        if key != Key::Gitignore {
            out.set(key, accept(key, &value)?);
        }
    }
    Ok(out)
}

// ------------------------------------------------------------------
// Errors
// ------------------------------------------------------------------

fn pattern_error(py: Python<'_>, e: &PatternError) -> PyErr {
    let message = format!("invalid gitignore pattern: {e}");
    match e.kind {
        // pathspec's GitIgnorePatternError is a ValueError.
        PatternErrorKind::InvalidPattern => PyValueError::new_err(message),
        // Python's re.error, exactly as the reference raises it.
        PatternErrorKind::BadCharacterRange => match py
            .import("re")
            .and_then(|re| re.getattr("error"))
            .and_then(|cls| cls.call1((message.clone(),)))
        {
            Ok(instance) => PyErr::from_value(instance),
            Err(err) => err,
        },
    }
}

fn to_py_err(py: Python<'_>, e: Error) -> PyErr {
    match e {
        Error::Pattern(p) => pattern_error(py, &p),
        Error::NamePattern(msg) => PyValueError::new_err(format!("invalid name_pattern: {msg}")),
        Error::Config(c) => PyValueError::new_err(format!("invalid configuration: {c}")),
        // Only `--rev` scans read git; the Python API never asks for one.
        Error::Git(e) => pyo3::exceptions::PyOSError::new_err(e.to_string()),
        Error::Raised(r) => {
            let message = format!("{}: {r}", r.path);
            match r.error {
                ArithmeticErrorKind::Overflow => PyOverflowError::new_err(message),
                ArithmeticErrorKind::NotANumber => PyValueError::new_err(message),
            }
        }
    }
}

// ------------------------------------------------------------------
// Results as the reference's plain objects
// ------------------------------------------------------------------

/// `{"files": [{"path", "content", "token_count", "status"}], "skipped_count"}`
/// with paths exactly as Python prints them.
fn result_to_py<'py>(py: Python<'py>, scan: &RootScan) -> PyResult<Bound<'py, PyDict>> {
    let result = scan.result();
    let mut paths: Vec<Option<&[u8]>> = vec![None; result.files.len()];
    for (candidate, disposition) in scan.candidates.iter().zip(&scan.allocation.dispositions) {
        if let Disposition::Included(i) = disposition {
            if let Some(slot) = paths.get_mut(*i) {
                *slot = Some(candidate.as_bytes());
            }
        }
    }
    let files = PyList::empty(py);
    for (entry, raw) in result.files.iter().zip(paths) {
        let item = PyDict::new(py);
        match raw {
            Some(bytes) => item.set_item("path", py_path(py, bytes)?)?,
            None => item.set_item("path", &entry.path)?,
        }
        item.set_item("content", &entry.content)?;
        item.set_item("token_count", entry.token_count)?;
        item.set_item("status", entry.status.as_str())?;
        files.append(item)?;
    }
    let out = PyDict::new(py);
    out.set_item("files", files)?;
    out.set_item("skipped_count", result.skipped_count)?;
    Ok(out)
}

/// A scan result dict (as `scan_promptinclude_files` returns) back to the library's.
fn result_from_py(obj: &Bound<'_, PyAny>) -> PyResult<ScanResult> {
    let files_obj = obj.get_item("files")?;
    let mut files = Vec::new();
    for item in files_obj.try_iter()? {
        let item = item?;
        let text = |key: &str| -> PyResult<String> {
            let value = item.get_item(key)?;
            let s = value
                .cast::<PyString>()
                .map_err(|_| PyTypeError::new_err(format!("files[].{key} must be a str")))?;
            rust_text(s)
        };
        let status = match text("status")?.as_str() {
            "ok" => Status::Ok,
            "cropped" => Status::Cropped,
            "skipped" => Status::Skipped,
            other => {
                return Err(PyValueError::new_err(format!(
                    "files[].status must be \"ok\", \"cropped\" or \"skipped\", not {other:?}"
                )))
            }
        };
        files.push(FileEntry {
            path: text("path")?,
            content: text("content")?,
            token_count: item.get_item("token_count")?.extract()?,
            status,
        });
    }
    Ok(ScanResult {
        root: String::new(),
        files,
        skipped_count: obj.get_item("skipped_count")?.extract()?,
    })
}

fn json_to_py<'py>(py: Python<'py>, json: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (json,))
}

// ------------------------------------------------------------------
// The functions
// ------------------------------------------------------------------

/// The reference's scan of one root (see `promptinclude.scan_promptinclude_files`).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn scan<'py>(
    py: Python<'py>,
    root: &Bound<'py, PyAny>,
    name_pattern: &Bound<'py, PyAny>,
    max_depth: &Bound<'py, PyAny>,
    max_file_tokens: &Bound<'py, PyAny>,
    max_file_count: &Bound<'py, PyAny>,
    max_total_tokens: &Bound<'py, PyAny>,
    gitignore: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    let config = config_from_values([
        name_pattern,
        max_depth,
        max_file_tokens,
        max_file_count,
        max_total_tokens,
        gitignore,
    ])?;
    let Some(root) = root_path(root)? else {
        return empty_result(py);
    };
    let scanners = ScannerFor::new(config);
    let pool = process_pool()?;
    let outcome = py.detach(|| in_pool(pool, || scanners.get()?.scan_detailed(&root)));
    scanners.remember();
    match outcome {
        Ok(scan) => result_to_py(py, &scan),
        Err(e) => Err(to_py_err(py, e)),
    }
}

/// Raises what `scan` would raise before scanning, for these values (the
/// Python side's scan with numbers that are neither `int`, `float` nor
/// `bool`, which it passes here as `0`: see `promptinclude/__init__.py`).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn check(
    root: &Bound<'_, PyAny>,
    name_pattern: &Bound<'_, PyAny>,
    max_depth: &Bound<'_, PyAny>,
    max_file_tokens: &Bound<'_, PyAny>,
    max_file_count: &Bound<'_, PyAny>,
    max_total_tokens: &Bound<'_, PyAny>,
    gitignore: &Bound<'_, PyAny>,
) -> PyResult<()> {
    config_from_values([
        name_pattern,
        max_depth,
        max_file_tokens,
        max_file_count,
        max_total_tokens,
        gitignore,
    ])?;
    root_path(root)?;
    Ok(())
}

/// The reference's sorted list of rule files under `root` (`matched`, after
/// `matched.sort()`), none of them read: `[(path, path_tokens)]`, each path as
/// Python prints it and `path_tokens` what the reference charges for it
/// (`count_tokens(path) + 5`).
#[pyfunction]
fn find<'py>(
    py: Python<'py>,
    root: &Bound<'py, PyAny>,
    name_pattern: &Bound<'py, PyAny>,
    max_depth: &Bound<'py, PyAny>,
    gitignore: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyList>> {
    let zero = 0i64.into_pyobject(py)?.into_any();
    let mut config = config_from_values([name_pattern, max_depth, &zero, &zero, &zero, gitignore])?;
    // `len(files) >= 0` holds for every candidate: the budget pass reads none.
    config.max_file_count = promptinclude::config::Number::int(0);
    let out = PyList::empty(py);
    let Some(root) = root_path(root)? else {
        return Ok(out);
    };
    let scanners = ScannerFor::new(config);
    let pool = process_pool()?;
    let scan = py.detach(|| in_pool(pool, || scanners.get()?.scan_detailed(&root)));
    scanners.remember();
    let scan = scan.map_err(|e| to_py_err(py, e))?;
    let costs: Vec<i64> = py.detach(|| scan.candidates.iter().map(path_cost).collect());
    for (candidate, cost) in scan.candidates.iter().zip(costs) {
        out.append((py_path(py, candidate.as_bytes())?, cost))?;
    }
    Ok(out)
}

/// The reference's `tokens.count_tokens(text)` (cl100k_base, special-token
/// text counted as plain text).
#[pyfunction]
fn count_tokens(py: Python<'_>, text: &Bound<'_, PyString>) -> PyResult<usize> {
    let text = rust_text(text)?;
    let pool = process_pool()?;
    Ok(py.detach(|| in_pool(pool, || promptinclude::tokenize::count(&text))))
}

// ------------------------------------------------------------------
// Scans in a forked child
// ------------------------------------------------------------------

/// The process that loaded the module (and may have started rayon's global pool).
static MODULE_PID: OnceLock<u32> = OnceLock::new();

/// This process's own pool when it is not the one that loaded the module.
static CHILD_POOL: Mutex<Option<(u32, Arc<rayon::ThreadPool>)>> = Mutex::new(None);

/// The pool this process's scans run on: `None`, rayon's global pool, in the
/// process that loaded the module; in a process forked from it, a pool made
/// there. The global pool's threads are the parent's: a forked child has
/// none of them, and a scan on it would wait for them for ever.
///
/// Call with the GIL held: `CHILD_POOL` is locked only then, and never
/// across a Python call, so no thread holds it when `os.fork()` (which runs
/// with the GIL held) forks.
fn process_pool() -> PyResult<Option<Arc<rayon::ThreadPool>>> {
    let pid = std::process::id();
    if MODULE_PID.get().is_none_or(|p| *p == pid) {
        return Ok(None);
    }
    let mut pool = CHILD_POOL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((p, pool)) = pool.as_ref() {
        if *p == pid {
            return Ok(Some(Arc::clone(pool)));
        }
    }
    let made = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .build()
            .map_err(|e| PyRuntimeError::new_err(format!("cannot start scan threads: {e}")))?,
    );
    // A pool of an ancestor has no threads here: never dropped (dropping
    // would signal threads that do not exist).
    if let Some(stale) = pool.replace((pid, Arc::clone(&made))) {
        std::mem::forget(stale);
    }
    Ok(Some(made))
}

/// Runs `f` on `pool` (see [`process_pool`]), or where it is called.
fn in_pool<R: Send>(pool: Option<Arc<rayon::ThreadPool>>, f: impl FnOnce() -> R + Send) -> R {
    match pool {
        None => f(),
        Some(pool) => pool.install(f),
    }
}

/// Runs `f` on a pool of `threads` threads, or on the global pool.
fn on_pool<R: Send>(
    threads: Option<usize>,
    process: Option<Arc<rayon::ThreadPool>>,
    f: impl FnOnce() -> R + Send,
) -> Result<R, String> {
    match threads {
        None => Ok(in_pool(process, f)),
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .map(|pool| pool.install(f))
            .map_err(|e| e.to_string()),
    }
}

fn threads_arg(threads: Option<i64>) -> PyResult<Option<usize>> {
    match threads {
        None => Ok(None),
        Some(n) if n >= 1 => Ok(Some(n as usize)),
        Some(n) => Err(PyValueError::new_err(format!(
            "threads must be at least 1, not {n}"
        ))),
    }
}

/// Many roots, one configuration, in parallel; results in input order.
#[pyfunction]
#[pyo3(signature = (roots, config=None, threads=None))]
fn scan_many<'py>(
    py: Python<'py>,
    roots: &Bound<'py, PyAny>,
    config: Option<&Bound<'py, PyAny>>,
    threads: Option<i64>,
) -> PyResult<Bound<'py, PyList>> {
    let config = config_from_dict(config)?;
    let threads = threads_arg(threads)?;
    let mut paths = Vec::new();
    // `None`: a root no file name can have, whose result is empty.
    for root in roots.try_iter()? {
        paths.push(root_path(&root?)?);
    }
    let scanners = ScannerFor::new(config);
    let process = process_pool()?;
    let outcome = py.detach(|| {
        on_pool(threads, process, || {
            let scanner = scanners.get()?;
            let mut results: Vec<Result<Option<RootScan>, Error>> = Vec::with_capacity(paths.len());
            promptinclude::in_input_order(
                &paths,
                |_, root: &Option<PathBuf>| match root {
                    Some(root) => scanner.scan_detailed(root).map(Some),
                    None => Ok(None),
                },
                |_, _, result| {
                    let failed = result.is_err();
                    results.push(result);
                    !failed
                },
            );
            Ok::<_, Error>(results)
        })
    });
    scanners.remember();
    let results = outcome
        .map_err(PyRuntimeError::new_err)?
        .map_err(|e| to_py_err(py, e))?;
    let out = PyList::empty(py);
    for result in results {
        match result {
            Ok(Some(scan)) => out.append(result_to_py(py, &scan)?)?,
            Ok(None) => out.append(empty_result(py)?)?,
            Err(e) => return Err(to_py_err(py, e)),
        }
    }
    Ok(out)
}

/// The system-prompt section for a scan result.
#[pyfunction]
#[pyo3(signature = (result, name_pattern))]
fn render<'py>(
    py: Python<'py>,
    result: &Bound<'py, PyAny>,
    name_pattern: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let result = result_from_py(result)?;
    let Setting::Text(pattern) = accept(Key::NamePattern, name_pattern)? else {
        return Err(PyTypeError::new_err("name_pattern must be a str"));
    };
    let pool = process_pool()?;
    let text = py.detach(|| in_pool(pool, || promptinclude::render(&result, &pattern)));
    py_text(py, &text)
}

/// The audit of one root as plain objects (the `RootAudit` JSON).
#[pyfunction]
#[pyo3(signature = (root, config=None))]
fn audit<'py>(
    py: Python<'py>,
    root: &Bound<'py, PyAny>,
    config: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let config = config_from_dict(config)?;
    let Some(root) = root_path(root)? else {
        return Err(PyValueError::new_err(
            "audit: root cannot be encoded as a file name (os.fsencode refuses it)",
        ));
    };
    let scanners = ScannerFor::new(config);
    let pool = process_pool()?;
    let outcome = py.detach(|| {
        in_pool(pool, || {
            let scanner = scanners.get()?;
            let report = audit_root(
                &scanner,
                &root,
                &ConfigSource::Default,
                &LoadNotes::default(),
            )?;
            Ok::<_, Error>(serde_json::to_string(&report))
        })
    });
    scanners.remember();
    match outcome {
        Ok(Ok(json)) => json_to_py(py, &json),
        Ok(Err(e)) => Err(PyRuntimeError::new_err(format!(
            "cannot serialise the audit: {e}"
        ))),
        Err(e) => Err(to_py_err(py, e)),
    }
}

/// Which pattern decides each path, like `git check-ignore -v`.
#[pyfunction]
#[pyo3(signature = (paths, gitignore))]
fn check_ignore<'py>(
    py: Python<'py>,
    paths: &Bound<'py, PyAny>,
    gitignore: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyList>> {
    let Setting::Text(text) = accept(Key::Gitignore, gitignore)? else {
        return Err(PyTypeError::new_err("gitignore must be a str"));
    };
    let spec = IgnoreSpec::from_gitignore_text(&text).map_err(|e| pattern_error(py, &e))?;
    let out = PyList::empty(py);
    for path in paths.try_iter()? {
        let path = path?;
        let text = path
            .cast::<PyString>()
            .map_err(|_| PyTypeError::new_err("paths must be str (relative, '/'-separated)"))
            .and_then(rust_text)?;
        let (rel, is_dir) = match text.strip_suffix('/') {
            Some(rel) if !rel.is_empty() => (rel, true),
            _ => (text.as_str(), false),
        };
        let (ignored, pattern) = match &spec {
            Some(spec) => spec.explain(rel, is_dir),
            None => (false, None),
        };
        let record = PyDict::new(py);
        record.set_item("path", &path)?;
        record.set_item("ignored", ignored)?;
        match pattern {
            Some(p) => {
                record.set_item("pattern", py_text(py, &p.text)?)?;
                record.set_item("line", p.line_number)?;
            }
            None => {
                record.set_item("pattern", py.None())?;
                record.set_item("line", py.None())?;
            }
        }
        out.append(record)?;
    }
    Ok(out)
}

/// Merges the `summary` records of `audit --json` runs over consecutive
/// slices of one root list (in list order) into the summary record one run
/// over the whole list prints, without the newline: what
/// `promptinclude.dask` prints last.
#[pyfunction]
fn merge_audit_summaries(records: Vec<Vec<u8>>) -> PyResult<String> {
    promptinclude::audit::summary::Summary::merge_records(&records)
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// What `agent` loads as context files when started in `cwd` (the
/// `promptinclude context --json` document as plain objects). `home`
/// defaults to `$HOME`; the agent's own variables (`CODEX_HOME`, `CLAUDE_CONFIG_DIR`) are read
/// from the environment, as the agent reads them.
#[pyfunction]
#[pyo3(signature = (agent, cwd, home=None))]
fn context<'py>(
    py: Python<'py>,
    agent: &str,
    cwd: PathBuf,
    home: Option<PathBuf>,
) -> PyResult<Bound<'py, PyAny>> {
    use promptinclude::agents::{self, report, Agent};
    let Some(agent) = Agent::from_name(agent) else {
        return Err(PyValueError::new_err(format!(
            "context: unknown agent {agent:?} (modelled: {})",
            Agent::names()
        )));
    };
    let home = match home.or_else(|| std::env::var_os("HOME").map(PathBuf::from)) {
        Some(home) => home,
        None => {
            return Err(PyValueError::new_err(
                "context: HOME is not set: pass home=",
            ))
        }
    };
    let pool = process_pool()?;
    let json = py
        .detach(|| {
            in_pool(pool, || {
                let env = |name: &str| std::env::var_os(name);
                let start = agents::Start {
                    cwd: &cwd,
                    home: &home,
                    env: &env,
                };
                agents::context(agent, &start).map(|c| report::json(&c))
            })
        })
        .map_err(|e| PyValueError::new_err(promptinclude::full_message(&e)))?;
    json_to_py(py, &json)
}

/// Merges the bundles `dirs` of consecutive slices of the root list in the
/// file `roots_from` into one bundle at `out` (written whole or not at all),
/// as `promptinclude merge bundle` does: in this process, with the GIL
/// released. Returns the exit status one `bundle` run over the whole list
/// would have had (0, 1 for a root that is not a directory, 2 for a failed
/// root); raises `ValueError` with the merge's message when the inputs do
/// not fit together or cannot be read or written.
#[pyfunction]
fn merge_bundle(
    py: Python<'_>,
    roots_from: PathBuf,
    dirs: Vec<PathBuf>,
    out: PathBuf,
) -> PyResult<u8> {
    use promptinclude::artifact::merge::{merge_bundle, read_root_list, RootList};
    let merged = py
        .detach(|| {
            let roots = read_root_list(&roots_from)?;
            let list = RootList {
                path: &roots_from,
                roots: &roots,
                partial: false,
            };
            merge_bundle(list, &dirs, &out)
        })
        .map_err(|e| PyValueError::new_err(promptinclude::full_message(&e)))?;
    Ok(if merged.errors {
        2
    } else if merged.not_dirs {
        1
    } else {
        0
    })
}

/// `promptinclude` the command, run in this process: `argv` as `sys.argv`
/// gives it (the program name first), `program` the script's path, which
/// `init` writes into hook commands. Returns the exit code; a panic (a bug)
/// gives 101, as it does the binary, after the same message on stderr.
#[pyfunction]
#[pyo3(signature = (argv, program=None))]
fn main(py: Python<'_>, argv: Vec<OsString>, program: Option<PathBuf>) -> u8 {
    if let Some(program) = program {
        promptinclude_cli::set_program(program);
    }
    py.detach(|| {
        std::panic::catch_unwind(AssertUnwindSafe(|| promptinclude_cli::run(argv))).unwrap_or(101)
    })
}

// ------------------------------------------------------------------
// The live index
// ------------------------------------------------------------------

/// The Rust index of a `promptinclude.Index`, in the process that uses it.
///
/// Two locks, so that `os.fork()` cannot leave the child a lock that no
/// thread of its own will release:
///
/// * `PyIndex::slot` is taken only with the GIL held and never across a
///   Python call or a `detach`: `os.fork()` runs with the GIL held, so no
///   thread holds it when the process forks;
/// * `IndexSlot::index` is held for a whole scan with the GIL released, so
///   a thread of the parent may hold it at that moment. The first use in a
///   new process (`pid` differs) checks it: free, the child keeps the index
///   (which notices the fork on its next scan: a full scan with a queue of
///   its own, `fallbacks.forked`); held, the index is mid-scan in a thread
///   the child does not have, so the child leaves that lock (and index)
///   alone for good and starts a new index (its stats from zero).
struct IndexSlot {
    pid: u32,
    /// `None`: not made yet, or forgotten (a scan panicked, or the parent
    /// held it when the process forked); made again by the next scan.
    index: Arc<Mutex<Option<Index>>>,
}

/// A live index of one root (see `promptinclude.Index`).
#[pyclass(name = "Index", module = "promptinclude._native", frozen)]
struct PyIndex {
    /// The root made absolute against the current directory when the index
    /// was made (as the library's scanner resolves it); `None`: a root no
    /// file name can have, whose scan is always empty.
    root: Option<PathBuf>,
    config: Config,
    slot: Mutex<IndexSlot>,
}

impl PyIndex {
    /// The lock around this process's index (see [`IndexSlot`]). Call with
    /// the GIL held.
    fn cell(&self) -> Arc<Mutex<Option<Index>>> {
        let mut slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        let pid = std::process::id();
        if slot.pid != pid {
            slot.pid = pid;
            let held_by_parent = matches!(slot.index.try_lock(), Err(TryLockError::WouldBlock));
            if held_by_parent {
                slot.index = Arc::new(Mutex::new(None));
            }
        }
        Arc::clone(&slot.index)
    }
}

/// Locks `cell` (with the GIL released); a scan that panicked leaves
/// nothing behind (the index is made again).
fn lock_index(cell: &Mutex<Option<Index>>) -> std::sync::MutexGuard<'_, Option<Index>> {
    cell.lock().unwrap_or_else(|poisoned| {
        let mut guard = poisoned.into_inner();
        *guard = None;
        cell.clear_poison();
        guard
    })
}

#[pymethods]
impl PyIndex {
    /// Checks the values exactly as `scan` does (same exceptions, same
    /// order), then opens the index (nothing is walked until `scan`).
    #[new]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        root: &Bound<'_, PyAny>,
        name_pattern: &Bound<'_, PyAny>,
        max_depth: &Bound<'_, PyAny>,
        max_file_tokens: &Bound<'_, PyAny>,
        max_file_count: &Bound<'_, PyAny>,
        max_total_tokens: &Bound<'_, PyAny>,
        gitignore: &Bound<'_, PyAny>,
    ) -> PyResult<PyIndex> {
        let config = config_from_values([
            name_pattern,
            max_depth,
            max_file_tokens,
            max_file_count,
            max_total_tokens,
            gitignore,
        ])?;
        let root = root_path(root)?.map(|root| match std::env::current_dir() {
            Ok(cwd) if root.is_relative() => cwd.join(root),
            _ => root,
        });
        let index = match &root {
            Some(root) => {
                let opened = py.detach(|| Index::open(root, config.clone()));
                Some(opened.map_err(|e| to_py_err(py, e))?)
            }
            None => None,
        };
        Ok(PyIndex {
            root,
            config,
            slot: Mutex::new(IndexSlot {
                pid: std::process::id(),
                index: Arc::new(Mutex::new(index)),
            }),
        })
    }

    /// The root's scan now: exactly what `scan` returns for the same root
    /// and values; the GIL is released while it runs. Concurrent calls take
    /// turns.
    fn scan<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let Some(root) = &self.root else {
            return empty_result(py);
        };
        let cell = self.cell();
        let pool = process_pool()?;
        let config = &self.config;
        let outcome = py.detach(|| {
            let mut guard = lock_index(&cell);
            let index = match guard.as_mut() {
                Some(index) => index,
                None => guard.insert(Index::open(root, config.clone())?),
            };
            in_pool(pool, || index.scan_detailed())
        });
        match outcome {
            Ok(scan) => result_to_py(py, &scan),
            Err(e) => Err(to_py_err(py, e)),
        }
    }

    /// What the index has done so far (`IndexStats` as plain objects).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let cell = self.cell();
        let json = py.detach(|| {
            let guard = lock_index(&cell);
            let mut stats = serde_json::to_value(
                guard
                    .as_ref()
                    .map(|i| i.stats().clone())
                    .unwrap_or_default(),
            )?;
            // What each symbolic link of the root costs on every scan.
            let links = guard.as_ref().and_then(|i| i.link_costs().pop());
            stats["links"] = serde_json::to_value(links.unwrap_or_default())?;
            serde_json::to_string(&stats)
        });
        let json =
            json.map_err(|e| PyRuntimeError::new_err(format!("cannot serialise the stats: {e}")))?;
        json_to_py(py, &json)
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    MODULE_PID.get_or_init(std::process::id);
    m.add_function(wrap_pyfunction!(scan, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(find, m)?)?;
    m.add_function(wrap_pyfunction!(count_tokens, m)?)?;
    m.add_function(wrap_pyfunction!(scan_many, m)?)?;
    m.add_function(wrap_pyfunction!(render, m)?)?;
    m.add_function(wrap_pyfunction!(audit, m)?)?;
    m.add_function(wrap_pyfunction!(check_ignore, m)?)?;
    m.add_function(wrap_pyfunction!(merge_audit_summaries, m)?)?;
    m.add_function(wrap_pyfunction!(merge_bundle, m)?)?;
    m.add_function(wrap_pyfunction!(context, m)?)?;
    m.add_function(wrap_pyfunction!(main, m)?)?;
    m.add_class::<PyIndex>()?;
    m.add(
        "DEFAULT_GITIGNORE",
        promptinclude::config::DEFAULT_GITIGNORE,
    )?;
    m.add("AUDIT_SCHEMA", promptinclude::audit::SCHEMA)?;
    Ok(())
}
