/* strategy: tiled_input — shared-memory tiling, block = input tile (PMPP Fig. 7.12).
 *
 * Seed: convolution_tiled_2D_const_mem_kernel (004_*.txt, "方案 A"), tiled_conv (003_*.txt),
 * convolution_2d_tiled_const_mem_kernel (002_*.txt); design 2 of the 1D notes (000_*, 001_*).
 *
 * Who loads what: the block has one thread per element of the input tile (IN_TILE_DIM per axis:
 *   1D 1024, 2D 32x32, 3D 16x8x8). Phase 1: every thread loads its one element of N (0 for a
 *   ghost cell) into shared memory N_s; barrier. The filter is in constant memory (F_c).
 * Which threads compute: phase 2, only the inner threads, OUT_TILE_DIM = IN_TILE_DIM - (k - 1)
 *   per axis; the outer ring (a threads before, k - 1 - a after, per axis) only loaded. Each inner
 *   thread computes one output from N_s alone.
 * Arithmetic intensity (interior tiles, float32): OUT^d * k^d * 2 OP / (IN^d * 4 B); 2D 5x5 in a
 *   32x32 tile: 28^2 * 25 * 2 / (32^2 * 4) = 9.57 OP/B, 9x9: 22.78 OP/B (bound k^d / 2).
 *
 * Generalised beyond the seed: asymmetric halos (even widths): the tile starts a elements before
 *   the output tile (a = the anchor; FILTER_RADIUS for odd k). 1D and 3D as the 2D kernel with one
 *   axis less or more. A batch of items and arrays beyond the grid limits by grid-stride loops
 *   over tiles (a barrier ends each tile, since the next one overwrites N_s); 64-bit indices.
 * Limits: k <= IN_TILE_DIM on every axis (else no output is left in the tile: 1D k <= 1024,
 *   2D k <= 32, 3D kx <= 16, ky, kz <= 8); the filter in 64 KB of constant memory. can_implement
 *   refuses the rest with the numbers.
 */
#include "cuda/seeds/common.cuh"
#include "halo/strategy.hpp"

