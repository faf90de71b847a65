/* strategy: constant — the basic kernel with the filter in __constant__ memory.
 *
 * Seed: convolution_2d_constant_mem_kernel (002_*.txt), "Constant Tiled" of 003_*.txt without the
 * tile; 1D and 3D are the same loop with one axis less or more.
 *
 * Who loads what: every thread loads, for each tap, one input element N[...] from global memory;
 *   the filter element comes from constant memory, whose cache broadcasts it to the whole warp
 *   (all threads of a warp read the same F_c[j] at the same time).
 * Which threads compute: all; one output each, as in basic.
 * Arithmetic intensity: 2 OP per 4 B loaded (only N counts) = 0.5 OP/B in float32 (0.25 in
 *   float64).
 *
 * Generalised beyond the seed: any extents per axis, even ones included (anchor a: a halo of a
 *   before the output and k - 1 - a after it; a = FILTER_RADIUS = k / 2 for odd k).
 * Blocks: 256 threads (1D 256, 2D 32x8, 3D 32x4x2); grid-stride loops; 64-bit indices.
 * Limits: the filter must fit the 64 KB of constant memory (16384 float32 or 8192 float64 taps,
 *   e.g. 127x127 or 90x90); can_implement refuses larger ones with the numbers.
 */
#include "cuda/seeds/common.cuh"
#include "halo/strategy.hpp"

