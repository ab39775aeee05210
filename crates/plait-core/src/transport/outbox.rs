//! The outbox: where a transport puts what it sends and reports while it handles an input.
//!
//! A transport is handed an [`Outbox`] with every input (`handle_*`, see the contract in
//! [`crate::transport`]) and writes into it as it goes, the shape of smoltcp's
//! `dispatch(emit)` and neqo's `Output`: [`Outbox::send`] puts a packet straight into the run's
//! packet pool, on the route of its path (one copy of its header, no queue in between), and
//! [`Outbox::report`] notes an event for the flow's measurements and the observer. The driver
//! reads both once the transport returns: the packets enter the first link of their routes in
//! the order they were sent, after the events are recorded and the wake-up is re-armed.
//! [`Outbox::send_at`] sends a packet that leaves its host later (host timing noise,
//! [`crate::transport::host_noise`]): the driver puts it on its route at that time, and the
//! transport is not woken for it.
//!
//! Outside the simulator (unit tests, harnesses) a [`Capture`] holds what an outbox writes
//! and hands it back as [`Transmit`]s and [`TransportEvent`]s.

use crate::ids::{FlowId, LinkId, PacketId, PathId, RouteId};
use crate::net::link::Room;
use crate::packet::pool::PacketPool;
use crate::packet::{FlowPath, Header};
use crate::time::SimTime;
use crate::trace::histogram::RttHistograms;

use super::{Direction, Transmit, TransportEvent};

/// What a transport sends and reports while it handles one input.
pub struct Outbox<'a> {
    flow: FlowId,
    paths: &'a [FlowPath],
    pool: &'a mut PacketPool,
    /// The first packet sent in this input, held here (most inputs send one), the others
    /// after it in `more`.
    first: Option<PacketId>,
    /// The slot of the packet this input handles, read already: the first packet sent takes
    /// it, as it would take it from the pool's free list had it been freed before the input
    /// (the slot freed last is the one handed out next), and [`Outbox::finish`] frees it if
    /// nothing was sent. The pool is left as it would be, without the trip through the free
    /// list.
    arrived: Option<PacketId>,
    more: &'a mut Vec<PacketId>,
    /// The packets sent to leave later, with the time each leaves.
    later: &'a mut Vec<(SimTime, PacketId)>,
    events: &'a mut Vec<TransportEvent>,
    /// The flow's count of data packets sent (those travelling forward).
    data_sent: &'a mut u64,
    /// The flow's RTT histograms, where an RTT sample goes straight away instead of onto
    /// `events` when they say so ([`RttHistograms::direct`]).
    rtt: &'a mut RttHistograms,
    /// The sending host's interface queues its paths start on (`local = true` links), for a
    /// flow that has any.
    local: Option<&'a mut LocalRoom>,
}

/// The interface queues of the sending host a flow's paths start on (links with `local =
/// true`), as the driver read them before the input: what they can take, updated as the
/// transport sends, and the segments they refused.
///
/// On Linux (3.0 as today) a TCP segment handed to a full qdisc is not lost:
/// `tcp_transmit_skb` gets `NET_XMIT_DROP` back from `pfifo_fast`, calls `tcp_enter_cwr`
/// and returns the error, and `tcp_write_xmit` stops with the segment still unsent
/// (`snd_nxt` not advanced); `tcp_retransmit_skb` likewise leaves a refused retransmission to
/// be resent (net/ipv4/tcp_output.c). A transport asks [`Outbox::refuses`] at the moment it
/// would commit a segment; what it sends without asking (ACKs, datagrams) enters the queue
/// and is dropped there when it is full, as the kernel's qdisc drops it.
#[derive(Clone, Debug, Default)]
pub struct LocalRoom {
    /// Per path: the index in `queues` of the local link its forward route starts on.
    path_queue: Vec<Option<u8>>,
    /// The local links, with what each can take now.
    queues: Vec<LocalQueue>,
    /// The packets of the current input that `queues` count already: whether the first sent
    /// at once, and how many of those sent after it and of those held. [`Outbox::refuses`]
    /// counts the others when it is asked, so that sending costs a flow without local links
    /// nothing.
    counted: (bool, usize, usize),
}

