//! The sender's SACK scoreboard (RFC 6675 §2–§4) and the byte-range set it is built on.
//!
//! The scoreboard remembers which bytes above the cumulative acknowledgement point (`HighACK`,
//! our `snd_una`) the receiver has reported in SACK blocks (RFC 2018). It is kept as sorted,
//! disjoint, non-adjacent half-open ranges `[start, end)` in a [`RangeSet`], never as one entry
//! per segment, so that the common case (no loss: the set is empty) costs nothing and a loss
//! episode costs work proportional to the number of holes, not to the window.
//!
//! Routines of RFC 6675 §4 provided here:
//!
//! - `Update()`: [`Scoreboard::update`] drops what the cumulative ACK covers and records the
//!   blocks, reporting how many bytes were SACKed for the first time;
//! - `IsLost(SeqNum)`: [`Scoreboard::is_lost`], "true when either DupThresh discontiguous SACKed
//!   sequences have arrived above 'SeqNum' or more than (DupThresh - 1) * SMSS bytes with
//!   sequence numbers greater than 'SeqNum' have been SACKed". The scoreboard holds byte ranges,
//!   not segments, so "discontiguous SACKed sequences" is read as disjoint SACKed ranges; with
//!   full-sized segments the byte clause already fires once DupThresh segments are SACKed above.
//!   IsLost is monotone (if S is lost, so is every un-SACKed octet below S), so
//!   [`Scoreboard::lost_boundary`] finds, by walking at most DupThresh ranges down from the top,
//!   the octet below which every un-SACKed octet is lost. `SetPipe()` and `NextSeg()` live in
//!   `recovery` and use it.
//!
//! [`RangeSet`] is also the receiver's out-of-order queue.

use crate::fifo::Fifo;

/// Sorted, disjoint, non-adjacent half-open byte ranges with a running byte total.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct RangeSet {
    /// In one contiguous slice, so that searches need no wrap-around arithmetic.
    ranges: Fifo<(u64, u64)>,
    total: u64,
}

/// The ranges and their total, not how the queue holding them is laid out (as `PartialEq`).
impl std::fmt::Debug for RangeSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RangeSet")
            .field("ranges", &self.ranges.as_slice())
            .field("total", &self.total)
            .finish()
    }
}

