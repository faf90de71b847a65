// The .npy reader and writer: bit-exact round trips, hand-made files of every format version, a
// clear "PATH: problem" error for every kind of malformed file, atomic writes, and agreement with
// NumPy itself when python3 and numpy are installed.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "io/npy.hpp"
#include "support.hpp"

namespace fs = std::filesystem;

namespace halo::test {
namespace {

// Every test works in a fresh directory of its own, removed afterwards.
class Npy : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "halo-npy-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr)
        << "mkdtemp " << tmpl << ": " << std::strerror(errno);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::string write_file(const std::string& name, const std::string& bytes) const {
    const std::string p = path(name);
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }

  static std::string read_file(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
  }

  std::vector<std::string> directory_entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
    return names;
  }

  // Expects read_npy(p) to throw halo::Error whose message starts with "p: " and contains every
  // phrase.
  static void expect_read_error(const std::string& p, const std::vector<std::string>& phrases) {
    try {
      io::read_npy(p);
      ADD_FAILURE() << "read_npy(" << p << ") did not throw";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(p + ": ", 0), 0u) << "message does not start with the path: " << msg;
      for (const auto& phrase : phrases)
        EXPECT_NE(msg.find(phrase), std::string::npos)
            << "message lacks '" << phrase << "': " << msg;
    }
  }

  fs::path dir_;
};

// ---------------------------------------------------------------------------------------------
// Building files by hand
// ---------------------------------------------------------------------------------------------

// Magic, version and a little-endian header length of 2 bytes (version 1) or 4 (versions 2, 3).
std::string preamble(int major, int minor, std::uint32_t header_len) {
  std::string s("\x93NUMPY", 6);
  s += static_cast<char>(major);
  s += static_cast<char>(minor);
  const int length_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < length_bytes; ++i) s += static_cast<char>((header_len >> (8 * i)) & 0xff);
  return s;
}

// A complete file: `dict` padded with spaces and a '\n' to a 64-byte boundary, then `data`.
std::string npy_file(const std::string& dict, const std::string& data, int major = 1) {
  const std::size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  return preamble(major, 0, static_cast<std::uint32_t>(header.size())) + header + data;
}

std::string dict(const std::string& descr, const std::string& shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + shape + ", }";
}

// The little-endian bytes of 0, 1, 2, ... as T.
template <class T>
std::string ramp_bytes(std::size_t n) {
  std::string s(n * sizeof(T), '\0');
  for (std::size_t i = 0; i < n; ++i) {
    const T v = static_cast<T>(i);
    std::memcpy(&s[i * sizeof(T)], &v, sizeof(T));
  }
  return s;
}

template <class T>
void expect_ramp(const io::NpyArray& a, std::size_t n) {
  ASSERT_EQ(a.size(), static_cast<std::int64_t>(n));
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(a.as<T>()[i], static_cast<T>(i)) << "at " << i;
}

// ---------------------------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------------------------

template <class T>
void round_trip(const std::string& file, const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  std::vector<T> v = random_vector<T>(n);
  // Values whose bits a careless conversion would change.
  v[0] = -T(0);
  if (n > 1) v[1] = std::numeric_limits<T>::quiet_NaN();
  if (n > 2) v[2] = std::numeric_limits<T>::infinity();
  if (n > 3) v[3] = std::numeric_limits<T>::denorm_min();
  const DType dtype = sizeof(T) == 4 ? DType::f32 : DType::f64;
  io::write_npy(file, dtype, shape, v.data());

  const io::NpyArray a = io::read_npy(file);
  EXPECT_EQ(a.dtype(), dtype);
  EXPECT_EQ(a.shape(), shape);
  EXPECT_EQ(a.ndim(), static_cast<int>(shape.size()));
  ASSERT_EQ(a.size(), n);
  EXPECT_EQ(a.nbytes(), static_cast<std::size_t>(n) * sizeof(T));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % 64, 0u) << "buffer not 64-byte aligned";
  EXPECT_EQ(std::memcmp(a.data(), v.data(), a.nbytes()), 0)
      << file << ": data differs after a round trip; seed " << fresh_seed();
}

