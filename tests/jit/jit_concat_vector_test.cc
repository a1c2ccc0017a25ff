// Loop fusions with concatenate, pad, reverse and slices of a concatenate
// inside (jnp.roll, jnp.pad's edge and reflect modes): against the evaluator
// on every instruction set the host has, along the minor and the major
// dimension, with widths that leave vector tails, size-1 and size-0
// operands, negative and interior padding, f32/f64/s32/bf16. On x86-64 the
// forms that vectorise must keep doing so (kernels' vector_lanes): along a
// major dimension every lane reads the same operand; along the minor one
// each lane selects its operand and the operands are read through guards
// (jit/kernel/kernel_program.h, "Guards"). A reverse along the minor
// dimension stays scalar (no lane permutation in the kernel programs), as
// does interior padding along it (a strided read).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "jit/compile.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

class JitConcatVector : public ::testing::TestWithParam<Isa> {
 protected:
  // Compares with the evaluator on two seeds; returns the report.
  CompileReport Check(const std::string& hlo) {
    return ExpectMatchesEvaluatorOnSeeds(hlo, GetParam());
  }

  // The lanes a vectorised kernel of `type` has on this instruction set (0
  // where vector code is not required: AArch64, whose target vectorises
  // fewer forms).
  int ExpectedLanes(const std::string& type) const {
    const int lane_bits = type == "f64" ? 64 : 32;  // bf16 lives in f32 lanes.
    switch (GetParam()) {
      case Isa::kSse4: return 128 / lane_bits;
      case Isa::kAvx2: return 256 / lane_bits;
      case Isa::kAvx512: return 512 / lane_bits;
      default: return 0;
    }
  }

  // Checks `hlo` and, when `vector` and on x86-64, that every kernel has
  // the full vector width.
  void CheckLanes(const std::string& hlo, const std::string& type, bool vector) {
    const CompileReport report = Check(hlo);
    const int lanes = ExpectedLanes(type);
    if (!vector || lanes == 0) return;
    ASSERT_FALSE(report.kernels.empty()) << hlo;
    for (const KernelInfo& kernel : report.kernels) {
      EXPECT_EQ(kernel.vector_lanes, lanes) << kernel.name << " in\n" << hlo << "\n"
                                            << kernel.program;
    }
  }
};

std::string Shape(const std::string& type, int64_t rows, int64_t cols) {
  return absl::StrCat(type, "[", rows, ",", cols, "]");
}

// jnp.roll(x, shift, axis) + x: two slices and a concatenate.
std::string Roll(const std::string& type, int64_t rows, int64_t cols, int axis, int64_t shift) {
  const int64_t n = axis == 0 ? rows : cols;
  const int64_t k = n - shift;  // The tail [k, n) comes first.
  auto range = [&](int dim, int64_t lo, int64_t hi) {
    const int64_t full = dim == 0 ? rows : cols;
    return dim == axis ? absl::StrCat("[", lo, ":", hi, "]") : absl::StrCat("[0:", full, "]");
  };
  auto shape = [&](int64_t size) {
    return axis == 0 ? Shape(type, size, cols) : Shape(type, rows, size);
  };
  return ModuleText(
      {Shape(type, rows, cols)},
      {absl::StrCat("a = ", shape(n - k), " slice(p0), slice={", range(0, k, n), ", ",
                    range(1, k, n), "}"),
       absl::StrCat("b = ", shape(k), " slice(p0), slice={", range(0, 0, k), ", ",
                    range(1, 0, k), "}"),
       absl::StrCat("c = ", Shape(type, rows, cols), " concatenate(a, b), dimensions={", axis,
                    "}"),
       absl::StrCat("r = ", Shape(type, rows, cols), " add(c, p0)")});
}

