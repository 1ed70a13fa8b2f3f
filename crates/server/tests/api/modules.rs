//! The server crate's modules depend on each other one way only: no module reaches, through
//! the modules it uses, back to itself, and no module uses one of a layer above its own (the
//! layers of docs/architecture.md). Read from the sources: every `crate::…` and `super::…`
//! path outside the `#[cfg(test)]` block of a file is an edge from that file to the module it
//! names. Two graphs must be free of circles: the top-level modules (a directory counts as one),
//! and the files (a `mod.rs` declaring and re-exporting its own children is not an edge).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module path of every source file of the library (`lib.rs` is the empty path).
fn modules() -> BTreeMap<Vec<String>, PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = BTreeMap::new();
    let mut pending = vec![root.clone()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("src is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            if path.extension().is_none_or(|ext| ext != "rs") {
                continue;
            }
            let relative = path.strip_prefix(&root).expect("under src");
            let mut segments: Vec<String> = relative
                .with_extension("")
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect();
            if segments.last().is_some_and(|s| s == "mod" || s == "lib") {
                segments.pop();
            }
            if segments == ["main"] {
                continue;
            }
            found.insert(segments, path);
        }
    }
    found
}

/// The paths of one `use` tree, its groups expanded: `a::{b, c::{d}}` gives `a::b` and `a::c::d`.
fn use_tree(text: &[u8], pos: &mut usize) -> Vec<Vec<String>> {
    let skip_space = |pos: &mut usize| {
        while *pos < text.len() && text[*pos].is_ascii_whitespace() {
            *pos += 1;
        }
    };
    let mut prefix = Vec::new();
    loop {
        skip_space(pos);
        if text.get(*pos) == Some(&b'{') {
            *pos += 1;
            let mut paths = Vec::new();
            loop {
                skip_space(pos);
                match text.get(*pos) {
                    None => return paths,
                    Some(b'}') => {
                        *pos += 1;
                        return paths;
                    }
                    Some(b',') => *pos += 1,
                    Some(_) => {
                        let before = *pos;
                        for inner in use_tree(text, pos) {
                            paths.push([prefix.clone(), inner].concat());
                        }
                        if *pos == before {
                            *pos += 1;
                        }
                    }
                }
            }
        }
        let start = *pos;
        while *pos < text.len() && (text[*pos].is_ascii_alphanumeric() || text[*pos] == b'_') {
            *pos += 1;
        }
        if start == *pos {
            return vec![prefix];
        }
        prefix.push(String::from_utf8_lossy(&text[start..*pos]).into_owned());
        skip_space(pos);
        if text[*pos..].starts_with(b"::") {
            *pos += 2;
        } else {
            return vec![prefix];
        }
    }
}

/// The module paths a file names, relative to the crate root.
fn references(module: &[String], source: &str) -> Vec<Vec<String>> {
    let code: String = source
        .split("#[cfg(test)]")
        .next()
        .unwrap_or_default()
        .lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    let text = code.as_bytes();
    let mut paths = Vec::new();
    let mut pos = 0;
    while pos < text.len() {
        let boundary =
            pos == 0 || !(text[pos - 1].is_ascii_alphanumeric() || text[pos - 1] == b'_');
        if boundary && text[pos..].starts_with(b"crate::") {
            pos += "crate::".len();
            paths.extend(use_tree(text, &mut pos));
        } else if boundary && text[pos..].starts_with(b"super::") {
            // `super` is the enclosing module: the directory of a file, the parent of a `mod.rs`.
            let mut base: Vec<String> = module.to_vec();
            base.pop();
            pos += "super::".len();
            while text[pos..].starts_with(b"super::") {
                base.pop();
                pos += "super::".len();
            }
            for tail in use_tree(text, &mut pos) {
                paths.push([base.clone(), tail].concat());
            }
        } else {
            pos += 1;
        }
    }
    paths
}

/// The longest prefix of `path` that is a module of the crate.
fn resolve<'a>(
    modules: &'a BTreeMap<Vec<String>, PathBuf>,
    path: &[String],
) -> Option<&'a Vec<String>> {
    let path: Vec<String> = path.iter().filter(|s| *s != "self").cloned().collect();
    (1..=path.len())
        .rev()
        .find_map(|n| modules.get_key_value(&path[..n]).map(|(key, _)| key))
}

/// A circle in `edges`, if there is one, as the list of its nodes.
fn circle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, bool>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(node) {
            Some(true) => return None,
            Some(false) => {
                let start = stack.iter().position(|n| n == node).unwrap_or(0);
                let mut found = stack[start..].to_vec();
                found.push(node.to_string());
                return Some(found);
            }
            None => {}
        }
        state.insert(node.to_string(), false);
        stack.push(node.to_string());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, edges, state, stack) {
                return Some(found);
            }
        }
        stack.pop();
        state.insert(node.to_string(), true);
        None
    }
    let mut state = BTreeMap::new();
    edges
        .keys()
        .find_map(|node| visit(node, edges, &mut state, &mut Vec::new()))
}