const std::vector<std::vector<std::int64_t>> kShapes = {
    {1}, {37}, {5, 3}, {1, 64}, {2, 3, 4}, {7, 1, 9}, {2, 3, 4, 5}, {1, 1, 1, 1}};

TEST_F(Npy, RoundTripFloat32) {
  for (const auto& shape : kShapes) {
    SCOPED_TRACE(::testing::PrintToString(shape));
    round_trip<float>(path("f32.npy"), shape);
  }
}

TEST_F(Npy, RoundTripFloat64) {
  for (const auto& shape : kShapes) {
    SCOPED_TRACE(::testing::PrintToString(shape));
    round_trip<double>(path("f64.npy"), shape);
  }
}

TEST_F(Npy, RoundTripOfAnNpyArrayAndALargerFile) {
  io::NpyArray a(DType::f32, {512, 1024, 3});  // 6 MiB
  const std::vector<float> v = random_vector<float>(a.size());
  std::memcpy(a.data(), v.data(), a.nbytes());
  io::write_npy(path("big.npy"), a);
  const io::NpyArray b = io::read_npy(path("big.npy"));
  EXPECT_EQ(b.shape(), a.shape());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.nbytes()), 0);
}

TEST_F(Npy, WrittenHeaderIsVersion1PaddedTo64Bytes) {
  const std::vector<double> v = random_vector<double>(12);
  io::write_npy(path("h.npy"), DType::f64, {3, 4}, v.data());
  const std::string bytes = read_file(path("h.npy"));
  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 6), std::string("\x93NUMPY", 6));
  EXPECT_EQ(bytes[6], '\x01');
  EXPECT_EQ(bytes[7], '\x00');
  const std::size_t header_len =
      static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  const std::size_t data_offset = 10 + header_len;
  EXPECT_EQ(data_offset % 64, 0u);
  ASSERT_EQ(bytes.size(), data_offset + v.size() * sizeof(double));
  const std::string header = bytes.substr(10, header_len);
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(header.rfind("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }", 0), 0u)
      << header;
  EXPECT_EQ(header.find_first_not_of(' ', header.find('}') + 1), header.size() - 1)
      << "padding is not spaces: " << header;
  EXPECT_EQ(std::memcmp(bytes.data() + data_offset, v.data(), v.size() * sizeof(double)), 0);

  // A 1-d shape is a one-element tuple.
  io::write_npy(path("h1.npy"), DType::f32, {5}, v.data());
  EXPECT_NE(read_file(path("h1.npy")).find("'shape': (5,), }"), std::string::npos);
}

TEST_F(Npy, OverwritingReplacesTheFileAndLeavesNoTemporaries) {
  const std::vector<float> a = random_vector<float>(6), b = random_vector<float>(4);
  io::write_npy(path("x.npy"), DType::f32, {2, 3}, a.data());
  io::write_npy(path("x.npy"), DType::f32, {4}, b.data());
  const io::NpyArray x = io::read_npy(path("x.npy"));
  EXPECT_EQ(x.shape(), (std::vector<std::int64_t>{4}));
  EXPECT_EQ(std::memcmp(x.data(), b.data(), 16), 0);
  EXPECT_EQ(directory_entries(), std::vector<std::string>{"x.npy"});
}

// ---------------------------------------------------------------------------------------------
// Hand-made files that are valid
// ---------------------------------------------------------------------------------------------

TEST_F(Npy, ReadsVersion1) {
  const std::string p = write_file("v1.npy", npy_file(dict("<f4", "(2, 3)"), ramp_bytes<float>(6)));
  const io::NpyArray a = io::read_npy(p);
  EXPECT_EQ(a.dtype(), DType::f32);
  EXPECT_EQ(a.shape(), (std::vector<std::int64_t>{2, 3}));
  expect_ramp<float>(a, 6);
}

