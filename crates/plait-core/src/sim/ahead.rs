//! Work done ahead of time: what the event loop may decide before the event that would
//! decide it, because nothing can change the outcome in between (`docs/architecture.md`,
//! "Admission ahead of time" and "Reactions ahead of time").
//!
//! - **Admission ahead.** A drop-tail link whose only input is one upstream link (every
//!   route through it enters from that link, none starts on it), and that neither it nor that
//!   link ever fails or (for it) changes its loss model, receives exactly that link's
//!   departures, in order, a propagation delay later. A packet leaving upstream is admitted
//!   there at once with its arrival time ([`Link::admit_ahead`]), and so on down the route
//!   (`launch_from`); the link's ledger keeps its readings exact in between.
//! - **Reactions ahead.** Untraced, the arrival of data at its destination over such a link
//!   is handled when it is admitted there (`react_ahead`), when its flow says its receiving
//!   end allows it ([`Transport::reacts_ahead`]) and the first link of its reverse route
//!   carries nothing but such answers (`enable_reactions`).
//!
//! The driver (`sim/mod.rs`) calls in here at four places: `launch_from` when a transmission
//! leaves a link, `admit_answer` when an answer enters a route's first link admitting
//! ahead, `drain_reactions` after an arrival, and `realize_ahead` before the meters read
//! (plus `handle_drop_ahead` for the `DropAhead` event and `update_horizon` when the next
//! reading moves). [`Ahead`] holds the state. Turned off ([`RunConfig::lookahead`],
//! `[simulation] lookahead = false`, or [`Simulator::disable_lookahead`]) every hop is an
//! event and every arrival is handled at its time; the results are the same, bit for bit
//! (`tests/lookahead.rs`).

use super::flow::Flow;
#[cfg(doc)]
use super::RunConfig;
use super::{
    credit_wire_bytes, feed, record_event, Input, LinkChange, LossChange, RoutePlace, Simulator,
};
use crate::event::Event;
use crate::ids::{FlowId, LinkId, PacketId, PathId};
use crate::net::link::{Departure, DropCause, Link};
use crate::net::queue::QueueItem;
use crate::ring::Ring;
use crate::time::SimTime;
use crate::trace::Observer;
use crate::transport::{AnyTransport, Transport};

/// The state of the work done ahead of time (see the module doc).
pub(super) struct Ahead {
    /// Per link: the wire bytes of data packets admitted ahead of time at the next link, to
    /// credit to their flows when they reach the end of this first hop (see `launch_from`).
    wire: Vec<Ring<WireCredit>>,
    /// The earliest instant at which the meters may next read the links and flows (the next
    /// sample, the end of the warm-up, the end of the slice): what happens ahead of time
    /// before it needs no record for readings in between.
    horizon: SimTime,
    /// The latest such arrival not recorded: a slice that stops on its event budget goes on
    /// past it, so that the reading at its end sees everything not recorded as happened.
    pub(super) unrecorded_until: SimTime,
    /// Drops decided ahead of time counted at once, without an event in the queue.
    pub(super) drops_folded: u64,
    /// Per flow: its receiving end reacts ahead of time (`react_ahead`), as
    /// `enable_reactions` found.
    reacts: Vec<bool>,
    /// The packets a reaction ahead sends (apart from `transmit_buf`, which the reaction's
    /// caller may be going through).
    reaction_buf: Vec<PacketId>,
    /// Arrivals at a receiving end handled ahead of time.
    pub(super) reactions: u64,
    /// Per link: some flow's data arrives over it at the end of its route and can be handled
    /// ahead of time.
    answered_over: Vec<bool>,
}

impl Ahead {
    /// Decides which links admit ahead and which flows react ahead (`enable_lookahead`,
    /// `enable_reactions`), none when `enabled` is false.
    pub(super) fn plan(
        enabled: bool,
        links: &mut [Link],
        routes: &[Box<[LinkId]>],
        flows: &[Flow],
        link_changes: &[LinkChange],
        loss_changes: &[LossChange],
    ) -> Self {
        let (reacts, answered_over) = if enabled {
            enable_lookahead(links, routes, link_changes, loss_changes);
            enable_reactions(links, routes, flows, link_changes, loss_changes)
        } else {
            (vec![false; flows.len()], vec![false; links.len()])
        };
        Ahead {
            wire: links.iter().map(|_| Ring::new()).collect(),
            horizon: SimTime::ZERO,
            unrecorded_until: SimTime::ZERO,
            drops_folded: 0,
            reacts,
            reaction_buf: Vec::new(),
            reactions: 0,
            answered_over,
        }
    }

