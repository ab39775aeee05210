//! An MPTCP connection as a traffic source (RFC 8684; see
//! [`crate::transport::multipath::connection`]): a bulk transfer of finite (`bytes`) or
//! unbounded size over several TCP subflows.
//!
//! Its subflows' TCP settings are the TCP source's (`mss`, `sack`, the timers, the `linux`
//! profile, ...), given per flow or in the `[tcp]` section; `receive_buffer` is the
//! connection-level receive buffer shared by the subflows, `send_buffer` the connection-level
//! send buffer. The keys that name other things — `cc` (a coupled controller, or
//! `"uncoupled:<controller>"`), `scheduler` and `subflows` (each subflow's route, start and
//! backup flag) — are read with the flow's topology by the scenario reader
//! (`FlowSpec::multipath`), and the builder assembles the connection from both. The host
//! timing noise (`host_jitter`, `host_stall_*`) delays the packets of the connection's two
//! hosts, every subflow's alike (one host stack sends them all).

use super::tcp::{config, finish, host_noise};
use super::{Source, SourceKind};
use crate::registry::{AlgorithmSpec, Param, Scalar};
use crate::transport::multipath::MptcpConfig;
use crate::transport::tcp::StopMode;

/// Default connection-level send buffer: 4 MB.
pub const DEFAULT_SEND_BUFFER: u64 = 4 << 20;

/// The registry declaration of the MPTCP source.
pub const SPEC: AlgorithmSpec<SourceKind> = AlgorithmSpec {
    name: "mptcp",
    summary: "an MPTCP connection over several subflows, bulk or of a given size (RFC 8684)",
    params: crate::tcp_connection_params![
        Param::size("bytes", "size of the transfer")
            .at_least(1.0)
            .unset("a long-lived flow"),
        Param::size(
            "send_buffer",
            "connection-level send buffer: data not yet DATA_ACKed"
        )
        .at_least(1.0)
        .default(Scalar::Size(DEFAULT_SEND_BUFFER)),
        Param::bool(
            "trace_picks",
            "record every packet-scheduler decision (time, subflow, reason) in the picks table"
        )
        .default(Scalar::Bool(false)),
    ],
    finish: Some(finish),
    build: |params, _| Source::Mptcp {
        config: Box::new(MptcpConfig {
            tcp: config(params),
            send_buffer: params.size("send_buffer"),
            receive_buffer: params.size("receive_buffer"),
            app_bytes: params.opt_size("bytes"),
            subflows: Vec::new(),
        }),
        stop_mode: StopMode::from_name(params.choice("on_stop")).expect("a declared mode"),
        trace_picks: params.bool("trace_picks"),
        noise: host_noise(params),
    },
};
