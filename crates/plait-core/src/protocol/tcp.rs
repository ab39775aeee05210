//! TCP (declaration): a TCP connection, bulk or of a given size, with its congestion
//! controller (`cc`); its settings (`mss`, `sack`, the timers, ...) are the parameters of
//! [`crate::app::tcp`], defaulted for every TCP flow by the `[tcp]` section.

use super::{host_noise, Built, Paths, ProtocolSpec};
use crate::app::tcp::{config, finish, tcp_connection_params};
use crate::registry::{AlgorithmSpec, Param, Scalar};
use crate::transport::cc::Connection;
use crate::transport::tcp::{StopMode, TcpFlow, TcpReceiver, TcpSender};
use crate::transport::AnyTransport;

/// The declaration of TCP: one path, acknowledged, its settings defaulted by `[tcp]`.
pub const PROTOCOL: ProtocolSpec = ProtocolSpec {
    source: SPEC,
    section: Some("tcp"),
    paths: Paths::One,
    feedback: true,
    settings: &[],
    columns: &[],
};

/// The registry declaration of the TCP source.
const SPEC: AlgorithmSpec<super::SourceKind> = AlgorithmSpec {
    name: "tcp",
    summary: "a TCP connection, bulk or of a given size",
    params: tcp_connection_params![
        Param::controller(
            "cc",
            "congestion controller: a name, or a table { name = \"...\", <parameters> }",
        )
        .default(Scalar::Name("reno")),
        Param::size("bytes", "size of the transfer")
            .at_least(1.0)
            .unset("a long-lived flow"),
    ],
    finish: Some(finish),
    build: |params, context| {
        let config = config(params);
        let cc = params.controller("cc");
        let controller = cc.build(Connection {
            mss: config.mss,
            initial_window: config.initial_window,
            profile: config.profile,
        });
        let sender = TcpSender::new(config, controller, params.opt_size("bytes"));
        let flow = TcpFlow::new(sender, TcpReceiver::new(&config))
            .with_stop_mode(StopMode::from_name(params.choice("on_stop")).expect("a declared mode"))
            .with_host_noise(host_noise(params, context.host, context.slowest_rate_bps));
        Ok(Built {
            transport: AnyTransport::Tcp(flow),
            cc: cc.name().to_string(),
        })
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::tcp::config;
    use crate::registry::Value;
    use crate::time::SimTime;
    use crate::transport::tcp::TcpConfig;

    #[test]
    fn declared_defaults_are_the_tcp_defaults() {
        let params = PROTOCOL.source.check(&[]).unwrap();
        assert_eq!(config(&params), TcpConfig::default());
        assert_eq!(params.controller("cc").name(), "reno");
        assert_eq!(params.opt_size("bytes"), None);
    }

    #[test]
    fn conflicts_blame_the_setting_given() {
        let err = |given: &[(&str, Value)]| PROTOCOL.source.check(given).unwrap_err();
        let e = err(&[("min_rto", Value::Duration(SimTime::from_secs(90)))]);
        assert_eq!(e.param.as_deref(), Some("min_rto"));
        assert_eq!(e.message, "min_rto (90s) must not exceed max_rto (60s)");
        let e = err(&[("max_rto", Value::Duration(SimTime::from_millis(100)))]);
        assert_eq!(e.param.as_deref(), Some("max_rto"));
        let e = err(&[
            ("min_rto", Value::Duration(SimTime::from_secs(2))),
            ("max_rto", Value::Duration(SimTime::from_secs(1))),
        ]);
        assert_eq!(e.param.as_deref(), Some("min_rto"));
        let e = err(&[
            ("mss", Value::Size(9000)),
            ("receive_buffer", Value::Size(100)),
        ]);
        assert_eq!(e.param.as_deref(), Some("receive_buffer"));
        assert_eq!(
            e.message,
            "receive_buffer (100 bytes) must hold at least one mss (9000 bytes)"
        );
    }
}
