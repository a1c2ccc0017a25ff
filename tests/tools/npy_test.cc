// Tests of tools/npy: the .npy container (versions, byte orders, Fortran
// order, malformed files) and the mapping to literals for every element type.
// Expected bytes are written out by hand here (as numpy 1.24 writes them), so
// that they do not come from the code under test.
#include "tools/npy.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/element_type.h"
#include "ir/literal.h"
#include "ir/shape.h"

namespace xjit::npy {
namespace {

using ::testing::HasSubstr;

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

// A .npy file: magic, version, header length, `dict` padded with spaces and a
// newline to `header_length` bytes, then `data`.
std::string NpyFile(const std::string& dict, const std::string& data, int major = 1,
                    int header_length = 118) {
  std::string header = dict;
  if (static_cast<int>(header.size()) + 1 < header_length) {
    header.append(header_length - 1 - header.size(), ' ');
  }
  header.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  uint32_t n = static_cast<uint32_t>(header.size());
  out.push_back(static_cast<char>(n & 0xff));
  out.push_back(static_cast<char>((n >> 8) & 0xff));
  if (major >= 2) {
    out.push_back(static_cast<char>((n >> 16) & 0xff));
    out.push_back(static_cast<char>((n >> 24) & 0xff));
  }
  return out + header + data;
}

std::string Dict(const std::string& descr, const std::string& shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + shape + ", }";
}

std::vector<uint8_t> U8(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }

// ------------------------------------------------------------- container ---

TEST(NpyParse, Float32Vector) {
  auto array = ParseNpy(NpyFile(Dict("<f4", "(2,)"), Bytes({0, 0, 0xc0, 0x3f, 0, 0, 0, 0xc0})));
  ASSERT_TRUE(array.ok()) << array.status();
  EXPECT_EQ(array->dtype, (Dtype{'f', 4}));
  EXPECT_EQ(array->shape, std::vector<int64_t>({2}));
  EXPECT_EQ(array->data, U8(Bytes({0, 0, 0xc0, 0x3f, 0, 0, 0, 0xc0})));
}

TEST(NpyParse, ScalarAndEmpty) {
  auto scalar = ParseNpy(NpyFile(Dict("<i2", "()"), Bytes({0x34, 0x12})));
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  EXPECT_TRUE(scalar->shape.empty());
  EXPECT_EQ(scalar->element_count(), 1);
  auto empty = ParseNpy(NpyFile(Dict("<f8", "(0, 5)"), ""));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->shape, std::vector<int64_t>({0, 5}));
  EXPECT_TRUE(empty->data.empty());
}

TEST(NpyParse, Versions2And3) {
  for (int major : {2, 3}) {
    auto array = ParseNpy(NpyFile(Dict("|u1", "(3,)"), Bytes({7, 8, 9}), major, 116));
    ASSERT_TRUE(array.ok()) << major << ": " << array.status();
    EXPECT_EQ(array->data, U8(Bytes({7, 8, 9})));
  }
}

TEST(NpyParse, BigEndianIsSwapped) {
  // int32 [1, 258] big-endian.
  auto i = ParseNpy(NpyFile(Dict(">i4", "(2,)"), Bytes({0, 0, 0, 1, 0, 0, 1, 2})));
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_EQ(i->data, U8(Bytes({1, 0, 0, 0, 2, 1, 0, 0})));
  // complex64 (1.5 - 2j): each float swapped on its own, real part first.
  auto c = ParseNpy(NpyFile(Dict(">c8", "()"), Bytes({0x3f, 0xc0, 0, 0, 0xc0, 0, 0, 0})));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->data, U8(Bytes({0, 0, 0xc0, 0x3f, 0, 0, 0, 0xc0})));
}

