/* strategy: tiled_output — shared-memory tiling, block = output tile; the halo is loaded in extra
 * steps.
 *
 * Seed: 1D design 1 of 000_*.txt (convolution_1D_tiled_kernel: left halo, interior, right halo),
 * "block size matching the output tile size" of 003_*.txt and 方案 B of 004_*.txt (the
 * exercise); its 2D/3D form loads the input tile with a strided loop.
 *
 * Who loads what: the block has one thread per output of the tile (OUT_TILE_DIM per axis: 1D
 *   1024, 2D 32x32, 3D 16x8x8). The input tile, IN_TILE_DIM = OUT_TILE_DIM + k - 1 per axis, goes
 *   to shared memory N_ds / N_s:
 *     1D (design 1): step 1, the last a threads load the left halo (the end of the previous
 *       tile); step 2, every thread loads its own element; step 3, the first k - 1 - a threads
 *       load the right halo (the start of the next tile). Ghost cells -> 0.
 *     2D/3D: a strided loop: thread (tx, ty) loads the elements (tx + i * OUT_TILE_DIM_X,
 *       ty + j * OUT_TILE_DIM_Y) of the input tile: its own element, then the halo in extra
 *       steps.
 *   The filter is in constant memory (F_c).
 * Which threads compute: all, one output each, from shared memory alone (no idle threads).
 * Arithmetic intensity (interior tiles, float32): OUT^d * k^d * 2 / ((OUT + k - 1)^d * 4) OP/B,
 *   as tiled_input's formula with the output tile now the block; 2D 5x5 in a 32x32 block:
 *   32^2 * 25 * 2 / (36^2 * 4) = 9.88 OP/B.
 *
 * Generalised beyond the seed: asymmetric halos (a before, k - 1 - a after; a = FILTER_RADIUS for
 *   odd k); a batch of items and arrays beyond the grid limits by grid-stride loops over tiles (a
 *   barrier ends each tile); 64-bit indices. The input tile's size depends on k, so N_ds is
 *   dynamic shared memory (blocks above 48 KB opt in, up to the device's 227 KB).
 * Limits: 1D design 1 loads each side of the halo with one step of the block, so a <= 1024 and
 *   k - 1 - a <= 1024 (k <= 2049); 2D/3D: the input tile must fit the device's shared memory per
 *   block (3D: (16 + k - 1)(8 + k - 1)(8 + k - 1) * sizeof(T)); the filter in 64 KB of constant
 *   memory. can_implement refuses the rest with the numbers.
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

// Dynamic shared memory, one declaration for every T (aligned for double).
extern __shared__ __align__(16) unsigned char tiled_output_smem[];

template <class T, int K>
__global__ void __launch_bounds__(kTile1D.x)
    tiled_output_1d_kernel(const T* __restrict__ N, T* __restrict__ P, Geometry g) {
  constexpr int TILE_SIZE = kTile1D.x;  // = blockDim.x = the output tile
  const T* F_c = constant_filter<T>();
  const int Mask_Width = K ? K : g.kx;
  const int left = K ? K / 2 : g.ax;     // halo before the tile (the seed's radius)
  const int right = Mask_Width - 1 - left;  // halo after it (the radius again for odd k)
  const int tx = threadIdx.x;
  T* N_ds = reinterpret_cast<T*>(tiled_output_smem);  // [left + TILE_SIZE + right]
  const i64 Width = g.nx;
  for (i64 b = blockIdx.z; b < g.batch; b += gridDim.z)
    for (i64 bx = blockIdx.x; bx < g.tiles_x; bx += gridDim.x) {
      const T* Nb = N + b * Width;
      const i64 i = bx * TILE_SIZE + tx;
      // Step 1: the last `left` threads load the end of the previous tile (the left halo).
      const i64 halo_index_left = (bx - 1) * TILE_SIZE + tx;
      if (tx >= TILE_SIZE - left)
        N_ds[tx - (TILE_SIZE - left)] = (halo_index_left < 0) ? T(0) : Nb[halo_index_left];
      // Step 2: every thread loads its own element (0 past the end of the array).
      N_ds[left + tx] = (i < Width) ? Nb[i] : T(0);
      // Step 3: the first `right` threads load the start of the next tile (the right halo).
      const i64 halo_index_right = (bx + 1) * TILE_SIZE + tx;
      if (tx < right)
        N_ds[left + TILE_SIZE + tx] = (halo_index_right >= Width) ? T(0) : Nb[halo_index_right];
      __syncthreads();
      if (i < Width) {
        accum_t<T> Pvalue = 0;  // the sum in the accumulation type
        for (int j = 0; j < Mask_Width; j++) Pvalue += N_ds[tx + j] * F_c[j];
        P[b * Width + i] = Pvalue;
      }
      __syncthreads();  // the next tile of the loop overwrites N_ds
    }
}

template <class T, int K>
__global__ void __launch_bounds__(kTile2D.count())
    tiled_output_2d_kernel(const T* __restrict__ N, T* __restrict__ P, Geometry g) {
  constexpr int OUT_TILE_DIM_X = kTile2D.x, OUT_TILE_DIM_Y = kTile2D.y;  // = blockDim
  const T* F_c = constant_filter<T>();
  const int kx = K ? K : g.kx, ky = K ? K : g.ky;
  const int ax = K ? K / 2 : g.ax, ay = K ? K / 2 : g.ay;
  const int IN_TILE_DIM_X = OUT_TILE_DIM_X + kx - 1, IN_TILE_DIM_Y = OUT_TILE_DIM_Y + ky - 1;
  const int tx = threadIdx.x, ty = threadIdx.y;
  T* N_s = reinterpret_cast<T*>(tiled_output_smem);  // [IN_TILE_DIM_Y][IN_TILE_DIM_X]
  const i64 width = g.nx, height = g.ny;
  for (i64 b = blockIdx.z; b < g.batch; b += gridDim.z)
    for (i64 by = blockIdx.y; by < g.tiles_y; by += gridDim.y)
      for (i64 bx = blockIdx.x; bx < g.tiles_x; bx += gridDim.x) {
        const T* Nb = N + b * width * height;
        // The input tile starts a before the output tile on each axis.
        const i64 row_start = by * OUT_TILE_DIM_Y - ay, col_start = bx * OUT_TILE_DIM_X - ax;
        // Strided loop: first pass, one element per thread; further passes load the halo.
        for (int r = ty; r < IN_TILE_DIM_Y; r += OUT_TILE_DIM_Y)
          for (int c = tx; c < IN_TILE_DIM_X; c += OUT_TILE_DIM_X) {
            const i64 row = row_start + r, col = col_start + c;
            N_s[r * IN_TILE_DIM_X + c] = (row >= 0 && row < height && col >= 0 && col < width)
                                             ? Nb[row * width + col]
                                             : T(0);
          }
        __syncthreads();
        // Every thread computes one output.
        const i64 row = by * OUT_TILE_DIM_Y + ty, col = bx * OUT_TILE_DIM_X + tx;
        if (row < height && col < width) {
          accum_t<T> Pvalue = 0;  // the sum in the accumulation type
          for (int fRow = 0; fRow < ky; fRow++)
            for (int fCol = 0; fCol < kx; fCol++)
              Pvalue += F_c[fRow * kx + fCol] * N_s[(ty + fRow) * IN_TILE_DIM_X + tx + fCol];
          P[b * width * height + row * width + col] = Pvalue;
        }
        __syncthreads();
      }
}

template <class T, int K>
__global__ void __launch_bounds__(kTile3D.count())
    tiled_output_3d_kernel(const T* __restrict__ N, T* __restrict__ P, Geometry g) {
  constexpr int OUT_TILE_DIM_X = kTile3D.x, OUT_TILE_DIM_Y = kTile3D.y,
                OUT_TILE_DIM_Z = kTile3D.z;
  const T* F_c = constant_filter<T>();
  const int kx = K ? K : g.kx, ky = K ? K : g.ky, kz = K ? K : g.kz;
  const int ax = K ? K / 2 : g.ax, ay = K ? K / 2 : g.ay, az = K ? K / 2 : g.az;
  const int IN_TILE_DIM_X = OUT_TILE_DIM_X + kx - 1, IN_TILE_DIM_Y = OUT_TILE_DIM_Y + ky - 1,
            IN_TILE_DIM_Z = OUT_TILE_DIM_Z + kz - 1;
  const int tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;
  T* N_s = reinterpret_cast<T*>(tiled_output_smem);  // [IN_TILE_DIM_Z][IN_TILE_DIM_Y][IN_TILE_DIM_X]
  const i64 width = g.nx, height = g.ny, depth = g.nz;
  const i64 item = width * height * depth;
  for (i64 bzb = blockIdx.z; bzb < g.tiles_z * g.batch; bzb += gridDim.z)
    for (i64 by = blockIdx.y; by < g.tiles_y; by += gridDim.y)
      for (i64 bx = blockIdx.x; bx < g.tiles_x; bx += gridDim.x) {
        const i64 b = bzb / g.tiles_z, bz = bzb % g.tiles_z;
        const T* Nb = N + b * item;
        const i64 plane_start = bz * OUT_TILE_DIM_Z - az, row_start = by * OUT_TILE_DIM_Y - ay,
                  col_start = bx * OUT_TILE_DIM_X - ax;
        for (int d = tz; d < IN_TILE_DIM_Z; d += OUT_TILE_DIM_Z)
          for (int r = ty; r < IN_TILE_DIM_Y; r += OUT_TILE_DIM_Y)
            for (int c = tx; c < IN_TILE_DIM_X; c += OUT_TILE_DIM_X) {
              const i64 plane = plane_start + d, row = row_start + r, col = col_start + c;
              const bool inside = plane >= 0 && plane < depth && row >= 0 && row < height &&
                                  col >= 0 && col < width;
              N_s[(d * IN_TILE_DIM_Y + r) * IN_TILE_DIM_X + c] =
                  inside ? Nb[(plane * height + row) * width + col] : T(0);
            }
        __syncthreads();
        const i64 plane = bz * OUT_TILE_DIM_Z + tz, row = by * OUT_TILE_DIM_Y + ty,
                  col = bx * OUT_TILE_DIM_X + tx;
        if (plane < depth && row < height && col < width) {
          accum_t<T> Pvalue = 0;  // the sum in the accumulation type
          for (int fPlane = 0; fPlane < kz; fPlane++)
            for (int fRow = 0; fRow < ky; fRow++)
              for (int fCol = 0; fCol < kx; fCol++)
                Pvalue += F_c[(fPlane * ky + fRow) * kx + fCol] *
                          N_s[((tz + fPlane) * IN_TILE_DIM_Y + ty + fRow) * IN_TILE_DIM_X + tx +
                              fCol];
          P[b * item + (plane * height + row) * width + col] = Pvalue;
        }
        __syncthreads();
      }
}

template <class T>
void launch_tiled_output(const Problem& p, const Launch& L, const T* N, T* P, cudaStream_t s) {
  upload_constant_filter<T>(F_c_storage, p, s);
  switch (p.rank()) {
    case 1:
      dispatch_k(SpecialisedK1D{}, L.specialised_k, [&](auto K) {
        launch_kernel(tiled_output_1d_kernel<T, decltype(K)::value>, L, s,
                      "tiled_output_1d_kernel", K, p, N, P, L.g);
      });
      break;
    case 2:
      dispatch_k(SpecialisedK2D{}, L.specialised_k, [&](auto K) {
        launch_kernel(tiled_output_2d_kernel<T, decltype(K)::value>, L, s,
                      "tiled_output_2d_kernel", K, p, N, P, L.g);
      });
      break;
    default:
      dispatch_k(SpecialisedK3D{}, L.specialised_k, [&](auto K) {
        launch_kernel(tiled_output_3d_kernel<T, decltype(K)::value>, L, s,
                      "tiled_output_3d_kernel", K, p, N, P, L.g);
      });
  }
}

class TiledOutputStrategy final : public CudaStrategy {
 public:
  TiledOutputStrategy() : CudaStrategy(Kernel::tiled_output) {}
  std::string description() const override {
    return "shared-memory tile, block = output tile, halo loaded in extra steps (design 1)";
  }

 protected:
  void launch(const Problem& p, const Launch& L, const void* in, void* out,
              cudaStream_t s) const override {
    dispatch_buffers(p.dtype(), in, out,
                     [&](auto* i, auto* o) { launch_tiled_output(p, L, i, o, s); });
  }
};

}  // namespace

std::unique_ptr<Strategy> make_tiled_output_strategy() {
  return std::make_unique<TiledOutputStrategy>();
}

}  // namespace halo::cuda
