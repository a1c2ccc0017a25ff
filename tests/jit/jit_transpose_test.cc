// Kernels whose operands or outputs disagree in layout (a transpose inside a
// loop fusion): the tiled loops and their gathers and scatters
// (jit/x64/x64_tiled.cc), and the index folding that keeps a position split
// back from a bitcast affine (fusion_emitter.cc, SplitMultiple). Every case runs
// on each host ISA with 1 and 3 threads against the evaluator, bit for bit
// (any NaN matching any NaN), on arguments rich in edge values (NaN, -0,
// infinities, integer extremes).
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "ir/literal.h"
#include "jit/compile.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

struct Dims {
  int64_t a, b;
};

// Sizes: size-0 and size-1 dimensions, odd sizes, sizes around the vector
// widths and the tile (16 f32 per cache line), and rows long enough that a
// strided access jumps a cache line per step.
const std::vector<Dims>& Sizes() {
  static const std::vector<Dims> sizes = {{0, 5},   {5, 0},   {1, 1},    {1, 17},  {17, 1},  {2, 3},
                                          {16, 16}, {37, 53}, {33, 100}, {64, 48}, {130, 67}};
  return sizes;
}

std::string Shape2(const std::string& type, Dims d, const std::string& layout) {
  return absl::StrCat(type, "[", d.a, ",", d.b, "]{", layout, "}");
}

// Compiles `hlo` for `isa` with `threads`, runs it on random arguments and
// compares with the evaluator. Returns the compile report's kernels.
std::vector<KernelInfo> Check(const std::string& hlo, Isa isa, int threads, uint64_t seed) {
  SCOPED_TRACE(absl::StrCat(hlo, "\nisa ", static_cast<int>(isa), " threads ", threads));
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return {};
  std::mt19937_64 rng(seed);
  std::vector<Literal> arguments;
  for (const auto& parameter : (*module)->entry()->parameters()) {
    arguments.push_back(RandomLiteral(parameter->shape(), rng));
  }
  absl::StatusOr<Literal> expected = EvaluateModule(**module, arguments);
  EXPECT_TRUE(expected.ok()) << expected.status();
  if (!expected.ok()) return {};
  CompileOptions options;
  options.isa = isa;
  options.threads = threads;
  options.split_min_chunk_ns = 0;  // Split every kernel that can be: the split is tested.
  options.cache = false;
  CompileReport report;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> exe = Compile(**module, options, &report);
  EXPECT_TRUE(exe.ok()) << exe.status();
  if (!exe.ok()) return {};
  EXPECT_EQ(UnexpectedInterpretedSteps(report), std::vector<std::string>());
  absl::StatusOr<Literal> actual = (*exe)->Run(arguments);
  EXPECT_TRUE(actual.ok()) << actual.status();
  if (!actual.ok()) return {};
  EXPECT_EQ(Difference(*expected, *actual), "");
  return report.kernels;
}

int MaxLanes(const std::vector<KernelInfo>& kernels) {
  int lanes = 0;
  for (const KernelInfo& kernel : kernels) lanes = std::max(lanes, kernel.vector_lanes);
  return lanes;
}

// Whether the kernels of a transposing f32/f64/s32/s64 module of size `d`
// must be vectorised: on every ISA (gathers and scatters, or lane-by-lane
// moves on SSE4.1 and, for stores, AVX2) once the inner loop holds a vector
// of any width.
bool MustVectorize(const std::string& type, Dims d) {
  const bool wide = type == "f32" || type == "f64" || type == "s32" || type == "s64";
  return wide && d.a >= 16 && d.b >= 16;
}

// Every element type; Arithmetic: all but pred; Float: the float types.
class TransposeTest : public ::testing::TestWithParam<std::string> {};
class TransposeArithmeticTest : public TransposeTest {};
class TransposeFloatTest : public TransposeTest {};

