//! Tests shared by the schedulers: helpers to build synthetic views, and the invariants every
//! registered scheduler must keep (a property test over random views).

use proptest::prelude::*;

use super::*;
use crate::registry::{Params, Value};

/// A usable, non-backup subflow with 1000-byte segments: `cwnd` and `in_flight` in segments
/// (everything in flight is also queued), no ssthresh yet, no RTT variation.
pub(super) fn view(id: usize, srtt_ms: u64, cwnd: u64, in_flight: u64) -> SubflowView {
    SubflowView {
        id,
        usable: true,
        mss: 1000,
        cwnd_bytes: cwnd * 1000,
        ssthresh_bytes: u64::MAX,
        in_flight_bytes: in_flight * 1000,
        queued_bytes: in_flight * 1000,
        srtt: SimTime::from_millis(srtt_ms),
        ..SubflowView::default()
    }
}

/// One segment of new data, 1000 bytes.
pub(super) fn new_data() -> SegmentView {
    SegmentView {
        dsn: 0,
        len: 1000,
        is_reinjection: false,
    }
}

/// One reinjected segment, 1000 bytes.
pub(super) fn reinjection() -> SegmentView {
    SegmentView {
        is_reinjection: true,
        ..new_data()
    }
}

/// The scheduler `spec` declares, for `subflows` subflows: with parameters drawn from `draws`
/// (one value in [0, 1) per parameter) when they pass the declaration's checks, else with its
/// defaults.
fn build(spec: &'static AlgorithmSpec<SchedulerKind>, draws: &[f64], subflows: usize) -> Scheduler {
    let given: Vec<(&str, Value)> = spec
        .params
        .iter()
        .zip(draws.iter().cycle())
        .map(|(p, &u)| (p.name, p.draw(u)))
        .collect();
    let params: Params = spec
        .check(&given)
        .or_else(|_| spec.check(&[]))
        .unwrap_or_else(|e| panic!("{e}"));
    (spec.build)(&params, SchedulerContext { subflows })
}

#[test]
fn every_scheduler_builds_from_its_defaults_under_its_name() {
    let names: Vec<&str> = REGISTRY.iter().map(|s| s.name).collect();
    assert_eq!(
        names,
        [
            "blest",
            "capacity",
            "ecf",
            "linux",
            "min_rtt",
            "redundant",
            "round_robin"
        ]
    );
    for spec in REGISTRY {
        let scheduler = build(spec, &[], 2);
        assert_eq!(scheduler.name(), spec.name);
    }
}

#[test]
fn every_scheduler_waits_when_no_subflow_is_usable_or_has_room() {
    let mut none_usable = [view(0, 10, 10, 0), view(1, 20, 10, 0)];
    none_usable[0].usable = false;
    none_usable[1].usable = false;
    let full = [view(0, 10, 10, 10), view(1, 20, 4, 4)];
    let connection = ConnectionView {
        data_window_bytes: 1 << 20,
        peer_window_bytes: 1 << 20,
        unscheduled_bytes: 1 << 20,
        ..ConnectionView::default()
    };
    for spec in REGISTRY {
        let mut scheduler = build(spec, &[], 2);
        for subflows in [&none_usable, &full] {
            for segment in [new_data(), reinjection()] {
                let pick = scheduler.schedule(&connection, &segment, subflows);
                assert_eq!(pick.decision, Decision::Wait, "{}: {pick:?}", spec.name);
            }
        }
    }
}

/// One subflow as the property test draws it.
fn arb_subflow() -> impl Strategy<Value = SubflowView> {
    (
        (prop::bool::weighted(0.8), prop::bool::weighted(0.2)),
        prop::sample::select(vec![536u32, 1000, 1460]),
        (1u64..60, 0u64..1460, prop::option::of(2u64..60)),
        (0u64..70, 0u64..1460, 0u64..5),
        (0u64..300, 0u64..60, 0u64..4, prop::bool::weighted(0.3)),
    )
        .prop_map(
            |(
                (usable, backup),
                mss,
                (cwnd, cwnd_extra, ssthresh),
                (in_flight, in_flight_extra, queued_extra),
                (srtt_ms, rttvar_ms, loss_events, carried),
            )| {
                let mss64 = u64::from(mss);
                let in_flight_bytes =
                    (in_flight * mss64 + in_flight_extra) * u64::from(in_flight > 0);
                SubflowView {
                    id: 0,
                    usable,
                    backup,
                    mss,
                    cwnd_bytes: cwnd * mss64 + cwnd_extra,
                    ssthresh_bytes: ssthresh.map_or(u64::MAX, |s| s * mss64),
                    in_flight_bytes,
                    queued_bytes: in_flight_bytes + queued_extra * mss64,
                    srtt: SimTime::from_millis(srtt_ms),
                    rttvar: SimTime::from_millis(rttvar_ms),
                    loss_events,
                    carried,
                }
            },
        )
}

