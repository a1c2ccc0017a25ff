// rng and rng-bit-generator compiled as library calls (runtime/rng), against
// the evaluator, bit for bit (raw bytes compared, NaN payloads included):
// ThreeFry, Philox and the default algorithm; states of 2, 3 and 4 words
// (as the verifier allows each),
// random and near the counter's wrap-around; every element type of 8 to 64
// bits; scalars, size-0 and size-1 dimensions, odd sizes, every position of
// the split dimension, outputs large enough for several threads; default and
// other layouts. rng: uniform and normal over float, integer and pred types,
// two rng instructions in one module (they draw in program order), and two
// runs of one executable (each starts at the evaluator's seed).
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "interpreter/ops_internal.h"
#include "runtime/rng/bit_kernels.h"
#include "runtime/executable.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

// Compiles `hlo` (with `threads`), runs it and the evaluator on
// `arguments`, and compares the results' bytes.
::testing::AssertionResult SameBits(const std::string& hlo, const std::vector<Literal>& arguments,
                                    int threads = 1, int runs = 1) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  if (!module.ok()) return ::testing::AssertionFailure() << module.status() << "\n" << hlo;
  absl::StatusOr<Literal> expected = EvaluateModule(**module, arguments);
  if (!expected.ok()) return ::testing::AssertionFailure() << "evaluator: " << expected.status();
  CompileOptions options;
  options.threads = threads;
  CompileReport report;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      Compile(**module, options, &report);
  if (!executable.ok()) return ::testing::AssertionFailure() << "compile: " << executable.status();
  if (!report.interpreted_steps.empty()) {
    return ::testing::AssertionFailure() << "interpreted: " << report.interpreted_steps[0];
  }
  bool called = false;
  for (const LibraryCallInfo& call : report.library_calls) {
    called |= call.routine == "rng" || call.routine == "rng-bit-generator";
  }
  if (!called) return ::testing::AssertionFailure() << "no rng library call";
  const std::vector<uint8_t> want = runtime::FlattenLiteral(*expected);
  for (int run = 0; run < runs; ++run) {
    absl::StatusOr<Literal> actual = (*executable)->Run(arguments);
    if (!actual.ok()) return ::testing::AssertionFailure() << "run: " << actual.status();
    const std::vector<uint8_t> got = runtime::FlattenLiteral(*actual);
    if (got.size() != want.size()) return ::testing::AssertionFailure() << "sizes differ";
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i] != want[i]) {
        return ::testing::AssertionFailure()
               << "run " << run << ": byte " << i << " of " << got.size() << ": "
               << int{got[i]} << " instead of " << int{want[i]} << "\n" << hlo;
      }
    }
  }
  return ::testing::AssertionSuccess();
}

Literal State(int64_t size, std::mt19937_64& rng, bool near_wrap) {
  Literal state(Shape::Array(ElementType::kU64, {size}));
  for (int64_t i = 0; i < size; ++i) {
    uint64_t value = rng();
    // Counters a few blocks below 2^64 (and a high word at its top) test
    // the carries.
    if (near_wrap && i >= 1) value = ~uint64_t{0} - (rng() % 5);
    state.SetBits({i}, value);
  }
  return state;
}

std::string BitGenerator(const std::string& algorithm, int64_t state_size,
                         const std::string& bits_shape) {
  return absl::StrCat("HloModule m\nENTRY e {\n  p0 = u64[", state_size,
                      "]{0} parameter(0)\n  ROOT r = (u64[", state_size, "]{0}, ", bits_shape,
                      ") rng-bit-generator(p0), algorithm=", algorithm, "\n}\n");
}

