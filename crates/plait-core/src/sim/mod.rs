//! The simulator: one deterministic, single-threaded event loop per run.
//!
//! Packets live in a pool and events refer to them by index. Each link direction keeps at most
//! one pending `TransmitDone` and one pending `Arrive`: packets on the wire or propagating wait
//! in the link's FIFO pipeline (their arrival times are non-decreasing) and only the head has
//! an event, so the event queue holds a few entries per link rather than one per packet.
//!
//! The loop knows no protocol: each flow is a [`Transport`](crate::transport::Transport) and
//! the driver follows the contract in [`crate::transport`]: it hands every input to the
//! transport with an [`Outbox`] (the packets it sends go straight into the pool), then records
//! the events reported, re-arms the flow's one wake-up from `poll_timeout`, and puts the
//! packets sent on the routes of their paths. A flow's wake-up is cancelled lazily: the
//! flow remembers the earliest wake-up it has in the queue and ignores any other.
//!
//! What is done ahead of time (admissions down a route, arrivals handled when admitted) is in
//! `sim/ahead.rs`; the loop only calls it, and `RunConfig::lookahead` turns it off.

mod ahead;
pub mod budget;
pub mod build;
pub mod flow;
mod measure;

use crate::event::{Event, EventQueue};

use crate::ids::{FlowId, LinkId, PacketId, PathId, RouteId};
use crate::net::link::{Departure, DropCause, Link};
use crate::net::queue::QueueItem;
use crate::packet::pool::PacketPool;
use crate::packet::{Header, Packet};
use crate::time::SimTime;
use crate::trace::histogram::RttHistograms;
use crate::trace::meters::FlowMeters;
use crate::trace::results::RunResult;
use crate::trace::{NoTrace, Observer, TraceEvent};
use crate::transport::outbox::LocalRoom;
use crate::transport::{AnyTransport, Direction, FlowChange, Outbox, Transport, TransportEvent};
use ahead::Ahead;
use measure::Measurements;

pub use build::build;
use flow::Flow;

/// Packet accounting for the whole run: `created = delivered + dropped + in_flight`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketCounters {
    pub created: u64,
    pub delivered: u64,
    pub dropped: u64,
    /// Data packets (segments, datagrams) delivered to their destination.
    pub data_delivered: u64,
}

/// An input the driver hands a transport.
#[derive(Clone, Copy)]
enum Input {
    /// The packet in this pool slot arrived; the transport frees the slot after handling it.
    Packet(PacketId),
    Timeout,
    Start,
    Stop,
    /// The setting change of this index in `Simulator::flow_changes`.
    Change(u32),
}

/// Hands `input` to the transport `t` of flow `flow`, with an outbox writing the packets it
/// sends into `pool` (their slots appended to `sent`) and its events onto `events`. A packet
/// that arrived is read out of its slot, which the first packet sent in response takes (or
/// which is freed after the input, [`Outbox::finish`]). Returns the first packet sent to leave
/// now (the others are in `sent`, those that leave later in `later`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn feed<T: Transport + ?Sized>(
    t: &mut T,
    now: SimTime,
    input: Input,
    flow: FlowId,
    paths: &[flow::FlowPath],
    pool: &mut PacketPool,
    sent: &mut Vec<PacketId>,
    later: &mut Vec<(SimTime, PacketId)>,
    events: &mut Vec<TransportEvent>,
    data_sent: &mut u64,
    rtt: &mut RttHistograms,
    changes: &[FlowSettingChange],
    local: Option<&mut LocalRoom>,
) -> Option<PacketId> {
    let mut out;
    match input {
        Input::Packet(id) => {
            let p = pool.get(id);
            // A data segment copies only its own bytes, not the widest header's.
            let header = match &p.header {
                Header::TcpData(seg) => Header::TcpData(*seg),
                h => *h,
            };
            let (path, direction) = (p.path, p.direction);
            out = Outbox::new(flow, paths, pool, sent, later, events, data_sent, rtt)
                .reusing(id)
                .with_local(local);
            t.handle_packet(now, path, direction, &header, &mut out);
        }
        Input::Timeout => {
            out = Outbox::new(flow, paths, pool, sent, later, events, data_sent, rtt)
                .with_local(local);
            t.handle_timeout(now, &mut out);
        }
        Input::Start => {
            out = Outbox::new(flow, paths, pool, sent, later, events, data_sent, rtt)
                .with_local(local);
            t.handle_start(now, &mut out);
        }
        Input::Stop => {
            out = Outbox::new(flow, paths, pool, sent, later, events, data_sent, rtt)
                .with_local(local);
            t.handle_stop(now, &mut out);
        }
        Input::Change(i) => {
            out = Outbox::new(flow, paths, pool, sent, later, events, data_sent, rtt)
                .with_local(local);
            t.handle_change(now, &changes[i as usize].change, &mut out);
        }
    }
    out.finish()
}

