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

use super::{host_noise, Built, FlowContext, Missing, Paths, ProtocolSpec};
use crate::app::tcp::{config, finish};
use crate::registry::{AlgorithmSpec, Param, Params, Scalar};
use crate::time::SimTime;
use crate::transport::cc::{CcSpec, Connection};
use crate::transport::multipath::coupled::{Coupled, CoupledSpec, MultipathConnection, Uncoupled};
use crate::transport::multipath::scheduler::{SchedulerContext, SchedulerSpec};
use crate::transport::multipath::{MptcpConfig, MptcpFlow, SubflowConfig};
use crate::transport::tcp::StopMode;
use crate::transport::AnyTransport;

/// Default connection-level send buffer: 4 MB.
pub const DEFAULT_SEND_BUFFER: u64 = 4 << 20;

/// The declaration of MPTCP: one path per subflow, read with the connection's controller and
/// scheduler; its subflows are TCP connections, their settings defaulted by `[tcp]`.
pub const PROTOCOL: ProtocolSpec = ProtocolSpec {
    source: SPEC,
    section: Some("tcp"),
    paths: Paths::Subflows,
    feedback: true,
    settings: &[],
    columns: &[],
};

/// The registry declaration of the MPTCP source.
const SPEC: AlgorithmSpec<super::SourceKind> = AlgorithmSpec {
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
    build,
};

/// The multipath part of an MPTCP flow, read by the scenario reader with the flow's topology
/// ([`Paths::Subflows`]).
#[derive(Clone, Debug, PartialEq)]
pub struct MultipathSpec {
    pub cc: CoupledChoice,
    pub scheduler: SchedulerSpec,
    /// One per path, in order.
    pub subflows: Vec<SubflowSpec>,
}

/// An MPTCP flow's congestion control.
#[derive(Clone, Debug, PartialEq)]
pub enum CoupledChoice {
    /// A coupled controller (`cc = "lia"`).
    Coupled(CoupledSpec),
    /// A single-path controller on each subflow (`cc = "uncoupled:cubic"`).
    Uncoupled(CcSpec),
}

impl CoupledChoice {
    /// The name results show: `lia`, `uncoupled:cubic`.
    pub fn name(&self) -> String {
        match self {
            CoupledChoice::Coupled(c) => c.name().to_string(),
            CoupledChoice::Uncoupled(c) => format!("uncoupled:{}", c.name()),
        }
    }
}

/// One subflow of an MPTCP flow.
#[derive(Clone, Debug, PartialEq)]
pub struct SubflowSpec {
    /// The nodes from `src` to `dst` as written (`None`: the shortest path).
    pub route: Option<Vec<String>>,
    /// When it joins, after the flow starts.
    pub start: SimTime,
    pub backup: bool,
}

/// The connection: its settings, its subflows, controller and scheduler from the multipath
/// part, the host noise from the host stream.
fn build(params: &Params, context: FlowContext) -> Result<Built, Missing> {
    let Some(multipath) = context.multipath else {
        return Err(Missing {
            key: "subflows",
            message: "an mptcp flow needs its subflows".into(),
        });
    };
    let config = MptcpConfig {
        tcp: config(params),
        send_buffer: params.size("send_buffer"),
        receive_buffer: params.size("receive_buffer"),
        app_bytes: params.opt_size("bytes"),
        subflows: multipath
            .subflows
            .iter()
            .map(|s| SubflowConfig {
                start: s.start,
                backup: s.backup,
            })
            .collect(),
    };
    let n = config.subflows.len();
    let tcp = config.tcp;
    let cc = match &multipath.cc {
        CoupledChoice::Coupled(spec) => spec.build(MultipathConnection {
            subflows: n,
            mss: tcp.mss,
            initial_window: tcp.initial_window,
            profile: tcp.profile,
        }),
        CoupledChoice::Uncoupled(spec) => Coupled::Uncoupled(Uncoupled {
            controllers: (0..n)
                .map(|_| {
                    spec.build(Connection {
                        mss: tcp.mss,
                        initial_window: tcp.initial_window,
                        profile: tcp.profile,
                    })
                })
                .collect(),
            mss: tcp.mss,
        }),
    };
    let scheduler = multipath.scheduler.build(SchedulerContext { subflows: n });
    let mut flow = MptcpFlow::new(config, cc, scheduler)
        .with_stop_mode(StopMode::from_name(params.choice("on_stop")).expect("a declared mode"))
        .with_host_noise(host_noise(params, context.host));
    if params.bool("trace_picks") {
        flow = flow.with_pick_log();
    }
    Ok(Built {
        transport: AnyTransport::Mptcp(Box::new(flow)),
        cc: multipath.cc.name(),
    })
}
