//! The sending host's own interface queue (`local = true` on a link): a TCP or MPTCP segment
//! that finds it full is refused, not lost, as Linux 3.0 treats `NET_XMIT_DROP` from its qdisc
//! (`tcp_transmit_skb` -> `tcp_enter_cwr`, the segment left unsent by `tcp_write_xmit`): no
//! retransmission, no drop, every byte delivered once; the refusals are counted.

mod common;

use common::{run, scenario};
use plait_core::sim::{build, Simulator};

/// Host `s` sends 4 MB to `d` through its 10 Mb/s interface (`eth`, a 20-packet queue, the
/// packet in service included) and a 10 Mb/s path with room to spare: the interface is the
/// only place the slow start can overflow.
fn one_tcp(local: bool, jitter: &str) -> String {
    format!(
        r#"
[simulation]
duration = "10s"

[tcp]
profile = "linux"
rack_tlp = false

[[link]]
name = "eth"
from = "s"
to = "r"
rate = "10Mbps"
delay = "1ms"
queue = {{ kind = "droptail", packets = 20, limit_includes_service = true }}
local = {local}

[[link]]
name = "wan"
from = "r"
to = "d"
rate = "10Mbps"
delay = "20ms"

[[flow]]
name = "bulk"
kind = "tcp"
cc = "cubic"
src = "s"
dst = "d"
bytes = "4000000B"
host_jitter = "{jitter}"
"#
    )
}

fn eth_forward(sim: &Simulator) -> usize {
    sim.links()
        .iter()
        .position(|l| l.name == "eth" && !l.is_reverse)
        .expect("eth")
}

#[test]
fn a_tcp_sender_behind_a_full_local_queue_retransmits_nothing_and_enters_cwr() {
    // On a network queue the slow start overflows the interface: drops and retransmissions
    // (what plait did for every queue before `local`).
    let plain = run(&one_tcp(false, "0s"), None);
    let s = plain.flows()[0].transport.as_tcp().expect("tcp").sender();
    assert!(s.core().stats().retransmitted_segments > 0);
    assert!(plain.flows()[0].meters.drops > 0);
    for jitter in ["0s", "50us"] {
        let sim = run(&one_tcp(true, jitter), None);
        let f = &sim.flows()[0];
        let tcp = f.transport.as_tcp().expect("tcp");
        let stats = tcp.sender().core().stats();
        assert!(tcp.sender().is_finished(), "{jitter}");
        assert_eq!(tcp.receiver().delivered_bytes(), 4_000_000, "{jitter}");
        // Every segment sent once: no retransmission, no loss, no drop.
        assert_eq!(stats.retransmitted_segments, 0, "{jitter}");
        assert_eq!(stats.fast_retransmits + stats.timeouts, 0, "{jitter}");
        assert_eq!(stats.segments_sent, 4_000_000u64.div_ceil(1448), "{jitter}");
        assert_eq!(f.meters.drops, 0, "{jitter}");
        assert_eq!(sim.packet_counters().dropped, 0, "{jitter}");
        // The queue refused segments and the sender entered CWR: ssthresh set (it starts
        // unbounded and no loss could set it), near what the path and the queue hold (42 ms
        // of 10 Mb/s plus 20 packets: 56 segments).
        assert!(stats.local_refusals > 0 && stats.local_cwr > 0, "{jitter}");
        let cc = tcp.sender().cc();
        use plait_core::transport::cc::CongestionControl;
        assert!(cc.ssthresh() < 56 * 1448, "{jitter}: {}", cc.ssthresh());
        // Counted on the link and for the flow.
        let eth = eth_forward(&sim);
        assert_eq!(sim.links()[eth].refusals, stats.local_refusals, "{jitter}");
        let local = f.local.as_deref().expect("the flow starts on a local link");
        assert_eq!(local.queues()[0].total, stats.local_refusals, "{jitter}");
        let r = sim.results();
        assert_eq!(r.links.drops[eth], 0);
        // The results' `refusals` table: one row, the flow's at its local link.
        assert_eq!(r.refusals.flow, [0]);
        assert_eq!(r.refusals.link, [eth as u32]);
        assert_eq!(r.refusals.refusals, [stats.local_refusals]);
        let json = serde_json::to_value(&r).expect("serialises");
        assert!(json.get("refusals").is_some());
    }
    // Without local links the table is empty and left out of the JSON.
    let r = plain.results();
    assert!(r.refusals.flow.is_empty());
    assert!(serde_json::to_value(&r)
        .expect("serialises")
        .get("refusals")
        .is_none());
}

