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
use crate::app::tcp::{config, finish as finish_tcp};
use crate::registry::{AlgorithmSpec, Param, ParamIssue, Params, Scalar};
use crate::time::SimTime;
use crate::transport::cc::{CcSpec, Connection};
use crate::transport::multipath::coupled::{Coupled, CoupledSpec, MultipathConnection, Uncoupled};
use crate::transport::multipath::scheduler::{SchedulerContext, SchedulerSpec};
use crate::transport::multipath::connection::DSS_DATA_OPTION_BYTES;
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

/// The TCP source's checks, and room for data beside the DSS option: a data segment's options
/// come out of its MSS (RFC 6691 §3), so an MPTCP flow's `mss` must exceed the DSS option's
/// [`DSS_DATA_OPTION_BYTES`].
fn finish(params: &mut Params) -> Result<(), ParamIssue> {
    finish_tcp(params)?;
    let mss = params.size("mss");
    if mss <= u64::from(DSS_DATA_OPTION_BYTES) {
        return Err(ParamIssue::at(
            "mss",
            format!(
                "an MPTCP flow's mss must exceed the {DSS_DATA_OPTION_BYTES} bytes of the DSS \
                 option every data segment carries in it, got {mss}"
            ),
        ));
    }
    Ok(())
}

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
    // The controller counts in the segments' data bytes, as the subflows do.
    let mss = config.segment_payload();
    let cc = match &multipath.cc {
        CoupledChoice::Coupled(spec) => spec.build(MultipathConnection {
            subflows: n,
            mss,
            initial_window: tcp.initial_window,
            profile: tcp.profile,
        }),
        CoupledChoice::Uncoupled(spec) => Coupled::Uncoupled(Uncoupled {
            controllers: (0..n)
                .map(|_| {
                    spec.build(Connection {
                        mss,
                        initial_window: tcp.initial_window,
                        profile: tcp.profile,
                    })
                })
                .collect(),
            mss,
        }),
    };
    let scheduler = multipath.scheduler.build(SchedulerContext { subflows: n });
    let mut flow = MptcpFlow::new(config, cc, scheduler)
        .with_stop_mode(StopMode::from_name(params.choice("on_stop")).expect("a declared mode"))
        .with_host_noise(host_noise(params, context.host, context.slowest_rate_bps));
    if params.bool("trace_picks") {
        flow = flow.with_pick_log();
    }
    Ok(Built {
        transport: AnyTransport::Mptcp(Box::new(flow)),
        cc: multipath.cc.name(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Value;

    #[test]
    fn the_mss_must_leave_room_for_data_beside_the_dss_option() {
        let dss = u64::from(DSS_DATA_OPTION_BYTES);
        let e = PROTOCOL
            .source
            .check(&[("mss", Value::Size(dss))])
            .unwrap_err();
        assert_eq!(e.param.as_deref(), Some("mss"));
        assert_eq!(
            e.message,
            "an MPTCP flow's mss must exceed the 24 bytes of the DSS option every data segment \
             carries in it, got 24"
        );
        assert!(PROTOCOL.source.check(&[("mss", Value::Size(dss + 1))]).is_ok());
        // The TCP source's own checks still run.
        let e = PROTOCOL
            .source
            .check(&[("mss", Value::Size(9000)), ("receive_buffer", Value::Size(100))])
            .unwrap_err();
        assert_eq!(e.param.as_deref(), Some("receive_buffer"));
    }

    #[test]
    fn a_full_segment_carries_the_mss_less_the_dss_option() {
        let params = PROTOCOL.source.check(&[("mss", Value::Size(1448))]).unwrap();
        let config = MptcpConfig {
            tcp: config(&params),
            send_buffer: 1 << 20,
            receive_buffer: 1 << 20,
            app_bytes: None,
            subflows: vec![SubflowConfig::default()],
        };
        // Linux 6.18 on the testbed: 1424 data bytes in a 1500-byte packet where TCP has 1448.
        assert_eq!(config.segment_payload(), 1424);
    }
}