TEST_P(JitConcatVector, RollAlongEitherDimension) {
  for (const char* t : {"f32", "f64", "s32", "bf16"}) {
    for (int64_t cols : {67, 64, 5, 1}) {
      for (int axis : {0, 1}) {
        for (int64_t shift : {int64_t{1}, cols - 1, int64_t{2}}) {
          const int64_t n = axis == 0 ? 3 : cols;
          if (shift <= 0 || shift >= n) continue;
          CheckLanes(Roll(t, 3, cols, axis, shift), t, cols >= 64);
        }
      }
    }
  }
}

// jnp.pad(x, 1, mode="edge") along the minor dimension, then a 3-point
// stencil: concatenates of edge slices and slices of the concatenate.
std::string EdgeStencil(const std::string& type, int64_t rows, int64_t cols) {
  const std::string edge = Shape(type, rows, 1);
  const std::string padded = Shape(type, rows, cols + 2);
  const std::string out = Shape(type, rows, cols);
  return ModuleText(
      {Shape(type, rows, cols)},
      {absl::StrCat("first = ", edge, " slice(p0), slice={[0:", rows, "], [0:1]}"),
       absl::StrCat("last = ", edge, " slice(p0), slice={[0:", rows, "], [", cols - 1, ":",
                    cols, "]}"),
       absl::StrCat("c = ", padded, " concatenate(first, p0, last), dimensions={1}"),
       absl::StrCat("l = ", out, " slice(c), slice={[0:", rows, "], [0:", cols, "]}"),
       absl::StrCat("m = ", out, " slice(c), slice={[0:", rows, "], [1:", cols + 1, "]}"),
       absl::StrCat("h = ", out, " slice(c), slice={[0:", rows, "], [2:", cols + 2, "]}"),
       absl::StrCat("s = ", out, " add(l, m)"), absl::StrCat("r = ", out, " add(s, h)")});
}

TEST_P(JitConcatVector, EdgePaddedStencil) {
  for (const char* t : {"f32", "f64", "s32", "bf16"}) {
    for (int64_t cols : {70, 64, 9, 1}) {
      for (int64_t rows : {1, 4}) {
        CheckLanes(EdgeStencil(t, rows, cols), t, cols >= 64);
      }
    }
  }
}

// A concatenate with a size-0 and a size-1 operand along the minor
// dimension, and one along the major dimension, inside a fusion.
TEST_P(JitConcatVector, EmptyAndSingleOperands) {
  for (const char* t : {"f32", "s32"}) {
    for (int64_t cols : {66, 7}) {
      const std::string out = Shape(t, 2, cols + 1);
      CheckLanes(ModuleText({Shape(t, 2, cols), Shape(t, 2, 0), Shape(t, 2, 1)},
                            {absl::StrCat("c = ", out, " concatenate(p0, p1, p2), dimensions={1}"),
                             absl::StrCat("r = ", out, " multiply(c, c)")}),
                 t, cols >= 64);
      const std::string tall = Shape(t, 3, cols);
      CheckLanes(ModuleText({Shape(t, 2, cols), Shape(t, 0, cols), Shape(t, 1, cols)},
                            {absl::StrCat("c = ", tall, " concatenate(p0, p1, p2), dimensions={0}"),
                             absl::StrCat("r = ", tall, " multiply(c, c)")}),
                 t, cols >= 64);
    }
  }
}

