//! CUBIC congestion control, RFC 9438 (which obsoletes RFC 8312); the algorithm is from Ha,
//! Rhee and Xu, "CUBIC: a new TCP-friendly high-speed TCP variant", ACM SIGOPS OSR 42(5), 2008.
//!
//! Units follow RFC 9438 §4.1: windows in segments, times in seconds, both as `f64`. The window
//! itself is kept in bytes as an `f64` (CUBIC grows it by fractions of a segment per ACK) and
//! [`CongestionControl::cwnd`] reports it rounded down to whole bytes.
//!
//! What is implemented, by section of RFC 9438:
//! - §4.2 window increase: `W_cubic(t) = C·(t − K)³ + W_max` (Figure 1) with
//!   `K = ∛((W_max − cwnd_epoch)/C)` (Figure 2), `t` the time since the current congestion
//!   avoidance stage began (`t_epoch`) and `cwnd_epoch` the window at that moment. On each new
//!   ACK the target is `W_cubic(t + RTT)` (RTT = smoothed RTT) clamped to `[cwnd, 1.5·cwnd]`,
//!   and the window moves towards it by `(target − cwnd)/cwnd`;
//! - §4.3 Reno-friendly region: `W_est = W_est + α_cubic·segments_acked/cwnd` (Figure 4) with
//!   `α_cubic = 3(1 − β_cubic)/(1 + β_cubic)`, raised to 1 once `W_est ≥ cwnd_prior`; when
//!   `W_cubic(t) < W_est` the window follows `W_est` (switch `tcp_friendliness`);
//! - §4.4–§4.5 concave and convex regions: the same per-ACK rule on either side of `W_max`;
//! - §4.6 multiplicative decrease on a loss: `ssthresh = max(FlightSize·β_cubic, 2)`,
//!   `cwnd = ssthresh`, `cwnd_prior = cwnd` before the reduction;
//! - §4.7 fast convergence (switch `fast_convergence`): `W_max = cwnd·(1 + β_cubic)/2` if the
//!   window at the loss is below the previous `W_max`, else `W_max = cwnd`;
//! - §4.8 timeout: `cwnd` = one segment (RFC 5681), ssthresh by β_cubic as in §4.6, and in the
//!   first congestion avoidance stage after it `W_max = cwnd_epoch`, so `K = 0`;
//! - §4.10 slow start: the standard RFC 5681 slow start, shared with [`Reno`](super::Reno),
//!   optionally ended early by Linux's HyStart (below);
//! - §5.8 application-limited flows: no growth when the sender is not cwnd-limited, and such
//!   periods are taken out of `t`: when an ACK reports the sender not cwnd-limited, the time
//!   since the previous ACK is added to `t_epoch`.
//!
//! Choices where RFC 9438 leaves room or where this file departs from its letter:
//! - the per-ACK increase `(target − cwnd)/cwnd` is multiplied by `segments_acked` (and never
//!   carries cwnd past `target`), so that an ACK for two segments counts as two ACKs, as for
//!   `W_est` in §4.3 and as Linux does; the text of §4.4–§4.5 says "for each received new ACK";
//! - in the Reno-friendly region `cwnd = max(cwnd, W_est)`: §4.3 says "set to W_est", which
//!   could shrink a window the concave rule has already taken past `W_est`;
//! - `cwnd_epoch > W_max` (possible after fast convergence, or when FlightSize exceeded cwnd)
//!   gives a negative `K` from Figure 2 taken literally; the curve then starts at `cwnd_epoch`
//!   already in its convex part, which is continuous and is what the formula says;
//! - not implemented because the [`CongestionControl`] hooks do not carry them: ECN-triggered
//!   reductions (§4.6), undo of spurious congestion events (§4.9), HyStart++ (§4.10 recommends
//!   it; [RFC 9406] can be added as a separate slow-start policy).
//!
//! # HyStart (parameter `hystart`)
//!
//! Optionally, slow start ends early by the HyStart of Linux's CUBIC (`net/ipv4/tcp_cubic.c`,
//! Linux 6.x as of early 2025): Ha and Rhee's hybrid slow start as Linux implements it, **not**
//! RFC 9406 HyStart++ (which has no ACK-train test, compares the RTT with the previous round's
//! and continues with a conservative slow start). `hystart = "auto"` (the default) turns it on
//! when the connection's profile is [`TcpProfile::Linux`] and off otherwise; `"on"` and `"off"`
//! force it. When off, nothing below runs and CUBIC is exactly as above.
//!
//! Linux's constants: both tests (`hystart_detect` = `HYSTART_ACK_TRAIN | HYSTART_DELAY`),
//! `hystart_low_window` = 16 segments, `hystart_ack_delta_us` = 2000 µs,
//! `HYSTART_MIN_SAMPLES` = 8, `HYSTART_DELAY_MIN` = 4 ms, `HYSTART_DELAY_MAX` = 16 ms,
//! `HYSTART_DELAY_THRESH(x)` = `clamp(x, 4 ms, 16 ms)`. Times are whole microseconds, as
//! Linux's `tcp_mstamp` clock and `rtt_us` samples. The steps, by Linux function:
//! - `cubictcp_acked`, on every ACK with an RTT sample (here [`AckSample::rtt`], which obeys
//!   Karn's rule as Linux's `ca_rtt_us` does; ACKs without one are ignored, as Linux ignores
//!   `rtt_us < 0`): `delay` = the sample (at least 1 µs); `delay_min` = the smallest delay since
//!   the connection started or the last timeout; then, if no exit has been found yet and only
//!   in slow start (`cwnd < ssthresh`), `hystart_update`;
//! - `hystart_update`: first, if `snd_una` is past `end_seq` (strictly), a new round begins
//!   (`bictcp_hystart_reset`: `round_start` = `last_ack` = now, `end_seq` = `snd_nxt`, the
//!   round's minimum `curr_rtt` = ∞, `sample_cnt` = 0). Then nothing more below
//!   `hystart_low_window`. This is the order since commit 25c1a9ca53db ("tcp_cubic: fix
//!   incorrect HyStart round start detection", January 2025): rounds are followed from the first
//!   ACK, whatever the window; before it, the low-window check came first and the round
//!   bookkeeping only started at 16 segments;
//! - ACK train: if this ACK comes at most `hystart_ack_delta_us` after `last_ack`, it extends
//!   the train (`last_ack` = now), and the exit is found when `now − round_start > threshold`,
//!   `threshold = (delay_min + hystart_ack_delay) / 2`. The halving is what Linux does for a
//!   socket that is not paced (`SK_PACING_NONE`), and the senders here never pace. Once an ACK
//!   of the round comes more than `hystart_ack_delta_us` after `last_ack`, `last_ack` stays
//!   behind and the train cannot fire again before the next round. (This is the form since
//!   Linux 5.6: before, clocks were in milliseconds and the test was
//!   `now − round_start > delay_min/2`, without `hystart_ack_delay`.);
//! - `hystart_ack_delay` = `min(1 ms, 4·gso_max_size / sk_pacing_rate)`, an allowance for TSO
//!   and GRO batching, with `gso_max_size` = 65536 bytes (`GSO_LEGACY_MAX_SIZE`, the usual
//!   device value) and `sk_pacing_rate` as Linux's `tcp_update_pacing_rate` left it at the end
//!   of the previous ACK: `mss · max(cwnd, packets_out) / srtt` times 200 % while
//!   `cwnd < ssthresh/2` (`tcp_pacing_ss_ratio`), else 120 % (`tcp_pacing_ca_ratio`), in whole
//!   bytes per second; 0 (no allowance) before the first ACK;
//! - delay increase: `curr_rtt = min(curr_rtt, delay)`; the first `HYSTART_MIN_SAMPLES` samples
//!   of a round are only counted; from the ninth on, the exit is found when
//!   `curr_rtt > delay_min + HYSTART_DELAY_THRESH(delay_min / 8)`. The minimum covers every
//!   sample of the round so far, not only the first eight (as since the 2021 commit
//!   "tcp_cubic: fix spurious HYSTART_DELAY exit upon drop in min RTT"), and it is compared
//!   with `delay_min`, the connection's minimum, not with the previous round's;
//! - on an exit (either test): `found` is set and `ssthresh = cwnd`. Linux runs `pkts_acked`
//!   before `cong_avoid`, so the ACK that finds the exit is already counted by congestion
//!   avoidance, and so it is here;
//! - `cubictcp_state` entering `TCP_CA_Loss` (a retransmission timeout, every time):
//!   `bictcp_reset` clears `found` and `delay_min`, and `bictcp_hystart_reset` starts a round
//!   with `end_seq = snd_nxt`. A fast retransmit (`cubictcp_recalc_ssthresh`) leaves HyStart
//!   alone; CUBIC is not in slow start after it anyway.
//!
//! What the hooks here do not carry, and how it is made up:
//! - `snd_una` is the sum of [`AckSample::acked_bytes`] (exact). `snd_nxt` is counted from
//!   [`CongestionControl::on_packet_sent`]: the bytes of every segment sent, never below
//!   `snd_una`; after a timeout the count restarts at `snd_una`, since the sender goes back N.
//!   This is exact as long as nothing is retransmitted otherwise; retransmissions in fast
//!   recovery count as new bytes (the sender does not say which sends are retransmissions), so
//!   `snd_nxt` runs ahead until the next timeout, where the only effect is a late end of the
//!   first round after it; after a timeout with SACKed data, the resent count skips the SACKed
//!   bytes and `snd_nxt` lags by them. Rounds are exact in a slow start before any loss;
//! - `packets_out` in the pacing rate is `snd_nxt − snd_una` in segments, rounded up;
//! - `cubictcp_acked` also discards delay samples in the first second of a congestion
//!   avoidance stage. Here slow start only follows a timeout, which resets `delay_min`, so those
//!   samples could never reach HyStart; this is not reproduced.
//!
//! [RFC 9406]: https://www.rfc-editor.org/rfc/rfc9406

