//! Lists the file-level import loops of crew's module trees, and fails (exit status 1) on the
//! ones the layout forbids (`src/lib.rs`, "Layers"):
//! - a loop whose files stand in more than one folder;
//! - a loop of more than three files;
//! - a loop inside one folder that the folder's `mod.rs` does not name: a line of its module docs
//!   that says "import loop" and names every file of it (`name.rs`), within three lines.
//! It also fails on a file of more than `MAX_LINES` lines outside its `#[cfg(test)]` modules.
//! `scripts/import-loops.allowed` lists exceptions (none today): a loop passes if its files are
//! all on one `loop` line there, a long file if it has a `long` line; whatever else appears
//! fails.
//!
//! Run by `.ci/run`: `rustc -O -o import-loops scripts/import-loops.rs && ./import-loops`, from
//! the repository's root. No dependencies.
//!
//! What counts as an import of file A by file B: a path in B's code (a `use` tree, or a path in an
//! expression or type) that starts with `crate::`, `super::`, `self::` or a module name B brought
//! in with `use`, and names an item of A's module; an item re-exported with `pub use` is followed
//! to the module that defines it. Comments, strings and `#[cfg(test)]` modules are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The longest file allowed, not counting its `#[cfg(test)]` modules.
const MAX_LINES: usize = 650;

/// The module trees checked: (folder, root file, the root's module path in its crate).
const TREES: &[(&str, &str, &[&str])] =
    &[("src", "src/lib.rs", &[]), ("benches/common", "benches/common/mod.rs", &["common"])];

/// One file of a tree.
struct File {
    path: PathBuf,
    module: Vec<String>,
    /// Its code, without comments, strings, char literals or `#[cfg(test)]` modules.
    code: String,
}

/// The file of loops and long files allowed for now.
const ALLOWED: &str = "scripts/import-loops.allowed";

fn main() -> ExitCode {
    let allowed = fs::read_to_string(ALLOWED).unwrap_or_default();
    let allowed_loops: Vec<BTreeSet<&str>> = allowed
        .lines()
        .filter_map(|line| line.strip_prefix("loop "))
        .map(|files| files.split_whitespace().collect())
        .collect();
    let allowed_long: BTreeSet<&str> =
        allowed.lines().filter_map(|line| line.strip_prefix("long ")).map(str::trim).collect();
    let mut failures = Vec::new();
    for (folder, root, root_module) in TREES {
        let files = read_tree(Path::new(folder), Path::new(root), root_module);
        let graph = imports(&files);
        let loops = strongly_connected(&graph, files.len());
        for members in loops.iter().filter(|members| members.len() > 1) {
            let names: Vec<String> = members.iter().map(|&i| files[i].path.display().to_string()).collect();
            println!("import loop of {} files: {}", members.len(), names.join(", "));
            for &from in members {
                for (&to, items) in &graph[from] {
                    if members.contains(&to) {
                        let items: Vec<&str> = items.iter().map(String::as_str).collect();
                        println!(
                            "  {} -> {}: {}",
                            files[from].path.display(),
                            files[to].path.display(),
                            items.join(", ")
                        );
                    }
                }
            }
            let folders: BTreeSet<&Path> = members.iter().map(|&i| files[i].path.parent().unwrap()).collect();
            if allowed_loops.iter().any(|line| names.iter().all(|name| line.contains(name.as_str()))) {
                println!("  (allowed for now: {ALLOWED})");
            } else if folders.len() > 1 {
                failures.push(format!("a loop across folders: {}", names.join(", ")));
            } else if members.len() > 3 {
                failures.push(format!("a loop of more than three files: {}", names.join(", ")));
            } else if !named_in_mod_rs(folders.into_iter().next().unwrap(), members.iter().map(|&i| &files[i].path)) {
                failures.push(format!("a loop its folder's mod.rs does not name (a doc line saying \"import loop\" and naming each file): {}", names.join(", ")));
            }
        }
        for file in &files {
            let lines = file.code.lines().count();
            if lines > MAX_LINES && !allowed_long.contains(file.path.to_string_lossy().as_ref()) {
                failures
                    .push(format!("{}: {lines} lines outside its tests (at most {MAX_LINES})", file.path.display()));
            }
        }
    }
    if failures.is_empty() {
        println!("import-loops: no loop or file over {MAX_LINES} lines beyond {ALLOWED}");
        ExitCode::SUCCESS
    } else {
        for failure in &failures {
            println!("error: {failure}");
        }
        ExitCode::FAILURE
    }
}

