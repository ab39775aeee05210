//! The per-subflow forwarding shared by the built-in coupled controllers, written once.
//!
//! RFC 6356 §3 couples only the congestion-avoidance increase: "the slow start, fast
//! retransmit, and fast recovery algorithms, as well as the [retransmission timeout] ... are
//! the same as in standard TCP", on each subflow. So most of
//! [`MultipathCongestionControl`] is the same for LIA, OLIA, BALIA, wVegas and MPFAST: a
//! subflow's window and ssthresh are its own, a sent segment, a loss, the end of recovery, a
//! timeout, the receive-buffer penalisation and a change of the subflow's state go to that
//! subflow alone. A controller keeps one [`SubflowState`] per subflow (a [`PathWindow`] and
//! whether the subflow is established) and implements [`CoupledAlgorithm`]: its name, its
//! subflows, the ACK (where the coupling is) and, where its algorithm says so, what it does on
//! a loss, a recovery exit or a timeout. [`MultipathCongestionControl`] follows for it here.

use super::MultipathCongestionControl;
use crate::time::SimTime;
use crate::transport::cc::window::PathWindow;
use crate::transport::cc::AckSample;

/// One subflow of a coupled controller: its window and whether it may send.
pub(crate) trait SubflowState {
    type Window: PathWindow;
    fn window(&self) -> &Self::Window;
    fn window_mut(&mut self) -> &mut Self::Window;
    /// Whether the subflow can send (started, its path not failed): it takes part in the
    /// coupled sums only then (reference `multipath_cc.md` §2.0).
    fn set_established(&mut self, established: bool);
}

/// A coupled controller as the forwarding sees it: its own algorithm, and its subflows. The
/// hooks are [`MultipathCongestionControl`]'s (named `on_subflow_*` here); those with a default
/// are standard TCP on the subflow alone, to be overridden by an algorithm that couples them.
pub(crate) trait CoupledAlgorithm {
    /// Registry name (`lia`, `olia`, ...).
    const NAME: &'static str;
    type Subflow: SubflowState;
    /// The subflows, in index order.
    fn subflow_states(&self) -> &[Self::Subflow];
    fn subflow_states_mut(&mut self) -> &mut [Self::Subflow];

    /// An ACK on `subflow` ([`MultipathCongestionControl::on_ack`]): the coupled increase.
    fn on_subflow_ack(&mut self, subflow: usize, sample: &AckSample);

    /// Loss on `subflow` detected by duplicate ACKs or SACK; by default Reno's reduction of
    /// that subflow alone, `ssthresh = cwnd = max(FlightSize/2, 2·SMSS)` (RFC 5681 eq. (4)).
    fn on_subflow_loss(&mut self, subflow: usize, _now: SimTime, bytes_in_flight: u64) {
        self.subflow_states_mut()[subflow]
            .window_mut()
            .on_congestion_event(bytes_in_flight);
    }

    /// Loss recovery on `subflow` ended; by default the subflow's window is told.
    fn on_subflow_recovery_exit(&mut self, subflow: usize, _now: SimTime) {
        self.subflow_states_mut()[subflow]
            .window_mut()
            .on_recovery_exit();
    }

    /// The retransmission timer of `subflow` fired; by default RFC 5681 §3.1 on that subflow
    /// alone.
    fn on_subflow_timeout(&mut self, subflow: usize, _now: SimTime, bytes_in_flight: u64) {
        self.subflow_states_mut()[subflow]
            .window_mut()
            .on_retransmission_timeout(bytes_in_flight);
    }
}

