//! `promptinclude mcp`: a Model Context Protocol server on stdio, built on
//! the official Rust SDK (`rmcp`).
//!
//! It follows MCP revision **2025-06-18**
//! (<https://modelcontextprotocol.io/specification/2025-06-18>) and answers
//! `initialize` with that version, whichever the client asks for
//! ([`PROTOCOL_VERSION`]). Where rmcp does not hold a session to that
//! revision's rules (ids used twice, requests before `initialize`,
//! batches), the transport does ([`transport`]).
//!
//! What it offers ("Server features": tools, resources, prompts; "Client
//! features": roots):
//!
//! * the tool `prompt_includes`: each root's rendered section, or with
//!   `"audit": true` a table of its rule files (status, tokens); `"root"`
//!   picks one root;
//! * one resource per rule file in each root's result, `file://` URI, named by
//!   its path under the root, described by its status and tokens; reading it
//!   gives the text the section includes (cropped text when cropped, empty
//!   when skipped);
//! * the prompt `prompt_includes`, one user message holding the section(s).
//!
//! Roots: `--root` when given; else the client's `roots/list` when it
//! declares the roots capability; else the current directory. The `--root`
//! roots are scanned through a live index (`promptinclude::index`, made at
//! the first request and kept for the server's life): a request lists and
//! reads only what changed since the last one, with the answer a fresh scan
//! gives. Roots the client names, the current directory, and a `--root`
//! picked by the tool's `root` argument are scanned afresh on every request
//! (milliseconds). Either way edits show at once. Each root gets the
//! configuration the host would give it (`.a0proj`, `A0_SET_`, the flags),
//! as with `render`. A client that declares roots but does not
//! answer `roots/list` within [`ROOTS_WAIT`] gets an error (a tool result
//! with `isError`, a JSON-RPC error elsewhere) naming `--root`, not a scan
//! of whatever the current directory is; a client that answers with an
//! error, or with no `file://` root, gets the current directory.
//!
//! Safe by default, as the hooks are (`docs/security.md`): rule files are
//! read under [`promptinclude::trust::ReadPolicy::unattended`] (nothing whose
//! real path leaves the root, nothing in `.git/`, nothing over 4 MiB, no
//! untracked file a project's own `name_pattern` adds; `--links`,
//! `--max-file-bytes`, `--trust-project-patterns` relax it), and a root the
//! client names, or the current directory, that is `/` or the home
//! directory is not scanned (`--root` is the user's own and is served as
//! given).
//!
//! JSON-RPC 2.0 (<https://www.jsonrpc.org/specification>) errors: what is
//! not a message gets `-32700` or `-32600` from the transport
//! ([`transport`]); a known method with params that do not fit it (such as
//! `tools/call` without params) gets `-32602`, and so do arguments that
//! the tool or the prompt does not take or of another JSON type than its
//! schema says (`null` stands for an argument not given).
//!
//! Scans run on tokio's blocking threads (the walk itself on the shared
//! rayon pool), so the runtime thread goes on reading and answering
//! (`ping`, other requests) during one. When the client cancels a request
//! (`notifications/cancelled`, or a `roots/list` wait is dropped with it),
//! its handler stops waiting at once and nothing is sent (rmcp drops the
//! answer to a cancelled request). In the background, what stops: no
//! further root of the request is planned or walked, and no further rule
//! file is read (a read after the cancel gives "unreadable" at once, so the
//! budget pass runs out fast), except that a scan of the `--root` roots
//! through the index, once started, finishes (the index stays current),
//! though no further root is rendered. What finishes: the walk of the root
//! under way (the library's walk has no stop), a read already under way, and
//! that root's budget pass and rendering over what was read; the result is
//! dropped. When the client closes stdin, answers done within 5 s (rmcp's
//! drain) are sent, later ones are not, and the server exits 0 without
//! waiting for scans still running (they end with the process).

