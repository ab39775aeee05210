//! MPTCP packet schedulers: which subflow carries the next data-level segment (reference
//! `multipath_cc.md` §3).
//!
//! The connection ([`super::connection`]) owns the data: it picks the segment (the head of the
//! reinjection queue, else the next new data), then asks its scheduler which subflow should
//! carry it, passing a [`SubflowView`] of every subflow (always in subflow order) and a
//! [`ConnectionView`]. The scheduler answers with a [`Pick`]: wait, one subflow, or (for the
//! redundant scheduler) several. A scheduler keeps its own state between calls (round robin's
//! quotas, BLEST's lambda, the capacity estimates) and is sans-IO like everything else.
//!
//! Binding is late, as in the v0.9x kernel (§3.0): a segment is handed to a subflow only when
//! the subflow has room in its congestion window, so [`SubflowView::has_window_space`] is the
//! usual availability test. The connection never sends on a subflow that is not
//! [`SubflowView::usable`] or has no window space, whatever the scheduler answers (an answer
//! naming such a subflow counts as `Wait`).
//!
//! One scheduler per file with its registry declaration (`SPEC`); the built-ins are listed in
//! the `builtin_schedulers!` invocation below.

use crate::registry::{AlgorithmSpec, Category, Configured, Kind};
// The category is the registry's; this module registers into it (`impl Kind` below).
pub use crate::registry::SchedulerKind;
use crate::time::SimTime;

/// What a scheduler sees of one subflow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubflowView {
    /// The subflow's index in the connection (0-based, scenario order).
    pub id: usize,
    /// Structurally available: started, not marked potentially failed after a timeout (v0.9x
    /// `pf`, cleared when an ACK arrives on it), not in timeout (go-back-N) recovery.
    pub usable: bool,
    /// A backup subflow: used for new data only when no non-backup subflow is usable.
    pub backup: bool,
    /// Segment size in bytes.
    pub mss: u32,
    /// Congestion window in bytes (the controller's, or PRR's during recovery).
    pub cwnd_bytes: u64,
    /// Slow-start threshold in bytes (`u64::MAX` before the first loss).
    pub ssthresh_bytes: u64,
    /// Bytes in flight on the subflow (RFC 6675 pipe).
    pub in_flight_bytes: u64,
    /// Bytes sent on the subflow and not yet acknowledged at the subflow level
    /// (`snd_nxt - snd_una`, SACKed bytes included): the kernel's queued bytes (there is no
    /// unsent subflow queue: binding is late).
    pub queued_bytes: u64,
    /// Smoothed RTT, zero before the first sample.
    pub srtt: SimTime,
    /// RTT variation (RFC 6298 RTTVAR), zero before the first sample.
    pub rttvar: SimTime,
    /// Window reductions so far (fast retransmits, timeouts, penalisations): a scheduler that
    /// must notice a loss compares it with the count it saw last.
    pub loss_events: u64,
    /// This subflow already carried the segment being scheduled (v0.9x `path_mask`).
    pub carried: bool,
}

impl SubflowView {
    /// Room for one more segment of `len` bytes in the congestion window (always when nothing
    /// is in flight, as the TCP core allows).
    #[inline]
    pub fn has_window_space(&self, len: u32) -> bool {
        self.in_flight_bytes == 0 || self.in_flight_bytes + u64::from(len) <= self.cwnd_bytes
    }

    /// [`SubflowView::usable`] and [`SubflowView::has_window_space`].
    #[inline]
    pub fn can_send(&self, len: u32) -> bool {
        self.usable && self.has_window_space(len)
    }

    /// Congestion window in whole segments (at least 1).
    pub fn cwnd_segments(&self) -> u64 {
        (self.cwnd_bytes / u64::from(self.mss.max(1))).max(1)
    }

    /// Segments in flight, rounded up.
    pub fn in_flight_segments(&self) -> u64 {
        self.in_flight_bytes.div_ceil(u64::from(self.mss.max(1)))
    }
}

/// Whether new data may only go to backup subflows: when no non-backup subflow is usable (the
/// rule of [`SubflowView::backup`]).
pub fn backups_only(subflows: &[SubflowView]) -> bool {
    !subflows.iter().any(|s| s.usable && !s.backup)
}

/// The segment to be scheduled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SegmentView {
    /// Data sequence number of its first byte.
    pub dsn: u64,
    pub len: u32,
    /// A data-level retransmission (reinjection): it was sent before on the subflows whose
    /// [`SubflowView::carried`] is set. A segment that is not a reinjection but was carried
    /// by some subflow is a copy for the others
    /// ([`PacketScheduler::copies_to_every_subflow`]); new data was carried by none.
    pub is_reinjection: bool,
}

