//! Queue disciplines.
//!
//! A discipline decides which packets are queued, dropped and dequeued; it does not own
//! statistics (the link does) and never schedules events. One discipline per file, each with
//! its registry declaration (`SPEC`, see [`crate::registry`]); the built-ins are listed once in
//! [`REGISTRY`] and dispatched through the [`Queue`] enum.

use std::fmt;

use crate::ids::{FlowId, PacketId};
use crate::registry::{AlgorithmSpec, Category, Configured, Kind, ParamIssue, Params};
// The category is the registry's; this module registers into it (`impl Kind` below).
pub use crate::registry::QueueKind;
use crate::rng::SimRng;
use crate::time::{Rate, SimTime};

pub mod droptail;
pub mod red;
pub mod threshold_dropper;

pub use droptail::DropTail;
pub use red::Red;
pub use threshold_dropper::{Rearm, ThresholdDropper};

/// A packet as a queue sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueItem {
    pub packet: PacketId,
    pub flow: FlowId,
    /// Size on the wire.
    pub bytes: u32,
}

/// A queue discipline.
pub trait QueueDisc {
    /// Offers an arriving packet at time `now`. Every packet dropped as a consequence (the
    /// arrival itself, or packets already queued) is pushed onto `dropped`; the caller clears
    /// `dropped` before the call.
    fn enqueue(
        &mut self,
        now: SimTime,
        item: QueueItem,
        rng: &mut SimRng,
        dropped: &mut Vec<QueueItem>,
    );
    /// Removes the next packet to transmit, if any.
    fn dequeue(&mut self, now: SimTime) -> Option<QueueItem>;
    fn len_packets(&self) -> usize;
    fn len_bytes(&self) -> u64;
    fn is_empty(&self) -> bool {
        self.len_packets() == 0
    }
}

/// A buffer limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
}

impl Limit {
    /// Whether a buffer that holds `queued_packets` packets of `queued_bytes` bytes in total has
    /// room for one more packet of `bytes` bytes. A packet limit `n` admits an arrival while
    /// fewer than `n` packets are queued; a byte limit admits it if the total after admission
    /// stays within the limit (`queued_bytes + bytes <= n`).
    #[inline]
    pub fn admits(self, queued_packets: usize, queued_bytes: u64, bytes: u32) -> bool {
        match self {
            Limit::Packets(n) => (queued_packets as u64) < n,
            Limit::Bytes(n) => queued_bytes
                .checked_add(u64::from(bytes))
                .is_some_and(|total| total <= n),
        }
    }
}

/// How the threshold-dropper chooses the connection it signals at a congestion event
/// (Altman et al. §I, §III, §V.D).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropPolicy {
    /// The connection of the arrival that would take the queue above the threshold (the
    /// arrival is dropped).
    FirstArrival,
    /// A connection drawn uniformly among every flow that has sent through the queue, queued
    /// or not ("a connection is chosen with fixed probability").
    RateIndependent,
    /// The connection that brought the most bytes in the rate window (the mean propagation
    /// RTT) before the event ("a connection with largest rate just before the congestion
    /// event").
    LargestRate,
}

impl DropPolicy {
    /// The scenario names of the policies, in the order of [`DropPolicy::from_name`].
    pub const NAMES: &'static [&'static str] =
        &["first_arrival", "rate_independent", "largest_rate"];

    /// The policy a scenario calls `name`.
    pub fn from_name(name: &str) -> Option<DropPolicy> {
        match name {
            "first_arrival" => Some(DropPolicy::FirstArrival),
            "rate_independent" => Some(DropPolicy::RateIndependent),
            "largest_rate" => Some(DropPolicy::LargestRate),
            _ => None,
        }
    }
}

/// RED parameters, with ns-2's meaning (Floyd & Jacobson 1993; ns-2 `queue/red.cc`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedSpec {
    /// Thresholds on the average queue, in packets (packet mode) or bytes (byte mode).
    pub min_th: f64,
    pub max_th: f64,
    /// Drop probability at `max_th`.
    pub max_p: f64,
    /// EWMA weight of the average queue.
    pub w_q: f64,
    /// Ramp the drop probability from max_p to 1 between max_th and 2 max_th.
    pub gentle: bool,
    /// ns-2 `wait_`: keep roughly uniform spacing between drops.
    pub wait: bool,
    /// Byte mode: thresholds in bytes, drop probability scaled by packet size / mean_packet_bytes.
    pub byte_mode: bool,
    /// Mean packet size (bytes), for byte mode and for decaying the average over idle periods.
    pub mean_packet_bytes: u32,
    /// Physical buffer.
    pub limit: Limit,
}