use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use percent_encoding::{percent_decode_str, percent_encode, AsciiSet, NON_ALPHANUMERIC};
use promptinclude::agents::{self, Agent};
use promptinclude::audit::relative;
use promptinclude::batch::Batch;
use promptinclude::index::{BatchIndex, IndexOptions};
use promptinclude::trust::is_too_wide;
use promptinclude::{RootScan, Status};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientResult, ContentBlock,
    CustomRequest, CustomResult, ErrorCode, GetPromptRequestParams, GetPromptResponse,
    GetPromptResult, Implementation, JsonObject, ListPromptsResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, Prompt, PromptArgument, PromptMessage,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, Role, ServerCapabilities, ServerConfig, ServerRequest, Tool,
};
// Roots are deprecated from protocol 2026-07-28 on (SEP-2577).
#[allow(deprecated)]
use rmcp::model::{ListRootsRequest, ListRootsResult};
use rmcp::service::{PeerRequestOptions, RequestContext, ServiceError};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use super::args::McpArgs;
use super::commands::{render_scanned, scan_and_render_until};
use super::exit::ExitStatus;
use super::settings::{init_threads, resolver};
use transport::LineTransport;

mod session;
mod transport;

/// The MCP revision the server follows (see the module docs).
const PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V_2025_06_18;

/// The tool's and the prompt's name (the pi extension's tool has it too).
const NAME: &str = "prompt_includes";

/// The tool's arguments and their JSON types.
const TOOL_ARGS: &[(&str, &str)] = &[("root", "string"), ("audit", "boolean")];

/// The tool that shows what another agent loads as context files.
const CONTEXT_TOOL: &str = "agent_context";

/// Its arguments and their JSON types.
const CONTEXT_ARGS: &[(&str, &str)] = &[("agent", "string"), ("cwd", "string")];

/// The prompt's arguments and their JSON types.
const PROMPT_ARGS: &[(&str, &str)] = &[("root", "string")];

/// How long a request waits for the client's answer to `roots/list`.
const ROOTS_WAIT: Duration = Duration::from_secs(5);

/// `promptinclude mcp`: serves until the client closes stdin.
pub fn mcp(args: &McpArgs) -> Result<ExitStatus> {
    init_threads(None)?;
    // Planned once: a bad --config or A0_SET_ value stops the server at
    // start, and scanners compiled for a configuration serve every request.
    // Its roots are the `--root` ones (the index's); other roots come with
    // each request and are planned then.
    let batch = Batch::plan_with_policy(
        &args.roots,
        &resolver(&args.config)?,
        args.read.policy(true),
    )?;
    let server = Server {
        policy: args.read.policy(true),
        roots: args.roots.clone(),
        batch: Arc::new(batch),
        index: Arc::default(),
    };
    // Time for rmcp's drain of the answers in flight at end of input, IO
    // for the non-blocking pipes.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .on_thread_start(crate::interrupt::block_in_this_thread)
        .build()
        .context("cannot start the MCP server's runtime")?;
    let served = runtime.block_on(async {
        let (stdin, stdout) = rmcp::transport::stdio_pipes();
        let running = server
            .serve(LineTransport::new(stdin, stdout))
            .await
            .context("MCP handshake failed")?;
        running.waiting().await.context("MCP server stopped")?;
        Ok(ExitStatus::Success)
    });
    // Scans cancelled or cut off at end of input may still be running on
    // blocking threads; they end with the process.
    runtime.shutdown_background();
    served
}

/// The server: the roots from `--root` and the planned configuration rule.
#[derive(Clone)]
struct Server {
    /// How rule files are read, and what `agent_context` may tell of the
    /// files an agent reads ([`agents::unattended`]).
    policy: promptinclude::trust::ReadPolicy,
    roots: Vec<PathBuf>,
    batch: Arc<Batch>,
    /// The live index of the `--root` roots (`batch`'s), from the first
    /// request that scans them on.
    index: Arc<Mutex<Option<BatchIndex>>>,
}

/// One root's scan and section, or why it has none.
struct Rendered {
    root: PathBuf,
    outcome: Result<(RootScan, String), String>,
}

