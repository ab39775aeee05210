//! Packet captures of emulated links, as classic libpcap files (the format of
//! <https://www.tcpdump.org/manpages/pcap-savefile.5.html>, nanosecond variant, magic
//! 0xa1b23c4d) with link type 101 (LINKTYPE_RAW: the packet is its IPv4 header onwards, which
//! is what the TUN devices carry). Wireshark and tcpdump read them.

#![forbid(unsafe_code)]

use std::io::{self, Write};

/// LINKTYPE_RAW (<https://www.tcpdump.org/linktypes.html>).
pub const LINKTYPE_RAW: u32 = 101;
/// Longest packet kept whole.
pub const SNAPLEN: u32 = 65535;

/// Writes the 24-byte file header.
pub fn write_header(out: &mut impl Write) -> io::Result<()> {
    out.write_all(&0xa1b2_3c4du32.to_le_bytes())?; // nanosecond timestamps
    out.write_all(&2u16.to_le_bytes())?;
    out.write_all(&4u16.to_le_bytes())?;
    out.write_all(&0i32.to_le_bytes())?; // thiszone
    out.write_all(&0u32.to_le_bytes())?; // sigfigs
    out.write_all(&SNAPLEN.to_le_bytes())?;
    out.write_all(&LINKTYPE_RAW.to_le_bytes())
}

/// Writes one packet seen at `time_ns` (ns since the Unix epoch).
pub fn write_packet(out: &mut impl Write, time_ns: u64, packet: &[u8]) -> io::Result<()> {
    let kept = packet.len().min(SNAPLEN as usize);
    out.write_all(&((time_ns / 1_000_000_000) as u32).to_le_bytes())?;
    out.write_all(&((time_ns % 1_000_000_000) as u32).to_le_bytes())?;
    out.write_all(&(kept as u32).to_le_bytes())?;
    out.write_all(&(packet.len() as u32).to_le_bytes())?;
    out.write_all(&packet[..kept])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_record_bytes() {
        let mut out = Vec::new();
        write_header(&mut out).unwrap();
        assert_eq!(out.len(), 24);
        assert_eq!(&out[..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
        assert_eq!(&out[20..24], &[101, 0, 0, 0]);
        write_packet(&mut out, 5_000_000_123, &[0x45, 1, 2]).unwrap();
        assert_eq!(
            &out[24..],
            &[5, 0, 0, 0, 123, 0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0, 0x45, 1, 2]
        );
    }
}