// pad with negative, zero and positive edges along the minor dimension and
// with interior padding along the major one (both vectorise), and interior
// padding along the minor one (scalar).
TEST_P(JitConcatVector, PadInsideAFusion) {
  struct Case {
    std::string config;
    int64_t rows, cols;
    bool vector;
  };
  for (const char* t : {"f32", "f64", "s32", "bf16"}) {
    for (const Case& c : std::vector<Case>{{"0_0x3_2", 3, 67, true},
                                           {"0_0x-2_5", 3, 70, true},
                                           {"1_2x-1_-1", 2, 68, true},
                                           {"1_1_2x0_3", 3, 64, true},
                                           {"0_0x1_1_1", 2, 33, false},
                                           {"0_0x2_-3", 2, 5, false},
                                           {"0_0x-5_0", 2, 5, false}}) {
      auto extent = [](int64_t size, const std::string& dim) {
        std::vector<int64_t> v;
        for (absl::string_view piece : absl::StrSplit(dim, '_')) {
          int64_t x = 0;
          EXPECT_TRUE(absl::SimpleAtoi(piece, &x));
          v.push_back(x);
        }
        const int64_t interior = v.size() > 2 ? v[2] : 0;
        return std::max<int64_t>(size + (size - 1) * interior + v[0] + v[1], 0);
      };
      const std::vector<std::string> dims = absl::StrSplit(c.config, 'x');
      const std::string out =
          Shape(t, extent(c.rows, dims[0]), extent(c.cols, dims[1]));
      CheckLanes(ModuleText({Shape(t, c.rows, c.cols), absl::StrCat(t, "[]")},
                            {absl::StrCat("n = ", Shape(t, c.rows, c.cols), " add(p0, p0)"),
                             absl::StrCat("q = ", out, " pad(n, p1), padding=", c.config),
                             absl::StrCat("r = ", out, " multiply(q, q)")}),
                 t, c.vector);
    }
  }
}

// jnp.pad(x, 1, mode="reflect") along each dimension: reversed slices
// concatenated. Along the major dimension it vectorises; along the minor
// one the reversed parts keep it scalar.
TEST_P(JitConcatVector, ReflectPadding) {
  for (const char* t : {"f32", "f64"}) {
    for (int64_t cols : {65, 6}) {
      const std::string rows_pad = Shape(t, 6, cols);
      CheckLanes(
          ModuleText({Shape(t, 4, cols)},
                     {absl::StrCat("a = ", Shape(t, 1, cols), " slice(p0), slice={[1:2], [0:",
                                   cols, "]}"),
                      absl::StrCat("b = ", Shape(t, 1, cols), " slice(p0), slice={[2:3], [0:",
                                   cols, "]}"),
                      absl::StrCat("ra = ", Shape(t, 1, cols), " reverse(a), dimensions={0}"),
                      absl::StrCat("c = ", rows_pad, " concatenate(ra, p0, b), dimensions={0}"),
                      absl::StrCat("r = ", rows_pad, " add(c, c)")}),
          t, cols >= 64);
      const std::string cols_pad = Shape(t, 4, cols + 2);
      CheckLanes(
          ModuleText({Shape(t, 4, cols)},
                     {absl::StrCat("a = ", Shape(t, 4, 2), " slice(p0), slice={[0:4], [0:2]}"),
                      absl::StrCat("ra = ", Shape(t, 4, 2), " reverse(a), dimensions={1}"),
                      absl::StrCat("c = ", cols_pad, " concatenate(ra, p0), dimensions={1}"),
                      absl::StrCat("r = ", cols_pad, " add(c, c)")}),
          t, /*vector=*/false);
    }
  }
}

// Rank 1 (the vector loop is also the threads' range) and 8/16/64-bit
// and pred lanes, including rows longer than an s8 lane compare reaches
// (then the select is per row and the kernel scalar, still exact).
TEST_P(JitConcatVector, RankOneAndNarrowTypes) {
  for (int64_t n : {100, 37}) {
    CheckLanes(ModuleText({absl::StrCat("f32[", n, "]")},
                          {absl::StrCat("a = f32[3] slice(p0), slice={[", n - 3, ":", n, "]}"),
                           absl::StrCat("b = f32[", n - 3, "] slice(p0), slice={[0:", n - 3, "]}"),
                           absl::StrCat("c = f32[", n, "] concatenate(a, b), dimensions={0}"),
                           absl::StrCat("r = f32[", n, "] add(c, p0)")}),
               "f32", n >= 64);
  }
  for (const char* t : {"s8", "u16", "s64", "pred"}) {
    for (int64_t cols : {100, 200, 3}) {
      const std::string op = std::string(t) == "pred" ? "xor" : "add";
      const std::string out = Shape(t, 2, cols + 1);
      Check(ModuleText({Shape(t, 2, cols), Shape(t, 2, 1)},
                       {absl::StrCat("c = ", out, " concatenate(p1, p0), dimensions={1}"),
                        absl::StrCat("r = ", out, " ", op, "(c, c)")}));
    }
  }
}

