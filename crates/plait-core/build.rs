//! The core's source identity: a 64-bit FNV-1a hash of every file under `src/`, this crate's
//! `Cargo.toml` and the workspace's `Cargo.lock` (relative path and bytes, in path order),
//! given to the crate as `PLAIT_CORE_SOURCE_ID` (16 hex digits). Stored runs are keyed by it
//! (python/plait/sweeps/spec.py, `run_key`), so a run made by other simulator code is never
//! reused as this code's, whatever the package version says.

use std::hash::Hasher;
use std::path::{Path, PathBuf};
use std::{env, fs};

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    let crate_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let mut files = Vec::new();
    files_under(&crate_dir.join("src"), &mut files);
    files.push(crate_dir.join("Cargo.toml"));
    let lock = crate_dir.join("../../Cargo.lock");
    if lock.is_file() {
        files.push(lock.clone());
    }
    let mut named: Vec<(String, PathBuf)> = files
        .into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(&crate_dir)
                .unwrap_or(&p)
                .to_string_lossy()
                .replace('\\', "/");
            (rel, p)
        })
        .collect();
    named.sort();
    let mut hash = fnv::FnvHasher::default();
    for (rel, path) in &named {
        hash.write(rel.as_bytes());
        hash.write_u8(0);
        let bytes = fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        hash.write(&(bytes.len() as u64).to_le_bytes());
        hash.write(&bytes);
    }
    println!(
        "cargo:rustc-env=PLAIT_CORE_SOURCE_ID={:016x}",
        hash.finish()
    );
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=Cargo.toml");
    if lock.is_file() {
        println!("cargo:rerun-if-changed={}", lock.display());
    }
}
