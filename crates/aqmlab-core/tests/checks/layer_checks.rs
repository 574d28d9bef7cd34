//! The core's layers, checked on its sources: each top-level module of `src/` may use only the
//! modules below it in [`LAYERS`] (docs/architecture.md, "Layers"), so no import circle can form
//! and a lower layer never reaches into a higher one (e.g. `record` into `scenario`). A new
//! top-level module must be given its place in the list. Inside a layer, no file uses one that
//! uses it back, a parent's uses of its own children (`child::x`, re-exports among them)
//! included: a directory's `mod.rs` (and `lib.rs`) is held to the rule like any other file, so a
//! child that uses `mod.rs` while `mod.rs` uses it back is a circle. In `queue/` and
//! `transport/cc/`, `mod.rs` holds the trait and the types every discipline or controller
//! shares, `registry.rs` the list that uses each one's file, and `mod.rs` names none of them; in
//! `transport/tcp/` and its `sender/`, `mod.rs` re-exports or composes files that never name it.

use std::path::{Path, PathBuf};

/// The top-level modules, bottom up: a module may use the ones before it.
const LAYERS: [&str; 11] = [
    "units",
    "rng",
    "packet",
    "params",
    "queue",
    "record",
    "net",
    "transport",
    "app",
    "sim",
    "scenario",
];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The text without `//` comments (doc comments name other layers freely).
fn code(text: &str) -> String {
    text.lines()
        .map(|l| l.split_once("//").map_or(l, |(c, _)| c))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules a file's code names with `crate::` paths, including each first
/// segment of a `crate::{a, b::c}` group.
fn used_modules(code: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut used = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        let Some(group) = rest.strip_prefix('{') else {
            used.push(ident(rest));
            continue;
        };
        let mut depth = 0;
        let mut item_start = true;
        for (j, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => item_start = true,
                c if item_start && !c.is_whitespace() => {
                    used.push(ident(&group[j..]));
                    item_start = false;
                }
                _ => {}
            }
        }
    }
    used
}