use super::window::{initial_window_bytes, loss_window, reduced_window, SlowStart};
use super::{AckSample, CongestionControl, Connection, ControllerKind};
use crate::registry::{AlgorithmSpec, Bound, Param, ParamError, Params, Scalar, Value};
use crate::time::SimTime;
use crate::transport::tcp::config::TcpProfile;

/// The registry declaration of CUBIC; the defaults are RFC 9438's (§5: C = 0.4,
/// β_cubic = 0.7; fast convergence and the Reno-friendly region on), with Linux's HyStart in
/// the `linux` TCP profile only (`hystart = "auto"`).
pub const SPEC: AlgorithmSpec<ControllerKind> = AlgorithmSpec {
    name: "cubic",
    summary: "CUBIC (RFC 9438)",
    params: &[
        Param::number("c", "cubic scaling constant C")
            .unit("segments/s³")
            .default(Scalar::Number(0.4))
            .greater_than(0.0),
        Param::number(
            "beta",
            "multiplicative decrease: fraction of the window kept after a loss",
        )
        .default(Scalar::Number(0.7))
        .range(Bound::Exclusive(0.0), Bound::Exclusive(1.0)),
        Param::bool(
            "fast_convergence",
            "release bandwidth faster when the window shrinks (RFC 9438 §4.7)",
        )
        .default(Scalar::Bool(true)),
        Param::bool("tcp_friendliness", "Reno-friendly region (RFC 9438 §4.3)")
            .default(Scalar::Bool(true)),
        Param::choice(
            "hystart",
            HystartMode::NAMES,
            "Linux's HyStart slow-start exit (tcp_cubic.c: ACK train and delay increase; not \
             RFC 9406 HyStart++): auto = on with the linux TCP profile, off with rfc; on; off",
        )
        .default(Scalar::Name("auto")),
    ],
    finish: None,
    build: |params, connection| Cubic::for_connection(connection, CubicParams::from(params)).into(),
};

/// Whether CUBIC exits slow start by Linux's HyStart (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HystartMode {
    /// On when the connection's profile is [`TcpProfile::Linux`], off otherwise.
    #[default]
    Auto,
    On,
    Off,
}

impl HystartMode {
    /// The scenario names, in declaration order.
    pub const NAMES: &'static [&'static str] = &["auto", "on", "off"];

    pub fn name(self) -> &'static str {
        match self {
            HystartMode::Auto => "auto",
            HystartMode::On => "on",
            HystartMode::Off => "off",
        }
    }

    pub fn from_name(name: &str) -> Option<HystartMode> {
        match name {
            "auto" => Some(HystartMode::Auto),
            "on" => Some(HystartMode::On),
            "off" => Some(HystartMode::Off),
            _ => None,
        }
    }

    /// Whether HyStart runs for a connection with this profile.
    pub fn enabled(self, profile: TcpProfile) -> bool {
        match self {
            HystartMode::Auto => profile == TcpProfile::Linux,
            HystartMode::On => true,
            HystartMode::Off => false,
        }
    }
}

/// CUBIC parameters (RFC 9438 §4.1.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicParams {
    /// Aggressiveness `C` in segments/s³ (RFC 9438 §5.1: 0.4).
    pub c: f64,
    /// Multiplicative decrease factor `β_cubic`, the fraction of the window kept after a loss
    /// (RFC 9438 §4.6: 0.7).
    pub beta: f64,
    /// Fast convergence, RFC 9438 §4.7.
    pub fast_convergence: bool,
    /// The Reno-friendly region, RFC 9438 §4.3.
    pub tcp_friendliness: bool,
    /// Linux's HyStart (see the module documentation).
    pub hystart: HystartMode,
}

impl Default for CubicParams {
    /// `C = 0.4`, `β_cubic = 0.7`, fast convergence and the Reno-friendly region on, HyStart
    /// by profile.
    fn default() -> Self {
        CubicParams {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            tcp_friendliness: true,
            hystart: HystartMode::Auto,
        }
    }
}

impl CubicParams {
    /// Checks the parameters against their declaration ([`SPEC`]): `c` positive and finite,
    /// `beta` strictly between 0 and 1.
    pub fn validate(&self) -> Result<(), ParamError> {
        let given = [
            ("c", Value::Number(self.c)),
            ("beta", Value::Number(self.beta)),
        ];
        SPEC.check(&given).map(drop)
    }
}

impl From<&Params> for CubicParams {
    fn from(p: &Params) -> Self {
        CubicParams {
            c: p.number("c"),
            beta: p.number("beta"),
            fast_convergence: p.bool("fast_convergence"),
            tcp_friendliness: p.bool("tcp_friendliness"),
            hystart: HystartMode::from_name(p.choice("hystart")).expect("a declared choice"),
        }
    }
}

/// `K = ∛((W_max − cwnd_epoch)/C)` in seconds (RFC 9438 Figure 2); negative when
/// `cwnd_epoch > W_max`.
pub fn cubic_k(w_max_segments: f64, cwnd_epoch_segments: f64, c: f64) -> f64 {
    ((w_max_segments - cwnd_epoch_segments) / c).cbrt()
}

/// `W_cubic(t) = C·(t − K)³ + W_max` in segments (RFC 9438 Figure 1).
pub fn w_cubic(t_seconds: f64, c: f64, k_seconds: f64, w_max_segments: f64) -> f64 {
    let offset = t_seconds - k_seconds;
    c * offset * offset * offset + w_max_segments
}

/// `α_cubic = 3(1 − β)/(1 + β)`, the additive increase per RTT that gives AIMD(α, β) the same
/// average window as Reno (RFC 9438 §4.3).
pub fn alpha_cubic(beta: f64) -> f64 {
    3.0 * (1.0 - beta) / (1.0 + beta)
}

/// HyStart: `hystart_low_window`, the window in segments below which neither test runs.
pub const HYSTART_LOW_WINDOW: u64 = 16;
/// HyStart: `hystart_ack_delta_us`, the largest gap in µs between two ACKs of a train.
pub const HYSTART_ACK_DELTA_US: u64 = 2000;
/// HyStart: `HYSTART_MIN_SAMPLES`, the RTT samples of a round before the delay test runs.
pub const HYSTART_MIN_SAMPLES: u8 = 8;
/// HyStart: `HYSTART_DELAY_MIN`, the smallest delay threshold, µs.
pub const HYSTART_DELAY_MIN_US: u64 = 4000;
/// HyStart: `HYSTART_DELAY_MAX`, the largest delay threshold, µs.
pub const HYSTART_DELAY_MAX_US: u64 = 16_000;
/// `sk_gso_max_size` in `hystart_ack_delay`: `GSO_LEGACY_MAX_SIZE`, bytes.
pub const GSO_MAX_SIZE: u64 = 65_536;
/// `tcp_pacing_ss_ratio` and `tcp_pacing_ca_ratio`, percent (Linux defaults).
const PACING_SS_RATIO: u64 = 200;
const PACING_CA_RATIO: u64 = 120;

/// `HYSTART_DELAY_THRESH(delay_min >> 3)`: the RTT increase in µs over `delay_min_us` that
/// ends slow start, `delay_min/8` clamped to [4 ms, 16 ms].
pub fn hystart_delay_thresh_us(delay_min_us: u64) -> u64 {
    (delay_min_us >> 3).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US)
}

/// `hystart_ack_delay`: `min(1 ms, 4·GSO_MAX_SIZE/rate)` in µs for a pacing rate in bytes per
/// second; 0 when the rate is 0.
pub fn hystart_ack_delay_us(pacing_rate_bytes_per_sec: u64) -> u64 {
    if pacing_rate_bytes_per_sec == 0 {
        return 0;
    }
    (GSO_MAX_SIZE * 4 * 1_000_000 / pacing_rate_bytes_per_sec).min(1000)
}

/// Linux's `tcp_update_pacing_rate` in bytes per second (with no `sk_max_pacing_rate`):
/// `mss · ratio/100 · max(cwnd, packets_out) / srtt`, ratio 200 while `cwnd < ssthresh/2`,
/// else 120; windows in segments, `srtt` kept in eighths of a µs as Linux's `srtt_us` (no
/// division when it is zero).
pub fn linux_pacing_rate(
    mss: u64,
    cwnd_segments: u64,
    packets_out: u64,
    ssthresh_segments: u64,
    srtt: SimTime,
) -> u64 {
    let ratio = if cwnd_segments < ssthresh_segments / 2 {
        PACING_SS_RATIO
    } else {
        PACING_CA_RATIO
    };
    let rate = u128::from(mss)
        * (1_000_000 / 100 * 8)
        * u128::from(ratio)
        * u128::from(cwnd_segments.max(packets_out));
    let srtt_us8 = u128::from(srtt.as_nanos()) * 8 / 1000;
    let rate = rate.checked_div(srtt_us8).unwrap_or(rate);
    u64::try_from(rate).unwrap_or(u64::MAX)
}

/// Which HyStart test ended slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HystartTrigger {
    /// `HYSTART_ACK_TRAIN`: the round's ACK train lasted longer than the threshold.
    AckTrain,
    /// `HYSTART_DELAY`: the round's minimum RTT rose above `delay_min` by the threshold.
    Delay,
}

/// A HyStart exit from slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HystartExit {
    /// The test that found it (the ACK train when both did on the same ACK).
    pub trigger: HystartTrigger,
    /// When: the ACK that found it.
    pub at: SimTime,
    /// The window when it was found, bytes: the new ssthresh.
    pub cwnd: u64,
}

