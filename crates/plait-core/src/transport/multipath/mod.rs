//! Multipath TCP (RFC 8684): a connection of several TCP subflows, its packet schedulers and
//! its coupled congestion controllers.
//!
//! - [`connection`]: [`MptcpFlow`], the connection as one [`crate::transport::Transport`];
//! - [`data_receiver`]: the connection-level receive buffer (data-level reassembly,
//!   head-of-line blocking, the advertised data-level window);
//! - [`scheduler`]: which subflow carries the next segment (one scheduler per file);
//! - [`coupled`]: congestion controllers that see every subflow (one per file).

pub mod connection;
pub mod coupled;
pub mod data_receiver;
pub mod scheduler;

pub use crate::packet::MptcpAck;
pub use connection::{MptcpConfig, MptcpFlow, SubflowConfig};
