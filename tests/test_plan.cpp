// Plans (halo::prepare, Plan::run): a plan made once runs many arrays of its description and
// gives apply()'s results bit for bit, with apply()'s choice; arrays of another description, an
// empty plan and overlapping arrays are errors that name the problem; prepare() refuses what
// apply() refuses; a plan keeps its own copy of the filter and options.
#include <gtest/gtest.h>

#ifdef HALO_TEST_CUDA  // set by tests/CMakeLists.txt when the CUDA backend is built
#include <cuda_runtime.h>
#endif

#include <cstring>
#include <string>
#include <vector>

#include "halo/halo.hpp"
#include "halo/strategy.hpp"
#include "support.hpp"

namespace halo::test {
namespace {

ArrayDesc desc_of(int rank, Extents e, std::int64_t batch, DType t) {
  ArrayDesc d;
  d.rank = rank;
  d.extents = e;
  d.batch = batch;
  d.dtype = t;
  return d;
}

template <class T>
ConstArrayView cview(const std::vector<T>& v, const ArrayDesc& d) {
  return ConstArrayView(v.data(), d.dtype, d.rank, d.extents, d.batch);
}
template <class T>
ArrayView mview(std::vector<T>& v, const ArrayDesc& d) {
  ArrayView o;
  o.data = v.data();
  o.dtype = d.dtype;
  o.rank = d.rank;
  o.extents = d.extents;
  o.batch = d.batch;
  return o;
}

// What choose() takes for arrays of d.
std::string apply_choice(const ArrayDesc& d, const Filter& f, const Options& opt) {
  Problem p(d.rank, d.extents, d.batch, f, d.dtype, opt.op, opt.edges);
  p.require_direct_sums(opt.direct_sums);
  p.set_footprint(opt.footprint);
  p.set_tuning(opt.tuning);
  return choose(p, opt, d.space).strategy;
}

// Several fresh inputs through one plan against apply() on each: equal bit for bit (the same
// strategy on the same problem), outputs poisoned before every run.
template <class T>
void runs_as_apply(const ArrayDesc& d, const Filter& f, const Options& opt) {
  const Plan plan = prepare(d, f, opt);
  const std::int64_t n = d.batch * d.extents[0] * d.extents[1] * d.extents[2];
  for (int round = 0; round < 3; ++round) {
    const std::vector<T> in = random_vector<T>(n);
    std::vector<T> a(in.size()), b(in.size());
    poison(a);
    poison(b);
    const RunInfo ra = plan.run(cview(in, d), mview(a, d));
    const RunInfo rb = apply(cview(in, d), mview(b, d), f, opt);
    EXPECT_EQ(ra.strategy, rb.strategy);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(T)), 0)
        << plan.describe() << ", round " << round;
  }
  EXPECT_EQ(plan.info().strategy, apply_choice(d, f, opt));
}

TEST(Plan, RunsManyArraysAsApplyDoes) {
  Options cpu;
  cpu.backend = Backend::cpu;
  Options reflect = cpu;
  reflect.edges = Edges::all(Boundary::reflect);
  reflect.op = Op::convolve;
  Options wrap_box = cpu;
  wrap_box.edges = Edges::all(Boundary::wrap);
  runs_as_apply<float>(desc_of(1, {1009, 1, 1}, 1, DType::f32), random_filter({7}), cpu);
  runs_as_apply<double>(desc_of(2, {37, 64, 1}, 2, DType::f64), random_filter({5, 3}), reflect);
  runs_as_apply<float>(desc_of(2, {300, 301, 1}, 1, DType::f32),
                       make_named_filter("gaussian:sigma=2", 2), reflect);
  runs_as_apply<float>(desc_of(3, {9, 10, 11}, 1, DType::f32), make_named_filter("box:3", 3),
                       wrap_box);
  runs_as_apply<double>(desc_of(3, {5, 1, 7}, 1, DType::f64), random_filter({3, 3, 9}), cpu);
  Options ref = cpu;
  ref.backend = Backend::reference;
  runs_as_apply<double>(desc_of(2, {13, 17, 1}, 1, DType::f64), random_filter({4, 4}), ref);
}

TEST(Plan, KeepsItsOwnFilterAndOptions) {
  const ArrayDesc d = desc_of(2, {40, 50, 1}, 1, DType::f64);
  std::vector<double> w = random_vector<double>(9);
  Filter f(w, {3, 3});
  Options opt;
  opt.backend = Backend::cpu;
  opt.edges = Edges::all(Boundary::nearest);
  const Plan plan = prepare(d, f, opt);
  const Filter kept = f;
  const Options kept_opt = opt;
  f = random_filter({5, 5});  // the caller's objects change after prepare()
  opt.edges = Edges::all(Boundary::constant, 3.0);
  const std::vector<double> in = random_vector<double>(40 * 50);
  std::vector<double> a(in.size()), b(in.size());
  poison(a);
  poison(b);
  plan.run(cview(in, d), mview(a, d));
  apply(cview(in, d), mview(b, d), kept, kept_opt);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)), 0);
}

