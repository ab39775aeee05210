//! A TCP connection's settings ([`TcpConfig`]) and the named choices among them (a scenario's
//! string values: [`TcpProfile`], [`RtoFormula`], [`SsthreshBasis`], [`RecoveryWindow`],
//! [`DelayedAckStyle`]). Plain data: the TCP endpoints, the congestion controllers (CUBIC's
//! defaults follow the profile) and the RTT estimator read it, and it imports none of them.

use crate::packet::TCP_IP_HEADER_BYTES;
use crate::time::SimTime;

/// Per-connection TCP settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpConfig {
    /// Maximum segment size (payload bytes).
    pub mss: u32,
    /// Initial window in segments (RFC 6928 allows 10).
    pub initial_window: u32,
    /// SACK (RFC 2018) with RFC 6675 loss recovery; when off, NewReno (RFC 6582).
    pub sack: bool,
    /// Delayed ACKs at the receiver (RFC 5681 §4.2: ACK at least every second full segment,
    /// or when `delayed_ack_timeout` expires; immediately for out-of-order data).
    pub delayed_ack: bool,
    pub delayed_ack_timeout: SimTime,
    /// RFC 6298 §2.4 says 1 s; Linux and most simulators use 200 ms.
    pub min_rto: SimTime,
    pub max_rto: SimTime,
    /// RTO before the first RTT sample (RFC 6298 §2.1: 1 s).
    pub initial_rto: SimTime,
    /// Receive buffer in bytes: the advertised window is what is left of it.
    pub receive_buffer: u64,
    /// Duplicate ACKs that trigger fast retransmit (RFC 5681 §3.2; RFC 6675 DupThresh).
    pub dupack_threshold: u32,
    /// Header bytes added to every segment: IP + TCP without options (40, RFC 791 and
    /// RFC 9293); SACK blocks add their option bytes to ACKs.
    pub header_bytes: u32,
    /// The profile the defaults of the other fields came from (see [`TcpProfile`]).
    pub profile: TcpProfile,
    /// What the window reduction on a fast retransmit is computed from.
    pub ssthresh_basis: SsthreshBasis,
    /// How much may be sent during fast recovery.
    pub recovery_window: RecoveryWindow,
    /// RACK-TLP loss detection (RFC 8985) beside the duplicate-ACK / SACK rules.
    pub rack_tlp: bool,
    /// How the receiver delays ACKs when `delayed_ack` is on.
    pub delayed_ack_style: DelayedAckStyle,
    /// Linux's SACK compression: ACKs for out-of-order data are delayed a little and merged.
    pub sack_compression: bool,
    /// How the retransmission timeout is computed from SRTT and RTTVAR.
    pub rto_formula: RtoFormula,
}

/// Declares a `Copy` enum of named choices (a scenario's string values) with `NAMES`, in
/// declaration order, and `from_name`; the variant marked `#[default]` is the default.
macro_rules! named_choice {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($(#[$vmeta:meta])* $variant:ident = $text:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        $vis enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// The scenario names, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            /// The choice a scenario calls `name`.
            pub fn from_name(name: &str) -> Option<$name> {
                match name {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }
    };
}

named_choice! {
    /// How the retransmission timeout follows from the RTT estimates (see [`crate::transport::rtt`]).
    pub enum RtoFormula {
        /// RFC 6298 §2: `max(min_rto, SRTT + 4·RTTVAR)`.
        #[default]
        Rfc6298 = "rfc6298",
        /// Linux: `SRTT + max(4·RTTVAR, min_rto)`.
        Linux = "linux",
    }
}

named_choice! {
    /// A named set of defaults for the TCP settings; every field stays overridable.
    pub enum TcpProfile {
        /// The RFCs as written: RFC 5681 ssthresh from FlightSize, RFC 6675 recovery, RFC 5681
        /// delayed ACKs when enabled.
        #[default]
        Rfc = "rfc",
        /// What Linux does by default (see `docs/linux.md`).
        Linux = "linux",
    }
}

named_choice! {
    /// What `ssthresh` is computed from when fast recovery starts.
    pub enum SsthreshBasis {
        /// RFC 5681 §3.2 step 2: FlightSize, without the data sent by limited transmit,
        /// capped at the congestion window (`TcpCore::ssthresh_basis`).
        #[default]
        FlightSize = "flight_size",
        /// Linux (`tcp_reno_ssthresh`, `bictcp_recalc_ssthresh`): the congestion window.
        Cwnd = "cwnd",
    }
}

named_choice! {
    /// The sending limit during fast recovery.
    pub enum RecoveryWindow {
        /// RFC 6675 §5: send while `cwnd - pipe >= 1 SMSS` (NewReno's inflation without SACK).
        #[default]
        Rfc6675 = "rfc6675",
        /// Proportional Rate Reduction (RFC 6937), with slow-start reduction bound (Linux).
        Prr = "prr",
    }
}

named_choice! {
    /// How a receiver with delayed ACKs decides when to acknowledge.
    pub enum DelayedAckStyle {
        /// RFC 5681 §4.2 / RFC 1122: every second full segment or `delayed_ack_timeout`.
        #[default]
        Rfc = "rfc",
        /// Linux's: quick-ACK mode at the start and after idle, adaptive timer of at least 40 ms.
        Linux = "linux",
    }
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: 1460,
            initial_window: 10,
            sack: true,
            delayed_ack: false,
            delayed_ack_timeout: SimTime::from_millis(40),
            min_rto: SimTime::from_millis(200),
            max_rto: SimTime::from_secs(60),
            initial_rto: SimTime::from_secs(1),
            receive_buffer: 64 << 20,
            dupack_threshold: 3,
            header_bytes: TCP_IP_HEADER_BYTES,
            profile: TcpProfile::Rfc,
            ssthresh_basis: SsthreshBasis::FlightSize,
            recovery_window: RecoveryWindow::Rfc6675,
            rack_tlp: false,
            delayed_ack_style: DelayedAckStyle::Rfc,
            sack_compression: false,
            rto_formula: RtoFormula::Rfc6298,
        }
    }
}
