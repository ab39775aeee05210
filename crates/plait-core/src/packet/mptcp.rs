//! The header of an MPTCP subflow's acknowledgement (RFC 8684 §3.3): the TCP ACK and the DSS
//! option's DATA_ACK. Data segments travel as TCP segments (`packet::tcp`).

use super::tcp::AckSegment;

/// A subflow's acknowledgement with the DSS option's DATA_ACK. The TCP window field (`rwnd`)
/// is the connection-level window, relative to the DATA_ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MptcpAck {
    pub ack: AckSegment,
    pub data_ack: u64,
}
