//! Random Early Detection (RED): S. Floyd and V. Jacobson, "Random Early Detection Gateways
//! for Congestion Avoidance", IEEE/ACM Transactions on Networking 1(4), 1993, with the
//! behaviour of ns-2's `queue/red.cc` (`REDQueue::enque`, `estimator`, `calculate_p_new`,
//! `modify_p`, ns-2.35) so that results can be compared with ns-2 runs.
//!
//! On every arrival, before the packet is queued:
//!
//! 1. If the queue has been idle, the average decays as if `m` packets of `mean_packet_bytes`
//!    had arrived to the empty queue, `m = floor(idle_time / (8 mean_packet_bytes / link_rate))`:
//!    `avg <- (1 - w_q)^m avg` (Floyd & Jacobson §4; ns-2 `m = int(ptc_ * (now - idletime_))`).
//! 2. `avg <- (1 - w_q) avg + w_q q`, with `q` the instantaneous queue (packets, or bytes in byte
//!    mode) without the arrival.
//! 3. `count` (arrivals since the last drop) is incremented. If `avg >= min_th` and `q > 1`:
//!    - forced drop if `avg >= max_th` (or `avg >= 2 max_th` with `gentle`);
//!    - otherwise, on the first such arrival after a period below `min_th`, `count <- 1` and
//!      no drop (ns-2's `old_` flag);
//!    - otherwise an early drop with probability `p_a`, from
//!      `p_b = max_p (avg - min_th) / (max_th - min_th)` (or with `gentle`, above `max_th`,
//!      `p_b = max_p + (1 - max_p) (avg - max_th) / max_th`), spread out by `count`:
//!      without `wait`, `p_a = p_b / (1 - count p_b)` (1 once `count p_b >= 1`), which makes
//!      the number of arrivals from one drop to the next uniform rather than geometric
//!      (Floyd & Jacobson §7); with `wait` (ns-2 `wait_`), `p_a = 0` while `count p_b < 1`,
//!      then `p_a = p_b / (2 - count p_b)`, and 1 once `count p_b >= 2`, so drops are never
//!      closer than `1/p_b` arrivals. As in ns-2, `count` already includes the arrival being
//!      judged, so with a constant `p_b = 1/k` the spacing is uniform on `1 ..= k - 1` without
//!      `wait` and on `k ..= 2k - 1` with it.
//!
//!    Otherwise `count` keeps growing but the `old_` flag is cleared.
//! 4. Byte mode (ns-2 `bytes_` together with `queue_in_bytes_`): `avg`, `q` and the thresholds
//!    are in bytes, `count` is read as `floor(count_bytes / mean_packet_bytes)`, and a `p_a`
//!    below 1 is scaled by `bytes / mean_packet_bytes` so large packets are dropped more often.
//! 5. If the physical buffer ([`Limit`]) cannot hold the arrival, it is a forced drop. Forced
//!    and early drops reset `count` to 0.
//!
//! As with ns-2's default `drop_tail_ true`, the victim of every drop is the arrival.
//! Deliberate differences from ns-2: forced drops above the thresholds are always applied (ns-2.35's
//! `use_mark_p_` default turns them into probabilistic drops, an ECN-marking refinement we do
//! not model); the uniform draw drops when `u < p_a` with `u` in `[0, 1)`, so `p_a = 0` never
//! drops and `p_a = 1` always does; a byte limit drops an arrival that would overflow it
//! (ns-2 compares the queue before the arrival with `limit * mean_pktsize`).
//!
//! Idle periods: the queue becomes idle when the link has finished sending its last packet.
//! The link is expected to dequeue a packet when it starts serialising it, so when `dequeue`
//! empties the queue the idle period starts one transmission time of that packet later (ns-2
//! sets `idletime_` when the link, free again, finds `deque()` empty). An arrival while the last
//! packet is still on the wire sees no decay.

use std::collections::VecDeque;

use rand::Rng;

use super::{limit_of, Limit, QueueDisc, QueueItem, QueueKind, RedSpec};
use crate::packet::MAX_PACKET_BYTES;
use crate::registry::{AlgorithmSpec, Bound, Origin, Param, ParamIssue, Params, Scalar, Value};
use crate::rng::SimRng;
use crate::time::{Rate, SimTime};
use crate::units::format_number;

