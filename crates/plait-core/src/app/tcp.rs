//! A TCP connection as a traffic source: a [`TcpSender`] with a finite (`bytes`) or unbounded
//! amount of application data, driven by its congestion controller (`cc`), and the
//! [`TcpReceiver`] at the other end.
//!
//! The connection's settings ([`TcpConfig`]: `mss`, `sack`, the timers, ...) may be given per
//! flow or, as a default for every TCP flow, in the scenario's `[tcp]` section, named after
//! this source: they are the parameters declared [`in_section`](crate::registry::Param::in_section).
//! Their declared defaults are [`TcpConfig::default`] (a test holds them equal).

use crate::registry::{Origin, ParamIssue, Params, Value};
use crate::time::SimTime;
use crate::transport::cc::CcSpec;
use crate::transport::host_noise::HostNoiseConfig;
use crate::transport::tcp::{
    DelayedAckStyle, RecoveryWindow, RtoFormula, SsthreshBasis, TcpConfig, TcpProfile,
};
use crate::units::format_duration;

/// The parameters of a TCP connection's settings (those a `[tcp]` section may give, and
/// `on_stop`), after the source's own parameters `$own`: shared by the TCP and MPTCP sources.
#[macro_export]
#[doc(hidden)]
macro_rules! tcp_connection_params {
    ($($own:expr),* $(,)?) => {
        &[
            $($own,)*
            $crate::registry::Param::size("mss", "maximum segment size (payload bytes)")
                .between(1.0, $crate::app::MAX_PACKET_BYTES as f64)
                .default($crate::registry::Scalar::Size(1460))
                .in_section(),
            $crate::registry::Param::integer("initial_window", "initial window (RFC 6928)")
                .unit("segments")
                .between(1.0, u32::MAX as f64)
                .default($crate::registry::Scalar::Integer(10))
                .in_section(),
            $crate::registry::Param::bool(
                "sack",
                "SACK (RFC 2018) with RFC 6675 recovery; NewReno (RFC 6582) when false",
            )
            .default($crate::registry::Scalar::Bool(true))
            .in_section(),
            $crate::registry::Param::bool(
                "delayed_ack",
                "delayed ACKs at the receiver (RFC 5681 §4.2)",
            )
            .default($crate::registry::Scalar::Bool(false))
            .in_section(),
            $crate::registry::Param::duration(
                "delayed_ack_timeout",
                "longest an ACK is delayed (the rfc style; the linux style adapts its own timer)",
            )
            .greater_than(0.0)
            .default($crate::registry::Scalar::Duration($crate::time::SimTime::from_millis(40)))
            .in_section(),
            $crate::registry::Param::duration(
                "min_rto",
                "lower bound of the retransmission timeout; at most max_rto",
            )
            .greater_than(0.0)
            .default($crate::registry::Scalar::Duration($crate::time::SimTime::from_millis(200)))
            .in_section(),
            $crate::registry::Param::duration("max_rto", "upper bound of the retransmission timeout")
                .greater_than(0.0)
                .default($crate::registry::Scalar::Duration($crate::time::SimTime::from_secs(60)))
                .in_section(),
            $crate::registry::Param::duration(
                "initial_rto",
                "timeout before the first RTT sample (RFC 6298 §2.1)",
            )
            .greater_than(0.0)
            .default($crate::registry::Scalar::Duration($crate::time::SimTime::from_secs(1)))
            .in_section(),
            $crate::registry::Param::size(
                "receive_buffer",
                "receive buffer; the advertised window is what is left of it; at least mss",
            )
            .default($crate::registry::Scalar::Size(64 << 20))
            .in_section(),
            $crate::registry::Param::integer(
                "dupack_threshold",
                "duplicate ACKs that trigger fast retransmit",
            )
            .between(1.0, u32::MAX as f64)
            .default($crate::registry::Scalar::Integer(3))
            .in_section(),
            $crate::registry::Param::integer(
                "header_bytes",
                "IP + TCP header bytes without options added to every segment (40 for IPv4, 60 for \
                 IPv6); SACK blocks add their option bytes to ACKs",
            )
            .unit("bytes")
            .between(20.0, 120.0)
            .default($crate::registry::Scalar::Integer(40))
            .in_section(),
            $crate::registry::Param::choice(
                "profile",
                $crate::transport::tcp::TcpProfile::NAMES,
                "where the defaults of the other settings come from: the RFCs as written (rfc) or \
                 what Linux does (linux: mss 1448 with 52 header bytes, CUBIC with HyStart, \
                 ssthresh from cwnd, PRR, RACK-TLP, Linux's RTO, Linux delayed ACKs with SACK \
                 compression, host jitter of up to 50 us and no send jitter); a setting given \
                 explicitly wins",
            )
            .default($crate::registry::Scalar::Name("rfc"))
            .in_section(),
            $crate::registry::Param::choice(
                "ssthresh_basis",
                $crate::transport::tcp::SsthreshBasis::NAMES,
                "what a fast retransmit's window reduction is computed from: FlightSize without \
                 limited-transmit data (RFC 5681 §3.2), capped at the congestion window as for a \
                 timeout, or the congestion window (Linux)",
            )
            .default($crate::registry::Scalar::Name("flight_size"))
            .in_section(),
            $crate::registry::Param::choice(
                "recovery_window",
                $crate::transport::tcp::RecoveryWindow::NAMES,
                "what may be sent during fast recovery: RFC 6675's pipe rule, or Proportional \
                 Rate Reduction (RFC 6937, slow-start reduction bound)",
            )
            .default($crate::registry::Scalar::Name("rfc6675"))
            .in_section(),
            $crate::registry::Param::bool(
                "rack_tlp",
                "RACK-TLP loss detection (RFC 8985): time-based loss marking, lost \
                 retransmissions, tail loss probes",
            )
            .default($crate::registry::Scalar::Bool(false))
            .in_section(),
            $crate::registry::Param::choice(
                "delayed_ack_style",
                $crate::transport::tcp::DelayedAckStyle::NAMES,
                "how delayed ACKs are timed: RFC 5681 §4.2 (every second full segment or \
                 delayed_ack_timeout) or Linux's (quick-ACK mode at the start and after idle, \
                 adaptive timer of at least 40 ms)",
            )
            .default($crate::registry::Scalar::Name("rfc"))
            .in_section(),
            $crate::registry::Param::bool(
                "sack_compression",
                "Linux's SACK compression: ACKs for out-of-order data are delayed a little (at most \
                 1 ms or RTT/20) and merged; takes effect with delayed_ack, delayed_ack_style = \
                 \"linux\" and sack",
            )
            .default($crate::registry::Scalar::Bool(false))
            .in_section(),
            $crate::registry::Param::choice(
                "rto_formula",
                $crate::transport::tcp::RtoFormula::NAMES,
                "how the retransmission timeout follows from the RTT: max(min_rto, SRTT + \
                 4·RTTVAR) (RFC 6298) or SRTT + max(4·RTTVAR, min_rto) (Linux)",
            )
            .default($crate::registry::Scalar::Name("rfc6298"))
            .in_section(),
            $crate::registry::Param::number(
                "send_jitter",
                "largest random delay before each data packet leaves the sender, in service \
                 times of a full-sized packet (mss + header_bytes) at the slowest link of the \
                 connection's routes, drawn uniformly from the flow's seeded stream; a \
                 connection's packets keep their order. It keeps ties from deciding shares at \
                 drop-tail queues (phase effects, Floyd and Jacobson 1992) and gives seeds \
                 independent replications (0: exact timing)",
            )
            .unit("service times")
            .between(0.0, 100.0)
            .default($crate::registry::Scalar::Number(1.0))
            .in_section(),
            $crate::registry::Param::bool(
                "exact_timing",
                "no host randomness: send_jitter, host_jitter and host_stall_rate default to 0 \
                 (a value given explicitly still applies), for runs that must follow exact \
                 arithmetic",
            )
            .default($crate::registry::Scalar::Bool(false))
            .in_section(),
            $crate::registry::Param::duration(
                "host_jitter",
                "largest per-packet processing delay at each end, drawn uniformly from [0, \
                 host_jitter] from the flow's seeded stream; a connection's packets keep their \
                 order (0: off)",
            )
            .between(0.0, 1.0)
            .default($crate::registry::Scalar::Duration($crate::time::SimTime::ZERO))
            .in_section(),
            $crate::registry::Param::number(
                "host_stall_rate",
                "host stalls per second at each end (Poisson); a packet due during a stall \
                 leaves when it ends (0: off)",
            )
            .unit("per second")
            .at_least(0.0)
            .default($crate::registry::Scalar::Number(0.0))
            .in_section(),
            $crate::registry::Param::duration("host_stall_duration", "how long each host stall lasts")
                .range($crate::registry::Bound::Exclusive(0.0), $crate::registry::Bound::Inclusive(10.0))
                .default($crate::registry::Scalar::Duration($crate::time::SimTime::from_millis(1)))
                .in_section(),
            $crate::registry::Param::choice(
                "on_stop",
                $crate::transport::tcp::StopMode::NAMES,
                "what the flow does at its stop time: send no new data but repair what it sent \
                 until acknowledged (finish), or fall silent at once, retransmissions and timer \
                 included (abort)",
            )
            .default($crate::registry::Scalar::Name("finish")),
        ]
    };
}
pub use tcp_connection_params;

