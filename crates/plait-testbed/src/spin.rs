//! How much of its CPU the emulator may spend spinning.
//!
//! A timed sleep on a virtual machine ends 30-70 us late (measured, docs/testbed.md), more
//! than a tenth of a packet's transmission time at 20 Mb/s (60 us). So the emulator spins for
//! the last stretch before a departure. At high packet rates that would be all the time: a
//! SCHED_FIFO task that never sleeps is throttled by the kernel (sched_rt_runtime_us, 50 ms
//! in every second by default), stalls everything for 50 ms, and starves the receiver beside
//! it. Even short of that, a spinning SCHED_FIFO task keeps the softirq work of the packets it
//! writes into the TUN devices (left to ksoftirqd, a normal task) waiting on its CPU: one TCP
//! flow through a 500 Mb/s link reached 30 Mb/s while the emulator spun up to half of every
//! 10 ms, 483 Mb/s with half of every 1 ms. The budget caps spinning at a share of each short
//! window; past it the emulator sleeps, and whatever waited for the CPU runs.

#![forbid(unsafe_code)]

/// A spin budget: at most `share` of every `window_ns` spent spinning.
#[derive(Clone, Debug)]
pub struct SpinBudget {
    window_ns: u64,
    allowed_ns: u64,
    window_start: u64,
    spun_ns: u64,
}

impl SpinBudget {
    pub fn new(window_ns: u64, share: f64) -> Self {
        SpinBudget {
            window_ns: window_ns.max(1),
            allowed_ns: (window_ns as f64 * share.clamp(0.0, 1.0)) as u64,
            window_start: 0,
            spun_ns: 0,
        }
    }

    fn roll(&mut self, now: u64) {
        if now >= self.window_start + self.window_ns {
            self.window_start = now - (now - self.window_start) % self.window_ns;
            self.spun_ns = 0;
        }
    }

    /// Whether the emulator may spin at `now`.
    pub fn may_spin(&mut self, now: u64) -> bool {
        self.roll(now);
        self.spun_ns < self.allowed_ns
    }

    /// Records `ns` spent spinning, ending at `now`.
    pub fn record(&mut self, now: u64, ns: u64) {
        self.roll(now);
        self.spun_ns += ns;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spinning_is_capped_per_window_and_the_window_rolls() {
        // Half of every 10 ms.
        let mut b = SpinBudget::new(10_000_000, 0.5);
        assert!(b.may_spin(0));
        b.record(4_000_000, 4_000_000);
        assert!(b.may_spin(4_000_000));
        b.record(5_000_000, 1_000_000);
        assert!(!b.may_spin(5_000_000));
        assert!(!b.may_spin(9_999_999));
        // A new window: the budget is back.
        assert!(b.may_spin(10_000_000));
        b.record(25_000_000, 6_000_000);
        assert!(!b.may_spin(29_000_000));
        assert!(b.may_spin(30_000_001));
    }
}
