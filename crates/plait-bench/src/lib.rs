//! Criterion benchmarks of plait-core live in `benches/`: `cargo bench -p plait-bench`.
