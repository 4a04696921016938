//! `knav serve`: the MCP server for coding agents, on stdio, built on rmcp.
//!
//! It serves the same envelopes as the CLI, rendered by the same code: a tool call is checked
//! into a [`tools::Call`], answered by [`crate::request::answer`] against a snapshot that
//! [`state::Server`] keeps fresh, and rendered as text or JSON. A failed call is the envelope
//! with `error` and `isError: true`; the server keeps serving.

pub mod prompts;
pub mod state;
pub mod tools;
pub mod watch;
pub mod wire;

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, Implementation, ListPromptsResult, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

use crate::envelope::Envelope;
use crate::render::{render, Format};
use crate::request::answer;
pub use state::ServeOptions;
use state::{NotReady, Server};
use tools::Call;

/// The MCP handler: the tool catalog and the server state.
#[derive(Clone)]
struct Handler {
    server: Arc<Server>,
}

impl Handler {
    /// Answers one call; `(text, is_error)`.
    fn call(&self, mut call: Call) -> (String, bool) {
        let server = &self.server;
        let format = call.format;
        if let Err(e) = self.range_to_review(&mut call) {
            let root = call
                .root
                .clone()
                .unwrap_or_else(|| server.default_root.display().to_string());
            return finish(Envelope::error(call.tool, &root, e), format);
        }
        let fallback_root = call
            .root
            .clone()
            .unwrap_or_else(|| server.default_root.display().to_string());
        let named = match &call.rev {
            Some(rev) if call.ask.is_some() && call.history.is_none() => {
                server.tree_at(call.root.as_deref(), rev)
            }
            _ => server.tree(call.root.as_deref()),
        };
        let tree = match named {
            Ok(t) => t,
            Err(e) => {
                let mut env = Envelope::error(call.tool, &fallback_root, e);
                env.next_tools = vec![call.tool];
                return finish(env, format);
            }
        };
        let (root_s, rev) = tree.answer_root();
        let not_ready = |n: NotReady| {
            let mut env = match n {
                // Retrying the same call is the next step.
                NotReady::Building(m) => Envelope::error(call.tool, &root_s, m),
                NotReady::Failed(m) => {
                    let mut env = Envelope::error(call.tool, &root_s, m);
                    if server.writable {
                        env.next_tools = vec!["update_index"];
                    }
                    env
                }
            };
            if env.next_tools.is_empty() {
                env.next_tools = vec![call.tool];
            }
            finish(env, format)
        };
        if let Some(edit) = &call.edit {
            let env = server
                .edit(&tree, edit)
                .unwrap_or_else(|e| Envelope::error(call.tool, &root_s, e));
            return finish(env, format);
        }
        if let Some((symbol, file)) = &call.history {
            let tip = crate::history::tip_of(call.rev.as_deref());
            if let Some(n) = tree.history_ready(server.writable, tip) {
                return not_ready(n);
            }
            let env = crate::history::answer(
                tree.root(),
                tree.index_dir(),
                symbol,
                file.as_deref(),
                call.rev.as_deref(),
                &call.page,
                false,
                &mut crate::progress::Progress::new(false),
            );
            return finish(env, format);
        }
        if call.ask.is_none() && call.compare.is_none() {
            if call.tool == "index_status" {
                return finish(tree.status(), format);
            }
            return match server.update(&tree, call.full) {
                Ok(env) => finish(env, format),
                Err(n) => not_ready(n),
            };
        }
        let mut page = call.page.clone();
        if let Some(arg) = &call.active_config {
            let within = tree.config_dirs();
            let config = within.and_then(|dirs| {
                crate::request::active_config_within(arg, tree.base_root(), Some(&dirs))
            });
            match config {
                Ok(c) => page.active = Some(c),
                Err(e) => {
                    let mut env = Envelope::error(call.tool, &root_s, e);
                    env.next_tools = vec![call.tool];
                    return finish(env, format);
                }
            }
        }
        let Some(ask) = call.ask else {
            let Some((symbol, a, b)) = &call.compare else {
                return finish(Envelope::error(call.tool, &root_s, "nothing asked"), format);
            };
            return match self.compare(&call, &page, symbol, a, b.as_deref()) {
                Ok(env) => finish(env, format),
                Err(n) => not_ready(n),
            };
        };
        let (snap, warning) = match server.snapshot(&tree) {
            Ok(s) => s,
            Err(n) => return not_ready(n),
        };
        let mut env = crate::index::store::answer_or_damage(&snap, || answer(&snap, page, &ask))
            .unwrap_or_else(|e| Envelope::error(call.tool, &root_s, e.to_string()));
        if let Some(w) = warning {
            env.warn(w);
        }
        if rev.is_some() {
            env.root = root_s;
            env.rev = rev;
        }
        finish(env, format)
    }
}

impl Handler {
    /// A review of a range becomes the review of the diff git gives for it, at its second
    /// revision (where what it adds is defined).
    fn range_to_review(&self, call: &mut Call) -> Result<(), String> {
        let Some((a, b)) = call.range.take() else {
            return Ok(());
        };
        if call.rev.is_some() {
            return Err("give range or rev, not both".into());
        }
        let base = self.server.tree(call.root.as_deref())?;
        let diff = crate::index::git::range_diff(base.root(), &a, &b, crate::diff::MAX_DIFF_BYTES)
            .map_err(|e| e.to_string())?;
        call.ask = Some(crate::request::Ask::Review { diff });
        call.rev = Some(b);
        Ok(())
    }