namespace halo::cuda {
namespace {

// The filter in constant memory: this file's module has its own 64 KB bank (each .cu file is a
// module of its own); filled before each launch, in order on the launch's stream. Declared as
// doubles for alignment and read as T.
__constant__ double F_c_storage[65536 / sizeof(double)];

template <class T>
__device__ __forceinline__ const T* constant_filter() {
  return reinterpret_cast<const T*>(F_c_storage);
}

template <class T, int K>
__global__ void __launch_bounds__(kBlock1D.x)
    constant_1d_kernel(const T* __restrict__ N, T* __restrict__ P, Geometry g) {
  const T* F_c = constant_filter<T>();
  const int Mask_Width = K ? K : g.kx;
  const int a = K ? K / 2 : g.ax;
  const i64 Width = g.nx;
  for (i64 b = blockIdx.z; b < g.batch; b += gridDim.z)
    for (i64 bx = blockIdx.x; bx < g.tiles_x; bx += gridDim.x) {
      const i64 i = bx * blockDim.x + threadIdx.x;
      if (i >= Width) continue;
      const T* Nb = N + b * Width;
      accum_t<T> Pvalue = 0;  // the sum in the accumulation type
      const i64 N_start_point = i - a;
      for (int j = 0; j < Mask_Width; j++) {
        const i64 n = N_start_point + j;
        if (n >= 0 && n < Width) Pvalue += Nb[n] * F_c[j];
      }
      P[b * Width + i] = Pvalue;
    }
}

template <class T, int K>
__global__ void __launch_bounds__(kBlock2D.count())
    constant_2d_kernel(const T* __restrict__ N, T* __restrict__ P, Geometry g) {
  const T* F_c = constant_filter<T>();
  const int kx = K ? K : g.kx, ky = K ? K : g.ky;
  const int ax = K ? K / 2 : g.ax, ay = K ? K / 2 : g.ay;
  const i64 width = g.nx, height = g.ny;
  for (i64 b = blockIdx.z; b < g.batch; b += gridDim.z)
    for (i64 by = blockIdx.y; by < g.tiles_y; by += gridDim.y)
      for (i64 bx = blockIdx.x; bx < g.tiles_x; bx += gridDim.x) {
        const i64 col = bx * blockDim.x + threadIdx.x;
        const i64 row = by * blockDim.y + threadIdx.y;
        if (col >= width || row >= height) continue;
        const T* Nb = N + b * width * height;
        T p_value = 0;
        for (int f_row = 0; f_row < ky; f_row++) {
          const i64 n_row = row - ay + f_row;
          if (n_row < 0 || n_row >= height) continue;
          for (int f_col = 0; f_col < kx; f_col++) {
            const i64 n_col = col - ax + f_col;
            if (n_col >= 0 && n_col < width)
              p_value += Nb[n_row * width + n_col] * F_c[f_row * kx + f_col];
          }
        }
        P[b * width * height + row * width + col] = p_value;
      }
}

template <class T, int K>
__global__ void __launch_bounds__(kBlock3D.count())
    constant_3d_kernel(const T* __restrict__ N, T* __restrict__ P, Geometry g) {
  const T* F_c = constant_filter<T>();
  const int kx = K ? K : g.kx, ky = K ? K : g.ky, kz = K ? K : g.kz;
  const int ax = K ? K / 2 : g.ax, ay = K ? K / 2 : g.ay, az = K ? K / 2 : g.az;
  const i64 width = g.nx, height = g.ny, depth = g.nz;
  const i64 item = width * height * depth;
  for (i64 bzb = blockIdx.z; bzb < g.tiles_z * g.batch; bzb += gridDim.z)
    for (i64 by = blockIdx.y; by < g.tiles_y; by += gridDim.y)
      for (i64 bx = blockIdx.x; bx < g.tiles_x; bx += gridDim.x) {
        const i64 b = bzb / g.tiles_z, bz = bzb % g.tiles_z;
        const i64 col = bx * blockDim.x + threadIdx.x;
        const i64 row = by * blockDim.y + threadIdx.y;
        const i64 plane = bz * blockDim.z + threadIdx.z;
        if (col >= width || row >= height || plane >= depth) continue;
        const T* Nb = N + b * item;
        T p_value = 0;
        for (int f_plane = 0; f_plane < kz; f_plane++) {
          const i64 n_plane = plane - az + f_plane;
          if (n_plane < 0 || n_plane >= depth) continue;
          for (int f_row = 0; f_row < ky; f_row++) {
            const i64 n_row = row - ay + f_row;
            if (n_row < 0 || n_row >= height) continue;
            for (int f_col = 0; f_col < kx; f_col++) {
              const i64 n_col = col - ax + f_col;
              if (n_col >= 0 && n_col < width)
                p_value += Nb[(n_plane * height + n_row) * width + n_col] *
                           F_c[(f_plane * ky + f_row) * kx + f_col];
            }
          }
        }
        P[b * item + (plane * height + row) * width + col] = p_value;
      }
}

template <class T>
void launch_constant(const Problem& p, const Launch& L, const T* N, T* P, cudaStream_t s) {
  upload_constant_filter<T>(F_c_storage, p, s);
  switch (p.rank()) {
    case 1:
      dispatch_k(SpecialisedK1D{}, L.specialised_k, [&](auto K) {
        launch_kernel(constant_1d_kernel<T, decltype(K)::value>, L, s, "constant_1d_kernel", K, p,
                      N, P, L.g);
      });
      break;
    case 2:
      dispatch_k(SpecialisedK2D{}, L.specialised_k, [&](auto K) {
        launch_kernel(constant_2d_kernel<T, decltype(K)::value>, L, s, "constant_2d_kernel", K, p,
                      N, P, L.g);
      });
      break;
    default:
      dispatch_k(SpecialisedK3D{}, L.specialised_k, [&](auto K) {
        launch_kernel(constant_3d_kernel<T, decltype(K)::value>, L, s, "constant_3d_kernel", K, p,
                      N, P, L.g);
      });
  }
}

class ConstantStrategy final : public CudaStrategy {
 public:
  ConstantStrategy() : CudaStrategy(Kernel::constant) {}
  std::string description() const override {
    return "one thread per output, filter in __constant__ memory (0.5 OP/B)";
  }

 protected:
  void launch(const Problem& p, const Launch& L, const void* in, void* out,
              cudaStream_t s) const override {
    dispatch_buffers(p.dtype(), in, out, [&](auto* i, auto* o) { launch_constant(p, L, i, o, s); });
  }
};

}  // namespace

std::unique_ptr<Strategy> make_constant_strategy() {
  return std::make_unique<ConstantStrategy>();
}

}  // namespace halo::cuda