// r{1,0} = y - x * c with x in {0,1}: one gathered load (floats and
// integers; pred: and).
TEST_P(TransposeTest, TransposedOperand) {
  const std::string t = GetParam();
  for (Dims d : Sizes()) {
    std::string body;
    if (t == "pred") {
      body = absl::StrCat("  ROOT r = ", Shape2(t, d, "1,0"), " and(x, y)\n");
    } else {
      body =
          absl::StrCat("  c = ", t, "[] constant(", t == "c64" ? "(3, 0)" : "3",
                       ")\n  cb = ", Shape2(t, d, "1,0"),
                       " broadcast(c), dimensions={}\n  m = ", Shape2(t, d, "1,0"),
                       " multiply(x, cb)\n  ROOT r = ", Shape2(t, d, "1,0"), " subtract(y, m)\n");
    }
    const std::string hlo =
        absl::StrCat("HloModule m\nENTRY e {\n  x = ", Shape2(t, d, "0,1"),
                     " parameter(0)\n  y = ", Shape2(t, d, "1,0"), " parameter(1)\n", body, "}\n");
    for (Isa isa : HostIsas()) {
      for (int threads : {1, 3}) {
        std::vector<KernelInfo> kernels = Check(hlo, isa, threads, d.a * 131 + d.b);
        if (MustVectorize(t, d)) {
          EXPECT_GT(MaxLanes(kernels), 1) << hlo;
        }
      }
    }
  }
}

// A pure relayout (copy from {0,1} to {1,0}), every element type.
TEST_P(TransposeTest, Relayout) {
  const std::string t = GetParam();
  for (Dims d : Sizes()) {
    const std::string hlo =
        absl::StrCat("HloModule m\nENTRY e {\n  x = ", Shape2(t, d, "0,1"),
                     " parameter(0)\n  ROOT r = ", Shape2(t, d, "1,0"), " copy(x)\n}\n");
    for (Isa isa : HostIsas()) Check(hlo, isa, 1, d.a + 7 * d.b);
  }
}

// Two outputs in different layouts: whichever the loops follow, the other
// is written with a stride (a scatter with AVX-512); the operand is read
// contiguously by one and gathered by the other.
TEST_P(TransposeArithmeticTest, OutputsInTwoLayouts) {
  const std::string t = GetParam();
  for (Dims d : Sizes()) {
    const std::string hlo = absl::StrCat(
        "HloModule m\nENTRY e {\n  x = ", Shape2(t, d, "0,1"),
        " parameter(0)\n  y = ", Shape2(t, d, "1,0"), " parameter(1)\n  n = ", Shape2(t, d, "0,1"),
        " add(x, x)\n  s = ", Shape2(t, d, "1,0"), " add(x, y)\n  ROOT r = (", Shape2(t, d, "0,1"),
        ", ", Shape2(t, d, "1,0"), ") tuple(n, s)\n}\n");
    for (Isa isa : HostIsas()) {
      for (int threads : {1, 3}) {
        std::vector<KernelInfo> kernels = Check(hlo, isa, threads, d.a * 17 + d.b);
        if (MustVectorize(t, d)) {
          EXPECT_GT(MaxLanes(kernels), 1) << hlo;
        }
      }
    }
  }
}

// Broadcasts along either dimension inside a transposing kernel: the one
// that moves with the outer loop must not be hoisted out of the tiled loops.
TEST_P(TransposeArithmeticTest, BroadcastsAlongEitherDimension) {
  const std::string t = GetParam();
  for (Dims d : Sizes()) {
    const std::string va = absl::StrCat(t, "[", d.a, "]{0}");
    const std::string vb = absl::StrCat(t, "[", d.b, "]{0}");
    const std::string hlo = absl::StrCat(
        "HloModule m\nENTRY e {\n  x = ", Shape2(t, d, "0,1"), " parameter(0)\n  u = ", va,
        " parameter(1)\n  v = ", vb, " parameter(2)\n  ub = ", Shape2(t, d, "1,0"),
        " broadcast(u), dimensions={0}\n  vb = ", Shape2(t, d, "1,0"),
        " broadcast(v), dimensions={1}\n  s = ", Shape2(t, d, "1,0"),
        " add(x, ub)\n  ROOT r = ", Shape2(t, d, "1,0"), " multiply(s, vb)\n}\n");
    for (Isa isa : HostIsas()) {
      for (int threads : {1, 3}) Check(hlo, isa, threads, d.a * 5 + d.b);
    }
  }
}