/// [`feed`], then the transport's wake-up after the input.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn run<T: Transport + ?Sized>(
    t: &mut T,
    now: SimTime,
    input: Input,
    flow: FlowId,
    paths: &[flow::FlowPath],
    pool: &mut PacketPool,
    sent: &mut Vec<PacketId>,
    later: &mut Vec<(SimTime, PacketId)>,
    events: &mut Vec<TransportEvent>,
    data_sent: &mut u64,
    rtt: &mut RttHistograms,
    changes: &[FlowSettingChange],
    local: Option<&mut LocalRoom>,
) -> (Option<PacketId>, Option<SimTime>) {
    let first = feed(
        t, now, input, flow, paths, pool, sent, later, events, data_sent, rtt, changes, local,
    );
    (first, t.poll_timeout())
}

/// Records an event a transport reported while handling an input at `time`: into the flow's
/// meters (`warmed`: the warm-up has ended) and to the observer.
#[inline(always)]
fn record_event<O: Observer>(
    event: TransportEvent,
    time: SimTime,
    flow: FlowId,
    warmed: bool,
    meters: &mut FlowMeters,
    observer: &mut O,
) {
    match event {
        TransportEvent::RttSample { path, rtt } => {
            record_rtt(meters, warmed, path, rtt);
            if O::ENABLED {
                observer.on_event(&TraceEvent::RttSample { time, flow, rtt });
            }
        }
        TransportEvent::Finished => {
            if meters.completed_at.is_none() {
                meters.completed_at = Some(time);
            }
        }
        TransportEvent::Cwnd { cwnd_bytes, .. } => {
            if O::ENABLED {
                observer.on_event(&TraceEvent::Cwnd {
                    time,
                    flow,
                    cwnd_bytes,
                });
            }
        }
        TransportEvent::Delivered { bytes, .. } => {
            if O::ENABLED {
                observer.on_event(&TraceEvent::Delivered { time, flow, bytes });
            }
        }
        TransportEvent::Loss { path } => {
            if let Some(m) = meters.path_mut(path) {
                m.counters.fast_retransmits += 1;
            }
            if O::ENABLED {
                observer.on_event(&TraceEvent::Loss { time, flow, path });
            }
        }
        TransportEvent::Timeout { path } => {
            if let Some(m) = meters.path_mut(path) {
                m.counters.timeouts += 1;
            }
            if O::ENABLED {
                observer.on_event(&TraceEvent::Timeout { time, flow, path });
            }
        }
    }
}

/// An RTT sample on `path`, recorded after the warm-up.
#[inline(always)]
fn record_rtt(meters: &mut FlowMeters, warmed: bool, path: PathId, rtt: SimTime) {
    if warmed {
        meters.rtt.record(path.index(), rtt.as_nanos());
    }
}

/// A link direction that fails or is repaired at an instant (a scenario `[[event]]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkChange {
    pub at: SimTime,
    pub link: LinkId,
    pub up: bool,
}

/// A flow's setting that changes at an instant (a scenario `[[event]]` naming a flow).
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSettingChange {
    pub at: SimTime,
    pub flow: FlowId,
    pub change: FlowChange,
}

/// The scenario's `[[event]]`s, as the simulator schedules them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScheduledChanges {
    pub links: Vec<LinkChange>,
    pub losses: Vec<LossChange>,
    pub flows: Vec<FlowSettingChange>,
}

/// A link direction that gets a new loss model at an instant (a scenario `[[event]]` with
/// `loss`).
#[derive(Clone, Debug, PartialEq)]
pub struct LossChange {
    pub at: SimTime,
    pub link: LinkId,
    pub loss: crate::net::loss::LossSpec,
}

/// Run-wide settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunConfig {
    pub duration: SimTime,
    pub warmup: SimTime,
    pub seed: u64,
    pub sample_interval: Option<SimTime>,
    /// Keep every dropped packet for the `drops` table.
    pub trace_drops: bool,
    /// Do work ahead of time where it applies (`[simulation] lookahead`, on by default; see
    /// `sim/ahead.rs`): admissions at links fed by one upstream link, and arrivals handled when
    /// admitted. Off, every hop is an event; the results are the same either way (only the
    /// count of events differs).
    pub lookahead: bool,
}

/// A built scenario, ready to run.
pub struct Simulator<O: Observer = NoTrace> {
    now: SimTime,
    config: RunConfig,
    events: EventQueue,
    pool: PacketPool,
    links: Vec<Link>,
    routes: Vec<Box<[LinkId]>>,
    flows: Vec<Flow>,
    node_names: Vec<String>,
    observer: O,
    counters: PacketCounters,
    events_processed: u64,
    dropped_buf: Vec<QueueItem>,
    transmit_buf: Vec<PacketId>,
    /// The packets a transport sent in its last input to leave later, with their times
    /// ([`Outbox::send_at`]).
    later_buf: Vec<(SimTime, PacketId)>,
    /// The events a transport reported while handling its last input.
    event_buf: Vec<TransportEvent>,
    measure: Measurements,
    finished: bool,
    flow_changes: Vec<FlowSettingChange>,
    loss_changes: Vec<LossChange>,
    /// The work done ahead of time ([`ahead`]).
    ahead: Ahead,
    next_sample: SimTime,
    /// The end of the slice being run.
    slice_end: SimTime,
    /// Events the last slice processed past its event budget.
    overrun: u64,
    /// The slice has used its event budget: everything admitted ahead is recorded from then
    /// on, so that the slice can stop soon.
    budget_spent: bool,
}

