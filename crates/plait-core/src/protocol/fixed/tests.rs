//! The fixed-window protocol run through scenarios (read, validated, built and simulated as
//! any flow kind), and its two ends driven directly.

use super::*;
use crate::scenario::Scenario;
use crate::transport::Capture;

/// One duplex 10 Mb/s link of 10 ms each way between `a` and `b`, and one fixed-window flow
/// with the extra keys `flow` and the link's extra keys `link`.
fn run(duration: &str, warmup: &str, link: &str, flow: &str) -> crate::trace::results::RunResult {
    let text = format!(
        r#"
[simulation]
duration = "{duration}"
warmup = "{warmup}"
seed = 3

[[link]]
name = "ab"
from = "a"
to = "b"
rate = "10Mbps"
delay = "10ms"
{link}

[[flow]]
name = "f"
kind = "fixed"
src = "a"
dst = "b"
{flow}
"#
    );
    let scenario =
        Scenario::from_toml_str(&text, "fixed.toml", &[]).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = crate::sim::build(&scenario, None).unwrap_or_else(|e| panic!("{e}"));
    sim.run();
    sim.results()
}

#[test]
fn a_window_limited_flow_delivers_a_window_per_round_trip() {
    let r = run("11s", "1s", "", "window = 5");
    let f = &r.flows;
    assert_eq!((f.kind[0].as_str(), f.cc[0].as_str()), ("fixed", ""));
    // R = 1.2 ms (1500 bytes at 10 Mb/s) + 10 ms + 0.032 ms (the 40-byte ACK) + 10 ms; the
    // five segments of a window never queue behind each other after the first round.
    let rtt = 0.0012 + 0.010 + 0.000_032 + 0.010;
    let expected = 5.0 * 1460.0 * 8.0 / rtt;
    let goodput = f.goodput_bps[0];
    // Over 10 s the window edges cost at most one window: 5 · 1460 · 8 / 10 bit/s.
    assert!(
        (goodput - expected).abs() <= 5.0 * 1460.0 * 8.0 / 10.0,
        "goodput {goodput}, expected {expected}"
    );
    assert!((f.rtt_min_s[0] - rtt).abs() < 1e-9, "{}", f.rtt_min_s[0]);
    assert_eq!((f.retransmissions[0], f.timeouts[0], f.drops[0]), (0, 0, 0));
}

#[test]
fn go_back_n_delivers_a_lossy_transfer_exactly_once() {
    let bytes = 1_000_000u64;
    let r = run(
        "30s",
        "0s",
        r#"loss = { kind = "bernoulli", p = 0.02 }"#,
        &format!("window = 8\nrto = \"100ms\"\nbytes = {bytes}"),
    );
    let f = &r.flows;
    assert_eq!(f.bytes_delivered[0], bytes);
    assert!(f.completion_s[0].is_finite(), "the transfer completes");
    // Losses are repaired by the timer only, each by resending the window from the hole.
    assert!(
        f.timeouts[0] > 0 && f.drops[0] > 0,
        "{:?}",
        (f.timeouts[0], f.drops[0])
    );
    assert!(f.retransmissions[0] >= f.drops[0]);
    assert_eq!(f.fast_retransmits[0], 0);
    // 685 segments sent once, and every retransmission on top.
    let segments = bytes.div_ceil(1460);
    assert_eq!(f.packets_sent[0], segments + f.retransmissions[0]);
}

#[test]
fn an_acknowledged_flow_needs_a_way_back() {
    let text = r#"
[simulation]
duration = "1s"

[[link]]
name = "ab"
from = "a"
to = "b"
rate = "10Mbps"
delay = "10ms"
duplex = false

[[flow]]
name = "f"
kind = "fixed"
src = "a"
dst = "b"
window = 0
"#;
    let e = Scenario::from_toml_str(text, "fixed.toml", &[]).unwrap_err();
    assert_eq!(e.path, "flow[0].window", "{e}");
    let e =
        Scenario::from_toml_str(&text.replace("window = 0", ""), "fixed.toml", &[]).unwrap_err();
    assert!(e.message.contains("no path back"), "{e}");
}

/// Both ends driven directly: what one end sends is handed to the other, `lost` data segments
/// (by number, first transmission only) dropped on the way.
#[test]
fn the_timer_sends_the_window_again_from_the_hole() {
    let mut flow = FixedWindow::new(FixedConfig {
        window: 3,
        segment_bytes: 100,
        header_bytes: 40,
        rto: SimTime::from_millis(50),
        app_bytes: Some(450),
    });
    let mut capture = Capture::new(1);
    let t0 = SimTime::ZERO;
    capture.with(|out| flow.handle_start(t0, out));
    let sent = capture.take_transmits();
    let seqs = |ts: &[Transmit]| -> Vec<(u64, u32)> {
        ts.iter()
            .map(|t| match t.header {
                Header::Custom(h) => (h.words[0], t.size_bytes),
                _ => unreachable!(),
            })
            .collect()
    };
    assert_eq!(seqs(&sent), [(0, 140), (1, 140), (2, 140)]);
    assert_eq!(flow.poll_timeout(), Some(SimTime::from_millis(50)));
    // Segment 0 is lost; 1 and 2 arrive out of order and are discarded, each answered with
    // "0 expected", which the sender ignores.
    let t1 = SimTime::from_millis(10);
    for t in &sent[1..] {
        capture.with(|out| flow.handle_packet(t1, PATH, Direction::Forward, &t.header, out));
    }
    let acks = capture.take_transmits();
    assert_eq!(seqs(&acks), [(0, 40), (0, 40)]);
    for a in &acks {
        capture.with(|out| flow.handle_packet(t1, PATH, Direction::Reverse, &a.header, out));
    }
    assert!(capture.take_transmits().is_empty());
    assert_eq!(flow.stats().delivered_bytes, 0);
    // A stale wake-up does nothing; the due one goes back to segment 0.
    capture.with(|out| flow.handle_timeout(SimTime::from_millis(49), out));
    assert!(capture.take_transmits().is_empty());
    let t2 = SimTime::from_millis(50);
    capture.with(|out| flow.handle_timeout(t2, out));
    let resent = capture.take_transmits();
    assert_eq!(seqs(&resent), [(0, 140), (1, 140), (2, 140)]);
    assert_eq!(
        capture.take_events(),
        [
            TransportEvent::Cwnd {
                path: PATH,
                cwnd_bytes: 300
            },
            TransportEvent::Timeout { path: PATH }
        ]
    );
    assert_eq!(
        (flow.stats().retransmissions, flow.stats().timeouts),
        (3, 1)
    );
    // All three arrive; each ACK opens the window by one, up to the short last segment.
    let t3 = SimTime::from_millis(60);
    for t in &resent {
        capture.with(|out| flow.handle_packet(t3, PATH, Direction::Forward, &t.header, out));
    }
    let acks = capture.take_transmits();
    assert_eq!(seqs(&acks), [(1, 40), (2, 40), (3, 40)]);
    let t4 = SimTime::from_millis(70);
    for a in &acks {
        capture.with(|out| flow.handle_packet(t4, PATH, Direction::Reverse, &a.header, out));
    }
    assert_eq!(seqs(&capture.take_transmits()), [(3, 140), (4, 90)]);
    assert_eq!(flow.stats().delivered_bytes, 300);
    assert_eq!(flow.poll_timeout(), Some(t4 + SimTime::from_millis(50)));
    assert_eq!(flow.path_state(None).srtt, Some(SimTime::from_millis(20)));
}
