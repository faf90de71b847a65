/* strategy: basic — one thread per output element, the filter F read from global memory.
 *
 * Seed: convolution_2d_basic_kernel (002_*.txt) and naive_conv (003_*.txt); 1D and 3D are the same
 * loop with one axis less or more.
 *
 * Who loads what: every thread loads, for each of the k^d taps, one input element N[...] and one
 *   filter element F[...] from global memory. Ghost cells (outside N) are skipped, i.e. count 0.
 * Which threads compute: all of them; thread (x, y, z) of block (bx, by, bz) computes the output
 *   P at (bx * blockDim.x + x, by * blockDim.y + y, ...) when it lies inside the array.
 * Arithmetic intensity: 2 OP (one multiply, one add) per 8 B loaded (4 B of N, 4 B of F) =
 *   0.25 OP/B in float32 (0.125 in float64), whatever the filter size. The caches (L1/L2) catch
 *   most of the repeated loads on a real GPU; the model counts what the code asks for.
 *
 * Generalised beyond the seed: any filter extents per axis, even ones included. The filter covers
 *   N[i - a .. i - a + k - 1] with the anchor a (a halo of a before the output, k - 1 - a after);
 *   for an odd width a = FILTER_RADIUS = k / 2 on both sides.
 * Blocks: 256 threads (1D 256, 2D 32x8, 3D 32x4x2). Grid-stride loops over the blocks, so any
 *   array fits the grid limits (gridDim.y/z <= 65535); 64-bit element indices.
 * Limits: none beyond memory (the filter lives in global memory, any size).
 */
#include "cuda/seeds/common.cuh"
#include "halo/strategy.hpp"

namespace halo::cuda {
namespace {

// Filter extents and anchors of a kernel: compile-time for the specialised odd widths K (the
// seeds' FILTER_RADIUS = K / 2), from the geometry otherwise (K = 0).

template <class T, int K>
__global__ void __launch_bounds__(kBlock1D.x)
    basic_1d_kernel(const T* __restrict__ N, const T* __restrict__ F, T* __restrict__ P,
                    Geometry g) {
  const int Mask_Width = K ? K : g.kx;
  const int a = K ? K / 2 : g.ax;  // halo before the output (the seeds' radius)
  const i64 Width = g.nx;
  for (i64 b = blockIdx.z; b < g.batch; b += gridDim.z)          // batch items
    for (i64 bx = blockIdx.x; bx < g.tiles_x; bx += gridDim.x) {  // blocks of outputs
      const i64 i = bx * blockDim.x + threadIdx.x;
      if (i >= Width) continue;
      const T* Nb = N + b * Width;
      accum_t<T> Pvalue = 0;  // the sum in the accumulation type
      const i64 N_start_point = i - a;
      for (int j = 0; j < Mask_Width; j++) {
        const i64 n = N_start_point + j;
        if (n >= 0 && n < Width) Pvalue += Nb[n] * F[j];  // ghost cells count 0
      }
      P[b * Width + i] = Pvalue;
    }
}

template <class T, int K>
__global__ void __launch_bounds__(kBlock2D.count())
    basic_2d_kernel(const T* __restrict__ N, const T* __restrict__ F, T* __restrict__ P,
                    Geometry g) {
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
          if (n_row < 0 || n_row >= height) continue;  // a ghost row
          for (int f_col = 0; f_col < kx; f_col++) {
            const i64 n_col = col - ax + f_col;
            if (n_col >= 0 && n_col < width)
              p_value += Nb[n_row * width + n_col] * F[f_row * kx + f_col];
          }
        }
        P[b * width * height + row * width + col] = p_value;
      }
}

template <class T, int K>
__global__ void __launch_bounds__(kBlock3D.count())
    basic_3d_kernel(const T* __restrict__ N, const T* __restrict__ F, T* __restrict__ P,
                    Geometry g) {
  const int kx = K ? K : g.kx, ky = K ? K : g.ky, kz = K ? K : g.kz;
  const int ax = K ? K / 2 : g.ax, ay = K ? K / 2 : g.ay, az = K ? K / 2 : g.az;
  const i64 width = g.nx, height = g.ny, depth = g.nz;
  const i64 item = width * height * depth;
  // grid.z walks (batch item, block along z) pairs.
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
                           F[(f_plane * ky + f_row) * kx + f_col];
            }
          }
        }
        P[b * item + (plane * height + row) * width + col] = p_value;
      }
}

// Host side: the filter goes to a device buffer (stream-ordered allocation), then one launch.
template <class T>
void launch_basic(const Problem& p, const Launch& L, const T* N, T* P, cudaStream_t s) {
  const std::vector<T> w = weights_as<T>(p);
  const std::size_t fbytes = w.size() * sizeof(T);
  void* F = nullptr;
  HALO_CUDA_CHECK(cudaMallocAsync(&F, fbytes, s),
                  "allocating " + std::to_string(fbytes) + " B of device memory for the filter");
  HALO_CUDA_CHECK(cudaMemcpyAsync(F, w.data(), fbytes, cudaMemcpyHostToDevice, s),
                  "copying the " + p.filter().shape_string() + " filter to the device");
  const T* Fd = static_cast<const T*>(F);
  try {
    switch (p.rank()) {
      case 1:
        dispatch_k(SpecialisedK1D{}, L.specialised_k, [&](auto K) {
          launch_kernel(basic_1d_kernel<T, decltype(K)::value>, L, s, "basic_1d_kernel", K, p, N,
                        Fd, P, L.g);
        });
        break;
      case 2:
        dispatch_k(SpecialisedK2D{}, L.specialised_k, [&](auto K) {
          launch_kernel(basic_2d_kernel<T, decltype(K)::value>, L, s, "basic_2d_kernel", K, p, N,
                        Fd, P, L.g);
        });
        break;
      default:
        dispatch_k(SpecialisedK3D{}, L.specialised_k, [&](auto K) {
          launch_kernel(basic_3d_kernel<T, decltype(K)::value>, L, s, "basic_3d_kernel", K, p, N,
                        Fd, P, L.g);
        });
    }
  } catch (...) {
    cudaFreeAsync(F, s);
    throw;
  }
  HALO_CUDA_CHECK(cudaFreeAsync(F, s), "freeing the device copy of the filter");
}

class BasicStrategy final : public CudaStrategy {
 public:
  BasicStrategy() : CudaStrategy(Kernel::basic) {}
  std::string description() const override {
    return "one thread per output, filter in global memory (seed basic kernel, 0.25 OP/B)";
  }

 protected:
  void launch(const Problem& p, const Launch& L, const void* in, void* out,
              cudaStream_t s) const override {
    dispatch_buffers(p.dtype(), in, out, [&](auto* i, auto* o) { launch_basic(p, L, i, o, s); });
  }
};

}  // namespace

std::unique_ptr<Strategy> make_basic_strategy() { return std::make_unique<BasicStrategy>(); }

}  // namespace halo::cuda
