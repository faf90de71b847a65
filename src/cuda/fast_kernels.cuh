// The `fast` strategy's kernels: register-blocked streaming convolution (see strategies/fast.cu for
// the design). Shared pieces: the weight window passed by value as a kernel parameter, 16-byte row
// loads with zero ghost cells, and the launch functions each rank's file instantiates.
#pragma once

#include <cuda.h>  // CUtensorMap, a type only: the encoder is reached through the runtime
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "cuda/check.cuh"
#include "cuda/fast_policy.hpp"  // the shapes shared with the policy: kTx, Feed, round_up4 ...
#include "halo/halo.hpp"

namespace halo::cuda::fast {

// The (2R+1)^d weights of a window of radius R, by value: kernel parameters live in constant bank
// 0, so FFMA takes each weight as an operand at a compile-time offset (no load instruction).
template <class T, int N>
struct Taps {
  T w[N];
};

__host__ __device__ constexpr int ipow(int b, int e) { return e == 0 ? 1 : b * ipow(b, e - 1); }

// v[i] = row[x + i] for i < NV (x = the lane's first output - RA), zero outside [0, nx). One
// branch per row: a lane whose NV elements all lie inside the row (and with `vec`: nx % 4 == 0,
// the row 16-byte aligned; x is a multiple of 4) takes NV/4 16-byte loads; a lane at the edges of
// the row, or any lane of an unaligned row, takes the element-wise path. (Deciding per 16-byte
// group instead let the compiler if-convert both paths, so every row issued the scalar path's
// compares and predicated loads as well.)
template <class T, int NV>
__device__ __forceinline__ void load_row(T (&v)[NV], const T* __restrict__ row, std::int64_t x,
                                         std::int64_t nx, bool vec) {
  static_assert(NV % 4 == 0, "rows are loaded in groups of four");
  if (vec && x >= 0 && x + NV <= nx) {
#pragma unroll
    for (int c = 0; c < NV / 4; ++c) {
      if constexpr (sizeof(T) == 4) {
        const float4 f = __ldg(reinterpret_cast<const float4*>(row + x) + c);
        v[4 * c + 0] = f.x;
        v[4 * c + 1] = f.y;
        v[4 * c + 2] = f.z;
        v[4 * c + 3] = f.w;
      } else {
        const double2 a = __ldg(reinterpret_cast<const double2*>(row + x) + 2 * c);
        const double2 b = __ldg(reinterpret_cast<const double2*>(row + x) + 2 * c + 1);
        v[4 * c + 0] = a.x;
        v[4 * c + 1] = a.y;
        v[4 * c + 2] = b.x;
        v[4 * c + 3] = b.y;
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < NV; ++i) {
      const std::int64_t g = x + i;
      v[i] = (g >= 0 && g < nx) ? __ldg(row + g) : T(0);
    }
  }
}

// f(std::integral_constant<int, I>{}) for I = 0 .. N-1, in order.
template <class F, int... I>
__device__ __forceinline__ void for_each_index(F&& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}
template <int N, class F>
__device__ __forceinline__ void for_each_index(F&& f) {
  for_each_index(f, std::make_integer_sequence<int, N>{});
}

template <class T>
__device__ __forceinline__ void zero_row(T* v, int n) {
#pragma unroll
  for (int i = 0; i < n; ++i) v[i] = T(0);
}

// N elements of a row, as a value (a fetched row that is assigned as a whole).
template <class T, int N>
struct RowOf {
  T v[N];
};

// One step of the register prefetch, whose D rows in flight sit in pipe: v = the row in pipe[k]
// (k a constant once the caller's row loop is unrolled), and `fetch(row)` loads the row D ahead
// into its place when `more`. With D = 1 the next row's loads go out before pipe[0] is read, so
// two rows overlap for a moment instead of none.
template <class T, int NV, int D, class Fetch>
__device__ __forceinline__ void take_row(RowOf<T, NV> (&pipe)[D], int k, bool more, T (&v)[NV],
                                         Fetch fetch) {
  if constexpr (D == 1) {
    RowOf<T, NV> next;
    if (more) fetch(next);
#pragma unroll
    for (int i = 0; i < NV; ++i) v[i] = pipe[0].v[i];
    pipe[0] = next;
  } else {
#pragma unroll
    for (int i = 0; i < NV; ++i) v[i] = pipe[k].v[i];
    if (more) fetch(pipe[k]);
  }
}

// out[x .. x+3] = a[0..3], clipped to nx.
template <class T>
__device__ __forceinline__ void store4(T* __restrict__ row, std::int64_t x, std::int64_t nx,
                                       bool vec, const T (&a)[kTx]) {
  if (vec && x + 3 < nx) {
    if constexpr (sizeof(T) == 4) {
      *reinterpret_cast<float4*>(row + x) = make_float4(a[0], a[1], a[2], a[3]);
    } else {
      *reinterpret_cast<double2*>(row + x) = make_double2(a[0], a[1]);
      *reinterpret_cast<double2*>(row + x + 2) = make_double2(a[2], a[3]);
    }
  } else {
#pragma unroll
    for (int e = 0; e < kTx; ++e)
      if (x + e < nx) row[x + e] = a[e];
  }
}

// p[0 .. 3] = a, b, c, d as one 16-byte store (p 16-byte aligned, in global memory). Written in
// PTX because the compiler split the first of a lane's float4 stores into four 4-byte ones, in
// store4's path as in a plain float4 store (so did one of the 1D wide layout's two groups: four STG.E).
__device__ __forceinline__ void store16(float* p, float a, float b, float c, float d) {
  asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(a), "f"(b), "f"(c), "f"(d));
}
// The same with the streaming cache hint (.cs: evict first).
__device__ __forceinline__ void store16_cs(float* p, float a, float b, float c, float d) {
  asm volatile("st.global.cs.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(a), "f"(b), "f"(c),
               "f"(d));
}

// a[0..3] += row[x .. x+3] (clipped to nx): the passes after the first of a split filter.
template <class T>
__device__ __forceinline__ void add4(const T* __restrict__ row, std::int64_t x, std::int64_t nx,
                                     bool vec, T (&a)[kTx]) {
  if (vec && x + 3 < nx) {
    if constexpr (sizeof(T) == 4) {
      const float4 f = *reinterpret_cast<const float4*>(row + x);
      a[0] += f.x, a[1] += f.y, a[2] += f.z, a[3] += f.w;
    } else {
      const double2 p = *reinterpret_cast<const double2*>(row + x);
      const double2 q = *reinterpret_cast<const double2*>(row + x + 2);
      a[0] += p.x, a[1] += p.y, a[2] += q.x, a[3] += q.y;
    }
  } else {
#pragma unroll
    for (int e = 0; e < kTx; ++e)
      if (x + e < nx) a[e] += row[x + e];
  }
}

// v[i] = p[i] for i < NV, as 16-byte loads (p 16-byte aligned; shared memory, for the rings).
template <class T, int NV>
__device__ __forceinline__ void read_groups(const T* p, T (&v)[NV]) {
  static_assert(NV % 4 == 0, "rows are read in groups of four");
#pragma unroll
  for (int c = 0; c < NV / 4; ++c) {
    if constexpr (sizeof(T) == 4) {
      const float4 f = reinterpret_cast<const float4*>(p)[c];
      v[4 * c + 0] = f.x, v[4 * c + 1] = f.y, v[4 * c + 2] = f.z, v[4 * c + 3] = f.w;
    } else {
      const double2 a = reinterpret_cast<const double2*>(p)[2 * c];
      const double2 b = reinterpret_cast<const double2*>(p)[2 * c + 1];
      v[4 * c + 0] = a.x, v[4 * c + 1] = a.y, v[4 * c + 2] = b.x, v[4 * c + 3] = b.y;
    }
  }
}

// dst[0 .. B/sizeof(T)) = src's (or zeros unless `in`; `src` is then any valid address), dst in
// shared memory: cp.async from sm_80, with a source size of 0 for the zeros (B = 16: .cg, past
// L1); before sm_80, a plain load and store. Complete once a later cp.async.wait_group says so.
template <int B, class T>
__device__ __forceinline__ void copy_async(T* dst, const T* src, bool in) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  const auto d = static_cast<std::uint32_t>(__cvta_generic_to_shared(dst));
  const std::uint32_t n = in ? B : 0u;
  if constexpr (B == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(n)
                 : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(d), "l"(src), "n"(B),
                 "r"(n)
                 : "memory");
#else
#pragma unroll
  for (int i = 0; i < B / int(sizeof(T)); ++i) dst[i] = in ? src[i] : T(0);
#endif
}
// Closes the group of this thread's cp.async copies issued since the last commit.
__device__ __forceinline__ void commit_async() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void wait_async() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