TEST(NpyParse, FortranOrderBecomesCOrder) {
  // [[1, 2, 3], [4, 5, 6]] as numpy writes it with order='F' and '>i4'.
  std::string data =
      Bytes({0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0, 5, 0, 0, 0, 3, 0, 0, 0, 6});
  auto array = ParseNpy(NpyFile(Dict(">i4", "(2, 3)", /*fortran=*/true), data));
  ASSERT_TRUE(array.ok()) << array.status();
  EXPECT_EQ(array->data,
            U8(Bytes({1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 6, 0, 0, 0})));
  // Rank 3, one byte per element: F order of shape (2, 2, 2) stores
  // element (i, j, k) at i + 2j + 4k.
  std::string f = Bytes({0, 4, 2, 6, 1, 5, 3, 7});  // value = 4i + 2j + k
  auto cube = ParseNpy(NpyFile(Dict("|u1", "(2, 2, 2)", true), f));
  ASSERT_TRUE(cube.ok()) << cube.status();
  EXPECT_EQ(cube->data, U8(Bytes({0, 1, 2, 3, 4, 5, 6, 7})));
}

TEST(NpyParse, HeaderSpellings) {
  // Double quotes, no trailing comma, Python 2 long integers, extra spaces.
  auto array = ParseNpy(
      NpyFile("{ \"descr\" : \"<u2\" , \"shape\" : ( 2L , 1L ) , \"fortran_order\" : False }",
              Bytes({1, 0, 2, 0})));
  ASSERT_TRUE(array.ok()) << array.status();
  EXPECT_EQ(array->shape, std::vector<int64_t>({2, 1}));
  EXPECT_EQ(array->dtype, (Dtype{'u', 2}));
}

TEST(NpyParse, EveryDtype) {
  struct Case {
    const char* descr;
    Dtype dtype;
    const char* name;
  } cases[] = {
      {"|b1", {'b', 1}, "bool"},      {"|i1", {'i', 1}, "int8"},
      {"<i2", {'i', 2}, "int16"},     {"<i4", {'i', 4}, "int32"},
      {"<i8", {'i', 8}, "int64"},     {"|u1", {'u', 1}, "uint8"},
      {"<u2", {'u', 2}, "uint16"},    {"<u4", {'u', 4}, "uint32"},
      {"<u8", {'u', 8}, "uint64"},    {"<f2", {'f', 2}, "float16"},
      {"<f4", {'f', 4}, "float32"},   {"<f8", {'f', 8}, "float64"},
      {"<c8", {'c', 8}, "complex64"}, {"<c16", {'c', 16}, "complex128"},
  };
  for (const Case& c : cases) {
    std::string data(2 * c.dtype.item_size, '\x01');
    auto array = ParseNpy(NpyFile(Dict(c.descr, "(2,)"), data));
    ASSERT_TRUE(array.ok()) << c.descr << ": " << array.status();
    EXPECT_EQ(array->dtype, c.dtype) << c.descr;
    EXPECT_EQ(array->dtype.Name(), c.name);
    EXPECT_EQ(array->dtype.Descr(), c.descr);
  }
}

void ExpectError(const std::string& bytes, const std::string& fragment) {
  auto array = ParseNpy(bytes);
  ASSERT_FALSE(array.ok()) << "accepted a file that should fail with: " << fragment;
  EXPECT_THAT(std::string(array.status().message()), HasSubstr(fragment));
}

