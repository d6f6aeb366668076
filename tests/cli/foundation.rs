//! Foundation: reader, recorded projection, `show`, `log`.

use crate::common::*;

const MINI: &str = concat!(
    r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s1","model":"vendor/model-x"}"#,
    "\n",
    r#"{"rev":2,"ts":"2026-11-29T10:00:00Z","kind":"system","text":"sys"}"#,
    "\n",
    r#"{"rev":3,"ts":"2026-11-29T10:00:01Z","kind":"user","id":"u1","text":"hi"}"#,
    "\n",
    r#"{"rev":4,"ts":"2026-11-29T10:00:02Z","kind":"assistant","id":"a1","text":"ok"}"#,
    "\n",
);

#[test]
fn show_json_is_canonical_bytes() {
    let d = session_with(MINI);
    ctxj()
        .args(["show", "--at", "turn", "1", "--json"])
        .arg(d.path())
        .assert()
        .success()
        .stdout("[{\"type\":\"system\",\"text\":\"sys\"},{\"type\":\"user\",\"id\":\"u1\",\"text\":\"hi\"}]\n");
}

#[test]
fn rev_past_the_end_is_a_usage_error() {
    let d = session_with(MINI);
    ctxj()
        .args(["show", "--at", "rev", "99"])
        .arg(d.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains("revs 1..4"));
}
