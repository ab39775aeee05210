//! One direction of a link: a loss model, a queue discipline, a serialiser and a propagation
//! delay.
//!
//! Two ways to run the queue:
//!
//! - **Scheduled FIFO** (DropTail). A first-in first-out queue that decides only at arrival
//!   never changes a packet's departure once it is admitted, so the departure is computed then:
//!   the packet starts when the link is next free (`busy_until`) and is handed to the simulator
//!   at once with the time its last bit leaves. The queue is the list of admitted packets that
//!   have not started yet, kept as (start time, bytes) and trimmed lazily
//!   ([`ScheduledFifo`], in `queue/droptail.rs` beside the drop-tail discipline whose rule,
//!   [`Limit::admits`], it applies); the link needs no "transmission done" event at all.
//! - **Event-driven** (RED, the threshold-dropper, custom disciplines), for disciplines that
//!   look at the queue when they dequeue or drop packets already queued. The link keeps at
//!   most one pending `TransmitDone` event: while it is transmitting and packets wait, the
//!   simulator holds one for the end of the current packet. A packet that arrives at an idle
//!   link goes through the discipline (so that RED still sees the arrival) and onto the wire
//!   with no extra event.
//!
//! Serialisation times carry their fractional nanoseconds from packet to packet
//! ([`Rate::tx_time_carry`]). Queue statistics are the same in both modes: the time integral
//! of the number of packets waiting (not counting the one being transmitted).
//!
//! A link can fail and come back (a scenario's `[[event]]`, [`Link::go_down`] and
//! [`Link::go_up`]). While it is down every packet that reaches it is dropped; when it goes
//! down, the packets waiting in its queue are dropped and those on the wire or propagating are
//! lost: each carries the link's failure count (`epoch`) from its launch, and one that arrives
//! with an older count than the link's is dropped instead of delivered.
//!
//! Counters are read with [`Link::counters_at`], which returns them as they stand at an
//! instant: what a scheduled FIFO has committed for later (packets admitted but not started,
//! their waiting time and the part of the serialisation after that instant) is taken out, so
//! that differences of two readings are exact over the interval between them (the results'
//! measurement window, `docs/results.md`).

use std::collections::VecDeque;

use crate::ids::{NodeId, PacketId};
use crate::net::loss::LossModel;
use crate::net::queue::droptail::{ScheduledFifo, Waiting};
use crate::net::queue::{Limit, Queue, QueueDisc, QueueItem};
use crate::ring::Ring;
use crate::rng::SimRng;
use crate::time::{Rate, SimTime};

/// Counters of a link direction. Time integrals are in packet·ns and byte·ns.
///
/// The counters every transmission adds to alternate with the drop counters: adjacent, the
/// compiler adds to two at once through a vector register, which takes more instructions than
/// two additions to memory.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinkCounters {
    pub arrivals: u64,
    /// Packets dropped by the queue discipline.
    pub queue_drops: u64,
    /// Packets and bytes whose transmission has started.
    pub tx_packets: u64,
    /// Packets dropped by the loss model.
    pub loss_drops: u64,
    pub tx_bytes: u64,
    /// Packets dropped because the link was down: at its input while down, waiting in its
    /// queue or on the wire when it went down.
    pub down_drops: u64,
    /// Time spent serialising, in ns: the sum of the packets' serialisation times (with the
    /// carried fractional nanoseconds, so exact to below 1 ns over any number of packets).
    /// Transmissions never overlap, so this never exceeds the elapsed time.
    pub busy_ns: u64,
    pub queue_area_packets_ns: u128,
    pub queue_area_bytes_ns: u128,
    pub max_queue_packets: u64,
}

/// Why a link dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropCause {
    /// The queue discipline (DropTail overflow, RED, the threshold-dropper).
    Queue,
    /// The link's loss model, on arrival, before the queue.
    LossModel,
    /// The link was down (a scenario `[[event]]`).
    LinkDown,
}

/// What the simulator must do after the link handled an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Started {
    /// The packet put on the wire.
    pub item: QueueItem,
    /// When its last bit leaves.
    pub tx_end: SimTime,
}

/// A transmission with its arrival at the far end: what [`Link::departure`] makes of a
/// [`Started`], and what [`Link::admit_ahead`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Departure {
    pub item: QueueItem,
    /// When its last bit leaves.
    pub tx_end: SimTime,
    /// When it reaches the far end.
    pub at: SimTime,
    /// When the event of that arrival is scheduled ([`Link::depart`]).
    pub scheduled: SimTime,
}

/// What became of a packet admitted ahead of the simulator's time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AheadOutcome {
    Sent,
    QueueDrop,
    LossDrop,
}

/// A packet admitted ahead of the simulator's time, kept until the simulator's time passes
/// its arrival so that readings of the counters before then can leave it out.
#[derive(Clone, Copy, Debug)]
struct Ahead {
    arrival: SimTime,
    /// When the event of its arrival would have been scheduled (`Link::depart`): with
    /// `arrival`, its place among the events at that time.
    scheduled: SimTime,
    start: SimTime,
    tx_end: SimTime,
    bytes: u32,
    /// Packets waiting just after its admission (for `max_queue_packets`), 0 if it started at
    /// once.
    queued: u32,
    outcome: AheadOutcome,
}

impl Lookahead {
    /// Takes the admissions whose arrivals come before the event at `time` scheduled at
    /// `scheduled` out of the ledger (see [`Link::realize`]), moving `arrived_busy_until`
    /// (the link's) past them.
    fn realize(
        &mut self,
        counters: &mut LinkCounters,
        arrived_busy_until: &mut SimTime,
        time: SimTime,
        scheduled: SimTime,
    ) {
        while let Some(e) = self.ledger.front() {
            if (e.arrival, e.scheduled) >= (time, scheduled) {
                break;
            }
            if e.outcome == AheadOutcome::Sent {
                *arrived_busy_until = e.tx_end;
                if e.queued as u64 > counters.max_queue_packets {
                    counters.max_queue_packets = e.queued as u64;
                }
            }
            self.ledger.pop_front();
        }
    }

    /// How many of the packets waiting in the queue have not arrived yet: those admitted
    /// ahead that did not start at once (they are the last ones waiting).
    fn waiting_ahead(&self) -> usize {
        self.ledger
            .iter()
            .filter(|e| e.outcome == AheadOutcome::Sent && e.start > e.arrival)
            .count()
    }
}

/// Admission ahead of time, for a drop-tail link whose only input is one upstream link.
///
/// Such a link's arrivals are the upstream link's departures, in order, each a propagation
/// delay after it leaves; nothing else reaches it. Its state at a packet's arrival therefore
/// depends only on the packets before it, so the simulator admits the packet when it leaves
/// upstream, with its arrival time, instead of waiting for an event at that arrival
/// ([`Link::admit_ahead`]). The admission decides exactly what it would decide then (the same
/// queue, the same loss-model draws in the same order); what is observable in between is
/// kept right by this ledger: the counters and the queue length read at an instant leave out
/// the packets that have not arrived yet, and a drop is reported at its arrival time
/// (`defer_drop`).
#[derive(Debug, Default)]
struct Lookahead {
    /// Admissions whose arrival the simulator's time has not passed, in arrival order.
    ledger: VecDeque<Ahead>,
    /// Drops decided ahead, to report at their arrival times (non-decreasing), with the
    /// scheduling times of their arrivals.
    drops: VecDeque<(SimTime, SimTime, QueueItem, DropCause)>,
}