namespace halo::cuda {
namespace {

__constant__ double F_c_storage[65536 / sizeof(double)];  // the filter, read as T (see constant.cu)

template <class T>
__device__ __forceinline__ const T* constant_filter() {
  return reinterpret_cast<const T*>(F_c_storage);
}

template <class T, int K>
__global__ void __launch_bounds__(kTile1D.x)
    tiled_input_1d_kernel(const T* __restrict__ N, T* __restrict__ P, Geometry g) {
  constexpr int IN_TILE_DIM = kTile1D.x;  // = blockDim.x
  const T* F_c = constant_filter<T>();
  const int Mask_Width = K ? K : g.kx;
  const int a = K ? K / 2 : g.ax;  // halo before the output tile
  const int OUT_TILE_DIM = IN_TILE_DIM - (Mask_Width - 1);
  const int tx = threadIdx.x;
  __shared__ T N_s[IN_TILE_DIM];
  const i64 Width = g.nx;
  for (i64 b = blockIdx.z; b < g.batch; b += gridDim.z)
    for (i64 bx = blockIdx.x; bx < g.tiles_x; bx += gridDim.x) {
      const T* Nb = N + b * Width;
      // Phase 1: thread tx loads input element index_i (its output tile shifted by -a).
      const i64 index_i = bx * OUT_TILE_DIM + tx - a;
      N_s[tx] = (index_i >= 0 && index_i < Width) ? Nb[index_i] : T(0);
      __syncthreads();
      // Phase 2: threads a .. a + OUT_TILE_DIM - 1 compute output index_i.
      const int tile_i = tx - a;
      if (index_i >= 0 && index_i < Width) {
        if (tile_i >= 0 && tile_i < OUT_TILE_DIM) {
          T output = 0;
          for (int j = 0; j < Mask_Width; j++) output += F_c[j] * N_s[tile_i + j];
          P[b * Width + index_i] = output;
        }
      }
      __syncthreads();  // the next tile of the loop overwrites N_s
    }
}

template <class T, int K>
__global__ void __launch_bounds__(kTile2D.count())
    tiled_input_2d_kernel(const T* __restrict__ N, T* __restrict__ P, Geometry g) {
  constexpr int IN_TILE_DIM_X = kTile2D.x, IN_TILE_DIM_Y = kTile2D.y;  // = blockDim
  const T* F_c = constant_filter<T>();
  const int kx = K ? K : g.kx, ky = K ? K : g.ky;
  const int ax = K ? K / 2 : g.ax, ay = K ? K / 2 : g.ay;
  const int OUT_TILE_DIM_X = IN_TILE_DIM_X - (kx - 1), OUT_TILE_DIM_Y = IN_TILE_DIM_Y - (ky - 1);
  const int tx = threadIdx.x, ty = threadIdx.y;
  __shared__ T N_s[IN_TILE_DIM_Y][IN_TILE_DIM_X];
  const i64 width = g.nx, height = g.ny;
  for (i64 b = blockIdx.z; b < g.batch; b += gridDim.z)
    for (i64 by = blockIdx.y; by < g.tiles_y; by += gridDim.y)
      for (i64 bx = blockIdx.x; bx < g.tiles_x; bx += gridDim.x) {
        const T* Nb = N + b * width * height;
        // 1) the element this thread loads (and, if inner, computes): -a shifts to the tile's
        //    top-left corner
        const i64 col = bx * OUT_TILE_DIM_X + tx - ax;
        const i64 row = by * OUT_TILE_DIM_Y + ty - ay;
        // 2) load the input tile into shared memory; ghost cells -> 0
        if (row >= 0 && row < height && col >= 0 && col < width)
          N_s[ty][tx] = Nb[row * width + col];
        else
          N_s[ty][tx] = T(0);
        __syncthreads();
        // 3) only the inner threads compute an output (two separate ifs: the first for the
        //    array's edge, the second deactivates the outer ring)
        const int tileCol = tx - ax, tileRow = ty - ay;
        if (col >= 0 && col < width && row >= 0 && row < height) {
          if (tileCol >= 0 && tileCol < OUT_TILE_DIM_X && tileRow >= 0 &&
              tileRow < OUT_TILE_DIM_Y) {
            accum_t<T> Pvalue = 0;  // the sum in the accumulation type
            for (int fRow = 0; fRow < ky; fRow++)
              for (int fCol = 0; fCol < kx; fCol++)
                Pvalue += F_c[fRow * kx + fCol] * N_s[tileRow + fRow][tileCol + fCol];
            P[b * width * height + row * width + col] = Pvalue;
          }
        }
        __syncthreads();  // the next tile of the loop overwrites N_s
      }
}

template <class T, int K>
__global__ void __launch_bounds__(kTile3D.count())
    tiled_input_3d_kernel(const T* __restrict__ N, T* __restrict__ P, Geometry g) {
  constexpr int IN_TILE_DIM_X = kTile3D.x, IN_TILE_DIM_Y = kTile3D.y, IN_TILE_DIM_Z = kTile3D.z;
  const T* F_c = constant_filter<T>();
  const int kx = K ? K : g.kx, ky = K ? K : g.ky, kz = K ? K : g.kz;
  const int ax = K ? K / 2 : g.ax, ay = K ? K / 2 : g.ay, az = K ? K / 2 : g.az;
  const int OUT_TILE_DIM_X = IN_TILE_DIM_X - (kx - 1), OUT_TILE_DIM_Y = IN_TILE_DIM_Y - (ky - 1),
            OUT_TILE_DIM_Z = IN_TILE_DIM_Z - (kz - 1);
  const int tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;
  __shared__ T N_s[IN_TILE_DIM_Z][IN_TILE_DIM_Y][IN_TILE_DIM_X];
  const i64 width = g.nx, height = g.ny, depth = g.nz;
  const i64 item = width * height * depth;
  for (i64 bzb = blockIdx.z; bzb < g.tiles_z * g.batch; bzb += gridDim.z)
    for (i64 by = blockIdx.y; by < g.tiles_y; by += gridDim.y)
      for (i64 bx = blockIdx.x; bx < g.tiles_x; bx += gridDim.x) {
        const i64 b = bzb / g.tiles_z, bz = bzb % g.tiles_z;
        const T* Nb = N + b * item;
        const i64 col = bx * OUT_TILE_DIM_X + tx - ax;
        const i64 row = by * OUT_TILE_DIM_Y + ty - ay;
        const i64 plane = bz * OUT_TILE_DIM_Z + tz - az;
        const bool inside = plane >= 0 && plane < depth && row >= 0 && row < height &&
                            col >= 0 && col < width;
        N_s[tz][ty][tx] = inside ? Nb[(plane * height + row) * width + col] : T(0);
        __syncthreads();
        const int tileCol = tx - ax, tileRow = ty - ay, tilePlane = tz - az;
        if (inside) {
          if (tileCol >= 0 && tileCol < OUT_TILE_DIM_X && tileRow >= 0 &&
              tileRow < OUT_TILE_DIM_Y && tilePlane >= 0 && tilePlane < OUT_TILE_DIM_Z) {
            accum_t<T> Pvalue = 0;  // the sum in the accumulation type
            for (int fPlane = 0; fPlane < kz; fPlane++)
              for (int fRow = 0; fRow < ky; fRow++)
                for (int fCol = 0; fCol < kx; fCol++)
                  Pvalue += F_c[(fPlane * ky + fRow) * kx + fCol] *
                            N_s[tilePlane + fPlane][tileRow + fRow][tileCol + fCol];
            P[b * item + (plane * height + row) * width + col] = Pvalue;
          }
        }
        __syncthreads();
      }
}

template <class T>
void launch_tiled_input(const Problem& p, const Launch& L, const T* N, T* P, cudaStream_t s) {
  upload_constant_filter<T>(F_c_storage, p, s);
  switch (p.rank()) {
    case 1:
      dispatch_k(SpecialisedK1D{}, L.specialised_k, [&](auto K) {
        launch_kernel(tiled_input_1d_kernel<T, decltype(K)::value>, L, s, "tiled_input_1d_kernel",
                      K, p, N, P, L.g);
      });
      break;
    case 2:
      dispatch_k(SpecialisedK2D{}, L.specialised_k, [&](auto K) {
        launch_kernel(tiled_input_2d_kernel<T, decltype(K)::value>, L, s, "tiled_input_2d_kernel",
                      K, p, N, P, L.g);
      });
      break;
    default:
      dispatch_k(SpecialisedK3D{}, L.specialised_k, [&](auto K) {
        launch_kernel(tiled_input_3d_kernel<T, decltype(K)::value>, L, s, "tiled_input_3d_kernel",
                      K, p, N, P, L.g);
      });
  }
}

class TiledInputStrategy final : public CudaStrategy {
 public:
  TiledInputStrategy() : CudaStrategy(Kernel::tiled_input) {}
  std::string description() const override {
    return "shared-memory tile, block = input tile, outer ring only loads (PMPP Fig. 7.12)";
  }

 protected:
  void launch(const Problem& p, const Launch& L, const void* in, void* out,
              cudaStream_t s) const override {
    dispatch_buffers(p.dtype(), in, out,
                     [&](auto* i, auto* o) { launch_tiled_input(p, L, i, o, s); });
  }
};

}  // namespace

std::unique_ptr<Strategy> make_tiled_input_strategy() {
  return std::make_unique<TiledInputStrategy>();
}

}  // namespace halo::cuda