TEST(NpyParse, MalformedFiles) {
  std::string good_data = Bytes({0, 0, 0xc0, 0x3f, 0, 0, 0, 0xc0});
  ExpectError("", "not a .npy file");
  ExpectError("PK\x03\x04 a zip file", "not a .npy file");
  ExpectError("\x93NUMPY", "not a .npy file");
  std::string v4 = NpyFile(Dict("<f4", "(2,)"), good_data);
  v4[6] = 4;
  ExpectError(v4, "unsupported .npy format version 4.0");
  ExpectError(NpyFile(Dict("<f4", "(2,)"), good_data).substr(0, 40), "truncated .npy header");
  ExpectError(std::string("\x93NUMPY\x01\x00", 8) + "\x05", "truncated .npy header");
  ExpectError(NpyFile(Dict("<f4", "(2,)"), good_data.substr(0, 7)), "truncated .npy data");
  ExpectError(NpyFile(Dict("<f4", "(2,)"), good_data + "x"), "after the data");
  ExpectError(NpyFile(Dict("<f4", "(1000000000000, 1000000000000)"), good_data),
              "truncated .npy data");
  ExpectError(NpyFile(Dict("<f4", "(99999999999999999999,)"), good_data), "out of range");
  ExpectError(NpyFile(Dict("<f4", "(-2,)"), good_data), "non-negative integer");
  ExpectError(NpyFile(Dict("<f4", "(2)"), good_data), "trailing comma");
  ExpectError(NpyFile(Dict("<U3", "(2,)"), good_data), "unsupported .npy dtype '<U3'");
  ExpectError(NpyFile(Dict("|O", "(2,)"), good_data), "unsupported .npy dtype");
  ExpectError(NpyFile(Dict("<f3", "(2,)"), good_data), "unsupported .npy dtype");
  ExpectError(NpyFile(Dict("<M8[ns]", "(1,)"), good_data), "unsupported .npy dtype");
  ExpectError(
      NpyFile("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", good_data),
      "structured dtypes");
  ExpectError(NpyFile("{'descr': '<f4', 'shape': (2,), }", good_data),
              "missing key 'fortran_order'");
  ExpectError(NpyFile("{'descr': '<f4', 'fortran_order': False}", good_data),
              "missing key 'shape'");
  ExpectError(NpyFile("{'fortran_order': False, 'shape': (2,)}", good_data), "missing key 'descr'");
  ExpectError(NpyFile("{'descr': '<f4', 'fortran_order': 'no', 'shape': (2,)}", good_data),
              "'fortran_order' must be True or False");
  ExpectError(NpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", good_data),
              "malformed .npy header");
  ExpectError(NpyFile("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", good_data),
              "expected a string, True, False or a tuple");
  ExpectError(NpyFile("['descr', '<f4']", good_data), "expected '{'");
  ExpectError(NpyFile("{'descr: '<f4'}", good_data), "malformed .npy header");
}

TEST(NpyParse, NeverCrashesOnTruncations) {
  std::string file = NpyFile(Dict("<c16", "(2, 2)", true), std::string(64, '\x11'));
  for (size_t n = 0; n < file.size(); ++n) {
    EXPECT_FALSE(ParseNpy(file.substr(0, n)).ok()) << n;
  }
  EXPECT_TRUE(ParseNpy(file).ok());
  // Every single-byte corruption of the header either parses or fails cleanly.
  for (size_t i = 0; i < 128; ++i) {
    std::string bad = file;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    (void)ParseNpy(bad);
  }
}

TEST(NpySerialize, ExactBytesOfVersion1) {
  Array array;
  array.dtype = {'f', 4};
  array.shape = {2};
  array.data = U8(Bytes({0, 0, 0xc0, 0x3f, 0, 0, 0, 0xc0}));
  // Exactly what numpy.save writes for np.array([1.5, -2], np.float32).
  std::string expected = std::string("\x93NUMPY\x01\x00v\x00", 10) +
                         std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }") +
                         std::string(60, ' ') + "\n" + Bytes({0, 0, 0xc0, 0x3f, 0, 0, 0, 0xc0});
  EXPECT_EQ(SerializeNpy(array), expected);

  Array cube;
  cube.dtype = {'b', 1};
  cube.shape = {1, 2, 0};
  std::string bytes = SerializeNpy(cube);
  EXPECT_EQ(bytes.size(), 128u);
  EXPECT_THAT(bytes, HasSubstr("{'descr': '|b1', 'fortran_order': False, 'shape': (1, 2, 0), }"));
  Array scalar;
  scalar.dtype = {'c', 16};
  scalar.data.assign(16, 0);
  EXPECT_THAT(SerializeNpy(scalar),
              HasSubstr("'descr': '<c16', 'fortran_order': False, 'shape': (), }"));
}

