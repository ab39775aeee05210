//! Replays the committed fuzz corpora (`fuzz/corpus/<target>/`) through the bodies of the fuzz
//! targets (`plait_core::fuzzing`): a short smoke run of the fuzzers on stable Rust, without
//! cargo-fuzz. Every input that once found a bug is in a corpus, so each is a regression test.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use plait_core::fuzzing;

/// The files of one corpus, sorted by name.
fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut inputs: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    inputs.sort();
    assert!(!inputs.is_empty(), "{} is empty", dir.display());
    inputs
}

/// Runs `body` on every input of the corpus of `target`, naming the input that fails.
fn replay(target: &str, body: impl Fn(&[u8])) -> usize {
    let inputs = corpus(target);
    for (name, data) in &inputs {
        if catch_unwind(AssertUnwindSafe(|| body(data))).is_err() {
            panic!("{target} fails on fuzz/corpus/{target}/{name}");
        }
    }
    inputs.len()
}

#[test]
fn scenario_parse_corpus() {
    replay("scenario_parse", fuzzing::scenario_parse);
}

#[test]
fn scenario_run_corpus() {
    replay("scenario_run", |data| {
        fuzzing::scenario_run(data);
    });
}

/// xorshift64: the pseudo-random inputs of the test below, the same on every run.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn most_drawn_scenarios_are_valid() {
    // Random bytes should mostly describe valid scenarios, or the run target spends its time
    // on parse errors. The fraction on this fixed sample is reported (`--nocapture`).
    let mut state = 0x9e37_79b9_7f4a_7c15;
    let inputs = 2_000;
    let mut valid = 0;
    for _ in 0..inputs {
        let len = (next(&mut state) % 512) as usize;
        let data: Vec<u8> = (0..len).map(|_| next(&mut state) as u8).collect();
        if fuzzing::scenario_run(&data) {
            valid += 1;
        }
    }
    let fraction = valid as f64 / inputs as f64;
    println!("{valid} of {inputs} drawn scenarios are valid ({fraction:.3})");
    assert!(
        fraction > 0.8,
        "only {fraction:.3} of the drawn scenarios are valid"
    );
}