    /// No flow reacts ahead from now on (an observer sees each arrival at its time).
    pub(super) fn stop_reactions(&mut self) {
        self.reacts.fill(false);
    }

    /// Whether the arrivals over link `l` at the end of some route can be handled ahead.
    #[inline(always)]
    pub(super) fn is_answered_over(&self, l: LinkId) -> bool {
        self.answered_over[l.index()]
    }
}

impl<O: Observer> Simulator<O> {
    /// `flow` no longer reacts ahead of time: neither does any flow whose reactions go onto
    /// the same link, which no longer admits ahead (its admissions would no longer all be
    /// reactions ahead or at their time, see `enable_reactions`). Before the run starts.
    pub(super) fn stop_reactions_beside(&mut self, flow: FlowId) {
        let routes = &self.routes;
        let first_of_reverse = |f: &Flow| {
            f.paths
                .first()
                .and_then(|p| routes[p.reverse.index()].first().copied())
        };
        let Some(r0) = first_of_reverse(&self.flows[flow.index()]) else {
            return;
        };
        for (i, f) in self.flows.iter().enumerate() {
            if first_of_reverse(f) == Some(r0) {
                self.ahead.reacts[i] = false;
            }
        }
        // A route's first link admits ahead only for reactions.
        self.links[r0.index()].disable_lookahead();
    }

    /// The earliest instant at which the meters may next read the links and flows.
    pub(super) fn update_horizon(&mut self) {
        let warmup = if self.measure.warmed_up {
            SimTime::MAX
        } else {
            self.config.warmup
        };
        self.ahead.horizon = if self.budget_spent {
            SimTime::ZERO
        } else {
            self.slice_end.min(self.next_sample).min(warmup)
        };
    }

