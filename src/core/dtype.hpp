// The element types halo computes in: one table of their facts (dtype_info) and one way from a
// runtime DType to code templated on the type (dispatch_dtype). A new dtype is a row of
// HALO_DTYPES and a row of the table in types.cpp; code written for it lists it in the
// DTypeList it dispatches over (FloatDTypes by default), and nothing else instantiates it.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "core/half.hpp"
#include "halo/halo.hpp"

namespace halo {

// X(enumerator, storage type, accumulation type) for every dtype, in the order of enum class
// DType. Storage: the type of an array's elements; accumulation: the type a sum of taps is carried
// in (the accuracy bounds of docs/ACCURACY.md are stated in it): float for uint8 and the half
// types (each of their values is a float exactly), double for the 16- and 32-bit integers and
// float64 (a float's rounding of sums up to 65535 is too coarse to decide SciPy's integers),
// the complex type of the same precision for complex data.
#define HALO_DTYPES(X)                                      \
  X(f32, float, float)                                      \
  X(f64, double, double)                                    \
  X(u8, std::uint8_t, float)                                \
  X(u16, std::uint16_t, double)                             \
  X(i16, std::int16_t, double)                              \
  X(i32, std::int32_t, double)                              \
  X(f16, float16, float)                                    \
  X(bf16, bfloat16, float)                                  \
  X(c64, std::complex<float>, std::complex<float>)          \
  X(c128, std::complex<double>, std::complex<double>)

// From the DType: its storage and accumulation types. From the storage type: its DType and
// accumulation type (for kernels templated on the storage type).
template <DType D>
struct DTypeTraits;
template <class T>
struct StorageTraits;
#define HALO_DTYPE_TRAITS(name, type, acc)      \
  template <>                                   \
  struct DTypeTraits<DType::name> {             \
    using storage = type;                       \
    using accum = acc;                          \
  };                                            \
  template <>                                   \
  struct StorageTraits<type> {                  \
    static constexpr DType dtype = DType::name; \
    using accum = acc;                          \
  };
HALO_DTYPES(HALO_DTYPE_TRAITS)
#undef HALO_DTYPE_TRAITS

template <class T>
using accum_t = typename StorageTraits<T>::accum;
template <class T>
constexpr DType dtype_of() {
  return StorageTraits<T>::dtype;
}

// A list of dtypes: those a piece of templated code is written for.
template <DType... Ds>
struct DTypeList {};
namespace detail {
template <int, DType... Ds>
struct DTypeListOf {
  using type = DTypeList<Ds...>;
};
}  // namespace detail
// Every row of the table.
#define HALO_DTYPE_ITEM(name, type, acc) , DType::name
using AllDTypes = typename detail::DTypeListOf<0 HALO_DTYPES(HALO_DTYPE_ITEM)>::type;
#undef HALO_DTYPE_ITEM
// The dtypes the kernels are written for, and what dispatch_dtype instantiates unless told
// otherwise: a dtype added to the table is instantiated only by the code that lists it.
using FloatDTypes = DTypeList<DType::f32, DType::f64>;
// Every real dtype (storage read as one number): what code that converts to an accumulation
// type itself is written for (core/convert.hpp).
using RealDTypes = DTypeList<DType::f32, DType::f64, DType::u8, DType::u16, DType::i16,
                             DType::i32, DType::f16, DType::bf16>;

inline char dtype_kind(DType t) { return dtype_info(t).kind; }
inline bool is_integer_dtype(DType t) { return dtype_kind(t) == 'u' || dtype_kind(t) == 'i'; }
inline bool is_complex_dtype(DType t) { return dtype_kind(t) == 'c'; }

// The table's name of t ("f32"), or its number where the table has no row for it.
inline std::string dtype_name(DType t) {
  for (const DTypeInfo& d : dtypes())
    if (d.dtype == t) return d.name;
  return std::to_string(static_cast<int>(t));
}

namespace detail {
template <class F, DType D0, DType... Ds>
decltype(auto) dispatch_in(DTypeList<D0, Ds...>, DType t, F&& f) {
  if (t == D0) return std::forward<F>(f)(DTypeTraits<D0>{});
  if constexpr (sizeof...(Ds) > 0)
    return dispatch_in(DTypeList<Ds...>{}, t, std::forward<F>(f));
  else
    throw Error("dtype " + dtype_name(t) + ": this code is not written for it");
}
}  // namespace detail

// f(DTypeTraits<t>{}) for the runtime dtype t, instantiated for the dtypes of List (by default
// FloatDTypes): the one branch on a DType that code templated on the element type needs, e.g.
//   dispatch_dtype(p.dtype(), [&](auto d) { using T = typename decltype(d)::storage; ... });
// A dtype outside List is an Error, never another dtype's code.
template <class List = FloatDTypes, class F>
decltype(auto) dispatch_dtype(DType t, F&& f) {
  return detail::dispatch_in(List{}, t, std::forward<F>(f));
}

// A per-dtype constant of a model or a bound, written out for the dtypes it was measured or
// derived for: `f32` for float32, `f64` for float64. Any other dtype is an Error naming `what`,
// so that a new dtype must add its own value rather than silently taking another's.
template <class V>
V per_dtype(DType t, V f32, V f64, const char* what) {
  if (t == DType::f32) return f32;
  if (t == DType::f64) return f64;
  throw Error(std::string(what) + " has no value for dtype " + dtype_name(t));
}
// The same for code templated on the storage type: a compile error for any other type.
template <class T, class V>
constexpr V per_type(V f32, V f64) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "a per-type constant needs a value for this storage type");
  if constexpr (std::is_same_v<T, float>) return f32;
  else return f64;
}

// dispatch_dtype for code that takes an input and an output buffer of the dtype:
// f(static_cast<const T*>(in), static_cast<T*>(out)), T the storage type of t.
template <class List = FloatDTypes, class F>
decltype(auto) dispatch_buffers(DType t, const void* in, void* out, F&& f) {
  return dispatch_dtype<List>(t, [&](auto d) -> decltype(auto) {
    using T = typename decltype(d)::storage;
    return f(static_cast<const T*>(in), static_cast<T*>(out));
  });
}

}  // namespace halo