/// Where a packet is on its route: what putting it on the wire needs of it.
#[derive(Clone, Copy)]
struct RoutePlace {
    route: RouteId,
    /// The hop it is on (the index of its link in the route).
    hop: usize,
    /// Data, not feedback.
    data: bool,
    path: PathId,
}

impl RoutePlace {
    #[inline(always)]
    fn of(p: &Packet) -> Self {
        RoutePlace {
            route: p.route,
            hop: p.hop as usize,
            data: !p.is_feedback(),
            path: p.path,
        }
    }
}

impl<O: Observer> Simulator<O> {
    pub(crate) fn assemble(
        config: RunConfig,
        links: Vec<Link>,
        routes: Vec<Box<[LinkId]>>,
        mut flows: Vec<Flow>,
        node_names: Vec<String>,
        changes: ScheduledChanges,
        observer: O,
    ) -> Self {
        let mut events = EventQueue::new();

        let ScheduledChanges {
            links: link_changes,
            losses: loss_changes,
            flows: flow_changes,
        } = changes;
        for c in &link_changes {
            let event = if c.up {
                Event::LinkUp(c.link)
            } else {
                Event::LinkDown(c.link)
            };
            events.push(c.at, event);
        }
        for (i, c) in loss_changes.iter().enumerate() {
            events.push(c.at, Event::LossChange(i as u32));
        }
        for (i, c) in flow_changes.iter().enumerate() {
            events.push(c.at, Event::FlowChange(i as u32));
        }
        for f in &mut flows {
            f.transport.set_tracing(O::ENABLED);
        }
        for (i, f) in flows.iter().enumerate() {
            let id = FlowId::from_index(i);
            events.push(f.start, Event::FlowStart(id));
            if let Some(stop) = f.stop {
                events.push(stop, Event::FlowStop(id));
            }
        }
        if config.warmup > SimTime::ZERO {
            events.push(config.warmup, Event::WarmupEnd);
        }
        let mut next_sample = SimTime::MAX;
        if let Some(dt) = config.sample_interval {
            if dt > SimTime::ZERO {
                events.push(dt, Event::Sample);
                next_sample = dt;
            }
        }
        let measure = Measurements::new(&config, links.len());
        let mut links = links;
        let ahead = Ahead::plan(
            config.lookahead,
            &mut links,
            &routes,
            &flows,
            &link_changes,
            &loss_changes,
        );
        let mut sim = Simulator {
            now: SimTime::ZERO,
            config,
            events,
            pool: PacketPool::default(),
            links,
            routes,
            flows,
            node_names,
            observer,
            counters: PacketCounters::default(),
            events_processed: 0,
            dropped_buf: Vec::new(),
            transmit_buf: Vec::new(),
            later_buf: Vec::new(),
            event_buf: Vec::new(),
            measure,
            finished: false,
            flow_changes,
            loss_changes,
            ahead,
            next_sample,
            slice_end: SimTime::ZERO,
            overrun: 0,
            budget_spent: false,
        };
        sim.direct_rtt();
        sim
    }

    /// Whether the flows' RTT samples go straight into their histograms
    /// ([`RttHistograms::direct`]): when recording one is all `record_event` would do with it
    /// (untraced, warmed up). Set whenever either changes.
    fn direct_rtt(&mut self) {
        let direct = !O::ENABLED && self.measure.warmed_up;
        for f in &mut self.flows {
            f.meters.rtt.direct = direct;
        }
    }

    /// Replaces the observer (e.g. a [`crate::trace::Recorder`] for tests).
    pub fn with_observer<P: Observer>(mut self, observer: P) -> Simulator<P> {
        for f in &mut self.flows {
            f.transport.set_tracing(P::ENABLED);
        }
        if P::ENABLED {
            // An observer sees each arrival at its time: none is handled ahead.
            self.ahead.stop_reactions();
        }
        let mut sim = Simulator {
            now: self.now,
            config: self.config,
            events: self.events,
            pool: self.pool,
            links: self.links,
            routes: self.routes,
            flows: self.flows,
            node_names: self.node_names,
            observer,
            counters: self.counters,
            events_processed: self.events_processed,
            dropped_buf: self.dropped_buf,
            transmit_buf: self.transmit_buf,
            later_buf: self.later_buf,
            event_buf: self.event_buf,
            measure: self.measure,
            finished: self.finished,
            flow_changes: self.flow_changes,
            loss_changes: self.loss_changes,
            ahead: self.ahead,
            next_sample: self.next_sample,
            slice_end: self.slice_end,
            overrun: self.overrun,
            budget_spent: self.budget_spent,
        };
        sim.direct_rtt();
        sim
    }

