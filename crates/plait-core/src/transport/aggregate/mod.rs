//! Aggregates: several application flows that share congestion state. [`mpat`]: MPAT, N
//! application flows over N AIMD windows shared out by weight (Singh, Pradhan and Francis,
//! ICNP 2004).

pub mod mpat;

pub use mpat::{Mapping, MpatConfig, MpatFlow};
