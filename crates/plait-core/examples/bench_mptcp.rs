//! Runs the MPTCP benchmark: `cargo run --release --example bench_mptcp -- CONNECTIONS SUBFLOWS
//! SECONDS` (defaults 10, 2, 20).
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let connections = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10);
    let subflows = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(2);
    let secs = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(20.0);
    let r = plait_core::bench::run_mptcp(connections, subflows, secs).expect("bench");
    println!("{}", serde_json::to_string(&r).unwrap());
}
