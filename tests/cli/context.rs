//! `tokens` reads like Claude Code's `/context` (issue 17): percent of the window, pressure
//! level, the distance to the next elision or auto-compact, parts by size, hints.

use serde_json::Value;

use crate::common::*;

fn tokens(args: &[&str]) -> String {
    let out = ctxj().current_dir(repo()).arg("tokens").args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The /context part of the output (after the settings).
fn context_part(text: &str) -> String {
    let at = text.find("\ncontext (").unwrap_or_else(|| panic!("no context view: {text}"));
    text[at + 1..].to_string()
}

#[test]
fn tokens_reads_like_context() {
    insta::assert_snapshot!("context_bugfix_todo", context_part(&tokens(&["sample-journals/bugfix-todo"])));
    // an imported Claude Code session: its own profile, the inferred system prompt labelled
    insta::assert_snapshot!(
        "context_claude_code_transcript",
        context_part(&tokens(&["sample-journals/transcripts/claude-code"]))
    );
}

#[test]
fn context_json_and_the_harness_override() {
    let v: Value = serde_json::from_str(&tokens(&["sample-journals/bugfix-todo", "--json"])).unwrap();
    let c = &v["context"];
    assert_eq!(c["harness"], "pi-agent");
    assert_eq!(c["window"], 200_000);
    assert_eq!(c["until"]["what"], "elision");
    assert_eq!(c["until"]["at"], 100_000);
    assert_eq!(c["until"]["left"], 100_000 - c["used"].as_u64().unwrap());
    let parts = c["parts"].as_array().unwrap();
    let sizes: Vec<u64> = parts.iter().map(|p| p["tokens"].as_u64().unwrap()).collect();
    assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "parts sorted by size: {sizes:?}");
    assert_eq!(parts[0]["name"], "read_file results");
    assert_eq!(parts[0]["items"], 6);
    let hints: Vec<&str> = c["hints"].as_array().unwrap().iter().map(|h| h["hint"].as_str().unwrap()).collect();
    assert_eq!(hints, ["dominates", "elide", "clear"]);
    // command-code's tiers and its 90% compaction point
    let v: Value =
        serde_json::from_str(&tokens(&["sample-journals/bugfix-todo", "--json", "--harness", "command-code"])).unwrap();
    assert_eq!(v["context"]["tiers"], serde_json::json!([50, 80, 90]));
    // seed 003: the distance to auto-compact shows only past 40 % (this request is at 2.7 %);
    // the buffer is the 10 % above tier 3
    assert!(v["context"]["until"].is_null(), "{}", v["context"]);
    assert_eq!(v["context"]["autocompact_buffer"], 20_000);
    let hints = v["context"]["hints"].as_array().unwrap();
    assert!(
        hints.iter().all(|h| h["hint"] != "elide" && h["hint"] != "clear"),
        "journal-v1's levers only under ctxj: {hints:?}"
    );
}

#[test]
fn regression_a_hints_share_is_its_tables_and_tool_schemas_count_tools() {
    // The Claude Code transcript: Read results are 1.9 % of the listed parts (the inferred prefix
    // included), so no hint may call them 21.3 % of the request.
    let v: Value = serde_json::from_str(&tokens(&["sample-journals/transcripts/claude-code", "--json"])).unwrap();
    let c = &v["context"];
    let listed: u64 = c["parts"].as_array().unwrap().iter().filter_map(|p| p["tokens"].as_u64()).sum();
    for h in c["hints"].as_array().unwrap().iter().filter(|h| h["hint"] == "dominates") {
        let share = h["tokens"].as_f64().unwrap() * 100.0 / listed as f64;
        assert!((h["percent"].as_f64().unwrap() - share).abs() < 0.05, "{h} vs the table's {share:.1}%");
        assert!(share >= 20.0, "{h}: dominates below a fifth of the table");
    }
    let v: Value = serde_json::from_str(&tokens(&["sample-journals/bugfix-todo", "--json"])).unwrap();
    let schemas =
        v["context"]["parts"].as_array().unwrap().iter().find(|p| p["name"] == "tool schemas").unwrap().clone();
    assert!(schemas["items"].as_u64().unwrap() > 1, "one item per tool: {schemas}");
    assert_eq!(v["context"]["until"]["past"], 0);
}

