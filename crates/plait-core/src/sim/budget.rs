//! How much memory a run will need, estimated from the scenario before anything is built, so
//! that a typo (`sample_interval = "1ns"`, `count = 1000000`) is refused with a message
//! instead of exhausting the machine.
//!
//! The estimate counts what grows with the scenario: per-flow state and result rows, per link
//! direction state, and the time-series rows (one per flow and per link direction at every
//! sample). The per-item costs are measured (peak resident memory of `plait.run` with 10^5 and
//! 10^6 TCP flows, and with 1.6 * 10^7 time-series rows, divided by the count: about 2.7-7.2
//! KiB per flow and 148 bytes per row) and include the Python tables built from the results;
//! they are rounded up. Packets in flight and queues are not counted: they are bounded by the
//! queue limits and windows, not by the scenario's size.

use crate::scenario::Scenario;

/// Simulator state and result row of one flow (TCP sender and receiver, RTT histogram, tables).
pub const BYTES_PER_FLOW: u64 = 8 << 10;
/// One link direction: queue, pipeline, counters and result row.
pub const BYTES_PER_LINK_DIRECTION: u64 = 4 << 10;
/// One time-series row, from the Rust columns to the pandas table.
pub const BYTES_PER_SAMPLE_ROW: u64 = 160;

/// The estimated memory of a run, with what it is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryEstimate {
    pub flows: u64,
    pub link_directions: u64,
    /// Sampling instants over the run.
    pub samples: u64,
    /// Time-series rows: `samples * (flows + link_directions)`.
    pub sample_rows: u64,
    /// Total, saturating at `u64::MAX`.
    pub bytes: u64,
}

impl MemoryEstimate {
    pub fn of(scenario: &Scenario) -> Self {
        let flows = scenario.flows.len() as u64;
        let link_directions: u64 = scenario
            .links
            .iter()
            .map(|l| if l.duplex { 2 } else { 1 })
            .sum();
        // Samples are taken at dt, 2 dt, ... strictly before the end of the run.
        let samples = match scenario.simulation.sample_interval {
            Some(dt) if dt.as_nanos() > 0 => {
                scenario.simulation.duration.as_nanos().saturating_sub(1) / dt.as_nanos()
            }
            _ => 0,
        };
        let sample_rows = samples.saturating_mul(flows + link_directions);
        let bytes = flows
            .saturating_mul(BYTES_PER_FLOW)
            .saturating_add(link_directions.saturating_mul(BYTES_PER_LINK_DIRECTION))
            .saturating_add(sample_rows.saturating_mul(BYTES_PER_SAMPLE_ROW));
        MemoryEstimate {
            flows,
            link_directions,
            samples,
            sample_rows,
            bytes,
        }
    }

    /// `None` when the estimate is within `limit_bytes`; otherwise a one-line explanation
    /// naming what makes the run large and how to allow it.
    pub fn check(&self, limit_bytes: u64) -> Option<String> {
        if self.bytes <= limit_bytes {
            return None;
        }
        let mut parts = Vec::new();
        if self.sample_rows > 0 {
            parts.push(format!(
                "{} time-series rows ({} samples x {} series; see simulation.sample_interval)",
                self.sample_rows,
                self.samples,
                self.flows + self.link_directions
            ));
        }
        parts.push(format!("{} flows", self.flows));
        parts.push(format!("{} link directions", self.link_directions));
        Some(format!(
            "this run would need about {} of memory ({}), more than the limit of {}; \
             raise the limit with --max-memory (max_memory= in Python) if that is intended",
            human_bytes(self.bytes),
            parts.join(", "),
            human_bytes(limit_bytes)
        ))
    }
}

/// `1536` -> `1.5 KiB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(extra_sim: &str, count: u32) -> Scenario {
        let text = format!(
            "[simulation]\nduration = \"10s\"\n{extra_sim}\n\
             [[link]]\nname = \"l\"\nfrom = \"a\"\nto = \"b\"\nrate = \"10Mbps\"\ndelay = \"1ms\"\n\
             [[link]]\nname = \"s\"\nfrom = \"b\"\nto = \"c\"\nrate = \"10Mbps\"\ndelay = \"1ms\"\nduplex = false\n\
             [[flow]]\nname = \"f\"\nkind = \"tcp\"\nsrc = \"a\"\ndst = \"b\"\ncount = {count}\n"
        );
        Scenario::from_toml_str(&text, "t.toml", &[]).unwrap()
    }

    #[test]
    fn counts_flows_directions_and_sample_rows() {
        let e = MemoryEstimate::of(&scenario("sample_interval = \"1s\"", 3));
        assert_eq!(e.flows, 3);
        assert_eq!(e.link_directions, 3);
        // Samples at 1 s .. 9 s: the one at 10 s is the end of the run.
        assert_eq!(e.samples, 9);
        assert_eq!(e.sample_rows, 9 * 6);
        assert_eq!(
            e.bytes,
            3 * BYTES_PER_FLOW + 3 * BYTES_PER_LINK_DIRECTION + 54 * BYTES_PER_SAMPLE_ROW
        );
        assert_eq!(e.check(e.bytes), None);
    }

    #[test]
    fn one_nanosecond_sampling_is_refused_with_its_cause() {
        let e = MemoryEstimate::of(&scenario("sample_interval = \"1ns\"", 1));
        assert_eq!(e.samples, 9_999_999_999);
        let msg = e.check(4 << 30).unwrap();
        assert!(msg.contains("39999999996 time-series rows"), "{msg}");
        assert!(msg.contains("limit of 4.0 GiB"), "{msg}");
        assert!(msg.contains("--max-memory"), "{msg}");
    }

    #[test]
    fn no_sampling_no_rows() {
        let e = MemoryEstimate::of(&scenario("", 2));
        assert_eq!((e.samples, e.sample_rows), (0, 0));
    }

    #[test]
    fn human_units() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(4 << 30), "4.0 GiB");
        assert_eq!(human_bytes(u64::MAX), "16.0 EiB");
    }
}