    pub fn now(&self) -> SimTime {
        self.now
    }
    pub fn config(&self) -> &RunConfig {
        &self.config
    }
    pub fn observer(&self) -> &O {
        &self.observer
    }
    /// Rows the traces hold so far: dropped packets (`trace_drops`) and scheduler decisions
    /// (`trace_picks`). A run checks them against its memory limit between slices
    /// ([`budget::MemoryEstimate::trace_row_limit`]).
    pub fn trace_rows(&self) -> u64 {
        let picks: usize = self
            .flows
            .iter()
            .filter_map(|f| f.transport.as_mptcp())
            .map(|c| c.picks().len())
            .sum();
        self.measure.drop_rows().saturating_add(picks as u64)
    }
    /// Events waiting in the queue.
    pub fn pending_events(&self) -> usize {
        self.events.len()
    }
    pub fn events_processed(&self) -> u64 {
        self.events_processed
    }
    /// Events the last slice processed past its event budget (`run_until_bounded`): those
    /// until the packets admitted ahead of time without a record had arrived.
    pub fn budget_overrun(&self) -> u64 {
        self.overrun
    }
    /// Drops decided ahead of time that were counted when decided, without going through the
    /// event queue (they are among `events_processed`).
    pub fn drops_folded(&self) -> u64 {
        self.ahead.drops_folded
    }
    /// Arrivals at a receiving end handled ahead of their time, without an event in the
    /// queue (they are among `events_processed`; see [`Transport::reacts_ahead`]).
    pub fn reactions_ahead(&self) -> u64 {
        self.ahead.reactions
    }
    pub fn packet_counters(&self) -> PacketCounters {
        self.counters
    }
    /// Packets currently in the network (queued, on the wire or propagating).
    pub fn packets_in_flight(&self) -> u64 {
        self.pool.live() as u64
    }
    pub fn flows(&self) -> &[Flow] {
        &self.flows
    }
    pub fn links(&self) -> &[Link] {
        &self.links
    }
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The flow named `name`, if any.
    pub fn flow_id(&self, name: &str) -> Option<FlowId> {
        self.flows
            .iter()
            .position(|f| f.name == name)
            .map(FlowId::from_index)
    }