impl Server {
    /// The roots to serve for this request. (Roots are deprecated from
    /// protocol 2026-07-28 on, SEP-2577, but clients of every earlier
    /// revision use them.)
    #[allow(deprecated)]
    async fn roots(&self, context: &RequestContext<RoleServer>) -> Result<Vec<PathBuf>, ErrorData> {
        if !self.roots.is_empty() {
            return Ok(self.roots.clone());
        }
        let declares_roots = context
            .peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        if declares_roots {
            match list_roots(&context.peer).await {
                Ok(listed) => {
                    let roots: Vec<PathBuf> = listed
                        .roots
                        .iter()
                        .filter_map(|r| file_uri_path(&r.uri))
                        .collect();
                    if !roots.is_empty() {
                        return Ok(roots);
                    }
                }
                Err(ServiceError::Timeout { .. }) => {
                    return Err(ErrorData::internal_error(
                        format!(
                            "the client did not answer roots/list within {} s; \
                             start the server with --root DIR to serve a root without asking",
                            ROOTS_WAIT.as_secs()
                        ),
                        None,
                    ))
                }
                Err(_) => {}
            }
        }
        Ok(std::env::current_dir().into_iter().collect())
    }

    /// The `agent_context` tool: the text report of `promptinclude context`
    /// for a directory inside the served roots. It names files and counts
    /// their bytes and tokens but never returns their text; and of a file
    /// the reading policy withholds (a `CLAUDE.md` linked to `~/.npmrc`) it
    /// gives the path and the reason alone, nothing derived from its text
    /// ([`agents::unattended`]).
    async fn agent_context(
        &self,
        context: &RequestContext<RoleServer>,
        args: Option<&JsonObject>,
    ) -> Result<CallToolResult, ErrorData> {
        let Some(agent) = string_arg(args, "agent").and_then(Agent::from_name) else {
            return Err(ErrorData::invalid_params(
                format!("argument `agent` must be one of: {}", Agent::names()),
                None,
            ));
        };
        let roots = self.roots(context).await?;
        // The directory, and the served root it is in (both resolved).
        let inside = |dir: &Path| {
            let dir = std::fs::canonicalize(dir).ok()?;
            roots
                .iter()
                .filter_map(|r| std::fs::canonicalize(r).ok())
                .find(|r| dir.starts_with(r))
                .map(|root| (dir, root))
        };
        let cwd = match string_arg(args, "cwd") {
            Some(cwd) => PathBuf::from(cwd),
            None => roots.first().cloned().unwrap_or_else(|| PathBuf::from(".")),
        };
        let Some((cwd, root)) = inside(&cwd) else {
            return Err(ErrorData::invalid_params(
                format!(
                    "{} is not a directory inside the roots this server serves",
                    cwd.display()
                ),
                None,
            ));
        };
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default();
        let policy = self.policy.clone();
        let report = tokio::task::spawn_blocking(move || {
            let env = |name: &str| std::env::var_os(name);
            let start = agents::Start {
                cwd: &cwd,
                home: &home,
                env: &env,
            };
            agents::unattended::context(agent, &start, &root, &policy)
                .map(|c| agents::report::text(&c, false))
        })
        .await
        .map_err(|e| ErrorData::internal_error(format!("the tool failed: {e}"), None))?;
        Ok(match report {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Err(e) => {
                CallToolResult::error(vec![ContentBlock::text(promptinclude::full_message(&e))])
            }
        })
    }

    /// Scans and renders every root (or only `only`); stops when the
    /// request is cancelled.
    async fn render(
        &self,
        context: &RequestContext<RoleServer>,
        only: Option<&str>,
    ) -> Result<Vec<Rendered>, ErrorData> {
        tokio::select! {
            rendered = self.render_roots(context, only) => rendered,
            () = context.ct.cancelled() => {
                Err(ErrorData::internal_error("the request was cancelled", None))
            }
        }
    }

    /// [`Server::render`], the scans on a blocking thread.
    async fn render_roots(
        &self,
        context: &RequestContext<RoleServer>,
        only: Option<&str>,
    ) -> Result<Vec<Rendered>, ErrorData> {
        let mut roots = self.roots(context).await?;
        if let Some(only) = only {
            let wanted = Path::new(only);
            roots.retain(|r| r == wanted);
            if roots.is_empty() {
                return Err(ErrorData::invalid_params(
                    format!("{only} is not one of the roots this server serves"),
                    None,
                ));
            }
        }
        let batch = Arc::clone(&self.batch);
        let cancel = Cancel::default();
        let stop = Arc::clone(&cancel.0);
        // Roots the client names (or the current directory) are checked;
        // `--root` is the user's own command line. All the `--root` roots
        // are scanned through the index; one of them picked by name is
        // scanned afresh (the index would scan every root).
        let scan = if self.roots.is_empty() || only.is_some() {
            let checked = self.roots.is_empty();
            tokio::task::spawn_blocking(move || scan_roots(&batch, roots, checked, &stop)).await
        } else {
            let index = Arc::clone(&self.index);
            tokio::task::spawn_blocking(move || scan_indexed(&batch, &index, &roots, &stop)).await
        };
        scan.map_err(|e| ErrorData::internal_error(format!("the scan failed: {e}"), None))
    }
}

