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

use super::tcp::{config, finish, host_noise};
use super::{Source, SourceKind};
use crate::registry::{AlgorithmSpec, Param, Scalar};
use crate::transport::aggregate::{Mapping, MpatConfig};
use crate::transport::tcp::StopMode;

/// Largest number of application flows in one aggregate.
pub const MAX_FLOWS: usize = 4096;

/// The registry declaration of the MPAT source.
pub const SPEC: AlgorithmSpec<SourceKind> = AlgorithmSpec {
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
    build: |params, context| Source::Mpat {
        config: Box::new(MpatConfig {
            tcp: config(params),
            shares: Vec::new(),
            mapping: Mapping::from_name(params.choice("mapping")).expect("a declared mapping"),
            app_bytes: params.opt_size("bytes"),
        }),
        cc: params.controller("cc").clone(),
        stop_mode: StopMode::from_name(params.choice("on_stop")).expect("a declared mode"),
        rng: context.rng,
        noise: host_noise(params),
    },
};