/// One call of the property test.
#[derive(Clone, Debug)]
struct Step {
    subflows: Vec<SubflowView>,
    segment: SegmentView,
    connection: ConnectionView,
    /// Ignore `subflows` and show the views of the previous call again (so that bursts
    /// continue and rotations advance), with only the segment and the connection changed.
    repeat: bool,
}

fn arb_step(subflows: usize) -> impl Strategy<Value = Step> {
    (
        prop::collection::vec(arb_subflow(), subflows),
        (1u32..3000, prop::bool::weighted(0.25)),
        (0u64..200_000, 0u64..400_000, 0u64..2_000_000),
        prop::bool::weighted(0.5),
    )
        .prop_map(|(mut views, (len, is_reinjection), windows, repeat)| {
            let (data_window, peer_extra, unscheduled) = windows;
            for (i, v) in views.iter_mut().enumerate() {
                v.id = i;
            }
            Step {
                subflows: views,
                segment: SegmentView {
                    dsn: 0,
                    len,
                    is_reinjection,
                },
                connection: ConnectionView {
                    now: SimTime::ZERO,
                    data_window_bytes: data_window,
                    peer_window_bytes: data_window + peer_extra,
                    unscheduled_bytes: unscheduled,
                },
                repeat,
            }
        })
}

/// A run: the parameter draws and the calls (1 to 5 subflows).
fn arb_run() -> impl Strategy<Value = (Vec<f64>, Vec<Step>)> {
    (1usize..6).prop_flat_map(|n| {
        (
            prop::collection::vec(0.0f64..1.0, 1..6),
            prop::collection::vec(arb_step(n), 1..40),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Whatever the views, a pick only names usable subflows with window space for the segment
    /// (each at most once), only the redundant scheduler names several, and the capacity
    /// scheduler never sends a reinjection back to a subflow that carried it.
    #[test]
    fn picks_only_name_usable_subflows_with_window_space((draws, steps) in arb_run()) {
        for spec in REGISTRY {
            let mut scheduler = build(spec, &draws, steps[0].subflows.len());
            let mut subflows: &[SubflowView] = &steps[0].subflows;
            for (t, step) in steps.iter().enumerate() {
                if !step.repeat {
                    subflows = &step.subflows;
                }
                let segment = &step.segment;
                let connection = ConnectionView {
                    now: SimTime::from_millis(7 * t as u64),
                    ..step.connection
                };
                let pick = scheduler.schedule(&connection, segment, subflows);
                let named: Vec<usize> = match pick.decision {
                    Decision::Wait => Vec::new(),
                    Decision::One(id) => vec![id],
                    Decision::Several(set) => {
                        prop_assert_eq!(spec.name, "redundant");
                        prop_assert!(!set.is_empty(), "redundant: an empty set");
                        set.iter().collect()
                    }
                };
                for id in named {
                    prop_assert!(
                        id < subflows.len(),
                        "{}: subflow {} of {}", spec.name, id, subflows.len()
                    );
                    let s = &subflows[id];
                    prop_assert!(
                        s.can_send(segment.len),
                        "{}: picked {} ({:?}) for {:?}: {:?}", spec.name, id, pick, segment, s
                    );
                    if spec.name == "capacity" && segment.is_reinjection {
                        prop_assert!(!s.carried, "capacity: reinjection back on {}", id);
                    }
                }
            }
        }
    }
}

#[test]
fn subflow_set_iterates_its_members_in_order() {
    let mut set = SubflowSet::EMPTY;
    assert_eq!(set.iter().count(), 0);
    for i in [31, 0, 5, 6] {
        set.insert(i);
    }
    assert_eq!(set.iter().collect::<Vec<_>>(), [0, 5, 6, 31]);
    assert_eq!(set.len(), 4);
    assert!(set.contains(31) && !set.contains(32) && !set.contains(1));
}