/// The host timing noise of validated TCP-connection parameters (`host_jitter`,
/// `host_stall_rate`, `host_stall_duration`), shared by every source built on them (TCP, MPTCP
/// subflows, MPAT windows).
///
/// `slowest_rate_bps` is the rate of the slowest link on the connection's routes (its data's
/// direction), which sets the service time `send_jitter` counts in; `None` (a flow built in
/// code, without routes) gives no send jitter.
pub fn host_noise(params: &Params, slowest_rate_bps: Option<f64>) -> HostNoiseConfig {
    let packet_bits = 8.0 * (params.size("mss") as f64 + params.integer("header_bytes") as f64);
    let send_jitter = match slowest_rate_bps {
        Some(rate) if rate > 0.0 => {
            SimTime::from_secs_f64(params.number("send_jitter") * packet_bits / rate)
        }
        _ => SimTime::ZERO,
    };
    HostNoiseConfig {
        send_jitter,
        jitter: params.duration("host_jitter"),
        stall_rate: params.number("host_stall_rate"),
        stall_duration: params.duration("host_stall_duration"),
    }
}

/// The connection settings of validated TCP source parameters.
pub fn config(params: &Params) -> TcpConfig {
    TcpConfig {
        mss: params.size("mss") as u32,
        initial_window: params.integer("initial_window") as u32,
        sack: params.bool("sack"),
        delayed_ack: params.bool("delayed_ack"),
        delayed_ack_timeout: params.duration("delayed_ack_timeout"),
        min_rto: params.duration("min_rto"),
        max_rto: params.duration("max_rto"),
        initial_rto: params.duration("initial_rto"),
        receive_buffer: params.size("receive_buffer"),
        dupack_threshold: params.integer("dupack_threshold") as u32,
        header_bytes: params.integer("header_bytes") as u32,
        profile: TcpProfile::from_name(params.choice("profile")).expect("a declared profile"),
        ssthresh_basis: SsthreshBasis::from_name(params.choice("ssthresh_basis"))
            .expect("a declared basis"),
        recovery_window: RecoveryWindow::from_name(params.choice("recovery_window"))
            .expect("a declared recovery window"),
        rack_tlp: params.bool("rack_tlp"),
        delayed_ack_style: DelayedAckStyle::from_name(params.choice("delayed_ack_style"))
            .expect("a declared style"),
        sack_compression: params.bool("sack_compression"),
        rto_formula: RtoFormula::from_name(params.choice("rto_formula"))
            .expect("a declared formula"),
    }
}

