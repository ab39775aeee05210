//! No circles in the crate's import graph across files.
//!
//! A file imports another when it names a path into it: a `use` line, a `pub use` re-export or
//! a path written inline (`crate::scenario::format_duration(..)`), resolved the way rustc
//! resolves `crate::`, `super::`, `self::` and a child module's name to the file that defines
//! the longest prefix of the path (`src/a/b.rs` or `src/a/b/mod.rs` for `crate::a::b`; an inline
//! `mod x { .. }` belongs to its file; a file declared `#[path = "x.rs"] mod x;` is the module
//! its declaration names). `mod x;` declarations are not imports, nor is a name a
//! file takes from an enclosing module's file (`super::QueueDisc` in `net/queue/red.rs` from
//! `net/queue/mod.rs`, `crate::FlowId` from `lib.rs`): a folder's `mod.rs` is the folder's face,
//! declaring the trait its files implement and dispatching to them, so it and its own files
//! are one room. Everything else counts, siblings (`super::policy::Hit`) included.
//!
//! The rule (see docs/architecture.md): the registry is a leaf that algorithms register into,
//! packets do not import transports, meters do not import the simulator. A circle of files
//! means neither can be read, tested or moved without the other; this test names each circle
//! and the names that tie it, file by file, so that a new one is opened where it is made.
//!
//! Only std: it reads `src/` as text, so it runs in a second and needs nothing built.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A token of Rust source after comments and literals are dropped: identifiers (with `$crate`
/// kept whole), `::` and single punctuation characters.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    PathSep,
    Punct(char),
}

/// Splits `source` into tokens, dropping comments (line, nested block, doc), string, raw
/// string, byte string and char literals; lifetimes (`'a`) are dropped too.
fn tokenize(source: &str) -> Vec<Token> {
    let chars: Vec<char> = source.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    let n = chars.len();
    while i < n {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && i + 1 < n && chars[i + 1] == '/' {
            while i < n && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && i + 1 < n && chars[i + 1] == '*' {
            let mut depth = 0usize;
            while i < n {
                if chars[i] == '/' && i + 1 < n && chars[i + 1] == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && i + 1 < n && chars[i + 1] == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == '"' {
            i = skip_string(&chars, i + 1);
        } else if (c == 'r' || c == 'b')
            && raw_string_start(&chars, i).is_some()
            && !prev_is_ident(&chars, i)
        {
            let (hashes, body) = raw_string_start(&chars, i).unwrap();
            i = body;
            loop {
                if i >= n {
                    break;
                }
                if chars[i] == '"' && (0..hashes).all(|k| chars.get(i + 1 + k) == Some(&'#')) {
                    i += 1 + hashes;
                    break;
                }
                i += 1;
            }
        } else if c == 'b' && i + 1 < n && chars[i + 1] == '"' && !prev_is_ident(&chars, i) {
            i = skip_string(&chars, i + 2);
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a): both are dropped.
            if i + 1 < n && chars[i + 1] == '\\' {
                i += 2;
                while i < n && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if i + 2 < n && chars[i + 2] == '\'' {
                i += 3;
            } else {
                i += 1;
                while i < n && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
            }
        } else if c.is_alphabetic() || c == '_' || (c == '$' && i + 1 < n && chars[i + 1] == 'c') {
            let start = i;
            i += 1;
            while i < n && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push(Token::Ident(chars[start..i].iter().collect()));
        } else if c.is_ascii_digit() {
            while i < n && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '.') {
                i += 1;
            }
        } else if c == ':' && i + 1 < n && chars[i + 1] == ':' {
            tokens.push(Token::PathSep);
            i += 2;
        } else {
            tokens.push(Token::Punct(c));
            i += 1;
        }
    }
    tokens
}

fn prev_is_ident(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

/// `r"`, `r#"`, `br"`, `br#"` at `i`: the number of `#` and where the body starts.
fn raw_string_start(chars: &[char], i: usize) -> Option<(usize, usize)> {
    let mut j = i;
    if chars.get(j) == Some(&'b') {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while chars.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    (chars.get(j) == Some(&'"')).then_some((hashes, j + 1))
}

fn skip_string(chars: &[char], mut i: usize) -> usize {
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '"' => return i + 1,
            _ => i += 1,
        }
    }
    i
}

/// One source file: its module path (`["net", "queue"]` for `src/net/queue/mod.rs`).
struct SourceFile {
    relative: String,
    module: Vec<String>,
    tokens: Vec<Token>,
    /// `#[path = "x.rs"] mod name;` declarations: the file (relative to this one's folder)
    /// and the module name it is given.
    path_modules: Vec<(String, String)>,
}

/// The `#[path = "..."] mod name;` declarations of `source`.
fn path_modules(source: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut pending: Option<String> = None;
    for line in source.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("#[path") {
            pending = rest.split('"').nth(1).map(str::to_string);
        } else if line.starts_with("#[") {
            continue;
        } else if let Some(path) = pending.take() {
            let words: Vec<&str> = line
                .trim_end_matches(';')
                .split_whitespace()
                .skip_while(|w| w.starts_with("pub"))
                .collect();
            if let ["mod", name] = words[..] {
                found.push((path, name.to_string()));
            }
        }
    }
    found
}

fn collect(dir: &Path, root: &Path, out: &mut Vec<SourceFile>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let mut module: Vec<String> = relative
                .trim_end_matches(".rs")
                .split('/')
                .map(str::to_string)
                .collect();
            if matches!(
                module.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                module.pop();
            }
            let source = fs::read_to_string(&path).unwrap();
            out.push(SourceFile {
                relative,
                module,
                tokens: tokenize(&source),
                path_modules: path_modules(&source),
            });
        }
    }
}

