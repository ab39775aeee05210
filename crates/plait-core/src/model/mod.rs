//! Closed-form models of the papers and the AIMD fluid simulator.
