// Shared-memory rings and the copies that fill them, for any kernel: a warp's cp.async ring
// (RowRing), mbarriers and the tensor memory accelerator's box copies (copy_box, sm_90), a
// warp's TMA ring (TmaRing) and the block-wide ring its warps read together (BlockRing).
// Used by `fast`'s kernels; separable's TMA kernels use the mbarriers and box copies.
#pragma once

#include <cuda.h>  // CUtensorMap, a type only: the encoder is reached through the runtime
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>
#include <utility>

#include "cuda/primitives/rows.cuh"  // copy_async, read_groups

namespace halo::cuda::prim {
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
// Orders this thread's shared-memory writes before later copies of the tensor memory
// accelerator into the same bytes (the async proxy's).
__device__ __forceinline__ void fence_proxy_async_shared() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
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
  // A consumer's view that it may write (the ghost cells it sets before the block reads them).
  template <class T>
  __device__ __forceinline__ T* at_mutable(const Cursor& c) const {
    return reinterpret_cast<T*>(base + c.k * stride);
  }
  // Producer: waits until every warp has released the slot's previous step, if any.
  __device__ __forceinline__ void acquire(const Cursor& c) const {
    if (c.use > 0) wait_on(empty + c.k, (c.use - 1) & 1u);
  }
  // Producer: the box of the 4-D tensor map whose first element is (x, y, z, b) into the slot
  // at byte offset `to` (a multiple of 128), `bytes` the box's size; it arrives on the step.
  // With evict_last, the L2 keeps the box's bytes as last to evict (the neighbouring tiles read
  // the same halo rows).
  __device__ __forceinline__ void issue_box(const Cursor& c, const CUtensorMap* map, int x, int y,
                                            int z, int b, int bytes, bool evict_last = false,
                                            int to = 0) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const std::uint32_t bar = expect(c, bytes);
    if (evict_last) {
      std::uint64_t policy;
      asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(policy));
      asm volatile(
          "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
          ".L2::cache_hint [%0], [%1, {%2, %3, %4, %5}], [%6], %7;\n" ::"r"(
              shared_address(base + c.k * stride + to)),
          "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(b), "r"(bar),
          "l"(policy)
          : "memory");
    } else {
      copy_box(base + c.k * stride + to, map, x, y, z, b, bar);
    }
#endif
  }
  // Producer: more bytes for the step's copies, before its issue_box() (which arrives): for the
  // copies issue_box_at() adds to the step.
  __device__ __forceinline__ void expect_more(const Cursor& c, int bytes) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(
                     shared_address(full + c.k)),
                 "r"(bytes)
                 : "memory");
#endif
  }
  // Producer: a further box of a 4-D tensor map into the slot at byte offset `to` (a multiple of
  // 128), its bytes counted by an earlier expect_more().
  __device__ __forceinline__ void issue_box_at(const Cursor& c, int to, const CUtensorMap* map,
                                               int x, int y, int z, int b) const {
    copy_box(base + c.k * stride + to, map, x, y, z, b, shared_address(full + c.k));
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

}  // namespace halo::cuda::prim