/// Linux's HyStart state (the HyStart fields of `struct bictcp` in `tcp_cubic.c`) and the
/// sequence numbers it needs; times in µs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Hystart {
    /// `snd_una`: bytes cumulatively acknowledged.
    snd_una: u64,
    /// `snd_nxt` as counted from the sends (see the module documentation).
    snd_nxt: u64,
    /// `round_start`: the first ACK of the current round.
    round_start_us: u64,
    /// `last_ack`: the latest ACK of the round's ACK train.
    last_ack_us: u64,
    /// `end_seq`: the round ends when `snd_una` passes it.
    end_seq: u64,
    /// `curr_rtt`: the round's minimum RTT (`u64::MAX` before its first sample).
    curr_rtt_us: u64,
    /// `sample_cnt`: RTT samples of the round, up to `HYSTART_MIN_SAMPLES`.
    sample_cnt: u8,
    /// `delay_min`: the minimum RTT since the start or the last timeout (0: none yet).
    delay_min_us: u64,
    /// `found`, with what found it.
    found: Option<HystartExit>,
    /// `sk_pacing_rate` as of the end of the previous ACK, bytes per second.
    pacing_rate: u64,
}

impl Hystart {
    /// `cubictcp_init`: `bictcp_reset` then `bictcp_hystart_reset` with nothing sent yet.
    fn new() -> Self {
        Hystart {
            snd_una: 0,
            snd_nxt: 0,
            round_start_us: 0,
            last_ack_us: 0,
            end_seq: 0,
            curr_rtt_us: u64::MAX,
            sample_cnt: 0,
            delay_min_us: 0,
            found: None,
            pacing_rate: 0,
        }
    }

    /// `bictcp_hystart_reset`: a new round starts now.
    fn reset_round(&mut self, now_us: u64) {
        self.round_start_us = now_us;
        self.last_ack_us = now_us;
        self.end_seq = self.snd_nxt;
        self.curr_rtt_us = u64::MAX;
        self.sample_cnt = 0;
    }

    fn on_sent(&mut self, bytes: u32) {
        self.snd_nxt = self.snd_nxt.saturating_add(u64::from(bytes));
    }

    /// The sequence part of an ACK: `snd_una` advances (and `snd_nxt` is never behind it).
    fn on_acked(&mut self, acked_bytes: u64) {
        self.snd_una = self.snd_una.saturating_add(acked_bytes);
        self.snd_nxt = self.snd_nxt.max(self.snd_una);
    }

    /// `cubictcp_acked` for an ACK with an RTT sample, `cwnd` and `ssthresh` in bytes as they
    /// were before the ACK. Returns the exit if this ACK finds one.
    fn on_rtt_sample(
        &mut self,
        now: SimTime,
        rtt: SimTime,
        cwnd: u64,
        ssthresh: u64,
        mss: u64,
    ) -> Option<HystartExit> {
        let delay = (rtt.as_nanos() / 1000).max(1);
        if self.delay_min_us == 0 || self.delay_min_us > delay {
            self.delay_min_us = delay;
        }
        if self.found.is_some() || cwnd >= ssthresh {
            return None;
        }
        let trigger = self.update(now.as_nanos() / 1000, delay, cwnd / mss)?;
        let exit = HystartExit {
            trigger,
            at: now,
            cwnd,
        };
        self.found = Some(exit);
        Some(exit)
    }

    /// `hystart_update`.
    fn update(&mut self, now_us: u64, delay: u64, cwnd_segments: u64) -> Option<HystartTrigger> {
        if self.snd_una > self.end_seq {
            self.reset_round(now_us);
        }
        if cwnd_segments < HYSTART_LOW_WINDOW {
            return None;
        }
        let mut found = None;
        if now_us.saturating_sub(self.last_ack_us) <= HYSTART_ACK_DELTA_US {
            self.last_ack_us = now_us;
            // Not paced (SK_PACING_NONE): half of delay_min plus the TSO/GRO allowance.
            let threshold = (self.delay_min_us + hystart_ack_delay_us(self.pacing_rate)) >> 1;
            if now_us.saturating_sub(self.round_start_us) > threshold {
                found = Some(HystartTrigger::AckTrain);
            }
        }
        self.curr_rtt_us = self.curr_rtt_us.min(delay);
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            self.sample_cnt += 1;
        } else if self.curr_rtt_us > self.delay_min_us + hystart_delay_thresh_us(self.delay_min_us)
        {
            found = found.or(Some(HystartTrigger::Delay));
        }
        found
    }

    /// `tcp_update_pacing_rate` at the end of an ACK, with the window and ssthresh it left.
    fn update_pacing_rate(&mut self, mss: u64, cwnd: u64, ssthresh: u64, srtt: SimTime) {
        let packets_out = (self.snd_nxt - self.snd_una).div_ceil(mss);
        self.pacing_rate = linux_pacing_rate(mss, cwnd / mss, packets_out, ssthresh / mss, srtt);
    }

    /// A retransmission timeout (`cubictcp_state` entering `TCP_CA_Loss`): `bictcp_reset`
    /// clears `found` and `delay_min`, `bictcp_hystart_reset` starts a round ending at the
    /// current `snd_nxt`; then the count of sent bytes restarts at `snd_una` (go-back-N).
    fn on_timeout(&mut self, now: SimTime) {
        self.found = None;
        self.delay_min_us = 0;
        self.reset_round(now.as_nanos() / 1000);
        self.snd_nxt = self.snd_una;
    }
}

/// One congestion avoidance stage (RFC 9438 §4.2).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Epoch {
    /// `t_epoch`, moved later by the application-limited time excluded from `t` (§5.8).
    start: SimTime,
    cwnd_epoch: f64,
    k: f64,
    w_est: f64,
}

/// CUBIC congestion window (RFC 9438).
#[derive(Clone, Debug, PartialEq)]
pub struct Cubic {
    params: CubicParams,
    mss: u64,
    /// Slow-start byte counting and the timeout state (shared with Reno and AIMD).
    slow_start: SlowStart,
    /// Congestion window in bytes, with the fraction of a byte CUBIC's increments leave.
    cwnd_bytes: f64,
    ssthresh: u64,
    /// `W_max` in segments; zero before the first loss.
    w_max: f64,
    /// `cwnd_prior` in segments: the window just before the last reduction.
    cwnd_prior: f64,
    /// The current congestion avoidance stage; `None` in slow start, in recovery and until the
    /// first cwnd-limited ACK after them.
    epoch: Option<Epoch>,
    /// The next stage follows a timeout: it starts with `W_max = cwnd_epoch` (§4.8).
    timeout_epoch: bool,
    last_ack_time: Option<SimTime>,
    /// Linux's HyStart, when on.
    hystart: Option<Hystart>,
}

impl Cubic {
    /// A CUBIC window for segments of `mss` bytes, starting at `initial_window_segments × mss`
    /// (at least one segment) with an unbounded ssthresh, for a connection of the default
    /// (`rfc`) profile: HyStart only if `params.hystart` is [`HystartMode::On`].
    ///
    /// # Panics
    /// If `mss` is zero or the parameters are invalid ([`CubicParams::validate`]).
    pub fn new(mss: u32, initial_window_segments: u32, params: CubicParams) -> Self {
        Cubic::for_connection(
            Connection {
                mss,
                initial_window: initial_window_segments,
                profile: TcpProfile::default(),
            },
            params,
        )
    }

    /// A CUBIC window for `connection` (segment size, initial window, and the profile that
    /// decides `hystart = "auto"`).
    ///
    /// # Panics
    /// If the segment size is zero or the parameters are invalid ([`CubicParams::validate`]).
    pub fn for_connection(connection: Connection, params: CubicParams) -> Self {
        let Connection {
            mss,
            initial_window: initial_window_segments,
            profile,
        } = connection;
        assert!(mss > 0, "cubic: MSS must be positive");
        if let Err(e) = params.validate() {
            panic!("{e}");
        }
        let mss = u64::from(mss);
        Cubic {
            params,
            mss,
            slow_start: SlowStart::default(),
            cwnd_bytes: initial_window_bytes(mss, initial_window_segments) as f64,
            ssthresh: u64::MAX,
            w_max: 0.0,
            cwnd_prior: 0.0,
            epoch: None,
            timeout_epoch: false,
            last_ack_time: None,
            hystart: params.hystart.enabled(profile).then(Hystart::new),
        }
    }

    /// Sets the slow-start byte-counting limit L in segments (1 or 2, RFC 3465 §2.2).
    ///
    /// # Panics
    /// If `segments` is not 1 or 2.
    pub fn with_abc_limit(mut self, segments: u32) -> Self {
        self.slow_start.set_abc_limit(segments);
        self
    }

    pub fn params(&self) -> CubicParams {
        self.params
    }

    /// Segment size in bytes.
    pub fn mss(&self) -> u64 {
        self.mss
    }

    /// The congestion window in segments, with its fractional part.
    pub fn cwnd_segments(&self) -> f64 {
        self.cwnd_bytes / self.mss as f64
    }

    /// `W_max` in segments (zero before the first loss).
    pub fn w_max_segments(&self) -> f64 {
        self.w_max
    }

    /// `cwnd_prior` in segments: the window just before the last reduction.
    pub fn cwnd_prior_segments(&self) -> f64 {
        self.cwnd_prior
    }

    /// `K` in seconds for the current congestion avoidance stage.
    pub fn k_seconds(&self) -> Option<f64> {
        self.epoch.map(|e| e.k)
    }

