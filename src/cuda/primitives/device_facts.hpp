// What a kernel's launcher or policy needs to know of the GPU, as plain values (DeviceFacts):
// plain C++, no CUDA types, so that the pure host policies (fast/policy.hpp) and their tests
// take it on machines without a GPU. The current device's: cuda/primitives/device.cuh.
#pragma once

namespace halo::cuda::prim {

// What the policy needs to know of the GPU, as plain values (the current device's at run time;
// made up in tests). The defaults are an H100's.
struct DeviceFacts {
  int multiprocessors = 132;  // sizes the grids (one wave of resident warps or blocks)
  int compute_major = 9;      // sm_90 and later have the tensor memory accelerator
  bool tensor_map_encoder = true;  // the driver's cuTensorMapEncodeTiled was found

  // Bulk copies by the tensor memory accelerator (the 1D block ring).
  bool tma() const { return compute_major >= 9; }
  // Tensor maps too (the 2D and 3D rings).
  bool tensor_maps() const { return tma() && tensor_map_encoder; }
};

}  // namespace halo::cuda::prim