// A warp-private ring of S row slots in shared memory, W elements each, filled with cp.async:
// the copies of the next S-1 rows are in flight while the warp computes on the current one, and
// they cost no registers (a register prefetch holds one row, and its copy into place costs a MOV
// per element). Outside [0, nx), and for a ghost row, the copy's source size is 0, so the slot
// holds zeros. Use: fill() then commit() once per row, always (empty groups keep the count);
// before reading row n, wait<S-2>() then __syncwarp(), which also lets the slot the warp read
// last be refilled.
template <class T, int W, int S>
struct RowRing {
  static_assert(W * sizeof(T) % 16 == 0, "a slot is a whole number of 16-byte chunks");
  static constexpr int kChunk = 16 / int(sizeof(T));  // elements per 16-byte copy
  static constexpr int kChunks = W / kChunk;          // 16-byte copies per slot
  static constexpr int kPerLane = (kChunks + 31) / 32;

  // The warp's slots (S of them) hold row[x .. x+W) of the rows it is given; the columns are the
  // same for every row, so each lane works out its copies' offsets and edges once, here.
  __device__ __forceinline__ RowRing(T (*slots)[W], std::int64_t x, std::int64_t nx, bool vec,
                                     int lane)
      : slot(slots), x_(x), nx_(nx), vec_(vec), lane_(lane) {
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
      const int c = lane + 32 * i;
      const std::int64_t cx = x + std::int64_t(c) * kChunk;
      inside_[i] = (kChunks % 32 == 0 || c < kChunks) && cx >= 0 && cx + kChunk <= nx;
      offset_[i] = inside_[i] ? cx : 0;
    }
  }

  // Slot `k` = row[x .. x+W), zero outside [0, nx) or when !live (`row` is then any valid
  // address). With `vec` (x % 4 == 0, nx % 4 == 0, the row 16-byte aligned), 16-byte copies,
  // else one element per copy.
  __device__ __forceinline__ void fill(int k, const T* row, bool live) const {
    T* dst = slot[k];
    if (vec_) {
#pragma unroll
      for (int i = 0; i < kPerLane; ++i) {
        const int c = lane_ + 32 * i;
        if (kChunks % 32 == 0 || c < kChunks)
          copy_async<16>(dst + c * kChunk, row + offset_[i], live && inside_[i]);
      }
    } else {
#pragma unroll
      for (int i = 0; i < (W + 31) / 32; ++i) {
        const int c = lane_ + 32 * i;
        if (W % 32 == 0 || c < W) {
          const std::int64_t cx = x_ + c;
          const bool in = live && cx >= 0 && cx < nx_;
          copy_async<int(sizeof(T))>(dst + c, in ? row + cx : row, in);
        }
      }
    }
  }
  // v[i] = slot k [at + i]: 16-byte shared loads (`at` a multiple of 4).
  template <int NV>
  __device__ __forceinline__ void read(int k, int at, T (&v)[NV]) const {
    read_groups(&slot[k][at], v);
  }
  __device__ __forceinline__ static void commit() { commit_async(); }
  template <int N>
  __device__ __forceinline__ static void wait() {
    wait_async<N>();
  }

 private:
  T (*slot)[W];
  std::int64_t x_, nx_;
  bool vec_;
  int lane_;
  std::int64_t offset_[kPerLane];  // row offset of the lane's i-th 16-byte copy (0 if outside)
  bool inside_[kPerLane];          // whether that copy lies inside [0, nx)
};