fn graphs() -> (
    BTreeMap<String, BTreeSet<String>>,
    BTreeMap<String, BTreeSet<String>>,
) {
    let modules = modules();
    let mut top = BTreeMap::<String, BTreeSet<String>>::new();
    let mut files = BTreeMap::<String, BTreeSet<String>>::new();
    for (module, path) in &modules {
        if module.is_empty() {
            continue;
        }
        let source = std::fs::read_to_string(path).expect("a readable source file");
        let is_dir_module = path.file_name().is_some_and(|name| name == "mod.rs");
        for reference in references(module, &source) {
            let Some(target) = resolve(&modules, &reference) else {
                continue;
            };
            if target.is_empty() || target == module {
                continue;
            }
            if target[0] != module[0] {
                top.entry(module[0].clone())
                    .or_default()
                    .insert(target[0].clone());
            }
            let declares_it = is_dir_module && target.starts_with(module);
            if !declares_it {
                files
                    .entry(module.join("::"))
                    .or_default()
                    .insert(target.join("::"));
            }
        }
    }
    (top, files)
}

/// The layers of the crate, top first (docs/architecture.md): a module may use the modules of
/// its own layer and of the layers below it, never one above.
const LAYERS: [(&str, &[&str]); 7] = [
    ("start-up", &["app", "cli"]),
    ("bindings", &["bindings"]),
    ("pipeline", &["pipeline"]),
    ("conformance kit", &["conformance"]),
    ("edge", &["edge"]),
    (
        "core",
        &[
            "service", "runtime", "store", "push", "limits", "auth", "error", "respond",
        ],
    ),
    (
        "leaves",
        &[
            "config",
            "paths",
            "metrics",
            "hashing",
            "telemetry",
            "redis_conn",
            "wire",
            "gcra",
        ],
    ),
];

/// The layer of a top-level module, as its index in [`LAYERS`] (0 is the top).
fn layer(module: &str) -> Option<usize> {
    LAYERS
        .iter()
        .position(|(_, modules)| modules.contains(&module))
}

/// Every use of a module of a layer above the user's own, and every module in no layer, as
/// readable lines.
fn against_the_layers(top: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut wrong = Vec::new();
    for (from, uses) in top {
        for to in uses {
            match (layer(from), layer(to)) {
                (Some(user), Some(used)) if used < user => wrong.push(format!(
                    "{from} ({}) uses {to} ({}), a layer above it",
                    LAYERS[user].0, LAYERS[used].0
                )),
                (Some(_), Some(_)) => {}
                (None, _) => wrong.push(format!("{from} is in no layer")),
                (_, None) => wrong.push(format!("{to} is in no layer")),
            }
        }
    }
    wrong.dedup();
    wrong
}

#[test]
fn every_module_uses_only_its_own_layer_and_those_below() {
    let (top, _) = graphs();
    let modules = modules();
    let mut wrong = against_the_layers(&top);
    for module in modules.keys().filter_map(|path| path.first()) {
        if layer(module).is_none() {
            wrong.push(format!("{module} is in no layer"));
        }
    }
    wrong.dedup();
    assert_eq!(wrong, Vec::<String>::new(), "imports against the layers");
}

#[test]
fn the_layer_check_rejects_an_import_from_above() {
    let mut edges = BTreeMap::<String, BTreeSet<String>>::new();
    for (from, to) in [("bindings", "pipeline"), ("service", "bindings")] {
        edges.entry(from.into()).or_default().insert(to.into());
    }
    assert_eq!(
        against_the_layers(&edges),
        vec!["service (core) uses bindings (bindings), a layer above it".to_string()]
    );
}

#[test]
fn no_module_of_the_server_reaches_back_to_itself() {
    let (top, files) = graphs();
    assert!(
        top.get("bindings")
            .is_some_and(|uses| uses.contains("pipeline")),
        "the reader sees the binding's use of the pipeline: {top:?}"
    );
    assert_eq!(circle(&top), None, "a circle of top-level modules");
    assert_eq!(circle(&files), None, "a circle of files");
}

#[test]
fn the_circle_finder_finds_a_circle() {
    let mut edges = BTreeMap::<String, BTreeSet<String>>::new();
    for (from, to) in [("config", "auth"), ("auth", "store"), ("store", "config")] {
        edges.entry(from.into()).or_default().insert(to.into());
    }
    assert_eq!(
        circle(&edges),
        Some(vec![
            "auth".into(),
            "store".into(),
            "config".into(),
            "auth".into()
        ])
    );
    let mut pos = 0;
    assert_eq!(
        use_tree(b"http::{self, AppState}, x", &mut pos),
        vec![
            vec!["http".to_string(), "self".into()],
            vec!["http".into(), "AppState".into()]
        ]
    );
}