// A pad of a roll along the same (minor) dimension: the concatenate's lane
// compare reads the pad's guarded index.
TEST_P(JitConcatVector, PadOfRoll) {
  for (const char* t : {"f32", "f64"}) {
    for (int64_t cols : {97, 6}) {
      const std::string in = Shape(t, 3, cols);
      const std::string out = Shape(t, 3, cols + 5);
      CheckLanes(
          ModuleText({in, absl::StrCat(t, "[]")},
                     {absl::StrCat("a = ", Shape(t, 3, 2), " slice(p0), slice={[0:3], [",
                                   cols - 2, ":", cols, "]}"),
                      absl::StrCat("b = ", Shape(t, 3, cols - 2), " slice(p0), slice={[0:3], [0:",
                                   cols - 2, "]}"),
                      absl::StrCat("c = ", in, " concatenate(a, b), dimensions={1}"),
                      absl::StrCat("q = ", out, " pad(c, p1), padding=0_0x3_2"),
                      absl::StrCat("r = ", out, " multiply(q, q)")}),
          t, cols >= 64);
    }
  }
}

// The reads through guards are stride-1 loads checked in bounds, not
// gathers at the guarded positions: with gathers at positions computed per
// lane (AVX2, AVX-512) a guard's max(j - 1, 0) is lane-computable too, and
// the 5-point roll stencil of a heat equation took twice as long gathered.
TEST_P(JitConcatVector, GuardedReadsAreLoadsNotGathers) {
  if (GetParam() != Isa::kAvx2 && GetParam() != Isa::kAvx512) return;
  for (const char* t : {"f32", "f64"}) {
    for (const std::string& hlo : {Roll(t, 5, 70, 1, 1), Roll(t, 5, 70, 1, 69),
                                   EdgeStencil(t, 3, 70)}) {
      CheckLanes(hlo, t, true);
      absl::StatusOr<std::unique_ptr<xjit::Module>> module = ParseVerified(hlo);
      ASSERT_TRUE(module.ok()) << module.status();
      CompileOptions options;
      options.isa = GetParam();
      options.collect_asm = true;
      CompileReport report;
      ASSERT_TRUE(Compile(**module, options, &report).ok()) << hlo;
      for (const KernelInfo& kernel : report.kernels) {
        EXPECT_FALSE(absl::StrContains(kernel.asm_text, "gather")) << hlo << kernel.asm_text;
      }
    }
  }
}