// Slots per warp ring: three rows in flight behind the one being read.
constexpr int kRingSlots = 4;

// The pieces of the TMA rings (TmaRing, BlockRing), sm_90; elsewhere they do nothing.
// A shared-memory address as the 32-bit operand of the PTX below.
template <class P>
__device__ __forceinline__ std::uint32_t shared_address(P* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
// Bytes per ring slot of `bytes` bytes of data: copies land on 128-byte boundaries.
__host__ __device__ constexpr int slot_size(int bytes) { return (bytes + 127) / 128 * 128; }
// An mbarrier that completes a phase after Count arrivals (and the bytes they expect).
template <int Count>
__device__ __forceinline__ void mbarrier_init(std::uint32_t bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "n"(Count) : "memory");
#endif
}
// After the mbarrier_init()s of a thread: makes them visible to the copy engine.
__device__ __forceinline__ void mbarrier_init_fence() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // The barriers are initialised by ordinary stores; the copy engine updates them next.
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}
// One arrival on the mbarrier that also expects `bytes` more bytes of copies in this phase.
__device__ __forceinline__ void mbarrier_expect_bytes(std::uint32_t bar, std::uint32_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
#endif
}
// Spins until the phase of the mbarrier with the given parity has completed.
__device__ __forceinline__ void mbarrier_wait(std::uint32_t bar, std::uint32_t parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  std::uint32_t done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
#endif
}
// The box of a 4-D tensor map whose first element is (x, y, z, b) into shared memory at `dst`,
// its bytes counted on the mbarrier `bar`.
__device__ __forceinline__ void copy_box(void* dst, const CUtensorMap* map, int x, int y, int z,
                                         int b, std::uint32_t bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(shared_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(b), "r"(bar)
      : "memory");
#endif
}

