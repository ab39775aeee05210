//! Runs the MPTCP benchmark: `cargo run --release --example bench_mptcp -- CONNECTIONS SUBFLOWS
//! SECONDS [exact]` (defaults 10, 2, 20; with `exact`, exact timing instead of the default send
//! jitter).
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let connections = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10);
    let subflows = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(2);
    let secs = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(20.0);
    let exact = args.get(4).is_some_and(|a| a == "exact");
    let r = plait_core::bench::run_mptcp(connections, subflows, secs, exact).expect("bench");
    println!("{}", serde_json::to_string(&r).unwrap());
}
