// Filter analysis on the host in float64: a filter's rank-1 factors, a problem's weights as
// one 1-D window per axis (what the separable strategies run), and as a sum of a few such
// products (what cpu_lowrank runs).
#pragma once

#include <array>
#include <mutex>
#include <optional>
#include <vector>

#include "halo/halo.hpp"
#include "halo/strategy.hpp"

namespace halo::detail {

// The 1-D factors of a rank-1 filter: F[i0, i1, i2] = f[0][i0] * f[1][i1] * f[2][i2] (one
// factor per axis of the filter's rank), up to a relative residual. A filter of one axis is its
// own factor.
struct RankOneFactors {
  std::vector<std::vector<double>> f;  // f[a]: extents()[a] weights
  double residual = 0;                 // max |F - product| / max |F| (0 for the zero filter)
};

// The rank-1 factors of `filter`, or nullopt where some weight differs from the product of the
// factors by more than rel_tol * max |F|. The factors are the fibres through the weight of
// largest magnitude, p: f[0] = F(.., p1, p2), f[a] = F(p with axis a free) / F(p) for a > 0 (so
// |f[a]| <= 1 there and f[0] carries the scale). Exact for outer products up to float64 rounding
// (a few ulps of max |F|); the default tolerance accepts those and refuses any filter whose
// nearest outer product would change a result by more than float64 summation itself does.
std::optional<RankOneFactors> rank_one_factors(const Filter& filter, double rel_tol = 1e-12);

// A problem's correlation weights (folded, flipped for convolve, anchored) as one centred 1-D
// window per canonical axis (z, y, x; Problem::dims3()): w[a][R_a + d] weighs the input at offset
// d from the output along axis a, R_a = max(anchor, k - 1 - anchor), zeros where the filter has
// no tap. Every weight of the problem equals the product of its three windows' weights to 1e-12
// of the largest. Axes of filter extent 1 hold {1}; the scale they carry in the factors goes
// into the window of the fastest axis that is longer (x where none is).
struct AxisWindows {
  std::array<std::vector<double>, 3> w;  // z, y, x
  std::array<int, 3> radius{0, 0, 0};    // R_a
  int long_axes = 0;                     // axes whose filter extent exceeds 1
  std::int64_t taps = 0;                 // the taps of the long axes' factors together
};
// Factored once per problem, by the first caller (Problem::analysis); every caller then reads the
// same answer.
const std::optional<AxisWindows>& separable_windows(const Problem& p);

// What Problem::analysis() holds: the analyses of the folded filter that several strategies
// read, each made once, by the first that asks (std::call_once: copies of a problem, shared by
// threads, share it).
struct FilterAnalysis {
  std::once_flag windows_once;
  std::optional<AxisWindows> windows;
};

// A problem's correlation weights (as separable_windows sees them) as a sum of separable terms:
// W = sum_t z_t (x) y_t (x) x_t + E, each term one centred window per canonical axis (an
// AxisWindows), trimmed to the smallest radius that holds its nonzero weights; a window of
// one weight sits at radius 0, and where a term has longer windows its value is carried by them,
// so that window is exactly {1} (no pass). Two forms, the first that applies:
//  - axis lines (`axis_lines`, exact): every nonzero weight lies on one of the lines through a
//    common point p along the long axes (the 2-D and 3-D Laplacian and sharpen, crosses); one
//    term per axis whose line holds a nonzero weight: that line along its axis, a single 1 at
//    p's offset on the others. The weight at p goes to the last such axis's line. E = 0.
//  - SVD (filters of exactly two long axes, K_a x K_b, at most kMaxSvdTaps taps): W = U S V^T in
//    float64 (Eigen's BDCSVD); term t is s_t u_t along the first long axis and v_t along the
//    second. The terms kept are the fewest whose dropped singular values sum to at most
//    rel_tol * s_0 (by default the problem's dtype's: kLowRankTolF64, 1e-12, below float64's
//    rounding of the sums over the terms, so the truncation E, of nuclear norm `dropped`, adds
//    less than |E| sum |x|; kLowRankTolF32, 2^-20 = 16 u of float32: an output moves by at
//    most 16 u s_0 |x|_2 over its window, the order of the FFT's normwise bound, and weights
//    rounded to float32, whose rounding spreads singular values of 1e-8 s_0 over every rank,
//    keep the rank of the filter they round). Weights in rows or columns of W that are zero are
//    set exactly zero in the vectors, and a vector symmetric to 1e-14 of its largest weight
//    (float64; 2^-24 in float32) is made exactly symmetric (the paired kernels then apply).
// nullopt for a filter with fewer than two long axes, a zero filter, or one that is neither
// (three long axes and not axis lines; more than kMaxSvdTaps taps). A rank-1 filter gives one
// term (cpu_separable's); `residual` is max |W - sum of terms| over the weights, in float64.
struct LowRankTerms {
  std::vector<AxisWindows> terms;
  bool axis_lines = false;
  double largest = 0;   // the largest singular value (SVD form)
  double dropped = 0;   // the sum of the dropped singular values (SVD form)
  double residual = 0;  // max |W - sum_t term_t|
};
constexpr std::int64_t kMaxSvdTaps = 1 << 14;
constexpr double kLowRankTolF64 = 1e-12, kLowRankTolF32 = 0x1p-20;
// rel_tol < 0: the problem's dtype's (kLowRankTolF32 or kLowRankTolF64).
std::optional<LowRankTerms> low_rank_terms(const Problem& p, double rel_tol = -1);

// The dense weights of one term in the problem's folded filter frame (filter_dims3, anchor3):
// the product of its windows at each tap (what the term adds to the correlation weights).
std::vector<double> term_weights(const Problem& p, const AxisWindows& t);

// A window whose nonzero weights are one run of k equal weights c at indices [lo, lo + k): a
// box (uniform_filter), which the separable strategies sum without multiplying per tap.
struct BoxRun {
  int lo = 0, k = 0;
  double c = 0;
};
std::optional<BoxRun> box_run(const std::vector<double>& w);

// Weights that are whole multiples of one step, w[i] = m[i] * step (|m[i]| <= 2^20; the step
// the smallest nonzero |w| over the least whole number that makes every ratio whole): a box of
// weights 1/K (m all 1), a box folded by the modes (sums of its weights), a binomial. Strategies
// sum with the whole numbers m and scale the sum once (by whole_reciprocal(step)), so that a mean
// of a constant region is the constant exactly, as SciPy's uniform_filter gives it. Each m[i] is
// whole to 64 ulps plus `slack` of its magnitude: what the sums of a fold round (fold_slack).
// nullopt for a zero filter or any other.
struct Multiples {
  std::vector<double> m;
  double step = 0;
};
std::optional<Multiples> multiples(const std::vector<double>& w, double slack = 0);
// The slack of weights folded from a box whose largest weight is `spread` times its smallest (or
// the product of such ratios over the windows of a separable filter): m equal weights summed one
// by one are off by up to m/4 ulps; at most 2^-40.
double fold_slack(double spread);
// The whole number d, 1 <= d <= 2^24, with s = 1/d to `tol` relative (a mean's weight, or the
// product of the steps of its windows): by default 2^-40, what the sums of a fold round; a
// float32 problem passes kWholeReciprocalTolF32, so that weights read as float32 (1/9 rounded
// to 24 bits) are the mean they stand for, as SciPy's float64 sums of them round to it. 0
// otherwise.
constexpr double kWholeReciprocalTol = 0x1p-40, kWholeReciprocalTolF32 = 0x1p-22;
double whole_reciprocal(double s, double tol = kWholeReciprocalTol);

// Running sums over a box of k taps (Summation::running) restart from a direct sum of the
// window every running_restart(k) outputs along their axis, and at the start of every unit of
// work, so each output carries the rounding of at most that many add-subtract steps
// (docs/ACCURACY.md, Box filters). A restart costs k adds: at most one per output.
constexpr int running_restart(int k) { return k > 32 ? k : 32; }

}  // namespace halo::detail
