//! Runs the dumbbell benchmark: `cargo run --release --example bench_dumbbell -- FLOWS SECONDS
//! [linux|tfrc|multfrc|cp|mpat] [exact]` (with `linux`, the TCP settings of the `linux` profile;
//! with another kind, those flows in place of TCP; with `exact`, exact timing instead of the
//! default send jitter).
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flows = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10);
    let secs = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(20.0);
    let exact = args.iter().skip(3).any(|a| a == "exact");
    let kind = args.get(3).map(String::as_str).filter(|&k| k != "exact");
    let r = match kind {
        Some("linux") => plait_core::bench::run_dumbbell_linux(flows, secs),
        Some(kind) => plait_core::bench::run_dumbbell_kind(flows, secs, kind, exact),
        None => plait_core::bench::run_dumbbell_kind(flows, secs, "tcp", exact),
    }
    .expect("bench");
    println!("{}", serde_json::to_string(&r).unwrap());
}