/// One local link of a [`LocalRoom`].
#[derive(Clone, Debug)]
pub struct LocalQueue {
    pub link: LinkId,
    /// What it can take, as read before the input and updated by what was sent since.
    pub room: Room,
    /// Segments refused in this input: the driver adds them to the link's count and to
    /// `total`.
    pub refused: u32,
    /// Segments of this flow the link refused, whole run.
    pub total: u64,
}

impl LocalRoom {
    /// The room of a flow whose path `i` starts on `first_links[i]`, of which those for which
    /// `is_local` says so are local.
    pub fn new(first_links: &[LinkId], is_local: impl Fn(LinkId) -> bool) -> Option<Self> {
        let mut room = LocalRoom::default();
        for &link in first_links {
            if !is_local(link) {
                room.path_queue.push(None);
                continue;
            }
            let q = match room.queues.iter().position(|q| q.link == link) {
                Some(q) => q,
                None => {
                    room.queues.push(LocalQueue {
                        link,
                        room: Room {
                            limit: crate::net::queue::Limit::Packets(0),
                            up: true,
                            busy: false,
                            queued: 0,
                            queued_bytes: 0,
                        },
                        refused: 0,
                        total: 0,
                    });
                    room.queues.len() - 1
                }
            };
            room.path_queue.push(Some(q as u8));
        }
        (!room.queues.is_empty()).then_some(room)
    }

    /// The local links, to read before an input ([`LocalQueue::room`]) and after it
    /// ([`LocalQueue::refused`]).
    pub fn queues_mut(&mut self) -> &mut [LocalQueue] {
        &mut self.queues
    }

    /// Before an input, its rooms just read: none of its packets is counted yet.
    pub fn start_input(&mut self) {
        self.counted = (false, 0, 0);
    }

    /// Counts in the rooms the data packets of the input sent since the last count (`first`,
    /// then `more`, and those held, `later`): each takes a place in the queue its path starts
    /// on, if local. The order does not matter: a local queue's limit is in packets
    /// (validated), so what a queue can take depends only on how many packets it was given.
    #[inline(never)]
    fn count_sent(
        &mut self,
        pool: &PacketPool,
        first: Option<PacketId>,
        more: &[PacketId],
        later: &[(SimTime, PacketId)],
    ) {
        let (first_counted, more_counted, later_counted) = self.counted;
        let new_first = first.filter(|_| !first_counted);
        let fresh = new_first
            .into_iter()
            .chain(more[more_counted..].iter().copied())
            .chain(later[later_counted..].iter().map(|&(_, id)| id));
        for id in fresh {
            let p = pool.get(id);
            if p.direction == Direction::Forward {
                let (path, bytes) = (p.path, p.size_bytes);
                if let Some(q) = self.queue_of(path) {
                    q.room.take(bytes);
                }
            }
        }
        self.counted = (first_counted || first.is_some(), more.len(), later.len());
    }

    /// The local links, with the segments of the flow each refused.
    pub fn queues(&self) -> &[LocalQueue] {
        &self.queues
    }

    /// The local link `path`'s forward route starts on, if any.
    #[inline]
    fn queue_of(&mut self, path: PathId) -> Option<&mut LocalQueue> {
        let q = (*self.path_queue.get(path.index())?)?;
        self.queues.get_mut(q as usize)
    }
}