    /// Turns off admission ahead of time (`Link::admit_ahead`): every hop of every packet is
    /// then an event. Results are identical either way; this exists to test that.
    ///
    /// # Errors
    /// When the run has already processed an event.
    pub fn disable_lookahead(&mut self) -> Result<(), &'static str> {
        if self.events_processed > 0 {
            return Err("lookahead can only be turned off before the run starts");
        }
        for l in &mut self.links {
            l.disable_lookahead();
        }
        self.ahead.stop_reactions();
        Ok(())
    }

    /// A packet enters `link`, the first link of a reverse route, which admits ahead of time
    /// the answers of the arrivals handled ahead (`react_ahead`): at `at`, after now, for such
    /// an answer (a drop is then counted at once: nothing records its time and no reading
    /// comes first), else now. Returns its departure, unless it is dropped.
    #[inline(always)]
    pub(super) fn admit_answer(
        &mut self,
        link: LinkId,
        item: QueueItem,
        at: SimTime,
        scheduled: SimTime,
    ) -> Option<Departure> {
        debug_assert!(
            self.pool.get(item.packet).is_feedback(),
            "an answer on the reverse route"
        );
        let now = self.now;
        if at > now {
            let l = &mut self.links[link.index()];
            return match l.admit_ahead(now, at, scheduled, item, self.ahead.horizon) {
                Ok(d) => Some(d),
                Err(_) => {
                    self.pool.release(item.packet);
                    self.counters.dropped += 1;
                    self.flows[item.flow.index()].meters.drops += 1;
                    None
                }
            };
        }
        let scheduled = self.events.scheduled();
        match self.links[link.index()].admit_now(now, scheduled, item) {
            Ok(d) => Some(d),
            Err(cause) => {
                self.drop_packet(link, item, cause);
                None
            }
        }
    }

    /// [`Simulator::launch`] for a packet whose place on its route the caller has read.
    #[inline(always)]
    pub(super) fn launch_from(&mut self, link: LinkId, d: Departure, place: RoutePlace) {
        let (mut link, mut d) = (link, d);
        let RoutePlace {
            route,
            hop: first,
            data,
            path,
        } = place;
        let route_links = &self.routes[route.index()];
        let mut hop = first;
        // The latest arrival admitted without a record (arrivals grow along the route).
        let mut unrecorded = SimTime::ZERO;
        while let Some(&b) = route_links.get(hop + 1) {
            let next = &mut self.links[b.index()];
            if !next.has_lookahead() {
                break;
            }
            hop += 1;
            let at = d.at;
            // Nothing reads the meters before `horizon`: what arrives before it needs no
            // record (an arrival at this very instant keeps one, see `run_until_bounded`).
            let horizon = if at > self.now && at < self.ahead.horizon {
                unrecorded = at;
                self.ahead.horizon
            } else {
                SimTime::ZERO
            };
            if hop == 1 && data {
                let credit = WireCredit {
                    at,
                    scheduled: d.scheduled,
                    flow: d.item.flow,
                    path,
                    bytes: d.item.bytes,
                };
                defer_wire_credit(
                    &mut self.ahead.wire[link.index()],
                    &mut self.flows,
                    self.now,
                    credit,
                    horizon,
                );
            }
            match next.admit_ahead(self.now, at, d.scheduled, d.item, horizon) {
                Ok(departure) => {
                    link = b;
                    d = departure;
                }
                Err((cause, unread)) => {
                    self.ahead.unrecorded_until = self.ahead.unrecorded_until.max(unrecorded);
                    self.drop_ahead(b, hop, (at, d.scheduled), d.item, cause, unread);
                    return;
                }
            }
        }
        self.ahead.unrecorded_until = self.ahead.unrecorded_until.max(unrecorded);
        if hop != first {
            self.pool.get_mut(d.item.packet).hop = hop as u16;
        }
        if data && hop + 1 == route_links.len() && self.may_react_ahead(link, d) {
            self.react_ahead(d.item.packet, d.item.flow, d.at, d.scheduled);
            return;
        }
        if let Some((at, scheduled)) = self.links[link.index()].launch_departed(d) {
            self.events.push_as_of(at, scheduled, Event::Arrive(link));
        }
    }

    /// Whether the arrival of the data packet `d` at the end of its route, over `link`, can
    /// be handled now, ahead of its time (`react_ahead`): its flow reacts ahead, it comes
    /// before the meters' next reading (and after now), nothing records it at its time (no
    /// observer, no drops table) and no packet before it on `link` is still to arrive (the
    /// answers at the first link of the reverse route then keep the order of the arrivals).
    #[inline(always)]
    fn may_react_ahead(&self, link: LinkId, d: Departure) -> bool {
        self.may_react_at(d.item.flow, d.at) && self.links[link.index()].in_pipeline() == 0
    }

    /// Whether flow `f` can handle ahead of time a data packet that arrives at `at`, the
    /// packets before it having arrived or been handled.
    #[inline(always)]
    fn may_react_at(&self, f: FlowId, at: SimTime) -> bool {
        !O::ENABLED
            && self.ahead.reacts[f.index()]
            && at > self.now
            && at < self.ahead.horizon
            && !self.config.trace_drops
    }

    /// The data packet `id` of flow `f`, arriving at the end of its route at `at` (an event
    /// scheduled at `scheduled`), is handled by the flow's receiving end now, with `at` as the
    /// transport's `now`, instead of at an arrival event (which it still counts as).
    /// The flow reacts ahead ([`Transport::reacts_ahead`]): its answer is what it would be
    /// then, changes nothing the sending end or its wake-up depends on, and is admitted at
    /// once, with that time, at the first link of the reverse route, which only such
    /// answers reach, in the order of their arrivals (`enable_reactions`).
    #[inline(never)]
    fn react_ahead(&mut self, id: PacketId, f: FlowId, at: SimTime, scheduled: SimTime) {
        // Still one of the run's events, as the arrival would have been.
        self.events_processed += 1;
        self.ahead.reactions += 1;
        self.ahead.unrecorded_until = self.ahead.unrecorded_until.max(at);
        self.counters.delivered += 1;
        self.counters.data_delivered += 1;
        let flow = &mut self.flows[f.index()];
        // The flow's wake-up stays as it is: a reaction ahead does not move it. Its answers
        // (ACKs) go into `reaction_buf`; it reports nothing (`Transport::reacts_ahead`).
        // The first answer comes back from `feed`, any other in `reaction_buf`. A reaction's
        // answers may lead to another reaction before the last of them enters its link
        // (`enter_link_at` admits ahead): each uses the part of the buffer past what was there
        // when it began, and leaves the buffer as it found it.
        let before = self.ahead.reaction_buf.len();
        let answers = &mut self.ahead.reaction_buf;
        let (paths, changes) = (&flow.paths[..], &self.flow_changes[..]);
        let (pool, events) = (&mut self.pool, &mut self.event_buf);
        // A transport that reacts ahead sends nothing to leave later (host noise would delay
        // its answers: `Transport::reacts_ahead`).
        let mut later = Vec::new();
        // Answers travel back: they are no data the flow sent.
        let (data_sent, rtt) = (&mut flow.meters.data_packets_sent, &mut flow.meters.rtt);
        let first = match &mut flow.transport {
            AnyTransport::Tcp(t) => feed(
                t,
                at,
                Input::Packet(id),
                f,
                paths,
                pool,
                answers,
                &mut later,
                events,
                data_sent,
                rtt,
                changes,
                None,
            ),
            AnyTransport::Datagram(t) => feed(
                t,
                at,
                Input::Packet(id),
                f,
                paths,
                pool,
                answers,
                &mut later,
                events,
                data_sent,
                rtt,
                changes,
                None,
            ),
            other => feed(
                other,
                at,
                Input::Packet(id),
                f,
                paths,
                pool,
                answers,
                &mut later,
                events,
                data_sent,
                rtt,
                changes,
                None,
            ),
        };
        if !self.event_buf.is_empty() {
            // Not expected of a transport that reacts ahead; recorded at the arrival's time.
            let warmed = self.measure.warmed_up;
            for &e in &self.event_buf {
                record_event(e, at, f, warmed, &mut flow.meters, &mut self.observer);
            }
            self.event_buf.clear();
        }
        debug_assert_eq!(
            flow.transport.poll_timeout(),
            flow.deadline,
            "a reaction ahead moved the wake-up"
        );
        debug_assert!(later.is_empty(), "a reaction ahead held a packet back");
        let Some(first) = first else {
            return;
        };
        let last = self.ahead.reaction_buf.len();
        self.counters.created += 1 + (last - before) as u64;
        self.enter_link_at(first, at, scheduled);
        if last > before {
            self.enter_more_answers(before, last, at, scheduled);
        }
    }

    /// The answers of a reaction ahead after its first, in `reaction_buf[before..last]`, enter
    /// their link (`react_ahead`); the buffer is left as it was before the reaction.
    #[inline(never)]
    fn enter_more_answers(&mut self, before: usize, last: usize, at: SimTime, scheduled: SimTime) {
        for i in before..last {
            let answer = self.ahead.reaction_buf[i];
            self.enter_link_at(answer, at, scheduled);
        }
        self.ahead.reaction_buf.truncate(before);
    }

    /// A drop decided ahead of time reaches its time.
    #[inline(never)]
    pub(super) fn handle_drop_ahead(&mut self, link: LinkId) {
        let (item, cause, next) = self.links[link.index()].pop_deferred_drop();
        if let Some((t, scheduled)) = next {
            self.events.push_as_of(t, scheduled, Event::DropAhead(link));
        }
        self.drop_packet(link, item, cause);
    }

    /// Before the meters are read at the event at `time` scheduled at `scheduled`: what
    /// happened ahead of time and comes before that event in the order of events becomes
    /// visible (the links' admissions and the flows' wire bytes).
    pub(super) fn realize_ahead(&mut self, time: SimTime, scheduled: SimTime) {
        for l in &mut self.links {
            l.realize(time, scheduled);
        }
        for pending in &mut self.ahead.wire {
            while let Some(c) = pending.front() {
                if (c.at, c.scheduled) >= (time, scheduled) {
                    break;
                }
                credit_wire_bytes(&mut self.flows[c.flow.index()].meters, c.path, c.bytes);
                pending.pop_front();
            }
        }
    }

    /// Link `b`, the `hop`th of `item`'s route, dropped it ahead of time for its arrival at
    /// `at`, an event scheduled at `scheduled`.
    ///
    /// When nothing records the drop's time (no observer, no drops table) and it comes before
    /// the meters' next reading (`unread`, see [`Link::admit_ahead`]), its counts are all
    /// [`Simulator::drop_packet`] would change then, so they change now, and the event is
    /// counted without going through the queue. Otherwise the link keeps it and a `DropAhead`
    /// event reports it at `at`.
    #[inline(never)]
    fn drop_ahead(
        &mut self,
        b: LinkId,
        hop: usize,
        (at, scheduled): (SimTime, SimTime),
        item: QueueItem,
        cause: DropCause,
        unread: bool,
    ) {
        if unread && !O::ENABLED && !self.config.trace_drops {
            // Still one of the run's events (the count in the results is the same however
            // the drop is reported, and however the run is sliced).
            self.events_processed += 1;
            self.ahead.drops_folded += 1;
            self.pool.release(item.packet);
            self.counters.dropped += 1;
            self.flows[item.flow.index()].meters.drops += 1;
            return;
        }
        self.pool.get_mut(item.packet).hop = hop as u16;
        let l = &mut self.links[b.index()];
        if let Some((t, sch)) = l.defer_drop(at, scheduled, item, cause) {
            self.events.push_as_of(t, sch, Event::DropAhead(b));
        }
    }

    /// Whether the packet at the head of `link`'s pipeline can have its arrival handled ahead
    /// of time (see `may_react_ahead`; the packets before it have arrived).
    #[inline(never)]
    pub(super) fn head_reacts_ahead(&self, link: LinkId) -> bool {
        let Some((at, id, _)) = self.links[link.index()].peek_arrival() else {
            return false;
        };
        let p = self.pool.get(id);
        !p.is_feedback()
            && p.hop as usize + 1 == self.routes[p.route.index()].len()
            && self.may_react_at(p.flow, at)
    }

    /// Handles ahead of time the arrivals at the head of `link`'s pipeline that can be (they
    /// went onto the pipeline when one before them could not, see `may_react_ahead`), and
    /// schedules the arrival event of the first that cannot.
    #[inline(never)]
    pub(super) fn drain_reactions(&mut self, link: LinkId) {
        while let Some((at, id, scheduled)) = self.links[link.index()].peek_arrival() {
            if !self.head_reacts_ahead(link) {
                self.events.push_as_of(at, scheduled, Event::Arrive(link));
                return;
            }
            let (_, _, lost) = self.links[link.index()].pop_arrival();
            debug_assert!(!lost, "a link admitted ahead never fails");
            let flow = self.pool.get(id).flow;
            self.react_ahead(id, flow, at, scheduled);
        }
    }
}