TEST_F(Npy, ReadsVersion2) {
  const std::string p =
      write_file("v2.npy", npy_file(dict("<f8", "(4, 1, 2)"), ramp_bytes<double>(8), 2));
  const io::NpyArray a = io::read_npy(p);
  EXPECT_EQ(a.dtype(), DType::f64);
  EXPECT_EQ(a.shape(), (std::vector<std::int64_t>{4, 1, 2}));
  expect_ramp<double>(a, 8);
}

TEST_F(Npy, ReadsVersion3) {
  const std::string p =
      write_file("v3.npy", npy_file(dict("<f4", "(2, 2, 2, 2)"), ramp_bytes<float>(16), 3));
  const io::NpyArray a = io::read_npy(p);
  EXPECT_EQ(a.dtype(), DType::f32);
  EXPECT_EQ(a.shape(), (std::vector<std::int64_t>{2, 2, 2, 2}));
  expect_ramp<float>(a, 16);
}

TEST_F(Npy, ReadsAnyKeyOrderQuotingAndSpacing) {
  const std::vector<std::pair<std::string, std::vector<std::int64_t>>> headers = {
      {"{'shape': (5,), 'fortran_order': False, 'descr': '<f4'}", {5}},
      {"{\"descr\":\"<f4\",\"fortran_order\":False,\"shape\":(5,)}", {5}},
      {"  {  'fortran_order' :False ,'descr':  '<f4' , 'shape' : ( 5 , ) , }  ", {5}},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,5,)}", {1, 5}},
      {"{'descr': '<f4',\t'fortran_order': False,\t'shape': (5L, 1L), }", {5, 1}},  // Python 2
      {"{'descr': '=f4', 'fortran_order': False, 'shape': (5,), }", {5}},
      {"{'descr': '|f4', 'fortran_order': False, 'shape': (5,), }", {5}},
  };
  int i = 0;
  for (const auto& [header, shape] : headers) {
    SCOPED_TRACE(header);
    const std::string p =
        write_file("k" + std::to_string(i++) + ".npy", npy_file(header, ramp_bytes<float>(5)));
    const io::NpyArray a = io::read_npy(p);
    EXPECT_EQ(a.dtype(), DType::f32);
    EXPECT_EQ(a.shape(), shape);
    expect_ramp<float>(a, 5);
  }
}

TEST_F(Npy, ReadsAnUnalignedHeader) {
  // Nothing requires the padding: a header of the exact length is valid too.
  const std::string header = dict("<f8", "(3,)") + "\n";
  const std::string p =
      write_file("tight.npy", preamble(1, 0, static_cast<std::uint32_t>(header.size())) + header +
                                  ramp_bytes<double>(3));
  expect_ramp<double>(io::read_npy(p), 3);
}

// ---------------------------------------------------------------------------------------------
// Malformed files: each gives "PATH: problem"
// ---------------------------------------------------------------------------------------------

struct BadFile {
  const char* name;
  std::string bytes;
  std::vector<std::string> phrases;
};

