//! The layout rules, checked on the source: no two modules of `src/core` import each other,
//! directly or in a circle, so each mechanism can be read and changed from its own file; the core
//! never names the binding; the binding reaches Node-API only through its fence, `src/napi/js/`;
//! and no source cites a file
//! outside the repository as the place a rule is written (a clone must hold its own contract:
//! `docs/design.md`).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module a file of `src/core` is (`storage::writer`; `storage` for `storage/mod.rs`).
fn module_of(core: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(core).expect("under src/core").with_extension("");
    let mut parts: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|l| l == "mod") {
        parts.pop();
    }
    parts.join("::")
}

/// The sibling modules a file's `use` lines name, as full paths under `core` (doc links and
/// comments are not imports). Only the first path segment after `super::`/`crate::core::` and, for
/// a nested module, its sibling are kept: what a cycle is made of.
fn imports(module: &str, text: &str) -> BTreeSet<String> {
    let parent: Vec<&str> = module.split("::").collect();
    let mut out = BTreeSet::new();
    for line in text.lines().map(str::trim_start).filter(|l| l.starts_with("use ") || l.starts_with("pub use ")) {
        let path = line.trim_start_matches("pub ").trim_start_matches("use ");
        let target = if let Some(rest) = path.strip_prefix("crate::core::") {
            rest.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).next().unwrap_or("").to_owned()
        } else if let Some(rest) = path.strip_prefix("super::") {
            let base = &parent[..parent.len().saturating_sub(1)];
            let name = rest.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("");
            base.iter().copied().chain([name]).collect::<Vec<_>>().join("::")
        } else {
            continue;
        };
        // At most two segments (`storage::writer`); graph() keeps what names a module.
        let m = target.split("::").filter(|s| !s.is_empty()).take(2).collect::<Vec<_>>().join("::");
        if !m.is_empty() {
            out.insert(m);
        }
    }
    out
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let core = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/core");
    let mut files = Vec::new();
    sources(&core, &mut files);
    assert!(files.len() > 10, "src/core has its modules ({} files)", files.len());
    let mut g = BTreeMap::new();
    for f in files {
        let text = fs::read_to_string(&f).expect("readable source");
        assert!(
            !text.lines().any(|l| l.trim_start().starts_with("use napi")),
            "{} imports napi: the core never touches N-API",
            f.display()
        );
        let m = module_of(&core, &f);
        g.insert(m.clone(), imports(&m, &text));
    }
    let known: BTreeSet<String> = g.keys().cloned().collect();
    for (m, deps) in g.iter_mut() {
        // `storage::writer` names that module; `config::Config` or `storage::Batch` (an item) names
        // `config` / `storage`. A module's own parent is not counted: `mod.rs` declaring its
        // children and a child using the parent's items is how a Rust module is built.
        let resolved: BTreeSet<String> = deps
            .iter()
            .map(|d| if known.contains(d) { d.clone() } else { d.split("::").next().unwrap_or("").to_owned() })
            .filter(|d| known.contains(d) && d != m && !m.starts_with(&format!("{d}::")))
            .collect();
        *deps = resolved;
    }
    g
}

