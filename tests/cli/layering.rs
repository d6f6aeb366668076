//! What the crate boundaries cannot say: the order of the top-level modules inside `ctxj-core`
//! (docs/architecture.md "Layering"). That `ctxj-core` names no `render`/`cli`, and that only
//! `ctxj-mmap` has `unsafe`, the compiler holds (crates, `#![forbid(unsafe_code)]`).
//!
//! The scan is a line scan, not a Rust parser: every `crate::m` and `use crate::{m, …}` outside
//! comments and outside unit tests (from the first `#[cfg(test)]` of a file, and files declared
//! `#[cfg(test)] mod f;`) counts; so does a `super::…` that climbs to the crate root. A failure
//! names the file and line.

use std::collections::BTreeSet;

use crate::common::{files_under, repo};

/// Each top-level module of `crates/core/src/` and the modules it may refer to besides itself,
/// bottom first: a module never uses one listed after it.
const LAYERS: &[(&str, &[&str])] = &[
    ("text", &[]),
    // Child processes in groups of their own (the summarizer, `watch --exec`): names nothing.
    ("process", &[]),
    ("journal", &["text"]),
    ("projection", &["journal", "text"]),
    ("tokens", &["projection", "journal", "text"]),
    ("strategy", &["process", "tokens", "projection", "journal", "text"]),
    ("cache", &["strategy", "tokens", "projection", "journal", "text"]),
    // `check` sits above `cache`: it judges windows with the one model table `cache` owns
    // (issue 30: "windows from the model, the same table `cache` uses"); `cache` never uses it.
    ("check", &["cache", "strategy", "tokens", "projection", "journal", "text"]),
    ("synth", &["journal", "projection", "text"]),
    ("import", &["journal", "projection", "text", "tokens"]),
    ("usage", &["import", "cache", "journal", "projection", "tokens", "text"]),
    // Real runs side by side: reads sessions (`import`) and bills them (`cache`).
    ("experiment", &["import", "cache", "strategy", "tokens", "projection", "journal", "text"]),
    (
        "report",
        &["experiment", "usage", "import", "check", "cache", "strategy", "tokens", "projection", "journal", "text"],
    ),
    ("export", &["usage", "import", "cache", "strategy", "tokens", "projection", "journal", "text"]),
    // The live engine: `usage`'s readers folded incrementally, priced and timed through `cache`.
    ("live", &["process", "usage", "import", "cache", "projection", "journal", "text"]),
    // `ctxj tune`: strategies replayed through `cache`, sessions' formats named by `import`.
    ("tune", &["import", "cache", "strategy", "tokens", "projection", "journal", "text"]),
];

/// The top-level modules a line of code names: `crate::m`, `crate::{m, n::x}`, and `super::`
/// repeated `depth` times (the crate root, from a file `depth` modules deep) then `m`.
fn names(line: &str, depth: usize) -> Vec<String> {
    let code = line.split("//").next().unwrap_or("");
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let mut out = Vec::new();
    let climb = format!("{}::", "super::".repeat(depth).trim_end_matches("::"));
    for root in ["crate::", climb.as_str()] {
        for (i, _) in code.match_indices(root).filter(|(i, _)| root == "crate::" || !code[..*i].ends_with("super::")) {
            let rest = &code[i + root.len()..];
            match rest.strip_prefix('{') {
                // Top-level names of a group: after `{` and after each `,` at depth 0.
                Some(group) => {
                    let mut level = 0;
                    out.push(ident(group.trim_start()));
                    for (j, c) in group.char_indices() {
                        match c {
                            '{' => level += 1,
                            '}' if level == 0 => break,
                            '}' => level -= 1,
                            ',' if level == 0 => out.push(ident(group[j + 1..].trim_start())),
                            _ => {}
                        }
                    }
                }
                None => out.push(ident(rest)),
            }
        }
    }
    out.retain(|m| !m.is_empty() && m != "self");
    out
}

/// The module path of a file: `journal/reader.rs` → `[journal, reader]`, `journal/mod.rs` →
/// `[journal]`.
fn module_path(rel: &std::path::Path) -> Vec<String> {
    let mut path: Vec<String> = rel.with_extension("").iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if path.last().is_some_and(|p| p == "mod") {
        path.pop();
    }
    path
}

/// The code lines of a file (up to its first `#[cfg(test)]`: unit tests may look across layers),
/// and the modules it declares `#[cfg(test)] mod f;` (whose files are test code).
fn code_lines(text: &str) -> (Vec<(usize, &str)>, Vec<String>) {
    let (mut code, mut tests) = (Vec::new(), Vec::new());
    let mut lines = text.lines().enumerate();
    while let Some((n, line)) = lines.next() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            let next = lines.next().map_or("", |(_, l)| l.trim());
            match next.trim_start_matches("pub(crate) ").strip_prefix("mod ").and_then(|m| m.strip_suffix(';')) {
                Some(m) => tests.push(m.to_string()),
                None => break,
            }
        } else if !line.trim_start().starts_with("//") {
            code.push((n + 1, line));
        }
    }
    (code, tests)
}

#[test]
fn core_modules_use_only_the_modules_below_them() {
    let src = repo().join("crates/core/src");
    let files: Vec<(Vec<String>, String, String)> = files_under(&src, "rs")
        .into_iter()
        .map(|f| {
            let rel = f.strip_prefix(&src).unwrap();
            (module_path(rel), rel.display().to_string(), std::fs::read_to_string(&f).unwrap())
        })
        .collect();
    let test_files: BTreeSet<Vec<String>> = files
        .iter()
        .flat_map(|(path, _, text)| code_lines(text).1.into_iter().map(|m| [path.clone(), vec![m]].concat()))
        .collect();
    let (mut bad, mut seen) = (Vec::new(), 0);
    for (path, rel, text) in &files {
        if path.len() == 1 && path[0] == "lib" || test_files.contains(path) {
            continue;
        }
        let Some((_, allowed)) = LAYERS.iter().find(|(m, _)| *m == path[0]) else {
            bad.push(format!("{rel}: module `{}` is not in the layering table", path[0]));
            continue;
        };
        for (n, line) in code_lines(text).0 {
            for to in names(line, path.len()) {
                seen += 1;
                if to != path[0] && !allowed.contains(&to.as_str()) {
                    bad.push(format!("{rel}:{n}: `{}` uses `{to}`, not below it", path[0]));
                }
            }
        }
    }
    assert!(seen > 50, "the scan found only {seen} references: is it broken?");
    assert!(bad.is_empty(), "{} layering violation(s):\n{}", bad.len(), bad.join("\n"));
}

#[test]
fn the_table_is_ordered_bottom_first_and_the_scan_reads_every_form() {
    for (i, (m, deps)) in LAYERS.iter().enumerate() {
        for d in *deps {
            let below = LAYERS[..i].iter().any(|(x, _)| x == d);
            assert!(below, "`{m}` may use `{d}`, which is not listed before it (a cycle or an unknown module)");
        }
    }
    let line = "use crate::{projection::{Block, markers}, text}; let x = crate::journal::f(super::super::tokens::E); // crate::render";
    assert_eq!(names(line, 2), ["projection", "text", "journal", "tokens"]);
    assert_eq!(names("use super::super::Format;", 3), Vec::<String>::new(), "climbs inside its own module");
    let file = "use crate::text;\n// crate::cli\n#[cfg(test)]\nmod props;\nfn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::cli;\n}\n";
    let (code, tests) = code_lines(file);
    assert_eq!(code, [(1, "use crate::text;"), (5, "fn f() {}")]);
    assert_eq!(tests, ["props"]);
}