/// What a scheduler sees of the connection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnectionView {
    pub now: SimTime,
    /// Room left in the peer's data-level receive window past the highest data sequence
    /// number sent (`DATA_ACK + window - data_nxt`), in bytes.
    pub data_window_bytes: u64,
    /// The peer's whole advertised data-level window, in bytes.
    pub peer_window_bytes: u64,
    /// Bytes the application has written that no subflow has carried yet (ECF's `k`).
    pub unscheduled_bytes: u64,
}

/// Why a scheduler decided what it did (recorded in the trace of picks).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// The usable subflow with window space and the lowest smoothed RTT.
    LowestRtt,
    /// Nothing usable has window space now.
    NoWindowSpace,
    /// The next subflow in round-robin order.
    RoundRobin,
    /// A copy on every subflow with window space.
    Redundant,
    /// BLEST: sending on the slower subflow would block the fast one; wait for it.
    BlestWait,
    /// ECF: waiting for the fastest subflow completes sooner.
    EcfWait,
    /// Linux (upstream): the lowest linger time (queued bytes over pacing rate).
    LowestLinger,
    /// Linux (upstream): the burst in progress continues on the same subflow.
    Burst,
    /// Capacity (Yang–Amer–Ekiz): the lowest srtt among subflows with `Occupied <= gamma`.
    Uncongested,
    /// Capacity: every available subflow has `Occupied > gamma`; the smallest `Occupied`.
    LeastOccupied,
    /// Capacity: every subflow has `Occupied > delta` or no window space.
    AllCongested,
    /// A backup subflow, because no non-backup subflow is usable.
    Backup,
}

impl Reason {
    /// The name the trace and the results use.
    pub fn name(self) -> &'static str {
        match self {
            Reason::LowestRtt => "lowest_rtt",
            Reason::NoWindowSpace => "no_window_space",
            Reason::RoundRobin => "round_robin",
            Reason::Redundant => "redundant",
            Reason::BlestWait => "blest_wait",
            Reason::EcfWait => "ecf_wait",
            Reason::LowestLinger => "lowest_linger",
            Reason::Burst => "burst",
            Reason::Uncongested => "uncongested",
            Reason::LeastOccupied => "least_occupied",
            Reason::AllCongested => "all_congested",
            Reason::Backup => "backup",
        }
    }
}

/// A set of subflow indices (at most [`MAX_SUBFLOWS`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SubflowSet(pub u32);

/// Most subflows a connection may have.
pub const MAX_SUBFLOWS: usize = 32;

impl SubflowSet {
    pub const EMPTY: SubflowSet = SubflowSet(0);
    pub fn insert(&mut self, id: usize) {
        self.0 |= 1 << id;
    }
    pub fn remove(&mut self, id: usize) {
        if id < MAX_SUBFLOWS {
            self.0 &= !(1 << id);
        }
    }
    pub fn contains(self, id: usize) -> bool {
        id < MAX_SUBFLOWS && self.0 & (1 << id) != 0
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub fn len(self) -> u32 {
        self.0.count_ones()
    }
    /// The indices, ascending: one step per member (the lowest set bit, then cleared).
    pub fn iter(self) -> impl Iterator<Item = usize> {
        let mut bits = self.0;
        std::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            Some(i)
        })
    }
}

/// A scheduler's decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Send nothing now; the connection asks again after the next ACK or timer.
    Wait,
    /// Send the segment on this subflow.
    One(usize),
    /// Send a copy of the segment on each of these subflows (the redundant scheduler).
    Several(SubflowSet),
}

/// A decision and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pick {
    pub decision: Decision,
    pub reason: Reason,
}

impl Pick {
    pub fn wait(reason: Reason) -> Pick {
        Pick {
            decision: Decision::Wait,
            reason,
        }
    }
    pub fn one(subflow: usize, reason: Reason) -> Pick {
        Pick {
            decision: Decision::One(subflow),
            reason,
        }
    }
}

/// Connection-level behaviour a scheduler asks for (the v0.9x receive-buffer optimisation,
/// reference §3.1.4), carried out by the connection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedulerOptions {
    /// Halve the window of a slower subflow holding the segment that blocks the data-level
    /// window, at most once per SRTT of the fast subflow.
    pub penalisation: bool,
    /// Resend the blocking segment on the fast subflow.
    pub opportunistic_retransmission: bool,
}