/// True if `folder/mod.rs` has a line saying "import loop" with every file of `members` named
/// (`name.rs`) on it or on the three lines after it.
fn named_in_mod_rs<'a>(folder: &Path, members: impl Iterator<Item = &'a PathBuf>) -> bool {
    let Ok(text) = fs::read_to_string(folder.join("mod.rs")) else { return false };
    let lines: Vec<&str> = text.lines().collect();
    let names: Vec<String> = members.map(|path| format!("`{}`", path.file_name().unwrap().to_string_lossy())).collect();
    lines.iter().enumerate().any(|(i, line)| {
        line.contains("import loop") && {
            let window = lines[i..(i + 4).min(lines.len())].join(" ");
            names.iter().all(|name| window.contains(name.as_str()))
        }
    })
}

/// Every `.rs` file under `folder`, with its module path.
fn read_tree(folder: &Path, root: &Path, root_module: &[&str]) -> Vec<File> {
    let mut paths = Vec::new();
    walk(folder, &mut paths);
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let mut module: Vec<String> = root_module.iter().map(|s| s.to_string()).collect();
            if path != root {
                let relative = path.strip_prefix(folder).unwrap().with_extension("");
                let mut parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
                if parts.last().map(String::as_str) == Some("mod") {
                    parts.pop();
                }
                module.extend(parts);
            }
            let code = strip(&fs::read_to_string(&path).unwrap());
            File { path, module, code }
        })
        .collect()
}

