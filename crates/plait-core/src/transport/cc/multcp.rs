//! MulTCP: one congestion window that takes the share of N Reno flows. J. Crowcroft and
//! P. Oechslin, "Differentiated end-to-end Internet services using a weighted proportional fair
//! sharing TCP", ACM SIGCOMM Computer Communication Review 28(3), 1998.
//!
//! N real flows together add N segments per round trip, and a loss halves one of them, which
//! holds about cwnd/N: the aggregate loses cwnd/(2N). MulTCP is thus AIMD(α, β) with
//! N-dependent parameters, here with **β the fraction lost** (the convention of
//! [`crate::model::aimd`], not the fraction kept of [`Aimd`](super::Aimd)):
//!
//! - congestion avoidance: `cwnd += α·MSS` per window of acknowledged data, i.e. on average
//!   `α·MSS·acked/cwnd` per ACK, counted in bytes exactly as Reno's RFC 3465 §2.1 byte counting
//!   (the shared [`ByteCountingWindow`]);
//! - loss detected by duplicate ACKs or SACK: `ssthresh = max((1 − β)·FlightSize, 2·SMSS)` and
//!   `cwnd = ssthresh`, RFC 5681 eq. (4) with the kept fraction `1 − β` in place of 1/2;
//! - `equivalence = "crowcroft"` (the paper's choice): `α = N`, `β = 1/(2N)`
//!   ([`model::aimd::multcp_original`](crate::model::aimd::multcp_original)). Under periodic
//!   losses this gives `W/(N·W_TCP) = sqrt((2 − 1/(2N))/1.5)`, up to 15.5 % more than N flows
//!   ([`crate::model::aimd`]). Altman et al. (INFOCOM 2006, §II-B.4) print MulTCP's kept
//!   fraction as "1 − N/2"; 1 − 1/(2N) is meant (`docs/models.md`);
//! - `equivalence = "exact"`: the same `β = 1/(2N)` and the `α` for which AIMD(α, β) has the
//!   mean window of N Reno flows under periodic losses, `α(2 − β)/β = 3N²`, i.e.
//!   `α = 3N²β/(2 − β) = 3N²/(4N − 1)`
//!   ([`model::aimd::equivalent_alpha`](crate::model::aimd::equivalent_alpha)); defined for
//!   N > ¼ only.
//!
//! Slow start, timeouts and recovery are Reno's (RFC 5681, as [`Reno`](super::Reno)): the slow
//! start of one flow from the initial window (the paper's faster start, which catches up with
//! N flows starting together, is not implemented); on a retransmission timeout cwnd = one
//! SMSS, the loss window of one flow (more conservative than N flows of which one timed out:
//! "timeout losses force the entire mulTCP window to be cut down to 1", Singh, Pradhan and
//! Francis, ICNP 2004, §2, citing the MulTCP paper), and ssthresh by `timeout_ssthresh`
//! ([`TimeoutSsthresh`]), at least 2·SMSS and kept by a repeated timeout (RFC 5681 §3.1). The
//! MulTCP paper's own text is not at hand (what is cited of it says nothing of ssthresh); the
//! rules and their measured effect are in `docs/ns2.md` ("MulTCP's timeout rule"):
//!
//! - `"half"` (the default): `FlightSize/2`, RFC 5681 eq. (4), as for one TCP flow, whose
//!   window the timeout has just reset to one segment; with N = 1 MulTCP is then Reno;
//! - `"multcp"`: `(1 − β)·FlightSize`, as at a loss: one of N flows halves (plait's rule
//!   until issue 32; no source gives it);
//! - `"ns2"`: half the window, `⌊cwnd/(2·SMSS)⌋` whole segments, whatever N: ns-2.35's
//!   MulTCP emulation (`decrease_num_`), whose `TcpAgent::timeout` (tcp/tcp.cc) sets
//!   `last_cwnd_action_ = CWND_ACTION_TIMEOUT` and calls
//!   `slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_RESTART)`, where a timeout takes
//!   `ssthresh_ = (int) halfwin`, `halfwin = windowd()/2`, rather than
//!   `decrease_num_·windowd()` (windowd() is min(cwnd_, window_) in packets; plait's receive
//!   window is not the controller's to see). ns-2 also recomputes it at a repeated timeout
//!   (from a window of one packet: 2); plait keeps it, for every rule. The same as `"half"`
//!   but for the basis (cwnd rather than FlightSize capped at cwnd) and the rounding.
//!
//! No growth in recovery or when the sender is not cwnd-limited (RFC 7661 §4).
//!
//! With N = 1 (either equivalence: α = 1, β = ½) MulTCP is Reno bit for bit, arithmetic
//! included: when `α·MSS` is a whole number of bytes the increase is `windows·α·MSS` in
//! integers, as Reno's `windows·MSS`, and otherwise `α·MSS` per window with the fraction of a
//! byte carried to the next increase (as [`Aimd`](super::Aimd)); when `2N` is a whole number
//! `k` the reduced window is `FlightSize − ⌈FlightSize/k⌉ = ⌊FlightSize·(1 − 1/k)⌋` in
//! integers (k = 2: ⌊FlightSize/2⌋, Reno's), and otherwise `⌊FlightSize·(1 − 1/(2N))⌋` in
//! floating point. For N ≤ ½, β ≥ 1: every loss takes the window down to its 2-SMSS floor.
//!
//! Known behaviour: both equivalences assume that losses hit the window as they would hit N
//! independent flows, in proportion to its rate (random losses, or a queue that signals one
//! flow per congestion episode). When every flow loses once per congestion epoch of T rounds
//! (drop-tail overflow shared by a few flows), AIMD(α, β) peaks at αT/β and averages
//! (1 − β/2)·αT/β, against 1.5T for Reno: with N = 4, MulTCP takes about 20 Reno shares rather
//! than 4 (`tests/multcp.rs` measures both regimes).