/// Data bytes that will have crossed a flow's first hop at `at`.
#[derive(Clone, Copy, Debug, Default)]
struct WireCredit {
    at: SimTime,
    /// When the event of that arrival would have been scheduled (`Link::depart`).
    scheduled: SimTime,
    flow: FlowId,
    path: PathId,
    bytes: u32,
}

/// Keeps the wire bytes of a data packet that leaves its first hop at `credit.at` (the packet
/// itself went on ahead) in that link's `pending` credits, crediting those already due.
#[inline(always)]
fn defer_wire_credit(
    pending: &mut Ring<WireCredit>,
    flows: &mut [Flow],
    now: SimTime,
    credit: WireCredit,
    horizon: SimTime,
) {
    if credit.at < horizon && pending.is_empty() {
        // Credited by the time the meters are next read.
        let meters = &mut flows[credit.flow.index()].meters;
        credit_wire_bytes(meters, credit.path, credit.bytes);
        return;
    }
    while let Some(c) = pending.front() {
        if c.at >= now {
            break;
        }
        credit_wire_bytes(&mut flows[c.flow.index()].meters, c.path, c.bytes);
        pending.pop_front();
    }
    pending.push_back(credit);
}

/// Lets every link admit ahead of time that can ([`Link::enable_lookahead`]): a drop-tail
/// link that is never a route's first hop, whose every route enters it from the same link,
/// and that neither it nor that link ever fails or (for it) changes its loss model. Its
/// arrivals are then exactly that link's departures, so its state at an arrival is known
/// when the packet leaves upstream.
fn enable_lookahead(
    links: &mut [Link],
    routes: &[Box<[LinkId]>],
    link_changes: &[LinkChange],
    loss_changes: &[LossChange],
) {
    #[derive(Clone, Copy, PartialEq)]
    enum Input {
        Unused,
        One(LinkId),
        Several,
    }
    let mut inputs = vec![Input::Unused; links.len()];
    for route in routes {
        for (hop, &b) in route.iter().enumerate() {
            let from = if hop == 0 {
                Input::Several // a host puts packets on it at any time
            } else {
                Input::One(route[hop - 1])
            };
            let input = &mut inputs[b.index()];
            *input = match *input {
                Input::Unused => from,
                same if same == from => same,
                _ => Input::Several,
            };
        }
    }
    let mut changing = vec![false; links.len()];
    for c in link_changes {
        changing[c.link.index()] = true;
    }
    let mut loss_changing = vec![false; links.len()];
    for c in loss_changes {
        loss_changing[c.link.index()] = true;
    }
    for (i, input) in inputs.iter().enumerate() {
        if let Input::One(a) = *input {
            if !changing[i] && !loss_changing[i] && !changing[a.index()] {
                links[i].enable_lookahead();
            }
        }
    }
}

