//! Transports: sans-IO protocol state machines and their congestion controllers.

pub mod cc;
pub mod rtt;
pub mod tcp;