impl RangeSet {
    pub fn new() -> Self {
        RangeSet {
            ranges: Fifo::with_capacity(8),
            total: 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Number of disjoint ranges.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// Bytes covered.
    pub fn total_bytes(&self) -> u64 {
        self.total
    }

    /// Ranges in increasing order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (u64, u64)> + ExactSizeIterator + '_ {
        self.ranges.as_slice().iter().copied()
    }

    pub fn first(&self) -> Option<(u64, u64)> {
        self.ranges.as_slice().first().copied()
    }

    pub fn last(&self) -> Option<(u64, u64)> {
        self.ranges.as_slice().last().copied()
    }

    pub fn clear(&mut self) {
        self.ranges.clear();
        self.total = 0;
    }

    /// Adds `[start, end)`, merging with ranges it overlaps or touches. Returns the bytes that
    /// were not covered before and the merged range now holding `[start, end)`. The common
    /// case (at or above the highest range) is inline, the rest apart.
    #[inline(always)]
    pub fn insert(&mut self, start: u64, end: u64) -> (u64, (u64, u64)) {
        if start >= end {
            return (0, (start, start));
        }
        // The common case, a range at or above the highest one: only that one can be touched
        // (the ones below end before its start, and are not adjacent to it).
        match self.ranges.as_mut_slice().last_mut() {
            None => {
                self.ranges.push_back((start, end));
                self.total += end - start;
                return (end - start, (start, end));
            }
            Some(&mut (_, e)) if start > e => {
                self.ranges.push_back((start, end));
                self.total += end - start;
                return (end - start, (start, end));
            }
            Some(last) if start >= last.0 => {
                let newly = end.saturating_sub(last.1);
                last.1 = last.1.max(end);
                self.total += newly;
                return (newly, *last);
            }
            Some(_) => {}
        }
        self.insert_below_top(start, end)
    }

    /// [`RangeSet::insert`] of a non-empty range starting below the highest range.
    #[inline(never)]
    fn insert_below_top(&mut self, start: u64, end: u64) -> (u64, (u64, u64)) {
        // First range that overlaps or touches [start, end): its end is at least `start`.
        let first = self.ranges.as_slice().partition_point(|&(_, e)| e < start);
        let mut merged_start = start;
        let mut merged_end = end;
        let mut already_covered = 0;
        let mut last = first;
        while let Some(&(s, e)) = self.ranges.as_slice().get(last) {
            if s > end {
                break;
            }
            already_covered += e.min(end).saturating_sub(s.max(start));
            merged_start = merged_start.min(s);
            merged_end = merged_end.max(e);
            last += 1;
        }
        let newly = (end - start) - already_covered;
        match last - first {
            0 => self.ranges.insert(first, (merged_start, merged_end)),
            n => {
                self.ranges.as_mut_slice()[first] = (merged_start, merged_end);
                if n > 1 {
                    self.ranges.remove_range(first + 1, last);
                }
            }
        }
        self.total += newly;
        (newly, (merged_start, merged_end))
    }

    /// Forgets every byte below `seq`; returns how many bytes were forgotten.
    pub fn remove_below(&mut self, seq: u64) -> u64 {
        let mut removed = 0;
        while let Some(&(s, e)) = self.ranges.as_slice().first() {
            if e <= seq {
                removed += e - s;
                self.ranges.drop_front();
            } else {
                if s < seq {
                    removed += seq - s;
                    self.ranges.as_mut_slice()[0].0 = seq;
                }
                break;
            }
        }
        self.total -= removed;
        removed
    }

    /// Removes and returns the first range if it starts at or below `seq`.
    pub fn pop_first_if_starts_by(&mut self, seq: u64) -> Option<(u64, u64)> {
        match self.ranges.as_slice().first() {
            Some(&(s, e)) if s <= seq => {
                self.ranges.drop_front();
                self.total -= e - s;
                Some((s, e))
            }
            _ => None,
        }
    }

    /// Index of the first range ending after `seq`.
    fn index_after(&self, seq: u64) -> usize {
        self.ranges.as_slice().partition_point(|&(_, e)| e <= seq)
    }

    pub fn contains(&self, seq: u64) -> bool {
        self.range_containing(seq).is_some()
    }

    /// The range holding `seq`, if any.
    pub fn range_containing(&self, seq: u64) -> Option<(u64, u64)> {
        match self.ranges.as_slice().get(self.index_after(seq)) {
            Some(&(s, e)) if s <= seq => Some((s, e)),
            _ => None,
        }
    }

    /// Smallest byte at or above `seq` that is not covered.
    pub fn next_uncovered(&self, seq: u64) -> u64 {
        self.range_containing(seq).map_or(seq, |(_, e)| e)
    }

    /// Start of the first range that begins above `seq`.
    pub fn next_start_after(&self, seq: u64) -> Option<u64> {
        let ranges = self.ranges.as_slice();
        let i = ranges.partition_point(|&(s, _)| s <= seq);
        ranges.get(i).map(|&(s, _)| s)
    }

    /// End of the last range lying wholly at or below `seq` (the start of the gap that holds
    /// `seq` when `seq` is not covered).
    pub fn previous_end(&self, seq: u64) -> Option<u64> {
        let ranges = self.ranges.as_slice();
        let i = ranges.partition_point(|&(_, e)| e <= seq);
        i.checked_sub(1).map(|i| ranges[i].1)
    }

    /// Bytes covered inside `[start, end)`.
    pub fn covered_between(&self, start: u64, end: u64) -> u64 {
        if start >= end {
            return 0;
        }
        let mut covered = 0;
        for &(s, e) in &self.ranges.as_slice()[self.index_after(start)..] {
            if s >= end {
                break;
            }
            covered += e.min(end) - s.max(start);
        }
        covered
    }
}

/// RFC 6675 scoreboard: SACKed ranges above `HighACK` (the cumulative ACK point).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scoreboard {
    sacked: RangeSet,
    high_ack: u64,
}