    /// `W_est` in segments for the current congestion avoidance stage.
    pub fn w_est_segments(&self) -> Option<f64> {
        self.epoch.map(|e| e.w_est)
    }

    /// `cwnd_epoch` in segments for the current congestion avoidance stage.
    pub fn cwnd_epoch_segments(&self) -> Option<f64> {
        self.epoch.map(|e| e.cwnd_epoch)
    }

    /// `t_epoch` of the current stage, shifted by the application-limited time left out of `t`.
    pub fn epoch_start(&self) -> Option<SimTime> {
        self.epoch.map(|e| e.start)
    }

    /// Whether HyStart runs for this connection (parameter `hystart` and the profile).
    pub fn hystart_enabled(&self) -> bool {
        self.hystart.is_some()
    }

    /// The HyStart exit of the current slow start, if one was found (cleared by a timeout).
    pub fn hystart_exit(&self) -> Option<HystartExit> {
        self.hystart.and_then(|h| h.found)
    }

    /// HyStart's `delay_min`: the minimum RTT, in whole µs, since the start or the last
    /// timeout (`None` before a sample or with HyStart off).
    pub fn hystart_delay_min(&self) -> Option<SimTime> {
        self.hystart
            .filter(|h| h.delay_min_us > 0)
            .map(|h| SimTime::from_micros(h.delay_min_us))
    }

    /// Starts a congestion avoidance stage at `now` with the current window (RFC 9438 §4.2,
    /// §4.3: `W_est = cwnd_epoch`; §4.8: after a timeout `W_max = cwnd_epoch`).
    fn start_epoch(&mut self, now: SimTime) -> Epoch {
        let cwnd_epoch = self.cwnd_segments();
        if self.timeout_epoch || self.w_max <= 0.0 {
            // After a timeout (§4.8), or a stage entered without any loss: the curve starts
            // flat at the current window.
            self.w_max = cwnd_epoch;
        }
        self.timeout_epoch = false;
        let epoch = Epoch {
            start: now,
            cwnd_epoch,
            k: cubic_k(self.w_max, cwnd_epoch, self.params.c),
            w_est: cwnd_epoch,
        };
        self.epoch = Some(epoch);
        epoch
    }

    /// One cwnd-limited new ACK in congestion avoidance (RFC 9438 §4.2–§4.5).
    fn congestion_avoidance(&mut self, sample: &AckSample) {
        let mut epoch = match self.epoch {
            Some(epoch) => epoch,
            None => self.start_epoch(sample.now),
        };
        let c = self.params.c;
        let mss = self.mss as f64;
        let cwnd = self.cwnd_segments();
        let segments_acked = sample.acked_bytes as f64 / mss;
        let t = sample.now.saturating_sub(epoch.start).as_secs_f64();
        let rtt = smoothed_rtt(sample).as_secs_f64();

        // §4.3 Figure 4: W_est += α_cubic · segments_acked / cwnd, α_cubic = 1 once W_est has
        // caught up with cwnd_prior.
        let alpha = if epoch.w_est >= self.cwnd_prior {
            1.0
        } else {
            alpha_cubic(self.params.beta)
        };
        epoch.w_est += alpha * segments_acked / cwnd;

        let new_cwnd =
            if self.params.tcp_friendliness && w_cubic(t, c, epoch.k, self.w_max) < epoch.w_est {
                // §4.3: Reno-friendly region, follow W_est.
                cwnd.max(epoch.w_est)
            } else {
                // §4.2: target = W_cubic(t + RTT), bounded to [cwnd, 1.5·cwnd]; §4.4–§4.5:
                // cwnd += (target − cwnd)/cwnd per acknowledged segment.
                let target = w_cubic(t + rtt, c, epoch.k, self.w_max)
                    .min(1.5 * cwnd)
                    .max(cwnd);
                (cwnd + (target - cwnd) / cwnd * segments_acked).min(target)
            };
        self.cwnd_bytes = self.cwnd_bytes.max(new_cwnd * mss);
        self.epoch = Some(epoch);
    }
}

