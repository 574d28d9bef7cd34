//! PackMime-HTTP (Cao, Cleveland, Gao, Jeffay, Smith, Weigle, "Stochastic Models for Generating
//! Synthetic HTTP Source Traffic", INFOCOM 2004) as ns-2.35 implements it (Weigle; files
//! `packmime/packmime_ranvar.cc`, `packmime_HTTP.cc`, `packmime_HTTP_rng.cc`, `tools/rng.h`).
//! This module draws a run's web workload up front: when each connection opens and, per
//! request/response exchange on it, the request and response sizes, the gap before the request
//! and the server's think time. The endpoints that carry it over TCP are in `web.rs`.
//!
//! Each random variable has its own stream (ns-2 gives each its own RNG), named
//! `web/<flow>/<variable>`. The functions, one per ns-2 random variable:
//! * [`FlowArrive`] (`PackMimeHTTPFlowArriveRandomVariable`): connection inter-arrival times, a
//!   FARIMA(0, d = 0.33, 1) process plus white noise, mapped through the normal CDF onto a
//!   Weibull marginal with shape logit^-1(0.352 + 0.388 log2 rate) and mean 1/rate; the noise
//!   share of the variance is logit^-1(0.333 + 0.414 log2 rate).
//! * [`ReqSize`] (`PackMimeHTTPFileSizeRandomVariable`, type 0): request sizes, a
//!   FARIMA(0, 0.31, 1) process plus noise (noise share logit^-1(0.123 + 0.494 log2 rate)) mapped
//!   to a probability and through the fitted inverse CDF `qfsize1` (two tables: below and above
//!   the median).
//! * [`RspSize`] (same class, type 1): response sizes in alternating runs of cache validations
//!   (small, table `FSIZE0_INVCDF_A`) and downloads (heavy-tailed, table `FSIZE0_INVCDF_B` on
//!   log2 scale); run lengths ceil(Weibull(shape, scale)), shapes logit^-1(0.718 + 0.357 log2
//!   rate) and logit^-1(1.293 + 0.316 log2 rate), scales 0.775 and 3.11 (`rfsize0`).
//! * HTTP/1.1 (`set-http-1.1`, used by the CoDel script): a connection is persistent with
//!   probability 0.09 (`PackMimeHTTPPersistentRandomVariable`); a persistent connection carries
//!   ceil(pages) pages (`NumPages`: 1 with probability 0.82, else 1 + Weibull(1, 0.417), at least
//!   2), each page ceil(objects) objects (`SingleObj` 0.69 when pages > 1, else `ObjsPerPage`
//!   1 + Weibull(1, 1.578), at least 2); all its requests have the first request's size; when
//!   there are several and the first response exceeds 275 bytes, the later responses are
//!   2^(L + S Z sqrt(2.43)) with L ~ N(10.62, 0.94) and S ~ Gamma(3.22, rate 3.22) drawn once per
//!   connection (`PersistRspSize`). Gaps before later requests: between pages 2^(L + S Z
//!   sqrt(1.21)), L ~ N(3.22, 0.73), S ~ Gamma(1.85, 1.85); within a page 2^(L + S Z sqrt(1.57)),
//!   L ~ N(-4.15, 3.12), S ~ Gamma(2.35, 2.35), where L and S are drawn once per random
//!   variable, that is once per run, as in ns-2 (seconds; S enters as its square root).
//! * Server delay (`PackMimeHTTPServerDelayRandomVariable`): 1 / max(10, Weibull(0.63, 305)) s.
//! * Zero-byte requests or responses become 1 byte (`PackMimeHTTPClientApp::timeout`).
//!
//! Deviations: ns-2's normal (ratio of uniforms), gamma (R's algorithm) and FARIMA draw the
//! same distributions from other random numbers; `gammln` is `libm::lgamma`.

use crate::rng::Rng;
use crate::units::{Time, SEC};

mod tables;
use tables::*;

