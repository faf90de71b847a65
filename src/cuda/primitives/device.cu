// The device as launchers see it (device.cuh): the current device's facts, kernels' occupancy,
// and the tensor maps of the TMA rings, encoded through the runtime's driver entry point.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include "cuda/check.cuh"
#include "cuda/primitives/device.cuh"
#include "halo/info.hpp"

namespace halo::cuda::prim {
namespace {

// cuTensorMapEncodeTiled, through the runtime (no link against the driver library), or null.
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault,
                                         &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
      cudaGetLastError();  // a missing entry point is not an error of the next launch
      return PFN_cuTensorMapEncodeTiled_v12000(nullptr);
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  return fn;
}

// The L2 promotion of a tensor map's reads: 0 (none), 64, 128 or 256 bytes.
CUtensorMapL2promotion promotion(int bytes) {
  switch (bytes) {
    case 0:
      return CU_TENSOR_MAP_L2_PROMOTION_NONE;
    case 64:
      return CU_TENSOR_MAP_L2_PROMOTION_L2_64B;
    case 128:
      return CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
    default:
      return CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  }
}

}  // namespace

DeviceFacts current_device_facts() {
  int dev = 0;
  HALO_CUDA_CHECK(cudaGetDevice(&dev), "querying the current device");
  // A device's facts do not change: asked once per device and thread.
  thread_local std::map<int, DeviceFacts> known;
  const auto found = known.find(dev);
  if (found != known.end()) return found->second;
  DeviceFacts f;
  HALO_CUDA_CHECK(cudaDeviceGetAttribute(&f.multiprocessors, cudaDevAttrMultiProcessorCount, dev),
                  "querying the multiprocessor count");
  HALO_CUDA_CHECK(
      cudaDeviceGetAttribute(&f.compute_major, cudaDevAttrComputeCapabilityMajor, dev),
      "querying the compute capability");
  f.tensor_map_encoder = tensor_map_encoder() != nullptr;
  known[dev] = f;
  return f;
}

DeviceFacts planning_facts() {
  return cuda_available() ? current_device_facts() : DeviceFacts{};
}

int occupancy(const void* kernel, int threads, std::size_t dynamic_smem) {
  int dev = 0;
  HALO_CUDA_CHECK(cudaGetDevice(&dev), "querying the current device");
  static std::mutex m;
  static std::map<std::pair<const void*, int>, std::size_t> limit;  // (kernel, device): bytes
  static std::map<std::tuple<const void*, int, std::size_t, int>, int> blocks;
  const std::lock_guard<std::mutex> lock(m);
  if (dynamic_smem > 0) {
    std::size_t& set = limit[{kernel, dev}];
    if (set != dynamic_smem) {
      set = 0;
      HALO_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           int(dynamic_smem)),
                      "setting the shared-memory limit of a kernel to " +
                          std::to_string(dynamic_smem) + " bytes");
      set = dynamic_smem;
    }
  }
  const auto key = std::make_tuple(kernel, threads, dynamic_smem, dev);
  const auto found = blocks.find(key);
  if (found != blocks.end()) return found->second;
  int n = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, dynamic_smem) !=
      cudaSuccess) {
    (void)cudaGetLastError();
    n = 1;
  }
  return blocks[key] = n;
}

namespace {
// A 4-D tensor map of `elem_bytes` elements (CUDA's order: innermost first), zeros outside.
bool encode_map(CUtensorMap* map, const void* base, int elem_bytes, const cuuint64_t (&dims)[4],
                const cuuint64_t (&strides)[3], const cuuint32_t (&box)[4], int l2_promotion) {
  const auto encode = tensor_map_encoder();
  if (!encode) return false;
  const cuuint32_t unit[4] = {1, 1, 1, 1};
  return encode(map, elem_bytes == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
                4, const_cast<void*>(base), dims, strides, box, unit,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, promotion(l2_promotion),
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}
}  // namespace

bool make_row_map(CUtensorMap* map, const void* base, int elem_bytes, std::int64_t nx,
                  std::int64_t ny, std::int64_t nz, std::int64_t batch, int box_w, int box_rows,
                  int l2_promotion) {
  const std::int64_t limit = std::int64_t(1) << 31;  // coordinates are 32-bit signed
  if ((nx * elem_bytes) % 16 != 0 || reinterpret_cast<std::uintptr_t>(base) % 16 != 0 ||
      nx >= limit || ny >= limit || nz >= limit || batch >= limit || box_w > 256 ||
      box_rows > 256 || (box_w * elem_bytes) % 16 != 0)
    return false;
  const cuuint64_t dims[4] = {cuuint64_t(nx), cuuint64_t(ny), cuuint64_t(nz), cuuint64_t(batch)};
  const cuuint64_t row = cuuint64_t(nx) * elem_bytes;
  const cuuint64_t strides[3] = {row, row * cuuint64_t(ny), row * cuuint64_t(ny) * cuuint64_t(nz)};
  const cuuint32_t box[4] = {cuuint32_t(box_w), cuuint32_t(box_rows), 1, 1};
  return encode_map(map, base, elem_bytes, dims, strides, box, l2_promotion);
}

bool make_seam_map(CUtensorMap* map, const void* base, int elem_bytes, std::int64_t nx,
                   std::int64_t ny, std::int64_t nz, std::int64_t batch, int half_w,
                   int box_rows, int l2_promotion) {
  const std::int64_t limit = std::int64_t(1) << 31;
  if ((nx * elem_bytes) % 16 != 0 || reinterpret_cast<std::uintptr_t>(base) % 16 != 0 ||
      nx < 2 * half_w || nx >= limit || ny >= limit || nz * batch >= limit || half_w > 128 ||
      box_rows > 256 || (half_w * elem_bytes) % 16 != 0)
    return false;
  const cuuint64_t dims[4] = {cuuint64_t(half_w), 2, cuuint64_t(ny), cuuint64_t(nz * batch)};
  const cuuint64_t row = cuuint64_t(nx) * elem_bytes;
  const cuuint64_t strides[3] = {cuuint64_t(nx - half_w) * elem_bytes, row,
                                 row * cuuint64_t(ny)};
  const cuuint32_t box[4] = {cuuint32_t(half_w), 2, cuuint32_t(box_rows), 1};
  return encode_map(map, base, elem_bytes, dims, strides, box, l2_promotion);
}

}  // namespace halo::cuda::prim
