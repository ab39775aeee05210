//! Host timing noise: per-packet processing jitter and occasional host stalls at the two ends
//! of a connection.
//!
//! With exact arithmetic a simulated host sends a packet the very nanosecond its ACK arrives,
//! so runs with tiny buffers hinge on nanosecond tie-breaks at the queues, and different seeds
//! can give identical results (nothing else draws from them). A real host takes a few
//! microseconds, varying, to process an ACK and send, and is now and then descheduled for
//! longer. [`HostNoise`] delays each packet a connection end emits:
//!
//! - **Jitter**: a delay drawn uniformly from `[0, jitter]` (nanosecond resolution), and at
//!   the sending end (the one whose packets travel forward) from `[0, jitter + send_jitter]`:
//!   `send_jitter` is the random processing time at the sources that Floyd and Jacobson ("On
//!   traffic phase effects in packet-switched gateways", 1992) and ns-2's `overhead_` use
//!   against phase effects;
//! - **Stalls**: the end stalls at the times of a Poisson process of `stall_rate` per second,
//!   for `stall_duration` each (the next stall is drawn from the end of the previous one); a
//!   packet whose release falls in a stall leaves when it ends;
//! - **Order**: an end releases its packets in the order it emitted them (a host's stack and
//!   NIC do not reorder one connection): a packet never leaves before the one emitted before
//!   it from the same end.
//!
//! A packet due later is handed to the driver with its release time ([`Outbox::send_at`]),
//! which puts it on its route then; the transport is not woken for it.
//!
//! Every draw comes from the connection's own seeded stream (`flow.<name>.tcp` for a TCP flow,
//! `flow.<name>.host` for an MPTCP connection or an MPAT aggregate, whose subflows or windows
//! share the two hosts), so runs stay deterministic and seeds give independent replications. The two ends (sender and receiver)
//! are independent hosts with their own state, drawing from the one stream in the order the
//! packets are emitted.

use rand::{Rng, RngCore};

use crate::rng::SimRng;
use crate::time::SimTime;
use crate::transport::{Direction, Outbox, Transmit};

/// The settings of [`HostNoise`]; all zero is off.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HostNoiseConfig {
    /// Largest extra delay of each packet the sending end (end 0) emits, on top of `jitter`
    /// (uniform in `[0, send_jitter + jitter]` there).
    pub send_jitter: SimTime,
    /// Largest per-packet processing delay at each end (uniform in `[0, jitter]`).
    pub jitter: SimTime,
    /// Stalls per second at each end (0: none).
    pub stall_rate: f64,
    /// How long each stall lasts.
    pub stall_duration: SimTime,
}

impl HostNoiseConfig {
    /// Whether the settings delay anything.
    pub fn is_on(&self) -> bool {
        self.send_jitter > SimTime::ZERO || self.delays_both_ends()
    }

    /// Whether the receiving end (end 1) delays its packets too: processing jitter or
    /// stalls at both ends.
    pub fn delays_both_ends(&self) -> bool {
        self.jitter > SimTime::ZERO
            || (self.stall_rate > 0.0 && self.stall_duration > SimTime::ZERO)
    }
}

/// One end's state.
#[derive(Clone, Copy, Debug, Default)]
struct End {
    /// The delay of each packet this end emits: uniform in `[0, jitter]` ns, plus
    /// `send_jitter` at the sending end.
    delay: UniformDelay,
    /// When the packet emitted last leaves (the next may not leave earlier).
    free_at: SimTime,
    /// The next stall `[start, end)`, once drawn.
    stall: Option<(SimTime, SimTime)>,
    /// Just after the last packet held back leaves (the driver releases it then): a packet
    /// emitted before this instant, even at the very instant that one leaves, is held too,
    /// so that it leaves after it. Zero while none was held. (The release plus one
    /// nanosecond, so that "nothing held, or held until before now" is one comparison.)
    held_until_after: SimTime,
}

/// A draw uniform in `[0, max]` ns that is, draw for draw, `rng.gen_range(0..=max)`: rand 0.8's
/// `UniformInt::<u64>::sample_single_inclusive` (Lemire's widening multiply, rejecting the low
/// words above a zone that is the range shifted up to the top bit, minus one), with the range
/// and the zone worked out once from the settings instead of at every packet.
#[derive(Clone, Copy, Debug, Default)]
struct UniformDelay {
    /// `max + 1`, wrapping: 1 draws nothing (no delay), 0 is the whole of `u64`.
    range: u64,
    /// The largest low word accepted.
    zone: u64,
}

