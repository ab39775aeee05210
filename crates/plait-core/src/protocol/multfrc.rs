//! A MulTFRC flow as a traffic source: TFRC whose allowed rate is that of n TCP flows
//! (Damjanovic and Welzl, CCR 39(3) 2009; draft-irtf-iccrg-multfrc), n a positive real, with
//! j, the packets lost per loss event, counted by the receiver. See
//! [`crate::model::multfrc`] for the equation and [`crate::transport::tfrc`] for the protocol.

use super::tfrc::built;
use super::{Paths, ProtocolSpec};
use crate::app::tfrc::{finish, tfrc_params};
use crate::model::multfrc::{Form, Options};
use crate::registry::{AlgorithmSpec, Param, Scalar};
use crate::transport::tfrc::RateEquation;

/// The declaration of MulTFRC: a rate-based flow with feedback whose n may change during the
/// run.
pub const PROTOCOL: ProtocolSpec = ProtocolSpec {
    source: SPEC,
    section: None,
    paths: Paths::One,
    feedback: true,
    settings: &["n"],
    columns: super::tfrc::COLUMNS,
};

/// The registry declaration of the MulTFRC source.
const SPEC: AlgorithmSpec<super::SourceKind> = AlgorithmSpec {
    name: "multfrc",
    summary: "MulTFRC: TFRC with the throughput equation of n TCP flows, n a positive real \
              (Damjanovic and Welzl 2009)",
    params: tfrc_params![
        Param::number(
            "n",
            "number of TCP flows the flow stands for (a positive real)"
        )
        .greater_than(0.0)
        .default(Scalar::Number(1.0)),
        Param::choice(
            "equation",
            &["draft", "ns2"],
            "which transcription of the n-flow equation: draft-irtf-iccrg-multfrc §2.1, or \
             the authors' ns-2 code (n = 1 is then TFRC's equation)",
        )
        .default(Scalar::Name("draft")),
        Param::bool(
            "refine_j",
            "count the flows hit by a loss event as n(1 − (1 − 1/n)^j) (the paper's new \
             calculation of j); false: min(j, ceil(n)) (the old one, Figure 5)",
        )
        .default(Scalar::Bool(true)),
    ],
    finish: Some(finish),
    build: |params, context| {
        let equation = RateEquation::MulTfrc {
            flows: params.number("n"),
            options: Options {
                form: Form::from_name(params.choice("equation")).expect("a declared form"),
                refine: params.bool("refine_j"),
            },
        };
        built(params, context, "multfrc", equation)
    },
};