TEST(NpySerialize, RoundTripsThroughParse) {
  for (Dtype dtype : {Dtype{'b', 1}, Dtype{'i', 1}, Dtype{'i', 8}, Dtype{'u', 2}, Dtype{'f', 2},
                      Dtype{'f', 8}, Dtype{'c', 8}, Dtype{'c', 16}}) {
    Array array;
    array.dtype = dtype;
    array.shape = {3, 2};
    for (int i = 0; i < 6 * dtype.item_size; ++i) array.data.push_back(static_cast<uint8_t>(i * 7));
    auto back = ParseNpy(SerializeNpy(array));
    ASSERT_TRUE(back.ok()) << dtype.Name() << ": " << back.status();
    EXPECT_EQ(back->dtype, dtype);
    EXPECT_EQ(back->shape, array.shape);
    EXPECT_EQ(back->data, array.data);
  }
}

TEST(NpySerialize, LongShapeUsesVersion2) {
  Array array;
  array.dtype = {'u', 1};
  array.shape.assign(22000, 1);  // A header longer than 65535 bytes.
  array.data = {42};
  std::string bytes = SerializeNpy(array);
  EXPECT_EQ(bytes[6], 2);
  EXPECT_EQ((bytes.size() - 1) % 64, 0u);
  auto back = ParseNpy(bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->shape.size(), 22000u);
  EXPECT_EQ(back->data, std::vector<uint8_t>({42}));
}

// ---------------------------------------------------------- literal mapping ---

TEST(NpyDtypeFor, DesignMapping) {
  struct Case {
    ElementType type;
    Dtype dtype;
  } cases[] = {
      {ElementType::kPred, {'b', 1}},      {ElementType::kS2, {'i', 1}},
      {ElementType::kS4, {'i', 1}},        {ElementType::kS8, {'i', 1}},
      {ElementType::kS16, {'i', 2}},       {ElementType::kS32, {'i', 4}},
      {ElementType::kS64, {'i', 8}},       {ElementType::kU2, {'u', 1}},
      {ElementType::kU4, {'u', 1}},        {ElementType::kU8, {'u', 1}},
      {ElementType::kU16, {'u', 2}},       {ElementType::kU32, {'u', 4}},
      {ElementType::kU64, {'u', 8}},       {ElementType::kF16, {'f', 2}},
      {ElementType::kBF16, {'u', 2}},      {ElementType::kF32, {'f', 4}},
      {ElementType::kF64, {'f', 8}},       {ElementType::kC64, {'c', 8}},
      {ElementType::kC128, {'c', 16}},     {ElementType::kF8E5M2, {'u', 1}},
      {ElementType::kF8E4M3FN, {'u', 1}},  {ElementType::kF8E4M3B11FNUZ, {'u', 1}},
      {ElementType::kF8E8M0FNU, {'u', 1}}, {ElementType::kF4E2M1FN, {'u', 1}},
  };
  for (const Case& c : cases) {
    auto dtype = DtypeFor(c.type);
    ASSERT_TRUE(dtype.ok()) << ElementTypeName(c.type);
    EXPECT_EQ(*dtype, c.dtype) << ElementTypeName(c.type);
  }
  EXPECT_FALSE(DtypeFor(ElementType::kToken).ok());
  EXPECT_FALSE(DtypeFor(ElementType::kTuple).ok());
}