// A warp-private ring of `slots` slots in shared memory, each a box of `rows` rows of W elements
// (row i of the box at i * W), filled by the tensor memory accelerator (TMA): one lane issues one
// cp.async.bulk.tensor per slot, and the copy's completion is counted on the slot's mbarrier.
// Against RowRing: no per-lane copies, offsets or edge tests (the tensor map's bounds give the
// zero ghost cells, also for negative coordinates), and several rows per copy, so a row costs a
// few instructions instead of a few dozen, and many rows can be in flight. The coordinates are
// those of a 4-D tensor map (x, y, z, batch) made by make_row_map(). Use: init(), then issue()
// slots in order; before reading slot k for the n-th time, wait(k, n & 1) then __syncwarp()
// (which also lets the slot read before be refilled).
// A row wider than a box may be (256 elements) comes in PARTS boxes, side by side in the slot:
// part p holds columns [p * kStep, p * kStep + kBoxW) of the row, the parts overlapping by OVERLAP
// columns (a strip's halo), so that a lane whose TX + OVERLAP inputs start at a multiple of TX
// finds them all in one part.
template <class T, int W, int PARTS = 1, int OVERLAP = 0>
struct TmaRing {
  static constexpr int kStep = (W - OVERLAP) / PARTS;  // first columns of the parts, apart
  static constexpr int kBoxW = kStep + OVERLAP;        // a part's box width (the tensor map's)
  static_assert(PARTS == 1 || (W - OVERLAP) % PARTS == 0, "equal parts");
  static_assert(kBoxW * sizeof(T) % 16 == 0, "a box row is a whole number of 16-byte chunks");
  // Bytes of a part, and of a slot, for boxes of `rows` rows: copies land on 128-byte boundaries.
  __host__ __device__ static constexpr int part_bytes(int rows) {
    return slot_size(rows * kBoxW * int(sizeof(T)));
  }
  __host__ __device__ static constexpr int slot_bytes(int rows) { return PARTS * part_bytes(rows); }

  T* base;             // slot k, part p, row i at base + k * stride + p * part + i * kBoxW
  std::uint64_t* bar;  // one mbarrier per slot
  const CUtensorMap* map;
  int stride, rows;

