//! A compact log-linear histogram for RTT percentiles.
//!
//! Values (ns) are bucketed by their power of two and 32 linear sub-buckets within it, so a
//! reported quantile is within 1/32 (about 3%) of a recorded value and memory stays a few KB
//! per flow. Mean, minimum and maximum are exact.

const SUB_BITS: u32 = 5;
const SUB: usize = 1 << SUB_BITS;

/// A flow's RTT samples: all of them ([`RttHistograms::flow`]) and, for a flow with several
/// paths, each path's apart (`paths`, empty for a flow with one).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RttHistograms {
    /// The samples on no path of `paths`: all of a flow with one path. A flow with several
    /// keeps each sample once, in its path's histogram, and `flow` merges them when read:
    /// the same histogram as recording every sample twice (counts, sum, minimum and maximum
    /// do not depend on how the samples are grouped), for one recording per sample.
    own: LogHistogram,
    pub paths: Vec<LogHistogram>,
    /// Samples a transport reports go straight here, not through the driver's list of
    /// events (`crate::transport::Outbox::report`): the driver sets it while recording a
    /// sample is all it would do with the event (no observer sees the order of events, and
    /// the warm-up has ended); a histogram's counts do not depend on the order of its
    /// samples.
    pub direct: bool,
}

impl RttHistograms {
    /// The histograms of a flow with `paths` paths.
    pub fn new(paths: usize) -> Self {
        RttHistograms {
            own: LogHistogram::default(),
            paths: if paths > 1 {
                vec![LogHistogram::default(); paths]
            } else {
                Vec::new()
            },
            direct: false,
        }
    }

    /// A sample of `ns` nanoseconds on the path of index `path`.
    #[inline]
    pub fn record(&mut self, path: usize, ns: u64) {
        match self.paths.get_mut(path) {
            Some(h) => h.record(ns),
            None => self.own.record(ns),
        }
    }

    /// All the flow's samples, on every path.
    pub fn flow(&self) -> std::borrow::Cow<'_, LogHistogram> {
        if self.paths.is_empty() {
            return std::borrow::Cow::Borrowed(&self.own);
        }
        let mut all = self.own.clone();
        for h in &self.paths {
            all.merge(h);
        }
        std::borrow::Cow::Owned(all)
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct LogHistogram {
    /// Counts of the buckets from `first` on: RTTs span a few octaves, so only the buckets
    /// between the smallest and largest recorded value are kept (a few hundred bytes where
    /// all buckets from 0 would take about 3 KB).
    counts: Vec<u32>,
    first: usize,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl LogHistogram {
    pub fn new() -> Self {
        LogHistogram::default()
    }

    fn bucket(v: u64) -> usize {
        if v < SUB as u64 {
            return v as usize;
        }
        let octave = 63 - v.leading_zeros(); // >= SUB_BITS
        let shift = octave - SUB_BITS;
        let sub = ((v >> shift) as usize) & (SUB - 1);
        ((octave - SUB_BITS + 1) as usize) * SUB + sub
    }

    /// Smallest value that falls in `bucket`.
    fn bucket_low(bucket: usize) -> u64 {
        if bucket < SUB {
            return bucket as u64;
        }
        let octave = (bucket / SUB) as u32 + SUB_BITS - 1;
        let sub = (bucket % SUB) as u64;
        (1u64 << octave) | (sub << (octave - SUB_BITS))
    }

    #[inline]
    pub fn record(&mut self, v: u64) {
        let b = Self::bucket(v);
        // The common case: a bucket already kept, a sample neither the smallest nor the
        // largest.
        if let Some(c) = self.counts.get_mut(b.wrapping_sub(self.first)) {
            if self.min < v && v <= self.max {
                *c = c.saturating_add(1);
                self.count += 1;
                self.sum += v as u128;
                return;
            }
        }
        self.record_slow(b, v);
    }

    /// Adds `other`'s samples: the histogram that recording them here would give (the
    /// buckets kept span the smallest and largest sample's either way).
    pub fn merge(&mut self, other: &LogHistogram) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = other.clone();
            return;
        }
        if other.first < self.first {
            let below = self.first - other.first;
            self.counts.splice(0..0, std::iter::repeat_n(0, below));
            self.first = other.first;
        }
        let end = other.first + other.counts.len() - self.first;
        if end > self.counts.len() {
            self.counts.resize(end, 0);
        }
        let offset = other.first - self.first;
        for (c, &o) in self.counts[offset..].iter_mut().zip(&other.counts) {
            *c = c.saturating_add(o);
        }
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.count += other.count;
        self.sum += other.sum;
    }