impl UniformDelay {
    fn new(max: u64) -> Self {
        let range = max.wrapping_add(1);
        let zone = if range == 0 {
            u64::MAX
        } else {
            (range << range.leading_zeros()).wrapping_sub(1)
        };
        UniformDelay { range, zone }
    }

    /// The next delay in ns: 0 without a draw when `max` is 0, as `gen_range` is not called
    /// then.
    #[inline(always)]
    fn sample(&self, rng: &mut SimRng) -> u64 {
        if self.range <= 1 {
            return if self.range == 1 { 0 } else { rng.next_u64() };
        }
        loop {
            let wide = u128::from(rng.next_u64()) * u128::from(self.range);
            if wide as u64 <= self.zone {
                return (wide >> 64) as u64;
            }
        }
    }
}

/// Delays the packets of a connection's two ends (see the module documentation).
///
/// A packet due at once goes straight into the outbox; a later one goes in with its release
/// time ([`Outbox::send_at`]), and the driver puts it on its route then: no wake-up of the
/// transport per packet, and the transport's own wake-ups are its timers alone.
#[derive(Clone, Debug)]
pub struct HostNoise {
    config: HostNoiseConfig,
    rng: SimRng,
    ends: [End; 2],
    /// The ends stall (`stall_rate` and `stall_duration` both positive).
    stalls: bool,
}

impl HostNoise {
    pub fn new(config: HostNoiseConfig, rng: SimRng) -> HostNoise {
        let jitter = config.jitter.as_nanos();
        let end = |max| End {
            delay: UniformDelay::new(max),
            ..End::default()
        };
        HostNoise {
            config,
            rng,
            ends: [end(jitter + config.send_jitter.as_nanos()), end(jitter)],
            stalls: config.stall_rate > 0.0 && config.stall_duration > SimTime::ZERO,
        }
    }

    /// When a packet the end `end` (0 or 1) emits at `now` leaves it: `now` plus its
    /// processing delay, after any stall it falls in, and not before the end's previous
    /// packet.
    #[inline(always)]
    fn release_time(&mut self, now: SimTime, end: usize) -> SimTime {
        let delay = self.ends[end].delay.sample(&mut self.rng);
        let mut release = (now + SimTime(delay)).max(self.ends[end].free_at);
        if self.stalls {
            release = self.after_stalls(end, release);
        }
        self.ends[end].free_at = release;
        release
    }

    /// Whether the receiving end sends every packet the instant it emits it (only the sender's
    /// packets are delayed, [`HostNoiseConfig::send_jitter`]).
    pub fn receiver_is_exact(&self) -> bool {
        !self.config.delays_both_ends()
    }

    /// Sends `packet`, emitted at `now` by the end its direction says (the sender's forward,
    /// the receiver's back), into `out`: at once if due now and no packet of that end is held
    /// until now, else to leave at its release time.
    #[inline(always)]
    pub fn send(&mut self, now: SimTime, packet: Transmit, out: &mut Outbox<'_>) {
        let end = usize::from(packet.direction == Direction::Reverse);
        let release = self.release_time(now, end);
        let e = &mut self.ends[end];
        // Held packets due before `now` have left; one due at `now` may not have yet.
        let held = !(release <= now && e.held_until_after <= now);
        if held {
            e.held_until_after = SimTime(release.0.saturating_add(1));
        }
        out.send_held_if(packet, held, release);
    }

    /// Sends every packet `emit` yields at `now` through the noise ([`HostNoise::send`]): a
    /// transport's sending.
    pub fn relay(
        &mut self,
        now: SimTime,
        mut emit: impl FnMut() -> Option<Transmit>,
        out: &mut Outbox<'_>,
    ) {
        while let Some(x) = emit() {
            self.send(now, x, out);
        }
    }

    /// `release`, or the end of the stall it falls in; stalls that ended before it are passed.
    #[inline(never)]
    fn after_stalls(&mut self, end: usize, release: SimTime) -> SimTime {
        loop {
            let (start, stop) = match self.ends[end].stall {
                Some(s) => s,
                None => {
                    let first = self.exponential_gap(SimTime::ZERO);
                    self.stall_at(end, first)
                }
            };
            if release < start {
                return release;
            }
            if release < stop {
                return stop;
            }
            let next = self.exponential_gap(stop);
            self.stall_at(end, next);
        }
    }