/// A path named in a file, with the module it was written in (inline `mod` blocks included).
struct Named {
    scope: Vec<String>,
    path: Vec<String>,
}

/// Expands a `use` tree starting at `tokens[i]` with `prefix` already read; returns the index
/// after the tree.
fn use_tree(
    tokens: &[Token],
    mut i: usize,
    prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    let mut path = prefix;
    loop {
        match tokens.get(i) {
            Some(Token::Ident(word)) => {
                path.push(word.clone());
                i += 1;
                if tokens.get(i) == Some(&Token::PathSep) {
                    i += 1;
                    continue;
                }
                if let Some(Token::Ident(word)) = tokens.get(i) {
                    if word == "as" {
                        i += 2;
                    }
                }
                out.push(path);
                return i;
            }
            Some(Token::Punct('*')) => {
                out.push(path);
                return i + 1;
            }
            Some(Token::Punct('{')) => {
                i += 1;
                loop {
                    match tokens.get(i) {
                        Some(Token::Punct('}')) => return i + 1,
                        Some(Token::Punct(',')) => i += 1,
                        None => return i,
                        _ => i = use_tree(tokens, i, path.clone(), out),
                    }
                }
            }
            _ => {
                out.push(path);
                return i;
            }
        }
    }
}

/// Every path a file names: `use` trees expanded, and inline paths of two segments or more.
fn named_paths(file: &SourceFile) -> Vec<Named> {
    let tokens = &file.tokens;
    let mut scope = file.module.clone();
    // Inline modules: (brace depth at which the block closes).
    let mut inline: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    let mut named = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            Token::Punct('{') => {
                depth += 1;
                i += 1;
            }
            Token::Punct('}') => {
                if inline.last() == Some(&depth) {
                    inline.pop();
                    scope.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            Token::Ident(word) if word == "mod" => {
                if let (Some(Token::Ident(name)), Some(Token::Punct('{'))) =
                    (tokens.get(i + 1), tokens.get(i + 2))
                {
                    scope.push(name.clone());
                    depth += 1;
                    inline.push(depth);
                    i += 3;
                } else {
                    i += 2;
                }
            }
            Token::Ident(word) if word == "use" => {
                let mut paths = Vec::new();
                let mut j = i + 1;
                if tokens.get(j) == Some(&Token::PathSep) {
                    j += 1; // `use ::std::..`: an external crate
                }
                i = use_tree(tokens, j, Vec::new(), &mut paths);
                for path in paths {
                    named.push(Named {
                        scope: scope.clone(),
                        path,
                    });
                }
            }
            Token::Ident(first) => {
                let after_sep = i > 0 && tokens[i - 1] == Token::PathSep;
                let mut path = vec![first.clone()];
                let mut j = i + 1;
                while tokens.get(j) == Some(&Token::PathSep) {
                    match tokens.get(j + 1) {
                        Some(Token::Ident(next)) => {
                            path.push(next.clone());
                            j += 2;
                        }
                        _ => break,
                    }
                }
                if !after_sep && path.len() >= 2 {
                    named.push(Named {
                        scope: scope.clone(),
                        path,
                    });
                }
                i = j.max(i + 1);
            }
            _ => i += 1,
        }
    }
    named
}

