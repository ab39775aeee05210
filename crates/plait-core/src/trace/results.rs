//! Result tables, kept as columns so they leave Rust as arrays (one column per metric, one row
//! per flow, link direction or sample), never as one object per event.
//!
//! `docs/results.md` defines every column: its unit, its window and what it counts.

use serde::Serialize;

use super::table::table;

table! {
    /// Per-flow results over [warmup, duration].
    pub struct FlowTable ("flows") {
        name: String,
        /// The aggregate an application flow belongs to (`agg` for `agg.0`, ...); empty for
        /// flows that are not part of one. Application flows come after every flow.
        aggregate_name: String,
        /// "tcp", "cbr" or "onoff".
        kind: String,
        /// Congestion controller ("" for datagram flows).
        cc: String,
        src: String,
        dst: String,
        start_s: f64,
        /// Payload bytes delivered in order to the receiving application, per second.
        goodput_bps: f64,
        /// Bits per second of the flow's data packets that left the sender's access link (headers
        /// and retransmissions included), counted when they reach the far end of the first link
        /// of the forward route: at most that link's rate plus one packet per window.
        throughput_bps: f64,
        bytes_delivered: u64,
        /// Data packets the sender emitted (retransmissions included), counting those the first
        /// link dropped, so `packets_sent` can exceed what `throughput_bps` carried.
        packets_sent: u64,
        retransmissions: u64,
        fast_retransmits: u64,
        timeouts: u64,
        /// Packets of this flow (data or ACK) dropped anywhere.
        drops: u64,
        rtt_samples: u64,
        rtt_mean_s: f64,
        rtt_min_s: f64,
        rtt_p50_s: f64,
        rtt_p95_s: f64,
        rtt_p99_s: f64,
        rtt_max_s: f64,
        /// When a finite transfer was fully acknowledged, from the start of the run, whole run
        /// (NaN if it was not, or is unbounded).
        completion_s: f64,
        /// MPTCP connections (NaN or 0 for other flows): time new data waited for the peer's
        /// data-level window, and time the application waited for send-buffer space.
        rwnd_blocked_s: f64,
        send_buffer_blocked_s: f64,
        /// In-order delivery delay per byte (first transmission to readable at the receiver),
        /// mean and largest, for bytes delivered in the window.
        delivery_delay_mean_s: f64,
        delivery_delay_max_s: f64,
        /// Bytes resent at the data level (reinjections, opportunistic retransmissions) and
        /// redundant copies; the receiver's largest out-of-order queue (whole run).
        reinjected_bytes: u64,
        max_out_of_order_bytes: u64,
        /// TFRC-family flows (NaN for others), at the end of the run: the loss event rate p
        /// and packets lost per loss event j the sender last heard, and its allowed rate X.
        loss_event_rate: f64,
        packets_per_loss_event: f64,
        allowed_rate_bps: f64,
}
}

table! {
    /// Per link-direction results over [warmup, duration].
    pub struct LinkTable ("links") {
        name: String,
        /// "forward" (from -> to as declared) or "reverse".
        direction: String,
        from: String,
        to: String,
        rate_bps: u64,
        /// Fraction of the window the link spent serialising packets: busy ns inside
        /// [warmup, duration] / window ns, so at most 1. Packets cut by an edge of the window
        /// count for their part inside it.
        utilization: f64,
        /// Packets and bytes whose transmission started in the window (a packet cut by an edge
        /// counts whole on the side where it started, so `tx_bytes * 8 / (rate * window)` can
        /// differ from `utilization` by one packet per edge, and exceed 1).
        tx_packets: u64,
        tx_bytes: u64,
        /// Packets dropped by the queue discipline.
        drops: u64,
        /// Packets dropped by the link's loss model.
        loss_drops: u64,
        /// Packets dropped because the link was down (`[[event]]`): arriving while it was
        /// down, or waiting or on the wire when it went down.
        down_drops: u64,
        /// Time averages over the window of the packets and bytes waiting (admitted, not yet
        /// started; the packet being serialised is not counted): the integral over
        /// [warmup, duration] / window, exact at the edges.
        mean_queue_packets: f64,
        mean_queue_bytes: f64,
        /// Largest queue seen over the whole run (packets).
        max_queue_packets: u64,
}
}

table! {
    /// Per-path results over [warmup, duration]: one row per path of each flow that has more
    /// than one (a single-path flow's path is its row in `flows`), so empty until multipath
    /// flows run, but always present.
    pub struct PathTable ("paths") {
        /// The flow (row of `flows`).
        #[index(of = "flows")]
        flow: u32,
        /// The path's index within the flow, from 0.
        path: u64,
        /// Nodes of the forward route, joined by ">".
        route: String,
        /// Nodes of the reverse route (feedback), joined by ">".
        reverse_route: String,
        /// Data packets the flow emitted on this path (retransmissions included).
        packets_sent: u64,
        /// As `flows.throughput_bps`, for the data that left the first link of this path.
        throughput_bps: f64,
        /// Loss-recovery episodes and retransmission timeouts on this path.
        fast_retransmits: u64,
        timeouts: u64,
        /// RTT samples taken on this path, and their mean and minimum (NaN without samples).
        rtt_samples: u64,
        rtt_mean_s: f64,
        rtt_min_s: f64,
        /// MPTCP subflows (0 or NaN for other flows): payload bytes sent (retransmissions and
        /// reinjections included), segments the subflow's TCP resent, new data it carried
        /// first, data-level copies it carried, and its share of the new data.
        bytes_sent: u64,
        retransmissions: u64,
        new_data_bytes: u64,
        reinjected_bytes: u64,
        data_share: f64,
        /// Time average and largest value of the congestion window (while joined).
        cwnd_mean_bytes: f64,
        cwnd_max_bytes: u64,
        /// Window halvings by the receive-buffer optimisation.
        penalisations: u64,
    }
}