std::vector<BadFile> bad_files() {
  const std::string f4x16 = ramp_bytes<float>(16);
  const std::string good = npy_file(dict("<f4", "(4, 4)"), f4x16);
  std::string bad_magic = good;
  bad_magic[1] = 'X';
  std::string unknown_version = good;
  unknown_version[6] = 4;
  std::string minor_version = good;
  minor_version[7] = 1;
  const std::size_t data_offset = good.size() - f4x16.size();
  std::string no_newline = good;
  no_newline[data_offset - 1] = ' ';  // the header's last byte
  const std::string long_header = dict("<f4", "(4, 4)") + std::string(200, ' ') + "\n";
  std::string huge_header_len = preamble(2, 0, 0x7fffffff) + dict("<f4", "(4,)");

  return {
      {"bad_magic", bad_magic, {"magic"}},
      {"text_file", "this is not an npy file", {"not an .npy file"}},
      {"empty_file", "", {"empty file"}},
      {"unknown_version", unknown_version, {"version 4.0"}},
      {"unknown_minor_version", minor_version, {"version 1.1"}},
      {"truncated_preamble", good.substr(0, 7), {"truncated header"}},
      {"truncated_length", good.substr(0, 9), {"truncated header"}},
      {"truncated_header",
       good.substr(0, 40),
       {"truncated header", "expected " + std::to_string(data_offset - 10) + " header bytes",
        "found 30"}},
      {"header_length_past_end",
       preamble(1, 0, static_cast<std::uint32_t>(long_header.size())) + long_header.substr(0, 60),
       {"truncated header"}},
      {"huge_header_length", huge_header_len, {"header length 2147483647"}},
      {"truncated_data",
       good.substr(0, good.size() - 4),
       {"truncated data", "expected 64 bytes", "found 60"}},
      {"no_data", good.substr(0, data_offset), {"truncated data", "expected 64 bytes", "found 0"}},
      {"extra_data", good + "abcd", {"4 extra bytes", "expected 64 bytes", "found 68"}},
      {"big_endian_f4", npy_file(dict(">f4", "(4, 4)"), f4x16), {"'>f4'", "big-endian"}},
      {"big_endian_f8", npy_file(dict(">f8", "(2, 4)"), f4x16), {"'>f8'", "big-endian"}},
      {"fortran_order", npy_file(dict("<f4", "(4, 4)", true), f4x16), {"Fortran"}},
      {"object_dtype", npy_file(dict("|O", "(2,)"), f4x16.substr(0, 16)), {"'|O'", "object"}},
      {"int64_dtype",
       npy_file(dict("<i8", "(2, 4)"), f4x16),
       {"'<i8'", "int64", "float32", "float64", "uint8"}},
      {"int8_dtype", npy_file(dict("|i1", "(64,)"), f4x16), {"'|i1'", "int8"}},
      {"bool_dtype", npy_file(dict("|b1", "(64,)"), f4x16), {"'|b1'", "bool"}},
      {"uint32_dtype", npy_file(dict("<u4", "(16,)"), f4x16), {"'<u4'", "uint32"}},
      {"complex256_dtype",
       npy_file(dict("<c32", "(2,)"), f4x16),
       {"'<c32'", "complex256", "complex64", "complex128"}},
      {"structured_dtype",
       npy_file("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (16,), }", f4x16),
       {"structured"}},
      {"zero_dims", npy_file(dict("<f4", "()"), f4x16.substr(0, 4)), {"0-d"}},
      {"five_dims", npy_file(dict("<f4", "(1, 2, 2, 2, 2)"), f4x16), {"5 dimensions"}},
      {"zero_extent",
       npy_file(dict("<f4", "(4, 0)"), ""),
       {"extent 0 on axis 1", "at least one element"}},
      {"negative_extent", npy_file(dict("<f4", "(4, -4)"), f4x16), {"negative extent -4"}},
      {"overflowing_extent",
       npy_file(dict("<f4", "(99999999999999999999,)"), f4x16),
       {"99999999999999999999", "too large"}},
      {"overflowing_size",
       npy_file(dict("<f8", "(4294967296, 4294967296)"), f4x16),
       {"too many elements"}},
      {"no_newline", no_newline, {"newline"}},
      {"garbage_header", npy_file("hello, world", f4x16), {"malformed .npy header", "hello"}},
      {"binary_header",
       npy_file(std::string("{\x01\x02", 3), f4x16),
       {"malformed .npy header", "\\x01"}},
      {"missing_shape",
       npy_file("{'descr': '<f4', 'fortran_order': False}", f4x16),
       {"missing key 'shape'"}},
      {"duplicate_key",
       npy_file("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (16,)}", f4x16),
       {"duplicate key 'descr'"}},
      {"unknown_key",
       npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (16,), 'x': 1}", f4x16),
       {"unexpected key 'x'"}},
      {"shape_not_a_tuple", npy_file(dict("<f4", "(16)"), f4x16), {"not a tuple"}},
      {"shape_an_int", npy_file(dict("<f4", "16"), f4x16), {"'shape'"}},
      {"fortran_order_not_bool",
       npy_file("{'descr': '<f4', 'fortran_order': 0, 'shape': (16,)}", f4x16),
       {"True or False"}},
      {"unterminated_string", npy_file("{'descr: '<f4'", f4x16), {"malformed .npy header"}},
      {"text_after_dict", npy_file(dict("<f4", "(16,)") + " x", f4x16), {"after the closing '}'"}},
  };
}