/// ns-2's `LOG2` constant (tools/rng.h), kept at its 10 digits as ns-2 uses it.
#[allow(clippy::approx_constant)]
const LOG2: f64 = 0.6931471806;

/// ns-2 `RNG::logitinv`: 2^x / (1 + 2^x).
fn logitinv(x: f64) -> f64 {
    let p = 2f64.powf(x);
    p / (1.0 + p)
}

/// ns-2 `RNG::pnorm`, the standard normal CDF.
fn pnorm(q: f64) -> f64 {
    if q >= 0.0 {
        (1.0 + libm::erf(q / std::f64::consts::SQRT_2)) / 2.0
    } else {
        libm::erfc(-q / std::f64::consts::SQRT_2) / 2.0
    }
}

/// ns-2 `FX::LinearInterpolate`: piecewise linear through (x, y), extrapolated with the first
/// segment's slope below x[1] and the last segment's beyond the last point.
fn interpolate(x: &[f64], y: &[f64], at: f64) -> f64 {
    let n = x.len();
    let i = x[1..n - 1].partition_point(|&b| b <= at).min(n - 2);
    y[i] + (y[i + 1] - y[i]) / (x[i + 1] - x[i]) * (at - x[i])
}

/// A FARIMA(0, d, 1) process with MA polynomial (1 + B) (ns-2 `FARIMA`, pAR = 0, qMA = 1): the
/// fractionally integrated part x_t by the Durbin-Levinson recursion truncated to N terms, and
/// y_t = x_t + x_(t-1). Its variance is v0 (2 + 2 d / (1 - d)) with v0 = Gamma(1 - 2d) /
/// Gamma(1 - d)^2.
pub struct Farima {
    /// phi[j] for j = N-1 down to 1 (reversed, to run along the history buffer).
    phi_rev: Vec<f64>,
    /// Innovation standard deviation once the recursion has settled (sqrt v_(N-1)).
    sd: f64,
    /// The last N values of x, twice (positions p and p + N), so the last N - 1 are contiguous.
    hist: Vec<f64>,
    n: usize,
    pos: usize,
    prev: f64,
}

impl Farima {
    pub fn new(d: f64, n: usize, rng: &mut Rng) -> Farima {
        let mut phi = vec![0.0; n];
        let mut v = (libm::lgamma(1.0 - 2.0 * d) - 2.0 * libm::lgamma(1.0 - d)).exp();
        let mut hist = vec![0.0; 2 * n];
        let mut prev = 0.0;
        // Warm-up as ns-2 (`NextLow` until t = N + qMA): the first N steps grow the recursion.
        for t in 0..=n {
            if t > 0 && t < n {
                let ptt = d / (t as f64 - d);
                // Durbin-Levinson: phi[j], phi[t - j] -= ptt x each other, for j = 1..=t/2.
                let (lo, hi) = phi[1..t].split_at_mut((t - 1) / 2);
                for (a, b) in lo.iter_mut().zip(hi.iter_mut().rev()) {
                    (*a, *b) = (*a - ptt * *b, *b - ptt * *a);
                }
                if t % 2 == 0 {
                    phi[t / 2] -= ptt * phi[t / 2];
                }
                phi[t] = ptt;
                v *= 1.0 - ptt * ptt;
            }
            let p = t % n;
            // sum over j = 1..=k of phi[j] x[t - j], in that order.
            let k = t.min(n - 1);
            let past = hist[p + n - k..p + n].iter().rev();
            let m: f64 = phi[1..=k].iter().zip(past).map(|(f, x)| f * x).sum();
            let x = rng.normal() * v.sqrt() + m;
            hist[p] = x;
            hist[p + n] = x;
            prev = x;
        }
        let phi_rev = (1..n).rev().map(|j| phi[j]).collect();
        Farima {
            phi_rev,
            sd: v.sqrt(),
            hist,
            n,
            pos: (n + 1) % n,
            prev,
        }
    }