    /// Replaces a flow's transport before the run starts: the extension point for protocols
    /// defined outside the crate (`AnyTransport::Custom`). The flow keeps its name, ends,
    /// paths, start and stop; its kind becomes the transport's and its controller name `cc`.
    ///
    /// # Errors
    /// When the run has already processed an event (the old transport may have sent packets).
    pub fn set_transport(
        &mut self,
        flow: FlowId,
        mut transport: AnyTransport,
        cc: &'static str,
    ) -> Result<(), &'static str> {
        if self.events_processed > 0 {
            return Err("a flow's transport can only be replaced before the run starts");
        }
        transport.set_tracing(O::ENABLED);
        let f = &mut self.flows[flow.index()];
        f.kind = transport.kind();
        f.cc = cc.to_string();
        f.transport = transport;
        if !self.flows[flow.index()].transport.reacts_ahead() {
            self.stop_reactions_beside(flow);
        }
        Ok(())
    }

    /// Runs to the end of the scenario.
    pub fn run(&mut self) {
        self.run_until(self.config.duration);
    }

    /// Processes every event strictly before `limit` (capped at the scenario's duration).
    /// Returns true when the run has reached its end. Can be called repeatedly to run in
    /// slices (progress reporting, interruption).
    pub fn run_until(&mut self, limit: SimTime) -> bool {
        self.run_until_bounded(limit, u64::MAX)
    }

    /// Like [`Simulator::run_until`], but processes about `max_events` events. A slice that
    /// stops on its event budget leaves `now` at the last event it processed, so a run whose
    /// simulated time does not advance (zero delays, enormous rates) can still be sliced, and
    /// interrupted, by wall-clock work. It may go a little past the budget: until what was
    /// done ahead of time without a record has happened (the packets admitted ahead have
    /// arrived, and the arrivals handled ahead and their answers too: at most a round trip of
    /// simulated time, queueing included), so that its readings stay exact. Returns true when
    /// the run has reached its end.
    pub fn run_until_bounded(&mut self, limit: SimTime, max_events: u64) -> bool {
        if max_events == 0 {
            return self.finished;
        }
        let end = limit.min(self.config.duration);
        self.slice_end = end;
        self.overrun = 0;
        self.budget_spent = false;
        self.update_horizon();
        // Compared with the event counter the loop keeps anyway: no second counter per event.
        let stop_at = self.events_processed.saturating_add(max_events);
        let mut exhausted = false;
        while let Some((t, ev)) = self.events.pop_before(end) {
            self.now = t;
            self.events_processed += 1;
            self.dispatch(ev);
            // The budget is spent from the event that reaches `stop_at` on, and only this loop
            // spends it: one comparison per event until then.
            if self.events_processed >= stop_at {
                if !self.budget_spent {
                    self.budget_spent = true;
                    self.update_horizon();
                }
                if self.now >= self.ahead.unrecorded_until {
                    exhausted = self.events.peek_time().is_some_and(|t| t < end);
                    break;
                }
            }
        }
        self.overrun = self.events_processed.saturating_sub(stop_at);
        self.end_slice(end, exhausted)
    }

    /// After a slice up to `end`: time moves to `end` unless the slice stopped early
    /// (`exhausted`), and the link counters are read for `results`.
    fn end_slice(&mut self, end: SimTime, exhausted: bool) -> bool {
        if !exhausted {
            if end > self.now {
                self.now = end;
            }
            if end >= self.config.duration {
                self.finished = true;
            }
        }
        if exhausted {
            self.realize_ahead(self.now, self.events.scheduled());
        } else {
            self.realize_ahead(self.now, SimTime::ZERO);
        }
        self.measure.on_slice_end(self.now, &mut self.links);
        self.finished
    }

    #[inline(always)]
    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::Arrive(l) => self.handle_arrive(l),
            Event::TransmitDone(l) => self.handle_transmit_done(l),
            Event::FlowTimer(f) => self.handle_flow_timer(f),
            Event::FlowStart(f) => self.handle_flow_start(f),
            Event::FlowStop(f) => self.handle_flow_stop(f),
            Event::Sample => self.handle_sample(),
            Event::WarmupEnd => self.handle_warmup_end(),
            Event::LinkDown(l) => self.handle_link_down(l),
            Event::LinkUp(l) => self.links[l.index()].go_up(),
            Event::LossChange(i) => {
                let c = &self.loss_changes[i as usize];
                self.links[c.link.index()].loss = Some(c.loss.build(()));
            }
            Event::FlowChange(i) => {
                let f = self.flow_changes[i as usize].flow;
                self.handle(f, Input::Change(i));
            }
            Event::DropAhead(l) => self.handle_drop_ahead(l),
            Event::Release(id) => self.handle_release(id),
            Event::ReleaseLocal(id) => self.handle_release_local(id),
        }
    }

    // ---- network -------------------------------------------------------------------------

    /// Packet `id` enters the link of its current hop, and goes on ahead of time as far as it
    /// can (`launch_from`).
    #[inline(always)]
    fn enter_link(&mut self, id: PacketId) {
        self.enter_link_at(id, self.now, SimTime::ZERO);
    }

    /// [`Simulator::enter_link`] at `at`: the simulator's time, or, for the answer of an
    /// arrival handled ahead (`react_ahead`), that arrival's time, whose event would have
    /// been scheduled at `scheduled`. Out of line: the links' code is then compiled apart from
    /// the transports' that call it, and changes to one no longer move the other's registers
    /// (measured: the same instructions per packet, and a stable count across such changes);
    /// and the answers share it with every other packet.
    #[inline(never)]
    fn enter_link_at(&mut self, id: PacketId, at: SimTime, scheduled: SimTime) {
        let p = self.pool.get(id);
        let place = RoutePlace::of(p);
        let link = self.routes[p.route.index()][p.hop as usize];
        let item = QueueItem {
            packet: id,
            flow: p.flow,
            bytes: p.size_bytes,
        };
        let now = self.now;
        let l = &mut self.links[link.index()];
        if l.is_scheduled() {
            let d = if l.has_lookahead() {
                // A first link that admits the answers of reactions ahead of time.
                match self.admit_answer(link, item, at, scheduled) {
                    Some(d) => d,
                    None => return,
                }
            } else {
                match l.arrive_scheduled(now, item) {
                    Ok(s) => l.departure(s, now),
                    Err(cause) => return self.drop_packet(link, item, cause),
                }
            };
            self.launch_from(link, d, place);
            return;
        }
        self.enter_event_driven_link(link, item);
    }

    /// [`Simulator::enter_link`] for a link whose queue is event-driven (RED, the
    /// threshold-dropper).
    #[inline(never)]
    fn enter_event_driven_link(&mut self, link: LinkId, item: QueueItem) {
        let now = self.now;
        let l = &mut self.links[link.index()];
        self.dropped_buf.clear();
        let started = l.handle_arrival(now, item, &mut self.dropped_buf);
        let departure = started.map(|s| l.departure(s, now));
        let done = l.needs_done_event(now);
        if let Some(d) = departure {
            self.launch(link, d);
        }
        if let Some(t) = done {
            self.events.push(t, Event::TransmitDone(link));
        }
        if !self.dropped_buf.is_empty() {
            self.drop_buffered(link);
        }
    }

    /// Drops the packets `link` put in `dropped_buf`, for the cause it reports.
    fn drop_buffered(&mut self, link: LinkId) {
        let cause = self.links[link.index()].drop_cause();
        let mut dropped = std::mem::take(&mut self.dropped_buf);
        for d in dropped.drain(..) {
            self.drop_packet(link, d, cause);
        }
        self.dropped_buf = dropped;
    }

    /// Puts a started transmission on `link`'s pipeline, or, when the packet's next link
    /// admits ahead of time, admits it there at once with its arrival time, and so on down
    /// the route: only the last link reached this way needs an arrival event.
    #[inline]
    fn launch(&mut self, link: LinkId, d: Departure) {
        let place = RoutePlace::of(self.pool.get(d.item.packet));
        self.launch_from(link, d, place);
    }

    fn drop_packet(&mut self, link: LinkId, item: QueueItem, cause: DropCause) {
        if self.config.trace_drops {
            let p = self.pool.get(item.packet);
            self.measure
                .on_drop(self.now, item.flow, link, cause, p.is_feedback(), p.path);
        }
        self.pool.free(item.packet);
        self.counters.dropped += 1;
        self.flows[item.flow.index()].meters.drops += 1;
        if O::ENABLED {
            self.observer.on_event(&TraceEvent::Drop {
                time: self.now,
                link,
                flow: item.flow,
                cause,
            });
        }
    }

    #[inline]
    fn handle_transmit_done(&mut self, link: LinkId) {
        let now = self.now;
        let l = &mut self.links[link.index()];
        let started = l.handle_transmit_done(now);
        let departure = started.map(|s| l.departure(s, now));
        let done = l.needs_done_event(now);
        if let Some(d) = departure {
            self.launch(link, d);
        }
        if let Some(t) = done {
            self.events.push(t, Event::TransmitDone(link));
        }
    }

    #[inline]
    fn handle_arrive(&mut self, link: LinkId) {
        let (id, next, lost) = self.links[link.index()].pop_arrival();
        // The next arrival, if it can be handled ahead, is, after this one.
        let mut drain = false;
        if let Some((next, scheduled)) = next {
            if self.ahead.is_answered_over(link) && self.head_reacts_ahead(link) {
                drain = true;
            } else {
                self.events.push_as_of(next, scheduled, Event::Arrive(link));
            }
        }
        if lost {
            debug_assert!(!drain, "a link admitted ahead never fails");
            let p = self.pool.get(id);
            let item = QueueItem {
                packet: id,
                flow: p.flow,
                bytes: p.size_bytes,
            };
            self.drop_packet(link, item, DropCause::LinkDown);
            return;
        }
        let p = self.pool.get_mut(id);
        p.hop += 1;
        let (route, hop) = (p.route, p.hop as usize);
        if hop == 1 && !p.is_feedback() {
            // Wire throughput counts the data that left the sender's access link (the first
            // hop of its route), so not what that link's queue or loss model dropped. Feedback
            // (ACKs) finishes the first hop of the reverse route and adds nothing.
            credit_wire_bytes(&mut self.flows[p.flow.index()].meters, p.path, p.size_bytes);
        }
        if hop < self.routes[route.index()].len() {
            self.enter_link(id);
        } else {
            self.counters.delivered += 1;
            self.deliver(id);
        }
        if drain {
            self.drain_reactions(link);
        }
    }

    // ---- endpoints -----------------------------------------------------------------------

    /// A packet reached the end of its route: its transport handles it where it lies in the
    /// pool (no copy of its header), and its slot is freed.
    #[inline]
    fn deliver(&mut self, id: PacketId) {
        let p = self.pool.get(id);
        if p.direction == Direction::Forward {
            self.counters.data_delivered += 1;
        }
        self.handle(p.flow, Input::Packet(id));
    }

    /// One input to flow `f`'s transport, and the driver's half of the contract after it:
    /// record the events, re-arm the flow's wake-up, then put the packets sent on the first
    /// link of their routes, in the order they were sent.
    #[inline(always)]
    fn handle(&mut self, f: FlowId, input: Input) {
        if self.flows[f.index()].local.is_some() {
            return self.handle_local(f, input);
        }
        self.handle_as::<false>(f, input);
    }

    /// [`Simulator::handle`] for a flow whose paths start on local links: their room is read
    /// before the input and their refusals counted after it. Apart, so that the other flows'
    /// inputs take the path without these steps.
    #[inline(never)]
    fn handle_local(&mut self, f: FlowId, input: Input) {
        self.handle_as::<true>(f, input);
    }

    /// [`Simulator::handle`], for a flow with local links (`LOCAL`, [`Flow::local`]) or
    /// without.
    #[inline(always)]
    fn handle_as<const LOCAL: bool>(&mut self, f: FlowId, input: Input) {
        let now = self.now;
        let flow = &mut self.flows[f.index()];
        if LOCAL {
            if let Some(local) = flow.local.as_deref_mut() {
                read_local_room(local, &mut self.links, now);
            }
        }
        self.transmit_buf.clear();
        let (pool, sent, events) = (&mut self.pool, &mut self.transmit_buf, &mut self.event_buf);
        let later = &mut self.later_buf;
        let (paths, changes) = (&flow.paths[..], &self.flow_changes[..]);
        let meters = &mut flow.meters;
        let (data_sent, rtt) = (&mut meters.data_packets_sent, &mut meters.rtt);
        let local = if LOCAL {
            flow.local.as_deref_mut()
        } else {
            None
        };
        // One dispatch per input: the calls inside `feed` are static for the built-ins.
        let (first, deadline) = match &mut flow.transport {
            AnyTransport::Tcp(t) => run(
                t, now, input, f, paths, pool, sent, later, events, data_sent, rtt, changes, local,
            ),
            AnyTransport::Datagram(t) => run(
                t, now, input, f, paths, pool, sent, later, events, data_sent, rtt, changes, local,
            ),
            AnyTransport::Mptcp(t) => run(
                &mut **t, now, input, f, paths, pool, sent, later, events, data_sent, rtt, changes,
                local,
            ),
            AnyTransport::Tfrc(t) => run(
                &mut **t, now, input, f, paths, pool, sent, later, events, data_sent, rtt, changes,
                local,
            ),
            AnyTransport::Mpat(t) => run(
                &mut **t, now, input, f, paths, pool, sent, later, events, data_sent, rtt, changes,
                local,
            ),
            AnyTransport::Custom(t) => run(
                &mut **t, now, input, f, paths, pool, sent, later, events, data_sent, rtt, changes,
                local,
            ),
        };
        if LOCAL {
            if let Some(local) = flow.local.as_deref_mut() {
                count_refusals(local, &mut self.links);
            }
        }
        if !self.event_buf.is_empty() {
            let warmed = self.measure.warmed_up;
            for &e in &self.event_buf {
                record_event(e, now, f, warmed, &mut flow.meters, &mut self.observer);
            }
            self.event_buf.clear();
        }
        flow.deadline = deadline;
        if let Some(t) = deadline {
            // A deadline already passed fires now (and must match `timer_scheduled` then).
            let t = t.max(now);
            if flow.timer_scheduled.is_none_or(|s| t < s) {
                flow.timer_scheduled = Some(t);
                self.events.push(t, Event::FlowTimer(f));
            }
        }
        if !self.later_buf.is_empty() {
            self.hold_later::<LOCAL>();
        }
        let Some(first) = first else {
            return;
        };
        self.counters.created += 1 + self.transmit_buf.len() as u64;
        self.put_on_route(f, first);
        // Putting packets on links calls no transport, so the buffer stays as it is meanwhile.
        for i in 0..self.transmit_buf.len() {
            let id = self.transmit_buf[i];
            self.put_on_route(f, id);
        }
    }

    /// Packet `id`, sent by flow `f`'s transport, enters the first link of its route (a data
    /// packet of a flow with several paths counts as its path's; the outbox counted it as the
    /// flow's).
    #[inline(always)]
    fn put_on_route(&mut self, f: FlowId, id: PacketId) {
        let meters = &mut self.flows[f.index()].meters;
        if !meters.paths.is_empty() {
            let p = self.pool.get(id);
            if p.direction == Direction::Forward {
                if let Some(m) = meters.path_mut(p.path) {
                    m.counters.packets_sent += 1;
                }
            }
        }
        self.enter_link(id);
    }

    /// The packets the last input sent to leave later: each enters its route at its time
    /// (`Event::Release`), in the order sent among those due at the same time.
    #[inline(always)]
    fn hold_later<const LOCAL: bool>(&mut self) {
        self.counters.created += self.later_buf.len() as u64;
        for &(at, id) in &self.later_buf {
            if LOCAL {
                self.events.push_release_local(at.max(self.now), id);
            } else {
                self.events.push_release(at.max(self.now), id);
            }
        }
        if LOCAL {
            for i in 0..self.later_buf.len() {
                self.hold_for_local_link(self.later_buf[i].1);
            }
        }
        self.later_buf.clear();
    }

    /// Packet `id`, held by host noise, will enter the first link of its route later: if that
    /// link is local, its queue counts it as taken until then ([`Link::room`]).
    #[inline(never)]
    fn hold_for_local_link(&mut self, id: PacketId) {
        let first = self.routes[self.pool.get(id).route.index()][0];
        let l = &mut self.links[first.index()];
        if l.local {
            l.held += 1;
        }
    }

    /// Packet `id`, held by host noise, enters the first link of its route now.
    #[inline(never)]
    fn release_for_local_link(&mut self, id: PacketId) {
        let first = self.routes[self.pool.get(id).route.index()][0];
        let l = &mut self.links[first.index()];
        if l.local {
            l.held -= 1;
        }
    }

    /// A packet a host held ([`Outbox::send_at`]) leaves it now.
    #[inline]
    fn handle_release(&mut self, id: PacketId) {
        let f = self.pool.get(id).flow;
        self.put_on_route(f, id);
    }

    /// [`Simulator::handle_release`] for a flow with local links (`Event::ReleaseLocal`).
    #[inline(never)]
    fn handle_release_local(&mut self, id: PacketId) {
        let f = self.pool.get(id).flow;
        self.release_for_local_link(id);
        self.put_on_route(f, id);
    }

    fn handle_flow_timer(&mut self, f: FlowId) {
        let flow = &mut self.flows[f.index()];
        if flow.timer_scheduled != Some(self.now) {
            return; // superseded by an earlier wake-up
        }
        flow.timer_scheduled = None;
        // A wake-up the transport has since moved later (a retransmission timer restarted by
        // every ACK) is only re-armed: nothing of the transport changed since its last input,
        // so it has nothing to do before the wake-up it reported then.
        match flow.deadline {
            None => return,
            Some(t) if t > self.now => {
                flow.timer_scheduled = Some(t);
                self.events.push(t, Event::FlowTimer(f));
                return;
            }
            Some(_) => {}
        }
        self.handle(f, Input::Timeout);
    }

    #[inline(never)]
    fn handle_flow_start(&mut self, f: FlowId) {
        if self.flows[f.index()].stop.is_some_and(|s| s <= self.now) {
            return;
        }
        self.handle(f, Input::Start);
    }

    #[inline(never)]
    fn handle_flow_stop(&mut self, f: FlowId) {
        self.handle(f, Input::Stop);
    }

    /// A link direction fails: what its queue held is dropped now, what it had launched is
    /// lost at the far end (`Link::go_down`).
    #[inline(never)]
    fn handle_link_down(&mut self, link: LinkId) {
        self.dropped_buf.clear();
        self.links[link.index()].go_down(self.now, &mut self.dropped_buf);
        if !self.dropped_buf.is_empty() {
            self.drop_buffered(link);
        }
    }

    // ---- measurement ---------------------------------------------------------------------

    #[inline(never)]
    fn handle_warmup_end(&mut self) {
        self.realize_ahead(self.now, self.events.scheduled());
        self.measure
            .on_warmup_end(self.now, &mut self.flows, &mut self.links);
        self.direct_rtt();
        self.update_horizon();
    }

    #[inline(never)]
    fn handle_sample(&mut self) {
        let now = self.now;
        let Some(dt) = self.config.sample_interval else {
            return;
        };
        self.realize_ahead(now, self.events.scheduled());
        self.measure
            .sample(now, dt, &mut self.flows, &mut self.links);
        let next = now.saturating_add(dt);
        if next < self.config.duration {
            self.events.push(next, Event::Sample);
            self.next_sample = next;
        } else {
            self.next_sample = SimTime::MAX;
        }
        self.update_horizon();
    }

    /// The result tables over the measurement window [warmup, now]: after [`Simulator::run`]
    /// that is [warmup, duration]; after a slice that stopped earlier, the part simulated so
    /// far (rates and utilisations are NaN before the warm-up ends).
    pub fn results(&self) -> RunResult {
        self.measure.results(
            self.now,
            &self.config,
            &self.flows,
            &self.links,
            &self.routes,
            &self.node_names,
            self.events_processed,
            self.counters.data_delivered,
        )
    }
}