#[test]
fn every_module_uses_only_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut problems = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&src).expect("under src/");
        let first = rel.iter().next().and_then(|s| s.to_str()).expect("a name");
        let module = first.strip_suffix(".rs").unwrap_or(first);
        if module == "lib" {
            continue;
        }
        let Some(layer) = LAYERS.iter().position(|m| *m == module) else {
            problems.push(format!(
                "{}: module {module} has no place in LAYERS",
                rel.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(file).expect("a readable source");
        for used in used_modules(&code(&text)) {
            match LAYERS.iter().position(|m| *m == used) {
                Some(l) if l > layer => problems.push(format!(
                    "{}: {module} uses {used}, a higher layer (order: {})",
                    rel.display(),
                    LAYERS.join(" < ")
                )),
                _ => {}
            }
        }
    }
    assert!(
        files.len() > LAYERS.len(),
        "found only {} source files",
        files.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn grouped_paths_and_comments_are_read() {
    // the reader itself: a group's first segments count, nested groups and comments do not
    let used = used_modules(&code(
        "use crate::{net::{Link, x::Y}, record};\nlet a = crate::sim::World::new(); // crate::app\n",
    ));
    assert_eq!(used, ["net", "record", "sim"]);
}

/// A source file's module path: `queue/codel.rs` -> [queue, codel], `queue/mod.rs` -> [queue].
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|s| s.to_str().expect("a name").trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// Every path a file's code names (`crate::a::b`, `super::c`, `self::d`, in `use` groups too;
/// with `children`, the names of the file's child modules, also `child::e`), as absolute module
/// paths (segments), each as long as it goes.
fn named_paths(code: &str, own: &[String], children: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let segments = |s: &str| -> Vec<String> {
        let mut v = Vec::new();
        let mut rest = s;
        loop {
            let id: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if id.is_empty() {
                break;
            }
            rest = &rest[id.len()..];
            v.push(id);
            match rest.strip_prefix("::") {
                Some(r) if !r.starts_with('{') && !r.starts_with('*') => rest = r,
                _ => break,
            }
        }
        v
    };
    for (i, _) in code.match_indices("::") {
        // the start of the path this `::` belongs to
        let head_start = code[..i]
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .map_or(0, |p| p + 1);
        if head_start + 1 > i || code[head_start..i].contains("::") {
            continue; // not the path's first `::`
        }
        let head = &code[head_start..i];
        // `super::` and `self::` are relative to the file's own module (`a/mod.rs` is `a`)
        let rel: Vec<String> = match head {
            "crate" => Vec::new(),
            "super" => own[..own.len().saturating_sub(1)].to_vec(),
            "self" => own.to_vec(),
            // a child's item named from its parent: a path relative to the parent, one segment in
            c if children.iter().any(|n| n == c) => own.to_vec(),
            _ => continue,
        };
        // a child's name is the path's first segment
        let tail_start = if children.iter().any(|n| n == head) {
            head_start
        } else {
            i + 2
        };
        let tail = &code[tail_start..];
        let mut starts = vec![tail];
        if let Some(group) = tail.strip_prefix('{') {
            // each item of a `{a, b::c}` group, one level deep
            starts = group.split([',', '}']).map(str::trim_start).collect();
        }
        for s in starts {
            let mut p = rel.clone();
            let mut rest = s;
            // `super::super::x`
            while let Some(r) = rest.strip_prefix("super::") {
                p.pop();
                rest = r;
            }
            p.extend(segments(rest));
            if !p.is_empty() {
                out.push(p);
            }
        }
    }
    out
}

/// The extent of a string or character literal starting at byte `i` of `code` (`"..."` with
/// escapes, raw `r#"..."#`), or None when none starts there.
fn literal_end(code: &[u8], i: usize) -> Option<usize> {
    let raw = code[i] == b'r' && (i == 0 || !(code[i - 1].is_ascii_alphanumeric() || code[i - 1] == b'_'));
    if raw {
        let hashes = code[i + 1..].iter().take_while(|&&c| c == b'#').count();
        if code.get(i + 1 + hashes) != Some(&b'"') {
            return None;
        }
        let close: Vec<u8> = std::iter::once(b'"')
            .chain(std::iter::repeat_n(b'#', hashes))
            .collect();
        let body = i + 2 + hashes;
        let at = code[body..]
            .windows(close.len())
            .position(|w| w == close.as_slice())?;
        return Some(body + at + close.len());
    }
    if code[i] != b'"' {
        return None;
    }
    let mut j = i + 1;
    while j < code.len() {
        match code[j] {
            b'\\' => j += 2,
            b'"' => return Some(j + 1),
            _ => j += 1,
        }
    }
    Some(code.len())
}

/// The inline modules of a file's code (`mod name {` at a line's start, e.g. `mod tests`),
/// outermost only: (start, end, name), the end past the closing brace, braces in string
/// literals not counted.
fn inline_modules(code: &str) -> Vec<(usize, usize, String)> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while at < code.len() {
        let line_end = code[at..].find('\n').map_or(code.len(), |n| at + n + 1);
        let t = code[at..line_end].trim_start();
        let t = t
            .strip_prefix("pub ")
            .or_else(|| t.strip_prefix("pub(crate) "))
            .unwrap_or(t);
        let name: String = t
            .strip_prefix("mod ")
            .map(|r| {
                r.chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect()
            })
            .unwrap_or_default();
        let open = code[at..line_end].find('{').map(|n| at + n);
        match open {
            Some(open) if !name.is_empty() && code[at..open].trim_end().ends_with(name.as_str()) => {
                let (mut depth, mut i) = (0usize, open);
                while i < bytes.len() {
                    if let Some(end) = literal_end(bytes, i) {
                        i = end;
                        continue;
                    }
                    match bytes[i] {
                        b'{' => depth += 1,
                        b'}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                let end = (i + 1).min(code.len());
                out.push((at, end, name));
                at = end;
            }
            _ => at = line_end,
        }
    }
    out
}

/// Which source file a module path names: the longest prefix that is a file.
fn file_of(path: &[String], files: &std::collections::BTreeMap<Vec<String>, PathBuf>) -> Option<Vec<String>> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| files.contains_key(p))
}

/// The file-level graph: file -> the files its code names (a parent's uses of its children
/// included).
fn file_graph(
    src: &Path,
) -> std::collections::BTreeMap<Vec<String>, std::collections::BTreeSet<Vec<String>>> {
    let mut paths = Vec::new();
    sources(src, &mut paths);
    let files: std::collections::BTreeMap<Vec<String>, PathBuf> = paths
        .iter()
        .map(|p| (module_path(p.strip_prefix(src).expect("under src/")), p.clone()))
        .collect();
    let mut graph = std::collections::BTreeMap::new();
    for (m, file) in &files {
        let text = std::fs::read_to_string(file).expect("a readable source");
        // a file's own test module is part of the file (a level below it: `inline_modules`);
        // the code of its children is not
        let mut to = std::collections::BTreeSet::new();
        let parent = files.keys().any(|f| f.len() > m.len() && f.starts_with(m));
        let children: Vec<String> = if parent {
            files
                .keys()
                .filter(|f| f.len() == m.len() + 1 && f.starts_with(m))
                .map(|f| f[m.len()].clone())
                .collect()
        } else {
            Vec::new()
        };
        // an inline module (`mod tests { ... }`) is a level below its file: its `super::` is
        // the file itself
        let code = code(&text);
        let inline = inline_modules(&code);
        let mut outer = String::new();
        let mut from = 0;
        let mut named = Vec::new();
        for (start, end, name) in &inline {
            outer.push_str(&code[from..*start]);
            outer.push('\n');
            let mut below = m.clone();
            below.push(name.clone());
            named.extend(named_paths(&code[*start..*end], &below, &[]));
            from = *end;
        }
        outer.push_str(&code[from..]);
        named.extend(named_paths(&outer, m, &children));
        for p in named {
            if let Some(f) = file_of(&p, &files) {
                if &f != m {
                    to.insert(f);
                }
            }
        }
        graph.insert(m.clone(), to);
    }
    graph
}

/// One circle of a graph (the first file repeated at the end), or None.
fn file_circle(
    graph: &std::collections::BTreeMap<Vec<String>, std::collections::BTreeSet<Vec<String>>>,
) -> Option<Vec<String>> {
    fn visit(
        m: &Vec<String>,
        graph: &std::collections::BTreeMap<Vec<String>, std::collections::BTreeSet<Vec<String>>>,
        state: &mut std::collections::BTreeMap<Vec<String>, u8>,
        path: &mut Vec<Vec<String>>,
    ) -> Option<Vec<String>> {
        state.insert(m.clone(), 1);
        path.push(m.clone());
        for n in graph.get(m).into_iter().flatten() {
            match state.get(n) {
                Some(1) => {
                    let at = path.iter().position(|p| p == n).expect("on the path");
                    let mut c: Vec<String> = path[at..].iter().map(|p| p.join("/")).collect();
                    c.push(n.join("/"));
                    return Some(c);
                }
                None => {
                    if let Some(c) = visit(n, graph, state, path) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        path.pop();
        state.insert(m.clone(), 2);
        None
    }
    let mut state = std::collections::BTreeMap::new();
    for m in graph.keys() {
        if !state.contains_key(m) {
            if let Some(c) = visit(m, graph, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn an_inline_module_is_a_level_below_its_file() {
    // `super::` in a file's `mod tests` is the file; braces inside strings do not end it; code
    // after the module is the file's again
    let code = "use crate::x::A;\nmod tests {\n    use super::*;\n    const S: &str = \"}\";\n    fn f() { let _ = r#\"{\"#; }\n}\nfn g() { super::y::B; }\n";
    let inline = inline_modules(code);
    assert_eq!(inline.len(), 1, "{inline:?}");
    let (start, end, name) = &inline[0];
    assert_eq!(name, "tests");
    assert!(code[*start..*end].ends_with("}\n}") || code[*start..*end].ends_with('}'));
    assert!(code[*end..].contains("fn g()"));
}

#[test]
fn a_circle_of_files_is_seen() {
    // a/mod.rs names b's item, b names a's through super::: a circle; c names a only: none
    let dir = std::env::temp_dir().join(format!("aqmlab-layers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("a")).expect("a temporary directory");
    std::fs::write(dir.join("a/mod.rs"), "use crate::b::B;\npub struct A;\n").expect("written");
    std::fs::write(dir.join("b.rs"), "pub struct B(crate::a::A);\n").expect("written");
    std::fs::write(dir.join("c.rs"), "use crate::a::A;\n").expect("written");
    let graph = file_graph(&dir);
    assert_eq!(
        file_circle(&graph),
        Some(vec!["a".into(), "b".into(), "a".into()])
    );
    std::fs::write(dir.join("b.rs"), "pub struct B;\n").expect("written");
    assert_eq!(file_circle(&file_graph(&dir)), None);
    // d/mod.rs re-exports its child's item, which uses d's: the parent's uses of its children
    // count, so this is a circle
    std::fs::create_dir_all(dir.join("d")).expect("a temporary directory");
    std::fs::write(dir.join("d/mod.rs"), "pub mod e;\npub use e::E;\npub struct D;\n").expect("written");
    std::fs::write(dir.join("d/e.rs"), "use super::D;\npub struct E(D);\n").expect("written");
    assert_eq!(
        file_circle(&file_graph(&dir)),
        Some(vec!["d".into(), "d/e".into(), "d".into()])
    );
    // a parent that declares its child and names none of its items: no circle
    std::fs::write(dir.join("d/mod.rs"), "pub mod e;\npub struct D;\n").expect("written");
    assert_eq!(file_circle(&file_graph(&dir)), None);
    std::fs::remove_dir_all(&dir).expect("removed");
}

#[test]
fn a_circle_injected_into_the_sources_is_seen() {
    // the rule on a copy of the real tree, one line added each time: a re-export in a parent
    // whose children use it (queue/, transport/cc/), a use of the TCP code from the file
    // below it (transport/wire.rs, which transport/tcp/ uses), of the event loop from the
    // event queue it uses, after the queue's test module (whose `super::` is the file itself),
    // and of a parent's re-export from the file it re-exports (transport/tcp/, its sender/)
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    for (file, line, ends) in [
        (
            "queue/mod.rs",
            "pub use registry::AnyQdisc;",
            ["queue", "queue/registry"],
        ),
        (
            "transport/cc/mod.rs",
            "pub use cubic::Cubic;",
            ["transport/cc", "transport/cc/cubic"],
        ),
        (
            "transport/wire.rs",
            "use crate::transport::tcp::TcpConfig;",
            ["transport/wire", "transport/tcp"],
        ),
        ("sim/events.rs", "use super::World;", ["sim", "sim/events"]),
        (
            "transport/tcp/config.rs",
            "use super::TcpConfig;",
            ["transport/tcp", "transport/tcp/config"],
        ),
        (
            "transport/tcp/sender/state.rs",
            "use super::SenderState;",
            ["transport/tcp/sender", "transport/tcp/sender/state"],
        ),
    ] {
        let dir = std::env::temp_dir().join(format!("aqmlab-injected-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for f in &files {
            let to = dir.join(f.strip_prefix(&src).expect("under src/"));
            std::fs::create_dir_all(to.parent().expect("a parent")).expect("a temporary directory");
            std::fs::copy(f, &to).expect("copied");
        }
        assert_eq!(
            file_circle(&file_graph(&dir)),
            None,
            "the copy of src/ has a circle"
        );
        let text = std::fs::read_to_string(dir.join(file)).expect("read");
        std::fs::write(dir.join(file), format!("{text}\n{line}\n")).expect("written");
        let found = file_circle(&file_graph(&dir));
        std::fs::remove_dir_all(&dir).expect("removed");
        let c = found.unwrap_or_else(|| panic!("{file} + `{line}`: no circle seen"));
        assert!(
            ends.iter().all(|e| c.iter().any(|f| f == e)),
            "{file} + `{line}`: {c:?}"
        );
    }
}

#[test]
fn no_file_uses_one_that_uses_it_back() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = file_graph(&src);
    let mut circles = Vec::new();
    let mut g = graph.clone();
    // every circle, one at a time: each found circle's last edge is removed and the search goes on
    while let Some(c) = file_circle(&g) {
        circles.push(c.join(" -> "));
        let n = c.len();
        let from: Vec<String> = c[n - 2].split('/').map(String::from).collect();
        let to: Vec<String> = c[n - 1].split('/').map(String::from).collect();
        g.get_mut(&from).expect("a file").remove(&to);
    }
    assert!(
        circles.is_empty(),
        "{} circles:\n{}",
        circles.len(),
        circles.join("\n")
    );
}