use super::window::{half_flight_size, ByteCountingWindow};
use super::{AckSample, CongestionControl, ControllerKind};
use crate::model::aimd::{equivalent_alpha, multcp_original};
use crate::registry::{AlgorithmSpec, Param, ParamError, ParamIssue, Params, Scalar, Value};
use crate::time::SimTime;

/// The registry declaration of MulTCP.
pub const SPEC: AlgorithmSpec<ControllerKind> = AlgorithmSpec {
    name: "multcp",
    summary: "MulTCP: one window with the share of n Reno flows (Crowcroft & Oechslin 1998)",
    params: &[
        Param::number(
            "n",
            "the number of Reno flows emulated (need not be a whole number)",
        )
        .unit("flows")
        .greater_than(0.0),
        Param::choice(
            "equivalence",
            Equivalence::NAMES,
            "crowcroft: alpha = n, the paper's; exact: alpha = 3n²/(4n − 1), the mean window \
             of n flows; both lose 1/(2n) of the window on a loss",
        )
        .default(Scalar::Name("crowcroft")),
        Param::choice(
            "timeout_ssthresh",
            TimeoutSsthresh::NAMES,
            "ssthresh at a retransmission timeout, after which cwnd is one segment: multcp: \
             (1 − 1/(2n))·FlightSize, as at a loss; half: FlightSize/2 (RFC 5681 eq. (4), one \
             TCP flow's); ns2: half the window in whole segments (ns-2.35 TcpAgent::timeout \
             and slowdown, tcp/tcp.cc); at least 2 segments, kept by a repeated timeout",
        )
        .default(Scalar::Name("half")),
    ],
    finish: Some(|params| {
        let params = MulTcpParams::from(&*params);
        if params.equivalence == Equivalence::Exact && params.n <= 0.25 {
            return Err(ParamIssue::at(
                "n",
                format!(
                    "must be greater than 0.25 with equivalence = \"exact\" (alpha = 3n²/(4n − 1) \
                     is not positive below), got {}",
                    crate::units::format_number(params.n)
                ),
            ));
        }
        Ok(())
    }),
    build: |params, connection| {
        let params = MulTcpParams::from(params);
        MulTcp::new(connection.mss, connection.initial_window, params).into()
    },
};

/// How the increase α is chosen for N flows (the decrease is 1/(2N) either way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Equivalence {
    /// α = N (Crowcroft and Oechslin).
    Crowcroft,
    /// α(2 − β)/β = 3N²: the mean window of N Reno flows under periodic losses.
    Exact,
}

impl Equivalence {
    /// The scenario names, in declaration order.
    pub const NAMES: &'static [&'static str] = &["crowcroft", "exact"];

    pub fn name(self) -> &'static str {
        match self {
            Equivalence::Crowcroft => "crowcroft",
            Equivalence::Exact => "exact",
        }
    }
}

/// ssthresh after a retransmission timeout (cwnd is one segment whichever).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutSsthresh {
    /// `max((1 − 1/(2N))·FlightSize, 2·SMSS)`: the loss rule, one of N flows halves.
    MulTcp,
    /// `max(FlightSize/2, 2·SMSS)`: RFC 5681 eq. (4), as for one TCP flow.
    Half,
    /// `max(⌊cwnd/(2·SMSS)⌋·SMSS, 2·SMSS)`: ns-2.35's `TcpAgent::slowdown` after
    /// `TcpAgent::timeout` (tcp/tcp.cc), which halves the window whatever `decrease_num_`.
    Ns2,
}

