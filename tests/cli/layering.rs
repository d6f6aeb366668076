//! What the crate boundaries cannot say: the order of the top-level modules inside `ctxj-core`
//! (docs/architecture.md "Layering"). That `ctxj-core` names no `render`/`cli`, and that only
//! `ctxj-mmap` has `unsafe`, the compiler holds (crates, `#![forbid(unsafe_code)]`).
//!
//! The scan is a line scan, not a Rust parser: every `crate::m` and `use crate::{m, …}` outside
//! comments and outside unit tests (from the first `#[cfg(test)]` of a file, and files declared
//! `#[cfg(test)] mod f;`) counts; so does a `super::…` that climbs to the crate root. A failure
//! names the file and line.
//!
//! Inside each folder module the sibling files form no cycle of any length either
//! ([`sibling_files_of_a_folder_module_form_no_cycle`]): the same code lines (multi-line
//! `use …::{` groups joined), every `crate::a::b` and `super::b`, a name a `mod.rs` re-exports
//! traced to the child defining it. Doc links do not count (they build no dependency, and rustdoc
//! resolves them anyway); `mod.rs` is the folder itself, not a sibling.

use std::collections::{BTreeMap, BTreeSet};

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

/// Every file of `crates/core/src`: its module path, its path from there and its text.
fn core_files() -> Vec<(Vec<String>, String, String)> {
    let src = repo().join("crates/core/src");
    files_under(&src, "rs")
        .into_iter()
        .map(|f| {
            let rel = f.strip_prefix(&src).unwrap();
            (module_path(rel), rel.display().to_string(), std::fs::read_to_string(&f).unwrap())
        })
        .collect()
}

#[test]
fn core_modules_use_only_the_modules_below_them() {
    let files = core_files();
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

/// Inside a folder module, the sibling files' strongly connected sets (a cycle of any length)
/// still open, one entry per set, exactly as found. Empty since `usage/` and `import/` lost theirs
/// (issue 27): a new cycle is broken by moving the shared item down, not listed here. An entry
/// that no longer occurs fails the test, so the list can only shrink.
const SIBLING_CYCLES_ALLOWED: &[(&str, &[&str])] = &[];

/// The paths of a `use` tree or an expression path after `crate::`/`super::`: `a::{b, c::{d}}`
/// → `a::b`, `a::c::d` (`self` names the module itself), each with its `as` alias.
fn tree(s: &str, mut path: Vec<String>, out: &mut Vec<(Vec<String>, Option<String>)>) {
    let mut s = s.trim_start();
    loop {
        if let Some(group) = s.strip_prefix('{') {
            let (mut level, mut start) = (0, 0);
            for (j, c) in group.char_indices() {
                match c {
                    '{' => level += 1,
                    '}' if level == 0 => return tree(&group[start..j], path, out),
                    '}' => level -= 1,
                    ',' if level == 0 => {
                        tree(&group[start..j], path.clone(), out);
                        start = j + 1;
                    }
                    _ => {}
                }
            }
            return tree(&group[start..], path, out);
        }
        let id: String = s.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '*').collect();
        if id.is_empty() {
            break;
        }
        s = &s[id.len()..];
        if id != "self" {
            path.push(id);
        }
        match s.strip_prefix("::") {
            Some(r) => s = r.trim_start(),
            None => break,
        }
    }
    let alias = s.trim_start().strip_prefix("as ").map(|a| a.trim().trim_end_matches([';', '}']).trim().to_string());
    out.push((path, alias));
}

/// The paths a code line names, from the crate root: `crate::…`, and `super::…` climbed from the
/// module `at` (a line of `at` = `[journal, reader]` naming `super::json::x` names
/// `journal::json::x`).
fn paths(line: &str, at: &[String]) -> Vec<Vec<String>> {
    let code = line.split("//").next().unwrap_or("");
    let mut out = Vec::new();
    for (i, _) in code.match_indices("crate::").chain(code.match_indices("super::")) {
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':' || c == '$') {
            continue;
        }
        let (mut rest, mut base) = (&code[i..], at.to_vec());
        if let Some(r) = rest.strip_prefix("crate::") {
            (rest, base) = (r, Vec::new());
        }
        while let Some(r) = rest.strip_prefix("super::") {
            rest = r;
            if base.pop().is_none() {
                break;
            }
        }
        tree(rest, base, &mut out);
    }
    out.into_iter().map(|(p, _)| p).collect()
}