/// A packet scheduler.
pub trait PacketScheduler {
    /// Registry name (`min_rtt`, `capacity`, ...).
    fn name(&self) -> &'static str;
    /// Which subflow(s) should carry `segment`; `subflows` is every subflow, in index order.
    fn schedule(
        &mut self,
        connection: &ConnectionView,
        segment: &SegmentView,
        subflows: &[SubflowView],
    ) -> Pick;
    /// The receive-buffer optimisation this scheduler runs with (none by default).
    fn options(&self) -> SchedulerOptions {
        SchedulerOptions::default()
    }
    /// Whether `schedule` only reads its inputs (changes nothing of the scheduler): the
    /// connection then does not ask it about a segment no subflow has the window for, whose
    /// answer it could not act on (unless it logs its picks). False by default. Asked once,
    /// when the connection is built.
    fn is_stateless(&self) -> bool {
        false
    }
    /// Whether `schedule` places new data (a segment no subflow has carried) exactly as
    /// [`min_rtt::lowest_rtt`] does and changes nothing doing so: the connection may then
    /// choose the subflow for new data itself, with [`min_rtt::NewDataChoice`] from the few
    /// fields that choice reads, without taking the views (unless it logs its picks). False
    /// by default. Asked once, when the connection is built.
    fn places_new_data_by_lowest_rtt(&self) -> bool {
        false
    }
    /// Whether every subflow should carry the whole stream (the redundant scheduler): the
    /// connection then keeps, per subflow, how far along the data sequence space it has
    /// carried the data (skipping what is DATA_ACKed), and before new data offers the oldest
    /// chunk some usable non-backup subflow with window space has not carried yet, as a copy
    /// (a [`SegmentView`] that is not a reinjection, with the subflows that carried it
    /// marked [`SubflowView::carried`]). False by default: each chunk is offered once.
    fn copies_to_every_subflow(&self) -> bool {
        false
    }
    /// The connection ran the receive-buffer optimisation (penalised or retransmitted
    /// opportunistically); BLEST raises its lambda after one.
    fn on_receive_buffer_optimisation(&mut self) {}
    /// A value to record in time series for `subflow` (the capacity scheduler's estimated
    /// available path capacity, in segments).
    fn subflow_estimate(&self, _subflow: usize) -> Option<f64> {
        None
    }
}

/// What a scheduler's constructor is given besides its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedulerContext {
    /// Number of subflows of the connection.
    pub subflows: usize,
}

/// A scheduler as named in a scenario, with its validated parameters.
pub type SchedulerSpec = Configured<SchedulerKind>;

impl Kind for SchedulerKind {
    const CATEGORY: Category = Category::Scheduler;
    type Context = SchedulerContext;
    type Output = Scheduler;

    fn registry() -> &'static [&'static AlgorithmSpec<Self>] {
        REGISTRY
    }
}

/// Generates, from one line `module::Type` per built-in scheduler (its declaration is
/// `module::SPEC`): [`REGISTRY`], the [`Scheduler`] enum with one variant per line plus
/// `Custom`, and the enum's static dispatch.
macro_rules! builtin_schedulers {
    ($($module:ident :: $variant:ident),* $(,)?) => {
        $(pub mod $module;)*

        /// The declarations of the built-in schedulers, sorted by name.
        pub const REGISTRY: &[&AlgorithmSpec<SchedulerKind>] = &[$(&$module::SPEC),*];

        /// A packet scheduler (enum dispatch), or any boxed implementation.
        pub enum Scheduler {
            $($variant($module::$variant),)*
            Custom(Box<dyn PacketScheduler + Send>),
        }

        $(impl From<$module::$variant> for Scheduler {
            fn from(s: $module::$variant) -> Self {
                Scheduler::$variant(s)
            }
        })*

        $crate::dispatch::enum_dispatch! {
            impl PacketScheduler for Scheduler [$($variant,)* Custom] {
                fn name(&self) -> &'static str;
                #[inline]
                fn schedule(
                    &mut self,
                    connection: &ConnectionView,
                    segment: &SegmentView,
                    subflows: &[SubflowView],
                ) -> Pick;
                fn options(&self) -> SchedulerOptions;
                fn is_stateless(&self) -> bool;
                fn places_new_data_by_lowest_rtt(&self) -> bool;
                fn copies_to_every_subflow(&self) -> bool;
                fn on_receive_buffer_optimisation(&mut self);
                fn subflow_estimate(&self, subflow: usize) -> Option<f64>;
            }
        }
    };
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Scheduler").field(&self.name()).finish()
    }
}

// The registry of schedulers: one line per built-in.
builtin_schedulers! {
    blest::Blest,
    capacity::Capacity,
    ecf::Ecf,
    linux::Linux,
    min_rtt::MinRtt,
    redundant::Redundant,
    round_robin::RoundRobin,
}

#[cfg(test)]
mod tests;
