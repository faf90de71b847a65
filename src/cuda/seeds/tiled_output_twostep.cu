/* strategy: tiled_output_twostep — 1D only: block = output tile, the input tile loaded in two
 * steps (the simplified form of design 1 in 000_*.txt).
 *
 * Who loads what: the block has one thread per output of the tile (TILE_SIZE = blockDim.x =
 *   1024). The input tile is TILE_SIZE + k - 1 elements, starting a before the output tile (a =
 *   the anchor; MASK_WIDTH / 2 in the seed). Step 1: every thread shifts left by a and loads
 *   N[i - a] into N_ds[tx]. Step 2: the first k - 1 threads shift right by TILE_SIZE and load the
 *   rest, N[i - a + TILE_SIZE] into N_ds[tx + TILE_SIZE]. Ghost cells -> 0. The filter is in
 *   constant memory (Mc in the seed, F_c here).
 * Which threads compute: all, one output each, from N_ds.
 * Arithmetic intensity (interior tiles, float32): TILE * k * 2 / ((TILE + k - 1) * 4) OP/B; k = 9:
 *   1024 * 9 * 2 / (1032 * 4) = 4.47 OP/B (bound k / 2 = 4.5).
 *
 * Its smaller width limit (the seed notes' "small problem"): step 2 covers only blockDim.x
 *   elements, so it needs k - 1 <= blockDim.x = 1024 (k <= 1025), where design 1
 *   (tiled_output) loads up to blockDim.x on each side (k <= 2049). can_implement refuses wider
 *   filters, and 2D/3D problems (use tiled_output), with the numbers.
 * Generalised beyond the seed: asymmetric halos (even widths); a batch of items and arrays beyond
 *   the grid limits by grid-stride loops (a barrier ends each tile); 64-bit indices.
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

extern __shared__ __align__(16) unsigned char twostep_smem[];

template <class T, int K>
__global__ void __launch_bounds__(kTile1D.x)
    tiled_output_twostep_1d_kernel(const T* __restrict__ N, T* __restrict__ P, Geometry g) {
  constexpr int TILE_SIZE = kTile1D.x;  // = blockDim.x
  const T* F_c = constant_filter<T>();
  const int MASK_WIDTH = K ? K : g.kx;
  const int a = K ? K / 2 : g.ax;  // the seed's radius: the input tile starts a before the output
  const int tx = threadIdx.x;
  T* N_ds = reinterpret_cast<T*>(twostep_smem);  // [TILE_SIZE + MASK_WIDTH - 1]
  const i64 Width = g.nx;
  for (i64 b = blockIdx.z; b < g.batch; b += gridDim.z)
    for (i64 bx = blockIdx.x; bx < g.tiles_x; bx += gridDim.x) {
      const T* Nb = N + b * Width;
      const i64 i = bx * TILE_SIZE + tx;
      i64 start = i - a;  // every thread shifted left by a
      // Step 1 (all threads): N_ds[0 .. TILE_SIZE - 1]; ghost cells -> 0.
      if (0 <= start && start < Width)
        N_ds[tx] = Nb[start];
      else
        N_ds[tx] = T(0);
      // Step 2 (the first MASK_WIDTH - 1 threads, moved right by a whole tile): the rest of the
      // input tile. start >= 0 here, since a <= MASK_WIDTH - 1 <= TILE_SIZE.
      if (MASK_WIDTH - 1 > tx) {
        start += TILE_SIZE;
        if (Width > start)
          N_ds[tx + TILE_SIZE] = Nb[start];
        else
          N_ds[tx + TILE_SIZE] = T(0);
      }
      __syncthreads();
      if (i < Width) {
        accum_t<T> Pvalue = 0;  // the sum in the accumulation type
        for (int j = 0; MASK_WIDTH > j; j++) Pvalue += N_ds[tx + j] * F_c[j];
        P[b * Width + i] = Pvalue;
      }
      __syncthreads();  // the next tile of the loop overwrites N_ds
    }
}

template <class T>
void launch_twostep(const Problem& p, const Launch& L, const T* N, T* P, cudaStream_t s) {
  upload_constant_filter<T>(F_c_storage, p, s);
  dispatch_k(SpecialisedK1D{}, L.specialised_k, [&](auto K) {
    launch_kernel(tiled_output_twostep_1d_kernel<T, decltype(K)::value>, L, s,
                  "tiled_output_twostep_1d_kernel", K, p, N, P, L.g);
  });
}

class TiledOutputTwostepStrategy final : public CudaStrategy {
 public:
  TiledOutputTwostepStrategy() : CudaStrategy(Kernel::tiled_output_twostep) {}
  std::string description() const override {
    return "1D: block = output tile, input tile loaded in two steps (needs k - 1 <= 1024)";
  }

 protected:
  void launch(const Problem& p, const Launch& L, const void* in, void* out,
              cudaStream_t s) const override {
    dispatch_buffers(p.dtype(), in, out, [&](auto* i, auto* o) { launch_twostep(p, L, i, o, s); });
  }
};

}  // namespace

std::unique_ptr<Strategy> make_tiled_output_twostep_strategy() {
  return std::make_unique<TiledOutputTwostepStrategy>();
}

}  // namespace halo::cuda
