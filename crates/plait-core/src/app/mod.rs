//! Traffic sources. Bulk TCP transfers are a TCP sender with a (finite or unbounded) amount of
//! application data; datagram sources (constant bit rate, on/off) live here.

pub mod cbr;
pub mod datagram;
pub mod onoff;

use crate::time::SimTime;

pub use cbr::Cbr;
pub use datagram::DatagramFlow;
pub use onoff::OnOff;

/// What a datagram source wants after a wake-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wake {
    /// Send one datagram now.
    pub send: bool,
    /// Next wake-up.
    pub next: SimTime,
}

/// A datagram source (enum dispatch).
#[derive(Clone, Debug)]
pub enum DatagramSource {
    Cbr(Cbr),
    OnOff(OnOff),
}

impl DatagramSource {
    pub fn packet_bytes(&self) -> u32 {
        match self {
            DatagramSource::Cbr(s) => s.packet_bytes,
            DatagramSource::OnOff(s) => s.packet_bytes,
        }
    }

    /// Called at the source's start time and at every wake-up it asked for.
    pub fn wake(&mut self, now: SimTime) -> Wake {
        match self {
            DatagramSource::Cbr(s) => s.wake(now),
            DatagramSource::OnOff(s) => s.wake(now),
        }
    }
}