impl Default for RedSpec {
    /// The declared defaults of [`red::SPEC`]: the classic ns-2 settings.
    fn default() -> Self {
        let params = red::SPEC.check(&[]).expect("the RED defaults are valid");
        RedSpec::from(&params)
    }
}

/// The queue of a link direction as named in a scenario, with its validated parameters
/// (`QueueSpec::new("droptail", &[("packets", Value::Integer(100))])`); built for a link by
/// [`Configured::build`].
pub type QueueSpec = Configured<QueueKind>;

/// What a queue's constructor is given besides its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkInfo {
    /// The link's rate (RED decays its average over idle periods at this rate).
    pub rate: Rate,
    /// The threshold-dropper's hold time when its `hold` is unset: the mean propagation RTT
    /// of the flows whose data crosses the link direction, resolved by the scenario builder.
    pub default_hold: SimTime,
}

impl Kind for QueueKind {
    const CATEGORY: Category = Category::Queue;
    type Context = LinkInfo;
    type Output = Queue;

    fn registry() -> &'static [&'static AlgorithmSpec<Self>] {
        REGISTRY
    }
}

/// Generates, from one line `module::Type` per built-in discipline (its declaration is
/// `module::SPEC`): [`REGISTRY`], the [`Queue`] enum with one variant per line plus `Custom`,
/// and the enum's static dispatch of [`QueueDisc`].
macro_rules! builtin_queues {
    ($($module:ident :: $variant:ident),+ $(,)?) => {
        /// The declarations of the built-in queue disciplines, sorted by name.
        pub const REGISTRY: &[&AlgorithmSpec<QueueKind>] = &[$(&$module::SPEC),+];

        /// A built queue discipline. The built-ins are matched directly so the per-packet
        /// calls are static; `Custom` is the extension point for disciplines defined outside
        /// this crate.
        pub enum Queue {
            $($variant($module::$variant),)+
            Custom(Box<dyn QueueDisc + Send>),
        }

        impl Queue {
            /// The scenario name of the discipline (`"custom"` for an extension).
            pub fn kind_name(&self) -> &'static str {
                match self {
                    $(Queue::$variant(_) => $module::SPEC.name,)+
                    Queue::Custom(_) => "custom",
                }
            }
        }

        impl fmt::Debug for Queue {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    $(Queue::$variant(q) => f.debug_tuple(stringify!($variant)).field(q).finish(),)+
                    Queue::Custom(q) => f
                        .debug_struct("Custom")
                        .field("len_packets", &q.len_packets())
                        .field("len_bytes", &q.len_bytes())
                        .finish(),
                }
            }
        }

        $(impl From<$module::$variant> for Queue {
            fn from(q: $module::$variant) -> Self {
                Queue::$variant(q)
            }
        })+

        $crate::dispatch::enum_dispatch! {
            impl QueueDisc for Queue [$($variant,)+ Custom] {
                #[inline]
                fn enqueue(
                    &mut self,
                    now: SimTime,
                    item: QueueItem,
                    rng: &mut SimRng,
                    dropped: &mut Vec<QueueItem>,
                );
                #[inline]
                fn dequeue(&mut self, now: SimTime) -> Option<QueueItem>;
                #[inline]
                fn len_packets(&self) -> usize;
                #[inline]
                fn len_bytes(&self) -> u64;
                #[inline]
                fn is_empty(&self) -> bool;
            }
        }
    };
}

// The registry of queue disciplines: one line per built-in.
builtin_queues! {
    droptail::DropTail,
    red::Red,
    threshold_dropper::ThresholdDropper,
}

/// The buffer limit of a discipline declaring `packets` and `bytes` (at most one of them
/// given): a byte limit when `bytes` is given, else the packet limit (given or default), else
/// `None`. The parameter not in force is cleared, so that equal limits compare equal.
pub(crate) fn limit_of(params: &mut Params) -> Result<Option<Limit>, ParamIssue> {
    if params.is_given("packets") && params.is_given("bytes") {
        return Err(ParamIssue::at(
            "bytes",
            "give the limit in packets or in bytes, not both",
        ));
    }
    if let Some(bytes) = params.opt_size("bytes") {
        params.set("packets", None);
        return Ok(Some(Limit::Bytes(bytes)));
    }
    Ok(params.opt_integer("packets").map(Limit::Packets))
}