    /// The next y_t.
    pub fn draw(&mut self, rng: &mut Rng) -> f64 {
        let (p, n) = (self.pos, self.n);
        let past = &self.hist[p + 1..p + n];
        let m: f64 = past.iter().zip(&self.phi_rev).map(|(x, f)| x * f).sum();
        let x = rng.normal() * self.sd + m;
        self.hist[p] = x;
        self.hist[p + n] = x;
        self.pos = (p + 1) % n;
        let y = x + self.prev;
        self.prev = x;
        y
    }
}

/// The standard deviation of the FARIMA part so that it and the noise add up to unit variance
/// with the noise taking `var_ratio` of it (ns-2's `sigmaEpsilon_`).
fn sigma_epsilon(d: f64, var_ratio: f64) -> f64 {
    let g = (2.0 * libm::lgamma(1.0 - d) - libm::lgamma(1.0 - 2.0 * d)).exp();
    (g / (2.0 + 2.0 * d / (1.0 - d)) * (1.0 - var_ratio)).sqrt()
}

/// A unit-variance normal with long-range dependence: FARIMA plus white noise.
struct LrdNormal {
    farima: Farima,
    sigma_eps: f64,
    sigma_noise: f64,
    rng: Rng,
}

impl LrdNormal {
    fn new(d: f64, n: usize, var_ratio: f64, mut rng: Rng) -> LrdNormal {
        LrdNormal {
            farima: Farima::new(d, n, &mut rng),
            sigma_eps: sigma_epsilon(d, var_ratio),
            sigma_noise: var_ratio.sqrt(),
            rng,
        }
    }

    fn draw(&mut self) -> f64 {
        let y = self.farima.draw(&mut self.rng);
        y * self.sigma_eps + self.rng.normal() * self.sigma_noise
    }
}

/// Connection inter-arrival times in seconds (ns-2 `PackMimeHTTPFlowArriveRandomVariable`;
/// d = 0.33 as set in its `initialize`, N = 1000).
pub struct FlowArrive {
    lrd: LrdNormal,
    shape: f64,
    scale: f64,
}

impl FlowArrive {
    pub fn new(rate: f64, rng: Rng) -> FlowArrive {
        let shape = logitinv(0.352 + 0.388 * rate.ln() / LOG2);
        FlowArrive {
            lrd: LrdNormal::new(0.33, 1000, logitinv(0.333 + 0.414 * rate.ln() / LOG2), rng),
            shape,
            scale: 1.0 / (rate * libm::lgamma(1.0 + 1.0 / shape).exp()),
        }
    }

    pub fn shape(&self) -> f64 {
        self.shape
    }

    pub fn draw(&mut self) -> f64 {
        // ns-2 `qweibull`: scale (-ln(1 - p))^(1/shape).
        let p = pnorm(self.lrd.draw());
        self.scale * (-(1.0 - p).ln()).powf(1.0 / self.shape)
    }
}

/// Request sizes in bytes (ns-2 `PackMimeHTTPFileSizeRandomVariable` type 0: FARIMA d = 0.31,
/// N = 5000, and `qfsize1`).
pub struct ReqSize {
    lrd: LrdNormal,
}

/// `FSIZE1_PROB_A`: the probability mass of the lower table of the request-size inverse CDF.
const FSIZE1_PROB_A: f64 = 0.5;

impl ReqSize {
    pub fn new(rate: f64, rng: Rng) -> ReqSize {
        ReqSize {
            lrd: LrdNormal::new(0.31, 5000, logitinv(0.123 + 0.494 * rate.ln() / LOG2), rng),
        }
    }

    /// ns-2 `qfsize1`: the request size at probability p (truncated to whole bytes).
    pub fn quantile(p: f64) -> u64 {
        let y = if p > FSIZE1_PROB_A {
            let q = (p - FSIZE1_PROB_A) / (1.0 - FSIZE1_PROB_A);
            interpolate(&FSIZE1_INVCDF_B_X, &FSIZE1_INVCDF_B_Y, (1.0 - q).ln() / LOG2).exp2()
        } else {
            interpolate(&FSIZE1_INVCDF_A_X, &FSIZE1_INVCDF_A_Y, p / FSIZE1_PROB_A)
        };
        y.max(0.0) as u64
    }

