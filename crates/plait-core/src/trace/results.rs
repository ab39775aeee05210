//! Result tables, kept as columns so they leave Rust as arrays (one column per metric, one row
//! per flow, link direction or sample), never as one object per event.
//!
//! `docs/results.md` defines every column: its unit, its window and what it counts.

use serde::Serialize;

/// Per-flow results over [warmup, duration].
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FlowTable {
    pub name: Vec<String>,
    /// "tcp", "cbr" or "onoff".
    pub kind: Vec<String>,
    /// Congestion controller ("" for datagram flows).
    pub cc: Vec<String>,
    pub src: Vec<String>,
    pub dst: Vec<String>,
    pub start_s: Vec<f64>,
    /// Payload bytes delivered in order to the receiving application, per second.
    pub goodput_bps: Vec<f64>,
    /// Bits per second of the flow's data packets that left the sender's access link (headers
    /// and retransmissions included), counted when they reach the far end of the first link
    /// of the forward route: at most that link's rate plus one packet per window.
    pub throughput_bps: Vec<f64>,
    pub bytes_delivered: Vec<u64>,
    /// Data packets the sender emitted (retransmissions included), counting those the first
    /// link dropped, so `packets_sent` can exceed what `throughput_bps` carried.
    pub packets_sent: Vec<u64>,
    pub retransmissions: Vec<u64>,
    pub fast_retransmits: Vec<u64>,
    pub timeouts: Vec<u64>,
    /// Packets of this flow (data or ACK) dropped anywhere.
    pub drops: Vec<u64>,
    pub rtt_samples: Vec<u64>,
    pub rtt_mean_s: Vec<f64>,
    pub rtt_min_s: Vec<f64>,
    pub rtt_p50_s: Vec<f64>,
    pub rtt_p95_s: Vec<f64>,
    pub rtt_p99_s: Vec<f64>,
    pub rtt_max_s: Vec<f64>,
    /// When a finite transfer was fully acknowledged, from the start of the run, whole run
    /// (NaN if it was not, or is unbounded).
    pub completion_s: Vec<f64>,
}

/// Per link-direction results over [warmup, duration].
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LinkTable {
    pub name: Vec<String>,
    /// "forward" (from -> to as declared) or "reverse".
    pub direction: Vec<String>,
    pub from: Vec<String>,
    pub to: Vec<String>,
    pub rate_bps: Vec<u64>,
    /// Fraction of the window the link spent serialising packets: busy ns inside
    /// [warmup, duration] / window ns, so at most 1. Packets cut by an edge of the window
    /// count for their part inside it.
    pub utilization: Vec<f64>,
    /// Packets and bytes whose transmission started in the window (a packet cut by an edge
    /// counts whole on the side where it started, so `tx_bytes * 8 / (rate * window)` can
    /// differ from `utilization` by one packet per edge, and exceed 1).
    pub tx_packets: Vec<u64>,
    pub tx_bytes: Vec<u64>,
    /// Packets dropped by the queue discipline.
    pub drops: Vec<u64>,
    /// Packets dropped by the link's loss model.
    pub loss_drops: Vec<u64>,
    /// Time averages over the window of the packets and bytes waiting (admitted, not yet
    /// started; the packet being serialised is not counted): the integral over
    /// [warmup, duration] / window, exact at the edges.
    pub mean_queue_packets: Vec<f64>,
    pub mean_queue_bytes: Vec<f64>,
    /// Largest queue seen over the whole run (packets).
    pub max_queue_packets: Vec<u64>,
}

/// Sampled time series, one row per (time, series). A series is a flow or a link direction;
/// rows name it by index into the per-series columns, so that a row costs 52 bytes and no
/// string. Flow rows fill the flow columns and leave the queue columns NaN; link rows do the
/// opposite.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TimeSeries {
    pub time_s: Vec<f64>,
    /// Index into `series_entity` and `series_name`.
    pub series: Vec<u32>,
    pub cwnd_bytes: Vec<f64>,
    pub srtt_s: Vec<f64>,
    /// Goodput over the preceding sampling interval.
    pub goodput_bps: Vec<f64>,
    pub queue_packets: Vec<f64>,
    pub queue_bytes: Vec<f64>,
    /// Per series: "flow" or "link".
    pub series_entity: Vec<String>,
    /// Per series: the flow name, or "link_name:direction".
    pub series_name: Vec<String>,
}

impl TimeSeries {
    /// The series name of row `i`.
    pub fn name(&self, i: usize) -> &str {
        &self.series_name[self.series[i] as usize]
    }

    /// The entity ("flow" or "link") of row `i`.
    pub fn entity(&self, i: usize) -> &str {
        &self.series_entity[self.series[i] as usize]
    }
}

/// Everything a run produces.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RunResult {
    pub seed: u64,
    pub duration_s: f64,
    pub warmup_s: f64,
    pub flows: FlowTable,
    pub links: LinkTable,
    pub timeseries: TimeSeries,
    /// Events processed.
    pub events: u64,
    /// Data packets (TCP segments and datagrams) that reached their destination, whole run.
    pub delivered_packets: u64,
    /// Jain's fairness index of the flows' goodputs: (sum x)^2 / (n sum x^2); NaN when no
    /// flow had goodput in the window (see [`jain_index`]).
    pub jain_fairness: f64,
}

/// Jain's fairness index (R. Jain, D. Chiu, W. Hawe, DEC-TR-301, 1984):
/// `(sum x)^2 / (n sum x^2)`, from 1/n (one value carries everything) to 1 (all equal).
///
/// NaN when it is undefined: for no values (n = 0) and when every value is zero (0/0). An
/// allocation in which nobody got anything is not "perfectly fair"; reporting 1 there made a
/// run in which no flow delivered a byte look ideal.
pub fn jain_index(values: &[f64]) -> f64 {
    let n = values.len() as f64;
    let sum: f64 = values.iter().sum();
    let sum_sq: f64 = values.iter().map(|x| x * x).sum();
    if values.is_empty() || sum_sq == 0.0 {
        f64::NAN
    } else {
        sum * sum / (n * sum_sq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_known_values() {
        assert_eq!(jain_index(&[1.0, 1.0, 1.0, 1.0]), 1.0);
        assert_eq!(jain_index(&[1.0, 0.0, 0.0, 0.0]), 0.25);
        // (1+2+3)^2 / (3 * 14) = 36/42
        assert!((jain_index(&[1.0, 2.0, 3.0]) - 36.0 / 42.0).abs() < 1e-15);
        // Undefined, not perfectly fair: no flows, or no flow got anything.
        assert!(jain_index(&[]).is_nan());
        assert!(jain_index(&[0.0, 0.0, 0.0]).is_nan());
        assert_eq!(jain_index(&[0.0, 5.0]), 0.5);
    }
}
