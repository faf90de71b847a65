// The element types halo computes in: one table of their facts (dtype_info) and one way from a
// runtime DType to code templated on the type (dispatch_dtype). A new dtype is a row of
// HALO_DTYPES, a DTypeTraits specialisation and a row of the table in types.cpp; every
// `dispatch_dtype` then instantiates for it, and a strategy that cannot run it says so in
// can_implement.
#pragma once

#include <cstddef>
#include <utility>

#include "halo/halo.hpp"

namespace halo {

// X(enumerator, storage type) for every dtype, in the order of enum class DType.
#define HALO_DTYPES(X) \
  X(f32, float)        \
  X(f64, double)

// Storage: the type of an array's elements. Accum: the type a sum of taps is carried in (the
// accuracy bounds of docs/ACCURACY.md are stated in it); the same as storage for the floating
// types today, wider for a future integer or half type.
template <DType D>
struct DTypeTraits;
template <>
struct DTypeTraits<DType::f32> {
  using storage = float;
  using accum = float;
  static constexpr DType dtype = DType::f32;
};
template <>
struct DTypeTraits<DType::f64> {
  using storage = double;
  using accum = double;
  static constexpr DType dtype = DType::f64;
};

// The accumulation type of a storage type, for kernels templated on the storage type.
template <class T>
struct AccumOf;
#define HALO_ACCUM_OF(name, type) \
  template <>                     \
  struct AccumOf<type> {          \
    using type_ = typename DTypeTraits<DType::name>::accum; \
  };
HALO_DTYPES(HALO_ACCUM_OF)
#undef HALO_ACCUM_OF
template <class T>
using accum_t = typename AccumOf<T>::type_;

// The DType of a storage type.
template <class T>
constexpr DType dtype_of();
#define HALO_DTYPE_OF(name, type)      \
  template <>                          \
  constexpr DType dtype_of<type>() {   \
    return DType::name;                \
  }
HALO_DTYPES(HALO_DTYPE_OF)
#undef HALO_DTYPE_OF

// f(DTypeTraits<t>{}) for the runtime dtype t: the one branch on a DType that code templated on
// the element type needs, e.g.
//   dispatch_dtype(p.dtype(), [&](auto d) { using T = typename decltype(d)::storage; ... });
template <class F>
decltype(auto) dispatch_dtype(DType t, F&& f) {
  switch (t) {
#define HALO_DISPATCH_CASE(name, type) \
  case DType::name:                    \
    return std::forward<F>(f)(DTypeTraits<DType::name>{});
    HALO_DTYPES(HALO_DISPATCH_CASE)
#undef HALO_DISPATCH_CASE
  }
  throw Error("unknown dtype " + std::to_string(static_cast<int>(t)));
}

}  // namespace halo
