//! TFRC, MulTFRC and CP through the simulator.

mod common;

use plait_core::transport::tfrc::RateEquation;
use plait_core::transport::Transport;

/// One flow of `kind` (with `extra` keys) over a 100 Mb/s, 20 ms path whose bottleneck
/// drops data packets with `loss` (a loss model table), for `duration`.
fn path(kind: &str, extra: &str, loss: &str, duration: &str) -> String {
    format!(
        r#"
[simulation]
duration = "{duration}"
warmup = "20s"
seed = 3

[[link]]
name = "bottleneck"
from = "src"
to = "dst"
rate = "100Mbps"
delay = "20ms"
loss = {loss}

[[flow]]
name = "f"
kind = "{kind}"
src = "src"
dst = "dst"
{extra}
"#
    )
}

#[test]
fn smoke() {
    let sim = common::run(
        &path("tfrc", "", "{ kind = \"bernoulli\", p = 0.01 }", "100s"),
        None,
    );
    let r = sim.results();
    let f = sim.flows()[0].transport.as_tfrc().unwrap();
    let s = f.sender();
    println!(
        "goodput {} rate {} p {} j {} rtt {:?} sent {} timeouts {}",
        r.flows.goodput_bps[0],
        s.rate() * 8.0,
        s.loss_event_rate(),
        s.packets_per_loss_event(),
        s.rtt(),
        f.sent_packets(),
        f.stats().timeouts
    );
    let x = RateEquation::Tfrc.rate(1460.0, s.rtt().unwrap(), s.loss_event_rate(), 1.0);
    println!("equation {}", x * 8.0);
}