  __device__ __forceinline__ void init(int slots, int lane) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (lane == 0) {
      for (int k = 0; k < slots; ++k) mbarrier_init<1>(shared_address(bar + k));
      mbarrier_init_fence();
    }
    __syncwarp();
#endif
  }
  // Slot k = the box whose first element is (x, y, z, b) (its PARTS boxes, from x on); lane 0
  // issues, the others do nothing.
  __device__ __forceinline__ void issue(int lane, int k, int x, int y, int z, int b) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (lane == 0) {
      const std::uint32_t b_addr = shared_address(bar + k);
      mbarrier_expect_bytes(b_addr, std::uint32_t(PARTS * rows * kBoxW * int(sizeof(T))));
      if constexpr (PARTS == 1) {
        // The copy written out (not copy_box()): through the helper, nvcc scheduled the kernels
        // that use this ring differently (the same instructions, in another order and
        // registers), and the ones measured are these.
        asm volatile(
            "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(shared_address(base + k * stride)),
            "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(b), "r"(b_addr)
            : "memory");
      } else {
        const int part = part_bytes(rows) / int(sizeof(T));
        for (int p = 0; p < PARTS; ++p)
          copy_box(base + k * stride + p * part, map, x + p * kStep, y, z, b, b_addr);
      }
    }
#endif
  }
  // Waits until the copy into slot k of the given phase parity has landed.
  __device__ __forceinline__ void wait(int k, std::uint32_t parity) const {
    mbarrier_wait(shared_address(bar + k), parity);
  }
  // v[i] = row `i_row` of slot k [at + i] (16-byte shared loads; `at` a multiple of 4, and with
  // PARTS > 1 a multiple of NV - OVERLAP, so that v lies in one part).
  template <int NV>
  __device__ __forceinline__ void read(int k, int i_row, int at, T (&v)[NV]) const {
    if constexpr (PARTS == 1) {
      read_groups(base + k * stride + i_row * W + at, v);
    } else {
      static_assert(kStep % (NV - OVERLAP) == 0, "a lane's inputs lie in one part");
      const int p = at / kStep < PARTS ? at / kStep : PARTS - 1;
      const int part = part_bytes(rows) / int(sizeof(T));
      read_groups(base + k * stride + p * part + i_row * kBoxW + (at - p * kStep), v);
    }
  }
};

// A block-wide ring of `slots` slots in dynamic shared memory, each filled by the tensor memory
// accelerator with one copy (a tensor box, or a contiguous byte range), and read by every warp of
// the block. Thread 0 is the producer; each warp is a consumer. Two mbarriers per slot: `full`
// (one arrival, the producer's, plus the copy's bytes) and `empty` (one arrival per consumer
// warp), so a slot is refilled only once every warp has released it, and no block-wide barrier
// is needed after the start. Against TmaRing (one ring per warp): a row of the block's tile is
// copied once for the block, not once per warp that reads it.
// The steps of the march go through the slots in turn; a Cursor follows them (slot k, and the
// parity of the slot's use: its use count & 1). Use: init<warps>() by thread 0, __syncthreads(); the
// producer, for each step in order, acquire() then issue_*(), advancing its own cursor; each warp,
// for each step, wait(), reads, release(), advancing its cursor.
struct BlockRing {
  unsigned char* base;   // slot k at base + k * stride bytes
  std::uint64_t* full;   // one mbarrier per slot: the copy landed
  std::uint64_t* empty;  // one mbarrier per slot: every warp is done with it
  int stride, slots;

  struct Cursor {
    int k = 0;               // the slot of the current step
    std::uint32_t use = 0;   // how many times the ring wrapped before it
    __device__ __forceinline__ void next(int slots) {
      if (++k == slots) k = 0, ++use;
    }
  };

