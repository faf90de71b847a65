// The plan of the separable passes (make_plan, planner.cu) and what the files of this folder call
// across each other: the planner's functions (planner.cu) and each kernel family's launch
// (fused.cu, volume.cu, box_and_long.cu). The folder's overview: geometry.cuh.
#pragma once

#include <string>
#include <vector>

#include "cuda/separable/geometry.cuh"
#include "halo/strategy.hpp"

namespace halo::cuda::sep {

// ---------------------------------------------------------------------------------------------
// Host side.
// ---------------------------------------------------------------------------------------------
// How a problem runs: its windows, and per pass the kernel's radii and geometry.
struct SepPass {
  int rx = 0, ry = 0;  // compiled radii
  int wy = 1;  // the window (index into AxisWindows::w) read along y: y, or z in the z pass
  SepGeom g{};
  double cval_scale = 1;  // constant mode: cval times this (the factors applied before)
  // Box columns (box_col_kernel; rx = ry = 0): a box of colk taps down the rows, output y
  // summing rows y + cola .. y + cola + colk - 1, then g.scale. 0: not.
  int colk = 0, cola = 0;
  bool lng = false;   // long columns (long_col_kernel; rx = ry = 0) of window wy
  bool lrow = false;  // long rows (long_row_kernel; rx = ry = 0) of the x window
  i64 tma_chunk = 0;  // fused x-y passes: rows per chunk where the tiles come by tensor maps
  bool vol = false;   // x, y and z in one pass (vol_kernel; rx = ry = its radius), shape in vg
  VolGeom vg{};
  // A pass of the fused kernels with a box factor (g.scale.on), whether its running sums or its
  // FMAs (fewer than kSepBoxTaps taps, float64, direct sums) sum it: it runs the box
  // instantiation, the one that scales (the others carry no code for it).
  bool box_scale = false;
};
// Taps of a long pass's window (long rows: x; long columns: wy).
inline int long_taps_of(const SepPass& s, const detail::AxisWindows& win) {
  return 2 * win.radius[s.lrow ? 2 : s.wy] + 1;
}
// Box factors as taps of 1 and a scale per pass (SumScale), in every plan but a term of a sum:
// each box window (detail::box_run) becomes its run of ones. Where the boxes' weights multiply
// to 1 over the product of their taps (a uniform filter, whose 1 / K the factoring carries in
// one factor or spreads over them; to 8 ulps), each pass divides by its own boxes' taps, so
// that every pass over a constant region gives the constant exactly; else each pass multiplies
// by its boxes' weights.
struct BoxUnits {
  std::array<int, 3> k{0, 0, 0};     // axis a's box taps (z, y, x); 0: not a box
  std::array<double, 3> c{1, 1, 1};  // its weight
  bool divide = false;
  // The sum of axis a's weights as the passes apply them (a ghost of cval seen through them).
  double sum(const detail::AxisWindows& win, int a) const {
    if (k[a] > 0) return divide ? 1.0 : double(k[a]) * c[a];
    double s = 0;
    for (double w : win.w[a]) s += w;
    return s;
  }
  // The scale of a pass over `axes`.
  SumScale scale(const std::vector<int>& axes) const {
    double kp = 1, cp = 1;
    bool any = false;
    for (int a : axes)
      if (k[a] > 0) {
        any = true;
        kp *= double(k[a]);
        cp *= c[a];
      }
    SumScale s;
    if (!any || (!divide && cp == 1.0)) return s;  // (boxes of weight 1: their sums)
    s.on = 1;
    if (divide && kp < double(1 << 24)) {  // (the product of taps exact in float32)
      s.y = prim::Reciprocal<double>::of(kp);
      s.yf = prim::Reciprocal<float>::of(float(kp));
    } else {
      s.y = prim::Reciprocal<double>::times(divide ? 1.0 / kp : cp);
      s.yf = prim::Reciprocal<float>::times(float(s.y.hi));
    }
    return s;
  }
};

struct SepPlan {
  detail::AxisWindows win;  // box factors as runs of ones (BoxUnits)
  BoxUnits units;
  std::vector<SepPass> passes;
  std::string why_not;  // non-empty: cannot run
};

inline i64 ceil_div64(i64 a, i64 b) { return (a + b - 1) / b; }

// The window of radius `have` centred in one of radius R (zeros outside), in T.
template <class T, int R>
Taps<T, R> taps_of(const std::vector<double>& w) {
  Taps<T, R> t{};
  const int have = int(w.size() / 2);
  for (int j = 0; j <= 2 * have; ++j) t.w[R - have + j] = T(w[std::size_t(j)]);
  return t;
}

// planner.cu
bool sep_tma_wanted(int r, const Problem& p);
bool vol_tma_wanted(int r, const Problem& p);
void set_chunk(SepGeom& g, i64 rows, i64 chunk);
bool sep_pass_tma(const SepPass& s, const Problem& p);
SepPlan make_plan(const Problem& p, const detail::AxisWindows& win_in, bool term);
SepPlan make_plan(const Problem& p);
bool box_rows(const SepPass& s);
template <class T>  // float, double
void run_pass(const T* in, T* out, const SepPass& s, const detail::AxisWindows& win,
              const Problem& p, cudaStream_t stream, int sms, NonFiniteNote note);
double pass_taps(const SepPass& s, const detail::AxisWindows& win);
std::string describe_factors(const Problem& p, const detail::AxisWindows& win);
std::string describe_passes(const SepPlan& plan, const Problem& p);

// fused.cu: a pass of separable_kernel.
template <class T, bool BOX>  // float, double
bool run_pass_as(const T* in, T* out, const SepPass& s, const detail::AxisWindows& win,
                 const Problem& p, cudaStream_t stream, int sms, NonFiniteNote note);

// volume.cu
void launch_vol(const float* in, float* out, const SepPass& s, const detail::AxisWindows& win,
                const Problem& p, cudaStream_t stream, int sms, NonFiniteNote note);

// box_and_long.cu
void launch_box_rows(const float* in, float* out, const SepPass& s, const detail::AxisWindows& win,
                     const Problem& p, cudaStream_t stream, int sms, NonFiniteNote note);
void launch_box_cols(const float* in, float* out, const SepPass& s, const Problem& p,
                     cudaStream_t stream, int sms, NonFiniteNote note);
void launch_long_cols(const float* in, float* out, const SepPass& s, const detail::AxisWindows& win,
                      const Problem& p, cudaStream_t stream, int sms, NonFiniteNote note);
void launch_long_rows(const float* in, float* out, const SepPass& s, const detail::AxisWindows& win,
                      const Problem& p, cudaStream_t stream, int sms, NonFiniteNote note);

}  // namespace halo::cuda::sep
