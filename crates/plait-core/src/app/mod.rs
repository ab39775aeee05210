//! What flows send: the pieces the protocols (`crate::protocol`) are built from. Datagram
//! sources (constant bit rate, on/off) generate packets themselves and are dispatched through
//! the [`DatagramSource`] enum; [`tcp`] holds a TCP connection's settings (the parameters a
//! `[tcp]` section may give, shared by TCP, MPTCP and MPAT) and [`tfrc`] those of the TFRC
//! family, with the functions that read them.

pub mod cbr;
pub mod onoff;
pub mod tcp;
pub mod tfrc;

use crate::registry::{Param, Scalar};
use crate::time::SimTime;

pub use cbr::Cbr;
pub use onoff::OnOff;

/// Largest packet a source may send, and largest segment (the IPv4 total-length field).
pub use crate::packet::MAX_PACKET_BYTES;

/// The packet size of the datagram sources, shared by their declarations.
pub const PACKET_SIZE: Param = Param::size("packet_size", "size of each packet on the wire")
    .between(1.0, MAX_PACKET_BYTES as f64)
    .default(Scalar::Size(1000));

/// What a datagram source wants after a wake-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wake {
    /// Send one datagram now.
    pub send: bool,
    /// Next wake-up.
    pub next: SimTime,
}

/// A source that generates datagrams on its own schedule.
pub trait Datagrams {
    /// Size of every datagram on the wire.
    fn packet_bytes(&self) -> u32;
    /// Called at the source's start time and at every wake-up it asked for.
    fn wake(&mut self, now: SimTime) -> Wake;
}

/// Generates, from one line `module::Type` per datagram source, the [`DatagramSource`] enum
/// with one variant per source and its static dispatch.
macro_rules! datagram_sources {
    ($($module:ident :: $variant:ident),+ $(,)?) => {
        /// A datagram source (enum dispatch).
        #[derive(Clone, Debug)]
        pub enum DatagramSource {
            $($variant($module::$variant),)+
        }

        $crate::dispatch::enum_dispatch! {
            impl DatagramSource [$($variant),+] {
                pub fn packet_bytes(&self) -> u32;
                /// Called at the source's start time and at every wake-up it asked for.
                pub fn wake(&mut self, now: SimTime) -> Wake;
            }
        }
    };
}

// The datagram sources: one line each.
datagram_sources! {
    cbr::Cbr,
    onoff::OnOff,
}
