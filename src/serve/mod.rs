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
use crate::tools::Order;
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
        let format = call.format;
        // The order is carried out; the call keeps the rest (a diff is not copied).
        let order = std::mem::replace(&mut call.order, Order::Status { verbose: false });
        let mut served = Served {
            handler: self,
            call,
        };
        finish(order.carry_out(&mut served), format)
    }
}

/// One MCP call's order carried out ([`Order::carry_out`]) for the tree the call names.
struct Served<'a> {
    handler: &'a Handler,
    call: Call,
}

impl Served<'_> {
    /// The root an answer names before the tree is known.
    fn fallback_root(&self) -> String {
        self.call
            .root
            .clone()
            .unwrap_or_else(|| self.handler.server.default_root.display().to_string())
    }

    /// The tree the call names (at its revision when `at_rev`), or the error to answer.
    fn tree(&self, at_rev: bool) -> Result<Arc<state::Tree>, Box<Envelope>> {
        let server = &self.handler.server;
        let named = match &self.call.rev {
            Some(rev) if at_rev => server.tree_at(self.call.root.as_deref(), rev),
            _ => server.tree(self.call.root.as_deref()),
        };
        named.map_err(|e| {
            let mut env = Envelope::error(self.call.tool, &self.fallback_root(), e);
            env.next_tools = vec![self.call.tool];
            Box::new(env)
        })
    }

    /// The answer while the index of `root_s` is not ready: retrying the same call is the next
    /// step, or refreshing the index when its build failed.
    fn not_ready(&self, root_s: &str, n: NotReady) -> Envelope {
        let tool = self.call.tool;
        let mut env = match n {
            NotReady::Building(m) => Envelope::error(tool, root_s, m),
            NotReady::Failed(m) => {
                let mut env = Envelope::error(tool, root_s, m);
                if self.handler.server.writable {
                    env.next_tools = vec!["update_index"];
                }
                env
            }
        };
        if env.next_tools.is_empty() {
            env.next_tools = vec![tool];
        }
        env
    }

    /// The call's page with its active configuration read (a `.config` where the tree's
    /// settings allow), or the error to answer.
    fn page(&self, tree: &state::Tree, root_s: &str) -> Result<crate::query::Page, Box<Envelope>> {
        let mut page = self.call.page.clone();
        if let Some(arg) = &self.call.active_config {
            let within = tree.config_dirs();
            let config = within.and_then(|dirs| {
                crate::request::active_config_within(arg, tree.base_root(), Some(&dirs))
            });
            match config {
                Ok(c) => page.active = Some(c),
                Err(e) => {
                    let mut env = Envelope::error(self.call.tool, root_s, e);
                    env.next_tools = vec![self.call.tool];
                    return Err(Box::new(env));
                }
            }
        }
        Ok(page)
    }
}

impl crate::tools::CarryOut for Served<'_> {
    type Out = Envelope;

    fn ask(&mut self, ask: crate::request::Ask) -> Envelope {
        let tree = match self.tree(true) {
            Ok(t) => t,
            Err(env) => return *env,
        };
        let (root_s, rev) = tree.answer_root();
        let page = match self.page(&tree, &root_s) {
            Ok(p) => p,
            Err(env) => return *env,
        };
        let (snap, warning) = match self.handler.server.snapshot(&tree) {
            Ok(s) => s,
            Err(n) => return self.not_ready(&root_s, n),
        };
        let mut env = crate::index::store::answer_or_damage(&snap, || answer(&snap, page, &ask))
            .unwrap_or_else(|e| Envelope::error(self.call.tool, &root_s, e.to_string()));
        if let Some(w) = warning {
            env.warn(w);
        }
        if rev.is_some() {
            env.root = root_s;
            env.rev = rev;
        }
        env
    }

    fn update(&mut self, full: bool, _verify: bool, _history: bool) -> Envelope {
        let tree = match self.tree(false) {
            Ok(t) => t,
            Err(env) => return *env,
        };
        match self.handler.server.update(&tree, full) {
            Ok(env) => env,
            Err(n) => self.not_ready(&tree.answer_root().0, n),
        }
    }

    fn history(&mut self, symbol: String, file: Option<String>) -> Envelope {
        let tree = match self.tree(false) {
            Ok(t) => t,
            Err(env) => return *env,
        };
        let tip = crate::history::tip_of(self.call.rev.as_deref());
        if let Some(n) = tree.history_ready(self.handler.server.writable, tip) {
            return self.not_ready(&tree.answer_root().0, n);
        }
        crate::history::answer(
            tree.root(),
            tree.index_dir(),
            &symbol,
            file.as_deref(),
            self.call.rev.as_deref(),
            &self.call.page,
            false,
            &mut crate::progress::Progress::new(false),
        )
    }

    fn status(&mut self, _verbose: bool) -> Envelope {
        match self.tree(false) {
            Ok(tree) => tree.status(),
            Err(env) => *env,
        }
    }

    fn edit(&mut self, edit: crate::edit::Edit) -> Envelope {
        let tree = match self.tree(false) {
            Ok(t) => t,
            Err(env) => return *env,
        };
        self.handler
            .server
            .edit(&tree, &edit)
            .unwrap_or_else(|e| Envelope::error(self.call.tool, &tree.answer_root().0, e))
    }

    /// A review of a range becomes the review of the diff git gives for it, at its second
    /// revision (where what it adds is defined).
    fn review_range(&mut self, a: String, b: String) -> Envelope {
        if self.call.rev.is_some() {
            let e = "give range or rev, not both";
            return Envelope::error(self.call.tool, &self.fallback_root(), e);
        }
        let diff = self
            .handler
            .server
            .tree(self.call.root.as_deref())
            .and_then(|base| {
                crate::index::git::range_diff(base.root(), &a, &b, crate::diff::MAX_DIFF_BYTES)
                    .map_err(|e| e.to_string())
            });
        match diff {
            Ok(diff) => {
                self.call.rev = Some(b);
                self.ask(crate::request::Ask::Review { diff })
            }
            Err(e) => Envelope::error(self.call.tool, &self.fallback_root(), e),
        }
    }

    fn compare(&mut self, symbol: String, a: String, b: Option<String>) -> Envelope {
        let tree = match self.tree(false) {
            Ok(t) => t,
            Err(env) => return *env,
        };
        let root_s = tree.answer_root().0;
        let page = match self.page(&tree, &root_s) {
            Ok(p) => p,
            Err(env) => return *env,
        };
        match self
            .handler
            .compare(&self.call, &page, &symbol, &a, b.as_deref())
        {
            Ok(env) => env,
            Err(n) => self.not_ready(&root_s, n),
        }
    }
}

impl Handler {
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