impl Scoreboard {
    pub fn new() -> Self {
        Scoreboard {
            sacked: RangeSet::new(),
            high_ack: 0,
        }
    }

    /// RFC 6675 `Update()`: moves `HighACK` to `cumulative_ack` (forgetting SACK state below
    /// it) and records `blocks`, clipped to `(HighACK, high_data]` since a receiver cannot SACK
    /// data that was never sent. Returns the bytes SACKed for the first time.
    #[inline(always)]
    pub fn update(&mut self, cumulative_ack: u64, high_data: u64, blocks: &[(u64, u64)]) -> u64 {
        self.advance(cumulative_ack);
        let mut newly = 0;
        for &(start, end) in blocks {
            let start = start.max(self.high_ack);
            let end = end.min(high_data);
            if start < end {
                newly += self.sacked.insert(start, end).0;
            }
        }
        newly
    }

    /// Moves the cumulative ACK point forward, dropping SACK state it covers.
    pub fn advance(&mut self, cumulative_ack: u64) {
        if cumulative_ack > self.high_ack {
            self.high_ack = cumulative_ack;
            if !self.sacked.is_empty() {
                self.sacked.remove_below(cumulative_ack);
            }
        }
    }

    /// `HighACK` as last given to [`Scoreboard::update`] (first byte not cumulatively ACKed).
    pub fn high_ack(&self) -> u64 {
        self.high_ack
    }

    pub fn is_empty(&self) -> bool {
        self.sacked.is_empty()
    }

    /// The SACKed ranges, in increasing order.
    pub fn ranges(&self) -> &RangeSet {
        &self.sacked
    }

    /// Bytes SACKed above `HighACK`.
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked.total_bytes()
    }

    /// End (exclusive) of the highest SACKed range: one past "the highest octet covered by any
    /// received SACK".
    pub fn highest_sacked(&self) -> Option<u64> {
        self.sacked.last().map(|(_, e)| e)
    }

    pub fn is_sacked(&self, seq: u64) -> bool {
        self.sacked.contains(seq)
    }

    /// Smallest un-SACKed octet at or above `seq`.
    pub fn next_unsacked(&self, seq: u64) -> u64 {
        self.sacked.next_uncovered(seq)
    }

    /// Start of the first SACKed range above `seq` (the end of the hole holding `seq`).
    pub fn next_sacked_start(&self, seq: u64) -> Option<u64> {
        self.sacked.next_start_after(seq)
    }

    /// SACKed bytes in `[start, end)`.
    pub fn sacked_between(&self, start: u64, end: u64) -> u64 {
        self.sacked.covered_between(start, end)
    }

    /// RFC 6675 `IsLost(seq)` for an octet `seq`; false for SACKed octets.
    pub fn is_lost(&self, seq: u64, dupack_threshold: u32, mss: u32) -> bool {
        let index = self.sacked.index_after(seq);
        let above = self.sacked.ranges.as_slice();
        match above.get(index) {
            None => false,
            Some(&(s, _)) if s <= seq => false,
            Some(_) => {
                let count = above.len() - index;
                if count >= dupack_threshold as usize {
                    return true;
                }
                // Fewer than DupThresh ranges: summing them is bounded by DupThresh.
                let bytes: u64 = above[index..].iter().map(|&(s, e)| e - s).sum();
                bytes > lost_bytes_threshold(dupack_threshold, mss)
            }
        }
    }

    /// The octet `L` such that every un-SACKed octet in `[high_ack, L)` satisfies `IsLost` and
    /// none at or above `L` does (`L = high_ack` when nothing is lost).
    ///
    /// IsLost is constant inside a hole (the SACKed data above every octet of a hole is the
    /// same) and holds for a hole whenever it holds for any hole above it, so it suffices to walk
    /// down from the highest SACKed range until the ranges seen so far make the hole below them
    /// lost: at most DupThresh steps.
    pub fn lost_boundary(&self, dupack_threshold: u32, mss: u32) -> u64 {
        self.lost_boundary_and_sacked_from(dupack_threshold, mss).0
    }

    /// [`Scoreboard::lost_boundary`], and the bytes of the ranges starting at or above its
    /// range (those its walk down from the top passed; all of them when it found no lost
    /// hole).
    #[inline]
    pub fn lost_boundary_and_sacked_from(&self, dupack_threshold: u32, mss: u32) -> (u64, u64) {
        let limit = lost_bytes_threshold(dupack_threshold, mss);
        let mut bytes = 0;
        for (count, (s, e)) in self.sacked.iter().rev().enumerate() {
            bytes += e - s;
            if count + 1 >= dupack_threshold as usize || bytes > limit {
                // The hole just below this range is lost, and so is everything below it.
                return (s.max(self.high_ack), bytes);
            }
        }
        (self.high_ack, bytes)
    }

    /// Forgets all SACK state (keeps `HighACK`).
    pub fn clear(&mut self) {
        self.sacked.clear();
    }
}