TEST(Plan, RefusesOtherArraysAndSaysWhich) {
  const ArrayDesc d = desc_of(2, {20, 30, 1}, 1, DType::f32);
  Options opt;
  opt.backend = Backend::cpu;
  const Plan plan = prepare(d, random_filter({3, 3}), opt);
  std::vector<float> in = random_vector<float>(600), out(600);
  const auto message = [&](const ArrayDesc& di, const ArrayDesc& dout) {
    try {
      plan.run(cview(in, di), mview(out, dout));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const ArrayDesc other = desc_of(2, {30, 20, 1}, 1, DType::f32);
  const std::string m = message(other, other);
  EXPECT_NE(m.find("30x20"), std::string::npos) << m;
  EXPECT_NE(m.find("20x30"), std::string::npos) << m;
  const ArrayDesc batched = desc_of(2, {20, 30, 1}, 2, DType::f32);
  std::vector<float> in2 = random_vector<float>(1200), out2(1200);
  EXPECT_THROW(plan.run(cview(in2, batched), mview(out2, batched)), Error);
  // Mismatched input and output, overlap, null pointers, an empty plan.
  EXPECT_THROW(plan.run(cview(in, d), mview(out, other)), Error);
  EXPECT_THROW(plan.run(cview(in, d), mview(in, d)), Error);
  ArrayView null_out = mview(out, d);
  null_out.data = nullptr;
  EXPECT_THROW(plan.run(cview(in, d), null_out), Error);
  const Plan empty;
  EXPECT_THROW(empty.run(cview(in, d), mview(out, d)), Error);
  EXPECT_THROW(empty.info(), Error);
  EXPECT_EQ(empty.describe(), "an empty plan");
  EXPECT_NE(plan.describe().find(plan.info().strategy), std::string::npos) << plan.describe();
}

TEST(Plan, PrepareRefusesWhatApplyRefuses) {
  Options opt;
  opt.backend = Backend::cpu;
  // A bad description, an origin out of range, an unknown strategy, a filter of another rank.
  EXPECT_THROW(prepare(desc_of(2, {0, 5, 1}, 1, DType::f32), random_filter({3, 3}), opt), Error);
  Options origin = opt;
  origin.edges.origin = {5, 0, 0};
  EXPECT_THROW(prepare(desc_of(2, {9, 9, 1}, 1, DType::f32), random_filter({3, 3}), origin),
               Error);
  Options unknown = opt;
  unknown.strategy = "no_such_strategy";
  try {
    prepare(desc_of(1, {9, 1, 1}, 1, DType::f32), random_filter({3}), unknown);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_strategy"), std::string::npos) << e.what();
  }
  EXPECT_THROW(prepare(desc_of(1, {9, 1, 1}, 1, DType::f32), random_filter({3, 3}), opt), Error);
}

#ifdef HALO_TEST_CUDA
// A device plan where a GPU is present: device arrays, a CUDA strategy, a stream given per run,
// as apply() on the same arrays, bit for bit.
TEST(Plan, RunsDeviceArraysOnTheGpu) {
  SKIP_WITHOUT_GPU();
  ArrayDesc d = desc_of(2, {257, 300, 1}, 1, DType::f32);
  d.space = MemorySpace::device;
  const Filter f = make_named_filter("gaussian:sigma=1.5", 2);
  Options opt;
  opt.edges = Edges::all(Boundary::reflect);
  const Plan plan = prepare(d, f, opt);
  EXPECT_EQ(plan.info().backend, Backend::cuda);
  const std::vector<float> in = random_vector<float>(257 * 300);
  const std::size_t bytes = in.size() * sizeof(float);
  void *din = nullptr, *da = nullptr, *db = nullptr;
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaMalloc(&din, bytes), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&da, bytes), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&db, bytes), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(din, in.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  cudaMemset(da, kPoisonByte, bytes);
  cudaMemset(db, kPoisonByte, bytes);
  const ConstArrayView iv(din, d.dtype, d.rank, d.extents, 1, MemorySpace::device);
  ArrayView a, b;
  a.data = da, b.data = db;
  for (ArrayView* v : {&a, &b}) {
    v->rank = d.rank;
    v->extents = d.extents;
    v->space = MemorySpace::device;
  }
  plan.run(iv, a, stream);
  Options on_stream = opt;
  on_stream.stream = stream;
  apply(iv, b, f, on_stream);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  std::vector<float> ha(in.size()), hb(in.size());
  cudaMemcpy(ha.data(), da, bytes, cudaMemcpyDeviceToHost);
  cudaMemcpy(hb.data(), db, bytes, cudaMemcpyDeviceToHost);
  EXPECT_EQ(std::memcmp(ha.data(), hb.data(), bytes), 0) << plan.describe();
  // Host arrays given to a device plan: refused, naming both.
  std::vector<float> hout(in.size());
  try {
    plan.run(cview(in, desc_of(2, {257, 300, 1}, 1, DType::f32)),
             mview(hout, desc_of(2, {257, 300, 1}, 1, DType::f32)));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("on the host"), std::string::npos) << e.what();
  }
  cudaStreamDestroy(stream);
  cudaFree(din);
  cudaFree(da);
  cudaFree(db);
}
#endif

}  // namespace
}  // namespace halo::test
