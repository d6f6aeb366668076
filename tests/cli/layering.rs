//! The layering rule of docs/architecture.md inside `ctxj-core`: a module of `crates/core/src/` refers only to the
//! modules below it ([`LAYERS`]), and the modules' references form no cycle.
//!
//! Every `crate::m`, `use crate::{m, …}`, `super::…::m` that climbs to the crate root, and
//! `ctxj::m` in the library's code counts; comments, string literals and `#[cfg(test)]` items
//! (unit tests may look across layers) do not. A failure names the file and line of each
//! offending reference.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::common::{files_under, repo};

/// The one table of the layering rule inside `ctxj-core`: each top-level module of
/// `crates/core/src/` and every module it may refer to besides itself. Bottom first. `render` and
/// `cli` live in the `ctxj` crate, which `ctxj-core` cannot name: the crate boundary holds that
/// part of the rule.
const LAYERS: &[(&str, &[&str])] = &[
    ("text", &[]),
    ("journal", &["text"]),
    ("projection", &["journal", "text"]),
    ("tokens", &["projection", "journal", "text"]),
    ("strategy", &["tokens", "projection", "journal", "text"]),
    // Siblings: neither may use the other.
    ("cache", &["strategy", "tokens", "projection", "journal", "text"]),
    // `check` sits above `cache`: it judges windows with the one model table `cache` owns
    // (issue 30: "windows from the model, the same table `cache` uses"); `cache` never uses it.
    ("check", &["cache", "strategy", "tokens", "projection", "journal", "text"]),
    ("synth", &["journal", "projection", "text"]),
    // `import` produces records from transcripts; it reads the price table of `cache`.
    ("import", &["journal", "projection", "text", "tokens", "cache"]),
    ("usage", &["import", "cache", "journal", "projection", "tokens", "text"]),
    // Real runs side by side: reads sessions (`import`) and bills them (`cache`).
    ("experiment", &["import", "cache", "strategy", "tokens", "projection", "journal", "text"]),
    (
        "report",
        &["experiment", "usage", "import", "check", "cache", "strategy", "tokens", "projection", "journal", "text"],
    ),
    ("export", &["usage", "import", "cache", "strategy", "tokens", "projection", "journal", "text"]),
    // The live engine: `usage`'s readers folded incrementally, priced and timed through `cache`.
    ("live", &["usage", "import", "cache", "projection", "journal", "text"]),
    // `ctxj tune`: strategies replayed through `cache`, sessions' formats named by `import`.
    ("tune", &["import", "cache", "strategy", "tokens", "projection", "journal", "text"]),
];

/// Whether module `from` may refer to module `to`; `None` when `from` is not in [`LAYERS`].
fn may_use(from: &str, to: &str) -> Option<bool> {
    let (_, ok) = LAYERS.iter().find(|(m, _)| *m == from)?;
    Some(from == to || ok.contains(&"*") || ok.contains(&to))
}

/// One reference from a file of module `from` to module `to`.
#[derive(Debug)]
struct Ref {
    from: String,
    to: String,
    file: PathBuf,
    line: usize,
}

#[test]
fn src_follows_the_layering_rule() {
    let refs = references(&repo().join("crates/core/src"));
    assert!(refs.len() > 50, "the scan found only {} references: is it broken?", refs.len());
    let mut bad = Vec::new();
    for r in &refs {
        let at = format!("{}:{}", r.file.display(), r.line);
        match may_use(&r.from, &r.to) {
            None => bad.push(format!("{at}: module `{}` is not in the layering table", r.from)),
            Some(false) => bad.push(format!("{at}: `{}` refers to `{}`, which is not below it", r.from, r.to)),
            Some(true) => {}
        }
    }
    assert!(bad.is_empty(), "{} layering violation(s):\n{}", bad.len(), bad.join("\n"));
    let graph: BTreeMap<&str, BTreeSet<&str>> = refs.iter().fold(BTreeMap::new(), |mut g, r| {
        if r.from != r.to {
            g.entry(r.from.as_str()).or_default().insert(r.to.as_str());
        }
        g
    });
    assert_eq!(cycle(&graph), None, "the modules' references form a cycle");
}