/// Reads what the local links a flow's paths start on can take now, before an input.
#[inline(never)]
fn read_local_room(local: &mut LocalRoom, links: &mut [Link], now: SimTime) {
    local.start_input();
    for q in local.queues_mut() {
        let l = &mut links[q.link.index()];
        q.room = l
            .room(now)
            .expect("a local link has a drop-tail queue (validated)");
        q.refused = 0;
    }
}

/// After an input: the segments the local links refused, into the links' and the flow's
/// counters.
#[inline(never)]
fn count_refusals(local: &mut LocalRoom, links: &mut [Link]) {
    for q in local.queues_mut() {
        links[q.link.index()].refusals += u64::from(q.refused);
        q.total += u64::from(q.refused);
        q.refused = 0;
    }
}

/// Adds the wire bytes of a data packet that left its flow's first hop.
#[inline]
fn credit_wire_bytes(meters: &mut FlowMeters, path: PathId, bytes: u32) {
    meters.wire_bytes_sent += bytes as u64;
    if let Some(m) = meters.path_mut(path) {
        m.counters.wire_bytes_sent += bytes as u64;
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::Scenario;
    use crate::trace::Recorder;

    /// RTT samples that go straight into the histograms (untraced, after the warm-up,
    /// `RttHistograms::direct`) give the flows' and the paths' RTT columns that recording
    /// each reported event gives (traced): TCP, MPTCP and MPAT flows, with a warm-up.
    #[test]
    fn rtt_samples_recorded_directly_give_the_histograms_their_events_give() {
        for toml in [
            include_str!("../../../../tests/golden/mptcp_outage.toml"),
            include_str!("../../../../tests/golden/mpat.toml"),
        ] {
            let scenario = Scenario::from_toml_str(toml, "<golden>", &[]).expect("parses");
            let mut untraced = super::build(&scenario, None).expect("builds");
            untraced.run();
            assert!(untraced.flows.iter().all(|f| f.meters.rtt.direct));
            let mut traced = super::build(&scenario, None)
                .expect("builds")
                .with_observer(Recorder::default());
            traced.run();
            assert!(traced.flows.iter().all(|f| !f.meters.rtt.direct));
            let (a, b) = (untraced.results(), traced.results());
            assert_eq!(json(&a.flows), json(&b.flows));
            assert_eq!(json(&a.paths), json(&b.paths));
            let samples: u64 = untraced
                .flows
                .iter()
                .map(|f| f.meters.rtt.flow().count())
                .sum();
            let on_paths: u64 = untraced
                .flows
                .iter()
                .flat_map(|f| &f.meters.rtt.paths)
                .map(|h| h.count())
                .sum();
            assert!(samples > 1000 && on_paths > 1000, "{samples} {on_paths}");
        }
    }

    fn json<T: serde::Serialize>(t: &T) -> String {
        serde_json::to_string(t).expect("serialisable")
    }
}
