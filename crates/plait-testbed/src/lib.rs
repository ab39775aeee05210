//! plait's testbed: a userspace link emulator that carries real kernel TCP between network
//! namespaces, and the small traffic programs that drive it.
//!
//! - [`link`]: the sans-IO core. Each link direction is an exact FIFO server at the link's
//!   rate (virtual clock) followed by its propagation delay, with plait-core's drop-tail queue
//!   and loss models; it never reads a clock, the binary feeds it `now` and packets.
//! - [`lateness`]: how late the binary actually wrote each packet against its ideal time.
//! - [`spin`]: how much of its CPU the emulator may spend spinning before departures.
//! - [`pcap`]: captures of what crossed a link, as libpcap files.
//! - [`config`]: the JSON file `plait testbed` writes for the emulator.
//! - [`sys`]: the few system calls (TUN, setns, scheduling, TCP_INFO), the only unsafe code.
//!
//! See docs/testbed.md.

pub mod config;
pub mod lateness;
pub mod link;
pub mod pcap;
pub mod spin;
pub mod sys;