/// The `linux` profile's defaults, as (setting, value); the `rfc` profile is the declared
/// defaults. Each is what Linux 6.x does out of the box: `tcp_timestamps` on (12 option bytes:
/// 52 header bytes and an MSS of 1448 in a 1500-byte MTU), CUBIC (`tcp_congestion_control`)
/// with HyStart, ssthresh from cwnd (`tcp_reno_ssthresh`, `cubictcp_recalc_ssthresh`), PRR
/// (`tcp_cwnd_reduction`), RACK-TLP (`tcp_recovery` = 1, `tcp_early_retrans` = 3), delayed
/// ACKs with quick-ACK mode and SACK compression (`tcp_comp_sack_nr` = 44), TCP_RTO_MIN of
/// 200 ms and TCP_RTO_MAX of 120 s; and a processing delay of up to 50 us per packet at each
/// host (no send jitter beside it): the kernel's per-packet host delays, measured on the
/// testbed (docs/linux.md, "Host timing"), and what makes seeds independent replications.
pub fn linux_profile() -> Vec<(&'static str, Value)> {
    vec![
        ("mss", Value::Size(1448)),
        ("header_bytes", Value::Integer(52)),
        ("initial_window", Value::Integer(10)),
        ("min_rto", Value::Duration(SimTime::from_millis(200))),
        ("max_rto", Value::Duration(SimTime::from_secs(120))),
        ("ssthresh_basis", Value::Choice("cwnd")),
        ("recovery_window", Value::Choice("prr")),
        ("rack_tlp", Value::Bool(true)),
        ("delayed_ack", Value::Bool(true)),
        ("delayed_ack_style", Value::Choice("linux")),
        ("sack_compression", Value::Bool(true)),
        ("rto_formula", Value::Choice("linux")),
        ("host_jitter", Value::Duration(SimTime::from_micros(50))),
        ("send_jitter", Value::Number(0.0)),
        (
            "cc",
            Value::Controller(CcSpec::new("cubic", &[]).expect("cubic is registered")),
        ),
    ]
}