/// What each folder's `mod.rs` re-exports from its children: `folder::name` → `folder::child`
/// (`pub use child::{name, x as name}`, `pub use child::*` with the child's `pub` items), so a
/// sibling naming `super::name` is seen to use `child`.
fn reexports(files: &[(Vec<String>, String, String)]) -> BTreeMap<Vec<String>, Vec<String>> {
    let mut map = BTreeMap::new();
    for (path, _, text) in files.iter().filter(|(_, rel, _)| rel.ends_with("mod.rs")) {
        for (_, line) in code_lines(text).0 {
            let Some(rest) = ["pub use ", "pub(crate) use ", "pub(super) use "]
                .iter()
                .find_map(|p| line.trim_start().strip_prefix(p))
            else {
                continue;
            };
            let mut used = Vec::new();
            tree(rest, Vec::new(), &mut used);
            for (p, alias) in used.into_iter().filter(|(p, _)| p.len() >= 2) {
                let child = [path.clone(), vec![p[0].clone()]].concat();
                let names: Vec<String> = match (p.last().map(String::as_str), alias) {
                    (Some("*"), _) => files
                        .iter()
                        .filter(|(f, _, _)| *f == child)
                        .flat_map(|(_, _, t)| t.lines().filter_map(pub_item))
                        .collect(),
                    (_, Some(a)) => vec![a],
                    (Some(name), None) => vec![name.to_string()],
                    _ => continue,
                };
                for name in names {
                    map.insert([path.clone(), vec![name]].concat(), child.clone());
                }
            }
        }
    }
    map
}

/// The name a top-level `pub struct|enum|fn|const|static|type|trait` line declares.
fn pub_item(line: &str) -> Option<String> {
    let rest = line.strip_prefix("pub ")?;
    let rest = ["struct ", "enum ", "fn ", "const ", "static ", "type ", "trait "]
        .iter()
        .find_map(|k| rest.strip_prefix(k))?;
    Some(rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect())
}

/// Per folder module, which child uses which sibling, with the first file:line that shows it.
type Siblings = BTreeMap<Vec<String>, BTreeMap<String, BTreeMap<String, String>>>;

fn sibling_uses(files: &[(Vec<String>, String, String)]) -> Siblings {
    let modules: BTreeSet<Vec<String>> = files.iter().map(|(p, _, _)| p.clone()).collect();
    let test_files: BTreeSet<Vec<String>> = files
        .iter()
        .flat_map(|(path, _, text)| code_lines(text).1.into_iter().map(|m| [path.clone(), vec![m]].concat()))
        .collect();
    let reexported = reexports(files);
    let mut uses = Siblings::new();
    for (path, rel, text) in files.iter().filter(|(p, _, _)| !test_files.contains(p)) {
        for (n, line) in joined(code_lines(text).0) {
            for mut to in paths(&line, path) {
                if let Some(l) = (1..=to.len()).rev().find(|l| reexported.contains_key(&to[..*l])) {
                    to = [reexported[&to[..l]].clone(), to[l..].to_vec()].concat();
                }
                let k = path.iter().zip(&to).take_while(|(a, b)| a == b).count();
                if k == 0 || k >= path.len() || k >= to.len() || !modules.iter().any(|m| m.starts_with(&to[..=k])) {
                    continue;
                }
                let (a, b) = (path[k].clone(), to[k].clone());
                let at = uses.entry(path[..k].to_vec()).or_default().entry(a).or_default();
                at.entry(b).or_insert_with(|| format!("{rel}:{n}"));
            }
        }
    }
    uses
}

/// Code lines with a `use …::{` group that spans lines joined into one (numbered by its first).
fn joined(lines: Vec<(usize, &str)>) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut open = 0i32;
    for (n, line) in lines {
        let code = line.split("//").next().unwrap_or("");
        if open > 0 {
            out.last_mut().unwrap().1.push_str(code.trim());
        } else {
            out.push((n, code.to_string()));
        }
        open = (open + code.matches('{').count() as i32 - code.matches('}').count() as i32).max(0);
        if !out.last().unwrap().1.trim_start().starts_with("use ") && !out.last().unwrap().1.contains(" use ") {
            open = 0;
        }
    }
    out
}