  template <int Consumers>
  __device__ __forceinline__ void init() const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    for (int k = 0; k < slots; ++k) {
      mbarrier_init<1>(shared_address(full + k));
      mbarrier_init<Consumers>(shared_address(empty + k));
    }
    mbarrier_init_fence();
#endif
  }
  template <class T>
  __device__ __forceinline__ const T* at(const Cursor& c) const {
    return reinterpret_cast<const T*>(base + c.k * stride);
  }
  // Producer: waits until every warp has released the slot's previous step, if any.
  __device__ __forceinline__ void acquire(const Cursor& c) const {
    if (c.use > 0) wait_on(empty + c.k, (c.use - 1) & 1u);
  }
  // Producer: the slot = the box of the 4-D tensor map whose first element is (x, y, z, b),
  // `bytes` the box's size.
  // With evict_last, the L2 keeps the box's bytes as last to evict (the neighbouring tiles read
  // the same halo rows).
  __device__ __forceinline__ void issue_box(const Cursor& c, const CUtensorMap* map, int x, int y,
                                            int z, int b, int bytes,
                                            bool evict_last = false) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const std::uint32_t bar = expect(c, bytes);
    if (evict_last) {
      std::uint64_t policy;
      asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(policy));
      asm volatile(
          "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
          ".L2::cache_hint [%0], [%1, {%2, %3, %4, %5}], [%6], %7;\n" ::"r"(
              shared_address(base + c.k * stride)),
          "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(b), "r"(bar),
          "l"(policy)
          : "memory");
    } else {
      copy_box(base + c.k * stride, map, x, y, z, b, bar);
    }
#endif
  }
  // Producer: `bytes` bytes (a multiple of 16, both ends 16-byte aligned) from src to the slot
  // at byte offset `to`; with evict_first, the L2 keeps the bytes read as first to evict.
  __device__ __forceinline__ void issue_bytes(const Cursor& c, int to, const void* src, int bytes,
                                              bool evict_first = false) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const std::uint32_t bar = expect(c, bytes);
    if (evict_first) {
      std::uint64_t policy;
      asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
          " [%0], [%1], %2, [%3], %4;\n" ::"r"(shared_address(base + c.k * stride + to)),
          "l"(src), "r"(bytes), "r"(bar), "l"(policy)
          : "memory");
    } else {
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
          ::"r"(shared_address(base + c.k * stride + to)), "l"(src), "r"(bytes), "r"(bar)
          : "memory");
    }
#endif
  }
  // Consumer: waits until the step's copy has landed.
  __device__ __forceinline__ void wait(const Cursor& c) const { wait_on(full + c.k, c.use & 1u); }
  // Consumer: the warp is done with the step (every lane's reads of it issued before this call).
  __device__ __forceinline__ void release(const Cursor& c, int lane) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    __syncwarp();
    if (lane == 0)
      asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(shared_address(empty + c.k))
                   : "memory");
#endif
  }

 private:
  // One arrival on the slot's `full` barrier, expecting `bytes`; returns the barrier.
  __device__ __forceinline__ std::uint32_t expect(const Cursor& c, int bytes) const {
    const std::uint32_t bar = shared_address(full + c.k);
    mbarrier_expect_bytes(bar, std::uint32_t(bytes));
    return bar;
  }
  __device__ __forceinline__ static void wait_on(std::uint64_t* b, std::uint32_t parity) {
    mbarrier_wait(shared_address(b), parity);
  }
};

// The tensor map of a batch of 3-D arrays (2-D arrays: nz = 1) for TmaRing and BlockRing: dims
// (nx, ny, nz, batch), boxes of box_w x box_rows x 1 x 1 elements, zeros outside. False (and the
// map unset) where it cannot serve the array: a row pitch that is not a multiple of 16 bytes, a
// base not 16-byte aligned, an extent past 2^31 elements, or the driver's encoder missing (the
// policy, FastPolicy::tensor_map, chose the feed knowing these; the caller falls back to
// FastPolicy::fallback if the encoding fails after all).
// l2_promotion: the bytes the L2 fetches per read (0 none, 64, 128, 256: FastPolicy::l2_promotion).
bool make_row_map(CUtensorMap* map, const void* base, int elem_bytes, std::int64_t nx,
                  std::int64_t ny, std::int64_t nz, std::int64_t batch, int box_w, int box_rows,
                  int l2_promotion);