/// The registry declaration of RED. The defaults are the classic ns-2 settings (Floyd's
/// recommended values, ns-2 `tcl/lib/ns-default.tcl` before its automatic configuration):
/// `thresh_ 5`, `maxthresh_ 15`, `linterm_ 10` (max_p = 1/10), `q_weight_ 0.002`, `gentle_
/// true` (ns-2's default since April 2001), `wait_ true`, `mean_pktsize_ 500`, packet mode
/// (`bytes_ false`, `queue_in_bytes_ false`, ns-2's default until October 2004), and a physical
/// limit of 50 packets (`Queue set limit_ 50`). Later ns-2 releases derive the thresholds and
/// weight from the link (`thresh_ 0`, `q_weight_ -1`); we keep fixed values so a scenario means
/// the same thing on every link.
pub const SPEC: AlgorithmSpec<QueueKind> = AlgorithmSpec {
    name: "red",
    summary: "Random Early Detection (Floyd & Jacobson 1993), ns-2 semantics",
    params: &[
        Param::number_or_size("min_th", "lower threshold on the average queue")
            .unit("packets, or bytes in byte mode")
            .default(Scalar::Number(5.0))
            .at_least(0.0),
        Param::number_or_size(
            "max_th",
            "upper threshold; above min_th and, when the limit is in the same unit, at most the \
             limit",
        )
        .unit("packets, or bytes in byte mode")
        .default(Scalar::Number(15.0))
        .at_least(0.0),
        Param::number("max_p", "drop probability at max_th")
            .default(Scalar::Number(0.1))
            .range(Bound::Exclusive(0.0), Bound::Inclusive(1.0)),
        Param::number("w_q", "weight of the average-queue EWMA")
            .default(Scalar::Number(0.002))
            .range(Bound::Exclusive(0.0), Bound::Inclusive(1.0)),
        Param::bool(
            "gentle",
            "ramp the drop probability from max_p to 1 between max_th and 2 max_th",
        )
        .default(Scalar::Bool(true)),
        Param::bool("wait", "keep drops spaced out (ns-2 wait_)").default(Scalar::Bool(true)),
        Param::choice(
            "mode",
            &["packets", "bytes"],
            "bytes: thresholds in bytes (a size is accepted), drop probability scaled by packet \
             size",
        )
        .default(Scalar::Name("packets")),
        Param::size(
            "mean_packet_size",
            "mean packet size, for byte mode and the idle-period decay",
        )
        .between(1.0, MAX_PACKET_BYTES as f64)
        .default(Scalar::Size(500)),
        Param::integer("packets", "physical buffer limit in packets")
            .unit("packets")
            .at_least(1.0)
            .default(Scalar::Integer(50)),
        Param::size(
            "bytes",
            "physical buffer limit in bytes, instead of packets",
        )
        .at_least(1.0)
        .unset("the limit is in packets"),
    ],
    finish: Some(finish),
    build: |params, link| Red::new(&RedSpec::from(params), link.rate).into(),
};

/// The checks that relate RED's parameters, and the thresholds' defaults in byte mode.
fn finish(params: &mut Params) -> Result<(), ParamIssue> {
    let byte_mode = params.choice("mode") == "bytes";
    for key in ["min_th", "max_th"] {
        if !byte_mode && matches!(params.get(key), Some(Value::Size(_))) {
            return Err(ParamIssue::at(
                key,
                "a size is only accepted with mode = \"bytes\" (in packet mode the thresholds \
                 are numbers of packets)",
            ));
        }
        // Left out in byte mode, the packet defaults are scaled by the mean packet size, as
        // ns-2 does for a queue measured in bytes.
        if byte_mode && params.origin(key) == Origin::Default {
            let bytes = params.number(key) * params.size("mean_packet_size") as f64;
            params.set(key, Some(Value::Number(bytes)));
        }
    }
    let (min_th, max_th) = (
        params.number_or_size("min_th"),
        params.number_or_size("max_th"),
    );
    if min_th >= max_th {
        let key = if params.is_given("max_th") {
            "max_th"
        } else {
            "min_th"
        };
        return Err(ParamIssue::at(
            key,
            format!(
                "min_th ({}) must be less than max_th ({})",
                format_number(min_th),
                format_number(max_th)
            ),
        ));
    }
    let limit = limit_of(params)?.expect("packets has a default");
    let (capacity, unit) = match limit {
        Limit::Packets(n) => (n, "packets"),
        Limit::Bytes(n) => (n, "bytes"),
    };
    if matches!(limit, Limit::Bytes(_)) == byte_mode && max_th > capacity as f64 {
        let key = if params.is_given("max_th") {
            "max_th"
        } else {
            unit
        };
        return Err(ParamIssue::at(
            key,
            format!(
                "max_th ({}) exceeds the buffer limit ({capacity} {unit})",
                format_number(max_th)
            ),
        ));
    }
    Ok(())
}

