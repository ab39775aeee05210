//! OnOff (declaration): a datagram source of [`crate::app::onoff`], sent without feedback.

use super::{Built, Paths, ProtocolSpec};
use crate::app::onoff::OnOff;
use crate::app::{DatagramSource, PACKET_SIZE};
use crate::registry::{AlgorithmSpec, Param};
use crate::transport::datagram::DatagramFlow;
use crate::transport::AnyTransport;

/// The declaration of the on/off source: one path, no feedback.
pub const PROTOCOL: ProtocolSpec = ProtocolSpec {
    source: SPEC,
    section: None,
    paths: Paths::One,
    feedback: false,
    settings: &[],
    columns: &[],
};

/// A datagram flow of `source`.
fn built(source: OnOff) -> Result<Built, super::Missing> {
    Ok(Built {
        transport: AnyTransport::Datagram(DatagramFlow::new(DatagramSource::OnOff(source))),
        cc: String::new(),
    })
}

/// The registry declaration of the on/off source.
const SPEC: AlgorithmSpec<super::SourceKind> = AlgorithmSpec {
    name: "onoff",
    summary: "sends at rate during on periods and nothing during off periods",
    params: &[
        Param::rate("rate", "rate while on"),
        PACKET_SIZE,
        Param::period(
            "on",
            "on-period distribution: { exponential = MEAN } or { pareto = MEAN, shape = K }",
        ),
        Param::period("off", "off-period distribution, in the same forms as on"),
    ],
    finish: None,
    build: |params, context| {
        built(OnOff::new(
            params.rate("rate"),
            params.size("packet_size") as u32,
            params.period("on"),
            params.period("off"),
            context.rng,
        ))
    },
};
