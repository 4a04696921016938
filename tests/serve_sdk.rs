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
    assert_eq!(tools.len(), 12);
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