impl From<&Params> for RedSpec {
    /// The RED parameters of validated declaration values ([`SPEC`]).
    fn from(params: &Params) -> Self {
        RedSpec {
            min_th: params.number_or_size("min_th"),
            max_th: params.number_or_size("max_th"),
            max_p: params.number("max_p"),
            w_q: params.number("w_q"),
            gentle: params.bool("gentle"),
            wait: params.bool("wait"),
            byte_mode: params.choice("mode") == "bytes",
            mean_packet_bytes: params.size("mean_packet_size") as u32,
            limit: match params.opt_size("bytes") {
                Some(bytes) => Limit::Bytes(bytes),
                None => Limit::Packets(params.integer("packets")),
            },
        }
    }
}

/// A RED queue.
#[derive(Clone, Debug)]
pub struct Red {
    spec: RedSpec,
    /// `mean_packet_bytes`, at least 1 (it divides).
    mean_packet_bytes: u64,
    /// `max_th - min_th`, or 1 if the thresholds coincide (as ns-2 does, to avoid 0/0).
    threshold_span: f64,
    link_rate: Rate,
    items: VecDeque<QueueItem>,
    queued_bytes: u64,
    /// Average queue, packets or bytes.
    avg: f64,
    /// Arrivals since the last drop (ns-2 `count`).
    count: u64,
    /// Bytes of those arrivals (ns-2 `count_bytes`).
    count_bytes: u64,
    /// Whether the previous arrival already saw `avg >= min_th` with a non-trivial queue
    /// (ns-2 `old`).
    above_min_th: bool,
    /// When the current idle period started; `None` while the link is busy.
    idle_since: Option<SimTime>,
}

impl Red {
    /// A RED queue for a link of rate `link_rate` (used to convert idle time into packet times).
    pub fn new(spec: &RedSpec, link_rate: Rate) -> Self {
        let span = spec.max_th - spec.min_th;
        let initial_capacity = match spec.limit {
            Limit::Packets(n) => n.min(1024) as usize,
            Limit::Bytes(_) => 0,
        };
        Red {
            spec: *spec,
            mean_packet_bytes: u64::from(spec.mean_packet_bytes.max(1)),
            threshold_span: if span == 0.0 { 1.0 } else { span },
            link_rate,
            items: VecDeque::with_capacity(initial_capacity),
            queued_bytes: 0,
            avg: 0.0,
            count: 0,
            count_bytes: 0,
            above_min_th: false,
            // ns-2 starts idle at time zero.
            idle_since: Some(SimTime::ZERO),
        }
    }

    pub fn spec(&self) -> &RedSpec {
        &self.spec
    }

    /// The average queue (packets, or bytes in byte mode) as of the last arrival.
    pub fn avg(&self) -> f64 {
        self.avg
    }

    /// Arrivals since the last drop (or since `avg` last rose above `min_th`).
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The queued packets, head first.
    pub fn iter(&self) -> impl Iterator<Item = &QueueItem> + '_ {
        self.items.iter()
    }

    /// The drop probability `p_b` for an average queue `avg`, before spreading by `count`:
    /// 0 below `min_th`, `max_p (avg - min_th) / (max_th - min_th)` up to `max_th`, then 1, or
    /// with `gentle` `max_p + (1 - max_p) (avg - max_th) / max_th` up to `2 max_th` and 1 beyond.
    pub fn base_drop_probability(&self, avg: f64) -> f64 {
        let s = &self.spec;
        let p = if avg < s.max_th {
            s.max_p * (avg - s.min_th) / self.threshold_span
        } else if s.gentle && s.max_th > 0.0 {
            s.max_p + (1.0 - s.max_p) * (avg - s.max_th) / s.max_th
        } else {
            1.0
        };
        p.clamp(0.0, 1.0)
    }

    /// The probability `p_a` of dropping an arrival of `bytes` bytes given `p_b` and the
    /// current `count` (ns-2 `modify_p`; formulas in the module docs).
    fn arrival_drop_probability(&self, p_b: f64, bytes: u32) -> f64 {
        let count = if self.spec.byte_mode {
            // ns-2 divides integers here: count_bytes / mean_pktsize.
            (self.count_bytes / self.mean_packet_bytes) as f64
        } else {
            self.count as f64
        };
        let count_p = count * p_b;
        let mut p_a = if self.spec.wait {
            if count_p < 1.0 {
                0.0
            } else if count_p < 2.0 {
                p_b / (2.0 - count_p)
            } else {
                1.0
            }
        } else if count_p < 1.0 {
            p_b / (1.0 - count_p)
        } else {
            1.0
        };
        if self.spec.byte_mode && p_a < 1.0 {
            // p_a <- p_a * size / mean_pktsize
            p_a = p_a * f64::from(bytes) / self.mean_packet_bytes as f64;
        }
        p_a.min(1.0)
    }

    /// The instantaneous queue in the unit of the average.
    fn instantaneous(&self) -> f64 {
        if self.spec.byte_mode {
            self.queued_bytes as f64
        } else {
            self.items.len() as f64
        }
    }

    /// `m`: how many packets of `mean_packet_bytes` the link could have sent in `idle`,
    /// `floor(idle_ns * rate_bps / (8 * mean_packet_bytes * 1e9))`, in exact integer arithmetic.
    fn idle_packet_times(&self, idle: SimTime) -> u64 {
        let numerator = u128::from(idle.as_nanos()) * u128::from(self.link_rate.bps());
        let denominator = 8 * u128::from(self.mean_packet_bytes) * 1_000_000_000;
        u64::try_from(numerator / denominator).unwrap_or(u64::MAX)
    }
}

