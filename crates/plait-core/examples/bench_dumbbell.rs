//! Runs the dumbbell benchmark: `cargo run --release --example bench_dumbbell -- FLOWS SECONDS
//! [linux]` (with `linux`, the TCP settings of the `linux` profile).
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flows = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10);
    let secs = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(20.0);
    let r = if args.get(3).map(String::as_str) == Some("linux") {
        plait_core::bench::run_dumbbell_linux(flows, secs)
    } else {
        plait_core::bench::run_dumbbell(flows, secs)
    }
    .expect("bench");
    println!("{}", serde_json::to_string(&r).unwrap());
}