#[derive(Debug)]
enum Discipline {
    Scheduled(ScheduledFifo),
    EventDriven(Queue),
}

/// One direction of a link.
pub struct Link {
    /// The scenario name of the link this direction belongs to.
    pub name: String,
    /// True for the `to -> from` direction of a duplex link.
    pub is_reverse: bool,
    pub from: NodeId,
    pub to: NodeId,
    pub rate: Rate,
    pub delay: SimTime,
    discipline: Discipline,
    pub loss: Option<LossModel>,
    pub rng: SimRng,
    busy_until: SimTime,
    carry: u64,
    /// `8e9 / rate` when it is a whole number of nanoseconds per byte (100 Mb/s: 80), so that
    /// serialisation is a multiplication with no remainder to carry.
    ns_per_byte: Option<u64>,
    /// A packet of fewer bytes than this fits the drop-tail queue when nothing waits (0 for
    /// an event-driven queue): the limit's verdict on a lone arrival, for `admit_ahead`.
    lone_fits_below: u64,
    /// A `TransmitDone` event is pending for `busy_until` (event-driven queues only).
    done_pending: bool,
    last_change: SimTime,
    counters: LinkCounters,
    /// Packets on the wire or propagating, with their arrival times at the far end. Arrival
    /// times are non-decreasing (FIFO serialisation, constant delay), so the simulator keeps
    /// one event, for the head, instead of one per packet. The third field is the link's
    /// `epoch` at launch, the fourth when its arrival event is scheduled ([`Link::depart`]).
    pipeline: Ring<(SimTime, PacketId, u32, SimTime)>,
    /// When the last packet that left reaches the far end.
    last_arrival: SimTime,
    drop_cause: DropCause,
    /// False while the link is down.
    up: bool,
    /// How many times the link went down: a packet launched before the last failure is lost.
    epoch: u32,
    /// Set when the simulator admits packets ahead of time ([`Link::enable_lookahead`]).
    lookahead: Option<Box<Lookahead>>,
    /// With admissions ahead of time: the end of the last transmission of a packet that has
    /// arrived (kept here, not in the `Lookahead`, for the common admission to reach it at
    /// once).
    arrived_busy_until: SimTime,
    /// The sending host's own interface queue (the scenario's `local = true`): a TCP segment
    /// that finds it full is refused, not dropped (the outbox's `LocalRoom`).
    pub local: bool,
    /// Local links only: packets that host timing noise holds for this link, emitted and not
    /// yet released onto it (counted as queued by [`Link::room`]).
    pub held: u32,
    /// Local links only: segments refused because the queue was full, whole run.
    pub refusals: u64,
}

/// What a local link's queue can take at an instant ([`Link::room`]): whether the link is
/// transmitting, and the packets and bytes waiting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Room {
    pub limit: Limit,
    pub up: bool,
    pub busy: bool,
    pub queued: usize,
    pub queued_bytes: u64,
}

impl Room {
    /// Whether a packet of `bytes` would be admitted, as [`Link::arrive_scheduled`] decides it
    /// (a link that is down takes it, to drop it as down).
    #[inline]
    pub fn admits(&self, bytes: u32) -> bool {
        let (queued, queued_bytes) = if self.busy {
            (self.queued, self.queued_bytes)
        } else {
            (0, 0)
        };
        !self.up || self.limit.admits(queued, queued_bytes, bytes)
    }

    /// A packet of `bytes` entered (if [`Room::admits`] it): it starts at once on an idle
    /// link, else waits.
    #[inline]
    pub fn take(&mut self, bytes: u32) {
        if !self.up || !self.admits(bytes) {
            return;
        }
        if self.busy {
            self.queued += 1;
            self.queued_bytes += u64::from(bytes);
        } else {
            self.busy = true;
        }
    }
}

