//! Seeded, portable random streams: xoshiro256++ (Blackman & Vigna) seeded through SplitMix64.
//!
//! Every component draws from its own stream, derived from (run seed, stream name), so adding a
//! flow does not shift another flow's draws (docs/architecture.md, principle 4). All distributions are written
//! here on the raw u64 output, so no dependency update can change a result.
//!
//! A stream is counted per thread at its first draw ([`streams_drawn`]): a run that drew from no
//! stream has results that do not depend on its seed, since every random choice of the core
//! comes from a stream of this module. Counting the first draw only keeps the thread-local
//! counter off the path of every later draw.

use std::cell::Cell;

thread_local! {
    static DRAWN: Cell<u64> = const { Cell::new(0) };
}

/// The streams first drawn from on this thread so far; those a run drew from are the difference
/// between this after and before it (a run is built and simulated on one thread).
pub fn streams_drawn() -> u64 {
    DRAWN.with(Cell::get)
}

#[cold]
#[inline(never)]
fn count_stream() {
    DRAWN.with(|d| d.set(d.get().wrapping_add(1)));
}

/// FNV-1a over bytes: a fixed, portable hash used to turn stream names into stream ids.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
    /// Nothing drawn from this stream yet.
    fresh: bool,
}

impl Rng {
    pub fn from_seed(seed: u64) -> Rng {
        let mut sm = seed;
        let s = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        Rng { s, fresh: true }
    }

    /// The stream called `name` of the run with seed `seed`.
    pub fn stream(seed: u64, name: &str) -> Rng {
        Rng::from_seed(seed ^ fnv1a(name.as_bytes()).rotate_left(17))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        if self.fresh {
            self.fresh = false;
            count_stream();
        }
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 random bits.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in (0, 1]: safe for logarithms.
    #[inline]
    pub fn uniform_pos(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability p.
    #[inline]
    pub fn bernoulli(&mut self, p: f64) -> bool {
        p > 0.0 && self.uniform() < p
    }

    /// Uniform integer in [0, n) by Lemire's multiply-shift with rejection (unbiased).
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0);
        loop {
            let m = self.next_u64() as u128 * n as u128;
            let lo = m as u64;
            if lo >= n.wrapping_neg() % n {
                return (m >> 64) as u64;
            }
        }
    }

    /// Uniform integer in [lo, hi] (inclusive).
    pub fn range_u64(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        match (hi - lo).checked_add(1) {
            Some(n) => lo + self.below(n),
            None => self.next_u64(),
        }
    }