impl<'a> Outbox<'a> {
    /// An outbox for flow `flow`, whose paths' routes are `paths`: packets go into `pool`
    /// (the first one's slot held in the outbox, [`Outbox::first`], the others' appended to
    /// `more`, those that leave later onto `later`; `data_sent` counts those travelling
    /// forward), events onto `events`, RTT samples into `rtt` when it takes them directly.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        flow: FlowId,
        paths: &'a [FlowPath],
        pool: &'a mut PacketPool,
        more: &'a mut Vec<PacketId>,
        later: &'a mut Vec<(SimTime, PacketId)>,
        events: &'a mut Vec<TransportEvent>,
        data_sent: &'a mut u64,
        rtt: &'a mut RttHistograms,
    ) -> Self {
        Outbox {
            flow,
            paths,
            pool,
            first: None,
            arrived: None,
            more,
            later,
            events,
            data_sent,
            rtt,
            local: None,
        }
    }

    /// The outbox of a flow whose paths start on local links (`room`), if any.
    #[inline(always)]
    pub(crate) fn with_local(mut self, room: Option<&'a mut LocalRoom>) -> Self {
        self.local = room;
        self
    }

    /// Whether the sending host's interface queue that `path` starts on (a link with `local =
    /// true`) is full for a data packet of `size_bytes` now: if so the transport must not send
    /// it (the refusal is counted), and treats it as the kernel treats `NET_XMIT_DROP` from
    /// its qdisc (see [`LocalRoom`]). False on a path that starts on no local link.
    #[inline(always)]
    pub fn refuses(&mut self, path: PathId, size_bytes: u32) -> bool {
        let Some(local) = self.local.as_deref_mut() else {
            return false;
        };
        local.count_sent(self.pool, self.first, self.more, self.later);
        let Some(q) = local.queue_of(path) else {
            return false;
        };
        if q.room.admits(size_bytes) {
            return false;
        }
        q.refused += 1;
        true
    }

    /// Whether the flow has a path that starts on a local link: its transport then asks
    /// [`Outbox::refuses`] before it commits a data segment.
    #[inline(always)]
    pub fn has_local(&self) -> bool {
        self.local.is_some()
    }

    /// The outbox of an input handling the packet in slot `arrived`, read already and no
    /// longer needed: the slot is the first packet sent's, or free after
    /// [`Outbox::finish`].
    #[inline(always)]
    pub(crate) fn reusing(mut self, arrived: PacketId) -> Self {
        self.arrived = Some(arrived);
        self
    }

    /// Ends the input: the slot of the first packet sent to leave now, if any (the others are
    /// in `more`, in order; those that leave later in `later`); the arriving packet's slot is
    /// free if no packet took it.
    #[inline(always)]
    pub(crate) fn finish(self) -> Option<PacketId> {
        if let Some(id) = self.arrived {
            self.pool.release(id);
        }
        self.first
    }

    /// Sends a packet: it leaves on the route of its path in its direction, after every packet
    /// sent before it in this input.
    ///
    /// # Panics
    /// When the path is not one of the flow's paths (a transport bug).
    #[inline(always)]
    pub fn send(&mut self, x: Transmit) {
        self.send_with(
            x.path,
            x.direction,
            #[inline(always)]
            |header| {
                *header = x.header;
                x.size_bytes
            },
        );
    }

    /// [`Outbox::send`] of a packet whose header `write` writes where the packet lies in the
    /// pool, returning its size on the wire: no copy of the header on the way.
    ///
    /// # Panics
    /// When the path is not one of the flow's paths (a transport bug).
    #[inline(always)]
    pub fn send_with(
        &mut self,
        path: PathId,
        direction: Direction,
        write: impl FnOnce(&mut Header) -> u32,
    ) {
        let id = self.place(path, direction, write);
        if self.first.is_none() {
            self.first = Some(id);
        } else {
            self.more.push(id);
        }
    }

    /// Sends a packet that leaves its host at `at`, after the current instant: the driver puts
    /// it on its route then, after every packet sent earlier to leave at that time (host
    /// timing noise holds packets this way, [`crate::transport::host_noise`]). It is counted
    /// as sent now.
    ///
    /// # Panics
    /// When the path is not one of the flow's paths (a transport bug).
    #[inline]
    pub fn send_at(&mut self, x: Transmit, at: SimTime) {
        let id = self.place(x.path, x.direction, |header| {
            *header = x.header;
            x.size_bytes
        });
        self.later.push((at, id));
    }

    /// [`Outbox::send_at`] of `x` at `at` if `held`, else [`Outbox::send`]: one copy of its
    /// header into the pool either way.
    ///
    /// # Panics
    /// When the path is not one of the flow's paths (a transport bug).
    #[inline(always)]
    pub fn send_held_if(&mut self, x: Transmit, held: bool, at: SimTime) {
        let id = self.place(x.path, x.direction, |header| {
            *header = x.header;
            x.size_bytes
        });
        if held {
            self.later.push((at, id));
        } else if self.first.is_none() {
            self.first = Some(id);
        } else {
            self.more.push(id);
        }
    }

    /// Writes a packet into the pool, in the arriving packet's slot if no packet took it yet
    /// (as the pool's free list would hand it out), and counts it.
    #[inline(always)]
    fn place(
        &mut self,
        path: PathId,
        direction: Direction,
        write: impl FnOnce(&mut Header) -> u32,
    ) -> PacketId {
        let route = self.paths[path.index()].route(direction);
        let (id, p) = match self.arrived.take() {
            Some(id) => (id, self.pool.get_mut(id)),
            None => self.pool.alloc_slot(),
        };
        p.flow = self.flow;
        p.path = path;
        p.direction = direction;
        p.route = route;
        p.hop = 0;
        p.size_bytes = write(&mut p.header);
        *self.data_sent += u64::from(direction == Direction::Forward);
        // A local queue counts the packet when the transport next asks `refuses`
        // (`LocalRoom::count_sent`).
        id
    }

    /// Reports an event (measurements, tracing), after every event reported before it.
    #[inline(always)]
    pub fn report(&mut self, event: TransportEvent) {
        if let TransportEvent::RttSample { path, rtt } = event {
            if self.rtt.direct {
                self.rtt.record(path.index(), rtt.as_nanos());
                return;
            }
        }
        self.events.push(event);
    }
}