/// Asks the client for its roots, waiting at most [`ROOTS_WAIT`] (rmcp then
/// tells the client the request is cancelled).
#[allow(deprecated)]
async fn list_roots(peer: &Peer<RoleServer>) -> Result<ListRootsResult, ServiceError> {
    let request = ServerRequest::ListRootsRequest(ListRootsRequest::default());
    let answer = peer
        .send_request_with_option(request, PeerRequestOptions::with_timeout(ROOTS_WAIT))
        .await?
        .await_response()
        .await?;
    match answer {
        ClientResult::ListRootsResult(listed) => Ok(listed),
        _ => Err(ServiceError::UnexpectedResponse),
    }
}

/// Tells a request's scans to stop when dropped: when the request is
/// cancelled (its future is dropped) or done (the scans are over).
#[derive(Default)]
struct Cancel(Arc<AtomicBool>);

impl Drop for Cancel {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Scans and renders `roots` in turn, on the calling thread; once `stop` is
/// set, starts no further root and reads no further rule file (what it
/// returns then is never served). With `checked`, a root that is `/` or the
/// home directory is not scanned (an error for that root instead).
fn scan_roots(
    batch: &Batch,
    roots: Vec<PathBuf>,
    checked: bool,
    stop: &AtomicBool,
) -> Vec<Rendered> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty());
    let mut rendered = Vec::with_capacity(roots.len());
    for root in roots {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        if checked && is_too_wide(&root, home.as_deref().map(Path::new)) {
            let outcome = Err(
                "the server never scans / or the home directory for a client; \
                               open a project, or start the server with --root DIR"
                    .to_string(),
            );
            rendered.push(Rendered { root, outcome });
            continue;
        }
        let outcome = match scan_and_render_until(batch, &root, || stop.load(Ordering::Relaxed)) {
            Ok((scan, _)) if !scan.is_dir => Err("not a directory".to_string()),
            Ok(done) => Ok(done),
            Err(e) => Err(e.to_string()),
        };
        rendered.push(Rendered { root, outcome });
    }
    rendered
}

/// Scans and renders `roots` (`batch`'s, the `--root` ones) through the
/// live index, made on first use; the answer is [`scan_roots`]'s. Once
/// `stop` is set, it starts no scan and renders no further root (what it
/// returns then is never served); a scan under way finishes.
fn scan_indexed(
    batch: &Arc<Batch>,
    index: &Mutex<Option<BatchIndex>>,
    roots: &[PathBuf],
    stop: &AtomicBool,
) -> Vec<Rendered> {
    // A scan that panicked leaves no half-updated index behind it that
    // another scan could trust less than a fresh one: start over.
    let mut index = match index.lock() {
        Ok(index) => index,
        Err(poisoned) => {
            index.clear_poison();
            let mut index = poisoned.into_inner();
            *index = None;
            index
        }
    };
    if stop.load(Ordering::Relaxed) {
        return Vec::new();
    }
    let index =
        index.get_or_insert_with(|| BatchIndex::new(Arc::clone(batch), IndexOptions::default()));
    let scans = index.scan();
    roots
        .iter()
        .zip(scans)
        .take_while(|_| !stop.load(Ordering::Relaxed))
        .map(|(root, scan)| {
            let outcome = match render_scanned(batch, root, scan) {
                Ok((scan, _)) if !scan.is_dir => Err("not a directory".to_string()),
                Ok(done) => Ok(done),
                Err(e) => Err(e.to_string()),
            };
            Rendered {
                root: root.clone(),
                outcome,
            }
        })
        .collect()
}

