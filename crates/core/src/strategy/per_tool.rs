//! `per-tool-keep-K` (spec §2): per tool, its K last results verbatim; older ones by tool class —
//! *read* tools become `[stale read: <p>; read again if needed]`, *list/search* tools get the
//! `truncate-200` rule, all other tools stay verbatim. Each result changes at most once (when its
//! tool's K+1-th later result arrives), so the family is cache friendly.

use std::collections::HashMap;

use serde_json::Value;

use crate::journal::Journal;
use crate::projection::block::canonical_value;
use crate::projection::markers::tail;
use crate::projection::Block;

use super::truncate::truncate_chars;
use super::{Family, Origin, Out, TurnCx};

/// Tools whose old results become stale-read markers.
pub const READ_TOOLS: &[&str] = &["read", "read_file", "Read", "cat", "view"];
/// Tools whose old results get the `truncate-200` rule.
pub const LIST_TOOLS: &[&str] = &["ls", "list_files", "glob", "Glob", "grep", "Grep", "find"];
/// Argument keys that name a file, in the order they are tried.
pub const PATH_KEYS: &[&str] = &["path", "file_path", "filePath", "file"];

/// `<p>` of the stale-read marker: the first string among the path keys of `args`, else the
/// canonical args JSON cut to its last 60 characters (`…` + 60).
pub fn stale_path(args: &Value) -> String {
    if let Some(o) = args.as_object() {
        for k in PATH_KEYS {
            if let Some(Value::String(s)) = o.get(*k) {
                return s.clone();
            }
        }
    }
    tail(&canonical_value(args), 60)
}

/// `[stale read: <p>; read again if needed]` for the result of `call`.
pub fn stale_read(journal: &Journal, call: &str) -> String {
    let p = journal.call(call).map_or_else(|| stale_path(&Value::Null), |c| stale_path(&c.args));
    format!("[stale read: {p}; read again if needed]")
}

pub struct PerTool {
    keep: usize,
    /// Per tool: conversation indices (request index − `out.head`) of its results, and how many
    /// have been aged.
    tools: HashMap<String, (Vec<usize>, usize)>,
}

impl PerTool {
    pub fn new(keep: usize) -> PerTool {
        PerTool { keep, tools: HashMap::new() }
    }
}

impl Family for PerTool {
    fn before_turn(&mut self, cx: &TurnCx<'_, '_>, out: &mut Out) {
        for b in &cx.raw.blocks[cx.new.clone()] {
            if let Block::Result { tool, .. } = &b.block {
                self.tools.entry(tool.clone()).or_default().0.push(out.blocks.len() - out.head);
            }
            out.push(b.block.clone(), Origin::Verbatim, cx.est);
        }
        for (tool, (idx, aged)) in self.tools.iter_mut() {
            let old = idx.len().saturating_sub(self.keep);
            while *aged < old {
                let i = out.head + idx[*aged];
                *aged += 1;
                if READ_TOOLS.contains(&tool.as_str()) {
                    let Block::Result { call, .. } = &out.blocks[i] else { continue };
                    let t = stale_read(cx.journal, call);
                    out.set_text(i, t, Origin::StaleRead, cx.est);
                } else if LIST_TOOLS.contains(&tool.as_str()) {
                    if let Some(t) = truncate_chars(out.blocks[i].text(), 200) {
                        out.set_text(i, t, Origin::Truncated, cx.est);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::testkit::*;

    #[test]
    fn stale_path_prefers_the_path_keys_in_order() {
        let v: Value = serde_json::from_str(r#"{"file":"f","filePath":"fp"}"#).unwrap();
        assert_eq!(stale_path(&v), "fp");
        let v: Value = serde_json::from_str(r#"{"path":7,"file_path":"x.rs"}"#).unwrap();
        assert_eq!(stale_path(&v), "x.rs");
        let long = format!(r#"{{"q":"{}"}}"#, "z".repeat(80));
        let v: Value = serde_json::from_str(&long).unwrap();
        assert_eq!(stale_path(&v), format!("…{}\"}}", "z".repeat(58)));
    }

    #[test]
    fn old_results_by_tool_class() {
        let big = "y".repeat(250);
        let j = journal(vec![
            session(),
            user("u1", "go"),
            assistant(
                "a1",
                "",
                vec![
                    call("c1", "read", r#"{"path":"src/a.ts"}"#),
                    call("c2", "grep", r#"{"pattern":"x"}"#),
                    call("c3", "run", r#"{"command":"ls"}"#),
                ],
            ),
            result("c1", "read", "AAA"),
            result("c2", "grep", &big),
            result("c3", "run", &big),
            assistant(
                "a2",
                "",
                vec![
                    call("c4", "read", r#"{"path":"src/b.ts"}"#),
                    call("c5", "grep", r#"{"pattern":"y"}"#),
                    call("c6", "run", r#"{"command":"ls"}"#),
                ],
            ),
            result("c4", "read", "BBB"),
            result("c5", "grep", "few"),
            result("c6", "run", "out"),
            assistant("a3", "done", vec![]),
        ]);
        let reqs = requests(&j, "per-tool-keep-1");
        let texts = result_texts(&reqs[1].0);
        assert_eq!(texts, ["AAA", big.as_str(), big.as_str()]);
        let texts = result_texts(&reqs[2].0);
        let cut = format!("{}…[truncated 50 chars]", "y".repeat(200));
        assert_eq!(
            texts,
            ["[stale read: src/a.ts; read again if needed]", cut.as_str(), big.as_str(), "BBB", "few", "out"]
        );
        assert_eq!(reqs[2].1[2], Origin::StaleRead);
        assert_eq!(reqs[2].1[3], Origin::Truncated);
    }
}