#[test]
fn the_layering_table_has_no_cycle_and_names_known_modules() {
    let graph: BTreeMap<&str, BTreeSet<&str>> =
        LAYERS.iter().map(|(m, deps)| (*m, deps.iter().copied().filter(|d| *d != "*").collect())).collect();
    for (m, deps) in &graph {
        for d in deps {
            assert!(graph.contains_key(d), "`{m}` may use `{d}`, which is not in the table");
        }
    }
    assert_eq!(cycle(&graph), None);
    // A module listed above another may not be used by it (the table is ordered bottom first).
    for (i, (m, _)) in LAYERS.iter().enumerate() {
        for (above, _) in &LAYERS[i + 1..] {
            assert_eq!(may_use(m, above), Some(false), "`{m}` may use `{above}`, listed above it");
        }
    }
    assert_eq!(may_use("cache", "check"), Some(false), "check judges with cache's model table; cache never uses check");
}

#[test]
fn the_scanner_sees_every_form_and_skips_comments_strings_and_tests() {
    let src = r##"
use crate::journal::Record;
use crate::{projection::{Block, markers}, text};
// use crate::render::x;
/// [`crate::cli`]
let s = "crate::report"; let r = r#"crate::report"#; let c = '"'; let l: &'static str = "";
fn f() -> super::super::tokens::Encoding { ctxj::cache::x() }
#[cfg(test)]
mod tests { use crate::render::Paint; }
#[cfg(test)]
mod props;
"##;
    let mut test_files = BTreeSet::new();
    let got: Vec<(String, usize)> = scan(src, &["strategy".into(), "x".into()], &mut test_files);
    let want: Vec<(String, usize)> = [("journal", 2), ("projection", 3), ("text", 3), ("tokens", 7), ("cache", 7)]
        .iter()
        .map(|(m, l)| (m.to_string(), *l))
        .collect();
    assert_eq!(got, want);
    assert_eq!(test_files.into_iter().collect::<Vec<_>>(), ["props"]);
}

/// Every reference to a top-level module in the code of `src/`.
fn references(src: &Path) -> Vec<Ref> {
    let files = files_under(src, "rs");
    let mut test_only: BTreeSet<PathBuf> = BTreeSet::new();
    let mut out = Vec::new();
    for file in files {
        let rel = file.strip_prefix(src).unwrap().to_path_buf();
        let module = module_path(&rel);
        if rel == Path::new("lib.rs") || test_only.contains(&rel) {
            continue;
        }
        let from = if rel == Path::new("main.rs") { "cli".to_string() } else { module[0].clone() };
        let text = std::fs::read_to_string(&file).unwrap();
        let mut tests = BTreeSet::new();
        for (to, line) in scan(&text, &module, &mut tests) {
            out.push(Ref { from: from.clone(), to, file: Path::new("crates/core/src").join(&rel), line });
        }
        // `#[cfg(test)] mod m;` makes m's file test code.
        let dir = if rel.file_name().is_some_and(|n| n == "mod.rs") {
            rel.parent().unwrap().to_path_buf()
        } else {
            rel.with_extension("")
        };
        for m in tests {
            test_only.insert(dir.join(format!("{m}.rs")));
            test_only.insert(dir.join(&m).join("mod.rs"));
        }
    }
    out
}

/// `journal/reader.rs` → `[journal, reader]`; `journal/mod.rs` → `[journal]`; `text.rs` → `[text]`.
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel.with_extension("").iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The modules referred to by the code of one file of module path `module`, with 1-based lines,
/// in order; `#[cfg(test)] mod m;` declarations are added to `test_mods`.
fn scan(text: &str, module: &[String], test_mods: &mut BTreeSet<String>) -> Vec<(String, usize)> {
    let code = strip(text);
    let code = skip_test_items(&code, test_mods);
    let b = code.as_bytes();
    let line_of = |i: usize| code[..i].matches('\n').count() + 1;
    let ident_at = |i: usize| -> &str {
        let end = code[i..].find(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(code.len(), |e| i + e);
        &code[i..end]
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let boundary = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b':');
        if !boundary {
            i += 1;
            continue;
        }
        let rest = &code[i..];
        let (root_at, skip) = if rest.starts_with("crate::") {
            (Some(i + 7), 7)
        } else if rest.starts_with("ctxj::") {
            (Some(i + 6), 6)
        } else if rest.starts_with("super::") {
            // Climb: each `super` drops one level of the file's module path.
            let mut j = i;
            let mut depth = module.len();
            while code[j..].starts_with("super::") {
                j += 7;
                depth = depth.saturating_sub(1);
            }
            (if depth == 0 { Some(j) } else { None }, j - i)
        } else {
            (None, 1)
        };
        if let Some(at) = root_at {
            if b.get(at) == Some(&b'{') {
                for (name, pos) in group_heads(&code, at) {
                    out.push((name, line_of(pos)));
                }
            } else {
                let name = ident_at(at);
                if !name.is_empty() {
                    out.push((name.to_string(), line_of(at)));
                }
            }
        }
        i += skip;
    }
    out
}