    fn record_slow(&mut self, b: usize, v: u64) {
        if self.counts.is_empty() {
            self.first = b;
        } else if b < self.first {
            let below = self.first - b;
            self.counts.splice(0..0, std::iter::repeat_n(0, below));
            self.first = b;
        }
        let i = b - self.first;
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] = self.counts[i].saturating_add(1);
        if self.count == 0 || v < self.min {
            self.min = v;
        }
        if v > self.max {
            self.max = v;
        }
        self.count += 1;
        self.sum += v as u128;
    }

    pub fn count(&self) -> u64 {
        self.count
    }
    pub fn min(&self) -> Option<u64> {
        (self.count > 0).then_some(self.min)
    }
    pub fn max(&self) -> Option<u64> {
        (self.count > 0).then_some(self.max)
    }
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }

    /// The `q`-quantile (0..=1): the midpoint of the bucket holding the sample of rank
    /// ceil(q·count), clamped to [min, max].
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            let b = self.first + i;
            seen += c as u64;
            if seen >= rank {
                let low = Self::bucket_low(b) as f64;
                let high = Self::bucket_low(b + 1) as f64;
                let mid = if b < SUB { low } else { 0.5 * (low + high) };
                return Some(mid.clamp(self.min as f64, self.max as f64));
            }
        }
        Some(self.max as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotone_and_invertible() {
        let mut last = 0;
        for v in [
            0u64,
            1,
            31,
            32,
            33,
            63,
            64,
            100,
            1_000,
            40_000_000,
            u64::MAX / 2,
        ] {
            let b = LogHistogram::bucket(v);
            assert!(b >= last);
            last = b;
            assert!(LogHistogram::bucket_low(b) <= v, "v={v}");
            assert!(LogHistogram::bucket_low(b + 1) > v, "v={v}");
        }
    }

    #[test]
    fn quantiles_within_resolution() {
        let mut h = LogHistogram::new();
        for v in 1..=10_000u64 {
            h.record(v * 1_000);
        }
        for (q, exact) in [(0.5, 5_000_000.0), (0.95, 9_500_000.0), (0.99, 9_900_000.0)] {
            let got = h.quantile(q).unwrap();
            assert!((got - exact).abs() / exact < 1.0 / 32.0, "q={q} got={got}");
        }
        assert_eq!(h.mean(), Some(5_000_500.0));
        assert_eq!(h.min(), Some(1_000));
        assert_eq!(h.max(), Some(10_000_000));
    }

    #[test]
    fn values_below_the_first_bucket_kept_extend_it() {
        let mut h = LogHistogram::new();
        for v in [50_000_000u64, 3_000_000, 120_000_000, 7] {
            h.record(v);
        }
        assert_eq!(h.quantile(0.0), Some(7.0));
        assert!((h.quantile(0.5).unwrap() - 3_000_000.0).abs() / 3e6 < 1.0 / 32.0);
        assert!((h.quantile(0.75).unwrap() - 50_000_000.0).abs() / 5e7 < 1.0 / 32.0);
        assert_eq!(h.quantile(1.0), Some(120_000_000.0));
        let mut narrow = LogHistogram::new();
        for v in 40_000_000..40_001_000u64 {
            narrow.record(v);
        }
        assert!(narrow.counts.len() <= 2, "{} buckets", narrow.counts.len());
    }

    /// Samples kept per path and merged when the flow's histogram is read give the histogram
    /// of every sample recorded in one place, field for field.
    #[test]
    fn merged_paths_are_the_histogram_of_all_samples() {
        let samples: Vec<(usize, u64)> = (0..2_000u64)
            .map(|i| {
                let v = (i * 7_919 % 1_000 + 1) * [1_000, 40_000, 3, 900_000_000][(i % 4) as usize];
                ((i % 3) as usize, v)
            })
            .collect();
        for paths in [1, 3] {
            for n in [0, 1, 5, 37, samples.len()] {
                let mut direct = LogHistogram::new();
                let mut kept = RttHistograms::new(paths);
                for &(p, v) in &samples[..n] {
                    direct.record(v);
                    kept.record(p.min(paths - 1), v);
                }
                assert_eq!(*kept.flow(), direct, "{paths} paths, {n} samples");
            }
        }
        // A sample on no path of a flow with several is still the flow's.
        let mut kept = RttHistograms::new(2);
        kept.record(0, 5_000);
        kept.record(7, 9);
        assert_eq!(kept.flow().count(), 2);
        assert_eq!(kept.flow().min(), Some(9));
    }

    #[test]
    fn empty_and_single() {
        let mut h = LogHistogram::new();
        assert_eq!(h.quantile(0.5), None);
        h.record(44_000_000);
        assert_eq!(h.quantile(0.01), Some(44_000_000.0));
        assert_eq!(h.quantile(1.0), Some(44_000_000.0));
    }
}
