//! TFRC (declaration): TCP-friendly rate control (RFC 5348), the rate of one TCP flow from
//! the loss event rate and the RTT; its parameters and assembly are [`crate::app::tfrc`]'s,
//! shared with MulTFRC and CP.

use super::{Built, FlowContext, Missing, Paths, ProtocolSpec};
use crate::app::tfrc::{finish, flow, tfrc_params};
use crate::registry::{AlgorithmSpec, Params};
use crate::transport::tfrc::RateEquation;
use crate::transport::AnyTransport;

/// The declaration of TFRC: one path, with feedback reports from the receiver.
pub const PROTOCOL: ProtocolSpec = ProtocolSpec {
    source: SPEC,
    section: None,
    paths: Paths::One,
    feedback: true,
    settings: &[],
    columns: COLUMNS,
};

/// The result columns the TFRC family fills (`Transport::column`), in `flows` and
/// `flow_series`: the allowed rate X (bit/s), the loss event rate p and the packets lost per
/// loss event j the sender last heard.
pub const COLUMNS: &[&str] = &[
    "loss_event_rate",
    "packets_per_loss_event",
    "allowed_rate_bps",
];

/// The registry declaration of the TFRC source.
const SPEC: AlgorithmSpec<super::SourceKind> = AlgorithmSpec {
    name: "tfrc",
    summary: "TCP-friendly rate control: the rate of one TCP flow from the loss event rate and \
              RTT (RFC 5348)",
    params: tfrc_params![],
    finish: Some(finish),
    build: |params, context| built(params, context, "tfrc", RateEquation::Tfrc),
};

/// A TFRC-family flow following `equation`, built (no rate-based flow has a controller).
pub(super) fn built(
    params: &Params,
    mut context: FlowContext,
    kind: &'static str,
    equation: RateEquation,
) -> Result<Built, Missing> {
    Ok(Built {
        transport: AnyTransport::Tfrc(Box::new(flow(params, &mut context.rng, kind, equation))),
        cc: String::new(),
    })
}