    fn stall_at(&mut self, end: usize, start: SimTime) -> (SimTime, SimTime) {
        let stall = (start, start + self.config.stall_duration);
        self.ends[end].stall = Some(stall);
        stall
    }

    /// `from` plus an exponential gap of mean `1 / stall_rate` seconds.
    fn exponential_gap(&mut self, from: SimTime) -> SimTime {
        let u: f64 = self.rng.gen::<f64>();
        let seconds = -(1.0 - u).ln() / self.config.stall_rate;
        from.saturating_add(SimTime::from_secs_f64(seconds.min(1e9)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::PathId;
    use crate::packet::{CustomHeader, Header};
    use crate::rng::RngStreams;
    use crate::transport::outbox::Capture;

    fn packet(size: u32) -> Transmit {
        Transmit {
            path: PathId(0),
            direction: Direction::Forward,
            size_bytes: size,
            header: Header::Custom(CustomHeader { words: [0; 4] }),
        }
    }

    fn noise(config: HostNoiseConfig, seed: u64) -> HostNoise {
        HostNoise::new(config, RngStreams::new(seed).stream("test"))
    }

    fn us(v: u64) -> SimTime {
        SimTime::from_micros(v)
    }

    /// Where a packet sent through the noise went: at once, or held until a time.
    fn send(n: &mut HostNoise, c: &mut Capture, now: SimTime, x: Transmit) -> Option<SimTime> {
        c.with(|out| n.send(now, x, out));
        let (at_once, later) = (c.take_transmits(), c.take_later());
        assert_eq!(at_once.len() + later.len(), 1, "the packet is sent once");
        assert!(at_once.iter().all(|y| *y == x) && later.iter().all(|(_, y)| *y == x));
        later.first().map(|&(at, _)| at)
    }

    /// Release times of packets emitted by end 0 at `times` (non-decreasing), each the
    /// instant of its emission when sent at once.
    fn releases(n: &mut HostNoise, times: &[SimTime]) -> Vec<SimTime> {
        let mut c = Capture::new(1);
        let out: Vec<SimTime> = times
            .iter()
            .enumerate()
            .map(|(i, &t)| send(n, &mut c, t, packet(i as u32 + 1)).unwrap_or(t))
            .collect();
        assert!(out.windows(2).all(|w| w[0] <= w[1]), "emission order kept");
        out
    }

    #[test]
    fn jitter_stays_within_its_bound_and_keeps_order() {
        let config = HostNoiseConfig {
            jitter: us(5),
            ..HostNoiseConfig::default()
        };
        let mut n = noise(config, 1);
        // Packets emitted 1 us apart: jitter of up to 5 us would reorder them; FIFO does not.
        let times: Vec<SimTime> = (0..1000).map(us).collect();
        let out = releases(&mut n, &times);
        assert!(out.windows(2).all(|w| w[0] <= w[1]));
        for (r, t) in out.iter().zip(&times) {
            assert!(*r >= *t && *r <= *t + us(5) + us(5), "{r:?} for {t:?}");
        }
        // Spread: the delays are not all equal.
        let delays: std::collections::BTreeSet<u64> = out
            .iter()
            .zip(&times)
            .map(|(r, t)| (*r - *t).as_nanos())
            .collect();
        assert!(delays.len() > 100);
    }

    #[test]
    fn widely_spaced_packets_get_independent_uniform_delays() {
        let config = HostNoiseConfig {
            jitter: us(10),
            ..HostNoiseConfig::default()
        };
        let mut n = noise(config, 7);
        let times: Vec<SimTime> = (0..20_000).map(|i| us(100 * i)).collect();
        let out = releases(&mut n, &times);
        let mean = out
            .iter()
            .zip(&times)
            .map(|(r, t)| (*r - *t).as_nanos() as f64)
            .sum::<f64>()
            / times.len() as f64;
        // Uniform on [0, 10 us]: mean 5 us, standard error about 20 ns here.
        assert!((mean - 5_000.0).abs() < 100.0, "{mean}");
    }

    #[test]
    fn stalls_hold_packets_until_they_end() {
        let config = HostNoiseConfig {
            send_jitter: SimTime::ZERO,
            jitter: SimTime::ZERO,
            stall_rate: 100.0,
            stall_duration: SimTime::from_millis(1),
        };
        let mut n = noise(config, 3);
        // One packet every 10 us for 10 s: about 1000 stalls of 1 ms, 10 % of the time.
        let times: Vec<SimTime> = (0..1_000_000).map(|i| us(10 * i)).collect();
        let out = releases(&mut n, &times);
        let held = out.iter().zip(&times).filter(|(r, t)| r > t).count();
        let share = held as f64 / times.len() as f64;
        // A stall of 1 ms every 10 ms on average (the gap is drawn after each stall ends):
        // about 1/11 of the packets wait.
        assert!((share - 1.0 / 11.0).abs() < 0.01, "{share}");
        assert!(out
            .iter()
            .zip(&times)
            .all(|(r, t)| *r - *t <= SimTime::from_millis(1)));
    }

    #[test]
    fn the_same_seed_gives_the_same_delays_and_another_seed_others() {
        let config = HostNoiseConfig {
            send_jitter: SimTime::ZERO,
            jitter: us(5),
            stall_rate: 10.0,
            stall_duration: us(200),
        };
        let times: Vec<SimTime> = (0..5000).map(|i| us(50 * i)).collect();
        let a = releases(&mut noise(config, 1), &times);
        let b = releases(&mut noise(config, 1), &times);
        let c = releases(&mut noise(config, 2), &times);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn the_two_ends_are_independent() {
        let config = HostNoiseConfig {
            jitter: us(5),
            ..HostNoiseConfig::default()
        };
        let mut n = noise(config, 5);
        let mut c = Capture::new(1);
        let back = |size| Transmit {
            direction: Direction::Reverse,
            ..packet(size)
        };
        // End 0 is busy until its first packet's release; end 1's packets do not wait for it.
        let first = send(&mut n, &mut c, us(0), packet(1)).expect("delayed");
        assert!(first <= us(5));
        let second = send(&mut n, &mut c, us(0), back(2)).unwrap_or(us(0));
        assert!(second <= us(5));
        let third = send(&mut n, &mut c, us(0), packet(3)).expect("after the first");
        assert!(third >= first);
    }

    #[test]
    fn a_packet_due_when_one_held_is_due_waits_for_it() {
        // Without jitter a packet is due at once, but one emitted at the instant the end's
        // held packet leaves goes after it (the driver releases both at that instant, in the
        // order they were sent), not before it.
        let config = HostNoiseConfig {
            send_jitter: SimTime::ZERO,
            jitter: SimTime::ZERO,
            stall_rate: 1e6,
            stall_duration: us(10),
        };
        let mut n = noise(config, 9);
        let mut c = Capture::new(1);
        let mut t = us(0);
        let mut waited = false;
        for i in 0..200 {
            match send(&mut n, &mut c, t, packet(i + 1)) {
                Some(at) => {
                    // The next packet is emitted exactly when this one leaves.
                    assert!(at > t);
                    t = at;
                    let again = send(&mut n, &mut c, t, packet(1000 + i))
                        .expect("held behind the packet due now");
                    assert!(again >= t);
                    t = again + us(1);
                    waited = true;
                }
                None => t += us(1),
            }
        }
        assert!(waited, "some packet fell in a stall");
    }

    #[test]
    fn a_delay_is_the_draw_gen_range_makes() {
        // The precomputed draw must give what `gen_range(0..=max)` gives, draw for draw, and
        // leave the stream where it leaves it (rejections included): seeded runs depend on it.
        let maxes = [
            0,
            1,
            2,
            3,
            7,
            1_000,
            12_000,
            120_001,
            (1 << 33) + 7,
            u64::MAX / 3,
            (u64::MAX / 2) + 1,
            u64::MAX - 1,
            u64::MAX,
        ];
        for (i, &max) in maxes.iter().enumerate() {
            let streams = RngStreams::new(i as u64);
            let (mut a, mut b) = (streams.stream("d"), streams.stream("d"));
            let delay = UniformDelay::new(max);
            for _ in 0..20_000 {
                let expected = if max > 0 { a.gen_range(0..=max) } else { 0 };
                assert_eq!(delay.sample(&mut b), expected, "max {max}");
            }
            assert_eq!(
                a.next_u64(),
                b.next_u64(),
                "max {max}: the streams moved alike"
            );
        }
    }

    #[test]
    fn off_means_no_delay_and_no_draw() {
        assert!(!HostNoiseConfig::default().is_on());
        let mut n = noise(HostNoiseConfig::default(), 1);
        let mut c = Capture::new(1);
        assert_eq!(send(&mut n, &mut c, us(3), packet(1)), None);
    }
}
