// Fuzz target: the .npy reader. Any bytes must decode or fail with a status;
// a decoded array must convert to a literal of every element type that
// travels as its dtype (or fail with a status), and serialize to bytes that
// decode to the same array.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz/fuzz_target.h"
#include "ir/layout_util.h"
#include "tools/npy.h"

namespace xjit::fuzz {
namespace {

std::string Header(const std::string& descr, const std::string& shape, bool fortran = false) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                     ", 'shape': " + shape + ", }";
  dict.append(117 - dict.size(), ' ');
  dict.push_back('\n');
  return std::string("\x93NUMPY\x01\x00", 8) + std::string("\x76\x00", 2) + dict;
}

}  // namespace

std::vector<std::string> XjitFuzzSeeds() {
  return {Header("<f4", "(2, 3)") + std::string(24, '\x01'),
          Header("<i4", "(3,)") + std::string(12, '\x7f'),
          Header("|b1", "(2,)") + std::string("\x00\x01", 2),
          Header("<c8", "()") + std::string(8, '\x3f'),
          Header(">f8", "(1, 1)", true) + std::string(8, '\x40'),
          Header("|i1", "(0, 5)"),
          Header("<u2", "(2, 2)") + std::string(8, '\x11')};
}

std::vector<std::string> XjitFuzzDictionary() {
  return {"'descr'",
          "'shape'",
          "'fortran_order'",
          "True",
          "False",
          "<f4",
          ">f8",
          "|b1",
          "<c16",
          "|u1",
          "<f2",
          "(",
          ")",
          ",",
          "{",
          "}",
          "'",
          " ",
          "4611686018427387904",
          "9223372036854775807",
          "-1",
          "0"};
}

}  // namespace xjit::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace xjit;  // NOLINT
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<npy::Array> array = npy::ParseNpy(bytes);
  if (!array.ok()) return 0;
  fuzz::XjitFuzzKeep();
  for (ElementType type :
       {ElementType::kF32, ElementType::kF64, ElementType::kS32, ElementType::kU8,
        ElementType::kPred, ElementType::kC64, ElementType::kF16, ElementType::kBF16,
        ElementType::kS4, ElementType::kS8, ElementType::kU16}) {
    absl::StatusOr<npy::Dtype> dtype = npy::DtypeFor(type);
    if (!dtype.ok() || !(*dtype == array->dtype)) continue;
    const Shape shape = Shape::Array(type, array->shape);
    if (!CheckedByteSize(shape).ok()) continue;  // The verifier's rule for any shape.
    absl::StatusOr<Literal> literal = npy::LiteralFromArray(*array, shape);
    if (!literal.ok()) continue;
    absl::StatusOr<npy::Array> back = npy::ArrayFromLiteral(*literal);
    if (!back.ok()) {
      std::fprintf(stderr, "literal does not convert back: %s\n",
                   std::string(back.status().message()).c_str());
      std::abort();
    }
  }
  absl::StatusOr<npy::Array> again = npy::ParseNpy(npy::SerializeNpy(*array));
  if (!again.ok() || again->shape != array->shape || !(again->dtype == array->dtype) ||
      again->data != array->data) {
    std::fprintf(stderr, "serialized array does not decode to itself\n");
    std::abort();
  }
  return 0;
}