TEST(JitRng, BitGeneratorShapesTypesAlgorithmsStates) {
  std::mt19937_64 rng(7);
  const std::vector<std::string> types = {"u8",  "s8",  "u16", "s16", "f16", "bf16",
                                          "u32", "s32", "f32", "u64", "s64", "f64"};
  const std::vector<std::string> shapes = {"[]",      "[0]",      "[1]",      "[2]",
                                           "[7]",     "[33]",     "[3,5]",    "[11,17]",
                                           "[4,0,3]", "[5,3,7]",  "[6,5]",    "[5,6]",
                                           "[3,4,2]", "[3,5,4]",  "[1,1,1]",  "[9,1,13]",
                                           "[2,3,1]", "[517,3]"};
  int cases = 0;
  // The verifier wants u64[2] for ThreeFry and u64[3] for Philox; the
  // default algorithm (Philox) takes any size >= 2.
  const std::vector<std::pair<std::string, std::vector<int64_t>>> algorithms = {
      {"rng_three_fry", {2}}, {"rng_philox", {3}}, {"rng_default", {2, 3, 4}}};
  for (const auto& [algorithm, state_sizes] : algorithms) {
    for (int64_t state_size : state_sizes) {
      for (const std::string& type : types) {
        for (const std::string& shape : shapes) {
          for (bool near_wrap : {false, true}) {
            std::vector<Literal> arguments;
            arguments.push_back(State(state_size, rng, near_wrap));
            EXPECT_TRUE(SameBits(BitGenerator(algorithm, state_size, type + shape), arguments))
                << algorithm << " " << type << shape << " state " << state_size;
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 5 * 12 * 18 * 2);
}

TEST(JitRng, BitGeneratorLayouts) {
  std::mt19937_64 rng(11);
  for (const std::string algorithm : {"rng_three_fry", "rng_philox"}) {
    for (const std::string shape :
         {"u32[6,5]{0,1}", "u8[3,7]{0,1}", "f64[4,3,5]{0,2,1}", "s16[2,9,4]{1,0,2}",
          "u32[7,5,3]{2,0,1}"}) {
      std::vector<Literal> arguments;
      const int64_t size = algorithm == std::string("rng_three_fry") ? 2 : 3;
      arguments.push_back(State(size, rng, false));
      EXPECT_TRUE(SameBits(BitGenerator(algorithm, size, shape), arguments)) << algorithm << shape;
    }
  }
}

// Large enough to be split between threads (runtime/rng/bit_generator.cc
// splits outputs of 256 KiB and more).
TEST(JitRng, BitGeneratorThreads) {
  std::mt19937_64 rng(13);
  for (const std::string algorithm : {"rng_three_fry", "rng_philox"}) {
    for (const std::string shape : {"u32[301,517]", "u32[517,301]", "u32[300,2,301]",
                                    "u64[100000]", "u8[1000,999]", "f16[2,70001]"}) {
      for (bool near_wrap : {false, true}) {
        std::vector<Literal> arguments;
        const int64_t size = algorithm == std::string("rng_three_fry") ? 2 : 3;
        arguments.push_back(State(size, rng, near_wrap));
        EXPECT_TRUE(SameBits(BitGenerator(algorithm, size, shape), arguments, /*threads=*/4))
            << algorithm << shape;
      }
    }
  }
}

// The state's new counter feeds a second generator in the same module.
TEST(JitRng, BitGeneratorChained) {
  std::mt19937_64 rng(17);
  for (const std::string algorithm : {"rng_three_fry", "rng_philox"}) {
    const int64_t size = algorithm == "rng_three_fry" ? 2 : 3;
    const std::string state = absl::StrCat("u64[", size, "]{0}");
    const std::string hlo = absl::StrCat(
        "HloModule m\nENTRY e {\n  p0 = ", state, " parameter(0)\n",
        "  a = (", state, ", u32[5,3]{1,0}) rng-bit-generator(p0), algorithm=", algorithm, "\n",
        "  s = ", state, " get-tuple-element(a), index=0\n",
        "  x = u32[5,3]{1,0} get-tuple-element(a), index=1\n",
        "  b = (", state, ", u32[5,3]{1,0}) rng-bit-generator(s), algorithm=", algorithm, "\n",
        "  y = u32[5,3]{1,0} get-tuple-element(b), index=1\n",
        "  t = ", state, " get-tuple-element(b), index=0\n",
        "  z = u32[5,3]{1,0} add(x, y)\n",
        "  ROOT r = (", state, ", u32[5,3]{1,0}) tuple(t, z)\n}\n");
    std::vector<Literal> arguments;
    arguments.push_back(State(size, rng, false));
    EXPECT_TRUE(SameBits(hlo, arguments)) << algorithm;
  }
}

// Both builds of the vector loops (the baseline one, which a CPU without
// AVX2 runs, and the one this host runs) against the evaluator's scalar
// block functions, word for word, for every word width, across runs that
// start anywhere in an 8-block group and cross the 64-bit (ThreeFry) and
// 128-bit (Philox) counter carries.
TEST(JitRng, VectorLoopsOfEveryBuildMatchTheScalarGenerators) {
  const runtime::rng::BitKernels* builds[] = {&runtime::rng::GenericBitKernels(),
                                              &runtime::rng::HostBitKernels()};
  const uint32_t k0 = 0x12345678u, k1 = 0x9abcdef0u;
  for (const runtime::rng::BitKernels* kernels : builds) {
    for (uint64_t start : {uint64_t{0}, uint64_t{5}, ~uint64_t{0} - 9}) {
      for (int64_t words : {0, 1, 7, 16, 17, 33, 100}) {
        std::vector<uint32_t> got(words + 1, 0xDEADBEEFu), got1(words + 1, 0xDEADBEEFu);
        // ThreeFry, interleaved words.
        kernels->threefry_interleaved[2](k0, k1, start, words, got.data());
        for (int64_t w = 0; w < words; ++w) {
          const uint64_t c = start + static_cast<uint64_t>(w / 2);
          const auto r = eval::internal::ThreeFry2x32(
              {static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32)}, {k0, k1});
          ASSERT_EQ(got[w], r[w % 2]) << "threefry interleaved, word " << w;
        }
        EXPECT_EQ(got[words], 0xDEADBEEFu) << "wrote past the end";
        // ThreeFry, split: word 0 and word 1 of each block apart.
        kernels->threefry_split[2](k0, k1, start, words, got.data(), got1.data());
        for (int64_t j = 0; j < words; ++j) {
          const uint64_t c = start + static_cast<uint64_t>(j);
          const auto r = eval::internal::ThreeFry2x32(
              {static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32)}, {k0, k1});
          ASSERT_EQ(got[j], r[0]);
          ASSERT_EQ(got1[j], r[1]);
        }
        // Philox with the high counter word at its top (the carry wraps it).
        const uint64_t high = ~uint64_t{0};
        kernels->philox[2](k0, k1, start, high, words, got.data());
        for (int64_t w = 0; w < words; ++w) {
          const uint64_t lo = start + static_cast<uint64_t>(w / 4);
          const uint64_t hi = lo < start ? high + 1 : high;
          const auto r = eval::internal::Philox4x32(
              {static_cast<uint32_t>(lo), static_cast<uint32_t>(lo >> 32),
               static_cast<uint32_t>(hi), static_cast<uint32_t>(hi >> 32)},
              {k0, k1});
          ASSERT_EQ(got[w], r[w % 4]) << "philox, word " << w;
        }
        // Narrow words keep the low bits.
        std::vector<uint8_t> bytes(words);
        std::vector<uint16_t> halves(words);
        kernels->philox[0](k0, k1, start, high, words, bytes.data());
        kernels->philox[1](k0, k1, start, high, words, halves.data());
        for (int64_t w = 0; w < words; ++w) {
          ASSERT_EQ(bytes[w], static_cast<uint8_t>(got[w]));
          ASSERT_EQ(halves[w], static_cast<uint16_t>(got[w]));
        }
      }
    }
  }
}

std::string RngModule(const std::string& type, const std::string& shape,
                      const std::string& distribution) {
  return absl::StrCat("HloModule m\nENTRY e {\n  p0 = ", type, "[] parameter(0)\n  p1 = ", type,
                      "[] parameter(1)\n  ROOT r = ", type, shape, " rng(p0, p1), distribution=",
                      distribution, "\n}\n");
}

std::vector<Literal> Parameters(const std::string& type, double a, double b) {
  std::vector<Literal> arguments;
  for (double value : {a, b}) {
    std::optional<ElementType> element_type = ParseElementType(type);
    EXPECT_TRUE(element_type.has_value()) << type;
    arguments.push_back(Literal::Scalar(element_type.value_or(ElementType::kF32), value));
  }
  return arguments;
}

TEST(JitRng, UniformAndNormal) {
  for (const std::string shape : {"[]", "[0]", "[1]", "[7]", "[3,5]", "[4,0]", "[2,3]{0,1}",
                                  "[129,3]"}) {
    for (const std::string type : {"f32", "f64", "f16", "bf16"}) {
      EXPECT_TRUE(SameBits(RngModule(type, shape, "rng_uniform"), Parameters(type, -2, 3), 1, 2))
          << type << shape;
      EXPECT_TRUE(SameBits(RngModule(type, shape, "rng_normal"), Parameters(type, 1, 0.5), 1, 2))
          << type << shape;
    }
    for (const std::string type : {"s32", "u8", "s64", "u16", "pred"}) {
      EXPECT_TRUE(SameBits(RngModule(type, shape, "rng_uniform"), Parameters(type, 0, 1), 1, 2))
          << type << shape;
      if (type != "pred") {
        EXPECT_TRUE(
            SameBits(RngModule(type, shape, "rng_uniform"), Parameters(type, 3, 100), 1, 2))
            << type << shape;
      }
    }
  }
  // A narrow range whose rounding lands on b (redrawn) and an empty one.
  EXPECT_TRUE(SameBits(RngModule("f16", "[100]", "rng_uniform"), Parameters("f16", 1, 1.001)));
  EXPECT_TRUE(SameBits(RngModule("f32", "[10]", "rng_uniform"), Parameters("f32", 2, 2)));
  EXPECT_TRUE(SameBits(RngModule("s32", "[10]", "rng_uniform"), Parameters("s32", 5, -5)));
}

// Two rng instructions draw one after the other from the run's state, in
// program order, with a kernel in between.
TEST(JitRng, TwoRngsInProgramOrder) {
  const std::string hlo =
      "HloModule m\nENTRY e {\n  p0 = f32[] parameter(0)\n  p1 = f32[] parameter(1)\n"
      "  a = f32[5,3]{1,0} rng(p0, p1), distribution=rng_uniform\n"
      "  n = f32[5,3]{1,0} negate(a)\n"
      "  b = f32[5,3]{1,0} rng(p0, p1), distribution=rng_normal\n"
      "  c = f32[5,3]{1,0} rng(p0, p1), distribution=rng_uniform\n"
      "  ROOT r = (f32[5,3]{1,0}, f32[5,3]{1,0}, f32[5,3]{1,0}) tuple(n, b, c)\n}\n";
  EXPECT_TRUE(SameBits(hlo, Parameters("f32", 0, 1), 1, 3));
}

}  // namespace
}  // namespace xjit::jit::testing