/// Two disjoint paths from `h1` to `h2`; the first starts on `h1`'s 10-packet interface
/// queue (`local` when asked), the second on a 100 Mb/s access link.
fn two_paths(local: bool) -> String {
    format!(
        r#"
[simulation]
duration = "20s"

[tcp]
profile = "linux"
rack_tlp = false

[[link]]
name = "eth"
from = "h1"
to = "r1"
rate = "10Mbps"
delay = "1ms"
queue = {{ kind = "droptail", packets = 10, limit_includes_service = true }}
local = {local}
[[link]]
name = "p1"
from = "r1"
to = "h2"
rate = "100Mbps"
delay = "5ms"
[[link]]
name = "a2"
from = "h1"
to = "r2"
rate = "100Mbps"
delay = "1ms"
[[link]]
name = "p2"
from = "r2"
to = "h2"
rate = "5Mbps"
delay = "10ms"
queue = {{ kind = "droptail", packets = 200 }}

[[flow]]
name = "mp"
kind = "mptcp"
cc = "lia"
src = "h1"
dst = "h2"
bytes = "6000000B"
subflows = [ {{ route = ["h1", "r1", "h2"] }}, {{ route = ["h1", "r2", "h2"] }} ]
"#
    )
}

#[test]
fn an_mptcp_subflow_behind_a_full_local_queue_retransmits_nothing() {
    let plain = run(&two_paths(false), None);
    let c = plain.flows()[0].transport.as_mptcp().expect("mptcp");
    assert!(c.subflow_core(0).stats().retransmitted_segments > 0);
    let sim = run(&two_paths(true), None);
    let f = &sim.flows()[0];
    let c = f.transport.as_mptcp().expect("mptcp");
    let first = c.subflow_core(0).stats();
    assert_eq!(first.retransmitted_segments, 0);
    assert!(first.local_refusals > 0 && first.local_cwr > 0);
    assert_eq!(f.delivered_bytes(), 6_000_000);
    let r = sim.results();
    assert!(r.flows.completion_s[0].is_finite());
    let eth = eth_forward(&sim);
    assert_eq!(r.links.drops[eth], 0);
    assert_eq!(sim.links()[eth].refusals, first.local_refusals);
}

fn error(toml: &str) -> String {
    match plait_core::scenario::Scenario::from_toml_str(toml, "x.toml", &[]) {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn local_is_only_for_a_drop_tail_queue_in_packets_at_a_flow_source() {
    // Built as given: a valid one.
    let ok = scenario(&one_tcp(true, "0s"));
    assert!(ok.links[0].local && !ok.links[1].local);
    assert!(build(&ok, None).is_ok());
    // On a link that leaves a node where no flow starts.
    let e =
        error(&one_tcp(false, "0s").replace("delay = \"20ms\"", "delay = \"20ms\"\nlocal = true"));
    assert!(
        e.contains("x.toml") && e.contains("link[1].local") && e.contains("'wan'"),
        "{e}"
    );
    assert!(e.contains("no flow starts at its from node 'r'"), "{e}");
    // A queue that is not drop-tail in packets.
    for queue in [
        r#"{ kind = "droptail", bytes = "30000B" }"#,
        r#"{ kind = "red", min_th = 5, max_th = 15, packets = 30 }"#,
    ] {
        let text = one_tcp(true, "0s").replace(
            r#"{ kind = "droptail", packets = 20, limit_includes_service = true }"#,
            queue,
        );
        let e = error(&text);
        assert!(
            e.contains("link[0].local") && e.contains("drop-tail queue limited in packets"),
            "{e}"
        );
    }
    // Not a boolean.
    let e = error(&one_tcp(true, "0s").replace("local = true", "local = 1"));
    assert!(e.contains("link[0].local"), "{e}");
}
