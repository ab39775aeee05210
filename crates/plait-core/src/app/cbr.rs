//! Constant-bit-rate datagram source: one packet every `8 · packet_bytes / rate` seconds,
//! the fractional nanoseconds carried so that the long-run rate is exact.

use super::{Datagrams, Wake};
use crate::time::{Rate, SimTime};

#[derive(Clone, Debug)]
pub struct Cbr {
    pub rate: Rate,
    /// Size on the wire.
    pub packet_bytes: u32,
    carry: u64,
}

impl Cbr {
    pub fn new(rate: Rate, packet_bytes: u32) -> Self {
        Cbr {
            rate,
            packet_bytes,
            carry: 0,
        }
    }
}

impl Datagrams for Cbr {
    fn packet_bytes(&self) -> u32 {
        self.packet_bytes
    }

    fn wake(&mut self, now: SimTime) -> Wake {
        let gap = self
            .rate
            .tx_time_carry(self.packet_bytes as u64, &mut self.carry);
        Wake {
            send: true,
            next: now.saturating_add(gap),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_long_run_rate() {
        // 1000 B at 3 Mb/s: 8/3 ms per packet; 3 packets in exactly 8 ms.
        let mut s = Cbr::new(Rate(3_000_000), 1000);
        let mut t = SimTime::ZERO;
        for _ in 0..3 {
            let w = s.wake(t);
            assert!(w.send);
            t = w.next;
        }
        assert_eq!(t, SimTime::from_millis(8));
    }
}