impl<A: CoupledAlgorithm> MultipathCongestionControl for A {
    fn name(&self) -> &'static str {
        A::NAME
    }

    fn subflows(&self) -> usize {
        self.subflow_states().len()
    }

    #[inline]
    fn cwnd(&self, subflow: usize) -> u64 {
        self.subflow_states()[subflow].window().cwnd()
    }

    #[inline]
    fn ssthresh(&self, subflow: usize) -> u64 {
        self.subflow_states()[subflow].window().ssthresh()
    }

    #[inline]
    fn on_packet_sent(&mut self, subflow: usize, _now: SimTime, bytes: u32, _in_flight: u64) {
        self.subflow_states_mut()[subflow]
            .window_mut()
            .on_packet_sent(bytes);
    }

    #[inline]
    fn on_ack(&mut self, subflow: usize, sample: &AckSample) {
        self.on_subflow_ack(subflow, sample);
    }

    fn on_congestion_event(&mut self, subflow: usize, now: SimTime, bytes_in_flight: u64) {
        self.on_subflow_loss(subflow, now, bytes_in_flight);
    }

    fn on_recovery_exit(&mut self, subflow: usize, now: SimTime) {
        self.on_subflow_recovery_exit(subflow, now);
    }

    fn on_retransmission_timeout(&mut self, subflow: usize, now: SimTime, bytes_in_flight: u64) {
        self.on_subflow_timeout(subflow, now, bytes_in_flight);
    }

    fn set_established(&mut self, subflow: usize, established: bool) {
        self.subflow_states_mut()[subflow].set_established(established);
    }

    fn penalise(&mut self, subflow: usize) {
        self.subflow_states_mut()[subflow].window_mut().penalise();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A window that records what it is told, each field set to a value that tells which call
    /// set it.
    #[derive(Clone, Debug, Default, PartialEq)]
    struct Recorder {
        cwnd: u64,
        ssthresh: u64,
        sent: u32,
        calls: Vec<&'static str>,
        established: bool,
    }

    impl PathWindow for Recorder {
        fn cwnd(&self) -> u64 {
            self.cwnd
        }
        fn ssthresh(&self) -> u64 {
            self.ssthresh
        }
        fn on_packet_sent(&mut self, bytes: u32) {
            self.sent += bytes;
        }
        fn on_congestion_event(&mut self, bytes_in_flight: u64) {
            self.calls.push("loss");
            self.cwnd = bytes_in_flight;
        }
        fn on_recovery_exit(&mut self) {
            self.calls.push("recovery_exit");
        }
        fn on_retransmission_timeout(&mut self, bytes_in_flight: u64) {
            self.calls.push("timeout");
            self.ssthresh = bytes_in_flight;
        }
        fn penalise(&mut self) {
            self.calls.push("penalise");
        }
    }

    impl SubflowState for Recorder {
        type Window = Recorder;
        fn window(&self) -> &Recorder {
            self
        }
        fn window_mut(&mut self) -> &mut Recorder {
            self
        }
        fn set_established(&mut self, established: bool) {
            self.established = established;
        }
    }

    /// An algorithm that only counts ACKs and keeps every default.
    struct Toy {
        subflows: Vec<Recorder>,
        acks: Vec<(usize, u64)>,
    }

    impl CoupledAlgorithm for Toy {
        const NAME: &'static str = "toy";
        type Subflow = Recorder;
        fn subflow_states(&self) -> &[Recorder] {
            &self.subflows
        }
        fn subflow_states_mut(&mut self) -> &mut [Recorder] {
            &mut self.subflows
        }
        fn on_subflow_ack(&mut self, subflow: usize, sample: &AckSample) {
            self.acks.push((subflow, sample.acked_bytes));
        }
    }

    /// An algorithm that overrides the loss and the timeout, leaving the windows alone.
    struct Overriding {
        inner: Toy,
        losses: usize,
    }

    impl CoupledAlgorithm for Overriding {
        const NAME: &'static str = "overriding";
        type Subflow = Recorder;
        fn subflow_states(&self) -> &[Recorder] {
            &self.inner.subflows
        }
        fn subflow_states_mut(&mut self) -> &mut [Recorder] {
            &mut self.inner.subflows
        }
        fn on_subflow_ack(&mut self, _subflow: usize, _sample: &AckSample) {}
        fn on_subflow_loss(&mut self, _subflow: usize, _now: SimTime, _bytes_in_flight: u64) {
            self.losses += 1;
        }
        fn on_subflow_timeout(&mut self, _subflow: usize, _now: SimTime, _bytes_in_flight: u64) {
            self.losses += 1;
        }
    }

    fn toy(subflows: usize) -> Toy {
        Toy {
            subflows: (0..subflows)
                .map(|i| Recorder {
                    cwnd: 1000 * (i as u64 + 1),
                    ssthresh: 10_000 * (i as u64 + 1),
                    ..Recorder::default()
                })
                .collect(),
            acks: Vec::new(),
        }
    }

    #[test]
    fn every_hook_reaches_the_named_subflow_alone() {
        let mut cc = toy(3);
        let untouched = cc.subflows.clone();
        assert_eq!((cc.name(), cc.subflows()), ("toy", 3));
        assert_eq!((cc.cwnd(1), cc.ssthresh(1)), (2000, 20_000));
        assert_eq!((cc.cwnd(2), cc.ssthresh(2)), (3000, 30_000));

        let now = SimTime::from_millis(1);
        cc.on_packet_sent(1, now, 1500, 0);
        cc.on_packet_sent(1, now, 500, 0);
        cc.set_established(1, true);
        cc.on_congestion_event(1, now, 7_000);
        cc.on_recovery_exit(1, now);
        cc.on_retransmission_timeout(1, now, 9_000);
        cc.penalise(1);
        let sample = crate::transport::cc::testing::ack(now, 1234, now, 1000);
        cc.on_ack(1, &sample);

        let s = &cc.subflows[1];
        assert_eq!(s.sent, 2000);
        assert!(s.established);
        assert_eq!(
            s.calls,
            ["loss", "recovery_exit", "timeout", "penalise"].to_vec()
        );
        assert_eq!((cc.cwnd(1), cc.ssthresh(1)), (7_000, 9_000));
        assert_eq!(cc.acks, vec![(1, 1234)]);
        // The other subflows saw nothing.
        assert_eq!(cc.subflows[0], untouched[0]);
        assert_eq!(cc.subflows[2], untouched[2]);
        cc.set_established(1, false);
        assert!(!cc.subflows[1].established);
    }

    #[test]
    fn an_algorithm_that_overrides_a_hook_is_not_forwarded_it() {
        let mut cc = Overriding {
            inner: toy(2),
            losses: 0,
        };
        let before = cc.inner.subflows.clone();
        cc.on_congestion_event(0, SimTime::ZERO, 1);
        cc.on_retransmission_timeout(1, SimTime::ZERO, 1);
        assert_eq!(cc.losses, 2);
        assert_eq!(cc.inner.subflows, before);
        // What it does not override still is.
        cc.on_recovery_exit(0, SimTime::ZERO);
        assert_eq!(cc.inner.subflows[0].calls, vec!["recovery_exit"]);
        assert_eq!(cc.name(), "overriding");
    }
}