impl TimeoutSsthresh {
    /// The scenario names, in declaration order.
    pub const NAMES: &'static [&'static str] = &["multcp", "half", "ns2"];

    pub fn name(self) -> &'static str {
        match self {
            TimeoutSsthresh::MulTcp => "multcp",
            TimeoutSsthresh::Half => "half",
            TimeoutSsthresh::Ns2 => "ns2",
        }
    }
}

/// MulTCP parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MulTcpParams {
    /// The number of flows emulated, N > 0.
    pub n: f64,
    pub equivalence: Equivalence,
    pub timeout_ssthresh: TimeoutSsthresh,
}

impl MulTcpParams {
    /// The fraction of the window lost on a loss, β = 1/(2N).
    pub fn beta_decrease(&self) -> f64 {
        multcp_original(self.n).1
    }

    /// The increase α in segments per window of acknowledged data.
    pub fn alpha(&self) -> f64 {
        match self.equivalence {
            Equivalence::Crowcroft => multcp_original(self.n).0,
            Equivalence::Exact => equivalent_alpha(self.n, self.beta_decrease()),
        }
    }

    /// Checks the parameters against their declaration ([`SPEC`]).
    pub fn validate(&self) -> Result<(), ParamError> {
        let given = [
            ("n", Value::Number(self.n)),
            ("equivalence", Value::Choice(self.equivalence.name())),
            (
                "timeout_ssthresh",
                Value::Choice(self.timeout_ssthresh.name()),
            ),
        ];
        SPEC.check(&given).map(drop)
    }
}

impl From<&Params> for MulTcpParams {
    fn from(p: &Params) -> Self {
        MulTcpParams {
            n: p.number("n"),
            equivalence: match p.choice("equivalence") {
                "exact" => Equivalence::Exact,
                _ => Equivalence::Crowcroft,
            },
            timeout_ssthresh: match p.choice("timeout_ssthresh") {
                "multcp" => TimeoutSsthresh::MulTcp,
                "ns2" => TimeoutSsthresh::Ns2,
                _ => TimeoutSsthresh::Half,
            },
        }
    }
}

/// The congestion-avoidance increase per window of acknowledged data.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Increase {
    /// α·MSS is a whole number of bytes.
    Whole(u64),
    /// α·MSS bytes, and the fraction of a byte left over from the last increase.
    Fraction { bytes: f64, remainder: f64 },
}

/// The window kept after a loss, from FlightSize.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Decrease {
    /// 2N is the whole number k: keep `FlightSize − ⌈FlightSize/k⌉`.
    Whole(u64),
    /// Keep `⌊FlightSize·(1 − 1/(2N))⌋`.
    Fraction(f64),
}

/// Largest integer below which every integer is exact in an `f64`.
const EXACT_INTEGERS: f64 = 9_007_199_254_740_992.0; // 2^53

impl Decrease {
    fn new(n: f64) -> Self {
        let k = 2.0 * n;
        if k.fract() == 0.0 && (1.0..EXACT_INTEGERS).contains(&k) {
            Decrease::Whole(k as u64)
        } else {
            Decrease::Fraction(1.0 - 1.0 / k)
        }
    }

    /// `max((1 − 1/(2N))·flight, 2·mss)`, rounded down to whole bytes.
    fn reduced(self, flight: u64, mss: u64) -> u64 {
        let kept = match self {
            Decrease::Whole(k) => flight - flight.div_ceil(k),
            // `as` saturates: a negative product (N < ½) gives 0, then the floor.
            Decrease::Fraction(kept) => (flight as f64 * kept).floor() as u64,
        };
        kept.max(2 * mss)
    }
}

/// MulTCP congestion window.
#[derive(Clone, Debug, PartialEq)]
pub struct MulTcp {
    params: MulTcpParams,
    window: ByteCountingWindow,
    increase: Increase,
    decrease: Decrease,
}

impl MulTcp {
    /// A MulTCP window for segments of `mss` bytes, starting at `initial_window_segments × mss`
    /// (at least one segment) with an unbounded ssthresh.
    ///
    /// # Panics
    /// If `mss` is zero or the parameters are invalid ([`MulTcpParams::validate`]).
    pub fn new(mss: u32, initial_window_segments: u32, params: MulTcpParams) -> Self {
        let window = ByteCountingWindow::new("multcp", mss, initial_window_segments);
        if let Err(e) = params.validate() {
            panic!("{e}");
        }
        let bytes = params.alpha() * window.mss() as f64;
        let increase = if bytes.fract() == 0.0 && bytes < EXACT_INTEGERS {
            Increase::Whole(bytes as u64)
        } else {
            Increase::Fraction {
                bytes,
                remainder: 0.0,
            }
        };
        MulTcp {
            params,
            window,
            increase,
            decrease: Decrease::new(params.n),
        }
    }