/// A queue item for unit tests of the disciplines.
#[cfg(test)]
pub(crate) fn test_item(packet: u32, flow: u32, bytes: u32) -> QueueItem {
    QueueItem {
        packet: PacketId(packet),
        flow: FlowId(flow),
        bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Value;
    use crate::rng::rng_from_seed;
    use proptest::prelude::*;

    use super::test_item as item;

    #[test]
    fn limit_admission_rule() {
        assert!(Limit::Packets(2).admits(1, 10_000, 1500));
        assert!(!Limit::Packets(2).admits(2, 0, 1));
        assert!(Limit::Bytes(3000).admits(5, 1500, 1500));
        assert!(!Limit::Bytes(3000).admits(0, 1501, 1500));
        assert!(!Limit::Bytes(u64::MAX).admits(0, u64::MAX, 1));
    }

    #[test]
    fn red_defaults_are_ns2_classic() {
        let d = RedSpec::default();
        assert_eq!(
            (d.min_th, d.max_th, d.max_p, d.w_q),
            (5.0, 15.0, 0.1, 0.002)
        );
        assert!(d.gentle && d.wait && !d.byte_mode);
        assert_eq!(d.mean_packet_bytes, 500);
        assert_eq!(d.limit, Limit::Packets(50));
    }

    #[test]
    fn build_and_kind_names() {
        let link = LinkInfo {
            rate: Rate::from_mbps(10),
            default_hold: SimTime::from_millis(120),
        };
        let spec = |name: &str, given: &[(&str, Value)]| {
            QueueSpec::new(name, given).unwrap_or_else(|e| panic!("{e}"))
        };
        let specs = [
            spec("droptail", &[("packets", Value::Integer(5))]),
            spec("red", &[]),
            spec(
                "threshold_dropper",
                &[
                    ("threshold", Value::Integer(3)),
                    ("policy", Value::Choice("rate_independent")),
                ],
            ),
        ];
        for spec in &specs {
            assert_eq!(spec.build(link).kind_name(), spec.name());
        }
        let names: Vec<&str> = REGISTRY.iter().map(|s| s.name).collect();
        assert_eq!(names, ["droptail", "red", "threshold_dropper"]);
        match specs[2].build(link) {
            Queue::ThresholdDropper(q) => {
                assert_eq!(q.hold(), link.default_hold);
                assert_eq!(q.threshold(), 3);
                assert_eq!(q.policy(), DropPolicy::RateIndependent);
            }
            other => panic!("built {other:?}"),
        }
        let explicit = spec(
            "threshold_dropper",
            &[
                ("threshold", Value::Integer(3)),
                ("hold", Value::Duration(SimTime::from_millis(7))),
            ],
        );
        match explicit.build(link) {
            Queue::ThresholdDropper(q) => {
                assert_eq!(q.hold(), SimTime::from_millis(7));
                assert_eq!(q.policy(), DropPolicy::FirstArrival);
            }
            other => panic!("built {other:?}"),
        }
        match spec("droptail", &[("bytes", Value::Size(9000))]).build(link) {
            Queue::DropTail(q) => assert_eq!(q.limit(), Limit::Bytes(9000)),
            other => panic!("built {other:?}"),
        }
        match spec(
            "red",
            &[
                ("bytes", Value::Size(90_000)),
                ("mode", Value::Choice("bytes")),
            ],
        )
        .build(link)
        {
            Queue::Red(q) => {
                assert_eq!(q.spec().limit, Limit::Bytes(90_000));
                // Left out in byte mode, the thresholds are the packet defaults in bytes.
                assert_eq!((q.spec().min_th, q.spec().max_th), (2500.0, 7500.0));
            }
            other => panic!("built {other:?}"),
        }
    }

    #[test]
    fn limits_are_checked_together() {
        let err = |name: &str, given: &[(&str, Value)]| {
            QueueSpec::new(name, given).unwrap_err().to_string()
        };
        let both = [("packets", Value::Integer(5)), ("bytes", Value::Size(5000))];
        for name in ["droptail", "red"] {
            assert_eq!(
                err(name, &both),
                format!("queue {name}: bytes: give the limit in packets or in bytes, not both")
            );
        }
        assert_eq!(
            err("droptail", &[]),
            "queue droptail: a droptail queue needs a limit: packets = N or bytes = SIZE"
        );
        assert_eq!(
            err("droptail", &[("packets", Value::Integer(0))]),
            "queue droptail: packets: must be at least 1 packet, got 0 (unset means the limit is in bytes)"
        );
        assert_eq!(
            DropPolicy::NAMES
                .iter()
                .map(|n| DropPolicy::from_name(n).unwrap())
                .collect::<Vec<_>>(),
            [
                DropPolicy::FirstArrival,
                DropPolicy::RateIndependent,
                DropPolicy::LargestRate
            ]
        );
        assert_eq!(DropPolicy::from_name("fifo"), None);
    }

    #[test]
    fn custom_discipline_is_dispatched() {
        let mut q = Queue::Custom(Box::new(DropTail::new(Limit::Packets(1))));
        assert_eq!(q.kind_name(), "custom");
        let mut rng = rng_from_seed(1);
        let mut dropped = Vec::new();
        q.enqueue(SimTime::ZERO, item(0, 0, 100), &mut rng, &mut dropped);
        q.enqueue(SimTime::ZERO, item(1, 0, 100), &mut rng, &mut dropped);
        assert_eq!(dropped, vec![item(1, 0, 100)]);
        assert_eq!(
            (q.len_packets(), q.len_bytes(), q.is_empty()),
            (1, 100, false)
        );
        assert_eq!(q.dequeue(SimTime::ZERO), Some(item(0, 0, 100)));
        assert!(q.is_empty());
        assert!(format!("{q:?}").contains("Custom"));
    }

    fn policy() -> impl Strategy<Value = DropPolicy> {
        prop_oneof![
            Just(DropPolicy::FirstArrival),
            Just(DropPolicy::RateIndependent),
            Just(DropPolicy::LargestRate),
        ]
    }

    fn limit() -> impl Strategy<Value = Limit> {
        prop_oneof![
            (0u64..30).prop_map(Limit::Packets),
            (0u64..40_000).prop_map(Limit::Bytes)
        ]
    }

    /// A discipline for the property tests, built directly: limits of zero, which scenarios
    /// refuse, are still drawn, since a discipline must handle them.
    #[derive(Clone, Debug)]
    enum Discipline {
        DropTail {
            limit: Limit,
        },
        Red(RedSpec),
        ThresholdDropper {
            threshold: u64,
            hold: Option<SimTime>,
            policy: DropPolicy,
        },
    }

    impl Discipline {
        fn build(&self, rate: Rate, default_hold: SimTime) -> Queue {
            match self {
                Discipline::DropTail { limit } => DropTail::new(*limit).into(),
                Discipline::Red(spec) => Red::new(spec, rate).into(),
                Discipline::ThresholdDropper {
                    threshold,
                    hold,
                    policy,
                } => {
                    ThresholdDropper::new(*threshold, hold.unwrap_or(default_hold), *policy).into()
                }
            }
        }

        fn kind_name(&self) -> &'static str {
            self.build(Rate::from_mbps(1), SimTime::ZERO).kind_name()
        }
    }

    fn queue_spec() -> impl Strategy<Value = Discipline> {
        let red = (
            0.0f64..10.0,
            1.0f64..20.0,
            0.01f64..1.0,
            0.001f64..0.5,
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            limit(),
        )
            .prop_map(
                |(min_th, span, max_p, w_q, gentle, wait, byte_mode, limit)| {
                    // In byte mode the thresholds are in bytes: scale by a 500-byte packet.
                    let unit = if byte_mode { 500.0 } else { 1.0 };
                    Discipline::Red(RedSpec {
                        min_th: min_th * unit,
                        max_th: (min_th + span) * unit,
                        max_p,
                        w_q,
                        gentle,
                        wait,
                        byte_mode,
                        mean_packet_bytes: 500,
                        limit,
                    })
                },
            );
        prop_oneof![
            limit().prop_map(|limit| Discipline::DropTail { limit }),
            red,
            (0u64..12, proptest::option::of(0u64..3_000), policy()).prop_map(
                |(threshold, hold_us, policy)| Discipline::ThresholdDropper {
                    threshold,
                    hold: hold_us.map(SimTime::from_micros),
                    policy,
                }
            ),
        ]
    }

    /// Where a packet is in its life through the queue.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Fate {
        Queued,
        Dropped,
        Departed,
    }

    /// Dequeues one packet, if any, checking it was inside exactly once.
    fn depart(
        q: &mut Queue,
        now: SimTime,
        fate: &mut [Option<Fate>],
        inside: &mut (usize, u64),
    ) -> Result<bool, TestCaseError> {
        match q.dequeue(now) {
            Some(it) => {
                let slot = &mut fate[it.packet.index()];
                prop_assert_eq!(*slot, Some(Fate::Queued), "{:?} left twice", it);
                *slot = Some(Fate::Departed);
                inside.0 -= 1;
                inside.1 -= u64::from(it.bytes);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    proptest! {
        /// Every offered packet ends up dequeued or reported dropped, exactly once, and the
        /// queue's packet and byte counts always equal those of the packets still inside.
        #[test]
        fn packets_are_conserved(
            spec in queue_spec(),
            seed in any::<u64>(),
            ops in proptest::collection::vec((0u8..3, 0u32..6, 1u32..1500, 0u64..400), 1..400),
        ) {
            let mut q = spec.build(Rate::from_mbps(10), SimTime::from_millis(1));
            let mut rng = rng_from_seed(seed);
            let mut fate: Vec<Option<Fate>> = Vec::new();
            let mut sizes: Vec<u32> = Vec::new();
            // Packets and bytes that should be inside the queue.
            let mut inside = (0usize, 0u64);
            let mut dropped = Vec::new();
            let mut now = SimTime::ZERO;
            for &(op, flow, bytes, dt_us) in &ops {
                now += SimTime::from_micros(dt_us);
                if op < 2 {
                    let id = PacketId::from_index(fate.len());
                    fate.push(Some(Fate::Queued));
                    sizes.push(bytes);
                    inside.0 += 1;
                    inside.1 += u64::from(bytes);
                    dropped.clear();
                    let offered = QueueItem { packet: id, flow: FlowId(flow), bytes };
                    q.enqueue(now, offered, &mut rng, &mut dropped);
                    for it in &dropped {
                        prop_assert_eq!(it.bytes, sizes[it.packet.index()]);
                        let slot = &mut fate[it.packet.index()];
                        prop_assert_eq!(*slot, Some(Fate::Queued), "{:?} dropped twice", it);
                        *slot = Some(Fate::Dropped);
                        inside.0 -= 1;
                        inside.1 -= u64::from(it.bytes);
                    }
                } else {
                    depart(&mut q, now, &mut fate, &mut inside)?;
                }
                prop_assert_eq!(q.len_packets(), inside.0);
                prop_assert_eq!(q.len_bytes(), inside.1);
                prop_assert_eq!(q.is_empty(), inside.0 == 0);
            }
            while depart(&mut q, now, &mut fate, &mut inside)? {}
            prop_assert_eq!(inside, (0, 0));
            prop_assert!(q.is_empty());
            prop_assert_eq!(q.len_bytes(), 0);
            for (i, f) in fate.iter().enumerate() {
                prop_assert!(
                    matches!(f, Some(Fate::Dropped) | Some(Fate::Departed)),
                    "packet {} ended {:?}", i, f
                );
            }
        }

        /// Drop-tail and RED (the FIFO disciplines) deliver what they accept in arrival order.
        #[test]
        fn fifo_disciplines_keep_order(
            spec in queue_spec().prop_filter("FIFO only", |s| s.kind_name() != "threshold_dropper"),
            seed in any::<u64>(),
            ops in proptest::collection::vec((any::<bool>(), 1u32..1500, 0u64..400), 1..300),
        ) {
            let mut q = spec.build(Rate::from_mbps(10), SimTime::ZERO);
            let mut rng = rng_from_seed(seed);
            let mut now = SimTime::ZERO;
            let mut accepted = std::collections::VecDeque::new();
            let mut dropped = Vec::new();
            for (i, &(arrive, bytes, dt_us)) in ops.iter().enumerate() {
                now += SimTime::from_micros(dt_us);
                if arrive {
                    let it = item(i as u32, 0, bytes);
                    dropped.clear();
                    q.enqueue(now, it, &mut rng, &mut dropped);
                    if dropped.is_empty() {
                        accepted.push_back(it);
                    } else {
                        prop_assert_eq!(dropped.as_slice(), &[it]);
                    }
                } else {
                    prop_assert_eq!(q.dequeue(now), accepted.pop_front());
                }
            }
        }
    }
}