/// The import graph: file -> file -> the names taken (the path's last segment).
type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

fn import_graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    collect(src, src, &mut files);
    // A file declared with `#[path]` is the module its declaration names, wherever it lies.
    let renamed: Vec<(String, Vec<String>)> = files
        .iter()
        .flat_map(|file| {
            let folder = file.relative.rsplit_once('/').map_or("", |(dir, _)| dir);
            file.path_modules.iter().map(move |(path, name)| {
                let target = if folder.is_empty() {
                    path.clone()
                } else {
                    format!("{folder}/{path}")
                };
                let mut module = file.module.clone();
                module.push(name.clone());
                (target, module)
            })
        })
        .collect();
    for (target, module) in renamed {
        if let Some(file) = files.iter_mut().find(|f| f.relative == target) {
            file.module = module;
        }
    }
    // Module path -> the file that defines it, inline modules included.
    let mut owner: BTreeMap<Vec<String>, String> = BTreeMap::new();
    for file in &files {
        owner.insert(file.module.clone(), file.relative.clone());
    }
    let module_of: BTreeMap<&String, &Vec<String>> = files
        .iter()
        .map(|file| (&file.relative, &file.module))
        .collect();
    let mut graph = Graph::new();
    for file in &files {
        graph.entry(file.relative.clone()).or_default();
        for Named { scope, path } in named_paths(file) {
            let Some(absolute) = absolute(&scope, &path, &owner) else {
                continue;
            };
            // The longest prefix that is a module; a prefix of a file's module inside an inline
            // module resolves to the file, which is the prefix that `owner` knows.
            let target = (0..=absolute.len())
                .rev()
                .find_map(|k| owner.get(&absolute[..k]))
                .cloned();
            if let Some(target) = target {
                // The file of an enclosing module (`super::Trait` in `queue/red.rs`, naming
                // `queue/mod.rs`) is the folder's own face: the children implement what it
                // declares and it dispatches to them, inside one room.
                let owner_module = module_of[&target];
                let enclosing =
                    owner_module.len() < file.module.len() && file.module.starts_with(owner_module);
                if target != file.relative && !enclosing {
                    let name = path.last().cloned().unwrap_or_default();
                    graph
                        .entry(file.relative.clone())
                        .or_default()
                        .entry(target)
                        .or_default()
                        .insert(name);
                }
            }
        }
    }
    graph
}

