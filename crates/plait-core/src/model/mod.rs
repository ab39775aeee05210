//! Closed-form models of the papers and the AIMD fluid simulator.

pub mod aimd;
pub mod altman;
pub mod fluid;
pub mod mpfast;
pub mod multfrc;
pub mod pftk;
pub mod tfrc;
