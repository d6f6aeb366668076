//! Inline images counted as the provider counts them (issue 14): the importer reads the size from
//! the image header and writes the provider's estimate as a labelled marker; the estimator counts
//! the marker as that figure on imported sessions only.
//!
//! The transcripts under tests/data/import/image/*-sizes.jsonl are synthetic: a generated 2000×1000
//! grayscale PNG (2 KB), a 640×480 GIF header with one 1×1 frame, and (Claude Code) a payload whose
//! bytes are no image header at all.

use std::path::PathBuf;

use serde_json::Value;

use crate::common::{ctxj, repo};

fn data(name: &str) -> PathBuf {
    repo().join("tests/data/import/image").join(name)
}

fn run(args: &[&str], input: &std::path::Path) -> (String, String) {
    let out = ctxj().args(args).arg(input).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The tokens `tokens --json` gives a part of the last request.
fn part(input: &std::path::Path, name: &str) -> u64 {
    let (out, _) = run(&["tokens", "--json"], input);
    let v: Value = serde_json::from_str(&out).unwrap();
    let p = v["parts"].as_array().unwrap().iter().find(|p| p["part"] == name).unwrap();
    p["tokens"].as_u64().unwrap()
}

#[test]
fn claude_code_images_carry_anthropics_estimate() {
    let f = data("claude-sizes.jsonl");
    let (show, note) = run(&["show"], &f);
    // 2000×1000 → 1549×774 (1.2 MP) → 1,599 tokens; 640×480 → 410 tokens.
    assert!(show.contains("[image: image/png, 2018 bytes, 2000×1000 ≈ 1599 tokens]"), "{show}");
    assert!(show.contains("[image: image/gif, 35 bytes, 640×480 ≈ 410 tokens]"), "{show}");
    // A payload whose header gives no size keeps today's placeholder, with a note.
    assert!(show.contains("[image: image/png, 152 bytes]\n"), "{show}");
    assert!(note.contains("an image header gave no size"), "{note}");
    // The attachment counts as its estimate (+ block framing), the result as 410 + its text.
    let att = part(&f, "attachments");
    assert!((1599..1610).contains(&att), "{att}");
    let res = part(&f, "tool results");
    assert!((410 + 10..410 + 40).contains(&res), "{res}");
}

#[test]
fn codex_images_carry_the_gpt5_tile_estimate() {
    let f = data("codex-sizes.jsonl");
    let (show, _) = run(&["show"], &f);
    // gpt-5 family: 2000×1000 → 1536×768 → 6 tiles → 70 + 6 × 140; 640×480 → 2 tiles → 350.
    assert!(show.contains("2000×1000 ≈ 910 tokens]"), "{show}");
    assert!(show.contains("[image: image/gif, 35 bytes, 640×480 ≈ 350 tokens]"), "{show}");
}

#[test]
fn pi_images_follow_the_model_that_received_them() {
    let f = data("pi-sizes.jsonl");
    let (show, note) = run(&["show"], &f);
    assert!(show.contains("2000×1000 ≈ 1599 tokens]"), "{show}");
    assert!(show.contains("640×480 ≈ 410 tokens]"), "{show}");
    // After the switch to Gemini the image rule is not modelled: placeholder text and a note.
    assert!(show.contains("[image: image/png, 2018 bytes]"), "{show}");
    assert!(note.contains("image rule is not modelled"), "{note}");
}

/// The marker survives `ctxj import`; a journal of a ctxj harness counts the same text as text.
#[test]
fn the_estimate_counts_on_imported_sessions_only() {
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("s");
    let out = ctxj().arg("import").arg(data("claude-sizes.jsonl")).arg("--out").arg(&s).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(s.join("u1.att/image-1.png").is_file());
    assert_eq!(part(&s, "attachments"), part(&data("claude-sizes.jsonl"), "attachments"));
    let journal = std::fs::read_to_string(s.join("journal.jsonl")).unwrap();
    assert!(journal.contains(r#""harness":"claude-code""#));
    std::fs::write(s.join("journal.jsonl"), journal.replace(r#""harness":"claude-code""#, r#""harness":"ctxj""#))
        .unwrap();
    let att = part(&s, "attachments");
    assert!(att < 60, "a ctxj journal counts the marker as text: {att}");
}