// For every array element type: hand-made bytes -> literal (checked through
// Literal's own accessors) -> bytes again.
TEST(NpyLiteral, RoundTripEveryType) {
  struct Case {
    ElementType type;
    std::string data;  // two elements
    std::vector<uint64_t> bits;
  } cases[] = {
      {ElementType::kPred, Bytes({1, 0}), {1, 0}},
      {ElementType::kS2, Bytes({0xfe, 1}), {0x2, 1}},  // -2, 1
      {ElementType::kS4, Bytes({0xf8, 7}), {0x8, 7}},  // -8, 7
      {ElementType::kS8, Bytes({0x80, 0x7f}), {0x80, 0x7f}},
      {ElementType::kS16, Bytes({0x00, 0x80, 0x34, 0x12}), {0x8000, 0x1234}},
      {ElementType::kS32, Bytes({0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0}), {0xffffffff, 1}},
      {ElementType::kS64,
       Bytes({1, 2, 3, 4, 5, 6, 7, 0x88, 9, 0, 0, 0, 0, 0, 0, 0}),
       {0x8807060504030201, 9}},
      {ElementType::kU2, Bytes({3, 0}), {3, 0}},
      {ElementType::kU4, Bytes({15, 9}), {15, 9}},
      {ElementType::kU8, Bytes({0xff, 0}), {0xff, 0}},
      {ElementType::kU16, Bytes({0xff, 0xff, 2, 0}), {0xffff, 2}},
      {ElementType::kU32, Bytes({1, 0, 0, 0x80, 2, 0, 0, 0}), {0x80000001, 2}},
      {ElementType::kU64,
       Bytes({0, 0, 0, 0, 0, 0, 0, 0xff, 1, 0, 0, 0, 0, 0, 0, 0}),
       {0xff00000000000000, 1}},
      {ElementType::kF16, Bytes({0x00, 0x3c, 0x00, 0xc0}), {0x3c00, 0xc000}},   // 1, -2
      {ElementType::kBF16, Bytes({0x80, 0x3f, 0xc0, 0x7f}), {0x3f80, 0x7fc0}},  // 1, nan
      {ElementType::kF32, Bytes({0, 0, 0xc0, 0x3f, 0, 0, 0, 0xc0}), {0x3fc00000, 0xc0000000}},
      {ElementType::kF64,
       Bytes({0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0xf0, 0x7f}),
       {0x3ff0000000000000, 0x7ff0000000000000}},  // 1, inf
      {ElementType::kF8E5M2, Bytes({0x3c, 0xfc}), {0x3c, 0xfc}},
      {ElementType::kF8E4M3FN, Bytes({0x38, 0x7f}), {0x38, 0x7f}},
      {ElementType::kF8E4M3FNUZ, Bytes({0x40, 0x80}), {0x40, 0x80}},
      {ElementType::kF8E8M0FNU, Bytes({0x7f, 0xff}), {0x7f, 0xff}},
      {ElementType::kF4E2M1FN, Bytes({0x2, 0xf}), {0x2, 0xf}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(ElementTypeName(c.type)));
    auto dtype = DtypeFor(c.type);
    ASSERT_TRUE(dtype.ok());
    Array array{*dtype, {2}, U8(c.data)};
    auto literal = LiteralFromArray(array, Shape::Array(c.type, {2}));
    ASSERT_TRUE(literal.ok()) << literal.status();
    EXPECT_EQ(literal->GetBitsLinear(0), c.bits[0]);
    EXPECT_EQ(literal->GetBitsLinear(1), c.bits[1]);
    auto back = ArrayFromLiteral(*literal);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->dtype, *dtype);
    EXPECT_EQ(back->shape, std::vector<int64_t>({2}));
    EXPECT_EQ(back->data, array.data);
  }
}

TEST(NpyLiteral, Complex) {
  // complex64 [1.5 - 2j, 0 + 1j]; complex128 [-1 + 0.5j].
  Array c64{
      {'c', 8}, {2}, U8(Bytes({0, 0, 0xc0, 0x3f, 0, 0, 0, 0xc0, 0, 0, 0, 0, 0, 0, 0x80, 0x3f}))};
  auto literal = LiteralFromArray(c64, Shape::Array(ElementType::kC64, {2}));
  ASSERT_TRUE(literal.ok()) << literal.status();
  EXPECT_EQ(literal->GetComplex({0}), std::complex<double>(1.5, -2));
  EXPECT_EQ(literal->GetComplex({1}), std::complex<double>(0, 1));
  auto back = ArrayFromLiteral(*literal);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->data, c64.data);

  Array c128{
      {'c', 16}, {}, U8(Bytes({0, 0, 0, 0, 0, 0, 0xf0, 0xbf, 0, 0, 0, 0, 0, 0, 0xe0, 0x3f}))};
  auto scalar = LiteralFromArray(c128, Shape::Scalar(ElementType::kC128));
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  EXPECT_EQ(scalar->GetComplex({}), std::complex<double>(-1, 0.5));
  auto back128 = ArrayFromLiteral(*scalar);
  ASSERT_TRUE(back128.ok());
  EXPECT_EQ(back128->data, c128.data);
}

