//! A set of integers held as disjoint ranges that never touch, sorted: the receiver's data
//! beyond a hole (in bytes) and the sender's SACKed segments (in segment indices).
//!
//! A connection holds a handful of ranges (one per hole in its window), so the ranges sit in
//! one sorted vector: a lookup is a binary search, an insertion moves the few ranges after it.
//! A balanced tree paid an allocation per node and a pointer chase per step, on every
//! out-of-order segment and SACK block.

use std::ops::Range;

#[derive(Clone, Debug, Default)]
pub struct RangeSet {
    /// `[start, end)` ranges, sorted; `end < next start` (touching ranges are merged).
    r: Vec<(u64, u64)>,
}

impl RangeSet {
    pub fn new() -> RangeSet {
        RangeSet::default()
    }

    pub fn is_empty(&self) -> bool {
        self.r.is_empty()
    }

    pub fn clear(&mut self) {
        self.r.clear();
    }

    /// The ranges, lowest first.
    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.r
    }

    /// The lowest range.
    pub fn first(&self) -> Option<(u64, u64)> {
        self.r.first().copied()
    }

    /// The number of integers in the set.
    pub fn len(&self) -> u64 {
        self.r.iter().map(|(a, b)| b - a).sum()
    }

    /// The range holding `x`.
    pub fn containing(&self, x: u64) -> Option<(u64, u64)> {
        let i = self.r.partition_point(|&(a, _)| a <= x);
        (i > 0 && self.r[i - 1].1 > x).then(|| self.r[i - 1])
    }

    /// The positions (in `as_slice`) of the ranges that overlap or touch `[a, b]`.
    pub fn touching(&self, a: u64, b: u64) -> Range<usize> {
        let lo = self.r.partition_point(|&(_, e)| e < a);
        let hi = lo + self.r[lo..].partition_point(|&(s, _)| s <= b);
        lo..hi
    }

    /// Adds `[a, b)`, merged with the ranges it overlaps or touches; returns the merged range.
    pub fn insert(&mut self, a: u64, b: u64) -> (u64, u64) {
        let at = self.touching(a, b);
        let merged = self.r[at.clone()]
            .iter()
            .fold((a, b), |(lo, hi), &(s, e)| (lo.min(s), hi.max(e)));
        if at.len() == 1 {
            self.r[at.start] = merged;
        } else {
            self.r.splice(at, [merged]);
        }
        merged
    }

    /// Removes every integer below `x`; returns how many ranges it visited (those starting
    /// below `x`).
    pub fn remove_below(&mut self, x: u64) -> usize {
        let n = self.r.partition_point(|&(a, _)| a < x);
        let gone = self.r[..n].partition_point(|&(_, e)| e <= x);
        self.r.drain(..gone);
        if let Some(f) = self.r.first_mut().filter(|f| f.0 < x) {
            f.0 = x;
        }
        n
    }

    /// The end of the run of integers from `x` on once the ranges starting at or below `x`
    /// join it (`x` itself counts as held): those ranges leave the set. A receiver's next
    /// expected byte after the data filling a hole arrived.
    pub fn absorb_from(&mut self, x: u64) -> u64 {
        let mut end = x;
        let mut n = 0;
        for &(a, b) in &self.r {
            if a > end {
                break;
            }
            end = end.max(b);
            n += 1;
        }
        self.r.drain(..n);
        end
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// The same operations on a plain membership vector: the independent model.
    fn model_insert(m: &mut [bool], a: u64, b: u64) {
        for v in &mut m[a as usize..b as usize] {
            *v = true;
        }
    }

    fn ranges_of(m: &[bool]) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < m.len() {
            if m[i] {
                let s = i;
                while i < m.len() && m[i] {
                    i += 1;
                }
                out.push((s as u64, i as u64));
            } else {
                i += 1;
            }
        }
        out
    }

    #[test]
    fn agrees_with_a_membership_vector_under_random_operations() {
        let mut rng = Rng::from_seed(7);
        for _ in 0..200 {
            let mut set = RangeSet::new();
            let mut m = vec![false; 200];
            for _ in 0..60 {
                let a = rng.below(190);
                let b = a + 1 + rng.below(10);
                match rng.below(4) {
                    0 | 1 => {
                        let touch: Vec<usize> = (0..set.as_slice().len())
                            .filter(|&i| set.as_slice()[i].1 >= a && set.as_slice()[i].0 <= b)
                            .collect();
                        let at = set.touching(a, b);
                        assert_eq!(at.clone().collect::<Vec<_>>(), touch);
                        // the merged range is the run of the model holding [a, b)
                        let got = set.insert(a, b);
                        model_insert(&mut m, a, b);
                        let run = ranges_of(&m).into_iter().find(|&(s, e)| s <= a && b <= e);
                        assert_eq!(Some(got), run);
                    }
                    2 => {
                        let visited = set.as_slice().iter().filter(|r| r.0 < a).count();
                        assert_eq!(set.remove_below(a), visited);
                        for v in &mut m[..a as usize] {
                            *v = false;
                        }
                    }
                    _ => {
                        let mut want = a;
                        while (want as usize) < m.len() && m[want as usize] {
                            want += 1;
                        }
                        let run_end = ranges_of(&m)
                            .into_iter()
                            .find(|&(s, e)| s <= a && a <= e)
                            .map_or(a, |(_, e)| e);
                        assert_eq!(set.absorb_from(a), run_end.max(want));
                        for v in &mut m[..run_end as usize] {
                            *v = false;
                        }
                    }
                }
                assert_eq!(set.as_slice(), ranges_of(&m).as_slice());
                assert_eq!(set.len(), m.iter().filter(|&&v| v).count() as u64);
                let x = rng.below(200);
                let holder = ranges_of(&m).into_iter().find(|&(s, e)| s <= x && x < e);
                assert_eq!(set.containing(x), holder);
            }
        }
    }

    #[test]
    fn touching_ranges_merge_and_a_gap_keeps_them_apart() {
        let mut s = RangeSet::new();
        s.insert(10, 20);
        s.insert(30, 40);
        assert_eq!(s.touching(20, 30), 0..2); // [10, 20) ends where 20 starts: they touch
        assert_eq!(s.touching(21, 29), 1..1);
        assert_eq!(s.insert(20, 30), (10, 40));
        assert_eq!(s.as_slice(), &[(10, 40)]);
        s.insert(41, 50);
        assert_eq!(s.as_slice(), &[(10, 40), (41, 50)]);
    }
}
