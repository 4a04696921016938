//! `knav serve` driven by the official Rust MCP SDK's client (rmcp) over a child process's
//! stdio: the handshake, the tool list and calls as a third-party client sees them.

use rmcp::model::{CallToolRequestParams, ContentBlock};
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;
use serde_json::json;

mod common;
use common::fixture;

fn text_of(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_sdk_client_lists_and_calls_the_tools() {
    let t = fixture("serve-sdk");
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_knav"));
    cmd.arg("serve").arg("--root").arg(&t.root);
    let transport = TokioChildProcess::new(cmd).expect("knav serve starts");
    let client = ().serve(transport).await.expect("the MCP handshake succeeds");
    let info = client.peer_info().expect("the server introduced itself");
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("knav")
    );

    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 21);
    let def = tools.iter().find(|t| t.name == "find_definition").unwrap();
    let ann = def.annotations.as_ref().unwrap();
    assert_eq!(
        (ann.read_only_hint, ann.open_world_hint),
        (Some(true), Some(false))
    );
    assert_eq!(
        def.meta.as_ref().unwrap().0.get("anthropic/alwaysLoad"),
        Some(&json!(true))
    );

    let args = json!({"symbol": "ksys_read"}).as_object().cloned().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let answer = loop {
        let r = client
            .call_tool(CallToolRequestParams::new("find_callers").with_arguments(args.clone()))
            .await
            .unwrap();
        let text = text_of(&r.content);
        if r.is_error == Some(true) && text.contains("Retry this call shortly") {
            assert!(std::time::Instant::now() < deadline, "never built");
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            continue;
        }
        assert_eq!(r.is_error, Some(false), "{text}");
        assert!(r.structured_content.is_none());
        break text;
    };
    assert!(
        answer.contains("  fs/read_write.c:44: return ksys_read(fd, buf, count);"),
        "{answer}"
    );

    let r = client
        .call_tool(CallToolRequestParams::new("find_definition"))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    assert!(text_of(&r.content).contains("'symbol' is required"));
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_sdk_client_lists_and_renders_the_prompts() {
    let t = fixture("serve-sdk-prompts");
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_knav"));
    cmd.arg("serve").arg("--root").arg(&t.root);
    let transport = TokioChildProcess::new(cmd).expect("knav serve starts");
    let client = ().serve(transport).await.expect("the MCP handshake succeeds");
    let prompts = client.list_all_prompts().await.unwrap();
    let listed: Vec<(String, String)> = prompts
        .iter()
        .map(|p| {
            let args = p.arguments.as_ref().unwrap();
            assert_eq!(args.len(), 1);
            assert_eq!(args[0].required, Some(true));
            (p.name.clone(), args[0].name.clone())
        })
        .collect();
    let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    assert_eq!(
        listed,
        pairs(&[
            ("explore_subsystem", "path"),
            ("assess_change", "symbol"),
            ("review_patch", "diff"),
        ])
    );
    let get = |name: &str, arg: serde_json::Value| {
        let mut p = rmcp::model::GetPromptRequestParams::new(name);
        p.arguments = arg.as_object().cloned();
        p
    };
    let r = client
        .get_prompt(get("assess_change", json!({"symbol": "vfs_read"})))
        .await
        .unwrap();
    assert_eq!(r.messages.len(), 1);
    assert_eq!(r.messages[0].role, rmcp::model::Role::User);
    let text = r.messages[0].content.as_text().unwrap().text.clone();
    assert!(
        text.starts_with(
            "Assess what changing vfs_read would affect, with the knav tools.\n\
             1. find_definition for vfs_read: its definitions, their #if guards and its export status.\n\
             2. change_impact for vfs_read (depth 2)"
        ),
        "{text}"
    );
    let r = client
        .get_prompt(get("explore_subsystem", json!({"path": "fs/"})))
        .await
        .unwrap();
    let text = r.messages[0].content.as_text().unwrap().text.clone();
    assert!(
        text.contains("1. list_file_symbols with file_path \"fs/\": its files")
            && text.contains("search_text for \"^F:\\s+fs\" with paths [\"MAINTAINERS\"]"),
        "{text}"
    );
    let diff = "--- a/fs/read_write.c\n+++ b/fs/read_write.c\n@@ -8 +8 @@\n-a\n+b";
    let r = client
        .get_prompt(get("review_patch", json!({"diff": diff})))
        .await
        .unwrap();
    let text = r.messages[0].content.as_text().unwrap().text.clone();
    assert!(text.starts_with("Review this patch against the indexed tree"));
    assert!(text.contains("1. review_diff with the diff below"));
    assert!(text.ends_with(&format!("```diff\n{diff}\n```")), "{text}");
    let e = client
        .get_prompt(get("assess_change", json!({})))
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("assess_change: argument 'symbol' is required"),
        "{e}"
    );
    client.cancel().await.unwrap();
}
