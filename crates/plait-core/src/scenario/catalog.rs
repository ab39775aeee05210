//! What a scenario can name, for `plait list`: controllers, queues, traffic sources and loss
//! models, each with its parameters and defaults. Defaults are read from the same constants
//! and `Default` impls the parser uses, so the listing cannot disagree with the parser.

use serde::Serialize;

use super::schema::*;
use super::units::{format_duration, format_size};
use crate::net::queue::{Limit, RedSpec};
use crate::transport::tcp::TcpConfig;

/// Shown as the default of a parameter that must be given.
pub const REQUIRED: &str = "required";
/// Shown as the default of an optional parameter that is unset unless given.
pub const UNSET: &str = "none";

/// One thing a scenario can name.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CatalogEntry {
    /// `"controller"`, `"queue"`, `"source"` or `"loss"`.
    pub category: String,
    /// The name used in a scenario (`cc = "cubic"`, `kind = "red"`, ...).
    pub name: String,
    pub description: String,
    pub params: Vec<ParamInfo>,
}

/// One parameter of a catalog entry.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ParamInfo {
    pub name: String,
    /// The default as it would be written in a scenario, or [`REQUIRED`] / [`UNSET`].
    pub default: String,
    pub description: String,
}

fn entry(
    category: &str,
    name: &str,
    description: &str,
    params: &[(&str, String, &str)],
) -> CatalogEntry {
    CatalogEntry {
        category: category.to_string(),
        name: name.to_string(),
        description: description.to_string(),
        params: params
            .iter()
            .map(|(name, default, description)| ParamInfo {
                name: name.to_string(),
                default: default.clone(),
                description: description.to_string(),
            })
            .collect(),
    }
}

fn s(text: &str) -> String {
    text.to_string()
}