    pub fn draw(&mut self) -> u64 {
        ReqSize::quantile(pnorm(self.lrd.draw()))
    }
}

/// Response sizes in bytes (ns-2 `PackMimeHTTPFileSizeRandomVariable` type 1: `rfsize0` in
/// alternating runs; the first draw starts a download run).
pub struct RspSize {
    rng: Rng,
    shape: [f64; 2],
    download: bool,
    run_left: i64,
}

/// Weibull scales of the run lengths of cache validations and of downloads.
const RUN_SCALE: [f64; 2] = [0.775, 3.11];

impl RspSize {
    pub fn new(rate: f64, rng: Rng) -> RspSize {
        let l = rate.ln() / LOG2;
        RspSize {
            rng,
            shape: [logitinv(0.718 + 0.357 * l), logitinv(1.293 + 0.316 * l)],
            download: false,
            run_left: 0,
        }
    }

    /// ns-2 `rfsize0` at probability p: a cache validation from the linear table, or a download
    /// from the log2 table.
    pub fn quantile(download: bool, p: f64) -> u64 {
        let y = if download {
            interpolate(&FSIZE0_INVCDF_B_X, &FSIZE0_INVCDF_B_Y, (1.0 - p).ln() / LOG2).exp2()
        } else {
            interpolate(&FSIZE0_INVCDF_A_X, &FSIZE0_INVCDF_A_Y, p)
        };
        y.max(0.0) as u64
    }

    pub fn draw(&mut self) -> u64 {
        if self.run_left <= 0 {
            self.download = !self.download;
            let s = self.download as usize;
            self.run_left = self.rng.weibull(self.shape[s], RUN_SCALE[s]).ceil() as i64;
        }
        self.run_left -= 1;
        let p = self.rng.uniform();
        RspSize::quantile(self.download, p)
    }
}

/// 2^(L + sqrt(S) Z sqrt(v)) with L ~ N(m, vl) and S ~ Gamma(k, rate k) fixed when `reset`
/// (ns-2's `TimeBtwnPages`, `TimeBtwnObjs` and `PersistRspSize` share this form).
struct LogNormalMix {
    m: f64,
    vl: f64,
    k: f64,
    v: f64,
    loc_scale: Option<(f64, f64)>,
    rng: Rng,
}

impl LogNormalMix {
    fn new(m: f64, vl: f64, k: f64, v: f64, rng: Rng) -> LogNormalMix {
        LogNormalMix {
            m,
            vl,
            k,
            v,
            loc_scale: None,
            rng,
        }
    }

    fn draw(&mut self) -> f64 {
        let (loc, s2) = match self.loc_scale {
            Some(ls) => ls,
            None => {
                let loc = self.rng.normal() * self.vl.sqrt() + self.m;
                let s2 = self.rng.gamma(self.k, 1.0 / self.k);
                self.loc_scale = Some((loc, s2));
                (loc, s2)
            }
        };
        (loc + s2.sqrt() * self.rng.normal() * self.v.sqrt()).exp2()
    }
}

/// The model's HTTP/1.1 constants (packmime_ranvar.cc).
pub const P_PERSISTENT: f64 = 0.09;
pub const P_1PAGE: f64 = 0.82;
pub const NPAGE_WEIBULL: (f64, f64) = (1.0, 0.417);
pub const P_1TRANSFER: f64 = 0.69;
pub const NTRANSFER_WEIBULL: (f64, f64) = (1.0, 1.578);
/// Responses up to this size are cache validations; persistent connections keep later
/// responses at the first one's size unless it is larger (`FSIZE_CACHE_CUTOFF`).
pub const FSIZE_CACHE_CUTOFF: u64 = 275;
pub const SERVER_DELAY_WEIBULL: (f64, f64) = (0.63, 305.0);