/// The text the tool and the prompt give for `rendered` roots: a root's
/// section as is when it is the only one; with several, each under a
/// `## Root: PATH` line. A root without a result gets one error line.
fn sections(rendered: &[Rendered]) -> String {
    let many = rendered.len() > 1;
    let mut text = String::new();
    for r in rendered {
        if many {
            text.push_str(&format!("## Root: {}\n\n", r.root.display()));
        }
        match &r.outcome {
            Ok((_, section)) => text.push_str(section),
            Err(e) => text.push_str(&format!("promptinclude: root {}: {e}\n", r.root.display())),
        }
    }
    text
}

/// The audit table: per root, each rule file's status and tokens.
fn audit(rendered: &[Rendered]) -> String {
    let mut text = String::new();
    for r in rendered {
        text.push_str(&format!("Prompt includes for {}\n", r.root.display()));
        match &r.outcome {
            Err(e) => text.push_str(&format!("error: {e}\n")),
            Ok((scan, _)) => {
                let result = scan.result();
                let abs_root = scan.abs_root.to_string_lossy();
                text.push_str("STATUS   TOKENS  FILE\n");
                for f in &result.files {
                    text.push_str(&format!(
                        "{:<8} {:>6}  {}\n",
                        f.status.as_str(),
                        f.token_count,
                        relative(&f.path, &abs_root)
                    ));
                }
                text.push_str(&format!(
                    "{} rule files included, {} more skipped to fit\n",
                    result
                        .files
                        .iter()
                        .filter(|f| f.status != Status::Skipped)
                        .count(),
                    result.skipped_count
                ));
            }
        }
        text.push('\n');
    }
    text
}

/// What [`file_uri`] percent-encodes: every byte but the unreserved
/// characters (RFC 3986) and `/`.
const URI_PATH: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

// Not `url` (`Url::from_file_path`, `to_file_path`), which cannot do either
// exactly: its encode set is fixed and leaves `[`, `]`, `^`, `|` and the
// sub-delimiters raw (the first four are not allowed in an RFC 3986 path,
// which MCP's `uri` is), and its parser is the URL Standard's, which drops
// `..` and `%2e%2e` segments and a query or fragment, takes `\` for `/`,
// accepts `file:/p` and `FILE:p`, and keeps a bad `%` escape as text. It
// also brings in `idna` and ICU4X for a host that can only be `localhost`.
// `percent-encoding` is the encoder inside `url`.

/// The `file://` URI of an absolute path (RFC 8089; bytes other than
/// unreserved characters and `/` percent-encoded).
fn file_uri(path: &Path) -> String {
    let path = percent_encode(path.as_os_str().as_bytes(), URI_PATH);
    format!("file://{path}")
}

/// The path of a `file://` URI (`file:///p` or `file://localhost/p`); none
/// for anything else or a bad escape.
fn file_uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    // `percent_decode` keeps a `%` that is not followed by two hex digits.
    let escapes_ok = rest.split('%').skip(1).all(|after| {
        after
            .as_bytes()
            .get(..2)
            .is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit))
    });
    let bytes: Vec<u8> = percent_decode_str(rest).collect();
    escapes_ok.then(|| PathBuf::from(std::ffi::OsString::from_vec(bytes)))
}

/// The string argument `key`, if given.
fn string_arg<'a>(args: Option<&'a JsonObject>, key: &str) -> Option<&'a str> {
    args?.get(key)?.as_str()
}

/// Checks `args` against the names and JSON types `takes` lists (`null`
/// stands for an argument not given): `-32602` naming the first argument
/// that is not taken or of another type.
fn check_args(args: Option<&JsonObject>, takes: &[(&str, &str)]) -> Result<(), ErrorData> {
    for (key, value) in args.into_iter().flatten() {
        let Some((_, wanted)) = takes.iter().find(|(name, _)| name == key) else {
            let names: Vec<String> = takes.iter().map(|(name, _)| format!("`{name}`")).collect();
            return Err(ErrorData::invalid_params(
                format!("unknown argument {key:?}; it takes {}", names.join(" and ")),
                None,
            ));
        };
        let given = json_type(value);
        if given != "null" && given != *wanted {
            return Err(ErrorData::invalid_params(
                format!("argument `{key}` must be a {wanted}, not a {given}"),
                None,
            ));
        }
    }
    Ok(())
}

