//! A CP flow as a traffic source: the Coordination Protocol's aggregate rate control (Ott,
//! Sparks and Mayer-Patel, "Aggregate congestion control for distributed multimedia
//! applications", INFOCOM 2004), the baseline the MulTFRC paper compares with (its §3: "The
//! underlying idea is to multiply the equation ... with n", over "flow shares" whose packets a
//! stochastic filter picks).
//!
//! What plait assumes where the description is silent: the allowed rate is n times the TFRC
//! equation (RFC 5348 §3.1) at the loss event rate of one flow share; a packet belongs to the
//! share when a keyed hash of its sequence number falls below 1/n, so the receiver classifies
//! lost packets as well; loss events, intervals and discounting are TFRC's, over the share's
//! packets; the RTT, slow start and the rest of the sender are TFRC's. n ≥ 1, as CP assumes.
//!
//! `loss_over = "flow"` measures the loss event rate over every packet of the flow instead:
//! the "TFRC variant of mulTCP" of Singh, Pradhan and Francis (ICNP 2004, §2: "Each multTCP
//! TFRC flow uses the multTCP bandwidth equation, and a measurement of the loss probability",
//! MulTCP's equation being N times a TCP flow's; their Table 2).

use super::tfrc::built;
use super::{Paths, ProtocolSpec};
use crate::app::tfrc::{finish, tfrc_params};
use crate::registry::{AlgorithmSpec, Param, Scalar};
use crate::transport::tfrc::RateEquation;

/// The declaration of CP: a rate-based flow with feedback whose n may change during the run.
pub const PROTOCOL: ProtocolSpec = ProtocolSpec {
    source: SPEC,
    section: None,
    paths: Paths::One,
    feedback: true,
    settings: &["n"],
    columns: super::tfrc::COLUMNS,
};

/// The registry declaration of the CP source.
const SPEC: AlgorithmSpec<super::SourceKind> = AlgorithmSpec {
    name: "cp",
    summary: "CP: n times TFRC's rate, over the loss event rate of one flow share (Ott, Sparks, \
              Mayer-Patel 2004)",
    params: tfrc_params![
        Param::number("n", "number of flow shares (at least 1)").at_least(1.0),
        Param::choice(
            "loss_over",
            &["share", "flow"],
            "the packets the loss event rate is measured over: one flow share's (CP), or the \
             whole flow's (the TFRC variant of MulTCP: Singh, Pradhan and Francis 2004, §2, \
             Table 2)",
        )
        .default(Scalar::Name("share")),
    ],
    finish: Some(finish),
    build: |params, context| {
        built(
            params,
            context,
            "cp",
            RateEquation::Cp {
                flows: params.number("n"),
                whole_flow: params.choice("loss_over") == "flow",
            },
        )
    },
};