TEST(NpyLiteral, LogicalOrderWhateverTheLayout) {
  // [[1, 2, 3], [4, 5, 6]] as int8 into s8[2,3]{0,1} (column-major storage).
  Array array{{'i', 1}, {2, 3}, U8(Bytes({1, 2, 3, 4, 5, 6}))};
  Shape column_major = Shape::ArrayWithLayout(ElementType::kS8, {2, 3}, {0, 1});
  auto literal = LiteralFromArray(array, column_major);
  ASSERT_TRUE(literal.ok()) << literal.status();
  EXPECT_EQ(literal->shape().layout().minor_to_major, std::vector<int64_t>({0, 1}));
  EXPECT_EQ(literal->GetInt({0, 2}), 3);
  EXPECT_EQ(literal->GetInt({1, 0}), 4);
  std::vector<uint8_t> physical(literal->data().begin(), literal->data().end());
  EXPECT_EQ(physical, U8(Bytes({1, 4, 2, 5, 3, 6})));
  auto back = ArrayFromLiteral(*literal);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->data, array.data);
}

// Writing a literal converts and writes about 1 MiB at a time (issue 30:
// the whole array was converted first, a second copy of a large result).
// The file equals the one-piece serialization, across chunk boundaries that
// fall inside rows, for complex values (converted by multi-index), sub-byte
// integers, a column-major layout and empty arrays.
TEST(NpyLiteral, WrittenInChunksAsInOnePiece) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("npy_chunks_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::vector<Literal> literals;
  Literal complex(Shape::Array(ElementType::kC64, {3, 100001}));  // 3 chunks of 131072.
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 100001; j += 997) complex.SetComplex({i, j}, {1.0 * i + j, -1.0 * j});
  }
  literals.push_back(std::move(complex));
  Literal s4(Shape::Array(ElementType::kS4, {2100000}));  // 3 chunks of 1 MiB.
  for (int64_t i = 0; i < 2100000; i += 4099) s4.SetInt({i}, (i % 16) - 8);
  literals.push_back(std::move(s4));
  Literal f32(Shape::ArrayWithLayout(ElementType::kF32, {700, 900}, {0, 1}));
  for (int64_t i = 0; i < 700; i += 7) f32.SetDouble({i, i % 900}, 0.5 * i);
  literals.push_back(std::move(f32));
  literals.push_back(Literal(Shape::Array(ElementType::kC128, {0, 4})));
  for (size_t k = 0; k < literals.size(); ++k) {
    SCOPED_TRACE(literals[k].shape().ToString());
    const std::string path = (dir / (std::to_string(k) + ".npy")).string();
    ASSERT_TRUE(WriteNpyFile(path, literals[k]).ok());
    auto array = ArrayFromLiteral(literals[k]);
    ASSERT_TRUE(array.ok());
    std::ifstream in(path, std::ios::binary);
    const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_TRUE(written == SerializeNpy(*array));
  }
  std::filesystem::remove_all(dir);
}