/// Lets the first link of a feedback route admit ahead of time when every packet it carries
/// answers at once a packet that arrived over one link admitted ahead (`L`): the link's every
/// route starts on it, each is the reverse route of a one-path flow whose transport reacts
/// ahead ([`Transport::reacts_ahead`]) and whose forward route ends on `L`, and the link is a
/// drop-tail link that never fails or changes its loss model. Its admissions then come in the
/// order of the arrivals over `L`, each at its time, so an arrival handled ahead of time
/// (`Simulator::react_ahead`) can admit its answer there at once. Returns, per flow, whether
/// it reacts ahead, and per link, whether the arrivals of such a flow come over it.
fn enable_reactions(
    links: &mut [Link],
    routes: &[Box<[LinkId]>],
    flows: &[Flow],
    link_changes: &[LinkChange],
    loss_changes: &[LossChange],
) -> (Vec<bool>, Vec<bool>) {
    #[derive(Clone, Copy, PartialEq)]
    enum Feed {
        Unused,
        /// Answers to the arrivals over this link.
        Answers(LinkId),
        Other,
    }
    let mut feeds = vec![Feed::Unused; links.len()];
    let mut mark = |b: LinkId, feed: Feed| {
        let f = &mut feeds[b.index()];
        *f = match *f {
            Feed::Unused => feed,
            same if same == feed => same,
            _ => Feed::Other,
        };
    };
    for route in routes {
        for &b in route.iter().skip(1) {
            mark(b, Feed::Other);
        }
    }
    // Per flow: the link over which the arrivals it answers come, if it reacts ahead.
    let answers: Vec<Option<LinkId>> = flows
        .iter()
        .map(|f| {
            let [p] = f.paths.as_slice() else {
                return None;
            };
            let last = *routes[p.forward.index()].last()?;
            (f.transport.reacts_ahead() && links[last.index()].has_lookahead()).then_some(last)
        })
        .collect();
    for (f, over) in flows.iter().zip(&answers) {
        for p in &f.paths {
            if let Some(&b) = routes[p.forward.index()].first() {
                mark(b, Feed::Other);
            }
            if let Some(&b) = routes[p.reverse.index()].first() {
                mark(b, over.map_or(Feed::Other, Feed::Answers));
            }
        }
    }
    for c in link_changes {
        feeds[c.link.index()] = Feed::Other;
    }
    for c in loss_changes {
        feeds[c.link.index()] = Feed::Other;
    }
    // A host's interface queue (`local`) is read at the sender's time to refuse segments
    // (`Link::room`): nothing enters it ahead of time.
    for (b, l) in links.iter().enumerate() {
        if l.local {
            feeds[b] = Feed::Other;
        }
    }
    for (b, feed) in feeds.iter_mut().enumerate() {
        if let Feed::Answers(_) = *feed {
            if !links[b].enable_lookahead() {
                *feed = Feed::Other;
            }
        }
    }
    let mut answered_over = vec![false; links.len()];
    let reacts = flows
        .iter()
        .zip(&answers)
        .map(|(f, over)| {
            let reacts = over.is_some()
                && routes[f.paths[0].reverse.index()]
                    .first()
                    .is_some_and(|b| matches!(feeds[b.index()], Feed::Answers(_)));
            if let (true, Some(l)) = (reacts, over) {
                answered_over[l.index()] = true;
            }
            reacts
        })
        .collect();
    (reacts, answered_over)
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;
    use crate::sim::build;

    /// Senders `s0..s{senders}` on access links into `r1`, then `r1 -> r2` (queue `bottleneck`)
    /// and `r2 -> d`; one TCP flow per sender (`tcp` more lines of each), `extra` at the end.
    fn fan_in(senders: usize, bottleneck: &str, tcp: &str, extra: &str) -> String {
        let mut t = String::from("[simulation]\nduration = \"1s\"\n");
        for s in 0..senders {
            t += &format!(
                "[[link]]\nname = \"a{s}\"\nfrom = \"s{s}\"\nto = \"r1\"\nrate = \"100Mbps\"\ndelay = \"1ms\"\n"
            );
        }
        t += &format!(
            "[[link]]\nname = \"b\"\nfrom = \"r1\"\nto = \"r2\"\nrate = \"10Mbps\"\ndelay = \"5ms\"\nqueue = {bottleneck}\n"
        );
        t += "[[link]]\nname = \"l\"\nfrom = \"r2\"\nto = \"d\"\nrate = \"100Mbps\"\ndelay = \"1ms\"\n";
        for s in 0..senders {
            t += &format!(
                "[[flow]]\nname = \"f{s}\"\nkind = \"tcp\"\nsrc = \"s{s}\"\ndst = \"d\"\n{tcp}\n"
            );
        }
        t + extra
    }

    const DROPTAIL: &str = "{ kind = \"droptail\", packets = 20 }";

    fn sim(toml: &str) -> Simulator {
        build(
            &Scenario::from_toml_str(toml, "t.toml", &[]).expect("parses"),
            None,
        )
        .expect("builds")
    }

    /// The link directions that admit ahead, as "name forward|reverse", sorted.
    fn admitting(s: &Simulator) -> Vec<String> {
        let mut v: Vec<String> = s
            .links
            .iter()
            .filter(|l| l.has_lookahead())
            .map(|l| format!("{} {}", l.name, l.direction()))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_link_fed_by_exactly_one_upstream_link_admits_ahead() {
        // One sender: every hop after the first has one upstream input, the bottleneck too;
        // the ACKs' first link (`l` reverse) admits the answers of the reactions ahead.
        let one = sim(&fan_in(1, DROPTAIL, "", ""));
        assert_eq!(
            admitting(&one),
            [
                "a0 reverse",
                "b forward",
                "b reverse",
                "l forward",
                "l reverse"
            ]
        );
        assert_eq!(one.ahead.reacts, [true]);
        // Two senders into `r1`: the bottleneck has two inputs and admits at its events; the
        // link it feeds, and the ACKs' links (each fed by one link), still admit ahead.
        let two = sim(&fan_in(2, DROPTAIL, "", ""));
        assert_eq!(
            admitting(&two),
            [
                "a0 reverse",
                "a1 reverse",
                "b reverse",
                "l forward",
                "l reverse"
            ]
        );
        assert_eq!(two.ahead.reacts, [true, true]);
        let l = two
            .links
            .iter()
            .position(|l| l.name == "l" && !l.is_reverse)
            .expect("l");
        assert!(two.ahead.is_answered_over(LinkId::from_index(l)));
    }

    #[test]
    fn event_driven_queues_failures_and_loss_changes_keep_links_at_their_events() {
        // RED at the bottleneck: only drop-tail admits ahead.
        let red = sim(&fan_in(
            1,
            "{ kind = \"red\", packets = 30, min_th = 5, max_th = 15, max_p = 0.1, w_q = 0.01 }",
            "",
            "",
        ));
        assert!(!admitting(&red).contains(&"b forward".to_string()));
        assert!(admitting(&red).contains(&"l forward".to_string()));
        // The bottleneck fails and comes back: neither it nor the link it feeds admits ahead.
        let outage = sim(&fan_in(
            1,
            DROPTAIL,
            "",
            "[[event]]\nat = \"0.5s\"\nlink = \"b\"\naction = \"down\"\n",
        ));
        let a = admitting(&outage);
        assert!(
            !a.iter().any(|l| l.starts_with("b ") || l == "l forward"),
            "{a:?}"
        );
        // A loss model changes on the last link: it no longer admits ahead.
        let loss = sim(&fan_in(
            1,
            DROPTAIL,
            "",
            "[[event]]\nat = \"0.5s\"\nlink = \"l\"\nloss = { kind = \"bernoulli\", p = 0.1 }\n",
        ));
        assert!(!admitting(&loss).contains(&"l forward".to_string()));
        assert!(admitting(&loss).contains(&"b forward".to_string()));
    }

    #[test]
    fn delayed_acks_keep_arrivals_at_their_time_and_their_ack_link_at_its_events() {
        let s = sim(&fan_in(2, DROPTAIL, "delayed_ack = true", ""));
        assert_eq!(s.ahead.reacts, [false, false]);
        assert!(!admitting(&s).contains(&"l reverse".to_string()));
        assert!(!s.ahead.answered_over.iter().any(|&a| a));
    }

    #[test]
    fn switched_off_nothing_is_done_ahead_and_the_results_are_the_same() {
        let on = fan_in(2, DROPTAIL, "", "");
        let off = on.replace(
            "duration = \"1s\"\n",
            "duration = \"1s\"\nlookahead = false\n",
        );
        let (mut a, mut b) = (sim(&on), sim(&off));
        assert!(admitting(&b).is_empty());
        assert!(!b.ahead.reacts.iter().any(|&r| r));
        a.run();
        b.run();
        assert!(a.reactions_ahead() > 100);
        assert_eq!(b.reactions_ahead(), 0);
        assert!(b.events_processed() > a.events_processed());
        let (mut ra, mut rb) = (a.results(), b.results());
        ra.events = 0;
        rb.events = 0;
        assert_eq!(
            serde_json::to_string(&ra).expect("json"),
            serde_json::to_string(&rb).expect("json")
        );
        // The Rust API's switch is the same.
        let mut c = sim(&on);
        c.disable_lookahead().expect("before the run");
        assert!(admitting(&c).is_empty());
        c.run();
        assert_eq!(c.events_processed(), b.events_processed());
        // A switch that is not a bool is one located error.
        let bad = on.replace(
            "duration = \"1s\"\n",
            "duration = \"1s\"\nlookahead = \"no\"\n",
        );
        let e = Scenario::from_toml_str(&bad, "t.toml", &[]).expect_err("rejected");
        assert!(
            e.to_string().starts_with("t.toml: simulation.lookahead: "),
            "{e}"
        );
    }

    #[test]
    fn wire_credits_before_the_next_reading_are_credited_at_once_and_others_kept() {
        let s = sim(&fan_in(1, DROPTAIL, "", ""));
        let mut flows = s.flows;
        let mut pending = Ring::new();
        let credit = |at: u64, bytes: u32| WireCredit {
            at: SimTime(at),
            scheduled: SimTime(at),
            flow: FlowId::from_index(0),
            path: PathId::from_index(0),
            bytes,
        };
        let horizon = SimTime(100);
        // Before the horizon, nothing pending: credited now.
        defer_wire_credit(
            &mut pending,
            &mut flows,
            SimTime(0),
            credit(50, 1000),
            horizon,
        );
        assert_eq!(flows[0].meters.wire_bytes_sent, 1000);
        assert!(pending.is_empty());
        // At or past the horizon: kept, and so is what follows while it is pending.
        defer_wire_credit(
            &mut pending,
            &mut flows,
            SimTime(0),
            credit(120, 10),
            horizon,
        );
        defer_wire_credit(
            &mut pending,
            &mut flows,
            SimTime(0),
            credit(125, 20),
            horizon,
        );
        assert_eq!(flows[0].meters.wire_bytes_sent, 1000);
        assert_eq!(pending.len(), 2);
        // Later, those due by now are credited when the next one comes.
        defer_wire_credit(
            &mut pending,
            &mut flows,
            SimTime(130),
            credit(200, 40),
            horizon,
        );
        assert_eq!(flows[0].meters.wire_bytes_sent, 1030);
        assert_eq!(pending.len(), 1);
    }
}