/// `base^exp` by repeated squaring: a fixed sequence of IEEE multiplications, so the result
/// does not depend on the platform's `pow`.
fn pow_u64(mut base: f64, mut exp: u64) -> f64 {
    let mut acc = 1.0;
    while exp > 0 {
        if exp & 1 == 1 {
            acc *= base;
        }
        base *= base;
        exp >>= 1;
    }
    acc
}

impl QueueDisc for Red {
    fn enqueue(
        &mut self,
        now: SimTime,
        item: QueueItem,
        rng: &mut SimRng,
        dropped: &mut Vec<QueueItem>,
    ) {
        let w_q = self.spec.w_q;
        if let Some(since) = self.idle_since.take() {
            // avg <- (1 - w_q)^m avg, as if m small packets had found the queue empty.
            let m = self.idle_packet_times(now.saturating_sub(since));
            self.avg *= pow_u64(1.0 - w_q, m);
        }
        let q = self.instantaneous();
        // avg <- (1 - w_q) avg + w_q q
        self.avg = (1.0 - w_q) * self.avg + w_q * q;
        self.count += 1;
        self.count_bytes += u64::from(item.bytes);

        let mut drop = false;
        let mut forced = false;
        if self.avg >= self.spec.min_th && q > 1.0 {
            let forced_above = if self.spec.gentle {
                2.0 * self.spec.max_th
            } else {
                self.spec.max_th
            };
            if self.avg >= forced_above {
                forced = true;
            } else if !self.above_min_th {
                // The average has just crossed min_th (or the queue has just refilled):
                // start counting afresh and do not drop this arrival.
                self.above_min_th = true;
                self.count = 1;
                self.count_bytes = u64::from(item.bytes);
            } else {
                let p_b = self.base_drop_probability(self.avg);
                let p_a = self.arrival_drop_probability(p_b, item.bytes);
                let u: f64 = rng.gen();
                if u < p_a {
                    drop = true;
                }
            }
        } else {
            self.above_min_th = false;
        }
        if !self
            .spec
            .limit
            .admits(self.items.len(), self.queued_bytes, item.bytes)
        {
            forced = true;
        }

        if drop || forced {
            self.count = 0;
            self.count_bytes = 0;
            dropped.push(item);
            if self.items.is_empty() {
                // Still idle: the decay above already covers the time up to now.
                self.idle_since = Some(now);
            }
        } else {
            self.queued_bytes += u64::from(item.bytes);
            self.items.push_back(item);
        }
    }

    fn dequeue(&mut self, now: SimTime) -> Option<QueueItem> {
        let item = self.items.pop_front()?;
        self.queued_bytes -= u64::from(item.bytes);
        if self.items.is_empty() {
            // The link goes idle once this packet has been serialised.
            let tx = self.link_rate.tx_time(u64::from(item.bytes));
            self.idle_since = Some(now.saturating_add(tx));
        }
        Some(item)
    }

    fn len_packets(&self) -> usize {
        self.items.len()
    }