/// The longest a function of the server may be, from its `fn` line to its closing brace, and
/// the longest a file may be: past them, a function or file holds more than one job.
const MAX_FUNCTION_LINES: usize = 80;
const MAX_FILE_LINES: usize = 800;

/// The source with comments, string and char literals blanked (their line breaks kept), so
/// that the braces left are the code's.
fn code_only(source: &str) -> Vec<u8> {
    let text = source.as_bytes();
    let mut code = text.to_vec();
    let blank = |code: &mut Vec<u8>, from: usize, to: usize| {
        for byte in &mut code[from..to.min(text.len())] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
    };
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let end = if rest.starts_with(b"//") {
            rest.iter()
                .position(|&b| b == b'\n')
                .map_or(text.len(), |n| i + n)
        } else if rest.starts_with(b"/*") {
            find(rest, b"*/").map_or(text.len(), |n| i + n + 2)
        } else if rest.starts_with(b"r\"") || rest.starts_with(b"r#") {
            let hashes = rest[1..].iter().take_while(|&&b| b == b'#').count();
            if rest.get(1 + hashes) != Some(&b'"') {
                i += 1;
                continue;
            }
            let closing: Vec<u8> = std::iter::once(b'"').chain(vec![b'#'; hashes]).collect();
            find(&rest[2 + hashes..], &closing)
                .map_or(text.len(), |n| i + 2 + hashes + n + closing.len())
        } else if rest[0] == b'"' {
            let mut j = 1;
            while j < rest.len() && rest[j] != b'"' {
                j += if rest[j] == b'\\' { 2 } else { 1 };
            }
            i + j + 1
        } else if rest[0] == b'\'' && rest.get(1) == Some(&b'\\') {
            rest.get(3..)
                .and_then(|tail| tail.iter().position(|&b| b == b'\''))
                .map_or(text.len(), |n| i + 4 + n)
        } else if rest[0] == b'\'' && rest.get(2) == Some(&b'\'') {
            i + 3
        } else {
            i += 1;
            continue;
        };
        blank(&mut code, i, end);
        i = end;
    }
    code
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// Each function of `source` longer than `max` lines, as `name (lines)`.
fn long_functions(source: &str, max: usize) -> Vec<String> {
    let code = code_only(source);
    let line_of = |at: usize| code[..at].iter().filter(|&&b| b == b'\n').count();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut long = Vec::new();
    for at in 0..code.len().saturating_sub(3) {
        let keyword = code[at..].starts_with(b"fn ") && (at == 0 || !ident(code[at - 1]));
        if !keyword {
            continue;
        }
        let name: String = code[at + 3..]
            .iter()
            .take_while(|&&b| ident(b))
            .map(|&b| b as char)
            .collect();
        let Some(open) = code[at..].iter().position(|&b| b == b'{' || b == b';') else {
            continue;
        };
        if code[at + open] == b';' {
            continue;
        }
        let mut depth = 0usize;
        for (offset, &byte) in code[at + open..].iter().enumerate() {
            match byte {
                b'{' => depth += 1,
                b'}' => depth -= 1,
                _ => continue,
            }
            if depth == 0 {
                let lines = line_of(at + open + offset) - line_of(at) + 1;
                if lines > max {
                    long.push(format!("{name} ({lines} lines)"));
                }
                break;
            }
        }
    }
    long
}

#[test]
fn no_function_of_the_server_is_over_80_lines_and_no_file_over_800() {
    let mut too_long = Vec::new();
    for (module, path) in modules() {
        let source = std::fs::read_to_string(&path).expect("a source file is readable");
        let lines = source.lines().count();
        if lines > MAX_FILE_LINES {
            too_long.push(format!("{} ({lines} lines)", path.display()));
        }
        for function in long_functions(&source, MAX_FUNCTION_LINES) {
            too_long.push(format!("{}::{function}", module.join("::")));
        }
    }
    assert_eq!(
        too_long,
        Vec::<String>::new(),
        "functions or files too long"
    );
}

#[test]
fn the_length_check_finds_a_long_function_past_braces_in_literals() {
    let body = "    let x = 1;\n".repeat(80);
    let source = format!(
        "fn short() {{ let s = \"}}\"; let c = '{{'; }}\n// fn commented() {{\nfn long() {{\n{body}}}\nfn declared();\n"
    );
    assert_eq!(
        long_functions(&source, 80),
        vec!["long (82 lines)".to_string()]
    );
    assert_eq!(long_functions(&source, 82), Vec::<String>::new());
}