    /// Exponential with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * self.uniform_pos().ln()
    }

    /// Standard normal by the Box-Muller transform (one value per two uniforms; no caching, so the
    /// number of draws per call is fixed).
    pub fn normal(&mut self) -> f64 {
        let u1 = self.uniform_pos();
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// Weibull with the given shape and scale by inversion: scale * (-ln U)^(1/shape).
    pub fn weibull(&mut self, shape: f64, scale: f64) -> f64 {
        scale * (-self.uniform_pos().ln()).powf(1.0 / shape)
    }

    /// Gamma with the given shape and scale (mean shape * scale): Marsaglia & Tsang, "A Simple
    /// Method for Generating Gamma Variables" (ACM TOMS 2000), with their boost
    /// Gamma(a) = Gamma(a + 1) * U^(1/a) for shapes below 1.
    pub fn gamma(&mut self, shape: f64, scale: f64) -> f64 {
        if shape < 1.0 {
            let boost = self.uniform_pos().powf(1.0 / shape);
            return self.gamma(shape + 1.0, scale) * boost;
        }
        let d = shape - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        loop {
            let z = self.normal();
            let v = 1.0 + c * z;
            if v <= 0.0 {
                continue;
            }
            let v = v * v * v;
            let u = self.uniform_pos();
            if u.ln() < 0.5 * z * z + d - d * v + d * v.ln() {
                return d * v * scale;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xoshiro_reference_vector() {
        // State {1, 2, 3, 4}, worked by hand from the xoshiro256++ definition:
        // out1 = rotl(1 + 4, 23) + 1 = 5 * 2^23 + 1; the state becomes {7, 0, 262146, 6 * 2^45};
        // out2 = rotl(7 + 6 * 2^45, 23) + 7 = 7 * 2^23 + (2^5 + 2^6) + 7.
        let mut r = Rng {
            s: [1, 2, 3, 4],
            fresh: true,
        };
        assert_eq!(r.next_u64(), 5 * (1 << 23) + 1);
        assert_eq!(r.next_u64(), 7 * (1 << 23) + 96 + 7);
    }

    #[test]
    fn a_stream_counts_once_at_its_first_draw() {
        // the counter is per thread and tests share threads: read it around each step
        let before = streams_drawn();
        let mut a = Rng::stream(5, "a");
        let b = Rng::stream(5, "b");
        assert_eq!(streams_drawn(), before, "made, not drawn from");
        a.uniform();
        assert_eq!(streams_drawn(), before + 1);
        a.normal();
        a.below(10);
        assert_eq!(streams_drawn(), before + 1, "later draws are not counted");
        let mut c = b.clone();
        c.next_u64();
        assert_eq!(streams_drawn(), before + 2);
    }

    #[test]
    fn splitmix_reference_vector() {
        // SplitMix64 from seed 0: first output 0xe220a8397b1dcdaf.
        let mut s = 0u64;
        assert_eq!(splitmix64(&mut s), 0xe220_a839_7b1d_cdaf);
    }

    #[test]
    fn streams_are_independent_and_moments_right() {
        let mut a = Rng::stream(1, "flow/0");
        let mut b = Rng::stream(1, "flow/1");
        assert_ne!(a.next_u64(), b.next_u64());
        let mut r = Rng::stream(7, "moments");
        let n = 200_000;
        let (mut s, mut s2, mut e) = (0.0, 0.0, 0.0);
        for _ in 0..n {
            let x = r.normal();
            s += x;
            s2 += x * x;
            e += r.exponential(2.0);
        }
        let n = n as f64;
        assert!((s / n).abs() < 0.01);
        assert!((s2 / n - 1.0).abs() < 0.02);
        assert!((e / n - 2.0).abs() < 0.03);
        let mut counts = [0u32; 6];
        for _ in 0..60_000 {
            counts[r.below(6) as usize] += 1;
        }
        assert!(counts.iter().all(|&c| (9_500..10_500).contains(&c)));
    }

    #[test]
    fn weibull_and_gamma_moments() {
        // Weibull(k, l): mean l * Gamma(1 + 1/k); k = 1 is the exponential. Gamma(a, s): mean
        // a s, variance a s^2.
        let mut r = Rng::stream(3, "moments");
        let n = 200_000;
        let mean = |f: &mut dyn FnMut() -> f64| (0..n).map(|_| f()).sum::<f64>() / n as f64;
        assert!((mean(&mut || r.weibull(1.0, 0.417)) - 0.417).abs() < 0.005);
        let m = mean(&mut || r.weibull(2.0, 1.0));
        assert!((m - std::f64::consts::PI.sqrt() / 2.0).abs() < 0.005, "{m}");
        for (a, s) in [(1.85, 1.0 / 1.85), (3.22, 2.0), (0.63, 1.0)] {
            let xs: Vec<f64> = (0..n).map(|_| r.gamma(a, s)).collect();
            let m = xs.iter().sum::<f64>() / n as f64;
            let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n as f64;
            assert!((m / (a * s) - 1.0).abs() < 0.01, "gamma({a}, {s}) mean {m}");
            assert!(
                (v / (a * s * s) - 1.0).abs() < 0.03,
                "gamma({a}, {s}) variance {v}"
            );
        }
    }
}