void PrintTo(const BadFile& b, std::ostream* os) { *os << b.name; }

class NpyRejects : public Npy, public ::testing::WithParamInterface<BadFile> {};

TEST_P(NpyRejects, MalformedFile) {
  const BadFile& c = GetParam();
  const std::string p = write_file(std::string(c.name) + ".npy", c.bytes);
  expect_read_error(p, c.phrases);
}

INSTANTIATE_TEST_SUITE_P(Npy, NpyRejects, ::testing::ValuesIn(bad_files()),
                         [](const ::testing::TestParamInfo<BadFile>& i) { return i.param.name; });

TEST_F(Npy, MissingFileNamesPathAndReason) {
  expect_read_error(path("missing.npy"), {"cannot open", std::strerror(ENOENT)});
}

TEST_F(Npy, DirectoryIsNotAFile) { expect_read_error(dir_.string(), {"directory"}); }

// ---------------------------------------------------------------------------------------------
// Failed writes leave nothing behind and the destination untouched
// ---------------------------------------------------------------------------------------------

TEST_F(Npy, WriteIntoMissingDirectoryThrowsAndLeavesNothing) {
  const std::vector<float> v(8, 1.0f);
  const std::string p = path("no/such/dir/out.npy");
  try {
    io::write_npy(p, DType::f32, {8}, v.data());
    ADD_FAILURE() << "write_npy into a missing directory did not throw";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(p + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find(std::strerror(ENOENT)), std::string::npos) << msg;
  }
  EXPECT_TRUE(directory_entries().empty());
}

TEST_F(Npy, FailedWriteLeavesTheExistingFileUnchanged) {
  const std::string p = write_file("keep.npy", "previous contents");
  const std::vector<float> v(64, 2.0f);
  const std::vector<std::pair<std::vector<std::int64_t>, std::string>> bad_shapes = {
      {{}, "0-d"},
      {{2, 2, 2, 2, 4}, "5 dimensions"},
      {{8, 0}, "at least one element"},
      {{-8, -8}, "negative extent"},
      {{std::int64_t(1) << 32, std::int64_t(1) << 32}, "too many elements"},
  };
  for (const auto& [shape, phrase] : bad_shapes) {
    SCOPED_TRACE(::testing::PrintToString(shape));
    try {
      io::write_npy(p, DType::f32, shape, v.data());
      ADD_FAILURE() << "write_npy did not throw";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(p + ": ", 0), 0u) << msg;
      EXPECT_NE(msg.find(phrase), std::string::npos) << msg;
    }
    EXPECT_EQ(read_file(p), "previous contents");
  }
  // A destination that cannot be replaced (a directory) fails at the rename: no temporary left.
  fs::create_directory(path("sub.npy"));
  EXPECT_THROW(io::write_npy(path("sub.npy"), DType::f32, {4}, v.data()), Error);
  EXPECT_TRUE(fs::is_directory(path("sub.npy")));
  std::vector<std::string> names = directory_entries();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"keep.npy", "sub.npy"}));
}