/// The JSON Schema type name of `value`.
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Why `request`'s params do not fit `T`, its method's params.
fn params_error<T: serde::de::DeserializeOwned>(request: &CustomRequest) -> String {
    match request.params_as::<T>() {
        Ok(None) => "params missing".to_string(),
        Ok(Some(_)) => "params of another shape".to_string(),
        Err(e) => e.to_string(),
    }
}

impl ServerHandler for Server {
    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        std::borrow::Cow::Borrowed(std::slice::from_ref(&PROTOCOL_VERSION))
    }

    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_prompts()
            .build();
        ServerConfig::new(capabilities)
            .with_protocol_version(PROTOCOL_VERSION)
            .with_server_info(Implementation::new(
                "promptinclude",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(
                "The project's prompt-include rule files (*.promptinclude.md): follow the \
                 section from the prompt_includes prompt or tool; call the tool with \
                 {\"audit\": true} to see which rule files apply, their status and tokens.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "root": {"type": "string", "description": "Only this root (one of the server's roots, as listed)"},
                "audit": {"type": "boolean", "description": "The rule files' statuses and tokens instead of the section"}
            },
            "additionalProperties": false
        });
        let serde_json::Value::Object(schema) = schema else {
            return Err(ErrorData::internal_error("tool schema", None));
        };
        let tool = Tool::new(
            NAME,
            "The project's prompt-include section (rendered from its *.promptinclude.md rule \
             files, within the token budgets), or with audit=true which rule files apply, \
             their status and tokens",
            Arc::new(schema),
        );
        let context_schema = serde_json::json!({
            "type": "object",
            "properties": {
                "agent": {"type": "string", "enum": Agent::ALL.map(Agent::name), "description": "The agent to model"},
                "cwd": {"type": "string", "description": "The directory the agent is started in: one of the server's roots or a directory inside one (default: the first root)"}
            },
            "required": ["agent"],
            "additionalProperties": false
        });
        let serde_json::Value::Object(context_schema) = context_schema else {
            return Err(ErrorData::internal_error("tool schema", None));
        };
        let context_tool = Tool::new(
            CONTEXT_TOOL,
            "Which context files another agent (Codex) loads when started in a directory: each \
             file with its bytes, tokens and what became of it (loaded, truncated, shadowed, \
             blank, not read), and the total against the agent's limit. Names and sizes only, \
             never the files' text",
            Arc::new(context_schema),
        );
        Ok(ListToolsResult::with_all_items(vec![tool, context_tool]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name == CONTEXT_TOOL {
            let args = request.arguments.as_ref();
            check_args(args, CONTEXT_ARGS)?;
            return self.agent_context(&context, args).await.map(Into::into);
        }
        if request.name != NAME {
            return Err(ErrorData::invalid_params(
                format!("no tool named {}", request.name),
                None,
            ));
        }
        let args = request.arguments.as_ref();
        check_args(args, TOOL_ARGS)?;
        let want_audit = args
            .and_then(|a| a.get("audit"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let result = match self.render(&context, string_arg(args, "root")).await {
            Err(e) => CallToolResult::error(vec![ContentBlock::text(e.message.to_string())]),
            Ok(rendered) => {
                let text = if want_audit {
                    audit(&rendered)
                } else {
                    sections(&rendered)
                };
                if rendered.iter().all(|r| r.outcome.is_err()) {
                    CallToolResult::error(vec![ContentBlock::text(text)])
                } else {
                    CallToolResult::success(vec![ContentBlock::text(text)])
                }
            }
        };
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let mut resources = Vec::new();
        for r in self.render(&context, None).await? {
            let Ok((scan, _)) = &r.outcome else { continue };
            let abs_root = scan.abs_root.to_string_lossy();
            for f in &scan.result().files {
                let name = relative(&f.path, &abs_root).to_string();
                let tokens = if f.status == Status::Skipped {
                    "not included".to_string()
                } else {
                    format!("{} tokens", f.token_count)
                };
                resources.push(
                    Resource::new(file_uri(Path::new(&f.path)), name)
                        .with_description(format!("{}, {tokens}", f.status.as_str()))
                        .with_mime_type("text/markdown"),
                );
            }
        }
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let not_found =
            || ErrorData::resource_not_found(format!("no rule file {}", request.uri), None);
        let path = file_uri_path(&request.uri).ok_or_else(not_found)?;
        for r in self.render(&context, None).await? {
            let Ok((scan, _)) = &r.outcome else { continue };
            if let Some(f) = scan
                .result()
                .files
                .iter()
                .find(|f| Path::new(&f.path) == path)
            {
                let contents = ResourceContents::text(f.content.clone(), request.uri.clone())
                    .with_mime_type("text/markdown");
                return Ok(ReadResourceResult::new(vec![contents]).into());
            }
        }
        Err(not_found())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let root = PromptArgument::new("root")
            .with_description("Only this root (default: every root)")
            .with_required(false);
        let prompt = Prompt::new(
            NAME,
            Some("The project's prompt-include rules, to follow in this conversation"),
            Some(vec![root]),
        );
        Ok(ListPromptsResult::with_all_items(vec![prompt]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name != NAME {
            return Err(ErrorData::invalid_params(
                format!("no prompt named {}", request.name),
                None,
            ));
        }
        let args = request.arguments.as_ref();
        check_args(args, PROMPT_ARGS)?;
        let rendered = self.render(&context, string_arg(args, "root")).await?;
        let message = PromptMessage::new_text(Role::User, sections(&rendered));
        Ok(GetPromptResult::new(vec![message])
            .with_description("The project's prompt-include rules")
            .into())
    }

    /// rmcp hands over a request of a method it knows as a custom one when
    /// its params do not fit that method's: `-32602` for those (`-32601`,
    /// as before, for any other method).
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let why = match request.method.as_str() {
            "tools/call" => params_error::<CallToolRequestParams>(&request),
            "prompts/get" => params_error::<GetPromptRequestParams>(&request),
            "resources/read" => params_error::<ReadResourceRequestParams>(&request),
            "tools/list" | "prompts/list" | "resources/list" => {
                params_error::<PaginatedRequestParams>(&request)
            }
            _ => {
                return Err(ErrorData::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    request.method,
                    None,
                ))
            }
        };
        Err(ErrorData::invalid_params(
            format!("{}: {why}", request.method),
            None,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_round_trip_any_bytes() {
        let path = Path::new("/tmp/a b/ü%/x.promptinclude.md");
        let uri = file_uri(path);
        assert_eq!(uri, "file:///tmp/a%20b/%C3%BC%25/x.promptinclude.md");
        assert_eq!(file_uri_path(&uri).as_deref(), Some(path));
        // Not UTF-8, and every byte that is not unreserved (nor `/`).
        let mut bytes = b"/\xff\x80/.-_~".to_vec();
        bytes.extend((0u8..0x80).filter(|b| !b.is_ascii_alphanumeric() && !b"/-._~".contains(b)));
        let odd = PathBuf::from(std::ffi::OsString::from_vec(bytes));
        let uri = file_uri(&odd);
        assert!(
            uri.starts_with("file:///%FF%80/.-_~%00%01")
                && uri.ends_with("%5B%5C%5D%5E%60%7B%7C%7D%7F"),
            "{uri}"
        );
        assert_eq!(file_uri_path(&uri), Some(odd));
        assert_eq!(
            file_uri_path("file://localhost/p").as_deref(),
            Some(Path::new("/p"))
        );
        // Taken as written: no URL Standard normalisation.
        for (uri, path) in [
            ("file:///a/%2e%2E/../b", "/a/../../b"),
            ("file:///a\\b?c#d", "/a\\b?c#d"),
            ("file:///%25%41%c3%bc", "/%Aü"),
        ] {
            assert_eq!(
                file_uri_path(uri).as_deref(),
                Some(Path::new(path)),
                "{uri}"
            );
        }
        for bad in [
            "http://x/p",
            "file://host/p",
            "file:///%zz",
            "file:///%4",
            "file:///%+4",
            "file:///%%41",
            "file:/p",
            "FILE:///p",
        ] {
            assert_eq!(file_uri_path(bad), None, "{bad}");
        }
    }
}