/// An outbox's storage outside the simulator: runs a transport's `handle_*` and gives back
/// what it sent and reported, in order.
#[derive(Debug)]
pub struct Capture {
    paths: Vec<FlowPath>,
    pool: PacketPool,
    sent: Vec<PacketId>,
    later: Vec<(SimTime, PacketId)>,
    events: Vec<TransportEvent>,
    data_sent: u64,
    /// Never direct: every RTT sample is an event.
    rtt: RttHistograms,
}

impl Capture {
    /// Storage for a transport with `paths` paths.
    pub fn new(paths: usize) -> Self {
        Capture {
            paths: (0..paths)
                .map(|i| FlowPath {
                    forward: RouteId::from_index(2 * i),
                    reverse: RouteId::from_index(2 * i + 1),
                })
                .collect(),
            pool: PacketPool::default(),
            sent: Vec::new(),
            later: Vec::new(),
            events: Vec::new(),
            data_sent: 0,
            rtt: RttHistograms::default(),
        }
    }

    /// Runs `f` with an outbox writing here (what it writes adds to what is held).
    pub fn with<R>(&mut self, f: impl FnOnce(&mut Outbox<'_>) -> R) -> R {
        let mut more = Vec::new();
        let mut out = Outbox::new(
            FlowId::from_index(0),
            &self.paths,
            &mut self.pool,
            &mut more,
            &mut self.later,
            &mut self.events,
            &mut self.data_sent,
            &mut self.rtt,
        );
        let r = f(&mut out);
        if let Some(first) = out.finish() {
            self.sent.push(first);
            self.sent.append(&mut more);
        }
        r
    }

    /// The packets sent to leave at once since the last call, in order.
    pub fn take_transmits(&mut self) -> Vec<Transmit> {
        let pool = &mut self.pool;
        self.sent
            .drain(..)
            .map(|id| transmit_of(pool.free(id)))
            .collect()
    }

    /// The packets sent to leave later ([`Outbox::send_at`]) since the last call, with their
    /// times, in the order they were sent.
    pub fn take_later(&mut self) -> Vec<(SimTime, Transmit)> {
        let pool = &mut self.pool;
        self.later
            .drain(..)
            .map(|(at, id)| (at, transmit_of(pool.free(id))))
            .collect()
    }

    /// Data packets (travelling forward) sent so far.
    pub fn data_sent(&self) -> u64 {
        self.data_sent
    }

    /// The events reported since the last call, in order.
    pub fn take_events(&mut self) -> Vec<TransportEvent> {
        std::mem::take(&mut self.events)
    }

    /// The route a packet sent on `path` in `direction` took (for checks in tests).
    pub fn route(&self, path: PathId, direction: super::Direction) -> RouteId {
        self.paths[path.index()].route(direction)
    }
}

/// What a transport sent, read back from its packet.
fn transmit_of(p: crate::packet::Packet) -> Transmit {
    Transmit {
        path: p.path,
        direction: p.direction,
        size_bytes: p.size_bytes,
        header: p.header,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{CustomHeader, Header};
    use crate::transport::Direction;

    fn transmit(path: usize, direction: Direction, word: u64) -> Transmit {
        Transmit {
            path: PathId::from_index(path),
            direction,
            size_bytes: 100 + word as u32,
            header: Header::Custom(CustomHeader {
                words: [word, 0, 0, 0],
            }),
        }
    }

    /// An outbox's storage, for the tests that look into it directly.
    #[derive(Default)]
    struct Parts {
        pool: PacketPool,
        more: Vec<PacketId>,
        later: Vec<(SimTime, PacketId)>,
        events: Vec<TransportEvent>,
        data_sent: u64,
        rtt: RttHistograms,
    }

    impl Parts {
        /// An outbox of flow `flow` with paths `paths`, writing here.
        fn outbox<'a>(&'a mut self, flow: usize, paths: &'a [FlowPath]) -> Outbox<'a> {
            Outbox::new(
                FlowId::from_index(flow),
                paths,
                &mut self.pool,
                &mut self.more,
                &mut self.later,
                &mut self.events,
                &mut self.data_sent,
                &mut self.rtt,
            )
        }
    }

    #[test]
    fn packets_and_events_come_back_in_the_order_they_were_written() {
        let mut c = Capture::new(2);
        c.with(|out| {
            out.send(transmit(1, Direction::Forward, 1));
            out.report(TransportEvent::Finished);
            out.send(transmit(0, Direction::Reverse, 2));
            out.report(TransportEvent::Loss {
                path: PathId::from_index(1),
            });
        });
        let xs = c.take_transmits();
        assert_eq!(
            xs,
            vec![
                transmit(1, Direction::Forward, 1),
                transmit(0, Direction::Reverse, 2)
            ]
        );
        assert_eq!(
            c.take_events(),
            vec![
                TransportEvent::Finished,
                TransportEvent::Loss {
                    path: PathId::from_index(1)
                }
            ]
        );
        assert!(c.take_transmits().is_empty() && c.take_events().is_empty());
    }

    #[test]
    fn a_packet_written_in_place_is_the_packet_sent_whole() {
        // `send_with` writes into a slot the pool reuses (freed below) and into one it grows:
        // either way every field is the one `send` would have put there.
        let mut c = Capture::new(2);
        for _ in 0..2 {
            c.with(|out| {
                out.send(transmit(1, Direction::Reverse, 9));
                out.send_with(PathId::from_index(0), Direction::Forward, |header| {
                    *header = transmit(0, Direction::Forward, 3).header;
                    103
                });
                out.send_with(PathId::from_index(1), Direction::Reverse, |header| {
                    *header = transmit(1, Direction::Reverse, 4).header;
                    104
                });
            });
            assert_eq!(
                c.take_transmits(),
                vec![
                    transmit(1, Direction::Reverse, 9),
                    transmit(0, Direction::Forward, 3),
                    transmit(1, Direction::Reverse, 4),
                ]
            );
        }
        let paths = [FlowPath {
            forward: RouteId::from_index(6),
            reverse: RouteId::from_index(2),
        }];
        let mut parts = Parts::default();
        let mut out = parts.outbox(3, &paths);
        out.send_with(PathId::from_index(0), Direction::Reverse, |_| 77);
        let first = out.finish().expect("one packet sent");
        assert_eq!(parts.data_sent, 0, "a packet sent back is no data");
        let p = parts.pool.get(first);
        assert_eq!(
            (
                p.flow.index(),
                p.route.index(),
                p.hop,
                p.size_bytes,
                p.direction
            ),
            (3, 2, 0, 77, Direction::Reverse)
        );
    }

    #[test]
    fn a_packet_takes_the_route_of_its_path_and_direction() {
        let paths = [
            FlowPath {
                forward: RouteId::from_index(7),
                reverse: RouteId::from_index(3),
            },
            FlowPath {
                forward: RouteId::from_index(5),
                reverse: RouteId::from_index(9),
            },
        ];
        let mut parts = Parts {
            data_sent: 5,
            ..Parts::default()
        };
        let mut out = parts.outbox(4, &paths);
        out.send(transmit(1, Direction::Reverse, 0));
        out.send(transmit(0, Direction::Forward, 0));
        out.send(transmit(1, Direction::Forward, 0));
        let first = out.finish().expect("three packets sent");
        let Parts {
            pool,
            more,
            data_sent,
            ..
        } = parts;
        let sent: Vec<PacketId> = std::iter::once(first).chain(more.iter().copied()).collect();
        let routes: Vec<_> = sent.iter().map(|&id| pool.get(id).route.index()).collect();
        assert_eq!(routes, vec![9, 7, 5]);
        assert_eq!(data_sent, 7, "two data packets counted");
        assert!(sent
            .iter()
            .all(|&id| pool.get(id).flow == FlowId::from_index(4) && pool.get(id).hop == 0));
    }

    #[test]
    fn an_rtt_sample_goes_into_the_histograms_given_and_other_events_in_order() {
        use crate::trace::histogram::LogHistogram;
        let paths = [
            FlowPath {
                forward: RouteId::from_index(0),
                reverse: RouteId::from_index(1),
            },
            FlowPath {
                forward: RouteId::from_index(2),
                reverse: RouteId::from_index(3),
            },
        ];
        let sample = |path: usize, ns: u64| TransportEvent::RttSample {
            path: PathId::from_index(path),
            rtt: SimTime::from_nanos(ns),
        };
        let histogram = |samples: &[u64]| {
            let mut h = LogHistogram::default();
            for &ns in samples {
                h.record(ns);
            }
            h
        };
        // A flow with one path, and one with two: the samples land in the histograms (the
        // flow's, and their path's), the other events on the list in the order reported.
        for n in [1, 2] {
            let written = [
                sample(0, 3_000),
                TransportEvent::Finished,
                sample(n - 1, 5_000_000),
                TransportEvent::Loss {
                    path: PathId::from_index(0),
                },
                sample(0, 40_000),
            ];
            let mut parts = Parts {
                rtt: RttHistograms::new(n),
                ..Parts::default()
            };
            parts.rtt.direct = true;
            let mut out = parts.outbox(0, &paths[..n]);
            for e in written {
                out.report(e);
            }
            assert_eq!(out.finish(), None);
            let (events, h) = (parts.events, parts.rtt);
            assert_eq!(events, vec![written[1], written[3]]);
            assert_eq!(*h.flow(), histogram(&[40_000, 3_000, 5_000_000]));
            if n == 2 {
                assert_eq!(
                    h.paths,
                    [histogram(&[3_000, 40_000]), histogram(&[5_000_000])]
                );
            } else {
                assert!(h.paths.is_empty());
            }
            // Without histograms: every event on the list, in order.
            let mut c = Capture::new(n);
            c.with(|out| {
                for e in written {
                    out.report(e);
                }
            });
            assert_eq!(c.take_events(), written.to_vec());
        }
    }

    #[test]
    fn the_first_packet_sent_takes_the_arriving_slot_as_the_free_list_would_hand_it_out() {
        let paths = [FlowPath {
            forward: RouteId::from_index(0),
            reverse: RouteId::from_index(1),
        }];
        // A pool with slots 0..5 taken and 1 and 3 free (3 freed last).
        let pool_in_use = || {
            let mut pool = PacketPool::default();
            for _ in 0..5 {
                pool.alloc_slot();
            }
            pool.release(PacketId::from_index(1));
            pool.release(PacketId::from_index(3));
            pool
        };
        let arrived = PacketId::from_index(2);
        for sends in 0..4 {
            // Reference: the arriving slot freed first, then the packets allocated.
            let mut reference = pool_in_use();
            reference.release(arrived);
            let expected: Vec<PacketId> = (0..sends).map(|_| reference.alloc_slot().0).collect();
            let mut parts = Parts {
                pool: pool_in_use(),
                ..Parts::default()
            };
            let mut out = parts.outbox(0, &paths).reusing(arrived);
            for i in 0..sends {
                out.send(transmit(0, Direction::Reverse, i as u64));
            }
            let first = out.finish();
            let mut pool = parts.pool;
            let sent: Vec<PacketId> = first.into_iter().chain(parts.more).collect();
            assert_eq!(sent, expected, "{sends} packets sent");
            // The pool is left as the reference: the same slots in use, the same handed
            // out next.
            assert_eq!(pool.live(), reference.live());
            for _ in 0..3 {
                assert_eq!(pool.alloc_slot().0, reference.alloc_slot().0);
            }
            for (i, &id) in sent.iter().enumerate() {
                assert_eq!(pool.get(id), &{
                    let x = transmit(0, Direction::Reverse, i as u64);
                    crate::packet::Packet {
                        flow: FlowId::from_index(0),
                        path: x.path,
                        direction: x.direction,
                        route: RouteId::from_index(1),
                        hop: 0,
                        size_bytes: x.size_bytes,
                        header: x.header,
                    }
                });
            }
        }
    }

    #[test]
    fn a_packet_sent_to_leave_later_is_held_apart_with_its_time() {
        let mut c = Capture::new(2);
        let at = SimTime::from_micros(7);
        c.with(|out| {
            out.send_at(transmit(1, Direction::Forward, 1), at);
            out.send(transmit(0, Direction::Reverse, 2));
            out.send_at(transmit(0, Direction::Forward, 3), at);
        });
        assert_eq!(c.take_transmits(), vec![transmit(0, Direction::Reverse, 2)]);
        assert_eq!(
            c.take_later(),
            vec![
                (at, transmit(1, Direction::Forward, 1)),
                (at, transmit(0, Direction::Forward, 3))
            ]
        );
        assert_eq!(c.data_sent(), 2, "held data counts as sent");
        // The arriving packet's slot goes to the first packet sent, held or not.
        let paths = [FlowPath {
            forward: RouteId::from_index(0),
            reverse: RouteId::from_index(1),
        }];
        let mut parts = Parts::default();
        let arrived = parts.pool.alloc_slot().0;
        let mut out = parts.outbox(0, &paths).reusing(arrived);
        out.send_at(transmit(0, Direction::Reverse, 4), at);
        assert_eq!(out.finish(), None, "nothing leaves now");
        assert_eq!(parts.later, vec![(at, arrived)]);
        assert_eq!(parts.pool.live(), 1);
    }
}