/// The RTT CUBIC projects its target over: the smoothed RTT, else the latest sample, else the
/// minimum (all zero before the first sample).
fn smoothed_rtt(sample: &AckSample) -> SimTime {
    if sample.srtt > SimTime::ZERO {
        sample.srtt
    } else {
        sample.rtt.unwrap_or(sample.min_rtt)
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn cwnd(&self) -> u64 {
        // `as` rounds towards zero (and saturates), i.e. whole bytes.
        (self.cwnd_bytes as u64).max(self.mss)
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    fn on_packet_sent(&mut self, _now: SimTime, bytes: u32, _bytes_in_flight: u64) {
        if let Some(hystart) = self.hystart.as_mut() {
            hystart.on_sent(bytes);
        }
    }

    fn on_ack(&mut self, sample: &AckSample) {
        let Some(mut hystart) = self.hystart else {
            self.update_window(sample);
            return;
        };
        // Linux: `pkts_acked` (HyStart) sees the ACK before `cong_avoid` grows the window, and
        // `tcp_update_pacing_rate` runs after it.
        hystart.on_acked(sample.acked_bytes);
        if let Some(rtt) = sample.rtt {
            let cwnd = self.cwnd();
            if let Some(exit) =
                hystart.on_rtt_sample(sample.now, rtt, cwnd, self.ssthresh, self.mss)
            {
                self.ssthresh = exit.cwnd;
            }
        }
        self.update_window(sample);
        hystart.update_pacing_rate(self.mss, self.cwnd(), self.ssthresh, sample.srtt);
        self.hystart = Some(hystart);
    }

    fn on_congestion_event(&mut self, now: SimTime, bytes_in_flight: u64) {
        self.reduce(now, bytes_in_flight);
    }

    fn on_retransmission_timeout(&mut self, now: SimTime, bytes_in_flight: u64) {
        self.timeout(now, bytes_in_flight);
        if let Some(hystart) = self.hystart.as_mut() {
            hystart.on_timeout(now);
        }
    }
}

impl Cubic {
    /// The window's part of an ACK (everything but HyStart).
    fn update_window(&mut self, sample: &AckSample) {
        let previous_ack = self.last_ack_time.replace(sample.now);
        self.slow_start.on_ack(sample.acked_bytes);
        if sample.in_recovery || sample.acked_bytes == 0 {
            return;
        }
        if !sample.is_cwnd_limited {
            // §5.8 / §4.2: "t MUST NOT include periods during which cwnd has not been updated
            // due to application-limited behavior" — slide t_epoch forward by this gap.
            if let (Some(epoch), Some(previous)) = (self.epoch.as_mut(), previous_ack) {
                epoch.start = epoch
                    .start
                    .saturating_add(sample.now.saturating_sub(previous));
            }
            return;
        }
        if self.cwnd() < self.ssthresh {
            self.cwnd_bytes += self.slow_start.increase(sample.acked_bytes, self.mss) as f64;
            return;
        }
        self.slow_start.exit();
        self.congestion_avoidance(sample);
    }

    /// A loss detected by duplicate ACKs or SACK (RFC 9438 §4.6–§4.7).
    fn reduce(&mut self, _now: SimTime, bytes_in_flight: u64) {
        let cwnd = self.cwnd_segments();
        // §4.7: remember the saturation point, lowered further if it is dropping.
        self.w_max = if self.params.fast_convergence && cwnd < self.w_max {
            cwnd * (1.0 + self.params.beta) / 2.0
        } else {
            cwnd
        };
        self.cwnd_prior = cwnd;
        // §4.6: ssthresh = max(flight_size · β_cubic, 2 segments); cwnd = ssthresh.
        self.ssthresh = reduced_window(bytes_in_flight, self.params.beta, self.mss);
        self.cwnd_bytes = self.ssthresh as f64;
        self.epoch = None;
        self.timeout_epoch = false;
        self.slow_start.exit();
    }

    /// A retransmission timeout (RFC 9438 §4.8).
    fn timeout(&mut self, _now: SimTime, bytes_in_flight: u64) {
        if self.slow_start.on_timeout() {
            // §4.8: ssthresh from β_cubic as in §4.6; the next stage restarts the curve.
            self.cwnd_prior = self.cwnd_segments();
            self.ssthresh = reduced_window(bytes_in_flight, self.params.beta, self.mss);
            self.timeout_epoch = true;
        }
        // RFC 5681 §3.1: the loss window, one segment.
        self.cwnd_bytes = loss_window(self.mss) as f64;
        self.epoch = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cc::testing::{ack, run_round};
    use proptest::prelude::*;

    const MSS: u32 = 1000;
    const M: u64 = MSS as u64;

    fn params(fast_convergence: bool, tcp_friendliness: bool) -> CubicParams {
        CubicParams {
            fast_convergence,
            tcp_friendliness,
            ..CubicParams::default()
        }
    }

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    /// Slow start (one ACK per segment) to exactly `w_max` segments, then a loss with the whole
    /// window in flight, at time zero.
    fn after_loss_at(params: CubicParams, w_max: u64) -> Cubic {
        let mut cc = Cubic::new(MSS, 10, params);
        while cc.cwnd() < w_max * M {
            cc.on_ack(&ack(SimTime::ZERO, M, SimTime::from_millis(100), MSS));
        }
        assert_eq!(cc.cwnd(), w_max * M);
        cc.on_congestion_event(SimTime::ZERO, w_max * M);
        cc
    }

    /// Runs cwnd-limited rounds of `rtt` from `start` until `end`, recording
    /// `(time at the end of the round, cwnd in segments)`.
    fn trajectory(cc: &mut Cubic, start: SimTime, rtt: SimTime, end: SimTime) -> Vec<(f64, f64)> {
        let mut now = start;
        let mut points = Vec::new();
        while now < end {
            now = run_round(cc, now, rtt, MSS);
            points.push((now.as_secs_f64(), cc.cwnd_segments()));
        }
        points
    }

    #[test]
    fn defaults() {
        let p = CubicParams::default();
        assert_eq!(
            (
                p.c,
                p.beta,
                p.fast_convergence,
                p.tcp_friendliness,
                p.hystart
            ),
            (0.4, 0.7, true, true, HystartMode::Auto)
        );
        let cc = Cubic::new(MSS, 10, p);
        assert_eq!(
            (cc.cwnd(), cc.ssthresh(), cc.name()),
            (10 * M, u64::MAX, "cubic")
        );
        assert!(cc.in_slow_start());
    }

    #[test]
    fn formulas_against_hand_computation() {
        // W_max = 100, β = 0.7, C = 0.4: K = ∛(30/0.4) = ∛75 = 4.2172 s.
        let k = cubic_k(100.0, 70.0, 0.4);
        assert!(close(k, 4.217_163_326_508_746, 1e-12), "K = {k}");
        assert_eq!(w_cubic(k, 0.4, k, 100.0), 100.0);
        assert!(close(w_cubic(0.0, 0.4, k, 100.0), 70.0, 1e-9));
        // One second past K: W_max + C.
        assert!(close(w_cubic(k + 1.0, 0.4, k, 100.0), 100.4, 1e-9));
        // α_cubic(0.7) = 0.9/1.7; α_cubic(0.5) = 1 (Reno itself).
        assert!(close(alpha_cubic(0.7), 0.9 / 1.7, 1e-15));
        assert_eq!(alpha_cubic(0.5), 1.0);
        // cwnd_epoch above W_max: negative K, and the curve still starts at cwnd_epoch.
        let k = cubic_k(50.0, 60.0, 0.4);
        assert!(k < 0.0);
        assert!(close(w_cubic(0.0, 0.4, k, 50.0), 60.0, 1e-9));
    }

    #[test]
    fn slow_start_doubles_per_round_trip() {
        let mut cc = Cubic::new(MSS, 10, CubicParams::default());
        let mut now = SimTime::ZERO;
        for expected in [20, 40, 80, 160] {
            now = run_round(&mut cc, now, SimTime::from_millis(100), MSS);
            assert_eq!(cc.cwnd(), expected * M);
        }
    }

    #[test]
    fn loss_keeps_beta_of_flight_size() {
        let cc = after_loss_at(CubicParams::default(), 100);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (70 * M, 70 * M));
        assert_eq!(
            (cc.w_max_segments(), cc.cwnd_prior_segments()),
            (100.0, 100.0)
        );
        assert!(!cc.in_slow_start());
        // FlightSize, not cwnd, sets ssthresh (§4.6); 2 segments at least.
        let mut cc = after_loss_at(CubicParams::default(), 100);
        cc.on_congestion_event(SimTime::ZERO, 50 * M);
        assert_eq!(cc.cwnd(), 35 * M);
        cc.on_congestion_event(SimTime::ZERO, 2 * M);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (2 * M, 2 * M));
    }

    #[test]
    fn k_and_plateau_of_the_first_stage() {
        let rtt = SimTime::from_millis(100);
        let mut cc = after_loss_at(params(true, false), 100);
        assert_eq!(cc.k_seconds(), None);
        cc.on_ack(&ack(SimTime::from_secs(1), M, rtt, MSS));
        let k = cc
            .k_seconds()
            .expect("the first ACK in congestion avoidance starts the stage");
        assert!(close(k, 4.2172, 5e-5), "K = {k}");
        assert_eq!(cc.cwnd_epoch_segments(), Some(70.0));
        assert_eq!(cc.epoch_start(), Some(SimTime::from_secs(1)));
        assert_eq!(w_cubic(k, 0.4, k, cc.w_max_segments()), 100.0);
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        // A second loss at 70 segments, below W_max = 100: W_max = 70·(1 + 0.7)/2 = 59.5.
        let mut cc = after_loss_at(params(true, true), 100);
        cc.on_congestion_event(SimTime::ZERO, 70 * M);
        assert!(close(cc.w_max_segments(), 59.5, 1e-12));
        assert_eq!(cc.cwnd_prior_segments(), 70.0);
        assert_eq!(cc.cwnd(), 49 * M);
        // Without it, W_max is the window at the loss.
        let mut cc = after_loss_at(params(false, true), 100);
        cc.on_congestion_event(SimTime::ZERO, 70 * M);
        assert_eq!(cc.w_max_segments(), 70.0);
        // A loss above the previous W_max sets W_max to that window either way.
        let mut cc = after_loss_at(params(true, true), 100);
        cc.on_ack(&ack(SimTime::ZERO, M, SimTime::from_millis(1), MSS));
        cc.cwnd_bytes = 120_000.0;
        cc.on_congestion_event(SimTime::ZERO, 120 * M);
        assert_eq!(cc.w_max_segments(), 120.0);
    }

    #[test]
    fn target_is_capped_at_one_and_a_half_windows() {
        let rtt = SimTime::from_millis(100);
        let mut cc = after_loss_at(params(true, false), 100);
        cc.on_ack(&ack(SimTime::ZERO, M, rtt, MSS));
        let before = cc.cwnd_segments();
        // 60 s later W_cubic is far above 1.5·cwnd: the increase is (1.5·cwnd − cwnd)/cwnd.
        cc.on_ack(&ack(SimTime::from_secs(60), M, rtt, MSS));
        assert!(close(cc.cwnd_segments() - before, 0.5, 1e-9));
        let before = cc.cwnd_segments();
        cc.on_ack(&ack(SimTime::from_secs(61), 3 * M, rtt, MSS));
        assert!(close(cc.cwnd_segments() - before, 1.5, 1e-9));
        // A huge cumulative ACK cannot carry the window past the target.
        let before = cc.cwnd_segments();
        cc.on_ack(&ack(SimTime::from_secs(62), 1000 * M, rtt, MSS));
        assert!(close(cc.cwnd_segments(), 1.5 * before, 1e-9));
    }

    #[test]
    fn concave_then_convex() {
        let rtt = SimTime::from_millis(100);
        let mut cc = after_loss_at(params(true, false), 100);
        let k = cubic_k(100.0, 70.0, 0.4);
        let points = trajectory(&mut cc, SimTime::ZERO, rtt, SimTime::from_secs(10));
        let growth = |from: f64, to: f64| {
            let at = |t: f64| points.iter().find(|p| p.0 >= t).unwrap().1;
            at(to) - at(from)
        };
        // Concave: fast at first, flattening towards W_max.
        assert!(growth(0.0, 1.0) > growth(1.0, 2.0));
        assert!(growth(1.0, 2.0) > growth(2.0, 3.0));
        assert!(growth(2.0, 3.0) > growth(k - 0.5, k + 0.5));
        // Convex: accelerating away from W_max.
        assert!(growth(k + 1.0, k + 2.0) > growth(k - 0.5, k + 0.5));
        assert!(growth(k + 4.0, k + 5.0) > growth(k + 1.0, k + 2.0));
        // The window stays under W_max until about K and crosses it around K.
        assert!(points
            .iter()
            .filter(|p| p.0 < k - 2.0 * 0.1)
            .all(|p| p.1 < 100.0));
        assert!(points.iter().filter(|p| p.0 > k + 0.1).all(|p| p.1 > 100.0));
        // It tracks the curve: below W_cubic(t + RTT) (the target), within a segment of W_cubic(t).
        for &(t, w) in &points {
            assert!(w <= w_cubic(t + 0.1, 0.4, k, 100.0) + 1e-9, "t = {t}: {w}");
            assert!(w >= w_cubic(t, 0.4, k, 100.0) - 1.0, "t = {t}: {w}");
        }
    }

    #[test]
    fn reno_friendly_region_dominates_at_small_rtt_and_window() {
        // W_max = 20 segments, RTT = 10 ms. The curve needs K = ∛(6/0.4) ≈ 2.47 s (247 RTTs)
        // to return to W_max, while the Reno estimate of §4.3 gains α_cubic ≈ 0.53 segment per
        // RTT: W_est(t) ≈ cwnd_epoch + α_cubic·t/RTT, far above W_cubic(t).
        let rtt = SimTime::from_millis(10);
        let mut cc = after_loss_at(CubicParams::default(), 20);
        let mut plain = after_loss_at(params(true, false), 20);
        let k = cubic_k(20.0, 14.0, 0.4);
        let mut now = SimTime::ZERO;
        let mut alpha_one_rounds = 0;
        for round in 1..=30u32 {
            let start = now;
            let w0 = cc.cwnd_segments();
            let w_est0 = cc.w_est_segments().unwrap_or(w0);
            now = run_round(&mut cc, start, rtt, MSS);
            run_round(&mut plain, start, rtt, MSS);
            let t = now.as_secs_f64();
            let w_est = cc.w_est_segments().unwrap();
            // In the Reno-friendly region the window is W_est.
            assert!(w_est > w_cubic(t, 0.4, k, 20.0), "round {round}");
            assert!(close(cc.cwnd_segments(), w_est, 1e-9), "round {round}");
            assert!(cc.cwnd_segments() > plain.cwnd_segments(), "round {round}");
            // Figure 4 over one round: ⌊w0⌋ ACKs each add α/cwnd with w0 ≤ cwnd ≤ w0 + 1, and
            // α = α_cubic until W_est reaches cwnd_prior = 20, then 1.
            let alpha = if w_est0 >= 20.0 {
                alpha_one_rounds += 1;
                1.0
            } else if w_est < 20.0 {
                alpha_cubic(0.7)
            } else {
                continue; // the round in which α changes
            };
            let acks = w0.floor();
            let grown = w_est - w_est0;
            assert!(
                grown >= acks * alpha / (w0 + 1.0) - 1e-9,
                "round {round}: {grown}"
            );
            assert!(grown <= acks * alpha / w0 + 1e-9, "round {round}: {grown}");
        }
        assert!(alpha_one_rounds >= 10);
        // Thirty round trips in, the Reno estimate is far ahead of the curve alone.
        assert!(cc.cwnd_segments() > plain.cwnd_segments() + 10.0);
    }

    #[test]
    fn cubic_region_dominates_at_large_rtt_and_window() {
        // W_max = 1000 segments, RTT = 100 ms: after 3 s the curve is far ahead of Reno.
        let rtt = SimTime::from_millis(100);
        let mut cc = after_loss_at(CubicParams::default(), 1000);
        trajectory(&mut cc, SimTime::ZERO, rtt, SimTime::from_secs(3));
        let w_est = cc.w_est_segments().unwrap();
        assert!(
            close(w_est, 700.0 + 30.0 * alpha_cubic(0.7), 0.5),
            "W_est = {w_est}"
        );
        assert!(cc.cwnd_segments() > w_est + 100.0);
    }

    #[test]
    fn timeout_restarts_the_curve_from_the_new_window() {
        let rtt = SimTime::from_millis(100);
        let mut cc = after_loss_at(CubicParams::default(), 100).with_abc_limit(2);
        cc.on_ack(&ack(SimTime::ZERO, M, rtt, MSS));
        cc.on_retransmission_timeout(SimTime::from_secs(1), 100 * M);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (M, 70 * M));
        assert!(cc.in_slow_start());
        assert_eq!(cc.k_seconds(), None);
        // A second timeout before any new ACK keeps ssthresh.
        cc.on_retransmission_timeout(SimTime::from_secs(2), 3 * M);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (M, 70 * M));
        // L = 1 in this slow start, although L = 2 is configured.
        cc.on_ack(&ack(SimTime::from_secs(3), 2 * M, rtt, MSS));
        assert_eq!(cc.cwnd(), 2 * M);
        let mut now = SimTime::from_secs(3);
        while cc.in_slow_start() {
            now = now.saturating_add(SimTime::from_millis(1));
            cc.on_ack(&ack(now, M, rtt, MSS));
        }
        // Slow start stops exactly at ssthresh (one segment per ACK); the stage starts with
        // the next ACK.
        assert_eq!(cc.cwnd(), 70 * M);
        assert_eq!(cc.k_seconds(), None);
        cc.on_ack(&ack(now, M, rtt, MSS));
        // §4.8: W_max = cwnd_epoch, K = 0, W_est = cwnd_epoch (plus this ACK's share).
        let reached = 70.0;
        assert_eq!(cc.k_seconds(), Some(0.0));
        assert_eq!(cc.w_max_segments(), reached);
        // cwnd_prior is the window just before the timeout (70 and a little), so α = α_cubic.
        let expected_w_est = reached + alpha_cubic(0.7) / reached;
        assert!(close(cc.w_est_segments().unwrap(), expected_w_est, 1e-12));
        assert_eq!(cc.cwnd_epoch_segments(), Some(reached));
    }

    #[test]
    fn no_growth_in_recovery() {
        let rtt = SimTime::from_millis(100);
        let mut cc = after_loss_at(CubicParams::default(), 100);
        for i in 0..100 {
            let mut s = ack(SimTime::from_millis(i), M, rtt, MSS);
            s.in_recovery = true;
            cc.on_ack(&s);
        }
        assert_eq!(cc.cwnd(), 70 * M);
        assert_eq!(cc.k_seconds(), None, "the stage starts after recovery");
        cc.on_recovery_exit(SimTime::from_millis(100));
        assert_eq!(cc.cwnd(), 70 * M);
    }

    #[test]
    fn application_limited_time_is_left_out_of_t() {
        let rtt = SimTime::from_millis(100);
        let mut limited = after_loss_at(params(true, false), 100);
        let mut busy = after_loss_at(params(true, false), 100);
        limited.on_ack(&ack(SimTime::ZERO, M, rtt, MSS));
        busy.on_ack(&ack(SimTime::ZERO, M, rtt, MSS));
        // Ten seconds of application-limited ACKs: no growth, and the clock is held.
        for i in 1..=100 {
            let mut s = ack(SimTime::from_millis(100 * i), M, rtt, MSS);
            s.is_cwnd_limited = false;
            let before = limited.cwnd();
            limited.on_ack(&s);
            assert_eq!(limited.cwnd(), before);
        }
        assert_eq!(limited.epoch_start(), Some(SimTime::from_secs(10)));
        // The next cwnd-limited ACK, 100 ms later, sees t = 0.1 s as if there had been no gap.
        limited.on_ack(&ack(SimTime::from_millis(10_100), M, rtt, MSS));
        busy.on_ack(&ack(SimTime::from_millis(100), M, rtt, MSS));
        assert!(close(limited.cwnd_segments(), busy.cwnd_segments(), 1e-12));
    }

    #[test]
    fn sack_only_acks_do_not_grow_the_window() {
        let mut cc = after_loss_at(CubicParams::default(), 100);
        let mut s = ack(SimTime::from_secs(1), 0, SimTime::from_millis(100), MSS);
        s.newly_sacked_bytes = 10 * M;
        cc.on_ack(&s);
        assert_eq!(cc.cwnd(), 70 * M);
    }

    #[test]
    fn cwnd_epoch_above_w_max_starts_on_the_convex_side() {
        // Fast convergence puts W_max at 59.5 while 200 segments in flight leave cwnd at 140.
        let mut cc = after_loss_at(CubicParams::default(), 100);
        cc.on_congestion_event(SimTime::ZERO, 200 * M);
        assert_eq!(cc.cwnd(), 140 * M);
        cc.on_ack(&ack(SimTime::ZERO, M, SimTime::from_millis(100), MSS));
        let k = cc.k_seconds().unwrap();
        assert!(k < 0.0);
        assert!(close(
            w_cubic(0.0, 0.4, k, cc.w_max_segments()),
            140.0,
            1e-9
        ));
    }

    #[test]
    fn invalid_parameters_are_rejected() {
        assert!(CubicParams {
            c: -1.0,
            ..CubicParams::default()
        }
        .validate()
        .is_err());
        assert!(CubicParams {
            beta: 0.0,
            ..CubicParams::default()
        }
        .validate()
        .is_err());
        assert!(CubicParams {
            beta: f64::NAN,
            ..CubicParams::default()
        }
        .validate()
        .is_err());
        assert!(CubicParams::default().validate().is_ok());
    }

    // ---- HyStart ----

    fn connection(profile: TcpProfile, initial_window: u32) -> Connection {
        Connection {
            mss: MSS,
            initial_window,
            profile,
        }
    }

    fn with_hystart(mode: HystartMode, profile: TcpProfile, initial_window: u32) -> Cubic {
        let params = CubicParams {
            hystart: mode,
            ..CubicParams::default()
        };
        Cubic::for_connection(connection(profile, initial_window), params)
    }

    /// Where a synthetic slow start left slow start: the round (from 1), the index in the
    /// round of the ACK that ended it (from 0) and the window in segments before that ACK.
    #[derive(Debug, PartialEq, Eq)]
    struct Exit {
        round: u32,
        index: u64,
        cwnd_before: u64,
    }

    /// A synthetic slow start, one ACK per segment. The initial window is sent at time zero;
    /// round k acknowledges the segments sent during round k − 1, its ACKs arriving `gap`
    /// apart from the round's start, rounds starting `period` apart (or one `gap` after the
    /// previous train when that is longer), every ACK carrying the RTT sample `rtt(k)` (also
    /// the smoothed RTT). After each ACK the sender fills the window, one `on_packet_sent` per
    /// segment. Stops after the ACK that ends slow start, or after `rounds` rounds.
    fn synthetic_slow_start(
        cc: &mut Cubic,
        gap: SimTime,
        period: SimTime,
        rounds: u32,
        rtt: impl Fn(u32) -> SimTime,
    ) -> Option<Exit> {
        let (mut snd_una, mut snd_nxt) = (0u64, 0u64);
        let fill = |cc: &mut Cubic, now: SimTime, snd_una: u64, snd_nxt: &mut u64| {
            while *snd_nxt - snd_una + M <= cc.cwnd() {
                cc.on_packet_sent(now, MSS, *snd_nxt - snd_una + M);
                *snd_nxt += M;
            }
        };
        fill(cc, SimTime::ZERO, snd_una, &mut snd_nxt);
        let mut start = SimTime::ZERO;
        for round in 1..=rounds {
            let segments = (snd_nxt - snd_una) / M;
            for index in 0..segments {
                let now = start.saturating_add(gap.saturating_mul(index));
                let cwnd_before = cc.cwnd() / M;
                cc.on_ack(&ack(now, M, rtt(round), MSS));
                snd_una += M;
                if !cc.in_slow_start() {
                    return Some(Exit {
                        round,
                        index,
                        cwnd_before,
                    });
                }
                fill(cc, now, snd_una, &mut snd_nxt);
            }
            start = start.saturating_add(period.max(gap.saturating_mul(segments)));
        }
        None
    }

    #[test]
    fn hystart_parameter_choices_and_auto_default_per_profile() {
        use crate::transport::cc::{CcSpec, Controller};
        let spec = SPEC.param("hystart").expect("declared");
        assert_eq!(
            spec.ty,
            crate::registry::ParamType::Choice(&["auto", "on", "off"])
        );
        assert_eq!(
            spec.default,
            crate::registry::Default::Value(Scalar::Name("auto"))
        );
        for (i, name) in HystartMode::NAMES.iter().enumerate() {
            let mode = HystartMode::from_name(name).unwrap();
            assert_eq!(mode.name(), *name);
            assert_eq!(HystartMode::NAMES[i], mode.name());
        }
        assert_eq!(HystartMode::from_name("yes"), None);
        let enabled = |given: &[(&str, Value)], profile| match CcSpec::new("cubic", given)
            .unwrap()
            .build(connection(profile, 10))
        {
            Controller::Cubic(cc) => cc.hystart_enabled(),
            other => panic!("{other:?}"),
        };
        // auto (the default): on in the linux profile only.
        assert!(enabled(&[], TcpProfile::Linux));
        assert!(!enabled(&[], TcpProfile::Rfc));
        assert!(enabled(
            &[("hystart", Value::Choice("auto"))],
            TcpProfile::Linux
        ));
        assert!(enabled(
            &[("hystart", Value::Choice("on"))],
            TcpProfile::Rfc
        ));
        assert!(enabled(
            &[("hystart", Value::Choice("on"))],
            TcpProfile::Linux
        ));
        assert!(!enabled(
            &[("hystart", Value::Choice("off"))],
            TcpProfile::Linux
        ));
        assert!(!enabled(
            &[("hystart", Value::Choice("off"))],
            TcpProfile::Rfc
        ));
        let p = CcSpec::new("cubic", &[("hystart", Value::Choice("on"))]).unwrap();
        assert_eq!(CubicParams::from(p.params()).hystart, HystartMode::On);
        let err = CcSpec::new("cubic", &[("hystart", Value::Choice("maybe"))]).unwrap_err();
        assert_eq!(err.param.as_deref(), Some("hystart"));
        assert_eq!(err.message, "expected a choice value, got \"maybe\"");
        // Cubic::new is the default (rfc) profile.
        assert!(!Cubic::new(MSS, 10, CubicParams::default()).hystart_enabled());
        let on = CubicParams {
            hystart: HystartMode::On,
            ..CubicParams::default()
        };
        assert!(Cubic::new(MSS, 10, on).hystart_enabled());
    }

    #[test]
    fn hystart_thresholds_and_ack_delay() {
        // HYSTART_DELAY_THRESH(delay_min/8), clamped to [4 ms, 16 ms].
        assert_eq!(hystart_delay_thresh_us(20_000), 4_000);
        assert_eq!(hystart_delay_thresh_us(40_000), 5_000);
        assert_eq!(hystart_delay_thresh_us(100_000), 12_500);
        assert_eq!(hystart_delay_thresh_us(200_000), 16_000);
        // tcp_update_pacing_rate: 1448 B · 200 % · 10 / 50 ms = 579 200 B/s, so
        // hystart_ack_delay = min(1 ms, 4 · 65536 B / 579 200 B/s = 452 ms) = 1 ms.
        let slow = linux_pacing_rate(1448, 10, 3, u64::MAX / 1448, SimTime::from_millis(50));
        assert_eq!(slow, 579_200);
        assert_eq!(hystart_ack_delay_us(slow), 1000);
        // 1000 segments in 1 ms: 2.896 GB/s, 262 144 000 000 / 2 896 000 000 = 90.5 µs.
        let fast = linux_pacing_rate(1448, 1000, 10, u64::MAX / 1448, SimTime::from_millis(1));
        assert_eq!(fast, 2_896_000_000);
        assert_eq!(hystart_ack_delay_us(fast), 90);
        // At or above ssthresh/2 the ratio is 120 %; packets_out counts when above cwnd.
        let ca = linux_pacing_rate(1448, 1000, 10, 2000, SimTime::from_millis(1));
        assert_eq!(ca, 1_737_600_000);
        assert_eq!(hystart_ack_delay_us(ca), 150);
        assert_eq!(
            linux_pacing_rate(1448, 10, 20, u64::MAX, SimTime::from_millis(50)),
            2 * slow
        );
        // No rate yet: no allowance. No srtt: no division (Linux's `if (likely(srtt_us))`).
        assert_eq!(hystart_ack_delay_us(0), 0);
        assert_eq!(
            linux_pacing_rate(1000, 10, 0, u64::MAX, SimTime::ZERO),
            1000 * 80_000 * 200 * 10
        );
    }

    #[test]
    fn hystart_ack_train_exits_half_a_min_rtt_into_the_round() {
        // RTT 40 ms, ACKs 1 ms apart (a train: within hystart_ack_delta_us = 2 ms).
        // hystart_ack_delay is 1 ms (the pacing rate is far below 262 MB/s), so the threshold
        // is (40 000 + 1000)/2 = 20 500 µs: the 22nd ACK of a round (21 ms after its first)
        // is the first beyond it. Rounds: 10 ACKs (the window passes 16 mid-round, but the
        // train was broken below it: last_ack stayed at the round's first ACK), 20 ACKs (a
        // 19 ms train), then 40: exit at the ACK of index 21, with cwnd = 40 + 21 = 61.
        let mut cc = with_hystart(HystartMode::Auto, TcpProfile::Linux, 10);
        let rtt = SimTime::from_millis(40);
        let exit = synthetic_slow_start(&mut cc, SimTime::from_millis(1), rtt, 10, |_| rtt);
        assert_eq!(
            exit,
            Some(Exit {
                round: 3,
                index: 21,
                cwnd_before: 61
            })
        );
        assert_eq!(cc.ssthresh(), 61 * M);
        let found = cc.hystart_exit().unwrap();
        assert_eq!(
            found,
            HystartExit {
                trigger: HystartTrigger::AckTrain,
                at: SimTime::from_millis(40 + 40 + 21),
                cwnd: 61 * M,
            }
        );
        assert_eq!(cc.hystart_delay_min(), Some(rtt));
        // The exiting ACK went to congestion avoidance: a fraction of a segment, not one.
        assert!(cc.cwnd() > 61 * M && cc.cwnd() < 62 * M, "{}", cc.cwnd());
        assert!(cc.k_seconds().is_some());
        // ACKs 2.5 ms apart never form a train: no exit in the same rounds.
        let mut spaced = with_hystart(HystartMode::On, TcpProfile::Rfc, 10);
        let period = SimTime::from_millis(100);
        let ms = |_| rtt;
        assert_eq!(
            synthetic_slow_start(&mut spaced, SimTime::from_micros(2500), period, 3, ms),
            None
        );
        assert_eq!(spaced.cwnd(), 80 * M);
    }

    #[test]
    fn hystart_delay_exits_when_the_round_minimum_rises_past_the_threshold() {
        // ACKs 2.5 ms apart (no ACK train), RTT 100 ms for two rounds: delay_min = 100 ms and
        // the threshold is clamp(100/8 ms) = 12.5 ms. In round 3 every sample is
        // 112.501 ms: the first 8 are only counted, the 9th (index 8) tests and exits, with
        // cwnd = 40 + 8 = 48 segments.
        let period = SimTime::from_millis(100);
        let gap = SimTime::from_micros(2500);
        let rising = |by: SimTime| {
            move |round: u32| {
                if round < 3 {
                    period
                } else {
                    period.saturating_add(by)
                }
            }
        };
        let mut cc = with_hystart(HystartMode::On, TcpProfile::Rfc, 10);
        let exit = synthetic_slow_start(&mut cc, gap, period, 10, rising(SimTime(12_501_000)));
        assert_eq!(
            exit,
            Some(Exit {
                round: 3,
                index: 8,
                cwnd_before: 48
            })
        );
        assert_eq!(cc.ssthresh(), 48 * M);
        assert_eq!(
            cc.hystart_exit().map(|e| (e.trigger, e.cwnd)),
            Some((HystartTrigger::Delay, 48 * M))
        );
        // Exactly the threshold is not above it: the window doubles through round 3.
        let mut cc = with_hystart(HystartMode::On, TcpProfile::Rfc, 10);
        let exit = synthetic_slow_start(&mut cc, gap, period, 3, rising(SimTime(12_500_000)));
        assert_eq!(exit, None);
        assert_eq!(cc.cwnd(), 80 * M);
        assert_eq!(cc.hystart_exit(), None);
        // A small delay_min: the threshold is HYSTART_DELAY_MIN = 4 ms (not 20/8 = 2.5 ms).
        let small =
            |by: u64| move |round: u32| SimTime(20_000_000 + if round < 3 { 0 } else { by });
        let mut cc = with_hystart(HystartMode::On, TcpProfile::Rfc, 10);
        assert_eq!(
            synthetic_slow_start(&mut cc, gap, period, 3, small(4_000_000)),
            None
        );
        let mut cc = with_hystart(HystartMode::On, TcpProfile::Rfc, 10);
        assert_eq!(
            synthetic_slow_start(&mut cc, gap, period, 3, small(4_001_000)).map(|e| e.cwnd_before),
            Some(48)
        );
    }

    #[test]
    fn hystart_does_nothing_below_the_low_window() {
        // RTT 10 ms, ACKs 1 ms apart: threshold (10 000 + 1000)/2 = 5500 µs, crossed by the
        // ACK of index 6 of any round with a continuous train. Initial window 2: rounds of 2,
        // 4 and 8 ACKs; in the third the train passes 6 ms at cwnd = 8 + 6 = 14 < 16, and
        // nothing happens. The fourth round (16 ACKs) exits at index 6, cwnd = 16 + 6 = 22.
        let rtt = SimTime::from_millis(10);
        let gap = SimTime::from_millis(1);
        let mut cc = with_hystart(HystartMode::On, TcpProfile::Rfc, 2);
        assert_eq!(synthetic_slow_start(&mut cc, gap, rtt, 3, |_| rtt), None);
        assert_eq!((cc.cwnd(), cc.hystart_exit()), (16 * M, None));
        let mut cc = with_hystart(HystartMode::On, TcpProfile::Rfc, 2);
        assert_eq!(
            synthetic_slow_start(&mut cc, gap, rtt, 4, |_| rtt),
            Some(Exit {
                round: 4,
                index: 6,
                cwnd_before: 22
            })
        );
        // Delay: a 40 % RTT rise in every round from the second never counts below 16
        // segments (rounds of 2, 4 and 8 ACKs; and 8 samples are only counted anyway).
        let mut cc = with_hystart(HystartMode::On, TcpProfile::Rfc, 2);
        let period = SimTime::from_millis(100);
        let rising = |round: u32| SimTime::from_millis(if round < 2 { 50 } else { 70 });
        assert_eq!(
            synthetic_slow_start(&mut cc, SimTime::from_micros(2500), period, 3, rising),
            None
        );
        assert_eq!(cc.cwnd(), 16 * M);
    }

    #[test]
    fn hystart_off_leaves_slow_start_alone() {
        for cc in [
            with_hystart(HystartMode::Off, TcpProfile::Linux, 10),
            with_hystart(HystartMode::Auto, TcpProfile::Rfc, 10),
        ] {
            let mut cc = cc;
            assert!(!cc.hystart_enabled());
            let rtt = SimTime::from_millis(40);
            let gap = SimTime::from_micros(500);
            let rising = |round: u32| rtt.saturating_mul(u64::from(round));
            assert_eq!(synthetic_slow_start(&mut cc, gap, rtt, 5, rising), None);
            assert_eq!((cc.cwnd(), cc.ssthresh()), (320 * M, u64::MAX));
            assert_eq!((cc.hystart_exit(), cc.hystart_delay_min()), (None, None));
        }
    }

    /// A deterministic mixed stream of events (xorshift64): ACKs of various sizes and RTTs,
    /// some without an RTT sample, application-limited or in recovery, SACK-only ACKs, sends,
    /// congestion events, recovery exits and timeouts. Returns an FNV-1a hash of every
    /// `(cwnd, ssthresh)` the controller passes through, bit for bit.
    fn mixed_stream_fingerprint(cc: &mut Cubic) -> u64 {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        let mut now = SimTime::ZERO;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let r = x;
            now = now.saturating_add(SimTime::from_micros(r % 3000));
            let cwnd = cc.cwnd();
            match (r >> 56) % 64 {
                0 => cc.on_congestion_event(now, cwnd),
                1 if r % 5 == 0 => cc.on_retransmission_timeout(now, cwnd / 2),
                2..=9 => cc.on_packet_sent(now, MSS, cwnd),
                10 => cc.on_recovery_exit(now),
                kind => {
                    let rtt = SimTime::from_micros(20_000 + (r >> 8) % 40_000);
                    let acked = [0, M, M, M, 2 * M, 1500, 3 * M][((r >> 20) % 7) as usize];
                    let mut s = ack(now, acked, rtt, MSS);
                    s.srtt = SimTime::from_micros(30_000 + (r >> 30) % 5_000);
                    s.rtt = (kind % 5 != 0).then_some(rtt);
                    s.is_cwnd_limited = kind % 9 != 0;
                    s.in_recovery = kind % 13 == 0;
                    s.newly_sacked_bytes = if acked == 0 { M } else { 0 };
                    cc.on_ack(&s);
                }
            }
            for v in [cc.cwnd_bytes.to_bits(), cc.ssthresh] {
                for b in v.to_le_bytes() {
                    hash ^= u64::from(b);
                    hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
                }
            }
        }
        hash
    }

    #[test]
    fn hystart_off_is_bit_identical_to_cubic_without_it() {
        // Fingerprints recorded from this file before HyStart was added.
        const DEFAULT: u64 = 0xdf64_20dd_e1b1_a930;
        const PLAIN_ABC2: u64 = 0x1487_fff6_1264_3bc8;
        let plain = CubicParams {
            fast_convergence: false,
            tcp_friendliness: false,
            ..CubicParams::default()
        };
        for (mode, profile) in [
            (HystartMode::Off, TcpProfile::Linux),
            (HystartMode::Off, TcpProfile::Rfc),
            (HystartMode::Auto, TcpProfile::Rfc),
        ] {
            let params = CubicParams {
                hystart: mode,
                ..CubicParams::default()
            };
            let mut cc = Cubic::for_connection(connection(profile, 10), params);
            assert_eq!(
                mixed_stream_fingerprint(&mut cc),
                DEFAULT,
                "{mode:?} {profile:?}"
            );
            let params = CubicParams {
                hystart: mode,
                ..plain
            };
            let mut cc = Cubic::for_connection(connection(profile, 10), params).with_abc_limit(2);
            assert_eq!(
                mixed_stream_fingerprint(&mut cc),
                PLAIN_ABC2,
                "{mode:?} {profile:?}"
            );
        }
        assert_eq!(
            mixed_stream_fingerprint(&mut Cubic::new(MSS, 10, CubicParams::default())),
            DEFAULT
        );
    }

    #[test]
    fn hystart_full_slow_start_by_rounds() {
        // run_round spreads a window's ACKs evenly over the RTT (100 ms); the window is
        // reported sent at the start of each round. Windows of 10, 20 and 40 segments space
        // their ACKs 10, 5 and 2.5 ms apart: no train. At 80 they are 1.25 ms apart, and the
        // train passes (100 + 1)/2 = 50.5 ms at the ACK of index 41 (51.25 ms after the
        // round's first, at 301.25 ms): ssthresh = cwnd = 80 + 41 = 121 segments, found at
        // 352.5 ms.
        let rtt = SimTime::from_millis(100);
        let mut linux = with_hystart(HystartMode::Auto, TcpProfile::Linux, 10);
        let mut rfc = with_hystart(HystartMode::Auto, TcpProfile::Rfc, 10);
        let mut now = SimTime::ZERO;
        let mut windows = Vec::new();
        for _ in 0..6 {
            for cc in [&mut linux, &mut rfc] {
                for _ in 0..cc.cwnd() / M {
                    cc.on_packet_sent(now, MSS, 0);
                }
                run_round(cc, now, rtt, MSS);
            }
            now = now.saturating_add(rtt);
            windows.push((linux.cwnd() / M, rfc.cwnd() / M));
        }
        assert_eq!(linux.ssthresh(), 121 * M);
        assert_eq!(
            linux.hystart_exit().map(|e| (e.trigger, e.at)),
            Some((HystartTrigger::AckTrain, SimTime::from_micros(352_500)))
        );
        let linux_windows: Vec<u64> = windows.iter().map(|w| w.0).collect();
        let rfc_windows: Vec<u64> = windows.iter().map(|w| w.1).collect();
        assert_eq!(&linux_windows[..3], &[20, 40, 80]);
        assert_eq!(linux_windows[3], 121, "{linux_windows:?}");
        // Then congestion avoidance: growth by a few segments per round, not doubling.
        assert!(linux_windows[5] < 130, "{linux_windows:?}");
        assert_eq!(rfc_windows, [20, 40, 80, 160, 320, 640]);
    }

    #[test]
    fn hystart_rearms_after_a_timeout() {
        let rtt = SimTime::from_millis(40);
        let mut cc = with_hystart(HystartMode::On, TcpProfile::Rfc, 10);
        let gap = SimTime::from_millis(1);
        assert!(synthetic_slow_start(&mut cc, gap, rtt, 10, |_| rtt).is_some());
        assert!(cc.hystart_exit().is_some());
        cc.on_retransmission_timeout(SimTime::from_secs(5), 60 * M);
        // bictcp_reset: found and delay_min cleared.
        assert_eq!((cc.hystart_exit(), cc.hystart_delay_min()), (None, None));
        assert_eq!((cc.cwnd(), cc.ssthresh()), (M, 42 * M));
        assert!(cc.in_slow_start());
        // The first ACK after the timeout sets delay_min again.
        cc.on_ack(&ack(
            SimTime::from_secs(6),
            M,
            SimTime::from_millis(30),
            MSS,
        ));
        assert_eq!(cc.hystart_delay_min(), Some(SimTime::from_millis(30)));
        // An RTT sample is needed (Karn): an ACK without one changes nothing.
        let mut s = ack(SimTime::from_secs(7), M, SimTime::from_millis(5), MSS);
        s.rtt = None;
        cc.on_ack(&s);
        assert_eq!(cc.hystart_delay_min(), Some(SimTime::from_millis(30)));
    }

    proptest! {
        /// In congestion avoidance without the Reno-friendly region, no ACK raises the window by
        /// more than half a segment per acknowledged segment (the 1.5·cwnd bound of §4.2), and
        /// no ACK lowers it.
        #[test]
        fn per_ack_growth_is_bounded(
            w_max in 10u64..400,
            acks in proptest::collection::vec(
                (0u64..2_000_000_000, 1u64..4000, 1u64..1_000_000_000),
                1..200,
            ),
        ) {
            let mut cc = after_loss_at(params(true, false), w_max);
            let mut now = SimTime::ZERO;
            for (advance_ns, acked, srtt_ns) in acks {
                now = now.saturating_add(SimTime(advance_ns));
                let before = cc.cwnd_segments();
                cc.on_ack(&ack(now, acked, SimTime(srtt_ns), MSS));
                let grown = cc.cwnd_segments() - before;
                prop_assert!(grown >= 0.0);
                prop_assert!(grown <= 0.5 * acked as f64 / MSS as f64 + 1e-9);
            }
        }
    }
}