    /// Sets the slow-start byte-counting limit L in segments (1 or 2, RFC 3465 §2.2).
    ///
    /// # Panics
    /// If `segments` is not 1 or 2.
    pub fn with_abc_limit(mut self, segments: u32) -> Self {
        self.window.set_abc_limit(segments);
        self
    }

    pub fn params(&self) -> MulTcpParams {
        self.params
    }

    /// Segment size in bytes.
    pub fn mss(&self) -> u64 {
        self.window.mss()
    }

    /// Bytes counted towards the next congestion-avoidance increase (RFC 3465 `bytes_acked`).
    pub fn bytes_acked(&self) -> u64 {
        self.window.bytes_acked()
    }

    /// `max((1 − β)·FlightSize, 2·SMSS)`: ssthresh after a loss (and after a timeout with
    /// `timeout_ssthresh = "multcp"`).
    fn reduced(&self, bytes_in_flight: u64) -> u64 {
        self.decrease.reduced(bytes_in_flight, self.window.mss())
    }
}

impl CongestionControl for MulTcp {
    fn name(&self) -> &'static str {
        SPEC.name
    }

    fn cwnd(&self) -> u64 {
        self.window.cwnd()
    }

    fn ssthresh(&self) -> u64 {
        self.window.ssthresh()
    }

    fn on_ack(&mut self, sample: &AckSample) {
        // Once a full window has been acknowledged, cwnd += α·MSS (RFC 3465 §2.1 with α·SMSS
        // in place of SMSS): α·MSS·acked/cwnd per ACK on average.
        let windows = self.window.on_ack(sample);
        if windows == 0 {
            return;
        }
        let grow = match &mut self.increase {
            Increase::Whole(bytes) => windows.saturating_mul(*bytes),
            Increase::Fraction { bytes, remainder } => {
                let total = windows as f64 * *bytes + *remainder;
                let whole = total.floor();
                *remainder = total - whole;
                whole as u64
            }
        };
        self.window.grow(grow);
    }

    fn on_congestion_event(&mut self, _now: SimTime, bytes_in_flight: u64) {
        // ssthresh = max((1 − 1/(2N))·FlightSize, 2·SMSS), cwnd = ssthresh: one of N flows,
        // holding 1/N of the window, halves.
        let reduced = self.reduced(bytes_in_flight);
        self.window.on_congestion_event(reduced);
    }

    fn on_retransmission_timeout(&mut self, _now: SimTime, bytes_in_flight: u64) {
        // cwnd = one SMSS (RFC 5681 §3.1); ssthresh by the rule chosen, kept by a repeated
        // timeout.
        let mss = self.window.mss();
        let ssthresh = match self.params.timeout_ssthresh {
            TimeoutSsthresh::MulTcp => self.reduced(bytes_in_flight),
            // RFC 5681 eq. (4): max(FlightSize/2, 2·SMSS).
            TimeoutSsthresh::Half => half_flight_size(bytes_in_flight, mss),
            // ns-2.35 tcp/tcp.cc: ssthresh_ = (int)(windowd()/2) packets, at least 2.
            TimeoutSsthresh::Ns2 => (self.window.cwnd() / (2 * mss) * mss).max(2 * mss),
        };
        self.window.on_retransmission_timeout(ssthresh);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cc::testing::{ack, run_round};
    use crate::transport::cc::{CcSpec, Reno};
    use proptest::prelude::*;

    const MSS: u32 = 1000;
    const M: u64 = MSS as u64;
    const RTT: SimTime = SimTime::from_millis(50);

    fn multcp(n: f64, equivalence: Equivalence) -> MulTcp {
        with_timeout_rule(n, equivalence, TimeoutSsthresh::MulTcp)
    }

    fn with_timeout_rule(n: f64, equivalence: Equivalence, rule: TimeoutSsthresh) -> MulTcp {
        let params = MulTcpParams {
            n,
            equivalence,
            timeout_ssthresh: rule,
        };
        MulTcp::new(MSS, 10, params)
    }

    fn crowcroft(n: f64) -> MulTcp {
        multcp(n, Equivalence::Crowcroft)
    }

    /// `cc` in congestion avoidance with cwnd = ssthresh = `segments` segments, as a loss
    /// leaves it.
    fn in_avoidance(mut cc: MulTcp, segments: u64) -> MulTcp {
        cc.window.on_congestion_event(segments * M);
        assert!(!cc.in_slow_start());
        cc
    }

    #[test]
    fn parameters_of_the_two_equivalences() {
        let p = |n, equivalence| MulTcpParams {
            n,
            equivalence,
            timeout_ssthresh: TimeoutSsthresh::MulTcp,
        };
        // Crowcroft: alpha = N, beta = 1/(2N).
        assert_eq!(p(4.0, Equivalence::Crowcroft).alpha(), 4.0);
        assert_eq!(p(4.0, Equivalence::Crowcroft).beta_decrease(), 0.125);
        assert_eq!(p(0.5, Equivalence::Crowcroft).alpha(), 0.5);
        assert_eq!(p(0.5, Equivalence::Crowcroft).beta_decrease(), 1.0);
        // Exact: alpha(2 - beta)/beta = 3N², i.e. alpha = 3N²/(4N - 1): 48/15 for N = 4,
        // exactly 1 for N = 1 (Reno).
        for n in [0.3, 0.5, 1.0, 2.0, 4.0, 10.0, 37.5] {
            let exact = p(n, Equivalence::Exact);
            let (alpha, beta) = (exact.alpha(), exact.beta_decrease());
            assert!(
                (alpha * (2.0 - beta) / beta - 3.0 * n * n).abs() <= 1e-12 * 3.0 * n * n,
                "N = {n}"
            );
            assert!((alpha - 3.0 * n * n / (4.0 * n - 1.0)).abs() <= 1e-12 * alpha);
        }
        assert_eq!(p(1.0, Equivalence::Exact).alpha(), 1.0);
        assert!((p(4.0, Equivalence::Exact).alpha() - 3.2).abs() < 1e-15);
    }

    #[test]
    fn congestion_avoidance_adds_n_segments_per_round_trip() {
        for n in [1u64, 2, 4, 7] {
            let mut cc = in_avoidance(crowcroft(n as f64), 40);
            let mut now = SimTime::ZERO;
            for round in 1..=20u64 {
                now = run_round(&mut cc, now, RTT, MSS);
                assert_eq!(cc.cwnd(), (40 + n * round) * M, "N = {n}, round {round}");
                assert_eq!(cc.bytes_acked(), 0);
            }
        }
    }

    #[test]
    fn the_increase_counts_bytes_as_reno_does() {
        // N = 4: 4 MSS per window of acknowledged bytes, whatever the ACK sizes; the odd
        // bytes carry over exactly.
        let mut cc = in_avoidance(crowcroft(4.0), 10);
        cc.on_ack(&ack(SimTime::ZERO, 10 * M - 1, RTT, MSS));
        assert_eq!((cc.cwnd(), cc.bytes_acked()), (10 * M, 10 * M - 1));
        cc.on_ack(&ack(SimTime::ZERO, 1, RTT, MSS));
        assert_eq!((cc.cwnd(), cc.bytes_acked()), (14 * M, 0));
        // One ACK covering two and a half windows: two increases at once, the rest carried.
        cc.on_ack(&ack(SimTime::ZERO, 35 * M, RTT, MSS));
        assert_eq!((cc.cwnd(), cc.bytes_acked()), (22 * M, 7 * M));
    }

    #[test]
    fn a_fractional_increase_carries_the_fraction_of_a_byte() {
        // Exact equivalence with N = 4: alpha = 3.2, 3200 bytes per window of 1000-byte
        // segments, which is not exact in binary (3.2·1000 = 3200.0000000000005): the fraction
        // is carried, so that after w windows the window has grown by ⌊3200·w⌋ ± 1 byte.
        let mut cc = in_avoidance(multcp(4.0, Equivalence::Exact), 50);
        let start = cc.cwnd();
        for windows in 1..=400u64 {
            cc.on_ack(&ack(SimTime::ZERO, cc.cwnd(), RTT, MSS));
            let grown = (cc.cwnd() - start) as i64;
            assert!(
                (grown - 3200 * windows as i64).abs() <= 1,
                "window {windows}: {grown}"
            );
        }
        // N = 0.3 (crowcroft): 300 bytes per window, a third of a segment.
        let mut cc = in_avoidance(crowcroft(0.3), 10);
        let start = cc.cwnd();
        for windows in 1..=30u64 {
            cc.on_ack(&ack(SimTime::ZERO, cc.cwnd(), RTT, MSS));
            let grown = (cc.cwnd() - start) as i64;
            assert!(
                (grown - 300 * windows as i64).abs() <= 1,
                "window {windows}: {grown}"
            );
        }
    }

    #[test]
    fn a_loss_keeps_one_minus_one_over_two_n_of_the_flight() {
        // N = 4: 7/8 of FlightSize, rounded down, in integers: 80 003 - ⌈80 003/8⌉ = 70 002.
        let mut cc = crowcroft(4.0);
        cc.on_congestion_event(SimTime::ZERO, 80 * M);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (70 * M, 70 * M));
        cc.on_congestion_event(SimTime::ZERO, 80 * M + 3);
        assert_eq!(cc.cwnd(), 70_002);
        assert_eq!(cc.cwnd(), ((80 * M + 3) as f64 * 0.875).floor() as u64);
        // N = 1.5 (2N = 3): two thirds, rounded down.
        let mut cc = crowcroft(1.5);
        cc.on_congestion_event(SimTime::ZERO, 30_001);
        assert_eq!(cc.cwnd(), 20_000);
        // N = 0.5: the whole window is lost, down to the two-segment floor.
        let mut cc = crowcroft(0.5);
        cc.on_congestion_event(SimTime::ZERO, 80 * M);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (2 * M, 2 * M));
        // N = 0.3 (β > 1) too; N = 2.3 is not a half-integer: floating point.
        let mut cc = crowcroft(0.3);
        cc.on_congestion_event(SimTime::ZERO, 80 * M);
        assert_eq!(cc.cwnd(), 2 * M);
        let mut cc = crowcroft(2.3);
        cc.on_congestion_event(SimTime::ZERO, 46 * M);
        assert!(cc.cwnd().abs_diff(36_000) <= 1, "{}", cc.cwnd());
        // The floor holds for any N.
        let mut cc = crowcroft(100.0);
        cc.on_congestion_event(SimTime::ZERO, M);
        assert_eq!(cc.cwnd(), 2 * M);
    }

    #[test]
    fn timeout_uses_the_same_reduction_and_a_one_segment_window() {
        let mut cc = in_avoidance(crowcroft(4.0), 40).with_abc_limit(2);
        cc.on_retransmission_timeout(SimTime::ZERO, 40 * M);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (M, 35 * M));
        cc.on_retransmission_timeout(SimTime::ZERO, 8 * M);
        assert_eq!(
            (cc.cwnd(), cc.ssthresh()),
            (M, 35 * M),
            "a repeated timeout keeps ssthresh"
        );
        // Slow start after a timeout with L = 1 (RFC 3465 §2.3).
        cc.on_ack(&ack(SimTime::ZERO, 2 * M, RTT, MSS));
        assert_eq!(cc.cwnd(), 2 * M);
    }

    #[test]
    fn each_timeout_rule_sets_its_ssthresh() {
        use TimeoutSsthresh::{Half, MulTcp as Multcp, Ns2};
        // N = 4, cwnd = 41 500 bytes (41.5 segments), a timeout with FlightSize (capped at cwnd
        // by the sender) 41 500, then 10 001 (application-limited), then 3 000 bytes.
        let timeout = |rule, cwnd: u64, flight: u64| {
            let mut cc = with_timeout_rule(4.0, Equivalence::Crowcroft, rule);
            cc.window.on_congestion_event(cwnd);
            cc.on_retransmission_timeout(SimTime::ZERO, flight);
            assert_eq!(cc.cwnd(), M, "{rule:?}: one segment after a timeout");
            cc.ssthresh()
        };
        // multcp: FlightSize − ⌈FlightSize/8⌉ = ⌊7/8·FlightSize⌋.
        assert_eq!(timeout(Multcp, 41_500, 41_500), 41_500 - 5_188);
        assert_eq!(timeout(Multcp, 41_500, 10_001), 10_001 - 1_251);
        assert_eq!(timeout(Multcp, 3 * M, 3 * M), 3 * M - 375);
        assert_eq!(
            timeout(Multcp, 2 * M, 2 * M),
            2 * M,
            "at least two segments"
        );
        // half: ⌊FlightSize/2⌋ (RFC 5681 eq. (4)), N plays no part.
        assert_eq!(timeout(Half, 41_500, 41_500), 20_750);
        assert_eq!(timeout(Half, 41_500, 10_001), 5_000);
        assert_eq!(timeout(Half, 3 * M, 3 * M), 2 * M);
        // ns2: ⌊cwnd/(2·MSS)⌋ whole segments from the window, not FlightSize: ⌊41.5/2⌋ = 20.
        assert_eq!(timeout(Ns2, 41_500, 41_500), 20 * M);
        assert_eq!(timeout(Ns2, 41_500, 10_001), 20 * M);
        assert_eq!(timeout(Ns2, 41_999, 0), 20 * M);
        assert_eq!(timeout(Ns2, 42_000, 0), 21 * M);
        assert_eq!(timeout(Ns2, 3 * M, 3 * M), 2 * M, "at least two segments");
        // Every rule keeps ssthresh through a repeated timeout (no new data acknowledged).
        for (rule, kept) in [(Multcp, 35 * M), (Half, 20 * M), (Ns2, 20 * M)] {
            let mut cc = with_timeout_rule(4.0, Equivalence::Crowcroft, rule);
            cc = in_avoidance(cc, 40);
            cc.on_retransmission_timeout(SimTime::ZERO, 40 * M);
            assert_eq!((cc.cwnd(), cc.ssthresh()), (M, kept), "{rule:?}");
            cc.on_retransmission_timeout(SimTime::ZERO, M);
            assert_eq!((cc.cwnd(), cc.ssthresh()), (M, kept), "{rule:?} repeated");
        }
        // A loss reduces by 1/(2N) whatever the timeout rule.
        for rule in [Multcp, Half, Ns2] {
            let mut cc = with_timeout_rule(4.0, Equivalence::Crowcroft, rule);
            cc.on_congestion_event(SimTime::ZERO, 80 * M);
            assert_eq!(cc.cwnd(), 70 * M, "{rule:?}");
        }
    }

    #[test]
    fn the_timeout_rule_is_a_declared_parameter() {
        let spec = |rule: Option<&'static str>| {
            let mut given = vec![("n", Value::Number(4.0))];
            given.extend(rule.map(|r| ("timeout_ssthresh", Value::Choice(r))));
            CcSpec::new("multcp", &given)
        };
        let built = |rule| {
            let mut cc = spec(rule).unwrap().build(crate::transport::cc::Connection {
                mss: MSS,
                initial_window: 10,
                profile: crate::transport::tcp::config::TcpProfile::Rfc,
            });
            cc.on_retransmission_timeout(SimTime::ZERO, 40 * M);
            cc.ssthresh()
        };
        assert_eq!(built(None), 20 * M, "default: half of FlightSize");
        assert_eq!(built(Some("multcp")), 35 * M);
        assert_eq!(built(Some("half")), 20 * M);
        // cwnd is the initial 10 segments: ns-2 halves the window.
        assert_eq!(built(Some("ns2")), 5 * M);
        let message = spec(Some("rfc5681")).unwrap_err().to_string();
        assert_eq!(
            message,
            "controller multcp: timeout_ssthresh: expected a choice value, got \"rfc5681\""
        );
        let names: Vec<_> = SPEC.params.iter().map(|p| p.name).collect();
        assert_eq!(names, ["n", "equivalence", "timeout_ssthresh"]);
    }

    #[test]
    fn slow_start_is_one_flows() {
        let mut cc = crowcroft(8.0);
        let mut now = SimTime::ZERO;
        for expected in [20, 40, 80] {
            now = run_round(&mut cc, now, RTT, MSS);
            assert_eq!(cc.cwnd(), expected * M);
        }
    }

    #[test]
    fn no_growth_in_recovery_or_when_not_cwnd_limited() {
        let mut cc = in_avoidance(crowcroft(4.0), 20);
        for _ in 0..100 {
            let mut s = ack(SimTime::ZERO, M, RTT, MSS);
            s.in_recovery = true;
            cc.on_ack(&s);
            let mut s = ack(SimTime::ZERO, M, RTT, MSS);
            s.is_cwnd_limited = false;
            cc.on_ack(&s);
        }
        assert_eq!((cc.cwnd(), cc.bytes_acked()), (20 * M, 0));
    }

    #[test]
    fn invalid_parameters_are_refused_with_the_declared_range() {
        let message = |n: f64, equivalence: &'static str| {
            CcSpec::new(
                "multcp",
                &[
                    ("n", Value::Number(n)),
                    ("equivalence", Value::Choice(equivalence)),
                ],
            )
            .unwrap_err()
            .to_string()
        };
        assert_eq!(
            message(0.0, "crowcroft"),
            "controller multcp: n: must be greater than zero, got 0"
        );
        assert_eq!(
            message(-2.0, "crowcroft"),
            "controller multcp: n: must be greater than zero, got -2"
        );
        for bad in [f64::NAN, f64::INFINITY] {
            assert!(
                message(bad, "crowcroft").starts_with("controller multcp: n: expected a number"),
                "{bad}"
            );
        }
        assert_eq!(
            message(0.25, "exact"),
            "controller multcp: n: must be greater than 0.25 with equivalence = \"exact\" \
             (alpha = 3n²/(4n − 1) is not positive below), got 0.25"
        );
        assert!(CcSpec::new("multcp", &[("n", Value::Number(0.25))]).is_ok());
        assert_eq!(
            CcSpec::new("multcp", &[]).unwrap_err().to_string(),
            "controller multcp: n: missing required parameter"
        );
    }

    #[test]
    #[should_panic(expected = "controller multcp: n: must be greater than zero, got 0")]
    fn new_panics_on_invalid_parameters() {
        crowcroft(0.0);
    }

    #[derive(Clone, Debug)]
    enum Step {
        Ack {
            acked_bytes: u64,
            cwnd_limited: bool,
            in_recovery: bool,
        },
        Loss {
            flight_bytes: u64,
        },
        Timeout {
            flight_bytes: u64,
        },
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            8 => (0u64..5000, any::<bool>(), any::<bool>()).prop_map(
                |(acked_bytes, cwnd_limited, in_recovery)| Step::Ack {
                    acked_bytes,
                    cwnd_limited,
                    in_recovery,
                }
            ),
            1 => (0u64..400_000).prop_map(|flight_bytes| Step::Loss { flight_bytes }),
            1 => (0u64..400_000).prop_map(|flight_bytes| Step::Timeout { flight_bytes }),
        ]
    }

    proptest! {
        /// MulTCP with N = 1, either equivalence, timeouts by the loss rule or by RFC 5681's
        /// half (the same at N = 1), takes Reno's window and ssthresh through any mix of ACK
        /// sizes, recovery, application-limited periods, losses at any FlightSize and
        /// timeouts: the same decisions with the same integer arithmetic.
        #[test]
        fn one_flow_is_reno(
            abc_limit in 1u32..=2,
            exact in any::<bool>(),
            half in any::<bool>(),
            mss in 500u32..9000,
            steps in proptest::collection::vec(step(), 1..400),
        ) {
            let equivalence = if exact { Equivalence::Exact } else { Equivalence::Crowcroft };
            let mut reno = Reno::new(mss, 10).with_abc_limit(abc_limit);
            let timeout_ssthresh = if half { TimeoutSsthresh::Half } else { TimeoutSsthresh::MulTcp };
            let params = MulTcpParams { n: 1.0, equivalence, timeout_ssthresh };
            let mut multcp = MulTcp::new(mss, 10, params).with_abc_limit(abc_limit);
            for step in steps {
                match step {
                    Step::Ack { acked_bytes, cwnd_limited, in_recovery } => {
                        let mut s = ack(SimTime::ZERO, acked_bytes, RTT, mss);
                        s.is_cwnd_limited = cwnd_limited;
                        s.in_recovery = in_recovery;
                        reno.on_ack(&s);
                        multcp.on_ack(&s);
                    }
                    Step::Loss { flight_bytes } => {
                        reno.on_congestion_event(SimTime::ZERO, flight_bytes);
                        multcp.on_congestion_event(SimTime::ZERO, flight_bytes);
                    }
                    Step::Timeout { flight_bytes } => {
                        reno.on_retransmission_timeout(SimTime::ZERO, flight_bytes);
                        multcp.on_retransmission_timeout(SimTime::ZERO, flight_bytes);
                    }
                }
                prop_assert_eq!(reno.cwnd(), multcp.cwnd());
                prop_assert_eq!(reno.ssthresh(), multcp.ssthresh());
                prop_assert_eq!(reno.bytes_acked(), multcp.bytes_acked());
            }
        }

        /// For any N, a loss keeps ⌊(1 − 1/(2N))·FlightSize⌋ (at least two segments), whichever
        /// arithmetic path is taken.
        #[test]
        fn the_reduction_is_the_formula(
            twice_n in 1u32..64,
            fractional in 0.0f64..1.0,
            flight in 0u64..10_000_000,
        ) {
            for n in [f64::from(twice_n) / 2.0, f64::from(twice_n) / 2.0 + fractional] {
                let mut cc = crowcroft(n);
                cc.on_congestion_event(SimTime::ZERO, flight);
                let expected = (flight as f64 * (1.0 - 1.0 / (2.0 * n))).floor().max(0.0) as u64;
                let expected = expected.max(2 * M);
                prop_assert!(cc.cwnd().abs_diff(expected) <= 1, "N = {}: {} vs {}", n, cc.cwnd(), expected);
                if f64::from(twice_n) / 2.0 == n {
                    // The integer path is exact.
                    let k = u64::from(twice_n);
                    prop_assert_eq!(cc.cwnd(), (flight - flight.div_ceil(k)).max(2 * M));
                }
            }
        }
    }
}
