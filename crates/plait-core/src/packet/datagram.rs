//! The header of a UDP datagram, as the datagram sources (`app::datagram`) send it.

/// IPv4 + UDP header bytes (RFC 791, RFC 768).
pub const UDP_IP_HEADER_BYTES: u32 = 28;

/// A datagram's header: its sequence number in the flow and its payload length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DatagramHeader {
    pub seq: u64,
    /// Payload bytes (the packet size minus the IP and UDP headers).
    pub len: u32,
}
