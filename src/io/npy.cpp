// PLACEHOLDER — being written.
#include "io/npy.hpp"
namespace halo::io {
void NpyArray::Free::operator()(void* p) const { ::operator delete(p); }
NpyArray::NpyArray(DType t, std::vector<std::int64_t> s) : dtype_(t), shape_(std::move(s)) {
  size_ = 1; for (auto e : shape_) size_ *= e;
  data_.reset(::operator new(nbytes()));
}
NpyArray read_npy(const std::string& path) { throw Error(path + ": npy reading not implemented yet"); }
void write_npy(const std::string& path, DType, const std::vector<std::int64_t>&, const void*) { throw Error(path + ": npy writing not implemented yet"); }
}