impl Link {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: String,
        is_reverse: bool,
        from: NodeId,
        to: NodeId,
        rate: Rate,
        delay: SimTime,
        queue: Queue,
        loss: Option<LossModel>,
        rng: SimRng,
    ) -> Self {
        let lone_fits_below = match &queue {
            Queue::DropTail(d) => match d.limit() {
                Limit::Packets(0) => 0,
                Limit::Packets(_) => u64::MAX,
                Limit::Bytes(n) => n.saturating_add(1),
            },
            _ => 0,
        };
        let discipline = match queue {
            Queue::DropTail(d) => Discipline::Scheduled(ScheduledFifo::new(d.limit())),
            other => Discipline::EventDriven(other),
        };
        Link {
            name,
            is_reverse,
            from,
            to,
            rate,
            delay,
            discipline,
            loss,
            rng,
            busy_until: SimTime::ZERO,
            carry: 0,
            ns_per_byte: (rate.bps() > 0 && 8_000_000_000 % rate.bps() == 0)
                .then(|| 8_000_000_000 / rate.bps()),
            lone_fits_below,
            done_pending: false,
            last_change: SimTime::ZERO,
            counters: LinkCounters::default(),
            pipeline: Ring::new(),
            last_arrival: SimTime::ZERO,
            drop_cause: DropCause::Queue,
            up: true,
            epoch: 0,
            lookahead: None,
            arrived_busy_until: SimTime::ZERO,
            local: false,
            held: 0,
            refusals: 0,
        }
    }

    /// What the drop-tail queue of a local link can take at `now`, the packets held for it by
    /// host noise counted as arrived (they come after `now`, when the queue can only have
    /// drained: a conservative count). `None` for an event-driven queue.
    pub fn room(&mut self, now: SimTime) -> Option<Room> {
        let Discipline::Scheduled(f) = &mut self.discipline else {
            return None;
        };
        let (busy, queued, queued_bytes) = if self.busy_until <= now {
            (false, 0, 0)
        } else {
            f.trim(now);
            (true, f.waiting.len(), f.waiting_bytes)
        };
        let mut room = Room {
            limit: f.limit,
            up: self.up,
            busy,
            queued,
            queued_bytes,
        };
        // A local queue's limit is in packets (validated): the held packets' sizes do not
        // matter.
        for _ in 0..self.held {
            room.take(0);
        }
        Some(room)
    }

    /// Lets the simulator admit packets ahead of time ([`Link::admit_ahead`]). Only a
    /// drop-tail link can (returns whether it now does), and only one whose sole input is one
    /// upstream link and that never fails or changes its loss model: the simulator checks
    /// that before calling this.
    pub fn enable_lookahead(&mut self) -> bool {
        if matches!(self.discipline, Discipline::Scheduled(_)) {
            self.lookahead.get_or_insert_with(Default::default);
            true
        } else {
            false
        }
    }

    /// Stops admitting ahead of time. Only before the link has admitted anything.
    pub fn disable_lookahead(&mut self) {
        self.lookahead = None;
    }

    /// Whether packets are admitted ahead of time.
    #[inline]
    pub fn has_lookahead(&self) -> bool {
        self.lookahead.is_some()
    }

    /// "forward" or "reverse".
    pub fn direction(&self) -> &'static str {
        if self.is_reverse {
            "reverse"
        } else {
            "forward"
        }
    }

    /// Packets dropped by the loss model so far.
    #[inline]
    pub fn loss_drops(&self) -> u64 {
        self.counters.loss_drops
    }

    pub fn is_busy(&self, now: SimTime) -> bool {
        now < self.busy_until
    }

    /// Packets and bytes waiting at `now` (not counting the one being transmitted).
    pub fn queue_len(&mut self, now: SimTime) -> (usize, u64) {
        match &mut self.discipline {
            Discipline::Scheduled(f) if self.lookahead.is_some() => {
                // The packets admitted ahead that have not arrived are not there yet.
                f.trim(now);
                let arrived =
                    f.waiting.len() - self.lookahead.as_deref().map_or(0, |la| la.waiting_ahead());
                f.waiting
                    .iter()
                    .take(arrived)
                    .fold((0, 0), |(n, b), w| (n + 1, b + w.bytes as u64))
            }
            Discipline::Scheduled(f) => {
                f.trim(now);
                (f.waiting.len(), f.waiting_bytes)
            }
            Discipline::EventDriven(q) => (q.len_packets(), q.len_bytes()),
        }
    }

    /// The counters as of `now`: for a scheduled FIFO, packets admitted but not yet started
    /// are taken back out of the transmitted counts and of the queue integrals (their waiting
    /// time after `now` has not happened yet), and for both queue kinds the serialisation
    /// still to come after `now` is taken out of `busy_ns`.
    ///
    /// That future serialisation is exactly `busy_until - now` (when positive): everything
    /// committed to the wire after `now` is one contiguous block ending at `busy_until`. An
    /// event-driven link starts a packet only at the current time when it is free (the arrival
    /// finds it idle, or the `TransmitDone` at `busy_until`), so at most the packet being sent
    /// is committed, and it started at or before `now`. A scheduled FIFO starts each admitted
    /// packet at `max(arrival, busy_until)`: a packet follows the previous one back to back
    /// unless the link was idle at its arrival, so the only gaps between transmissions end at
    /// arrival instants, all at or before `now`.
    ///
    /// With admissions ahead of time, the packets that arrive at or after `now` are taken out
    /// entirely (see [`Lookahead`]).
    pub fn counters_at(&mut self, now: SimTime) -> LinkCounters {
        if self.lookahead.is_some() {
            return self.counters_ahead_at(now);
        }
        self.account_queue(now);
        let mut c = self.counters;
        c.busy_ns -= self.busy_until.0.saturating_sub(now.0);
        if let Discipline::Scheduled(f) = &mut self.discipline {
            f.trim(now);
            for &Waiting { start, bytes, .. } in f.waiting.iter() {
                let ahead = (start.0 - now.0) as u128;
                c.tx_packets -= 1;
                c.tx_bytes -= bytes as u64;
                c.queue_area_packets_ns -= ahead;
                c.queue_area_bytes_ns -= ahead * bytes as u128;
            }
        }
        c
    }

    /// [`Link::counters_at`] for a link that admits ahead of time: the admissions still in
    /// the ledger have not happened (the simulator realizes those before the instant first,
    /// [`Link::realize`]).
    fn counters_ahead_at(&mut self, now: SimTime) -> LinkCounters {
        let mut c = self.counters;
        let (Some(la), Discipline::Scheduled(f)) =
            (self.lookahead.as_deref(), &mut self.discipline)
        else {
            unreachable!("only a scheduled FIFO admits ahead")
        };
        // Packets that have not arrived: nothing of them has happened.
        for e in &la.ledger {
            c.arrivals -= 1;
            match e.outcome {
                AheadOutcome::QueueDrop => c.queue_drops -= 1,
                AheadOutcome::LossDrop => c.loss_drops -= 1,
                AheadOutcome::Sent => {
                    c.tx_packets -= 1;
                    c.tx_bytes -= e.bytes as u64;
                    c.busy_ns -= e.tx_end.0 - e.start.0;
                    let wait = (e.start.0 - e.arrival.0) as u128;
                    c.queue_area_packets_ns -= wait;
                    c.queue_area_bytes_ns -= wait * e.bytes as u128;
                }
            }
        }
        // Packets that have arrived: as for any scheduled FIFO, what is committed after `now`
        // (one contiguous block of serialisation, and the waiting of those not started).
        c.busy_ns -= self.arrived_busy_until.0.saturating_sub(now.0);
        f.trim(now);
        let arrived = f.waiting.len() - la.waiting_ahead();
        for w in f.waiting.iter().take(arrived) {
            let ahead = (w.start.0 - now.0) as u128;
            c.tx_packets -= 1;
            c.tx_bytes -= w.bytes as u64;
            c.queue_area_packets_ns -= ahead;
            c.queue_area_bytes_ns -= ahead * w.bytes as u128;
        }
        c
    }

    /// Takes the admissions ahead whose arrivals come before the event at `time` scheduled at
    /// `scheduled` out of the ledger: they have happened. Folds their queue lengths into
    /// `max_queue_packets`. The simulator calls it before reading the link at that event.
    #[inline]
    pub fn realize(&mut self, time: SimTime, scheduled: SimTime) {
        if let Some(la) = self.lookahead.as_deref_mut() {
            la.realize(
                &mut self.counters,
                &mut self.arrived_busy_until,
                time,
                scheduled,
            );
        }
    }

    /// A packet that will reach the link's input at `at` (at or after `now` and every earlier
    /// admission's arrival) is admitted now, as it would be then (see [`Lookahead`]). Returns
    /// its transmission and its arrival at the far end, or why it is dropped and whether that
    /// comes before `horizon` (with `at > now`): the caller reports the drop at `at`
    /// ([`Link::defer_drop`]), or counts it at once if nothing records its time and no
    /// reading comes first.
    ///
    /// `horizon` is the earliest instant at which the link may be read again (a sample, the
    /// end of the warm-up or of the slice): an admission that arrives before it, with none
    /// still pending before it, has happened by any reading and is not kept in the ledger.
    ///
    /// # Panics
    /// If the link does not admit ahead ([`Link::enable_lookahead`]).
    #[inline(always)]
    pub fn admit_ahead(
        &mut self,
        now: SimTime,
        at: SimTime,
        scheduled: SimTime,
        item: QueueItem,
        horizon: SimTime,
    ) -> Result<Departure, (DropCause, bool)> {
        let la = self
            .lookahead
            .as_deref_mut()
            .expect("admit_ahead on a link without lookahead");
        // The common case, the general path below reduced to what it does then: an arrival
        // before the next reading with nothing pending before it (not kept), no loss model,
        // the link idle at the arrival (nothing waits) and the queue's room for a lone packet,
        // a whole number of nanoseconds per byte.
        if la.ledger.is_empty()
            && at < horizon
            && self.busy_until <= at
            && self.loss.is_none()
            && (item.bytes as u64) < self.lone_fits_below
        {
            if let Some(k) = self.ns_per_byte {
                self.counters.arrivals += 1;
                let started = self.transmit_whole(at, item, k);
                self.arrived_busy_until = started.tx_end;
                return Ok(self.departure(started, at));
            }
        }
        if !la.ledger.is_empty() {
            la.realize(
                &mut self.counters,
                &mut self.arrived_busy_until,
                now,
                SimTime::ZERO,
            );
        }
        // Realized at once when it arrives before the next reading with nothing pending
        // before it: no reading can fall before its arrival.
        let keep = at >= horizon || !la.ledger.is_empty();
        self.counters.arrivals += 1;
        debug_assert!(self.up, "a link that admits ahead never fails");
        if let Some(loss) = self.loss.as_mut() {
            if loss.should_drop(&mut self.rng) {
                self.counters.loss_drops += 1;
                self.keep_ahead(keep, at, scheduled, item.bytes, AheadOutcome::LossDrop);
                return Err((DropCause::LossModel, at < horizon));
            }
        }
        let Discipline::Scheduled(f) = &mut self.discipline else {
            unreachable!("only a scheduled FIFO admits ahead")
        };
        // Idle at the arrival, the link has started every packet admitted before (each starts
        // before its transmission ends, by `busy_until`): nothing waits, and the waiting list
        // is left for the next busy arrival or reading to trim.
        let idle = self.busy_until <= at;
        let (queued, queued_bytes) = if idle {
            (0, 0)
        } else {
            f.trim(now);
            f.queued_at(at)
        };
        if !f.limit.admits(queued, queued_bytes, item.bytes) {
            self.counters.queue_drops += 1;
            self.keep_ahead(keep, at, scheduled, item.bytes, AheadOutcome::QueueDrop);
            return Err((DropCause::Queue, at < horizon));
        }
        let start = at.max(self.busy_until);
        let mut queued_after = 0;
        if start > at {
            f.wait(
                at,
                start,
                item.bytes,
                &mut self.counters.queue_area_packets_ns,
                &mut self.counters.queue_area_bytes_ns,
            );
            queued_after = (queued + 1) as u32;
        }
        let started = self.transmit(start, item);
        let departure = self.departure(started, at);
        if keep {
            let la = self.lookahead.as_deref_mut().expect("checked above");
            la.ledger.push_back(Ahead {
                arrival: at,
                scheduled,
                start,
                tx_end: started.tx_end,
                bytes: item.bytes,
                queued: queued_after,
                outcome: AheadOutcome::Sent,
            });
        } else {
            self.arrived_busy_until = started.tx_end;
            if queued_after as u64 > self.counters.max_queue_packets {
                self.counters.max_queue_packets = queued_after as u64;
            }
        }
        Ok(departure)
    }

    /// [`Link::admit_ahead`] for a packet that enters at `now`, in an event scheduled at
    /// `scheduled`, a link that admits ahead the answers of transports that react ahead (a
    /// route's first link, see `Simulator::react_ahead`): the admissions ahead there all
    /// arrived by now, before this event, so all have happened, and this one happens now.
    /// Returns the transmission, or why the packet is dropped (now).
    #[inline(never)]
    pub fn admit_now(
        &mut self,
        now: SimTime,
        scheduled: SimTime,
        item: QueueItem,
    ) -> Result<Departure, DropCause> {
        let la = self
            .lookahead
            .as_deref_mut()
            .expect("admit_now on a link without lookahead");
        debug_assert!(la.ledger.back().is_none_or(|e| e.arrival <= now));
        la.realize(
            &mut self.counters,
            &mut self.arrived_busy_until,
            SimTime::MAX,
            SimTime::MAX,
        );
        self.admit_ahead(now, now, scheduled, item, SimTime::MAX)
            .map_err(|(cause, _)| cause)
    }

    /// Records a drop decided ahead in the ledger when it must be `keep`t.
    fn keep_ahead(
        &mut self,
        keep: bool,
        at: SimTime,
        scheduled: SimTime,
        bytes: u32,
        outcome: AheadOutcome,
    ) {
        if keep {
            let la = self.lookahead.as_deref_mut().expect("lookahead");
            la.ledger.push_back(Ahead {
                arrival: at,
                scheduled,
                start: at,
                tx_end: at,
                bytes,
                queued: 0,
                outcome,
            });
        }
    }

    /// Keeps a drop decided ahead until `at`. Returns `at` when it is the first kept, i.e.
    /// when the caller must schedule the event that reports it.
    pub fn defer_drop(
        &mut self,
        at: SimTime,
        scheduled: SimTime,
        item: QueueItem,
        cause: DropCause,
    ) -> Option<(SimTime, SimTime)> {
        let la = self.lookahead.as_deref_mut().expect("lookahead");
        la.drops.push_back((at, scheduled, item, cause));
        (la.drops.len() == 1).then_some((at, scheduled))
    }

    /// The first drop kept by [`Link::defer_drop`], its cause and the time of the next one.
    ///
    /// # Panics
    /// If none is kept.
    pub fn pop_deferred_drop(&mut self) -> (QueueItem, DropCause, Option<(SimTime, SimTime)>) {
        let la = self.lookahead.as_deref_mut().expect("lookahead");
        let (_, _, item, cause) = la.drops.pop_front().expect("a deferred drop");
        (item, cause, la.drops.front().map(|&(t, s, _, _)| (t, s)))
    }

    /// Accumulates the time integral of an event-driven queue's length up to `now`.
    #[inline]
    fn account_queue(&mut self, now: SimTime) {
        let Discipline::EventDriven(q) = &self.discipline else {
            return;
        };
        let dt = now.0.saturating_sub(self.last_change.0) as u128;
        if dt > 0 {
            self.counters.queue_area_packets_ns += q.len_packets() as u128 * dt;
            self.counters.queue_area_bytes_ns += q.len_bytes() as u128 * dt;
            self.last_change = now;
        }
    }

    /// A packet arrives at the link's input. Dropped packets are appended to `dropped`.
    /// Returns the packet put on the wire, if any, with the time its last bit leaves.
    #[inline]
    pub fn handle_arrival(
        &mut self,
        now: SimTime,
        item: QueueItem,
        dropped: &mut Vec<QueueItem>,
    ) -> Option<Started> {
        if self.is_scheduled() {
            return match self.arrive_scheduled(now, item) {
                Ok(started) => Some(started),
                Err(cause) => {
                    self.drop_cause = cause;
                    dropped.push(item);
                    None
                }
            };
        }
        self.counters.arrivals += 1;
        if !self.up {
            self.counters.down_drops += 1;
            self.drop_cause = DropCause::LinkDown;
            dropped.push(item);
            return None;
        }
        if let Some(loss) = self.loss.as_mut() {
            if loss.should_drop(&mut self.rng) {
                self.counters.loss_drops += 1;
                self.drop_cause = DropCause::LossModel;
                dropped.push(item);
                return None;
            }
        }
        self.drop_cause = DropCause::Queue;
        self.enqueue(now, item, dropped)
    }

    /// Why the packets the last [`Link::handle_arrival`] put in `dropped` were dropped.
    pub fn drop_cause(&self) -> DropCause {
        self.drop_cause
    }

    /// An event-driven queue's part of an arrival.
    #[inline]
    fn enqueue(
        &mut self,
        now: SimTime,
        item: QueueItem,
        dropped: &mut Vec<QueueItem>,
    ) -> Option<Started> {
        self.account_queue(now);
        let Discipline::EventDriven(q) = &mut self.discipline else {
            unreachable!("only an event-driven queue enqueues")
        };
        let before = dropped.len();
        q.enqueue(now, item, &mut self.rng, dropped);
        self.counters.queue_drops += (dropped.len() - before) as u64;
        let queued = q.len_packets() as u64;
        if queued > self.counters.max_queue_packets {
            self.counters.max_queue_packets = queued;
        }
        // An idle link (nothing on the wire, no completion pending) starts at once.
        if now >= self.busy_until && !self.done_pending {
            self.start_next(now)
        } else {
            None
        }
    }

    /// [`Link::handle_arrival`] for a drop-tail link ([`Link::is_scheduled`]), which drops at
    /// most the arrival itself: returns its transmission, or why it was dropped (counted; the
    /// caller drops it).
    #[inline(always)]
    pub fn arrive_scheduled(
        &mut self,
        now: SimTime,
        item: QueueItem,
    ) -> Result<Started, DropCause> {
        self.counters.arrivals += 1;
        if !self.up {
            self.counters.down_drops += 1;
            return Err(DropCause::LinkDown);
        }
        if let Some(loss) = self.loss.as_mut() {
            if loss.should_drop(&mut self.rng) {
                self.counters.loss_drops += 1;
                return Err(DropCause::LossModel);
            }
        }
        let Discipline::Scheduled(f) = &mut self.discipline else {
            unreachable!("arrive_scheduled on an event-driven link")
        };
        // Idle now, the link has started every packet admitted before: nothing waits (the
        // waiting list is trimmed at the next busy arrival or reading).
        let (queued, queued_bytes) = if self.busy_until <= now {
            (0, 0)
        } else {
            f.trim(now);
            (f.waiting.len(), f.waiting_bytes)
        };
        if !f.limit.admits(queued, queued_bytes, item.bytes) {
            self.counters.queue_drops += 1;
            return Err(DropCause::Queue);
        }
        let start = now.max(self.busy_until);
        if start > now {
            f.wait(
                now,
                start,
                item.bytes,
                &mut self.counters.queue_area_packets_ns,
                &mut self.counters.queue_area_bytes_ns,
            );
            let queued = f.waiting.len() as u64;
            if queued > self.counters.max_queue_packets {
                self.counters.max_queue_packets = queued;
            }
        }
        Ok(self.transmit(start, item))
    }

    /// Whether the queue is a drop-tail FIFO, whose departures are fixed at admission (see the
    /// module doc): [`Link::arrive_scheduled`] serves its arrivals.
    #[inline]
    pub fn is_scheduled(&self) -> bool {
        matches!(self.discipline, Discipline::Scheduled(_))
    }

    /// A packet that entered the link at `entered` leaves with its last bit at `tx_end`:
    /// returns when it reaches the far end and when the event of that arrival is scheduled.
    /// The pipeline's head has the one arrival event, scheduled when the packet entered the
    /// link or, if the packet before it had not arrived yet, when that one arrived: so
    /// `max(entered, last arrival)`. That holds for a packet that goes on ahead of time
    /// (`Link::admit_ahead` at the next link) too: its arrival, and whatever happens at it,
    /// keep the place among the events at that time they would have had.
    #[inline]
    pub fn depart(&mut self, entered: SimTime, tx_end: SimTime) -> (SimTime, SimTime) {
        let at = tx_end.saturating_add(self.delay);
        let scheduled = entered.max(self.last_arrival);
        self.last_arrival = at;
        (at, scheduled)
    }

    /// A transmission started: the packet, which entered the link at `entered`, joins the
    /// pipeline (on the wire, then propagating). Returns its arrival time at the far end and
    /// the time that event is scheduled at when it is the pipeline's head, i.e. when the
    /// caller must schedule an arrival event (otherwise the one pending covers it).
    #[inline]
    pub fn launch(&mut self, s: Started, entered: SimTime) -> Option<(SimTime, SimTime)> {
        let d = self.departure(s, entered);
        self.launch_departed(d)
    }

    /// [`Link::depart`] for a transmission started by a packet that entered at `entered`.
    #[inline(always)]
    pub fn departure(&mut self, s: Started, entered: SimTime) -> Departure {
        let (at, scheduled) = self.depart(entered, s.tx_end);
        Departure {
            item: s.item,
            tx_end: s.tx_end,
            at,
            scheduled,
        }
    }

    /// [`Link::launch`] for a transmission whose departure is already known
    /// ([`Link::departure`]).
    #[inline(always)]
    pub fn launch_departed(&mut self, d: Departure) -> Option<(SimTime, SimTime)> {
        let was_empty = self.pipeline.is_empty();
        self.pipeline
            .push_back((d.at, d.item.packet, self.epoch, d.scheduled));
        was_empty.then_some((d.at, d.scheduled))
    }

    /// The pipeline's head reached the far end: returns it, the arrival time of the next one,
    /// if any (for the caller to schedule), and whether the packet was lost because the link
    /// went down after its launch (counted in `down_drops`; the caller drops it).
    ///
    /// # Panics
    /// If the pipeline is empty (an arrival event without a packet).
    #[inline]
    pub fn pop_arrival(&mut self) -> (PacketId, Option<(SimTime, SimTime)>, bool) {
        let (_, id, epoch, _) = self
            .pipeline
            .pop_front()
            .expect("an arrival event has a packet");
        let lost = epoch != self.epoch;
        if lost {
            self.counters.down_drops += 1;
            self.drop_cause = DropCause::LinkDown;
        }
        (
            id,
            self.pipeline
                .front()
                .map(|&(at, _, _, scheduled)| (at, scheduled)),
            lost,
        )
    }

    /// The pipeline's head: its arrival time at the far end, the packet and when its arrival
    /// event is scheduled.
    pub fn peek_arrival(&self) -> Option<(SimTime, PacketId, SimTime)> {
        self.pipeline
            .front()
            .map(|&(at, id, _, scheduled)| (at, id, scheduled))
    }

    /// Whether the link is up.
    pub fn is_up(&self) -> bool {
        self.up
    }

    /// The link fails at `now`: the packets waiting in an event-driven queue are appended to
    /// `dropped` (a scheduled FIFO's waiting packets are already in the pipeline and are lost
    /// there), the transmission in progress is cut, and every packet launched so far is lost
    /// when it reaches the far end. Serialisation after `now` and the waiting packets are
    /// taken out of the counters, as [`Link::counters_at`] does. Nothing happens if the link
    /// is already down.
    pub fn go_down(&mut self, now: SimTime, dropped: &mut Vec<QueueItem>) {
        debug_assert!(
            self.lookahead.is_none(),
            "a link that admits ahead never fails"
        );
        if !self.up {
            return;
        }
        self.counters = self.counters_at(now);
        match &mut self.discipline {
            Discipline::Scheduled(f) => {
                // counters_at took them out of the transmitted counts: not sent after all.
                f.waiting.clear();
                f.waiting_bytes = 0;
            }
            Discipline::EventDriven(q) => {
                let before = dropped.len();
                while let Some(item) = q.dequeue(now) {
                    dropped.push(item);
                }
                self.counters.down_drops += (dropped.len() - before) as u64;
            }
        }
        self.busy_until = self.busy_until.min(now);
        self.up = false;
        self.epoch = self.epoch.wrapping_add(1);
        self.drop_cause = DropCause::LinkDown;
    }

    /// The link is repaired at `now` and carries packets again.
    pub fn go_up(&mut self) {
        self.up = true;
    }

    /// Packets on the wire or propagating.
    pub fn in_pipeline(&self) -> usize {
        self.pipeline.len()
    }

    /// The current transmission ended: start the next packet, if any (event-driven queues).
    #[inline]
    pub fn handle_transmit_done(&mut self, now: SimTime) -> Option<Started> {
        self.done_pending = false;
        self.account_queue(now);
        self.start_next(now)
    }

    #[inline]
    fn start_next(&mut self, now: SimTime) -> Option<Started> {
        let Discipline::EventDriven(q) = &mut self.discipline else {
            return None;
        };
        let item = q.dequeue(now)?;
        Some(self.transmit(now, item))
    }

    /// Puts `item` on the wire at `start`.
    #[inline]
    fn transmit(&mut self, start: SimTime, item: QueueItem) -> Started {
        let tx = match self.ns_per_byte {
            Some(k) => SimTime(item.bytes as u64 * k),
            None => self.tx_time_carry(item.bytes),
        };
        self.transmit_for(start, item, tx)
    }

    /// [`Link::transmit`] at `k` nanoseconds per byte (`ns_per_byte`).
    #[inline(always)]
    fn transmit_whole(&mut self, start: SimTime, item: QueueItem, k: u64) -> Started {
        self.transmit_for(start, item, SimTime(item.bytes as u64 * k))
    }

    /// Puts `item` on the wire at `start` for `tx`.
    #[inline(always)]
    fn transmit_for(&mut self, start: SimTime, item: QueueItem, tx: SimTime) -> Started {
        let tx_end = start.saturating_add(tx);
        self.busy_until = tx_end;
        self.counters.tx_packets += 1;
        self.counters.tx_bytes += item.bytes as u64;
        // `tx_end - start`, not `tx`: equal unless the end saturated (a zero rate), and the
        // busy intervals then still sum to at most `busy_until`, so this cannot overflow.
        self.counters.busy_ns += tx_end.0 - start.0;
        Started { item, tx_end }
    }

    /// The serialisation time of `bytes` at a rate that is not a whole number of nanoseconds
    /// per byte, carrying the remainder. Out of line: its 64-bit division and the constants it
    /// needs stay off the common path of a whole number.
    #[inline(never)]
    fn tx_time_carry(&mut self, bytes: u32) -> SimTime {
        self.rate.tx_time_carry(bytes as u64, &mut self.carry)
    }

    /// Whether a `TransmitDone` must be scheduled now: the link is busy, packets wait in an
    /// event-driven queue and no event is pending. Marks it pending and returns its time.
    #[inline]
    pub fn needs_done_event(&mut self, now: SimTime) -> Option<SimTime> {
        let Discipline::EventDriven(q) = &self.discipline else {
            return None;
        };
        if !self.done_pending && now < self.busy_until && !q.is_empty() {
            self.done_pending = true;
            Some(self.busy_until)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{FlowId, PacketId};
    use crate::net::queue::DropTail;
    use crate::rng::rng_from_seed;

    fn link(queue: Queue) -> Link {
        let rate = Rate::from_mbps(8); // 1000 B take 1 ms
        Link::new(
            "l".into(),
            false,
            NodeId(0),
            NodeId(1),
            rate,
            SimTime::from_millis(5),
            queue,
            None,
            rng_from_seed(1),
        )
    }

    fn item(i: u32) -> QueueItem {
        QueueItem {
            packet: PacketId(i),
            flow: FlowId(0),
            bytes: 1000,
        }
    }

    #[test]
    fn drops_are_reported_with_their_cause_and_launches_with_their_arrival() {
        let mut l = link(Queue::from(DropTail::new(Limit::Packets(1))));
        let mut d = Vec::new();
        // Idle: starts at once; 1 ms on the wire, 5 ms propagation; the pipeline's head.
        let s = l.handle_arrival(SimTime::ZERO, item(0), &mut d).unwrap();
        assert_eq!(
            l.launch(s, SimTime::ZERO),
            Some((SimTime::from_millis(6), SimTime::ZERO))
        );
        // One waits; the third overflows the one-packet queue.
        assert!(l.handle_arrival(SimTime::ZERO, item(1), &mut d).is_some());
        let started = l.handle_arrival(SimTime::ZERO, item(2), &mut d);
        assert_eq!(
            (started, l.drop_cause(), d.len()),
            (None, DropCause::Queue, 1)
        );
        // A second launch behind the head needs no new arrival event.
        let second = Started {
            item: item(1),
            tx_end: SimTime::from_millis(2),
        };
        assert_eq!(l.launch(second, SimTime::ZERO), None);
        assert_eq!(l.in_pipeline(), 2);
        assert_eq!(
            l.pop_arrival(),
            (
                PacketId(0),
                // Scheduled when the one before it arrives.
                Some((SimTime::from_millis(7), SimTime::from_millis(6))),
                false
            )
        );
        assert_eq!(l.pop_arrival(), (PacketId(1), None, false));

        let mut lossy = link(Queue::from(DropTail::new(Limit::Packets(10))));
        lossy.loss = Some(crate::net::loss::bernoulli::Bernoulli::new(1.0).into());
        d.clear();
        let started = lossy.handle_arrival(SimTime::ZERO, item(3), &mut d);
        assert_eq!((started, lossy.drop_cause()), (None, DropCause::LossModel));
        assert_eq!(d, [item(3)]);
        assert_eq!(lossy.loss_drops(), 1);
    }

    /// Drives an event-driven link like the simulator does and returns (packet, tx_end) in
    /// transmission order, plus the dropped packets.
    fn drive(
        mut l: Link,
        arrivals: &[(u64, u32)],
    ) -> (Vec<(u32, SimTime)>, Vec<u32>, LinkCounters) {
        let mut out = Vec::new();
        let mut dropped = Vec::new();
        let mut done_at: Option<SimTime> = None;
        let mut i = 0;
        loop {
            let next_arrival = arrivals.get(i).map(|&(t, _)| SimTime::from_micros(t));
            let now = match (done_at, next_arrival) {
                (Some(d), Some(a)) if d <= a => d,
                (Some(d), None) => d,
                (_, Some(a)) => a,
                (None, None) => break,
            };
            if done_at == Some(now) {
                done_at = None;
                if let Some(s) = l.handle_transmit_done(now) {
                    out.push((s.item.packet.0, s.tx_end));
                }
            } else {
                let mut d = Vec::new();
                if let Some(s) = l.handle_arrival(now, item(arrivals[i].1), &mut d) {
                    out.push((s.item.packet.0, s.tx_end));
                }
                dropped.extend(d.iter().map(|x| x.packet.0));
                i += 1;
            }
            if let Some(t) = l.needs_done_event(now) {
                done_at = Some(t);
            }
        }
        let end = SimTime::from_secs(1);
        let c = l.counters_at(end);
        (out, dropped, c)
    }

    #[test]
    fn scheduled_fifo_matches_the_event_driven_queue() {
        // A burst of 6 into a 3-packet buffer, then stragglers: same departures, same drops,
        // same queue integral whether departures are scheduled or event-driven.
        let arrivals = [
            (0, 0),
            (100, 1),
            (200, 2),
            (300, 3),
            (400, 4),
            (500, 5),
            (2500, 6),
            (9000, 7),
        ];
        let scheduled = {
            let mut l = link(Queue::from(DropTail::new(Limit::Packets(3))));
            let mut out = Vec::new();
            let mut dropped = Vec::new();
            for &(t, p) in &arrivals {
                let mut d = Vec::new();
                if let Some(s) = l.handle_arrival(SimTime::from_micros(t), item(p), &mut d) {
                    out.push((s.item.packet.0, s.tx_end));
                }
                assert!(l.needs_done_event(SimTime::from_micros(t)).is_none());
                dropped.extend(d.iter().map(|x| x.packet.0));
            }
            (out, dropped, l.counters_at(SimTime::from_secs(1)))
        };
        // The same FIFO run through the event-driven path: a custom boxed DropTail.
        let rate = Rate::from_mbps(8);
        let boxed = Queue::Custom(Box::new(crate::net::queue::DropTail::new(Limit::Packets(
            3,
        ))));
        let evented = Link::new(
            "l".into(),
            false,
            NodeId(0),
            NodeId(1),
            rate,
            SimTime::from_millis(5),
            boxed,
            None,
            rng_from_seed(1),
        );
        let evented = drive(evented, &arrivals);
        assert_eq!(scheduled.0, evented.0);
        assert_eq!(scheduled.1, evented.1);
        assert_eq!(scheduled.1, vec![4, 5]);
        assert_eq!(scheduled.2, evented.2);
        // Waiting times: packet 1 waits 0.9 ms, 2 waits 1.8 ms, 3 waits 2.7 ms, and 6 (arriving
        // at 2.5 ms behind 3) waits 1.5 ms.
        assert_eq!(
            scheduled.2.queue_area_packets_ns,
            900_000 + 1_800_000 + 2_700_000 + 1_500_000
        );
        assert_eq!(scheduled.2.tx_packets, 6);
        assert_eq!(scheduled.2.max_queue_packets, 3);
    }

    #[test]
    fn counters_at_excludes_what_has_not_started() {
        let mut l = link(Queue::from(DropTail::new(Limit::Packets(10))));
        let mut d = Vec::new();
        for p in 0..4 {
            l.handle_arrival(SimTime::ZERO, item(p), &mut d);
        }
        // At 1.5 ms: packet 0 done, 1 on the wire, 2 and 3 waiting (start at 2 ms and 3 ms).
        let c = l.counters_at(SimTime::from_micros(1500));
        assert_eq!(c.tx_packets, 2);
        assert_eq!(c.tx_bytes, 2000);
        // Waited so far: packet 1 for 1 ms, packets 2 and 3 for 1.5 ms each.
        assert_eq!(c.queue_area_packets_ns, 1_000_000 + 1_500_000 + 1_500_000);
        assert_eq!(l.queue_len(SimTime::from_micros(1500)), (2, 2000));
        assert_eq!(l.queue_len(SimTime::from_micros(3000)), (0, 0));
    }

    #[test]
    fn busy_time_excludes_the_serialisation_still_to_come() {
        // Scheduled FIFO: four 1 ms packets admitted at 0 are committed up to 4 ms, but only
        // the time already spent serialising counts at each reading.
        let mut l = link(Queue::from(DropTail::new(Limit::Packets(10))));
        let mut d = Vec::new();
        for p in 0..4 {
            l.handle_arrival(SimTime::ZERO, item(p), &mut d);
        }
        assert_eq!(l.counters_at(SimTime::ZERO).busy_ns, 0);
        assert_eq!(l.counters_at(SimTime::from_micros(1500)).busy_ns, 1_500_000);
        assert_eq!(l.counters_at(SimTime::from_micros(2500)).busy_ns, 2_500_000);
        // Idle from 4 ms: an arrival at 6.3 ms starts at once, and the gap is not counted.
        assert_eq!(l.counters_at(SimTime::from_millis(6)).busy_ns, 4_000_000);
        l.handle_arrival(SimTime::from_micros(6300), item(4), &mut d);
        l.handle_arrival(SimTime::from_micros(6300), item(5), &mut d);
        let c = l.counters_at(SimTime::from_micros(6800));
        assert_eq!(c.busy_ns, 4_500_000);
        assert_eq!(c.tx_packets, 5);
        // A window cut mid-packet at both edges: [1.5 ms, 7.8 ms] holds 2.5 ms of the first
        // burst and the 1.5 ms from 6.3 ms, out of 6.3 ms.
        let c = l.counters_at(SimTime::from_micros(7800));
        assert_eq!(c.busy_ns - 1_500_000, 4_000_000);
    }

    #[test]
    fn busy_time_of_an_event_driven_link() {
        let rate = Rate::from_mbps(8);
        let boxed = Queue::Custom(Box::new(crate::net::queue::DropTail::new(Limit::Packets(
            10,
        ))));
        let mut l = Link::new(
            "l".into(),
            false,
            NodeId(0),
            NodeId(1),
            rate,
            SimTime::ZERO,
            boxed,
            None,
            rng_from_seed(1),
        );
        let mut d = Vec::new();
        let s = l.handle_arrival(SimTime::ZERO, item(0), &mut d).unwrap();
        assert_eq!(s.tx_end, SimTime::from_millis(1));
        assert!(l.handle_arrival(SimTime::ZERO, item(1), &mut d).is_none());
        assert_eq!(l.counters_at(SimTime::from_micros(400)).busy_ns, 400_000);
        let done = l.needs_done_event(SimTime::from_micros(400)).unwrap();
        assert!(l.handle_transmit_done(done).is_some());
        let c = l.counters_at(SimTime::from_micros(1250));
        assert_eq!((c.busy_ns, c.tx_packets), (1_250_000, 2));
        assert_eq!(l.counters_at(SimTime::from_millis(5)).busy_ns, 2_000_000);
    }

    /// A scheduled FIFO that fails: the packet on the wire, the one propagating and the one
    /// waiting are lost at the far end, arrivals are dropped until it is up, then it carries
    /// packets again; the counters keep only what was really sent.
    #[test]
    fn a_failed_scheduled_link_loses_what_it_holds_and_drops_arrivals() {
        let mut l = link(Queue::from(DropTail::new(Limit::Packets(10))));
        let mut d = Vec::new();
        let t = SimTime::from_micros;
        // Packet 0 on the wire 0..1 ms, packet 1 waits, starts 1 ms, ends 2 ms.
        for i in 0..2 {
            let s = l.handle_arrival(SimTime::ZERO, item(i), &mut d).unwrap();
            l.launch(s, SimTime::ZERO);
        }
        // Down at 1.5 ms: packet 1 is half sent.
        l.go_down(t(1500), &mut d);
        assert!(d.is_empty() && !l.is_up());
        let c = l.counters_at(t(1500));
        assert_eq!((c.busy_ns, c.tx_packets, c.tx_bytes), (1_500_000, 2, 2000));
        assert!(l.handle_arrival(t(1600), item(2), &mut d).is_none());
        assert_eq!((d.len(), l.drop_cause()), (1, DropCause::LinkDown));
        // Both launched packets are lost at their arrival.
        assert_eq!(
            l.pop_arrival(),
            (PacketId(0), Some((t(7000), t(6000))), true)
        );
        assert_eq!(l.pop_arrival(), (PacketId(1), None, true));
        l.go_up();
        let s = l.handle_arrival(t(3000), item(3), &mut d).unwrap();
        assert_eq!(
            s.tx_end,
            t(4000),
            "the cut transmission does not hold the link"
        );
        l.launch(s, t(3000));
        assert_eq!(l.pop_arrival(), (PacketId(3), None, false));
        let c = l.counters_at(t(4000));
        assert_eq!((c.busy_ns, c.tx_packets, c.down_drops), (2_500_000, 3, 3));
    }

    /// An event-driven queue that fails hands back its waiting packets.
    #[test]
    fn a_failed_event_driven_link_drops_its_queue() {
        let boxed = Queue::Custom(Box::new(DropTail::new(Limit::Packets(10))));
        let mut l = link(boxed);
        let mut d = Vec::new();
        let s = l.handle_arrival(SimTime::ZERO, item(0), &mut d).unwrap();
        l.launch(s, SimTime::ZERO);
        for i in 1..3 {
            assert!(l.handle_arrival(SimTime::ZERO, item(i), &mut d).is_none());
        }
        l.go_down(SimTime::from_micros(250), &mut d);
        assert_eq!(d, [item(1), item(2)]);
        assert_eq!(l.queue_len(SimTime::from_micros(250)), (0, 0));
        let c = l.counters_at(SimTime::from_millis(1));
        assert_eq!((c.busy_ns, c.down_drops), (250_000, 2));
        // Going down twice changes nothing.
        l.go_down(SimTime::from_micros(300), &mut d);
        assert_eq!(d.len(), 2);
        assert_eq!(l.pop_arrival(), (PacketId(0), None, true));
    }

    #[test]
    fn busy_time_carries_fractional_nanoseconds() {
        // 1000 B at 3 Mb/s take 8/3 ms: 2666666, 2666667 and 2666667 ns with the carry, so
        // three packets are busy exactly 8 ms, and 4 ms in is exactly 4 ms.
        let rate = Rate(3_000_000);
        let mut l = Link::new(
            "l".into(),
            false,
            NodeId(0),
            NodeId(1),
            rate,
            SimTime::ZERO,
            Queue::from(DropTail::new(Limit::Packets(10))),
            None,
            rng_from_seed(1),
        );
        let mut d = Vec::new();
        for p in 0..3 {
            l.handle_arrival(SimTime::ZERO, item(p), &mut d);
        }
        assert_eq!(l.counters_at(SimTime::from_millis(4)).busy_ns, 4_000_000);
        assert_eq!(l.counters_at(SimTime::from_millis(9)).busy_ns, 8_000_000);
    }

    #[test]
    fn whole_and_fractional_nanoseconds_per_byte() {
        let mut d = Vec::new();
        // 100 Mb/s: 80 ns per byte exactly.
        let mut l = link(Queue::from(DropTail::new(Limit::Packets(10))));
        l.rate = Rate::from_mbps(100);
        l.ns_per_byte = Some(80);
        let s = l.handle_arrival(SimTime::ZERO, item(0), &mut d).unwrap();
        assert_eq!(s.tx_end, SimTime(80_000));
        // 3 Mb/s: 8000/3 us per 1000 B, remainders carried: three packets take exactly 8 ms.
        let rate = Rate(3_000_000);
        let mut l = Link::new(
            "l".into(),
            false,
            NodeId(0),
            NodeId(1),
            rate,
            SimTime::ZERO,
            Queue::from(DropTail::new(Limit::Packets(10))),
            None,
            rng_from_seed(1),
        );
        assert_eq!(l.ns_per_byte, None);
        let ends: Vec<SimTime> = (0..3)
            .map(|p| {
                l.handle_arrival(SimTime::ZERO, item(p), &mut d)
                    .unwrap()
                    .tx_end
            })
            .collect();
        assert_eq!(ends[2], SimTime::from_millis(8));
    }

    #[test]
    fn byte_limit_in_the_scheduled_fifo() {
        let mut l = link(Queue::from(DropTail::new(Limit::Bytes(2500))));
        let mut d = Vec::new();
        let started: Vec<bool> = (0..5)
            .map(|p| l.handle_arrival(SimTime::ZERO, item(p), &mut d).is_some())
            .collect();
        // One on the wire, two waiting (2000 B <= 2500 B), the rest dropped.
        assert_eq!(started, vec![true, true, true, false, false]);
        assert_eq!(d.len(), 2);
    }

    /// Admitted ahead to an idle link (the common case's shortcut), a lone packet is held to
    /// the queue's limit as any other: one of exactly the byte limit goes, one byte more is
    /// dropped, and a queue of no packets drops every arrival; the counters say so.
    #[test]
    fn a_lone_packet_admitted_ahead_meets_the_queue_limit() {
        let sized = |i: u32, bytes: u32| QueueItem { bytes, ..item(i) };
        let horizon = SimTime::from_secs(1);
        let mut l = link(Queue::from(DropTail::new(Limit::Bytes(1000))));
        assert!(l.enable_lookahead());
        let at = SimTime::from_millis(1);
        let d = l
            .admit_ahead(SimTime::ZERO, at, at, sized(0, 1000), horizon)
            .expect("fits exactly");
        assert_eq!(d.tx_end, SimTime::from_millis(2));
        assert_eq!(d.at, SimTime::from_millis(7));
        let at = SimTime::from_millis(10);
        assert_eq!(
            l.admit_ahead(SimTime::ZERO, at, at, sized(1, 1001), horizon),
            Err((DropCause::Queue, true))
        );
        let c = l.counters_at(SimTime::from_millis(20));
        assert_eq!((c.arrivals, c.tx_packets, c.queue_drops), (2, 1, 1));
        assert_eq!((c.tx_bytes, c.busy_ns), (1000, 1_000_000));

        let mut none = link(Queue::from(DropTail::new(Limit::Packets(0))));
        assert!(none.enable_lookahead());
        assert_eq!(
            none.admit_ahead(SimTime::ZERO, at, at, item(2), horizon),
            Err((DropCause::Queue, true))
        );
    }
}