TEST(NpyLiteral, MismatchesNameBothSides) {
  Array f64{{'f', 8}, {3}, std::vector<uint8_t>(24, 0)};
  auto wrong_type = LiteralFromArray(f64, Shape::Array(ElementType::kF32, {3}));
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_THAT(std::string(wrong_type.status().message()),
              HasSubstr("expected float32 (3,) (for f32[3]), found float64 (3,)"));
  auto wrong_shape = LiteralFromArray(f64, Shape::Array(ElementType::kF64, {1, 3}));
  ASSERT_FALSE(wrong_shape.ok());
  EXPECT_THAT(std::string(wrong_shape.status().message()),
              HasSubstr("expected float64 (1, 3) (for f64[1,3]), found float64 (3,)"));
  // bf16 travels as uint16: float16 data is a mismatch, not a conversion.
  Array f16{{'f', 2}, {}, std::vector<uint8_t>(2, 0)};
  auto bf16 = LiteralFromArray(f16, Shape::Scalar(ElementType::kBF16));
  ASSERT_FALSE(bf16.ok());
  EXPECT_THAT(std::string(bf16.status().message()), HasSubstr("expected uint16 ()"));
}

TEST(NpyLiteral, SubByteRangeIsChecked) {
  auto s4 = LiteralFromArray(Array{{'i', 1}, {2}, U8(Bytes({7, 8}))},
                             Shape::Array(ElementType::kS4, {2}));
  ASSERT_FALSE(s4.ok());
  EXPECT_THAT(std::string(s4.status().message()),
              HasSubstr("element 1 is 8, outside the range of s4"));
  auto s2 = LiteralFromArray(Array{{'i', 1}, {1}, U8(Bytes({0xfd}))},
                             Shape::Array(ElementType::kS2, {1}));
  ASSERT_FALSE(s2.ok());
  EXPECT_THAT(std::string(s2.status().message()), HasSubstr("-3"));
  auto u4 =
      LiteralFromArray(Array{{'u', 1}, {1}, U8(Bytes({16}))}, Shape::Array(ElementType::kU4, {1}));
  EXPECT_FALSE(u4.ok());
  auto f4 = LiteralFromArray(Array{{'u', 1}, {1}, U8(Bytes({0x10}))},
                             Shape::Array(ElementType::kF4E2M1FN, {1}));
  EXPECT_FALSE(f4.ok());
}

TEST(NpyLiteral, DynamicDimensionsTakeSizesUpToTheBound) {
  Shape bounded = Shape::Array(ElementType::kS8, {4, 2});
  bounded.set_dynamic_dimension(0, true);  // s8[<=4,2]
  auto three = LiteralFromArray(Array{{'i', 1}, {3, 2}, U8(Bytes({1, 2, 3, 4, 5, 6}))}, bounded);
  ASSERT_TRUE(three.ok()) << three.status();
  EXPECT_EQ(three->shape().dimensions(0), 3);
  EXPECT_TRUE(three->shape().is_dynamic_dimension(0));
  EXPECT_EQ(three->GetInt({2, 1}), 6);
  auto five = LiteralFromArray(Array{{'i', 1}, {5, 2}, std::vector<uint8_t>(10, 0)}, bounded);
  ASSERT_FALSE(five.ok());
  EXPECT_THAT(std::string(five.status().message()),
              HasSubstr("expected int8 (<=4, 2) (for s8[<=4,2]), found int8 (5, 2)"));
  auto wrong = LiteralFromArray(Array{{'i', 1}, {3, 3}, std::vector<uint8_t>(9, 0)}, bounded);
  EXPECT_FALSE(wrong.ok());
}

TEST(NpyLiteral, NonArraysAreErrors) {
  Array a{{'f', 4}, {}, std::vector<uint8_t>(4, 0)};
  EXPECT_FALSE(LiteralFromArray(a, Shape::Tuple({Shape::Scalar(ElementType::kF32)})).ok());
  EXPECT_FALSE(LiteralFromArray(a, Shape::Token()).ok());
  EXPECT_FALSE(ArrayFromLiteral(Literal(Shape::Tuple({}))).ok());
}

}  // namespace
}  // namespace xjit::npy

