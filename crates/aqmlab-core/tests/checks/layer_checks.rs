//! The core's layers, checked on its sources: each top-level module of `src/` may use only the
//! modules below it in [`LAYERS`] (docs/architecture.md, "Layers"), so no import circle can form
//! and a lower layer never reaches into a higher one (e.g. `record` into `scenario`). A new
//! top-level module must be given its place in the list.

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
