/* strategy helper: border pass — the boundary modes for kernels that compute zero ghosts.
 *   A strategy whose kernels pad with zeros (the TMA fills out-of-bounds boxes with zeros) runs
 *   them as they are, then this pass recomputes the outputs within the filter's reach of an
 *   edge (at most a, k - 1 - a per side and axis): one thread per output, the box's input
 *   indices per axis mapped once on the host (core/boundary.hpp) into small tables,
 *   constant-mode ghosts reading cval, summed in the dtype. The band is a thin shell of the array (16384^2 at r = 4: 0.1% of the outputs), so
 *   the pass's scattered reads cost little beside the interior.
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/boundary.hpp"
#include "cuda/border.hpp"
#include "cuda/check.cuh"

namespace halo::cuda {
namespace {

struct BorderArgs {
  std::int64_t n[3], k[3];        // canonical z, y, x
  std::int64_t lo[3], ext[3];     // the box: [lo, lo + ext) per axis
  std::int64_t batch;
  const std::int64_t* map[3];     // per axis: the input index of box coordinate lo - a + i
};

// One thread per output of the box: the three index tables (built on the host with map_index,
// -1 for a constant-mode ghost) replace the per-tap map, and the row's address is formed once per
// filter row, so a tap costs a table load, an input load and an FMA.
template <class T>
__global__ void border_kernel(const T* __restrict__ in, T* __restrict__ out,
                              const T* __restrict__ w, BorderArgs g, T cval) {
  const std::int64_t per_item = g.ext[0] * g.ext[1] * g.ext[2];
  const std::int64_t total = per_item * g.batch;
  const std::int64_t plane = g.n[1] * g.n[2];
  for (std::int64_t t = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; t < total;
       t += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t b = t / per_item, r = t % per_item;
    const std::int64_t z = r / (g.ext[1] * g.ext[2]);  // box-relative
    const std::int64_t y = (r / g.ext[2]) % g.ext[1];
    const std::int64_t x = r % g.ext[2];
    const T* src = in + b * g.n[0] * plane;
    const std::int64_t* mx = g.map[2] + x;
    T acc = T(0);
    for (std::int64_t fz = 0; fz < g.k[0]; ++fz) {
      const std::int64_t iz = g.map[0][z + fz];
      for (std::int64_t fy = 0; fy < g.k[1]; ++fy) {
        const std::int64_t iy = g.map[1][y + fy];
        const T* wr = w + (fz * g.k[1] + fy) * g.k[2];
        if (iz < 0 || iy < 0) {  // a whole ghost row of constant mode
          for (std::int64_t fx = 0; fx < g.k[2]; ++fx) acc = fma(wr[fx], cval, acc);
          continue;
        }
        const T* row = src + iz * plane + iy * g.n[2];
        for (std::int64_t fx = 0; fx < g.k[2]; ++fx) {
          const std::int64_t ix = mx[fx];
          acc = fma(wr[fx], ix < 0 ? cval : row[ix], acc);
        }
      }
    }
    out[b * g.n[0] * plane + ((g.lo[0] + z) * g.n[1] + g.lo[1] + y) * g.n[2] + g.lo[2] + x] = acc;
  }
}

template <class T>
void border_typed(const Problem& p, const T* in, T* out, cudaStream_t s) {
  const Dims3 n = p.dims3(), k = p.filter_dims3(), a = p.anchor3();
  BorderArgs g{};
  const std::int64_t nn[3] = {n.z, n.y, n.x}, kk[3] = {k.z, k.y, k.x}, aa[3] = {a.z, a.y, a.x};
  Boundary mode[3];
  std::int64_t ilo[3], ihi[3];  // per axis, the outputs whose windows stay inside
  for (int d = 0; d < 3; ++d) {
    g.n[d] = nn[d];
    g.k[d] = kk[d];
    const int axis = d - (kMaxRank - p.rank());
    mode[d] = axis < 0 ? Boundary::constant : p.mode(axis);
    ilo[d] = std::min(aa[d], nn[d]);
    ihi[d] = std::max(ilo[d], nn[d] - (kk[d] - 1 - aa[d]));
  }
  g.batch = p.batch();
  // The band as disjoint boxes: axis d's two slabs, within the interior of the axes before it;
  // for each, its three index tables, all in one host array copied once.
  struct Planned {
    std::int64_t lo[3], ext[3];
    std::size_t table[3];
  };
  std::vector<Planned> boxes;
  std::vector<std::int64_t> tables;
  for (int d = 0; d < 3; ++d)
    for (int side = 0; side < 2; ++side) {
      Planned b{};
      for (int e = 0; e < 3; ++e) {
        b.lo[e] = e < d ? ilo[e] : 0;
        b.ext[e] = e < d ? ihi[e] - ilo[e] : nn[e];
      }
      b.lo[d] = side == 0 ? 0 : ihi[d];
      b.ext[d] = side == 0 ? ilo[d] : nn[d] - ihi[d];
      if (b.ext[0] * b.ext[1] * b.ext[2] <= 0) continue;
      for (int e = 0; e < 3; ++e) {
        b.table[e] = tables.size();
        for (std::int64_t i = 0; i < b.ext[e] + kk[e] - 1; ++i)
          tables.push_back(detail::map_index(b.lo[e] - aa[e] + i, nn[e], mode[e]));
      }
      boxes.push_back(b);
    }
  if (boxes.empty()) return;
  const std::vector<double>& w64 = p.correlation_weights();
  const std::vector<T> w(w64.begin(), w64.end());
  const std::size_t wbytes = w.size() * sizeof(T), tbytes = tables.size() * sizeof(std::int64_t);
  const std::size_t woff = (tbytes + 255) / 256 * 256;
  char* dmem = nullptr;
  HALO_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&dmem), woff + wbytes, s),
                  "allocating " + std::to_string(woff + wbytes) + " B of device memory for the "
                  "border pass's index tables and weights");
  HALO_CUDA_CHECK(cudaMemcpyAsync(dmem, tables.data(), tbytes, cudaMemcpyHostToDevice, s),
                  "copying the border pass's index tables to the device");
  HALO_CUDA_CHECK(cudaMemcpyAsync(dmem + woff, w.data(), wbytes, cudaMemcpyHostToDevice, s),
                  "copying the border pass's weights to the device");
  const auto* dtables = reinterpret_cast<const std::int64_t*>(dmem);
  const auto* dw = reinterpret_cast<const T*>(dmem + woff);
  for (const Planned& b : boxes) {
    for (int e = 0; e < 3; ++e) {
      g.lo[e] = b.lo[e];
      g.ext[e] = b.ext[e];
      g.map[e] = dtables + b.table[e];
    }
    const std::int64_t count = b.ext[0] * b.ext[1] * b.ext[2] * g.batch;
    const int threads = 256;
    const std::int64_t blocks = std::min<std::int64_t>((count + threads - 1) / threads, 1 << 16);
    border_kernel<T><<<unsigned(blocks), threads, 0, s>>>(in, out, dw, g, T(p.cval()));
    HALO_CUDA_CHECK_LAUNCH("launching the border pass on " + p.describe());
  }
  HALO_CUDA_CHECK(cudaFreeAsync(dmem, s), "freeing the border pass's tables and weights");
}

}  // namespace

void border_pass(const Problem& p, const void* in, void* out, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  if (p.dtype() == DType::f32)
    border_typed(p, static_cast<const float*>(in), static_cast<float*>(out), s);
  else
    border_typed(p, static_cast<const double*>(in), static_cast<double*>(out), s);
}

}  // namespace halo::cuda
