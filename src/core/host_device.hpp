// HALO_HOST_DEVICE: a function compiled for the host and, under nvcc, for the device too, so that
// one definition (the boundary index map, the fast policy's shape helpers) serves both.
#pragma once

#if defined(__CUDACC__)
#define HALO_HOST_DEVICE __host__ __device__
#else
#define HALO_HOST_DEVICE
#endif