namespace xjit::npy {
namespace {

// ---------------------------------------------------------------- files ---

// A fresh temporary directory, removed with everything in it at the end.
class TempDir {
 public:
  TempDir() {
    char name[] = "/tmp/npy_test.XXXXXX";
    path_ = ::mkdtemp(name);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

void Write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// ReadNpyFile on `bytes` waiting in a pipe (at most the pipe's 64 KiB
// buffer), opened by path (/proc/self/fd/N), the writing end closed (EOF
// after the bytes) or, with keep_writer_open, left open: then a reader that
// wanted more than the header announces would wait forever.
absl::StatusOr<Array> ReadThroughPipe(const std::string& bytes, bool keep_writer_open = false) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  EXPECT_LE(bytes.size(), 60000u);
  EXPECT_EQ(::write(fds[1], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  if (!keep_writer_open) ::close(fds[1]);
  absl::StatusOr<Array> array = ReadNpyFile("/proc/self/fd/" + std::to_string(fds[0]));
  ::close(fds[0]);
  if (keep_writer_open) ::close(fds[1]);
  return array;
}

TEST(NpyFile, ReadsExactlyWhatTheHeaderAnnounces) {
  TempDir dir;
  const std::string good = NpyFile(Dict("<f4", "(2,)"), Bytes({0, 0, 0xc0, 0x3f, 0, 0, 0, 0xc0}));
  Write(dir.File("good.npy"), good);
  absl::StatusOr<Array> array = ReadNpyFile(dir.File("good.npy"));
  ASSERT_TRUE(array.ok()) << array.status();
  EXPECT_EQ(array->data, U8(Bytes({0, 0, 0xc0, 0x3f, 0, 0, 0, 0xc0})));
  Write(dir.File("short.npy"), good.substr(0, good.size() - 1));
  EXPECT_THAT(ReadNpyFile(dir.File("short.npy")).status().message(),
              HasSubstr("truncated .npy data"));
  Write(dir.File("long.npy"), good + "x");
  EXPECT_THAT(ReadNpyFile(dir.File("long.npy")).status().message(),
              HasSubstr("1 bytes after the data"));
  // A header that claims 4 TiB of data over a file of a few bytes: refused
  // from the file's size, nothing allocated.
  Write(dir.File("huge.npy"), NpyFile(Dict("<f4", "(1099511627776,)"), "abcd"));
  EXPECT_THAT(ReadNpyFile(dir.File("huge.npy")).status().message(),
              HasSubstr("truncated .npy data"));
}

TEST(NpyFile, PipesAreReadAsFarAsTheHeaderSays) {
  const std::string good = NpyFile(Dict("<i2", "(3,)"), Bytes({1, 0, 2, 0, 3, 0}));
  absl::StatusOr<Array> array = ReadThroughPipe(good);
  ASSERT_TRUE(array.ok()) << array.status();
  EXPECT_EQ(array->data, U8(Bytes({1, 0, 2, 0, 3, 0})));
  EXPECT_THAT(ReadThroughPipe(good.substr(0, good.size() - 2)).status().message(),
              HasSubstr("truncated .npy data"));
  EXPECT_THAT(ReadThroughPipe(good + "xyz").status().message(), HasSubstr("after the data"));
  // Not a .npy file: known from the first bytes, without waiting for the
  // writer to finish (it never does here).
  EXPECT_THAT(ReadThroughPipe(std::string(50000, 'x'), /*keep_writer_open=*/true)
                  .status()
                  .message(),
              HasSubstr("not a .npy file"));
}

TEST(NpyFile, DevicesEndInErrorsNotInExhaustion) {
  // /dev/zero never ends: before, the reader read it until out of memory.
  EXPECT_THAT(ReadNpyFile("/dev/zero").status().message(), HasSubstr("not a .npy file"));
  // Reading /proc/self/mem from offset 0 fails (EIO): an error, not an
  // exception from the stream library.
  if (std::filesystem::exists("/proc/self/mem")) {
    EXPECT_THAT(ReadNpyFile("/proc/self/mem").status().message(), HasSubstr("cannot read"));
  }
  EXPECT_THAT(ReadNpyFile("/nonexistent/x.npy").status().message(), HasSubstr("cannot open"));
  EXPECT_THAT(ReadNpyFile("/tmp").status().message(), HasSubstr("is a directory"));
}

}  // namespace
}  // namespace xjit::npy