/// "(DupThresh - 1) * SMSS": more SACKed bytes than this above an octet make it lost.
fn lost_bytes_threshold(dupack_threshold: u32, mss: u32) -> u64 {
    dupack_threshold.saturating_sub(1) as u64 * mss as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(set: &RangeSet) -> Vec<(u64, u64)> {
        set.iter().collect()
    }

    proptest::proptest! {
        /// Against a byte map: the ranges, the total, what each insertion newly covers and
        /// the merged range it lies in (the fast path at the top and the general one agree).
        #[test]
        fn removals_and_queries_match_a_byte_map(
            ops in proptest::collection::vec((0u8..3, 0u64..400, 0u64..12), 0..300)
        ) {
            // Many small ranges removed from the front: the contiguous storage drops its removed
            // head now and then, which must change nothing.
            let mut set = RangeSet::new();
            let mut bytes = [false; 413];
            for (op, at, len) in ops {
                match op {
                    0 | 1 => {
                        let (start, end) = if op == 0 { (at, at + len) } else { (at, at + 1) };
                        set.insert(start, end);
                        for b in start..end {
                            bytes[b as usize] = true;
                        }
                    }
                    _ => {
                        let removed = set.remove_below(at / 2);
                        let want = bytes[..(at / 2) as usize].iter().filter(|&&x| x).count() as u64;
                        proptest::prop_assert_eq!(removed, want);
                        for b in &mut bytes[..(at / 2) as usize] {
                            *b = false;
                        }
                    }
                }
                let covered = |b: u64| bytes.get(b as usize).copied().unwrap_or(false);
                proptest::prop_assert_eq!(set.contains(at), covered(at));
                let mut next = at;
                while covered(next) {
                    next += 1;
                }
                proptest::prop_assert_eq!(set.next_uncovered(at), next);
                let inside = (at..at + len).filter(|&b| covered(b)).count() as u64;
                proptest::prop_assert_eq!(set.covered_between(at, at + len), inside);
                let starts_above = (at + 1..413).find(|&b| covered(b) && !covered(b - 1));
                proptest::prop_assert_eq!(set.next_start_after(at), starts_above);
                proptest::prop_assert_eq!(set.total_bytes(), bytes.iter().filter(|&&x| x).count() as u64);
                proptest::prop_assert_eq!(set.first().map(|r| r.0), (0..413).find(|&b| covered(b)));
            }
        }

        #[test]
        fn insert_matches_a_byte_map(
            inserts in proptest::collection::vec((0u64..200, 0u64..40), 0..60)
        ) {
            let mut set = RangeSet::new();
            let mut bytes = [false; 241];
            for (start, len) in inserts {
                let end = start + len;
                let newly = (start..end).filter(|&b| !bytes[b as usize]).count() as u64;
                for b in start..end {
                    bytes[b as usize] = true;
                }
                let (got, merged) = set.insert(start, end);
                proptest::prop_assert_eq!(got, newly);
                if start < end {
                    let mut lo = start;
                    while lo > 0 && bytes[lo as usize - 1] {
                        lo -= 1;
                    }
                    let mut hi = end;
                    while bytes[hi as usize] {
                        hi += 1;
                    }
                    proptest::prop_assert_eq!(merged, (lo, hi));
                }
                let mut expected = Vec::new();
                let mut b = 0;
                while b < 241 {
                    if bytes[b] {
                        let s = b;
                        while b < 241 && bytes[b] {
                            b += 1;
                        }
                        expected.push((s as u64, b as u64));
                    } else {
                        b += 1;
                    }
                }
                proptest::prop_assert_eq!(ranges(&set), expected);
                proptest::prop_assert_eq!(set.total, bytes.iter().filter(|&&x| x).count() as u64);
            }
        }
    }

    #[test]
    fn insert_merges_overlapping_and_adjacent_ranges() {
        let mut set = RangeSet::new();
        assert_eq!(set.insert(10, 20), (10, (10, 20)));
        assert_eq!(set.insert(30, 40), (10, (30, 40)));
        assert_eq!(set.insert(50, 60), (10, (50, 60)));
        // Touches [10,20) on the right: merges without new overlap.
        assert_eq!(set.insert(20, 25), (5, (10, 25)));
        // Bridges [30,40) and [50,60), overlapping both by 5 bytes.
        assert_eq!(set.insert(35, 55), (10, (30, 60)));
        assert_eq!(ranges(&set), vec![(10, 25), (30, 60)]);
        assert_eq!(set.total_bytes(), 45);
        // Entirely covered: nothing new.
        assert_eq!(set.insert(31, 59), (0, (30, 60)));
        // Covers everything.
        assert_eq!(set.insert(0, 100), (55, (0, 100)));
        assert_eq!(ranges(&set), vec![(0, 100)]);
        assert_eq!(set.total_bytes(), 100);
        assert_eq!(set.insert(7, 7), (0, (7, 7)));
    }

    #[test]
    fn remove_below_trims_and_drops() {
        let mut set = RangeSet::new();
        set.insert(10, 20);
        set.insert(30, 40);
        assert_eq!(set.remove_below(15), 5);
        assert_eq!(ranges(&set), vec![(15, 20), (30, 40)]);
        assert_eq!(set.remove_below(35), 10);
        assert_eq!(ranges(&set), vec![(35, 40)]);
        assert_eq!(set.total_bytes(), 5);
        assert_eq!(set.remove_below(100), 5);
        assert!(set.is_empty());
        assert_eq!(set.total_bytes(), 0);
    }

    #[test]
    fn queries_on_ranges() {
        let mut set = RangeSet::new();
        set.insert(10, 20);
        set.insert(30, 40);
        assert!(set.contains(10) && set.contains(19) && !set.contains(20) && !set.contains(9));
        assert_eq!(set.range_containing(35), Some((30, 40)));
        assert_eq!(set.next_uncovered(5), 5);
        assert_eq!(set.next_uncovered(12), 20);
        assert_eq!(set.next_start_after(12), Some(30));
        assert_eq!(set.next_start_after(20), Some(30));
        assert_eq!(set.next_start_after(30), None);
        assert_eq!(set.covered_between(0, 100), 20);
        assert_eq!(set.covered_between(15, 35), 10);
        assert_eq!(set.covered_between(20, 30), 0);
        assert_eq!(set.previous_end(25), Some(20));
        assert_eq!(set.previous_end(20), Some(20));
        assert_eq!(set.previous_end(15), None);
        assert_eq!(set.previous_end(45), Some(40));
        assert_eq!(set.pop_first_if_starts_by(9), None);
        assert_eq!(set.pop_first_if_starts_by(10), Some((10, 20)));
        assert_eq!(set.total_bytes(), 10);
    }

    const MSS: u32 = 100;

    #[test]
    fn update_counts_only_new_bytes_and_clips() {
        let mut sb = Scoreboard::new();
        assert_eq!(sb.update(0, 1_000, &[(200, 300)]), 100);
        // Repeated block plus a new one.
        assert_eq!(sb.update(0, 1_000, &[(300, 400), (200, 300)]), 100);
        assert_eq!(sb.sacked_bytes(), 200);
        // A block beyond what was sent is clipped to HighData.
        assert_eq!(sb.update(0, 1_000, &[(900, 1_200)]), 100);
        // The cumulative ACK passes the first range: it is forgotten, not counted as SACKed.
        assert_eq!(sb.update(400, 1_000, &[(900, 1_000)]), 0);
        assert_eq!(sb.sacked_bytes(), 100);
        assert_eq!(sb.high_ack(), 400);
        // Blocks below HighACK are ignored.
        assert_eq!(sb.update(400, 1_000, &[(100, 300)]), 0);
        assert_eq!(sb.highest_sacked(), Some(1_000));
    }

    #[test]
    fn is_lost_by_bytes_and_by_ranges() {
        let mut sb = Scoreboard::new();
        // Two full segments SACKed above 0: 200 bytes is not more than 2 * SMSS.
        sb.update(0, 2_000, &[(100, 300)]);
        assert!(!sb.is_lost(0, 3, MSS));
        // A third: 300 > 200.
        sb.update(0, 2_000, &[(300, 400)]);
        assert!(sb.is_lost(0, 3, MSS));
        assert!(!sb.is_lost(150, 3, MSS), "SACKed octets are never lost");
        // Small discontiguous ranges: three of them above 0 make 0 lost whatever their size.
        let mut sb = Scoreboard::new();
        sb.update(0, 2_000, &[(100, 110), (200, 210)]);
        assert!(!sb.is_lost(0, 3, MSS));
        sb.update(0, 2_000, &[(300, 310)]);
        assert!(sb.is_lost(0, 3, MSS));
        assert!(!sb.is_lost(150, 3, MSS), "only two ranges above 150");
        assert!(!sb.is_lost(400, 3, MSS), "nothing SACKed above");
    }

    #[test]
    fn lost_boundary_matches_is_lost_for_every_octet() {
        let mut sb = Scoreboard::new();
        sb.update(
            1_000,
            5_000,
            &[
                (1_100, 1_200),
                (1_400, 1_450),
                (2_000, 2_300),
                (3_000, 3_050),
                (4_000, 4_010),
            ],
        );
        let boundary = sb.lost_boundary(3, MSS);
        for seq in 1_000..5_000 {
            if sb.is_sacked(seq) {
                continue;
            }
            assert_eq!(sb.is_lost(seq, 3, MSS), seq < boundary, "octet {seq}");
        }
        // Three ranges at the top (4000, 3000, 2000) make the hole below 2000 lost.
        assert_eq!(boundary, 2_000);
        assert_eq!(Scoreboard::new().lost_boundary(3, MSS), 0);
    }

    #[test]
    fn lost_boundary_by_bytes_in_a_single_range() {
        let mut sb = Scoreboard::new();
        sb.update(0, 10_000, &[(500, 800)]);
        assert_eq!(sb.lost_boundary(3, MSS), 500);
        let mut sb = Scoreboard::new();
        sb.update(0, 10_000, &[(500, 700)]);
        assert_eq!(sb.lost_boundary(3, MSS), 0);
    }
}
