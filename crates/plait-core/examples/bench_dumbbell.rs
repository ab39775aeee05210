//! Runs the dumbbell benchmark: `cargo run --release --example bench_dumbbell -- FLOWS SECONDS
//! [linux|exact|tfrc|multfrc|cp]` (with `linux`, the TCP settings of the `linux` profile; with
//! `exact`, exact timing instead of the default send jitter; with a TFRC-family kind, those
//! flows in place of TCP).
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flows = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10);
    let secs = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(20.0);
    let r = match args.get(3).map(String::as_str) {
        Some("linux") => plait_core::bench::run_dumbbell_linux(flows, secs),
        Some("exact") => plait_core::bench::run_dumbbell_exact(flows, secs),
        Some(kind) => plait_core::bench::run_dumbbell_kind(flows, secs, kind),
        None => plait_core::bench::run_dumbbell(flows, secs),
    }
    .expect("bench");
    println!("{}", serde_json::to_string(&r).unwrap());
}