/// One request/response exchange on a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exchange {
    pub req: u64,
    pub rsp: u64,
    /// Time from the end of the previous response to this request (0 for the first).
    pub gap: Time,
    /// Server think time between the whole request and the response.
    pub server_delay: Time,
}

/// One connection: when it opens and its exchanges, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Connection {
    pub start: Time,
    pub exchanges: Vec<Exchange>,
}

/// The model's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PackMimeParams {
    /// New connections per second.
    pub rate: f64,
    /// HTTP/1.1 (`set-http-1.1`): some connections persistent; otherwise one exchange each.
    pub http_1_1: bool,
}

fn secs(s: f64) -> Time {
    (s * SEC as f64).round().max(0.0) as Time
}

/// Every connection opening in [start, stop), drawn from the streams of flow `flow`.
pub fn plan(p: &PackMimeParams, start: Time, stop: Time, seed: u64, flow: u32) -> Vec<Connection> {
    let rng = |name: &str| Rng::stream(seed, &format!("web/{flow}/{name}"));
    let mut arrive = FlowArrive::new(p.rate, rng("arrive"));
    let mut req = ReqSize::new(p.rate, rng("req"));
    let mut rsp = RspSize::new(p.rate, rng("rsp"));
    let mut persist_rsp = LogNormalMix::new(10.62, 0.94, 3.22, 2.43, rng("persist_rsp"));
    let mut page_gap = LogNormalMix::new(3.22, 0.73, 1.85, 1.21, rng("page_gap"));
    let mut obj_gap = LogNormalMix::new(-4.15, 3.12, 2.35, 1.57, rng("obj_gap"));
    let (mut persistent, mut pages_rng, mut objs_rng) = (rng("persistent"), rng("pages"), rng("objs"));
    let mut server = rng("server_delay");
    let mut out = Vec::new();
    let mut t = start;
    while t < stop {
        let persistent = p.http_1_1 && persistent.uniform() <= P_PERSISTENT;
        let mut exchanges = Vec::new();
        let (q, r) = (req.draw().max(1), rsp.draw().max(1));
        if persistent {
            let pages = if pages_rng.uniform() <= P_1PAGE {
                1
            } else {
                ((pages_rng.weibull(NPAGE_WEIBULL.0, NPAGE_WEIBULL.1) + 1.0).ceil() as u64).max(2)
            };
            for page in 0..pages {
                let single = pages > 1 && objs_rng.uniform() <= P_1TRANSFER;
                let objs = if single {
                    1
                } else {
                    ((objs_rng.weibull(NTRANSFER_WEIBULL.0, NTRANSFER_WEIBULL.1) + 1.0).ceil() as u64).max(2)
                };
                for obj in 0..objs {
                    let gap = match (page, obj) {
                        (0, 0) => 0.0,
                        (_, 0) => page_gap.draw(),
                        _ => obj_gap.draw(),
                    };
                    exchanges.push(Exchange {
                        req: q,
                        rsp: r,
                        gap: secs(gap),
                        server_delay: 0,
                    });
                }
            }
            if exchanges.len() > 1 && r > FSIZE_CACHE_CUTOFF {
                for e in &mut exchanges[1..] {
                    e.rsp = (persist_rsp.draw() as u64).max(1);
                }
            }
            persist_rsp.loc_scale = None;
        } else {
            exchanges.push(Exchange {
                req: q,
                rsp: r,
                gap: 0,
                server_delay: 0,
            });
        }
        for e in &mut exchanges {
            let w = server
                .weibull(SERVER_DELAY_WEIBULL.0, SERVER_DELAY_WEIBULL.1)
                .max(10.0);
            e.server_delay = secs(1.0 / w);
        }
        out.push(Connection { start: t, exchanges });
        t = t.saturating_add(secs(arrive.draw()).max(1));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn median(mut v: Vec<f64>) -> f64 {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    #[test]
    fn interpolation_follows_ns2_fx() {
        // Inside: linear between the points; outside: the end segments' slopes.
        let (x, y) = ([0.0, 1.0, 3.0], [0.0, 2.0, 3.0]);
        assert_eq!(interpolate(&x, &y, 0.5), 1.0);
        assert_eq!(interpolate(&x, &y, 2.0), 2.5);
        assert_eq!(interpolate(&x, &y, 5.0), 4.0);
        assert_eq!(interpolate(&x, &y, -1.0), -2.0);
    }

    #[test]
    fn farima_has_the_fractional_autocorrelation() {
        // y = x_t + x_(t-1) with x FARIMA(0, d, 0): rho_x(k) = prod_(i<=k) (i - 1 + d) / (i - d),
        // so rho_y(1) = (1 + 2 rho_x(1) + rho_x(2)) / (2 + 2 rho_x(1)); Var y = v0 (2 + 2 rho_x(1)).
        let d = 0.31;
        let mut rng = Rng::stream(5, "farima");
        let mut f = Farima::new(d, 1000, &mut rng);
        let ys: Vec<f64> = (0..200_000).map(|_| f.draw(&mut rng)).collect();
        let n = ys.len() as f64;
        let m = ys.iter().sum::<f64>() / n;
        let var = ys.iter().map(|y| (y - m) * (y - m)).sum::<f64>() / n;
        let cov1 = ys.windows(2).map(|w| (w[0] - m) * (w[1] - m)).sum::<f64>() / n;
        let (r1, r2) = (d / (1.0 - d), d / (1.0 - d) * (1.0 + d) / (2.0 - d));
        let v0 = (libm::lgamma(1.0 - 2.0 * d) - 2.0 * libm::lgamma(1.0 - d)).exp();
        assert!(
            (var / (v0 * (2.0 + 2.0 * r1)) - 1.0).abs() < 0.1,
            "variance {var}"
        );
        let want = (1.0 + 2.0 * r1 + r2) / (2.0 + 2.0 * r1);
        assert!((cov1 / var - want).abs() < 0.02, "lag-1 {} vs {want}", cov1 / var);
        // The standardised sum with the noise has unit variance (sigma_epsilon's purpose).
        let s = sigma_epsilon(d, 0.3);
        assert!((s * s * v0 * (2.0 + 2.0 * r1) + 0.3 - 1.0).abs() < 1e-12);
    }

    #[test]
    fn mean_interarrival_is_one_over_rate() {
        for rate in [2.0, 5.0, 80.0] {
            let mut a = FlowArrive::new(rate, Rng::stream(9, "arrive"));
            let n = 200_000;
            let mean = (0..n).map(|_| a.draw()).sum::<f64>() / n as f64;
            assert!((mean * rate - 1.0).abs() < 0.05, "rate {rate}: mean gap {mean}");
        }
    }

    #[test]
    fn request_sizes_follow_the_fitted_inverse_cdf() {
        // The marginal is the table's: median = the lower table at its end (p = 0.5 -> 1.0 in
        // the table's conditional scale), and P(size > table at p) = 1 - p in the upper part.
        let mut r = ReqSize::new(10.0, Rng::stream(2, "req"));
        let xs: Vec<f64> = (0..100_000).map(|_| r.draw() as f64).collect();
        let want_median = ReqSize::quantile(0.5) as f64;
        let m = median(xs.clone());
        assert!(
            (m / want_median - 1.0).abs() < 0.05,
            "median {m} vs {want_median}"
        );
        let q90 = ReqSize::quantile(0.9) as f64;
        let above = xs.iter().filter(|&&x| x > q90).count() as f64 / xs.len() as f64;
        assert!((above - 0.1).abs() < 0.02, "P(> q90) = {above}");
        // Requests are a few hundred bytes (Cao et al.: a median of a few hundred bytes).
        assert!((100.0..1000.0).contains(&m), "{m}");
    }

    #[test]
    fn responses_alternate_cache_validations_and_heavy_tailed_downloads() {
        let mut r = RspSize::new(10.0, Rng::stream(4, "rsp"));
        let xs: Vec<u64> = (0..200_000).map(|_| r.draw()).collect();
        // Cache validations are at most the table's last value (272 B) and downloads at least
        // 2^8.108 = 275 B (all but the smallest 0.13%: the table starts at log2(1 - p) = -0.0018),
        // so the share of responses below 275 B is the long-run share of validation runs:
        // E[ceil W_v] / (E[ceil W_v] + E[ceil W_d]), with E[ceil W] = sum_k>=0 P(W > k).
        let cut = 275;
        assert!(RspSize::quantile(false, 1.0) < cut);
        assert!(RspSize::quantile(true, 0.0013) >= cut);
        let run = |shape: f64, scale: f64| -> f64 {
            (0..10_000).map(|k| (-(k as f64 / scale).powf(shape)).exp()).sum()
        };
        let l = 10f64.ln() / LOG2;
        let (ev, ed) = (
            run(logitinv(0.718 + 0.357 * l), 0.775),
            run(logitinv(1.293 + 0.316 * l), 3.11),
        );
        let share = xs.iter().filter(|&&x| x < cut).count() as f64 / xs.len() as f64;
        assert!(
            (share - ev / (ev + ed)).abs() < 0.01,
            "{share} vs {}",
            ev / (ev + ed)
        );
        // Downloads follow the log2 table: P(size > q(p)) = 1 - p among them.
        let dl: Vec<u64> = xs.into_iter().filter(|&x| x >= cut).collect();
        for p in [0.5, 0.9, 0.99] {
            let q = RspSize::quantile(true, p);
            let above = dl.iter().filter(|&&x| x > q).count() as f64 / dl.len() as f64;
            assert!(
                (above - (1.0 - p)).abs() < 0.01 + 0.05 * (1.0 - p),
                "p {p}: {above}"
            );
        }
        // Heavy tail: multi-megabyte responses occur (Cao et al. 2004; docs/transports.md 6.1).
        assert!(dl.iter().any(|&x| x > 1_000_000));
    }

    #[test]
    fn http11_plan_has_the_model_shares_and_bounds() {
        let p = PackMimeParams {
            rate: 20.0,
            http_1_1: true,
        };
        let conns = plan(&p, 0, 2000 * SEC, 1, 0);
        let n = conns.len() as f64;
        // Mean gap 1/rate; the long-range dependence of the arrivals makes the count converge
        // slowly (variance of the mean ~ n^(2d - 1)), hence the wide band.
        assert!(
            (n / 40_000.0 - 1.0).abs() < 0.12,
            "{n} connections in 2000 s at 20/s"
        );
        let multi = conns.iter().filter(|c| c.exchanges.len() > 1).count() as f64;
        // A persistent connection has one exchange only with P(1 page) * P(1 obj | 1 page) = 0
        // (a single page always has at least 2 objects), so multi-exchange share = P_PERSISTENT.
        assert!((multi / n - P_PERSISTENT).abs() < 0.01, "{}", multi / n);
        for c in &conns {
            assert_eq!(c.exchanges[0].gap, 0);
            assert!(c
                .exchanges
                .iter()
                .all(|e| e.req == c.exchanges[0].req && e.req >= 1));
            // Server delay 1 / max(10, W) <= 0.1 s.
            assert!(c.exchanges.iter().all(|e| e.server_delay <= SEC / 10));
        }
        assert!(conns.windows(2).all(|w| w[0].start < w[1].start));
        let http10 = plan(&PackMimeParams { http_1_1: false, ..p }, 0, 100 * SEC, 1, 0);
        assert!(http10.iter().all(|c| c.exchanges.len() == 1));
    }
}