/// Issue 30 item 6: `/compact` is Command Code's own hint from 50 % (urgent past 80 %), and the
/// distance past the auto point is reported as such, never as "≈ 0 until". Untested before.
#[test]
fn regression_command_code_hints_compact_and_counts_past_the_point() {
    let text = std::fs::read_to_string(repo().join("sample-journals/bugfix-todo/journal.jsonl")).unwrap();
    let view = |window: u64| -> Value {
        let d = tempfile::tempdir().unwrap();
        let j = d.path().join("journal.jsonl");
        std::fs::write(&j, text.replacen("\"ctx_window\":200000", &format!("\"ctx_window\":{window}"), 1)).unwrap();
        let out = ctxj().args(["tokens", "--json", "--harness", "command-code"]).arg(&j).output().unwrap();
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["context"].clone()
    };
    // 5,361 tokens of 10,000: past 50 %, below the 90 % point
    let c = view(10_000);
    let compact: Vec<&Value> = c["hints"].as_array().unwrap().iter().filter(|h| h["hint"] == "compact").collect();
    assert_eq!(compact.len(), 1, "{c}");
    assert_eq!(compact[0]["urgent"], false, "{c}");
    assert_eq!(compact[0]["at"], 9_000, "{c}");
    // of 5,000: past the point by what is used beyond it
    let c = view(5_000);
    let used = c["used"].as_u64().unwrap();
    assert_eq!(c["until"]["past"], used - 4_500, "{c}");
    assert_eq!(c["until"]["left"], 0, "{c}");
    assert!(c["hints"].as_array().unwrap().iter().any(|h| h["hint"] == "compact" && h["urgent"] == true), "{c}");
}

/// `tokens` under `--harness` with the terminal `COLUMNS` wide: the /context part.
fn context_at(path: &str, harness: &str, columns: &str) -> String {
    let out = ctxj()
        .current_dir(repo())
        .env("COLUMNS", columns)
        .args(["tokens", path, "--harness", harness])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    context_part(&String::from_utf8(out.stdout).unwrap())
}

/// Issue 30 item 6: `tokens` listed ctxj's parts only; Claude Code's `/context` rows (system
/// prompt, system tools, MCP tools, custom agents, memory files, skills, messages, free space,
/// autocompact buffer) and Command Code's (seed 003) are now a table of their own, each row a
/// share of the window, the rows the journal cannot know "not recorded", and the rows add up to
/// the window (used + free space + buffer) below the auto point. MCP tools are the `mcp__…` schemas,
/// counted as tools, not records.
#[test]
fn regression_context_had_no_rows_of_the_harnesses_own() {
    let v: Value =
        serde_json::from_str(&tokens(&["sample-journals/bugfix-todo", "--json", "--harness", "claude-code"])).unwrap();
    let c = &v["context"];
    let rows = c["categories"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "System prompt",
            "System tools",
            "MCP tools",
            "Custom agents",
            "Memory files",
            "Skills",
            "Messages",
            "Free space",
            "Autocompact buffer"
        ]
    );
    let row = |n: &str| rows.iter().find(|r| r["name"] == n).unwrap().clone();
    for unknown in ["Custom agents", "Memory files", "Skills"] {
        assert!(row(unknown)["tokens"].is_null(), "{unknown} is not in a journal: {}", row(unknown));
    }
    let sum: u64 = rows.iter().filter_map(|r| r["tokens"].as_u64()).sum();
    assert_eq!(sum, c["window"].as_u64().unwrap(), "rows add up to the window: {rows:?}");
    let schemas = c["parts"].as_array().unwrap().iter().find(|p| p["name"] == "tool schemas").unwrap().clone();
    assert_eq!(row("System tools")["items"], schemas["items"], "tools, not records");
    let text = tokens(&["sample-journals/bugfix-todo", "--harness", "claude-code"]);
    assert!(text.contains("│ Memory files") && text.contains("not recorded"), "{text}");

    // an MCP tool is counted under MCP tools
    let j = std::fs::read_to_string(repo().join("sample-journals/bugfix-todo/journal.jsonl")).unwrap();
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("journal.jsonl");
    std::fs::write(&p, j.replacen("\"name\":\"read_file\"", "\"name\":\"mcp__fs__read_file\"", 1)).unwrap();
    let out = ctxj().args(["tokens", "--json", "--harness", "claude-code"]).arg(&p).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mcp = v["context"]["categories"].as_array().unwrap().iter().find(|r| r["name"] == "MCP tools").unwrap().clone();
    assert_eq!(mcp["items"], 1, "{mcp}");
    assert!(mcp["tokens"].as_u64().unwrap() > 0, "{mcp}");

    // Command Code's own rows (seed 003), no autocompact-buffer row; no rows under ctxj
    let v: Value =
        serde_json::from_str(&tokens(&["sample-journals/bugfix-todo", "--json", "--harness", "command-code"])).unwrap();
    let names: Vec<&str> =
        v["context"]["categories"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["System prompt", "Memory", "Taste", "System tools", "MCP", "Skills", "Subagents", "Messages", "Free space"]
    );
    let v: Value = serde_json::from_str(&tokens(&["sample-journals/bugfix-todo", "--json"])).unwrap();
    assert_eq!(v["context"]["categories"], serde_json::json!([]));
}

/// The harnesses' own /context tables at 80 and 160 columns.
#[test]
fn context_rows_at_80_and_160_columns() {
    for columns in ["80", "160"] {
        for harness in ["claude-code", "command-code"] {
            insta::assert_snapshot!(
                format!("context_{harness}_{columns}"),
                context_at("sample-journals/bugfix-todo", harness, columns)
            );
        }
        insta::assert_snapshot!(
            format!("context_claude_code_transcript_{columns}"),
            context_at("sample-journals/transcripts/claude-code", "claude-code", columns)
        );
    }
}