table! {
    /// Flow time series, one row per (sample time, flow) when `sample_interval` is set.
    pub struct FlowSeries ("flow_series") {
        time_s: f64,
        /// The flow (row of `flows`).
        #[index(of = "flows")]
        flow: u32,
        /// Congestion window at the sample time (NaN for transports without one).
        cwnd_bytes: f64,
        /// Smoothed RTT at the sample time (NaN for transports that measure none).
        srtt_s: f64,
        /// Goodput over the preceding sampling interval.
        goodput_bps: f64,
        /// TFRC-family flows (NaN for others): allowed rate X, loss event rate p and packets
        /// lost per loss event j at the sample time.
        allowed_rate_bps: f64,
        loss_event_rate: f64,
        packets_per_loss_event: f64,
    }
}

table! {
    /// Link time series, one row per (sample time, link direction).
    pub struct LinkSeries ("link_series") {
        time_s: f64,
        /// The link direction (row of `links`).
        #[index(of = "links")]
        link: u32,
        /// Packets and bytes waiting at the sample time.
        queue_packets: f64,
        queue_bytes: f64,
    }
}

table! {
    /// Path time series, one row per (sample time, path) of each flow with more than one path.
    pub struct PathSeries ("path_series") {
        time_s: f64,
        /// The flow (row of `flows`).
        #[index(of = "flows")]
        flow: u32,
        path: u64,
        cwnd_bytes: f64,
        srtt_s: f64,
        /// Bytes in flight on the path (NaN if not known).
        in_flight_bytes: f64,
        /// The `capacity` scheduler's estimated available path capacity, in segments (NaN for
        /// other schedulers).
        capacity_estimate: f64,
    }
}

table! {
    /// Every decision of the packet scheduler of the MPTCP flows that set `trace_picks`, whole
    /// run, in time order per flow: one row per segment offered to the scheduler.
    pub struct PickTable ("picks") {
        time_s: f64,
        /// The flow (row of `flows`).
        #[index(of = "flows")]
        flow: u32,
        /// The subflow that took the segment (the lowest-numbered one when several took copies);
        /// NaN when the scheduler chose to wait or no chosen subflow could send.
        subflow: f64,
        /// How many subflows took a copy (more than one only for `redundant`), and which, as
        /// a bit mask (bit i: subflow i).
        copies: u64,
        subflow_mask: u64,
        /// Why: `lowest_rtt`, `no_window_space`, `round_robin`, `redundant`, `blest_wait`,
        /// `ecf_wait`, `lowest_linger`, `burst`, `uncongested`, `least_occupied`,
        /// `all_congested` or `backup`.
        reason: String,
        /// The segment's first data sequence number (connection-relative, from 0).
        dsn: u64,
        /// 1 for data sent again at the data level (a reinjection, an opportunistic
        /// retransmission or a redundant copy for a subflow that had not carried it), 0 for
        /// new data.
        reinjection: u64,
    }
}

table! {
    /// Every packet dropped, when `[simulation] trace_drops = true`, whole run, in time order.
    pub struct DropTable ("drops") {
        time_s: f64,
        /// The flow whose packet it was (row of `flows`).
        #[index(of = "flows")]
        flow: u32,
        /// The link direction that dropped it (row of `links`).
        #[index(of = "links")]
        link: u32,
        /// `queue` (the queue discipline), `loss` (the link's loss model) or `link_down`.
        cause: String,
        /// 1 for feedback (an ACK or a rate report) travelling back to the source, 0 for data.
        feedback: u64,
        /// The flow's path the packet was on (0 for single-path flows; a subflow or window).
        path: u64,
    }
}

table! {
    /// Segments refused by the sending hosts' own interface queues (links with `local =
    /// true`), whole run: one row per flow and local link its paths start on (none without
    /// local links).
    pub struct RefusalTable ("refusals") {
        /// The flow whose sender the queue refused (row of `flows`).
        #[index(of = "flows")]
        flow: u32,
        /// The local link direction (row of `links`).
        #[index(of = "links")]
        link: u32,
        /// Segments the queue refused: not sent, the sender entered CWR (a segment refused
        /// again at the next ACK counts again).
        refusals: u64,
    }
}

/// Whether a table has no rows (the refusals are left out of a run's JSON then).
fn no_rows<T: super::table::Table>(t: &T) -> bool {
    t.rows() == 0
}

/// Everything a run produces.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RunResult {
    pub seed: u64,
    pub duration_s: f64,
    pub warmup_s: f64,
    pub flows: FlowTable,
    pub links: LinkTable,
    pub paths: PathTable,
    pub flow_series: FlowSeries,
    pub link_series: LinkSeries,
    pub path_series: PathSeries,
    pub picks: PickTable,
    pub drops: DropTable,
    /// Refusals by local queues; not serialised when empty, so that runs without local links
    /// give the JSON they always gave.
    #[serde(skip_serializing_if = "no_rows")]
    pub refusals: RefusalTable,
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