// Reversed along the inner dimension (a gather with a negative stride) and
// along the outer one (not tiled: the outer step is not one element), and
// a slice of a transposed operand (a gather that starts inside the array).
TEST_P(TransposeTest, ReverseAndSlice) {
  const std::string t = GetParam();
  for (Dims d : Sizes()) {
    const Dims big = {d.a + 3, d.b + 2};
    for (const char* dimension : {"0", "1"}) {
      const std::string hlo = absl::StrCat("HloModule m\nENTRY e {\n  x = ", Shape2(t, d, "0,1"),
                                           " parameter(0)\n  ROOT r = ", Shape2(t, d, "1,0"),
                                           " reverse(x), dimensions={", dimension, "}\n}\n");
      for (Isa isa : HostIsas()) Check(hlo, isa, 1, d.a + d.b);
    }
    const std::string hlo =
        absl::StrCat("HloModule m\nENTRY e {\n  x = ", Shape2(t, big, "0,1"),
                     " parameter(0)\n  ROOT r = ", Shape2(t, d, "1,0"),
                     " slice(x), slice={[1:", d.a + 1, "], [2:", d.b + 2, "]}\n}\n");
    for (Isa isa : HostIsas()) {
      for (int threads : {1, 3}) Check(hlo, isa, threads, d.a * 3 + d.b);
    }
  }
}

// Rank 3: the two minor dimensions swapped (tiled), and the whole order
// reversed (the inner pair's outer step is not one element: not tiled).
TEST_P(TransposeTest, RankThree) {
  const std::string t = GetParam();
  for (const std::vector<int64_t>& dims :
       std::vector<std::vector<int64_t>>{{3, 37, 21}, {2, 16, 33}, {1, 1, 1}, {4, 0, 3}}) {
    const std::string shape = absl::StrCat(t, "[", dims[0], ",", dims[1], ",", dims[2], "]");
    for (const char* layout : {"1,2,0", "0,1,2"}) {
      const std::string hlo =
          absl::StrCat("HloModule m\nENTRY e {\n  x = ", shape, "{", layout,
                       "} parameter(0)\n  ROOT r = ", shape, "{2,1,0} copy(x)\n}\n");
      for (Isa isa : HostIsas()) {
        for (int threads : {1, 3}) Check(hlo, isa, threads, dims[1] * 7 + dims[2]);
      }
    }
  }
}

// The pattern of mlp_train's weight update as JAX writes it: the transposed
// gradient is a result in layout {0,1} and feeds `w - 0.1 * g^T` in {1,0}
// (a bitcast of the gradient, whose positions are split again at the row
// boundary: SplitMultiple folds the division away).
TEST_P(TransposeFloatTest, TransposedResultAndUpdate) {
  const std::string t = GetParam();
  for (Dims d : Sizes()) {
    const Dims td = {d.b, d.a};
    const std::string hlo = absl::StrCat(
        "HloModule m, entry_computation_layout={(", Shape2(t, d, "1,0"), ", ", Shape2(t, td, "1,0"),
        ")->(", Shape2(t, td, "0,1"), ", ", Shape2(t, td, "1,0"),
        ")}\nENTRY e {\n  g = ", Shape2(t, d, "1,0"), " parameter(0)\n  w = ", Shape2(t, td, "1,0"),
        " parameter(1)\n  gt = ", Shape2(t, td, "0,1"),
        " transpose(g), dimensions={1,0}\n  c = ", t,
        "[] constant(0.1)\n  cb = ", Shape2(t, td, "1,0"),
        " broadcast(c), dimensions={}\n  m = ", Shape2(t, td, "1,0"),
        " multiply(gt, cb)\n  s = ", Shape2(t, td, "1,0"), " subtract(w, m)\n  ROOT r = (",
        Shape2(t, td, "0,1"), ", ", Shape2(t, td, "1,0"), ") tuple(gt, s)\n}\n");
    for (Isa isa : HostIsas()) {
      for (int threads : {1, 3}) Check(hlo, isa, threads, d.a * 11 + d.b);
    }
  }
}

std::string TypeName(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

INSTANTIATE_TEST_SUITE_P(Types, TransposeTest,
                         ::testing::Values("f32", "f64", "bf16", "f16", "s32", "u32", "s64", "s16",
                                           "s8", "u8", "pred", "c64"),
                         TypeName);
INSTANTIATE_TEST_SUITE_P(Types, TransposeArithmeticTest,
                         ::testing::Values("f32", "f64", "bf16", "f16", "s32", "u32", "s64", "s16",
                                           "s8", "u8", "c64"),
                         TypeName);
INSTANTIATE_TEST_SUITE_P(Types, TransposeFloatTest, ::testing::Values("f32", "f64", "bf16", "f16"),
                         TypeName);

}  // namespace
}  // namespace xjit::jit::testing
