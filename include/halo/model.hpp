// halo — the arithmetic-intensity model of the seed notes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace halo {

// ---------------------------------------------------------------------------------------------
// The arithmetic-intensity model of the seed notes (OP/B: FLOPs per byte of DRAM traffic).
// A filter of width k (= 2r+1 when odd) on every axis of a rank-d problem; `element_bytes` is 4 for
// float32. A tile of the "block = input tile" design has IN_TILE_DIM^d input elements and
// OUT_TILE_DIM = IN_TILE_DIM - (k-1) outputs per axis.
// ---------------------------------------------------------------------------------------------
namespace model {
// One tap = one multiply-add = 2 OP; basic reads the input and the filter element (2 loads).
double basic_intensity(std::size_t element_bytes = 4);
// The filter lives in constant memory (cached): one load per tap.
double constant_intensity(std::size_t element_bytes = 4);
// Tiled: OUT^d * k^d * 2 OP over IN^d loads, IN = OUT + k - 1.
double tiled_intensity(int rank, std::int64_t k, std::int64_t out_tile,
                       std::size_t element_bytes = 4);
// Its limit for tiles much larger than the filter: k^d * 2 / element_bytes.
double tiled_bound(int rank, std::int64_t k, std::size_t element_bytes = 4);
// Global-memory reduction of tiling: loads without tiles (OUT^d * k^d) over loads with (IN^d).
double memory_reduction(int rank, std::int64_t k, std::int64_t out_tile);
}  // namespace model

}  // namespace halo