// Pieces narrower than a vector concatenated along the minor dimension (an
// LSTM's four gate biases of 16, broadcast along [n, 64]): nearly every
// vector iteration has lanes outside some piece, so on AVX2 and AVX-512 the
// guarded reads are masked loads (vmaskmov, {k}{z}) rather than a fall back
// to scalar iterations. Widths 3 and 5 put both ends of a piece inside one
// vector; 16 and 20 leave tails.
TEST_P(JitConcatVector, NarrowPiecesAreMaskedLoads) {
  const bool masked = GetParam() == Isa::kAvx2 || GetParam() == Isa::kAvx512;
  for (const char* t : {"f32", "f64", "s32"}) {
    for (int64_t w : {16, 3, 5, 20}) {
      for (int64_t rows : {1, 7}) {
        SCOPED_TRACE(absl::StrCat(t, " pieces of ", w, ", rows ", rows));
        const std::string out = Shape(t, rows, 4 * w);
        std::vector<std::string> body;
        for (int piece = 0; piece < 4; ++piece) {
          body.push_back(absl::StrCat("b", piece, " = ", Shape(t, rows, w), " broadcast(p",
                                      piece + 1, "), dimensions={1}"));
        }
        body.push_back(absl::StrCat("c = ", out, " concatenate(b0, b1, b2, b3), dimensions={1}"));
        body.push_back(absl::StrCat("r = ", out, " add(p0, c)"));
        const std::string piece = absl::StrCat(t, "[", w, "]");
        const std::string hlo = ModuleText({out, piece, piece, piece, piece}, body);
        CheckLanes(hlo, t, 4 * w >= 64);
        if (!masked || 4 * w < 64) continue;
        absl::StatusOr<std::unique_ptr<xjit::Module>> module = ParseVerified(hlo);
        ASSERT_TRUE(module.ok()) << module.status();
        CompileOptions options;
        options.isa = GetParam();
        options.collect_asm = true;
        CompileReport report;
        ASSERT_TRUE(Compile(**module, options, &report).ok()) << hlo;
        ASSERT_EQ(report.kernels.size(), 1u);
        const std::string& text = report.kernels[0].asm_text;
        EXPECT_TRUE(absl::StrContains(text, "vmaskmov") || absl::StrContains(text, "{z}"))
            << text;
      }
    }
  }
}

// jnp.pad(x, 1, mode="edge") along both dimensions, then a 3x3 weighted
// stencil (the zoo's pad_stencil): along the major dimension every element
// of a row selects the same operand, so the lane masks of those conditions,
// and the selects between values broadcast along the row, are loop
// invariants the vector loop computes once per row (PlanDerivedInvariants).
// Beside it, a pred and an integer broadcast along the rows feeding a
// compare and a select. Heights and widths of 1 and odd sizes leave tails.
std::string EdgeStencil2d(const std::string& type, int64_t rows, int64_t cols) {
  const std::string padded_rows = Shape(type, rows + 2, cols);
  const std::string padded = Shape(type, rows + 2, cols + 2);
  const std::string out = Shape(type, rows, cols);
  std::vector<std::string> body = {
      absl::StrCat("top = ", Shape(type, 1, cols), " slice(p0), slice={[0:1], [0:", cols, "]}"),
      absl::StrCat("bottom = ", Shape(type, 1, cols), " slice(p0), slice={[", rows - 1, ":", rows,
                   "], [0:", cols, "]}"),
      absl::StrCat("v = ", padded_rows, " concatenate(top, p0, bottom), dimensions={0}"),
      absl::StrCat("left = ", Shape(type, rows + 2, 1), " slice(v), slice={[0:", rows + 2,
                   "], [0:1]}"),
      absl::StrCat("right = ", Shape(type, rows + 2, 1), " slice(v), slice={[0:", rows + 2, "], [",
                   cols - 1, ":", cols, "]}"),
      absl::StrCat("c = ", padded, " concatenate(left, v, right), dimensions={1}")};
  std::string sum;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      const std::string name = absl::StrCat("s", i, j);
      body.push_back(absl::StrCat(name, " = ", out, " slice(c), slice={[", i, ":", i + rows,
                                  "], [", j, ":", j + cols, "]}"));
      if (i == 1 && j == 1) {
        body.push_back(absl::StrCat("d", name, " = ", out, " add(", name, ", ", name, ")"));
      } else {
        body.push_back(absl::StrCat("d", name, " = ", out, " add(", name, ", p1)"));
      }
      if (sum.empty()) {
        sum = "d" + name;
      } else {
        body.push_back(absl::StrCat("a", name, " = ", out, " add(", sum, ", d", name, ")"));
        sum = "a" + name;
      }
    }
  }
  const std::string pred = Shape("pred", rows, cols);
  body.push_back(absl::StrCat("pb = ", pred, " broadcast(p2), dimensions={0}"));
  body.push_back(absl::StrCat("kb = ", Shape("s32", rows, cols), " broadcast(p3), dimensions={0}"));
  body.push_back(absl::StrCat("zero = s32[] constant(0)"));
  body.push_back(absl::StrCat("zb = ", Shape("s32", rows, cols), " broadcast(zero), dimensions={}"));
  body.push_back(absl::StrCat("kp = ", pred, " compare(kb, zb), direction=GT"));
  body.push_back(absl::StrCat("both = ", pred, " and(pb, kp)"));
  body.push_back(absl::StrCat("r = ", out, " select(both, ", sum, ", p1)"));
  return ModuleText({out, out, absl::StrCat("pred[", rows, "]"), absl::StrCat("s32[", rows, "]")},
                    body);
}