fn walk(folder: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `text` without comments, string and char literals (their insides become spaces, lines kept)
/// and without `#[cfg(test)]` modules.
fn strip(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !prev_is_ident(&chars, i) {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= chars.len() {
                    break;
                }
                if chars[j] == '"' && (0..hashes).all(|k| chars.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                if chars[j] == '\n' {
                    out.push('\n');
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                if chars.get(i) == Some(&'\n') {
                    out.push('\n');
                }
                i += 1;
            }
            out.push_str("\"\"");
            i += 1;
        } else if c == '\'' {
            // A char literal ('a', '\n', '\u{..}') or a lifetime ('a): only the first is skipped.
            let close = if next == Some('\\') {
                chars[i + 2..].iter().position(|&c| c == '\'').map(|p| i + 2 + p)
            } else {
                (chars.get(i + 2) == Some(&'\'')).then_some(i + 2)
            };
            match close {
                Some(end) => {
                    out.push_str("' '");
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    remove_test_modules(&out)
}

fn prev_is_ident(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

/// `code` without the items marked `#[cfg(test)]` or `#[cfg(doc)]` (from the attribute to the
/// item's `;` or its block's `}`): tests, and imports made for doc links only.
fn remove_test_modules(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    loop {
        let next =
            ["#[cfg(test)]", "#[cfg(doc)]"].iter().filter_map(|attr| rest.find(attr).map(|at| (at, attr.len()))).min();
        let Some((at, len)) = next else { break };
        out.push_str(&rest[..at]);
        let after = &rest[at + len..];
        let Some(open) = after.find(['{', ';']) else {
            rest = after;
            continue;
        };
        if after.as_bytes()[open] == b';' {
            // `mod tests;` (a file of its own, read as its own file) or a `use`.
            out.extend(after[..open].chars().filter(|&c| c == '\n'));
            rest = &after[open + 1..];
            continue;
        }
        let mut depth = 0;
        let mut end = after.len();
        for (i, c) in after[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.extend(after[..end].chars().filter(|&c| c == '\n'));
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// For each file, the files it imports and the names it takes from each.
fn imports(files: &[File]) -> Vec<BTreeMap<usize, BTreeSet<String>>> {
    let by_module: BTreeMap<&[String], usize> =
        files.iter().enumerate().map(|(i, f)| (f.module.as_slice(), i)).collect();
    let reexports: Vec<BTreeMap<String, Vec<String>>> = files.iter().map(|f| reexports_of(f)).collect();
    let mut graph = vec![BTreeMap::new(); files.len()];
    for (from, file) in files.iter().enumerate() {
        let mut aliases: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let uses = use_paths(&file.code);
        for (path, alias) in &uses {
            let Some(absolute) = absolute(&file.module, path) else { continue };
            let (module, rest) = deepest_module(&by_module, &absolute);
            if rest.is_empty() {
                aliases.insert(alias.clone(), absolute.clone());
            }
            add(&mut graph[from], from, &by_module, &reexports, module, rest, 0);
        }
        for path in expression_paths(&file.code, &aliases) {
            let absolute = match aliases.get(&path[0]) {
                Some(module) => module.iter().cloned().chain(path[1..].iter().cloned()).collect(),
                None => match absolute(&file.module, &path) {
                    Some(absolute) => absolute,
                    None => continue,
                },
            };
            let (module, rest) = deepest_module(&by_module, &absolute);
            add(&mut graph[from], from, &by_module, &reexports, module, rest, 0);
        }
    }
    graph
}

/// Records an import of `rest[0]` from `module`, following re-exports.
fn add(
    edges: &mut BTreeMap<usize, BTreeSet<String>>,
    from: usize,
    by_module: &BTreeMap<&[String], usize>,
    reexports: &[BTreeMap<String, Vec<String>>],
    module: Option<usize>,
    rest: Vec<String>,
    depth: usize,
) {
    let Some(module) = module else { return };
    if let Some(name) = rest.first() {
        if let Some(target) = reexports[module].get(name).filter(|_| depth < 8) {
            let target: Vec<String> = target.iter().cloned().chain(rest[1..].iter().cloned()).collect();
            let (next, next_rest) = deepest_module(by_module, &target);
            if next.is_some() && next != Some(module) {
                return add(edges, from, by_module, reexports, next, next_rest, depth + 1);
            }
        }
    }
    if module != from {
        edges.entry(module).or_default().insert(rest.first().cloned().unwrap_or_else(|| "(the module)".to_owned()));
    }
}

/// The deepest module file that `path` goes through, and the segments after it.
fn deepest_module(by_module: &BTreeMap<&[String], usize>, path: &[String]) -> (Option<usize>, Vec<String>) {
    for len in (0..=path.len()).rev() {
        if let Some(&file) = by_module.get(&path[..len]) {
            return (Some(file), path[len..].to_vec());
        }
    }
    (None, path.to_vec())
}

/// `path` (starting with `crate`, `super` or `self`) as a path from the crate root, seen from
/// `module`; `None` for paths into other crates.
fn absolute(module: &[String], path: &[String]) -> Option<Vec<String>> {
    let mut base: Vec<String>;
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some("crate") => {
            base = Vec::new();
            rest = &path[1..];
        }
        Some("self") => {
            base = module.to_vec();
            rest = &path[1..];
        }
        Some("super") => {
            base = module.to_vec();
            while rest.first().map(String::as_str) == Some("super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The paths of `code`'s `use` items, each with the name it binds.
fn use_paths(code: &str) -> Vec<(Vec<String>, String)> {
    let mut out = Vec::new();
    for item in use_items(code) {
        expand(&item, Vec::new(), &mut out);
    }
    out
}

/// The text of every `use` tree in `code` (between `use` and `;`).
fn use_items(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while let Some(at) = code[i..].find("use ") {
        let start = i + at;
        let word_start = start == 0 || !(bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_');
        if word_start {
            if let Some(end) = code[start..].find(';') {
                out.push(code[start + 4..start + end].to_owned());
                i = start + end;
                continue;
            }
        }
        i = start + 4;
    }
    out
}

/// Expands one use tree (`a::b::{c, d::e as f, self}`) into paths and their bound names.
fn expand(tree: &str, prefix: Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head = tree[..open].trim().trim_end_matches("::");
        let mut base = prefix.clone();
        base.extend(segments(head));
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        for part in split_top(inner) {
            if part.trim() == "self" {
                if let Some(last) = base.last() {
                    out.push((base.clone(), last.clone()));
                }
            } else if !part.trim().is_empty() {
                expand(part, base.clone(), out);
            }
        }
        return;
    }
    let (path, alias) = match tree.split_once(" as ") {
        Some((path, alias)) => (path, Some(alias.trim().to_owned())),
        None => (tree, None),
    };
    let mut full = prefix;
    full.extend(segments(path));
    if full.last().map(String::as_str) == Some("*") {
        full.pop();
        out.push((full, String::new()));
        return;
    }
    if let Some(name) = alias.or_else(|| full.last().cloned()) {
        out.push((full, name));
    }
}

fn segments(path: &str) -> Vec<String> {
    path.split("::").map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect()
}

/// `inner` split at its top-level commas.
fn split_top(inner: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
}

/// Paths outside `use` items that start with `crate`, `super`, `self` or one of `aliases`.
fn expression_paths(code: &str, aliases: &BTreeMap<String, Vec<String>>) -> Vec<Vec<String>> {
    let mut without_uses = code.to_owned();
    for item in use_items(code) {
        without_uses = without_uses.replacen(&item, "", 1);
    }
    let chars: Vec<char> = without_uses.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if (chars[i].is_alphabetic() || chars[i] == '_') && !prev_is_ident(&chars, i) {
            let mut path = Vec::new();
            let mut j = i;
            loop {
                let start = j;
                while j < chars.len() && (chars[j].is_alphanumeric() || chars[j] == '_') {
                    j += 1;
                }
                path.push(chars[start..j].iter().collect::<String>());
                if chars.get(j) == Some(&':')
                    && chars.get(j + 1) == Some(&':')
                    && chars.get(j + 2).is_some_and(|c| c.is_alphabetic() || *c == '_')
                {
                    j += 2;
                } else {
                    break;
                }
            }
            let starts = matches!(path[0].as_str(), "crate" | "super" | "self") || aliases.contains_key(&path[0]);
            if path.len() > 1 && starts {
                out.push(path);
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// The names `file` re-exports (`pub use` / `pub(crate) use` / `pub(super) use`), each with the
/// absolute path it stands for.
fn reexports_of(file: &File) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    let code = &file.code;
    let mut i = 0;
    while let Some(at) = code[i..].find("pub") {
        let start = i + at;
        let after = &code[start + 3..];
        let after = match after.strip_prefix('(') {
            Some(rest) => rest.split_once(')').map(|(_, rest)| rest).unwrap_or(rest),
            None => after,
        };
        let after = after.trim_start();
        if let Some(tree) = after.strip_prefix("use ") {
            if let Some(end) = tree.find(';') {
                let mut paths = Vec::new();
                expand(&tree[..end], Vec::new(), &mut paths);
                for (path, name) in paths {
                    let absolute = match path.first().map(String::as_str) {
                        Some("crate" | "super" | "self") => absolute(&file.module, &path),
                        // A child module's item: `pub use child::Name`.
                        Some(_) => Some(file.module.iter().cloned().chain(path.iter().cloned()).collect()),
                        None => None,
                    };
                    if let Some(absolute) = absolute.filter(|_| !name.is_empty()) {
                        out.insert(name, absolute);
                    }
                }
            }
        }
        i = start + 3;
    }
    out
}

/// Tarjan's strongly connected components of `graph`.
fn strongly_connected(graph: &[BTreeMap<usize, BTreeSet<String>>], n: usize) -> Vec<Vec<usize>> {
    struct State<'a> {
        graph: &'a [BTreeMap<usize, BTreeSet<String>>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        let targets: Vec<usize> = s.graph[v].keys().copied().collect();
        for w in targets {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(index) if s.on_stack[w] => s.low[v] = s.low[v].min(index),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut members = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                members.push(w);
                if w == v {
                    break;
                }
            }
            members.sort();
            s.out.push(members);
        }
    }
    let mut s = State {
        graph,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.out
}
