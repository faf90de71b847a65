// The dtype table's lookups: a per-dtype constant exists for the dtypes it was written for and is
// an error naming itself for any other, never another dtype's value.
#include <gtest/gtest.h>

#include "core/dtype.hpp"
#include "support.hpp"

namespace halo::test {
namespace {

TEST(DTypeTable, PerDtypeValuesAreTheirOwn) {
  EXPECT_EQ(per_dtype(DType::f32, 1, 2, "a constant"), 1);
  EXPECT_EQ(per_dtype(DType::f64, 1, 2, "a constant"), 2);
  static_assert(per_type<float>(1, 2) == 1 && per_type<double>(1, 2) == 2);
}

TEST(DTypeTable, ADtypeWithoutAValueIsAnErrorNamingTheConstant) {
  const DType other = static_cast<DType>(int(DType::f64) + 1);  // a dtype the table may gain
  try {
    per_dtype(other, 1.0, 2.0, "cpu_fft's cost model");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cpu_fft's cost model has no value for dtype"),
              std::string::npos)
        << e.what();
  }
}

TEST(DTypeTable, EveryRowDispatchesToItsOwnType) {
  for (const DTypeInfo& d : dtypes()) {
    const std::size_t size =
        dispatch_dtype<AllDTypes>(d.dtype,
                                  [](auto t) { return sizeof(typename decltype(t)::storage); });
    EXPECT_EQ(size, d.size) << d.name;
    EXPECT_EQ(dtype_size(d.dtype), d.size) << d.name;
  }
}

// Code dispatches over the dtypes it lists: any other is an Error naming the dtype, never the
// code of another dtype.
TEST(DTypeTable, DispatchIsOverTheListedDtypesOnly) {
  const auto size = [](auto t) { return sizeof(typename decltype(t)::storage); };
  EXPECT_EQ(dispatch_dtype<DTypeList<DType::f64>>(DType::f64, size), 8u);
  try {
    dispatch_dtype<DTypeList<DType::f64>>(DType::f32, size);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("dtype f32: this code is not written for it"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(dispatch_dtype(static_cast<DType>(int(DType::f64) + 1), size), Error);
}

}  // namespace
}  // namespace halo::test