/// Replaces the declared defaults of the settings neither the flow nor `[tcp]` gave with the
/// chosen profile's.
/// With `exact_timing`, the settings of host randomness left at their defaults are off.
pub(crate) fn apply_profile(params: &mut Params) {
    let mut defaults = if params.choice("profile") == "linux" {
        linux_profile()
    } else {
        Vec::new()
    };
    if params.bool("exact_timing") {
        defaults.extend([
            ("send_jitter", Value::Number(0.0)),
            ("host_jitter", Value::Duration(SimTime::ZERO)),
            ("host_stall_rate", Value::Number(0.0)),
        ]);
    }
    for (name, value) in defaults {
        let declared = params.iter().any(|(p, _)| p.name == name);
        if declared && params.origin(name) == Origin::Default {
            params.set(name, Some(value));
        }
    }
}

/// The checks that relate settings. A conflict is blamed on the setting the entry itself gave
/// (rather than one it inherited from `[tcp]` or left at its default), the first one when both
/// were given.
pub(crate) fn finish(params: &mut Params) -> Result<(), ParamIssue> {
    apply_profile(params);
    let blame = |a: &'static str, b: &'static str| {
        if params.is_given(a) || !params.is_given(b) {
            a
        } else {
            b
        }
    };
    let config = config(params);
    if config.min_rto > config.max_rto {
        return Err(ParamIssue::at(
            blame("min_rto", "max_rto"),
            format!(
                "min_rto ({}) must not exceed max_rto ({})",
                format_duration(config.min_rto),
                format_duration(config.max_rto)
            ),
        ));
    }
    if config.receive_buffer < u64::from(config.mss) {
        return Err(ParamIssue::at(
            blame("receive_buffer", "mss"),
            format!(
                "receive_buffer ({} bytes) must hold at least one mss ({} bytes)",
                config.receive_buffer, config.mss
            ),
        ));
    }
    Ok(())
}
