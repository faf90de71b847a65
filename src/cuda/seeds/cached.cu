/* strategy: cached — block = output tile; only the tile's interior in shared memory, the halo read
 * from global memory (through L2) at compute time (PMPP Fig. 7.15).
 *
 * Seed: convolution_cached_tiled_2D_const_mem_kernel (004_*.txt, "方案 B: 用 Cache 處理 Halo"),
 * convolution_2d_cached_tiled_const_mem_kernel (002_*.txt), and 1D design 3 of 000_*.txt
 * (convolution_1D_tiled_cache_kernel).
 *
 * Who loads what: the block has one thread per element of the tile (TILE_DIM per axis: 1D 1024,
 *   2D 32x32, 3D 16x8x8); each thread loads its own element of N into N_s (0 past the end of
 *   the array; no halo, so no ghost-cell test at load time); barrier. The filter is in constant
 *   memory (F_c).
 * Which threads compute: all, one output each. A tap that falls inside the tile reads N_s; one
 *   that falls outside (a halo cell: an interior element of a neighbouring tile, probably in L2
 *   already) reads N from global memory, unless it is a ghost cell (skipped, i.e. 0).
 * Arithmetic intensity: DRAM-wise each input element is loaded once (the interior), if every halo
 *   read hits in L2: k^d * 2 / 4 OP/B in float32, the tiled bound (12.5 for 5x5, 40.5 for 9x9).
 *   The halo reads still cost L1/L2 bandwidth and a three-way branch in the inner loop.
 *
 * Generalised beyond the seed: asymmetric halos (a before, k - 1 - a after; a = FILTER_RADIUS for
 *   odd k); filters of any size, larger than the tile too (the taps beyond it all go to global
 *   memory); a batch of items and arrays beyond the grid limits by grid-stride loops over tiles (a
 *   barrier ends each tile); 64-bit indices.
 * Limits: only the 64 KB of constant memory for the filter (16384 float32 / 8192 float64 taps);
 *   can_implement refuses larger filters with the numbers.
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
    cached_1d_kernel(const T* __restrict__ N, T* __restrict__ P, Geometry g) {
  constexpr int TILE_WIDTH = kTile1D.x;  // = blockDim.x
  const T* F_c = constant_filter<T>();
  const int Mask_Width = K ? K : g.kx;
  const int a = K ? K / 2 : g.ax;
  const int tx = threadIdx.x;
  __shared__ T N_ds[TILE_WIDTH];
  const i64 Width = g.nx;
  for (i64 b = blockIdx.z; b < g.batch; b += gridDim.z)
    for (i64 bx = blockIdx.x; bx < g.tiles_x; bx += gridDim.x) {
      const T* Nb = N + b * Width;
      const i64 i = bx * TILE_WIDTH + tx;
      N_ds[tx] = (i < Width) ? Nb[i] : T(0);  // each thread its own element
      __syncthreads();
      // Which input indices are in this tile (and so in N_ds):
      const i64 This_tile_start_point = bx * TILE_WIDTH;
      const i64 Next_tile_start_point = (bx + 1) * TILE_WIDTH;
      const i64 N_start_point = i - a;
      if (i < Width) {
        accum_t<T> Pvalue = 0;  // the sum in the accumulation type
        for (int j = 0; j < Mask_Width; j++) {
          const i64 N_index = N_start_point + j;
          if (N_index >= 0 && N_index < Width) {  // a ghost cell adds nothing
            if (N_index >= This_tile_start_point && N_index < Next_tile_start_point)
              Pvalue += N_ds[tx - a + j] * F_c[j];  // in the tile: shared memory
            else
              Pvalue += Nb[N_index] * F_c[j];  // halo: global memory (L2)
          }
        }
        P[b * Width + i] = Pvalue;
      }
      __syncthreads();  // the next tile of the loop overwrites N_ds
    }
}

template <class T, int K>
__global__ void __launch_bounds__(kTile2D.count())
    cached_2d_kernel(const T* __restrict__ N, T* __restrict__ P, Geometry g) {
  constexpr int TILE_DIM_X = kTile2D.x, TILE_DIM_Y = kTile2D.y;  // = blockDim
  const T* F_c = constant_filter<T>();
  const int kx = K ? K : g.kx, ky = K ? K : g.ky;
  const int ax = K ? K / 2 : g.ax, ay = K ? K / 2 : g.ay;
  const int tx = threadIdx.x, ty = threadIdx.y;
  __shared__ T N_s[TILE_DIM_Y][TILE_DIM_X];
  const i64 width = g.nx, height = g.ny;
  for (i64 b = blockIdx.z; b < g.batch; b += gridDim.z)
    for (i64 by = blockIdx.y; by < g.tiles_y; by += gridDim.y)
      for (i64 bx = blockIdx.x; bx < g.tiles_x; bx += gridDim.x) {
        const T* Nb = N + b * width * height;
        const i64 col = bx * TILE_DIM_X + tx;
        const i64 row = by * TILE_DIM_Y + ty;
        // Load: no halo, so only the array's end needs a test.
        N_s[ty][tx] = (row < height && col < width) ? Nb[row * width + col] : T(0);
        __syncthreads();
        if (col < width && row < height) {
          accum_t<T> Pvalue = 0;  // the sum in the accumulation type
          for (int fRow = 0; fRow < ky; fRow++) {
            for (int fCol = 0; fCol < kx; fCol++) {
              const int sRow = ty - ay + fRow, sCol = tx - ax + fCol;  // position in the tile
              if (sRow >= 0 && sRow < TILE_DIM_Y && sCol >= 0 && sCol < TILE_DIM_X) {
                Pvalue += F_c[fRow * kx + fCol] * N_s[sRow][sCol];  // interior: shared memory
              } else {
                // halo: global memory (L2), unless a ghost cell
                const i64 nRow = row - ay + fRow, nCol = col - ax + fCol;
                if (nRow >= 0 && nRow < height && nCol >= 0 && nCol < width)
                  Pvalue += F_c[fRow * kx + fCol] * Nb[nRow * width + nCol];
              }
            }
          }
          P[b * width * height + row * width + col] = Pvalue;
        }
        __syncthreads();
      }
}

template <class T, int K>
__global__ void __launch_bounds__(kTile3D.count())
    cached_3d_kernel(const T* __restrict__ N, T* __restrict__ P, Geometry g) {
  constexpr int TILE_DIM_X = kTile3D.x, TILE_DIM_Y = kTile3D.y, TILE_DIM_Z = kTile3D.z;
  const T* F_c = constant_filter<T>();
  const int kx = K ? K : g.kx, ky = K ? K : g.ky, kz = K ? K : g.kz;
  const int ax = K ? K / 2 : g.ax, ay = K ? K / 2 : g.ay, az = K ? K / 2 : g.az;
  const int tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;
  __shared__ T N_s[TILE_DIM_Z][TILE_DIM_Y][TILE_DIM_X];
  const i64 width = g.nx, height = g.ny, depth = g.nz;
  const i64 item = width * height * depth;
  for (i64 bzb = blockIdx.z; bzb < g.tiles_z * g.batch; bzb += gridDim.z)
    for (i64 by = blockIdx.y; by < g.tiles_y; by += gridDim.y)
      for (i64 bx = blockIdx.x; bx < g.tiles_x; bx += gridDim.x) {
        const i64 b = bzb / g.tiles_z, bz = bzb % g.tiles_z;
        const T* Nb = N + b * item;
        const i64 col = bx * TILE_DIM_X + tx;
        const i64 row = by * TILE_DIM_Y + ty;
        const i64 plane = bz * TILE_DIM_Z + tz;
        const bool inside = plane < depth && row < height && col < width;
        N_s[tz][ty][tx] = inside ? Nb[(plane * height + row) * width + col] : T(0);
        __syncthreads();
        if (inside) {
          accum_t<T> Pvalue = 0;  // the sum in the accumulation type
          for (int fPlane = 0; fPlane < kz; fPlane++)
            for (int fRow = 0; fRow < ky; fRow++)
              for (int fCol = 0; fCol < kx; fCol++) {
                const T w = F_c[(fPlane * ky + fRow) * kx + fCol];
                const int sPlane = tz - az + fPlane, sRow = ty - ay + fRow, sCol = tx - ax + fCol;
                if (sPlane >= 0 && sPlane < TILE_DIM_Z && sRow >= 0 && sRow < TILE_DIM_Y &&
                    sCol >= 0 && sCol < TILE_DIM_X) {
                  Pvalue += w * N_s[sPlane][sRow][sCol];
                } else {
                  const i64 nPlane = plane - az + fPlane, nRow = row - ay + fRow,
                            nCol = col - ax + fCol;
                  if (nPlane >= 0 && nPlane < depth && nRow >= 0 && nRow < height && nCol >= 0 &&
                      nCol < width)
                    Pvalue += w * Nb[(nPlane * height + nRow) * width + nCol];
                }
              }
          P[b * item + (plane * height + row) * width + col] = Pvalue;
        }
        __syncthreads();
      }
}

template <class T>
void launch_cached(const Problem& p, const Launch& L, const T* N, T* P, cudaStream_t s) {
  upload_constant_filter<T>(F_c_storage, p, s);
  switch (p.rank()) {
    case 1:
      dispatch_k(SpecialisedK1D{}, L.specialised_k, [&](auto K) {
        launch_kernel(cached_1d_kernel<T, decltype(K)::value>, L, s, "cached_1d_kernel", K, p, N,
                      P, L.g);
      });
      break;
    case 2:
      dispatch_k(SpecialisedK2D{}, L.specialised_k, [&](auto K) {
        launch_kernel(cached_2d_kernel<T, decltype(K)::value>, L, s, "cached_2d_kernel", K, p, N,
                      P, L.g);
      });
      break;
    default:
      dispatch_k(SpecialisedK3D{}, L.specialised_k, [&](auto K) {
        launch_kernel(cached_3d_kernel<T, decltype(K)::value>, L, s, "cached_3d_kernel", K, p, N,
                      P, L.g);
      });
  }
}

class CachedStrategy final : public CudaStrategy {
 public:
  CachedStrategy() : CudaStrategy(Kernel::cached) {}
  std::string description() const override {
    return "block = output tile, interior in shared memory, halo through L2 (PMPP Fig. 7.15)";
  }

 protected:
  void launch(const Problem& p, const Launch& L, const void* in, void* out,
              cudaStream_t s) const override {
    dispatch_buffers(p.dtype(), in, out, [&](auto* i, auto* o) { launch_cached(p, L, i, o, s); });
  }
};

}  // namespace

std::unique_ptr<Strategy> make_cached_strategy() { return std::make_unique<CachedStrategy>(); }

}  // namespace halo::cuda
