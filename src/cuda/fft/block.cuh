// What the shared-memory transforms (rows.cu, tiles.cu) share: DFTs of 2 to 16 values in
// registers, radix 2 with constant factors, the twiddles between passes riding in the first
// butterflies as fused multiply-adds (docs/ACCURACY.md, FFT: transforms in shared memory); the
// read of an element through a mode; the grid of a kernel that strides over pairs.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>

#include "core/boundary.hpp"
#include "cuda/launch.cuh"
#include "cuda/primitives/device.cuh"

namespace halo::cuda::fftblock {

// a times b, or times conj(b) for the inverse.
template <bool INV>
__device__ __forceinline__ float2 cmul(float2 a, float2 b) {
  if (INV) b.y = -b.y;
  return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

// The butterfly (e + w o, e - w o), w = exp(-+ 2 pi i m / 16) (forward: minus); m a constant
// once unrolled. w = 1 and -+i cost four additions; any other w four FMAs for e + w o and two for
// e - w o = 2 e - (e + w o), against six and four for the product and the two sums apart.
template <bool INV>
__device__ __forceinline__ void bfly(float2& e, float2& o, int m) {
  constexpr float c1 = 0.923879532511286756f, c2 = 0.707106781186547524f,
                  c3 = 0.382683432365089772f;
  float c = 0, s = 0;
  switch (m) {
    case 0: {
      const float2 x = make_float2(e.x + o.x, e.y + o.y);
      o = make_float2(e.x - o.x, e.y - o.y);
      e = x;
      return;
    }
    case 4: {  // w o = (o.y, -o.x) forward, (-o.y, o.x) inverse
      const float2 t = INV ? make_float2(-o.y, o.x) : make_float2(o.y, -o.x);
      const float2 x = make_float2(e.x + t.x, e.y + t.y);
      o = make_float2(e.x - t.x, e.y - t.y);
      e = x;
      return;
    }
    case 1:
      c = c1, s = c3;
      break;
    case 2:
      c = c2, s = c2;
      break;
    case 3:
      c = c3, s = c1;
      break;
    case 5:
      c = -c3, s = c1;
      break;
    case 6:
      c = -c2, s = c2;
      break;
    default:
      c = -c1, s = c3;
      break;  // 7
  }
  if (!INV) s = -s;
  const float2 x = make_float2(fmaf(c, o.x, fmaf(-s, o.y, e.x)), fmaf(c, o.y, fmaf(s, o.x, e.y)));
  o = make_float2(fmaf(2.0f, e.x, -x.x), fmaf(2.0f, e.y, -x.y));
  e = x;
}

// The butterfly (a + w b, a - w b) for a twiddle w loaded from the table (conjugated for the
// inverse): four FMAs and two.
template <bool INV>
__device__ __forceinline__ void bfly_by(float2& a, float2& b, float2 w) {
  if (INV) w.y = -w.y;
  const float2 x =
      make_float2(fmaf(w.x, b.x, fmaf(-w.y, b.y, a.x)), fmaf(w.x, b.y, fmaf(w.y, b.x, a.y)));
  b = make_float2(fmaf(2.0f, a.x, -x.x), fmaf(2.0f, a.y, -x.y));
  a = x;
}

// The DFT of R values (R = 2, 4, 8, 16) in place, natural order in and out, each input x[r]
// first multiplied by the twiddle w[r] where TW (w[0] too unless FIRST: the sub-transform that
// holds the pass's input 0, whose twiddle is 1): radix 2, decimation in time, the factors
// exp(-+ 2 pi i k / R) constants. The twiddles ride in the first butterflies (bfly_by).
template <int R, bool INV, bool TW, bool FIRST>
__device__ __forceinline__ void dft(float2 (&x)[R], const float2 (&w)[R]) {
  if constexpr (R == 2) {
    if constexpr (TW) {
      if constexpr (!FIRST) x[0] = cmul<INV>(x[0], w[0]);
      bfly_by<INV>(x[0], x[1], w[1]);
    } else {
      bfly<INV>(x[0], x[1], 0);
    }
  } else {
    constexpr int M = R / 2;
    float2 e[M], o[M], we[M], wo[M];
#pragma unroll
    for (int k = 0; k < M; ++k) {
      e[k] = x[2 * k], o[k] = x[2 * k + 1];
      we[k] = w[2 * k], wo[k] = w[2 * k + 1];
    }
    dft<M, INV, TW, FIRST>(e, we);
    dft<M, INV, TW, false>(o, wo);
#pragma unroll
    for (int k = 0; k < M; ++k) {
      bfly<INV>(e[k], o[k], k * (16 / R));
      x[k] = e[k], x[k + M] = o[k];
    }
  }
}

// A pass over a thread's 16 values as 16 / R radix-R butterflies: butterfly i takes values
// i + (16 / R) r (r < R), each but the first twiddled by tw(i, r), and writes them back in place.
template <int R, bool INV, class Tw>
__device__ __forceinline__ void butterflies(float2 (&v)[16], Tw tw) {
  constexpr int B = 16 / R;
#pragma unroll
  for (int i = 0; i < B; ++i) {
    float2 x[R], w[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      x[r] = v[i + B * r];
      w[r] = r == 0 ? make_float2(1, 0) : tw(i, r);
    }
    dft<R, INV, true, true>(x, w);
#pragma unroll
    for (int r = 0; r < R; ++r) v[i + B * r] = x[r];
  }
}

// Shared-memory index of element i: one pad slot every 16, so that the passes' strided writes
// (stride 16 in the first) and their reads spread over the banks.
__device__ __forceinline__ int pad(int i) { return i + (i >> 4); }

// Element gx of a row of n through the mode (cval where it says so).
__device__ __forceinline__ float fetch(const float* __restrict__ row, i64 gx, i64 n, Boundary mode,
                                       float cval) {
  if (gx >= 0 && gx < n) return row[gx];
  const i64 ix = detail::map_index(gx, n, mode);
  return ix < 0 ? cval : row[ix];
}

// Blocks of `kernel` (threads each, smem bytes of dynamic shared memory) for `pairs` pairs taken
// in a grid-stride loop: eight waves' worth at most (tests lower the grid's limit, so that blocks
// take several pairs).
inline unsigned pair_grid(const void* kernel, int threads, std::size_t smem, i64 pairs) {
  const int per_sm = prim::occupancy(kernel, threads, smem);
  const int sms = prim::current_device_facts().multiprocessors;
  const i64 most = std::min(i64(sms) * std::max(per_sm, 1) * 8, grid_limits_for_testing().x);
  return unsigned(std::clamp<i64>(pairs, 1, most));
}

}  // namespace halo::cuda::fftblock