/// Everything a scenario can name, grouped by category and sorted by name within one.
pub fn catalog() -> Vec<CatalogEntry> {
    let red = RedSpec::default();
    let (red_packets, red_bytes) = match red.limit {
        Limit::Packets(n) => (n.to_string(), s(UNSET)),
        Limit::Bytes(n) => (s(UNSET), format_size(n)),
    };
    let tcp = TcpConfig::default();
    let tcp_params: Vec<(&str, String, &str)> = vec![
        (
            "cc",
            s("reno"),
            "congestion controller: a name, or a table { name = \"...\", ... }",
        ),
        (
            "bytes",
            s(UNSET),
            "bytes to transfer; unset means a long-lived flow",
        ),
        (
            "mss",
            tcp.mss.to_string(),
            "maximum segment size (payload bytes)",
        ),
        (
            "initial_window",
            tcp.initial_window.to_string(),
            "initial window in segments (RFC 6928)",
        ),
        (
            "sack",
            tcp.sack.to_string(),
            "SACK with RFC 6675 recovery; NewReno when false",
        ),
        (
            "delayed_ack",
            tcp.delayed_ack.to_string(),
            "delayed ACKs at the receiver (RFC 5681 §4.2)",
        ),
        (
            "delayed_ack_timeout",
            format_duration(tcp.delayed_ack_timeout),
            "longest an ACK is delayed",
        ),
        (
            "min_rto",
            format_duration(tcp.min_rto),
            "lower bound of the retransmission timeout",
        ),
        (
            "max_rto",
            format_duration(tcp.max_rto),
            "upper bound of the retransmission timeout",
        ),
        (
            "initial_rto",
            format_duration(tcp.initial_rto),
            "timeout before the first RTT sample (RFC 6298)",
        ),
        (
            "receive_buffer",
            format_size(tcp.receive_buffer),
            "receive buffer; bounds the advertised window",
        ),
        (
            "dupack_threshold",
            tcp.dupack_threshold.to_string(),
            "duplicate ACKs that trigger fast retransmit",
        ),
    ];
    let packet_size = format_size(DEFAULT_PACKET_SIZE as u64);
    vec![
        entry(
            "controller",
            "aimd",
            "generic AIMD: +alpha MSS per RTT, window times beta on loss",
            &[
                (
                    "alpha",
                    AIMD_DEFAULT_ALPHA.to_string(),
                    "additive increase, in MSS per RTT",
                ),
                (
                    "beta",
                    AIMD_DEFAULT_BETA.to_string(),
                    "multiplicative decrease factor, in (0, 1)",
                ),
            ],
        ),
        entry(
            "controller",
            "cubic",
            "CUBIC (RFC 9438)",
            &[
                ("c", CUBIC_DEFAULT_C.to_string(), "cubic scaling constant C"),
                (
                    "beta",
                    CUBIC_DEFAULT_BETA.to_string(),
                    "multiplicative decrease factor, in (0, 1)",
                ),
                (
                    "fast_convergence",
                    CUBIC_DEFAULT_FAST_CONVERGENCE.to_string(),
                    "release bandwidth faster when the window shrinks (RFC 9438 §4.7)",
                ),
                (
                    "tcp_friendliness",
                    CUBIC_DEFAULT_TCP_FRIENDLINESS.to_string(),
                    "Reno-friendly region (RFC 9438 §4.3)",
                ),
            ],
        ),
        entry(
            "controller",
            "reno",
            "Reno/NewReno window rules (RFC 5681)",
            &[],
        ),
        entry(
            "queue",
            "droptail",
            "FIFO that drops arrivals when full; give exactly one of packets or bytes",
            &[
                ("packets", s(UNSET), "buffer limit in packets"),
                ("bytes", s(UNSET), "buffer limit in bytes"),
            ],
        ),
        entry(
            "queue",
            "red",
            "Random Early Detection (Floyd & Jacobson 1993), ns-2 semantics",
            &[
                (
                    "min_th",
                    red.min_th.to_string(),
                    "lower threshold on the average queue",
                ),
                (
                    "max_th",
                    red.max_th.to_string(),
                    "upper threshold on the average queue",
                ),
                ("max_p", red.max_p.to_string(), "drop probability at max_th"),
                (
                    "w_q",
                    red.w_q.to_string(),
                    "weight of the average-queue EWMA",
                ),
                (
                    "gentle",
                    red.gentle.to_string(),
                    "ramp from max_p to 1 between max_th and 2 max_th",
                ),
                (
                    "wait",
                    red.wait.to_string(),
                    "space drops out more evenly (ns-2 wait_)",
                ),
                (
                    "mode",
                    s(if red.byte_mode { "bytes" } else { "packets" }),
                    "thresholds in packets or in bytes",
                ),
                (
                    "mean_packet_size",
                    format_size(red.mean_packet_bytes as u64),
                    "mean packet size, for byte mode and idle decay",
                ),
                ("packets", red_packets, "buffer limit in packets"),
                (
                    "bytes",
                    red_bytes,
                    "buffer limit in bytes (instead of packets)",
                ),
            ],
        ),
        entry(
            "queue",
            "threshold_dropper",
            "drops when an arrival finds more than threshold packets queued (Altman et al.)",
            &[
                (
                    "threshold",
                    s(REQUIRED),
                    "queue length in packets above which arrivals are dropped",
                ),
                (
                    "hold",
                    s(UNSET),
                    "no further drop for this long; unset means one mean RTT",
                ),
                (
                    "policy",
                    s(DROP_POLICIES[0]),
                    "which packet to drop: first_arrival, rate_independent, largest_rate",
                ),
            ],
        ),
        entry(
            "source",
            "cbr",
            "constant bit rate",
            &[
                ("rate", s(REQUIRED), "sending rate"),
                ("packet_size", packet_size.clone(), "packet size"),
            ],
        ),
        entry(
            "source",
            "onoff",
            "sends at rate during on periods, nothing during off periods",
            &[
                ("rate", s(REQUIRED), "rate while on"),
                ("packet_size", packet_size, "packet size"),
                (
                    "on",
                    s(REQUIRED),
                    "on period: { exponential = MEAN } or { pareto = MEAN, shape = K }",
                ),
                ("off", s(REQUIRED), "off period, same forms as on"),
            ],
        ),
        entry(
            "source",
            "tcp",
            "a TCP connection, bulk or of a given size",
            &tcp_params,
        ),
        entry(
            "loss",
            "bernoulli",
            "each packet lost independently",
            &[("p", s(REQUIRED), "loss probability")],
        ),
        entry(
            "loss",
            "gilbert_elliott",
            "two-state Markov loss (bursty), starting in the good state",
            &[
                (
                    "p_good_to_bad",
                    s(REQUIRED),
                    "per-packet probability of moving to the bad state",
                ),
                (
                    "p_bad_to_good",
                    s(REQUIRED),
                    "per-packet probability of moving back",
                ),
                (
                    "loss_good",
                    DEFAULT_LOSS_GOOD.to_string(),
                    "loss probability in the good state",
                ),
                (
                    "loss_bad",
                    DEFAULT_LOSS_BAD.to_string(),
                    "loss probability in the bad state",
                ),
            ],
        ),
        entry(
            "loss",
            "periodic",
            "every n-th packet lost",
            &[
                ("every", s(REQUIRED), "period in packets"),
                (
                    "offset",
                    s("0"),
                    "packets counted as already seen at the start",
                ),
            ],
        ),
    ]
}
