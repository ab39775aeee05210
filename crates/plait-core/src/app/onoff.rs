//! On/off datagram source: sends at `rate` during "on" periods and is silent during "off"
//! periods, the period lengths drawn from exponential or Pareto distributions (ns-2's
//! Exponential and Pareto traffic generators; Pareto periods give heavy-tailed, web-like
//! background traffic). A Pareto period with mean m and shape a > 1 has scale m (a - 1) / a.
//! The source starts in an "on" period.

use rand_distr::{Distribution, Exp, Pareto};

use super::{Datagrams, Wake};
/// The distribution of a period's length: a parameter's value, so the registry's.
pub use crate::registry::Period;
use crate::rng::SimRng;
use crate::time::{Rate, SimTime};

/// A period's length drawn from its distribution.
fn draw(period: &Period, rng: &mut SimRng) -> SimTime {
    let secs = match *period {
        Period::Exponential { mean } => {
            let m = mean.as_secs_f64();
            if m <= 0.0 {
                0.0
            } else {
                Exp::new(1.0 / m).map(|d| d.sample(rng)).unwrap_or(0.0)
            }
        }
        Period::Pareto { mean, shape } => {
            let scale = mean.as_secs_f64() * (shape - 1.0) / shape;
            Pareto::new(scale, shape)
                .map(|d| d.sample(rng))
                .unwrap_or(0.0)
        }
    };
    SimTime::from_secs_f64(secs)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Idle,
    On { until: SimTime },
    Off { until: SimTime },
}

#[derive(Clone, Debug)]
pub struct OnOff {
    pub rate: Rate,
    pub packet_bytes: u32,
    pub on: Period,
    pub off: Period,
    rng: SimRng,
    state: State,
    carry: u64,
}

impl OnOff {
    pub fn new(rate: Rate, packet_bytes: u32, on: Period, off: Period, rng: SimRng) -> Self {
        OnOff {
            rate,
            packet_bytes,
            on,
            off,
            rng,
            state: State::Idle,
            carry: 0,
        }
    }

    fn begin_on(&mut self, now: SimTime) -> Wake {
        let until = now.saturating_add(draw(&self.on, &mut self.rng));
        self.state = State::On { until };
        self.send_in_on(now, until)
    }

    fn send_in_on(&mut self, now: SimTime, until: SimTime) -> Wake {
        if now >= until {
            let off_until = now.saturating_add(draw(&self.off, &mut self.rng));
            self.state = State::Off { until: off_until };
            return Wake {
                send: false,
                next: off_until,
            };
        }
        let gap = self
            .rate
            .tx_time_carry(self.packet_bytes as u64, &mut self.carry);
        Wake {
            send: true,
            next: now.saturating_add(gap).min(until),
        }
    }
}

impl Datagrams for OnOff {
    fn packet_bytes(&self) -> u32 {
        self.packet_bytes
    }

    fn wake(&mut self, now: SimTime) -> Wake {
        match self.state {
            State::Idle | State::Off { .. } => self.begin_on(now),
            State::On { until } => self.send_in_on(now, until),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::rng_from_seed;

    fn run(mut s: OnOff, horizon: SimTime) -> u64 {
        let mut t = SimTime::ZERO;
        let mut sent = 0;
        while t < horizon {
            let w = s.wake(t);
            sent += w.send as u64;
            assert!(w.next >= t);
            t = if w.next == t { t + SimTime(1) } else { w.next };
        }
        sent
    }

    #[test]
    fn exponential_duty_cycle_halves_rate() {
        // 1 Mb/s, 1000 B -> 125 packets/s when on; on and off equal means -> about 62.5/s.
        let ms = SimTime::from_millis(100);
        let s = OnOff::new(
            Rate(1_000_000),
            1000,
            Period::Exponential { mean: ms },
            Period::Exponential { mean: ms },
            rng_from_seed(3),
        );
        let sent = run(s, SimTime::from_secs(400)) as f64 / 400.0;
        assert!((sent - 62.5).abs() < 3.0, "rate {sent} packets/s");
    }

    #[test]
    fn pareto_mean_matches() {
        let mut rng = rng_from_seed(9);
        let p = Period::Pareto {
            mean: SimTime::from_millis(200),
            shape: 2.5,
        };
        let n = 200_000;
        let mean: f64 = (0..n)
            .map(|_| draw(&p, &mut rng).as_secs_f64())
            .sum::<f64>()
            / n as f64;
        assert!((mean - 0.2).abs() < 0.01, "mean {mean}");
    }
}