TEST_P(JitConcatVector, LoopInvariantLaneMasks) {
  for (const char* t : {"f32", "f64", "s32", "bf16"}) {
    for (int64_t cols : {67, 64, 9, 1}) {
      for (int64_t rows : {1, 2, 5}) {
        SCOPED_TRACE(absl::StrCat(t, "[", rows, ",", cols, "]"));
        CheckLanes(EdgeStencil2d(t, rows, cols), t, cols >= 64 && std::string(t) != "f64");
      }
    }
  }
}

// Pieces of many widths concatenated along the minor dimension, padded
// there, and read through a 3-point stencil: the vector loop runs a body
// specialised to the longest stretch where every lane compare is uniform
// (jit/kernel/uniform_lanes.h) between general ones. Boundaries on vector
// boundaries (8, 16, 24, 40 columns), inside vectors, stretches of both
// values of a compare, and rows ending in tails.
TEST_P(JitConcatVector, UniformStretchesOfManyPieces) {
  const std::vector<std::vector<int64_t>> widths = {
      {1, 64, 1}, {8, 40, 16}, {3, 61, 2}, {24, 8, 40}, {16, 16, 16, 16, 5}};
  for (const char* t : {"f32", "f64", "s32", "bf16"}) {
    for (const std::vector<int64_t>& w : widths) {
      for (int64_t low : {0, 5}) {
        const int64_t rows = 3;
        int64_t cols = 0;
        std::vector<std::string> params, names;
        for (size_t k = 0; k < w.size(); ++k) {
          params.push_back(Shape(t, rows, w[k]));
          names.push_back(absl::StrCat("p", k));
          cols += w[k];
        }
        const int64_t high = 11 - low;
        const int64_t padded = cols + low + high;
        const int64_t out = padded - 2;
        SCOPED_TRACE(absl::StrCat(t, " pieces ", absl::StrJoin(w, ","), " pad ", low));
        const std::string hlo = ModuleText(
            params,
            {absl::StrCat("c = ", Shape(t, rows, cols), " concatenate(", absl::StrJoin(names, ", "),
                          "), dimensions={1}"),
             absl::StrCat("z = ", t, "[] constant(0)"),
             absl::StrCat("d = ", Shape(t, rows, padded), " pad(c, z), padding=0_0x", low, "_",
                          high),
             absl::StrCat("l = ", Shape(t, rows, out), " slice(d), slice={[0:", rows, "], [0:",
                          out, "]}"),
             absl::StrCat("m = ", Shape(t, rows, out), " slice(d), slice={[0:", rows, "], [1:",
                          out + 1, "]}"),
             absl::StrCat("h = ", Shape(t, rows, out), " slice(d), slice={[0:", rows, "], [2:",
                          out + 2, "]}"),
             absl::StrCat("s = ", Shape(t, rows, out), " add(l, m)"),
             absl::StrCat("r = ", Shape(t, rows, out), " add(s, h)")});
        CheckLanes(hlo, t, out >= 64 && std::string(t) != "f64");
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, JitConcatVector, ::testing::ValuesIn(HostIsas()),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(IsaName(info.param));
                         });

}  // namespace
}  // namespace xjit::jit::testing