    fn len_bytes(&self) -> u64 {
        self.queued_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{FlowId, PacketId};
    use crate::rng::rng_from_seed;

    fn item(packet: u32, bytes: u32) -> QueueItem {
        QueueItem {
            packet: PacketId(packet),
            flow: FlowId(0),
            bytes,
        }
    }

    fn spec() -> RedSpec {
        RedSpec {
            limit: Limit::Packets(10_000),
            ..RedSpec::default()
        }
    }

    /// 8 Mb/s: a 500-byte packet takes exactly 500 us.
    const RATE: Rate = Rate::from_mbps(8);

    /// Offers one packet; true if it was dropped.
    fn offer(red: &mut Red, now: SimTime, it: QueueItem, rng: &mut SimRng) -> bool {
        let mut dropped = Vec::new();
        red.enqueue(now, it, rng, &mut dropped);
        match dropped.as_slice() {
            [] => false,
            [d] => {
                assert_eq!(*d, it, "RED only ever drops the arrival");
                true
            }
            more => panic!("one arrival caused {} drops", more.len()),
        }
    }

    #[test]
    fn average_follows_the_ewma_by_hand() {
        let mut red = Red::new(
            &RedSpec {
                w_q: 0.25,
                min_th: 100.0,
                max_th: 200.0,
                ..spec()
            },
            RATE,
        );
        let mut rng = rng_from_seed(1);
        // Queue lengths seen by the arrivals: 0, 1, 2, 3.
        // avg: 0 -> 0.75*0 + 0.25*0 = 0 -> 0.25*1 = 0.25 -> 0.75*0.25 + 0.5 = 0.6875
        //      -> 0.75*0.6875 + 0.75 = 1.265625 (all exact in binary).
        let expected = [0.0, 0.25, 0.6875, 1.265625];
        for (i, &e) in expected.iter().enumerate() {
            assert!(!offer(
                &mut red,
                SimTime::ZERO,
                item(i as u32, 500),
                &mut rng
            ));
            assert_eq!(red.avg(), e, "after arrival {i}");
        }
        // A departure does not touch the average; the next arrival sees q = 3.
        red.dequeue(SimTime::ZERO);
        assert!(!offer(&mut red, SimTime::ZERO, item(9, 500), &mut rng));
        assert_eq!(red.avg(), 0.75 * 1.265625 + 0.25 * 3.0);
    }

    #[test]
    fn byte_mode_averages_bytes() {
        let s = RedSpec {
            w_q: 0.5,
            byte_mode: true,
            min_th: 1e6,
            max_th: 2e6,
            ..spec()
        };
        let mut red = Red::new(&s, RATE);
        let mut rng = rng_from_seed(1);
        offer(&mut red, SimTime::ZERO, item(0, 1000), &mut rng); // q = 0 -> 0
        offer(&mut red, SimTime::ZERO, item(1, 40), &mut rng); // q = 1000 -> 500
        offer(&mut red, SimTime::ZERO, item(2, 1500), &mut rng); // q = 1040 -> 250 + 520
        assert_eq!(red.avg(), 770.0);
        assert_eq!(red.len_bytes(), 2540);
    }

    #[test]
    fn no_drops_below_min_th() {
        let mut red = Red::new(&RedSpec { w_q: 0.0, ..spec() }, RATE);
        red.avg = 4.999;
        let mut rng = rng_from_seed(2);
        for i in 0..2000 {
            assert!(!offer(&mut red, SimTime::ZERO, item(i, 500), &mut rng));
        }
        assert_eq!(red.len_packets(), 2000);
    }

    #[test]
    fn non_gentle_forces_drops_at_max_th() {
        let s = RedSpec {
            w_q: 0.0,
            gentle: false,
            ..spec()
        };
        let mut red = Red::new(&s, RATE);
        let mut rng = rng_from_seed(3);
        for i in 0..3 {
            offer(&mut red, SimTime::ZERO, item(i, 500), &mut rng);
        }
        red.avg = 15.0;
        for i in 3..1003 {
            assert!(offer(&mut red, SimTime::ZERO, item(i, 500), &mut rng));
        }
        // Just below max_th drops are probabilistic: most arrivals get through.
        red.avg = 14.99;
        let dropped = (0..1000)
            .filter(|&i| offer(&mut red, SimTime::ZERO, item(2000 + i, 500), &mut rng))
            .count();
        assert!(dropped > 0 && dropped < 200, "dropped {dropped}");
    }

    #[test]
    fn gentle_forces_drops_only_from_twice_max_th() {
        let s = RedSpec {
            w_q: 0.0,
            gentle: true,
            wait: true,
            ..spec()
        };
        let mut red = Red::new(&s, RATE);
        let mut rng = rng_from_seed(4);
        for i in 0..3 {
            offer(&mut red, SimTime::ZERO, item(i, 500), &mut rng);
        }
        red.avg = 30.0;
        for i in 3..1003 {
            assert!(offer(&mut red, SimTime::ZERO, item(i, 500), &mut rng));
        }
        // Just below 2 max_th, p_b ~ 0.9999: with `wait` the arrival right after a drop has
        // count p_b < 1 and passes, the next one has count p_b in [1, 2) and p_a = 1.
        red.avg = 29.999;
        let pattern: Vec<bool> = (0..20)
            .map(|i| offer(&mut red, SimTime::ZERO, item(2000 + i, 500), &mut rng))
            .collect();
        let expected: Vec<bool> = (0..20).map(|i| i % 2 == 1).collect();
        assert_eq!(pattern, expected);
        // Between max_th and 2 max_th nothing is forced.
        red.avg = 20.0;
        let dropped = (0..1000)
            .filter(|&i| offer(&mut red, SimTime::ZERO, item(3000 + i, 500), &mut rng))
            .count();
        assert!(dropped > 100 && dropped < 900, "dropped {dropped}");
    }

    #[test]
    fn drop_probability_ramps() {
        let gentle = Red::new(
            &RedSpec {
                max_p: 0.1,
                gentle: true,
                ..spec()
            },
            RATE,
        );
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert_eq!(gentle.base_drop_probability(4.0), 0.0);
        assert_eq!(gentle.base_drop_probability(5.0), 0.0);
        assert!(close(gentle.base_drop_probability(10.0), 0.05));
        assert!(close(gentle.base_drop_probability(12.5), 0.075));
        assert!(close(gentle.base_drop_probability(15.0), 0.1));
        // Gentle ramp: max_p + (1 - max_p)(avg - max_th)/max_th.
        assert!(close(
            gentle.base_drop_probability(18.0),
            0.1 + 0.9 * 3.0 / 15.0
        ));
        assert!(close(gentle.base_drop_probability(22.5), 0.55));
        assert!(close(gentle.base_drop_probability(30.0), 1.0));
        assert_eq!(gentle.base_drop_probability(45.0), 1.0);
        let abrupt = Red::new(
            &RedSpec {
                max_p: 0.1,
                gentle: false,
                ..spec()
            },
            RATE,
        );
        assert!(close(
            abrupt.base_drop_probability(14.999),
            0.1 * 9.999 / 10.0
        ));
        assert_eq!(abrupt.base_drop_probability(15.0), 1.0);
    }

    #[test]
    fn count_spreads_the_probability() {
        let mut red = Red::new(
            &RedSpec {
                wait: false,
                ..spec()
            },
            RATE,
        );
        red.count = 4;
        // p_b / (1 - count p_b) = 0.05 / 0.8
        assert!((red.arrival_drop_probability(0.05, 500) - 0.0625).abs() < 1e-15);
        red.count = 20;
        assert_eq!(red.arrival_drop_probability(0.05, 500), 1.0);
        let mut red = Red::new(
            &RedSpec {
                wait: true,
                ..spec()
            },
            RATE,
        );
        red.count = 19;
        assert_eq!(red.arrival_drop_probability(0.05, 500), 0.0);
        red.count = 30;
        // p_b / (2 - count p_b) = 0.05 / 0.5
        assert!((red.arrival_drop_probability(0.05, 500) - 0.1).abs() < 1e-15);
        red.count = 40;
        assert_eq!(red.arrival_drop_probability(0.05, 500), 1.0);
    }

    #[test]
    fn byte_mode_scales_by_packet_size() {
        let s = RedSpec {
            byte_mode: true,
            wait: false,
            mean_packet_bytes: 500,
            ..spec()
        };
        let mut red = Red::new(&s, RATE);
        // count = floor(2999 / 500) = 5: p_a = 0.05 / (1 - 0.25) = 1/15 for a mean-sized packet.
        red.count = 1;
        red.count_bytes = 2999;
        let base = 0.05 / 0.75;
        assert!((red.arrival_drop_probability(0.05, 500) - base).abs() < 1e-15);
        assert!((red.arrival_drop_probability(0.05, 1000) - 2.0 * base).abs() < 1e-15);
        assert!((red.arrival_drop_probability(0.05, 250) - 0.5 * base).abs() < 1e-15);
        // Capped at 1.
        assert_eq!(red.arrival_drop_probability(0.05, 500 * 20), 1.0);
        // In packet mode the size does not matter and count is the packet count.
        let mut red = Red::new(
            &RedSpec {
                byte_mode: false,
                wait: false,
                ..spec()
            },
            RATE,
        );
        red.count = 1;
        red.count_bytes = 2999;
        assert!((red.arrival_drop_probability(0.05, 1000) - 0.05 / 0.95).abs() < 1e-15);
    }

    #[test]
    fn byte_mode_drops_large_packets_more_often() {
        let s = RedSpec {
            byte_mode: true,
            wait: false,
            w_q: 0.0,
            min_th: 2500.0,
            max_th: 7500.0,
            mean_packet_bytes: 500,
            ..spec()
        };
        let run = |bytes: u32| {
            let mut red = Red::new(&s, RATE);
            let mut rng = rng_from_seed(5);
            for i in 0..3 {
                offer(&mut red, SimTime::ZERO, item(i, bytes), &mut rng);
            }
            red.avg = 5000.0; // p_b = 0.05
            let mut drops = 0;
            for i in 0..40_000 {
                if offer(&mut red, SimTime::ZERO, item(10 + i, bytes), &mut rng) {
                    drops += 1;
                } else {
                    red.dequeue(SimTime::ZERO);
                }
            }
            drops
        };
        let small = run(250);
        let large = run(1000);
        assert!(
            large as f64 > 1.5 * small as f64,
            "small {small} large {large}"
        );
    }

    #[test]
    fn idle_time_decays_the_average() {
        let w_q = 0.01;
        let s = RedSpec {
            w_q,
            min_th: 100.0,
            max_th: 200.0,
            ..spec()
        };
        let mut red = Red::new(&s, RATE);
        let mut rng = rng_from_seed(6);
        for i in 0..50 {
            offer(&mut red, SimTime::ZERO, item(i, 500), &mut rng);
        }
        let before = red.avg();
        assert!(before > 0.0);
        // Drain at t = 1 ms; the last 500-byte packet leaves the wire at 1.5 ms.
        let t = SimTime::from_millis(1);
        while red.dequeue(t).is_some() {}
        // Idle for 10 packet times plus a fraction: m = 10.
        let arrival = SimTime::from_micros(1500 + 10 * 500 + 499);
        offer(&mut red, arrival, item(100, 500), &mut rng);
        let expected = (1.0 - w_q) * before * (1.0f64 - w_q).powi(10);
        assert!(
            (red.avg() - expected).abs() < 1e-12 * expected,
            "{} vs {expected}",
            red.avg()
        );
    }

    #[test]
    fn no_decay_while_the_last_packet_is_on_the_wire() {
        let w_q = 0.01;
        let s = RedSpec {
            w_q,
            min_th: 100.0,
            max_th: 200.0,
            ..spec()
        };
        let mut red = Red::new(&s, RATE);
        let mut rng = rng_from_seed(7);
        for i in 0..10 {
            offer(&mut red, SimTime::ZERO, item(i, 500), &mut rng);
        }
        let before = red.avg();
        while red.dequeue(SimTime::ZERO).is_some() {}
        // The last packet is still being sent until 500 us.
        offer(
            &mut red,
            SimTime::from_micros(499),
            item(100, 500),
            &mut rng,
        );
        assert_eq!(red.avg(), (1.0 - w_q) * before);
        // Sent from 499 us, the packet leaves the wire at 999 us: the idle period starts then,
        // however late the link asks again.
        red.dequeue(SimTime::from_micros(499));
        let after_first = red.avg();
        assert_eq!(red.dequeue(SimTime::from_micros(1200)), None);
        offer(
            &mut red,
            SimTime::from_micros(999 + 3 * 500 + 499),
            item(101, 500),
            &mut rng,
        );
        let expected = (1.0 - w_q) * after_first * (1.0f64 - w_q).powi(3);
        assert!((red.avg() - expected).abs() < 1e-12 * expected);
    }

    #[test]
    fn idle_decay_exponent_is_exact() {
        assert_eq!(pow_u64(0.5, 0), 1.0);
        assert_eq!(pow_u64(0.5, 10), 1.0 / 1024.0);
        assert_eq!(pow_u64(0.998, u64::MAX), 0.0);
        let red = Red::new(&spec(), RATE);
        assert_eq!(red.idle_packet_times(SimTime::from_micros(499)), 0);
        assert_eq!(red.idle_packet_times(SimTime::from_micros(500)), 1);
        assert_eq!(red.idle_packet_times(SimTime::from_secs(1)), 2000);
    }

    #[test]
    fn first_arrival_above_min_th_restarts_the_count() {
        let s = RedSpec {
            w_q: 0.0,
            wait: false,
            ..spec()
        };
        let mut red = Red::new(&s, RATE);
        let mut rng = rng_from_seed(8);
        for i in 0..40 {
            offer(&mut red, SimTime::ZERO, item(i, 500), &mut rng);
        }
        assert_eq!(red.count(), 40);
        red.avg = 14.99;
        assert!(!offer(&mut red, SimTime::ZERO, item(40, 500), &mut rng));
        assert_eq!(red.count(), 1);
        // Falling below min_th clears the flag; the next crossing restarts the count again.
        red.avg = 1.0;
        offer(&mut red, SimTime::ZERO, item(41, 500), &mut rng);
        assert_eq!(red.count(), 2);
        red.avg = 14.99;
        assert!(!offer(&mut red, SimTime::ZERO, item(42, 500), &mut rng));
        assert_eq!(red.count(), 1);
    }

    #[test]
    fn a_short_queue_is_never_dropped_early() {
        // Even far above max_th, an arrival that finds at most one packet queued is admitted.
        let s = RedSpec {
            w_q: 0.0,
            gentle: false,
            ..spec()
        };
        let mut red = Red::new(&s, RATE);
        red.avg = 100.0;
        let mut rng = rng_from_seed(9);
        assert!(!offer(&mut red, SimTime::ZERO, item(0, 500), &mut rng));
        assert!(!offer(&mut red, SimTime::ZERO, item(1, 500), &mut rng));
        assert!(offer(&mut red, SimTime::ZERO, item(2, 500), &mut rng));
    }

    #[test]
    fn physical_limit_forces_drops() {
        let s = RedSpec {
            limit: Limit::Packets(3),
            min_th: 100.0,
            max_th: 200.0,
            ..spec()
        };
        let mut red = Red::new(&s, RATE);
        let mut rng = rng_from_seed(10);
        for i in 0..3 {
            assert!(!offer(&mut red, SimTime::ZERO, item(i, 500), &mut rng));
        }
        assert!(offer(&mut red, SimTime::ZERO, item(3, 500), &mut rng));
        assert_eq!(red.count(), 0);
        let s = RedSpec {
            limit: Limit::Bytes(1000),
            min_th: 1e6,
            max_th: 2e6,
            ..spec()
        };
        let mut red = Red::new(&s, RATE);
        assert!(!offer(&mut red, SimTime::ZERO, item(0, 600), &mut rng));
        assert!(offer(&mut red, SimTime::ZERO, item(1, 401), &mut rng));
        assert!(!offer(&mut red, SimTime::ZERO, item(2, 400), &mut rng));
        assert_eq!(red.len_bytes(), 1000);
    }

    /// Holds the average in the linear region (w_q = 0, queue kept at 3 packets) and returns
    /// the drop fraction over `n` arrivals and the number of arrivals between drops.
    fn run_linear_region(wait: bool, n: u32, seed: u64) -> (f64, Vec<u64>) {
        // p_b = 0.125 (10 - 5) / (15 - 5) = 1/16, exact in binary.
        let s = RedSpec {
            w_q: 0.0,
            max_p: 0.125,
            wait,
            ..spec()
        };
        let mut red = Red::new(&s, RATE);
        let mut rng = rng_from_seed(seed);
        for i in 0..3 {
            offer(&mut red, SimTime::ZERO, item(i, 500), &mut rng);
        }
        red.avg = 10.0;
        let mut drops = 0u64;
        let mut gaps = Vec::new();
        let mut since_drop = 0u64;
        for i in 0..n {
            since_drop += 1;
            if offer(&mut red, SimTime::ZERO, item(10 + i, 500), &mut rng) {
                drops += 1;
                gaps.push(since_drop);
                since_drop = 0;
            } else {
                red.dequeue(SimTime::ZERO);
            }
        }
        (drops as f64 / f64::from(n), gaps)
    }

    /// Mean number of arrivals between drops for the hazard `p_a(count)`, count = 1, 2, ...:
    /// `E[X] = sum_k P(X > k)` with `P(X > k) = prod_{c <= k} (1 - p_a(c))`.
    fn expected_gap(p_b: f64, wait: bool) -> f64 {
        let mut red = Red::new(&RedSpec { wait, ..spec() }, RATE);
        let mut survive = 1.0;
        let mut mean = 0.0;
        for c in 1..10_000 {
            mean += survive;
            red.count = c;
            survive *= 1.0 - red.arrival_drop_probability(p_b, 500);
            if survive == 0.0 {
                break;
            }
        }
        mean
    }

    #[test]
    fn empirical_drop_rate_matches_count_spreading() {
        let p_b = 1.0 / 16.0;
        for wait in [false, true] {
            let (rate, _) = run_linear_region(wait, 200_000, 11);
            let expected = 1.0 / expected_gap(p_b, wait);
            assert!(
                (rate - expected).abs() < 0.02 * expected,
                "wait {wait}: rate {rate}, expected {expected}"
            );
            // The spreading matters: a plain Bernoulli(p_b) coin would drop at rate p_b.
            assert!((rate - p_b).abs() > 0.1 * p_b, "wait {wait}: rate {rate}");
        }
        // Spacing uniform on 1..=15 without wait (mean 8) and on 16..=31 with it (mean 23.5).
        assert!((expected_gap(p_b, false) - 8.0).abs() < 1e-9);
        assert!((expected_gap(p_b, true) - 23.5).abs() < 1e-9);
    }

    #[test]
    fn drop_spacing_is_bounded_by_the_count_rule() {
        let (_, gaps) = run_linear_region(true, 50_000, 12);
        assert!(gaps.len() > 1000);
        // The first gap is counted from the arrival that crossed min_th, which restarts the
        // count at 1, so it obeys the same bounds.
        for &g in &gaps {
            assert!((16..=31).contains(&g), "gap {g}");
        }
        assert!(gaps.contains(&16) && gaps.contains(&31));
        let (_, gaps) = run_linear_region(false, 50_000, 12);
        for &g in &gaps {
            assert!((1..=15).contains(&g), "gap {g}");
        }
        assert!(gaps.contains(&1) && gaps.contains(&15));
    }
}