    /// compare_versions: `symbol` at revision `a` and at `b` (`None`: the served tree), each
    /// answered by its own snapshot; a revision not built yet is the first-build transient.
    fn compare(
        &self,
        call: &Call,
        page: &crate::query::Page,
        symbol: &str,
        a: &str,
        b: Option<&str>,
    ) -> Result<Envelope, NotReady> {
        let server = &self.server;
        let root = call.root.as_deref();
        let tree_a = server.tree_at(root, a).map_err(NotReady::Failed)?;
        let tree_b = match b {
            Some(b) => server.tree_at(root, b),
            None => server.tree(root),
        }
        .map_err(NotReady::Failed)?;
        let (snap_a, _) = server.snapshot(&tree_a)?;
        let (snap_b, warning) = server.snapshot(&tree_b)?;
        let (root_s, rev_a) = tree_a.answer_root();
        let (_, rev_b) = tree_b.answer_root();
        let side_a = crate::compare::Side {
            rev: rev_a,
            snap: &snap_a,
        };
        let side_b = crate::compare::Side {
            rev: rev_b,
            snap: &snap_b,
        };
        let mut env = crate::index::store::answer_or_damage(&snap_a, || {
            crate::compare::compare(&root_s, symbol, &side_a, &side_b, page)
        })
        .unwrap_or_else(|e| Envelope::error(call.tool, &root_s, e.to_string()));
        if let Some(w) = warning {
            env.warn(w);
        }
        Ok(env)
    }
}

fn finish(env: Envelope, format: Format) -> (String, bool) {
    (render(&env, format), env.error.is_some())
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .build(),
        )
        .with_server_info(Implementation::new("knav", env!("CARGO_PKG_VERSION")))
        .with_instructions(tools::instructions())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::catalog(
            &self.server.tools,
        )))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(prompts::list()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        prompts::get(&request.name, request.arguments.as_ref())
            .map(Into::into)
            .map_err(|e| ErrorData::invalid_params(e, None))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // A call whose arguments are wrong still gets its error in the format it asked for.
        let format = match request.arguments.as_ref().and_then(|a| a.get("format")) {
            Some(v) if v.as_str() == Some("json") => Format::Json,
            _ => Format::Text,
        };
        let parsed = tools::parse_call(&request.name, request.arguments).and_then(|call| {
            if self.server.tools.contains(&call.tool) {
                Ok(call)
            } else {
                Err(format!(
                    "{} is not served: this server lists {}; restart it with `knav serve --tools` \
                     naming its group, or change serve.tools in .knav.toml",
                    call.tool,
                    self.server.tools.join(", ")
                ))
            }
        });
        let (text, is_error) = match parsed {
            Ok(call) => {
                let me = self.clone();
                // Queries and refreshes are blocking work; the protocol loop stays responsive.
                match tokio::task::spawn_blocking(move || me.call(call)).await {
                    Ok(r) => r,
                    Err(e) => (
                        format!("Error: knav failed answering this call: {e}\n"),
                        true,
                    ),
                }
            }
            Err(e) => {
                let root = self.server.default_root.display().to_string();
                let tool = tools_name(&request.name);
                let mut env = Envelope::error(tool, &root, e);
                // A call to fix and repeat, or the tool most calls start with.
                env.next_tools = vec![if tool == "unknown" {
                    "find_definition"
                } else {
                    tool
                }];
                finish(env, format)
            }
        };
        let content = vec![ContentBlock::text(text)];
        Ok(if is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        }
        .into())
    }
}

/// The envelope's tool name for a call that could not be parsed.
fn tools_name(name: &str) -> &'static str {
    tools::catalog_names()
        .iter()
        .copied()
        .find(|n| *n == name)
        .unwrap_or("unknown")
}

/// Runs the server on stdio until the client closes it; returns the exit code.
pub fn run(opts: &ServeOptions) -> i32 {
    // A file truncated while mapped raises SIGBUS, which would end every session: read instead.
    crate::beneath::MAP_SOURCES.store(false, std::sync::atomic::Ordering::Relaxed);
    // What clients see does not depend on the GIT_* variables of the shell that started it.
    crate::index::git::scrub_environment();
    let server = match Server::new(opts) {
        Ok(s) => Arc::new(s),
        Err(e) => {
            eprintln!("knav serve: {e}");
            return 1;
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("knav serve: cannot start the async runtime: {e}");
            return 1;
        }
    };
    let handler = Handler { server };
    let code = runtime.block_on(async move {
        let wire = wire::Wire::new(
            tokio::io::BufReader::new(tokio::io::stdin()),
            tokio::io::stdout(),
        );
        let service = match handler.serve(wire).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("knav serve: the MCP session did not start: {e}");
                return 1;
            }
        };
        match service.waiting().await {
            Ok(_) => 0,
            Err(e) => {
                eprintln!("knav serve: {e}");
                1
            }
        }
    });
    // A background first build may still run: it finishes on its own or dies with us; the
    // index it writes is published atomically either way.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    code
}