TEST_F(Npy, NpyArrayRejectsBadShapes) {
  EXPECT_THROW(io::NpyArray(DType::f32, {}), Error);
  EXPECT_THROW(io::NpyArray(DType::f64, {3, 0}), Error);
  EXPECT_THROW(io::NpyArray(DType::f32, {1, 1, 1, 1, 1}), Error);
  EXPECT_THROW(io::NpyArray(DType::f32, {-1}), Error);
}

// ---------------------------------------------------------------------------------------------
// Agreement with NumPy
// ---------------------------------------------------------------------------------------------

bool numpy_available() {
  return std::system("/usr/bin/python3 -c 'import numpy' 2>/dev/null") == 0;
}

TEST_F(Npy, NumpyReadsOursAndWeReadNumpys) {
  if (!numpy_available()) GTEST_SKIP() << "python3 with numpy is not installed";
  // Ours: a random f32 2-d and f64 4-d array, with their raw bytes alongside for comparison.
  const std::vector<float> a = random_vector<float>(6 * 7);
  const std::vector<double> b = random_vector<double>(2 * 3 * 4 * 5);
  io::write_npy(path("ours_a.npy"), DType::f32, {6, 7}, a.data());
  io::write_npy(path("ours_b.npy"), DType::f64, {2, 3, 4, 5}, b.data());
  write_file("ours_a.bin", std::string(reinterpret_cast<const char*>(a.data()), a.size() * 4));
  write_file("ours_b.bin", std::string(reinterpret_cast<const char*>(b.data()), b.size() * 8));

  // NumPy checks ours bit for bit, re-saves them (which must give the same bytes as ours with
  // NumPy >= 1.23, whose header padding we follow) and writes arrays of its own.
  write_file("check.py", R"(import os, sys
import numpy as np
d = sys.argv[1]
p = lambda n: os.path.join(d, n)
for name, dtype, shape in (('a', '<f4', (6, 7)), ('b', '<f8', (2, 3, 4, 5))):
    x = np.load(p('ours_%s.npy' % name))
    assert x.dtype == np.dtype(dtype), x.dtype
    assert x.shape == shape, x.shape
    raw = np.fromfile(p('ours_%s.bin' % name), dtype=dtype).reshape(shape)
    assert x.tobytes() == raw.tobytes(), 'data differs: ' + name
    np.save(p('resaved_%s.npy' % name), x)
    ours = open(p('ours_%s.npy' % name), 'rb').read()
    theirs = open(p('resaved_%s.npy' % name), 'rb').read()
    if tuple(int(v) for v in np.__version__.split('.')[:2]) >= (1, 23):
        assert ours == theirs, 'bytes differ from np.save:\n%r\n%r' % (ours[:128], theirs[:128])
rng = np.random.default_rng()
for n, (dtype, shape) in enumerate((('<f4', (9,)), ('<f8', (3, 5)), ('<f4', (2, 3, 4)),
                                    ('<f8', (2, 1, 3, 2)))):
    x = rng.standard_normal(shape).astype(dtype)
    np.save(p('numpy_%d.npy' % n), x)
    x.tofile(p('numpy_%d.bin' % n))
np.save(p('numpy_fortran.npy'), np.asfortranarray(np.ones((3, 4), dtype='<f4')))
np.save(p('numpy_int.npy'), np.arange(5, dtype='<i8'))
np.save(p('numpy_big.npy'), np.ones(5, dtype='>f8'))
)");
  const std::string cmd = "/usr/bin/python3 '" + path("check.py") + "' '" + dir_.string() +
                          "' > '" + path("check.log") + "' 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "numpy check failed:\n" << read_file(path("check.log"));

  const std::vector<std::vector<std::int64_t>> shapes = {{9}, {3, 5}, {2, 3, 4}, {2, 1, 3, 2}};
  for (std::size_t n = 0; n < shapes.size(); ++n) {
    const std::string name = "numpy_" + std::to_string(n);
    SCOPED_TRACE(name);
    const io::NpyArray x = io::read_npy(path(name + ".npy"));
    EXPECT_EQ(x.dtype(), n % 2 == 0 ? DType::f32 : DType::f64);
    EXPECT_EQ(x.shape(), shapes[n]);
    const std::string raw = read_file(path(name + ".bin"));
    ASSERT_EQ(raw.size(), x.nbytes());
    EXPECT_EQ(std::memcmp(x.data(), raw.data(), raw.size()), 0);
  }
  expect_read_error(path("numpy_fortran.npy"), {"Fortran"});
  expect_read_error(path("numpy_int.npy"), {"'<i8'", "int64"});
  expect_read_error(path("numpy_big.npy"), {"'>f8'", "big-endian"});
}

