//! Kathleen Nichols' windowed maximum as Linux lib/win_minmax.c keeps it: the best, second and
//! third best samples of the window, each no older than the one before, spread over it so that
//! when the best ages out the next is still close. Constant space and time per sample.

/// One sample: its time (any unit: BBR's bandwidth filter counts rounds) and value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Sample {
    t: u64,
    v: u64,
}

/// A running maximum over the last `win` units of time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowedMax {
    s: [Sample; 3],
}

impl WindowedMax {
    /// The maximum of the window.
    pub fn get(&self) -> u64 {
        self.s[0].v
    }

    /// Forgets everything: `v` at `t` is the only sample (minmax_reset).
    pub fn reset(&mut self, t: u64, v: u64) -> u64 {
        self.s = [Sample { t, v }; 3];
        v
    }

    /// Takes sample `v` at `t` into a window of `win` (minmax_running_max); returns the maximum.
    pub fn update(&mut self, win: u64, t: u64, v: u64) -> u64 {
        let val = Sample { t, v };
        if v >= self.s[0].v || t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if v >= self.s[2].v {
            self.s[2] = val;
        }
        self.age(win, val)
    }

    /// As time passes, the second and third choices move up (minmax_subwin_update).
    fn age(&mut self, win: u64, val: Sample) -> u64 {
        let dt = val.t.wrapping_sub(self.s[0].t);
        if dt > win {
            self.shift(val);
            if val.t.wrapping_sub(self.s[0].t) > win {
                self.shift(val);
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].v
    }

    fn shift(&mut self, val: Sample) {
        self.s[0] = self.s[1];
        self.s[1] = self.s[2];
        self.s[2] = val;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// BBR's bandwidth filter: a window of 10 rounds (bbr_bw_rtts = CYCLE_LEN + 2).
    const WIN: u64 = 10;

    #[test]
    fn a_peak_is_kept_for_the_window_then_the_later_choices_take_over() {
        // Worked by hand through win_minmax.c: 100 at round 0, then 60 at 1, 80 at 3, 50 at 6.
        let mut f = WindowedMax::default();
        assert_eq!(f.update(WIN, 0, 100), 100);
        // 60 >= s[1] = s[2] = 100? no; >= s[2]? no. dt 1 is not over win/4 = 2: unchanged.
        assert_eq!(f.update(WIN, 1, 60), 100);
        // 80: dt 3 > 2 with s[1].t == s[0].t: the second (and third) choice is (3, 80).
        assert_eq!(f.update(WIN, 3, 80), 100);
        // 50: s[2].t == s[1].t and dt 6 > win/2 = 5: third choice (6, 50).
        assert_eq!(f.update(WIN, 6, 50), 100);
        // Round 10: dt 10 is not over the window, the peak holds for rounds 0..=10.
        assert_eq!(f.update(WIN, 10, 40), 100);
        // Round 11: the peak is out; 80 (round 3) is the maximum of rounds 1..=11.
        assert_eq!(f.update(WIN, 11, 40), 80);
        // Round 14: 80 ages out too (dt 11): 50 of round 6, then the new sample behind it.
        assert_eq!(f.update(WIN, 14, 40), 50);
        // A new maximum forgets everything before it.
        assert_eq!(f.update(WIN, 15, 90), 90);
        assert_eq!(f.update(WIN, 25, 10), 90);
        assert_eq!(f.update(WIN, 26, 10), 10);
    }

    #[test]
    fn agrees_with_the_exact_window_maximum_on_a_falling_series() {
        // Monotonically falling samples, one per round: the exact maximum of the last 11 rounds
        // (t - win ..= t) is the sample win rounds back; the three-sample filter may lag behind
        // it but never reports more than the true maximum nor less than the latest sample.
        let mut f = WindowedMax::default();
        let v = |t: u64| 1000 - 10 * t;
        for t in 0..60 {
            let got = f.update(WIN, t, v(t));
            let exact = v(t.saturating_sub(WIN));
            assert!(got <= exact && got >= v(t), "round {t}: {got} vs {exact}");
        }
    }
}