/// The first segment of each item of the `{…}` group opening at `open`, with its position.
fn group_heads(code: &str, open: usize) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut expect_head = true;
    for (k, c) in code[open..].char_indices() {
        let pos = open + k;
        match c {
            '{' => {
                depth += 1;
                if depth == 1 {
                    expect_head = true;
                }
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            ',' if depth == 1 => expect_head = true,
            c if depth == 1 && expect_head && (c.is_alphabetic() || c == '_') => {
                let end =
                    code[pos..].find(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(code.len(), |e| pos + e);
                let name = &code[pos..end];
                if name != "self" {
                    out.push((name.to_string(), pos));
                }
                expect_head = false;
            }
            _ => {}
        }
    }
    out
}

/// `text` with comments and the contents of string and char literals blanked (newlines kept,
/// so that positions and line numbers stay those of the file).
fn strip(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < c.len() {
        let next = c.get(i + 1).copied();
        if c[i] == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if c[i] == '/' && next == Some('*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
        } else if c[i] == 'r' && (next == Some('"') || next == Some('#')) && raw_start(&c, i) {
            // A raw string: r"…", r#"…"#, …
            let hashes = c[i + 1..].iter().take_while(|&&h| h == '#').count();
            if c.get(i + 1 + hashes) != Some(&'"') {
                out.push(c[i]);
                i += 1;
                continue;
            }
            let close: String = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            let body = i + 2 + hashes;
            let end = c[body..]
                .windows(close.chars().count())
                .position(|w| w.iter().copied().eq(close.chars()))
                .map_or(c.len(), |p| body + p + close.chars().count());
            for &ch in &c[i..end] {
                blank(&mut out, ch);
            }
            i = end;
        } else if c[i] == '"' {
            out.push(' ');
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    blank(&mut out, c[i]);
                    i += 1;
                }
                if i < c.len() {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c[i] == '\'' && (next == Some('\\') || c.get(i + 2) == Some(&'\'')) {
            // A char literal ('x', '\n', '\u{1F600}'); otherwise a lifetime, kept.
            let end =
                (i + 2..c.len()).find(|&k| c[k] == '\'' && (c[k - 1] != '\\' || c[k - 2] == '\\')).unwrap_or(c.len());
            for &ch in &c[i..=end.min(c.len() - 1)] {
                blank(&mut out, ch);
            }
            i = end + 1;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// Whether the `r` at `i` starts a raw string (`r"`, `br"`), not ends an identifier.
fn raw_start(c: &[char], i: usize) -> bool {
    let before = |k: usize| i < k || !is_ident(c[i - k]);
    before(1) || (c[i - 1] == 'b' && before(2))
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `code` (already stripped) with every `#[cfg(test)]` item blanked; `#[cfg(test)] mod m;`
/// declarations are recorded in `test_mods`.
fn skip_test_items(code: &str, test_mods: &mut BTreeSet<String>) -> String {
    let mut out: Vec<u8> = code.as_bytes().to_vec();
    let mut from = 0;
    while let Some(p) = code[from..].find("#[cfg(test)]").map(|p| from + p) {
        let b = code.as_bytes();
        let mut k = p;
        let mut depth = 0;
        // The item ends at its first `;` outside braces, or at the brace closing its body.
        while k < b.len() {
            match b[k] {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                b';' if depth == 0 => {
                    let decl = code[p + "#[cfg(test)]".len()..k].trim();
                    if let Some(m) = decl.strip_prefix("mod ").or_else(|| decl.strip_prefix("pub(crate) mod ")) {
                        test_mods.insert(m.trim().to_string());
                    }
                    break;
                }
                _ => {}
            }
            k += 1;
        }
        for x in &mut out[p..k.min(b.len())] {
            if *x != b'\n' {
                *x = b' ';
            }
        }
        from = k.min(b.len());
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A cycle of `graph`, as the path of modules around it, if there is one.
fn cycle<'a>(graph: &BTreeMap<&'a str, BTreeSet<&'a str>>) -> Option<Vec<&'a str>> {
    fn visit<'a>(
        n: &'a str,
        graph: &BTreeMap<&'a str, BTreeSet<&'a str>>,
        stack: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<&'a str>> {
        if let Some(at) = stack.iter().position(|&s| s == n) {
            let mut c = stack[at..].to_vec();
            c.push(n);
            return Some(c);
        }
        if !done.insert(n) {
            return None;
        }
        stack.push(n);
        for &m in graph.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, graph, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|&n| visit(n, graph, &mut Vec::new(), &mut done))
}
