// The arithmetic-intensity model of the seed notes (halo/model.hpp, namespace halo::model).
#include <cmath>

#include "halo/model.hpp"

namespace halo::model {

double basic_intensity(std::size_t b) { return 2.0 / (2.0 * double(b)); }
double constant_intensity(std::size_t b) { return 2.0 / double(b); }

double memory_reduction(int rank, std::int64_t k, std::int64_t out_tile) {
  const double in_tile = double(out_tile + k - 1);
  return std::pow(double(out_tile) * double(k) / in_tile, rank);
}

double tiled_intensity(int rank, std::int64_t k, std::int64_t out_tile, std::size_t b) {
  // OUT^d outputs x k^d taps x 2 OP, over IN^d elements x b bytes.
  return memory_reduction(rank, k, out_tile) * 2.0 / double(b);
}

double tiled_bound(int rank, std::int64_t k, std::size_t b) {
  return std::pow(double(k), rank) * 2.0 / double(b);
}

}  // namespace halo::model