// Every dtype of the table but bfloat16 (which NumPy lacks): NumPy's files read bit for bit,
// ours written with NumPy's descr and read back by NumPy bit for bit.
TEST_F(Npy, EveryTableDtypeRoundTripsWithNumpy) {
  if (!numpy_available()) GTEST_SKIP() << "python3 with numpy is not installed";
  write_file("make.py", R"(import os, sys
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng()
for t in ('u1', 'u2', 'i2', 'i4', 'f2', 'c8', 'c16'):
    dt = np.dtype(t)
    if dt.kind in 'ui':
        i = np.iinfo(dt)
        x = rng.integers(i.min, i.max, size=(3, 5), endpoint=True, dtype=dt)
        x.flat[0], x.flat[1] = i.min, i.max
    elif dt.kind == 'c':
        x = (rng.standard_normal((3, 5)) + 1j * rng.standard_normal((3, 5))).astype(dt)
    else:
        x = rng.standard_normal((3, 5)).astype(dt)
        x.flat[0], x.flat[1] = np.inf, -0.0
    np.save(os.path.join(d, 'numpy_%s.npy' % t), x)
    x.tofile(os.path.join(d, 'numpy_%s.bin' % t))
)");
  const std::string dir = "'" + dir_.string() + "'";
  ASSERT_EQ(std::system(("/usr/bin/python3 '" + path("make.py") + "' " + dir + " > '" +
                         path("make.log") + "' 2>&1").c_str()),
            0)
      << read_file(path("make.log"));
  const std::pair<const char*, DType> rows[] = {{"u1", DType::u8},  {"u2", DType::u16},
                                                {"i2", DType::i16}, {"i4", DType::i32},
                                                {"f2", DType::f16}, {"c8", DType::c64},
                                                {"c16", DType::c128}};
  std::string check = "import numpy as np, sys\n";
  for (const auto& [code, dtype] : rows) {
    SCOPED_TRACE(code);
    const io::NpyArray x = io::read_npy(path(std::string("numpy_") + code + ".npy"));
    EXPECT_EQ(x.dtype(), dtype);
    EXPECT_EQ(x.shape(), (std::vector<std::int64_t>{3, 5}));
    const std::string raw = read_file(path(std::string("numpy_") + code + ".bin"));
    ASSERT_EQ(raw.size(), x.nbytes());
    EXPECT_EQ(std::memcmp(x.data(), raw.data(), raw.size()), 0);
    io::write_npy(path(std::string("ours_") + code + ".npy"), x);
    check += std::string("a = np.load(sys.argv[1] + '/ours_") + code + ".npy'); b = np.load(sys.argv[1] + '/numpy_" + code +
             ".npy'); assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), '" + code + "'\n";
  }
  write_file("check_ours.py", check);
  ASSERT_EQ(std::system(("/usr/bin/python3 '" + path("check_ours.py") + "' " + dir + " > '" +
                         path("check.log") + "' 2>&1").c_str()),
            0)
      << read_file(path("check.log"));
}

}  // namespace
}  // namespace halo::test
