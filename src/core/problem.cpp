// Problem: validation up front, the correlation every strategy computes, the roofline numbers.
#include <algorithm>
#include <limits>
#include <new>
#include <sstream>

#include "core/detail.hpp"
#include "halo/halo.hpp"

namespace halo {

Problem::Problem(int rank, const Extents& extents, std::int64_t batch, const Filter& filter,
                 DType dtype, Op op, Boundary boundary)
    : rank_(rank), extents_{1, 1, 1}, batch_(batch), filter_(filter), dtype_(dtype), op_(op),
      boundary_(boundary) {
  if (rank < 1 || rank > kMaxRank)
    throw Error("problem rank must be 1, 2 or 3, got " + std::to_string(rank));
  for (int i = 0; i < rank; ++i) {
    if (extents[i] < 1)
      throw Error("array extent " + std::to_string(i) + " must be >= 1, got " +
                  std::to_string(extents[i]) + " (shape " +
                  detail::join_extents(extents, rank) + ")");
    extents_[i] = extents[i];
  }
  if (batch < 1) throw Error("batch must be >= 1, got " + std::to_string(batch));
  if (filter.rank() == 0) throw Error("the filter is empty");
  if (filter.rank() != rank)
    throw Error("a " + std::to_string(filter.rank()) + "-D filter (" + filter.shape_string() +
                ") does not fit a " + std::to_string(rank) + "-D array (" +
                detail::join_extents(extents_, rank) +
                "); place a 1-D filter along an axis with Filter::along_axis / --axis");
  // Element and byte counts must fit in 64 bits.
  const std::int64_t per = detail::checked_product(extents_.data(), rank, "array");
  if (per > std::numeric_limits<std::int64_t>::max() / batch / 8)
    throw Error("array of " + std::to_string(per) + " x batch " + std::to_string(batch) +
                " elements is too large");
  std::vector<double> w;
  try {
    w = filter.weights();
  } catch (const std::bad_alloc&) {
    throw Error("cannot allocate " + std::to_string(filter.taps() * 8) +
                " bytes for a copy of the filter's weights");
  }
  // Flipping every axis of a C-order array reverses its flat order.
  if (op == Op::convolve) std::reverse(w.begin(), w.end());
  // Output i reads input i - anchor + j, so along an axis of extent n only the taps j in
  // [anchor - (n-1), anchor + (n-1)] can reach the array; the others meet ghost cells alone,
  // which are zero, and are dropped. This keeps a filter larger than the array (even a huge one)
  // at no more than 2n - 1 taps per axis: exact, and the cost stays bounded by the array.
  Extents lo{0, 0, 0};
  bool cropped = false;
  for (int i = 0; i < rank; ++i) {
    const std::int64_t k = filter.extents()[i], n = extents_[i];
    const std::int64_t a = op == Op::correlate ? k / 2 : k - 1 - k / 2;
    lo[i] = std::max<std::int64_t>(0, a - (n - 1));
    const std::int64_t hi = std::min<std::int64_t>(k - 1, a + (n - 1));
    kext_[i] = hi - lo[i] + 1;
    anchor_[i] = a - lo[i];
    cropped = cropped || kext_[i] != k;
  }
  if (!cropped) {
    cweights_ = std::move(w);
    return;
  }
  const Dims3 full = to_dims3(filter.extents(), rank), part = to_dims3(kext_, rank);
  const Dims3 off = to_dims3(lo, rank);
  // to_dims3 pads absent axes with 1; their offset must be 0.
  const std::int64_t oz = rank == 3 ? off.z : 0, oy = rank >= 2 ? off.y : 0, ox = off.x;
  cweights_.resize(static_cast<std::size_t>(part.count()));
  for (std::int64_t z = 0; z < part.z; ++z)
    for (std::int64_t y = 0; y < part.y; ++y)
      for (std::int64_t x = 0; x < part.x; ++x)
        cweights_[(z * part.y + y) * part.x + x] =
            w[((z + oz) * full.y + (y + oy)) * full.x + (x + ox)];
}

std::int64_t Problem::taps() const {
  return detail::checked_product(kext_.data(), rank_, "filter");
}

bool Problem::filter_cropped() const {
  for (int i = 0; i < rank_; ++i)
    if (kext_[i] != filter_.extents()[i]) return true;
  return false;
}

Dims3 Problem::anchor3() const {
  const Dims3 d = to_dims3(anchor_, rank_);
  // to_dims3 pads with 1; an absent axis has filter extent 1 and anchor 0.
  Dims3 a{0, 0, 0};
  if (rank_ == 1) a.x = d.x;
  if (rank_ == 2) { a.y = d.y; a.x = d.x; }
  if (rank_ == 3) a = d;
  return a;
}

std::int64_t Problem::elements_per_item() const {
  return detail::checked_product(extents_.data(), rank_, "array");
}
std::int64_t Problem::elements() const { return batch_ * elements_per_item(); }
double Problem::flops() const { return 2.0 * double(taps()) * double(elements()); }
double Problem::bytes() const { return 2.0 * double(elements()) * double(dtype_size(dtype_)); }

bool Problem::odd_filter() const {
  for (int i = 0; i < rank_; ++i)
    if (kext_[i] % 2 == 0) return false;
  return true;
}

std::int64_t Problem::max_radius() const {
  std::int64_t r = 0;
  for (int i = 0; i < rank_; ++i) r = std::max({r, anchor_[i], kext_[i] - 1 - anchor_[i]});
  return r;
}

std::string Problem::describe() const {
  std::ostringstream os;
  os << rank_ << "D " << detail::join_extents(extents_, rank_) << " " << to_string(dtype_);
  if (batch_ > 1) os << " batch " << batch_;
  os << ", filter " << filter_.shape_string();
  if (filter_cropped())
    os << " (cropped to " << detail::join_extents(kext_, rank_) << ", the taps that reach the array)";
  os << ", " << to_string(op_) << ", " << to_string(boundary_);
  return os.str();
}

Traffic Strategy::model(const Problem& p) const { return {p.bytes(), p.flops()}; }

}  // namespace halo
