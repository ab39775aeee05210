//! Cbr (declaration): a datagram source of [`crate::app::cbr`], sent without feedback.

use super::{Built, Paths, ProtocolSpec};
use crate::app::cbr::Cbr;
use crate::app::{DatagramSource, PACKET_SIZE};
use crate::registry::{AlgorithmSpec, Param};
use crate::transport::datagram::DatagramFlow;
use crate::transport::AnyTransport;

/// The declaration of the constant bit rate source: one path, no feedback.
pub const PROTOCOL: ProtocolSpec = ProtocolSpec {
    source: SPEC,
    section: None,
    paths: Paths::One,
    feedback: false,
    settings: &[],
    columns: &[],
};

/// A datagram flow of `source`.
fn built(source: Cbr) -> Result<Built, super::Missing> {
    Ok(Built {
        transport: AnyTransport::Datagram(DatagramFlow::new(DatagramSource::Cbr(source))),
        cc: String::new(),
    })
}

/// The registry declaration of the constant-bit-rate source.
const SPEC: AlgorithmSpec<super::SourceKind> = AlgorithmSpec {
    name: "cbr",
    summary: "constant bit rate: packets of packet_size sent evenly at rate",
    params: &[Param::rate("rate", "sending rate"), PACKET_SIZE],
    finish: None,
    build: |params, _| {
        built(Cbr::new(
            params.rate("rate"),
            params.size("packet_size") as u32,
        ))
    },
};