/// The absolute module path named by `path` written in module `scope`, or `None` for a path
/// into another crate (or a local name that is not a module).
fn absolute(
    scope: &[String],
    path: &[String],
    owner: &BTreeMap<Vec<String>, String>,
) -> Option<Vec<String>> {
    let first = path.first()?.as_str();
    let mut base: Vec<String>;
    let mut rest = path;
    match first {
        "crate" | "$crate" => {
            base = Vec::new();
            rest = &path[1..];
        }
        "self" => {
            base = scope.to_vec();
            rest = &path[1..];
        }
        "super" => {
            base = scope.to_vec();
            while rest.first().map(String::as_str) == Some("super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        _ => {
            // A child module of the current one (`mod cbr;` then `cbr::Cbr`).
            let mut child = scope.to_vec();
            child.push(first.to_string());
            if !owner.contains_key(&child) {
                return None;
            }
            base = scope.to_vec();
        }
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// Tarjan's strongly connected components with more than one file.
fn circles(graph: &Graph) -> Vec<Vec<String>> {
    struct State<'a> {
        graph: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        next: usize,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(state: &mut State<'a>, node: &'a str) {
        state.index.insert(node, state.next);
        state.low.insert(node, state.next);
        state.next += 1;
        state.stack.push(node);
        state.on_stack.insert(node);
        let graph = state.graph;
        for next in graph.get(node).into_iter().flat_map(|edges| edges.keys()) {
            let next = next.as_str();
            if !state.index.contains_key(next) {
                visit(state, next);
                let low = state.low[next].min(state.low[node]);
                state.low.insert(node, low);
            } else if state.on_stack.contains(next) {
                let low = state.index[next].min(state.low[node]);
                state.low.insert(node, low);
            }
        }
        if state.low[node] == state.index[node] {
            let mut component = Vec::new();
            loop {
                let top = state.stack.pop().unwrap();
                state.on_stack.remove(top);
                component.push(top.to_string());
                if top == node {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                state.found.push(component);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !state.index.contains_key(node.as_str()) {
            visit(&mut state, node);
        }
    }
    state.found
}

fn describe(graph: &Graph, found: &[Vec<String>]) -> String {
    let mut text = String::new();
    for (k, component) in found.iter().enumerate() {
        let members: BTreeSet<&String> = component.iter().collect();
        text += &format!("circle {}: {} files\n", k + 1, component.len());
        for from in component {
            for (to, names) in &graph[from] {
                if members.contains(to) {
                    let names: Vec<&str> = names.iter().map(String::as_str).collect();
                    text += &format!("  src/{from} -> src/{to}: {}\n", names.join(", "));
                }
            }
        }
    }
    text
}

#[test]
fn no_circles_across_files() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = import_graph(&src);
    assert!(
        graph.len() > 50,
        "read only {} files under {}",
        graph.len(),
        src.display()
    );
    let found = circles(&graph);
    assert!(
        found.is_empty(),
        "the import graph of plait-core has {} circle(s) across files; move the shared type to \
         a file both sides may import:\n{}",
        found.len(),
        describe(&graph, &found)
    );
}

/// The reader itself: each way of naming another file is seen, and a circle is found.
#[test]
fn the_reader_sees_every_kind_of_import() {
    let dir = std::env::temp_dir().join(format!("plait-import-graph-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("a")).unwrap();
    fs::create_dir_all(dir.join("b")).unwrap();
    let write = |path: &str, text: &str| fs::write(dir.join(path), text).unwrap();
    write("lib.rs", "pub mod a;\npub mod b;\npub mod c;\npub mod d;\n");
    write(
        "a/mod.rs",
        "mod x;\npub use x::X; // crate::d::Nope\nconst S: &str = \"crate::d::Nope\";\n",
    );
    write(
        "a/x.rs",
        "use super::super::b::{self, y::{Y as Why}};\nuse super::Face; // the folder's face\n",
    );
    write("b/mod.rs", "pub mod y;\n");
    write(
        "b/y.rs",
        "pub fn f<'a>(c: char) -> bool { c == '{' && crate::c::g() }\n",
    );
    write(
        "c.rs",
        "#[cfg(test)]\nmod tests { use super::*; }\npub fn g() -> bool { true }\n",
    );
    write(
        "d.rs",
        "pub struct Nope; fn h() { let _ = crate::a::X; }\n#[cfg(test)]\n#[path = \"d_tests.rs\"]\nmod d_tests;\n",
    );
    // Declared by `#[path]` inside d.rs: `super` is d.rs (its owner, no arrow) and
    // `super::super` the crate's root.
    write("d_tests.rs", "use super::Nope;\nuse super::super::c::g;\n");
    let graph = import_graph(&dir);
    let edges = |from: &str| -> Vec<String> { graph[from].keys().cloned().collect() };
    assert_eq!(edges("a/mod.rs"), ["a/x.rs"]);
    assert_eq!(edges("a/x.rs"), ["b/mod.rs", "b/y.rs"]);
    assert_eq!(edges("b/y.rs"), ["c.rs"]);
    assert_eq!(edges("c.rs"), Vec::<String>::new());
    assert_eq!(edges("d.rs"), ["a/mod.rs"]);
    assert_eq!(edges("d_tests.rs"), ["c.rs"]);
    assert!(circles(&graph).is_empty());
    // c.rs now names d.rs inline: d -> a -> x -> b/y -> c -> d is a circle of five files.
    write("c.rs", "pub fn g() -> bool { crate::d::Nope; true }\n");
    let graph = import_graph(&dir);
    let found = circles(&graph);
    assert_eq!(
        found,
        [vec!["a/mod.rs", "a/x.rs", "b/y.rs", "c.rs", "d.rs"]
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>()]
    );
    assert!(describe(&graph, &found).contains("src/c.rs -> src/d.rs: Nope"));
    fs::remove_dir_all(&dir).unwrap();
}
