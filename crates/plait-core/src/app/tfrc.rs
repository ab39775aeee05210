//! The parameters and the assembly of a TFRC-family flow (RFC 5348; see
//! [`crate::transport::tfrc`]): a rate-based sender following the TCP throughput equation,
//! and its receiver. The TFRC, MulTFRC and CP protocols (`crate::protocol::{tfrc, multfrc,
//! cp}`) declare them; MulTFRC and CP add n.

use crate::registry::{ParamIssue, Params};
use crate::rng::SimRng;
use crate::transport::tfrc::{
    FlowConfig, RateEquation, SenderConfig, ShareFilter, TfrcFlow, TfrcReceiver, TfrcSender,
};
use rand::Rng;

/// The parameters every TFRC-family source has, after the source's own `$own`.
#[macro_export]
#[doc(hidden)]
macro_rules! tfrc_params {
    ($($own:expr),* $(,)?) => {
        &[
            $($own,)*
            $crate::registry::Param::size(
                "segment_size",
                "payload bytes per data packet: the s of the equation",
            )
            .between(1.0, $crate::app::MAX_PACKET_BYTES as f64)
            .default($crate::registry::Scalar::Size(1460)),
            $crate::registry::Param::integer(
                "header_bytes",
                "header bytes added to every packet on the wire (40: as TCP's, so a 1460-byte \
                 segment makes a 1500-byte packet)",
            )
            .unit("bytes")
            .between(20.0, 120.0)
            .default($crate::registry::Scalar::Integer(40)),
            $crate::registry::Param::bool(
                "history_discounting",
                "RFC 5348 §5.5 history discounting: p falls faster once losses stop",
            )
            .default($crate::registry::Scalar::Bool(true)),
            $crate::registry::Param::bool(
                "oscillation_reduction",
                "RFC 5348 §4.5: pace at X·sqrt(R)/sqrt(R_sample), slower while queues build",
            )
            .default($crate::registry::Scalar::Bool(false)),
            $crate::registry::Param::duration(
                "timer_granularity",
                "the sender's timer granularity t_gran: a packet may leave min(t_ipi, t_gran)/2 \
                 before its nominal time (RFC 5348 §4.6; 0: exactly on time)",
            )
            .between(0.0, 1.0)
            .default($crate::registry::Scalar::Duration($crate::time::SimTime::ZERO)),
            $crate::registry::Param::bool(
                "reliable",
                "retransmit lost packets (NACKed by the receiver) and deliver a byte stream in \
                 order; retransmissions count against the allowed rate",
            )
            .default($crate::registry::Scalar::Bool(false)),
            $crate::registry::Param::size("bytes", "size of the transfer; needs reliable")
                .at_least(1.0)
                .unset("a long-lived flow"),
        ]
    };
}
pub use tfrc_params;

/// The checks every TFRC-family source makes.
pub fn finish(params: &mut Params) -> Result<(), ParamIssue> {
    if params.is_given("bytes") && !params.bool("reliable") {
        return Err(ParamIssue::at(
            "bytes",
            "a transfer of a given size needs reliable = true (an unreliable flow has no end)",
        ));
    }
    let packet = params.size("segment_size") + params.integer("header_bytes");
    if packet > super::MAX_PACKET_BYTES as u64 {
        return Err(ParamIssue::at(
            "segment_size",
            format!(
                "segment_size + header_bytes must be at most {} bytes, got {packet}",
                super::MAX_PACKET_BYTES
            ),
        ));
    }
    Ok(())
}

/// A TFRC-family flow following `equation`, called `kind` in results; CP draws its share
/// filter's key from `rng`.
pub fn flow(
    params: &Params,
    rng: &mut SimRng,
    kind: &'static str,
    equation: RateEquation,
) -> TfrcFlow {
    let segment_bytes = params.size("segment_size") as u32;
    let share = match equation {
        // The TFRC variant of MulTCP measures the whole flow: no share filter.
        RateEquation::Cp {
            flows,
            whole_flow: false,
        } => Some(ShareFilter::new(flows, rng.gen())),
        _ => None,
    };
    let sender = TfrcSender::new(
        SenderConfig {
            segment_bytes,
            oscillation_reduction: params.bool("oscillation_reduction"),
            timer_granularity: params.duration("timer_granularity"),
        },
        equation,
    );
    let receiver = TfrcReceiver::new(
        equation,
        segment_bytes,
        params.bool("history_discounting"),
        share,
    );
    let config = FlowConfig {
        segment_bytes,
        header_bytes: params.integer("header_bytes") as u32,
        reliable: params.bool("reliable"),
        app_bytes: params.opt_size("bytes"),
    };
    TfrcFlow::new(kind, config, sender, receiver)
}