// The feed in words, for the plans (`depth`: rows in flight under the register prefetch; for
// kTma, `depth` slots of `box_rows` rows).
std::string feed_name(Feed f, int depth = 1, int box_rows = 1, int copies = 1);

// Launch parameters shared by the three ranks.
struct Geometry {
  std::int64_t batch = 1, nz = 1, ny = 1, nx = 1;
  std::int64_t strips = 1;  // warps across x (each covers 32 * kTx columns, or 32 * 8 in 1D)
  std::int64_t chunk = 1;   // rows (2D) or planes (3D) one warp streams through
  std::int64_t chunks = 1;
  std::int64_t items = 1;   // warps of work in all
  bool vec = false;
};

// The current device's facts for the policy (multiprocessors, compute capability, whether the
// driver's tensor-map encoder was found); throws halo::Error if no device answers.
DeviceFacts current_device_facts();

// Blocks of `kernel` (launched with `threads` threads and `dynamic_smem` bytes of dynamic shared
// memory) resident on the whole GPU (`sms` multiprocessors) at once. Sets the kernel's dynamic
// shared-memory limit to dynamic_smem first, so the launch that follows may use it: the default
// limit is 48 KB for static and dynamic together, so 48 KB of ring beside a few mbarriers already
// needs it.
template <class Kernel>
std::int64_t resident_blocks(Kernel kernel, int threads, std::size_t dynamic_smem, int sms) {
  if (dynamic_smem > 0)
    HALO_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         int(dynamic_smem)),
                    "setting the shared-memory limit of a fast kernel to " +
                        std::to_string(dynamic_smem) + " bytes");
  int blocks = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, dynamic_smem) !=
      cudaSuccess)
    blocks = 1;
  return std::int64_t(blocks > 0 ? blocks : 1) * sms;
}

// Warps of `kernel` (launched with kThreads threads and `dynamic_smem` bytes of dynamic shared
// memory) resident on the whole GPU (`sms` multiprocessors) at once.
template <class Kernel>
std::int64_t resident_warps(Kernel kernel, std::size_t dynamic_smem, int sms) {
  return resident_blocks(kernel, kThreads, dynamic_smem, sms) * kWarpsPerBlock;
}

// fit_chunks() of fast_policy.hpp into g.chunk and g.chunks (`forced`: FastPolicy::chunk).
inline void fit_chunks(Geometry& g, std::int64_t stream_len, std::int64_t per_chunk, int R,
                       std::int64_t resident, std::int64_t forced) {
  const Chunking c = fit_chunks(stream_len, per_chunk, R, resident, forced);
  g.chunk = c.chunk;
  g.chunks = c.chunks;
}

// Each rank's launcher: runs the kernels that the policy `pol` chooses (its compiled radius
// pol.radius) on `stream`, with `window` the (2R+1)^d padded weights of that radius. Returns false
// if no kernel is compiled for pol.radius (the strategy's can_implement keeps that from
// happening).
template <class T>
bool launch_1d(const T* in, T* out, const Geometry& g, const FastPolicy& pol,
               const double* window, cudaStream_t stream);
template <class T>
bool launch_2d(const T* in, T* out, const Geometry& g, const FastPolicy& pol,
               const double* window, cudaStream_t stream);
template <class T>
bool launch_3d(const T* in, T* out, const Geometry& g, const FastPolicy& pol,
               const double* window, cudaStream_t stream);

// How each rank's launcher runs the problem, in words: `pol` the policy for 16-byte aligned
// arrays, `unaligned` the one for arrays that are not (what runs where no tensor map or 16-byte
// copy can serve the rows), described where it differs.
std::string plan_1d(const FastPolicy& pol, const FastPolicy& unaligned);
std::string plan_2d(const FastPolicy& pol, const FastPolicy& unaligned);
std::string plan_3d(const FastPolicy& pol, const FastPolicy& unaligned);

}  // namespace halo::cuda::fast