/// A cycle through `from`, if any (depth-first search).
fn cycle(g: &BTreeMap<String, BTreeSet<String>>, from: &str) -> Option<Vec<String>> {
    fn walk(
        g: &BTreeMap<String, BTreeSet<String>>,
        at: &str,
        target: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        for next in g.get(at).into_iter().flatten() {
            if next == target {
                path.push(next.clone());
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(g, next, target, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let mut path = vec![from.to_owned()];
    walk(g, from, from, &mut path, &mut BTreeSet::new()).then_some(path)
}

#[test]
fn no_two_core_modules_import_each_other() {
    let g = graph();
    let cycles: Vec<String> = g.keys().filter_map(|m| cycle(&g, m)).map(|c| c.join(" -> ")).collect();
    assert!(cycles.is_empty(), "import cycles in src/core:\n{}", cycles.join("\n"));
}

#[test]
fn the_checker_sees_a_cycle_and_nested_imports() {
    let a = imports("storage::writer", "use super::store::Store;\nuse crate::core::config::Config;\n// use super::x;");
    assert_eq!(a, BTreeSet::from(["storage::store".to_owned(), "config::Config".to_owned()]));
    let mut g = BTreeMap::new();
    g.insert("a".to_owned(), BTreeSet::from(["b".to_owned()]));
    g.insert("b".to_owned(), BTreeSet::from(["c".to_owned()]));
    g.insert("c".to_owned(), BTreeSet::from(["a".to_owned()]));
    assert_eq!(cycle(&g, "a"), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
    g.get_mut("c").expect("c").clear();
    assert_eq!(cycle(&g, "a"), None);
}

/// The lines of `text` that name `word` as a whole word.
fn lines_naming(text: &str, word: &str) -> Vec<String> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.lines()
        .filter(|l| {
            l.match_indices(word).any(|(i, _)| {
                let before = l[..i].chars().next_back();
                let after = l[i + word.len()..].chars().next();
                !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
            })
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_binding_reaches_node_api_only_through_its_fence() {
    let napi = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/napi");
    let fence = napi.join("js");
    let mut files = Vec::new();
    sources(&napi, &mut files);
    assert!(files.iter().any(|f| f.starts_with(&fence)), "no fence found under {}", fence.display());
    let mut found = Vec::new();
    for file in files.iter().filter(|f| !f.starts_with(&fence)) {
        let text = fs::read_to_string(file).unwrap_or_default();
        for word in ["unsafe", "sys"] {
            found.extend(lines_naming(&text, word).into_iter().map(|l| format!("{}: {}", file.display(), l.trim())));
        }
    }
    assert!(found.is_empty(), "outside src/napi/js:\n{}", found.join("\n"));
}

#[test]
fn the_core_never_names_the_binding() {
    // The core is plain Rust behind its seams: neither its code nor its comments lean on the
    // binding (`napi`, `src/napi`); the binding adapts to the core, never the other way round.
    let core = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/core");
    let mut files = Vec::new();
    sources(&core, &mut files);
    assert!(files.len() > 20, "the walk found the core ({} files)", files.len());
    let found: Vec<String> = files
        .iter()
        .flat_map(|file| {
            let text = fs::read_to_string(file).unwrap_or_default();
            let lines: Vec<String> = text
                .lines()
                .filter(|l| l.to_ascii_lowercase().contains("napi"))
                .map(|l| format!("{}: {}", file.display(), l.trim()))
                .collect();
            lines
        })
        .collect();
    assert!(found.is_empty(), "src/core names the binding:\n{}", found.join("\n"));
}

#[test]
fn the_fence_check_sees_whole_words_only() {
    assert_eq!(lines_naming("let x = unsafe { y };\nunsafely\nsys::napi_typeof\nsystem", "unsafe").len(), 1);
    assert_eq!(lines_naming("use napi_ohos::sys;\nsystem\nsys::x", "sys").len(), 2);
}

/// What a comment citing a file outside the repository names. Built at run time so that this file
/// does not cite them itself.
fn outside_citations() -> Vec<String> {
    let mut names: Vec<String> = ["DESIGN", "OHOS-NOTES", "STYLE"].iter().map(|n| format!("{n}.md")).collect();
    names.push(["seeds", "/"].concat()); // the reference change's text, beside the repository too
    names
}

/// The files of the repository's sources, tests, benchmarks, scripts, examples, ArkTS modules and
/// build files (not dependencies or build output).
fn repository_sources() -> Vec<PathBuf> {
    const SKIP: &[&str] = &["node_modules", "oh_modules", "build", ".hvigor", ".preview", "target", "sdk"];
    const EXTS: &[&str] = &["rs", "mjs", "js", "ts", "ets", "sh", "json5", "toml", "txt"];
    fn walk(dir: &Path, out: &mut Vec<PathBuf>, any_ext: bool) {
        let Ok(entries) = fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                if !SKIP.contains(&name.as_str()) {
                    walk(&p, out, any_ext);
                }
            } else if any_ext || p.extension().is_some_and(|x| EXTS.iter().any(|e| x == *e)) {
                out.push(p);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in ["src", "tests", "benches", "examples", "ets", "entry", "AppScope", "hvigor"] {
        walk(&root.join(dir), &mut out, false);
    }
    walk(&root.join("scripts"), &mut out, true); // `scripts/burst` has no extension
    for file in ["build.rs", "Cargo.toml", "hvigorfile.ts", "build-profile.json5", "oh-package.json5"] {
        out.push(root.join(file));
    }
    out
}

/// `file:line: text` for each line of `text` that names one of `needles`.
fn citing_lines(file: &str, text: &str, needles: &[String]) -> Vec<String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| needles.iter().any(|n| l.contains(n.as_str())))
        .map(|(i, l)| format!("{file}:{}: {}", i + 1, l.trim()))
        .collect()
}

#[test]
fn no_source_cites_a_file_outside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let needles = outside_citations();
    let files = repository_sources();
    assert!(files.len() > 100, "the walk found the sources ({} files)", files.len());
    let mut found = Vec::new();
    for file in &files {
        let Ok(text) = fs::read_to_string(file) else { continue }; // binary files cite nothing
        let rel = file.strip_prefix(root).unwrap_or(file).to_string_lossy().replace('\\', "/");
        found.extend(citing_lines(&rel, &text, &needles));
    }
    assert!(
        found.is_empty(),
        "cite docs/ (docs/design.md, docs/ohos-build.md, ...) instead of files outside the repository:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_citation_check_sees_a_citation() {
    let needles = outside_citations();
    let text = format!("fn f() {{}}\n// the rule ({} \"Threads\")\n// docs/design.md\n", needles[0]);
    assert_eq!(citing_lines("a.rs", &text, &needles).len(), 1);
    assert!(citing_lines("a.rs", "// docs/design.md, docs/ohos-build.md", &needles).is_empty());
}
