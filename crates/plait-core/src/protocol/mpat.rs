//! An MPAT aggregate as a traffic source (Singh, Pradhan and Francis, ICNP 2004; see
//! [`crate::transport::aggregate::mpat`]): N application flows between two hosts, bulk or of
//! a given size each, over N congestion windows shared out by `shares`.
//!
//! The windows' TCP settings are the TCP source's (`mss`, `sack`, the timers, ...), given per
//! flow or in the `[tcp]` section; `cc` is every window's congestion controller (Reno by
//! default: the paper's N AIMD loops). `shares` (one positive weight per application flow,
//! normalised to sum to one) is read by the scenario reader, which gives the aggregate one
//! path per window, all on the flow's route. The host timing noise (`host_jitter`,
//! `host_stall_*`) delays the packets of the aggregate's two hosts, every window's alike.

use super::{host_noise, Built, FlowContext, Missing, Paths, ProtocolSpec};
use crate::app::tcp::{config, finish};
use crate::registry::{AlgorithmSpec, Param, Params, Scalar};
use crate::transport::aggregate::{Mapping, MpatConfig, MpatFlow};
use crate::transport::cc::Connection;
use crate::transport::tcp::StopMode;
use crate::transport::AnyTransport;

/// The declaration of MPAT: one path per window, all on the flow's route, given by `shares`,
/// which may change during the run; its windows are TCP connections, their settings defaulted
/// by `[tcp]`.
pub const PROTOCOL: ProtocolSpec = ProtocolSpec {
    source: SPEC,
    section: Some("tcp"),
    paths: Paths::Shares,
    feedback: true,
    settings: &["shares"],
    columns: &[],
};

/// The registry declaration of the MPAT source.
const SPEC: AlgorithmSpec<super::SourceKind> = AlgorithmSpec {
    name: "mpat",
    summary: "MPAT: N application flows over N AIMD windows shared out by weight (Singh, \
              Pradhan, Francis 2004); shares = [..] gives the weights",
    params: crate::tcp_connection_params![
        Param::controller(
            "cc",
            "every window's congestion controller: a name, or a table { name = \"...\", ... }",
        )
        .default(Scalar::Name("reno")),
        Param::size("bytes", "size of each application flow's transfer")
            .at_least(1.0)
            .unset("long-lived flows"),
        Param::choice(
            "mapping",
            Mapping::NAMES,
            "which open window carries a packet: random (the paper's), sticky (the window of \
             the flow's previous packet if open) or spread (any other open window)",
        )
        .default(Scalar::Name("random")),
    ],
    finish: Some(finish),
    build,
};

/// The aggregate: its windows' controllers, the shares the scenario reader read, the mapping
/// drawn from the flow's stream, the host noise from the host stream.
fn build(params: &Params, context: FlowContext) -> Result<Built, Missing> {
    let Some(shares) = context.shares else {
        return Err(Missing {
            key: "shares",
            message: "an mpat flow needs its shares".into(),
        });
    };
    let tcp = config(params);
    let config = MpatConfig {
        tcp,
        shares,
        mapping: Mapping::from_name(params.choice("mapping")).expect("a declared mapping"),
        app_bytes: params.opt_size("bytes"),
    };
    let cc = params.controller("cc");
    let controller = || {
        cc.build(Connection {
            mss: tcp.mss,
            initial_window: tcp.initial_window,
            profile: tcp.profile,
        })
    };
    let flow = MpatFlow::new(config, controller, context.rng)
        .with_stop_mode(StopMode::from_name(params.choice("on_stop")).expect("a declared mode"))
        .with_host_noise(host_noise(params, context.host, context.slowest_rate_bps));
    Ok(Built {
        transport: AnyTransport::Mpat(Box::new(flow)),
        cc: cc.name().to_string(),
    })
}