/// The strongly connected sets of more than one module (every cycle lies inside one), by
/// Tarjan's depth-first search; members sorted, sets in discovery order.
fn cycles(edges: &BTreeMap<String, BTreeMap<String, String>>) -> Vec<Vec<String>> {
    struct Dfs<'a> {
        edges: &'a BTreeMap<String, BTreeMap<String, String>>,
        index: BTreeMap<&'a str, (usize, usize)>,
        stack: Vec<&'a str>,
        out: Vec<Vec<String>>,
    }
    impl<'a> Dfs<'a> {
        fn visit(&mut self, v: &'a str) -> usize {
            let i = self.index.len();
            self.index.insert(v, (i, i));
            self.stack.push(v);
            let mut low = i;
            for w in self.edges.get(v).into_iter().flat_map(|m| m.keys()) {
                low = match self.index.get(w.as_str()) {
                    None => low.min(self.visit(w)),
                    Some(&(wi, _)) if self.stack.contains(&w.as_str()) => low.min(wi),
                    Some(_) => low,
                };
            }
            self.index.insert(v, (i, low));
            if low == i {
                let at = self.stack.iter().rposition(|x| *x == v).unwrap();
                let mut set: Vec<String> = self.stack.drain(at..).map(str::to_string).collect();
                set.sort();
                if set.len() > 1 {
                    self.out.push(set);
                }
            }
            low
        }
    }
    let mut dfs = Dfs { edges, index: BTreeMap::new(), stack: Vec::new(), out: Vec::new() };
    for v in edges.keys() {
        if !dfs.index.contains_key(v.as_str()) {
            dfs.visit(v);
        }
    }
    dfs.out
}

#[test]
fn sibling_files_of_a_folder_module_form_no_cycle() {
    let files = core_files();
    let uses = sibling_uses(&files);
    let seen: usize = uses.values().flat_map(|m| m.values()).map(|m| m.len()).sum();
    assert!(seen > 50, "the scan found only {seen} uses between sibling files: is it broken?");
    let mut found = BTreeSet::new();
    let mut bad = Vec::new();
    for (folder, edges) in &uses {
        for set in cycles(edges) {
            let folder = folder.join("/");
            let allowed = SIBLING_CYCLES_ALLOWED.iter().any(|(f, s)| *f == folder && *s == set.as_slice());
            if !allowed {
                let how: Vec<String> = set
                    .iter()
                    .flat_map(|a| {
                        edges[a]
                            .iter()
                            .filter(|(b, _)| set.contains(b))
                            .map(move |(b, at)| format!("  {a} -> {b} ({at})"))
                    })
                    .collect();
                bad.push(format!("{folder}: {{{}}} use one another:\n{}", set.join(", "), how.join("\n")));
            }
            found.insert((folder, set));
        }
    }
    for (folder, set) in SIBLING_CYCLES_ALLOWED {
        if !found.contains(&(folder.to_string(), set.iter().map(|s| s.to_string()).collect::<Vec<_>>())) {
            bad.push(format!(
                "SIBLING_CYCLES_ALLOWED: {folder}: {{{}}} no longer occurs as listed; update the entry",
                set.join(", ")
            ));
        }
    }
    assert!(bad.is_empty(), "{} sibling cycle problem(s):\n{}", bad.len(), bad.join("\n"));
}

#[test]
fn the_sibling_scan_reads_every_form_and_finds_a_cycle() {
    let at = |s: &str| s.split("::").map(str::to_string).collect::<Vec<_>>();
    let line = "use super::{json::{a, b as c}, self, numbers}; let x = crate::cache::f(super::super::tokens::E);";
    let mut got = paths(line, &at("journal::reader"));
    got.sort();
    let want: Vec<Vec<String>> =
        ["cache::f", "journal", "journal::json::a", "journal::json::b", "journal::numbers", "tokens::E"].map(at).into();
    assert_eq!(got, want);
    assert_eq!(
        joined(vec![(3, "use super::{"), (4, "    a, b,"), (5, "};"), (6, "fn f() {")]),
        [(3, "use super::{a, b,};".to_string()), (6, "fn f() {".to_string())]
    );
    let edge = |a: &str, b: &str| (a.to_string(), BTreeMap::from([(b.to_string(), String::new())]));
    let three = BTreeMap::from([edge("a", "b"), edge("b", "c"), edge("c", "a"), edge("d", "a")]);
    assert_eq!(cycles(&three), [at("a::b::c")]);
    assert!(cycles(&BTreeMap::from([edge("a", "b"), edge("b", "c")])).is_empty());
    let files = vec![
        (at("j"), "j/mod.rs".to_string(), "mod r;\nmod s;\npub use r::*;\npub use s::{T as U};\n".to_string()),
        (at("j::r"), "j/r.rs".to_string(), "use super::U;\npub struct R;\n".to_string()),
        (at("j::s"), "j/s.rs".to_string(), "use crate::j::R;\npub struct T;\n".to_string()),
    ];
    let uses = sibling_uses(&files);
    assert_eq!(cycles(&uses[&at("j")]), [at("r::s")]);
}
