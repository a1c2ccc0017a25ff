// The AVX-512 instruction set of the x86-64 target (jit/x64/x64_lowering.h):
// kernels of 32/64-bit lanes run in zmm registers (16 f32 / 8 f64 lanes),
// others keep the AVX2 (ymm) code. Results must be those of the evaluator
// bit for bit: compare and select with NaN, -0 and infinities, 32/64-bit
// integer operations, sizes that leave scalar tails (1, 15, 16, 17, 33),
// reductions; and the lanes each kernel reports show which code it got.
// Every test is skipped on a host without AVX512F/DQ/BW/VL.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/literal.h"
#include "jit/compile.h"
#include "jit/target.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

// zmm lanes of a type of `width` bits.
int ZmmLanes(int width) { return 512 / width; }

class JitAvx512 : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HostSupportsIsa(Isa::kAvx512)) GTEST_SKIP() << "this host has no avx512";
  }

  // Against the evaluator on a few seeds (RandomLiteral mixes in NaN, -0,
  // infinities and integer extremes). Returns the lanes of the widest
  // kernel.
  int Check(const std::string& hlo, int seeds = 3) {
    int lanes = 0;
    for (uint64_t seed = 1; seed <= static_cast<uint64_t>(seeds); ++seed) {
      CheckOptions options;
      options.isa = Isa::kAvx512;
      options.seed = seed;
      CompileReport report;
      options.report = &report;
      EXPECT_TRUE(MatchesEvaluator(hlo, options)) << hlo;
      for (const KernelInfo& kernel : report.kernels) {
        lanes = std::max(lanes, kernel.vector_lanes);
      }
    }
    return lanes;
  }

  // The single kernel of `hlo` compiled for avx512, with its assembly.
  KernelInfo Kernel(const std::string& hlo) {
    absl::StatusOr<std::unique_ptr<xjit::Module>> module = ParseVerified(hlo);
    EXPECT_TRUE(module.ok()) << module.status();
    if (!module.ok()) return {};
    CompileOptions options;
    options.isa = Isa::kAvx512;
    options.collect_asm = true;
    CompileReport report;
    absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
        Compile(**module, options, &report);
    EXPECT_TRUE(executable.ok()) << executable.status();
    EXPECT_EQ(report.target, "x86-64 avx512");
    EXPECT_EQ(report.kernels.size(), 1u) << hlo;
    if (report.kernels.empty()) return {};
    return report.kernels[0];
  }
};

// Sizes around the f32 and f64 zmm widths: all tail, exact, one over, two
// vectors and one.
const int kSizes[] = {1, 7, 8, 9, 15, 16, 17, 33, 100};

TEST_F(JitAvx512, FloatCompareSelect) {
  for (const char* t : {"f32", "f64"}) {
    const int width = std::string(t) == "f32" ? 32 : 64;
    for (const char* dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
      for (int n : kSizes) {
        const std::string s = absl::StrCat(t, "[", n, "]");
        const std::string p = absl::StrCat("pred[", n, "]");
        const int lanes = Check(ModuleText(
            {s, s, s}, {absl::StrCat("c = ", p, " compare(p0, p1), direction=", dir),
                        absl::StrCat("r = ", s, " select(c, p2, p0)")}));
        if (n >= ZmmLanes(width)) {
          EXPECT_EQ(lanes, ZmmLanes(width)) << t << " " << dir << " " << n;
        }
        // The mask itself as the result (pred stores from zmm masks).
        Check(ModuleText({s, s},
                         {absl::StrCat("r = ", p, " compare(p0, p1), direction=", dir)}),
              1);
      }
    }
  }
}

TEST_F(JitAvx512, FloatMaxMinClampSpecialValues) {
  // maximum/minimum propagate NaN and order -0 below +0; hand-picked pairs
  // in every lane position of two zmm vectors plus a tail.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<std::pair<float, float>> pairs = {
      {-0.0f, 0.0f}, {0.0f, -0.0f}, {nan, 1.0f}, {1.0f, nan}, {inf, -inf}, {-inf, inf},
      {-0.0f, -0.0f}, {2.5f, -2.5f}, {nan, -inf}, {3.0f, 3.0f}, {-1e-45f, 1e-45f}};
  const int n = 37;
  Literal a = Literal::FromDoubles(Shape::Array(ElementType::kF32, {n}), std::vector<double>(n));
  Literal b = Literal::FromDoubles(Shape::Array(ElementType::kF32, {n}), std::vector<double>(n));
  std::vector<float> max_expected(n), min_expected(n);
  for (int i = 0; i < n; ++i) {
    const auto [x, y] = pairs[i % pairs.size()];
    uint32_t xb, yb;
    std::memcpy(&xb, &x, 4);
    std::memcpy(&yb, &y, 4);
    a.SetBitsLinear(i, xb);
    b.SetBitsLinear(i, yb);
    // Hand rules: NaN wins; -0 < +0; otherwise the usual order.
    if (std::isnan(x) || std::isnan(y)) {
      max_expected[i] = min_expected[i] = nan;
    } else if (x == 0 && y == 0) {
      max_expected[i] = std::signbit(x) ? y : x;
      min_expected[i] = std::signbit(x) ? x : y;
    } else {
      max_expected[i] = x > y ? x : y;
      min_expected[i] = x < y ? x : y;
    }
  }
  for (const char* op : {"maximum", "minimum"}) {
    const std::string s = absl::StrCat("f32[", n, "]");
    absl::StatusOr<std::unique_ptr<xjit::Module>> module =
        ParseVerified(ModuleText({s, s}, {absl::StrCat("r = ", s, " ", op, "(p0, p1)")}));
    ASSERT_TRUE(module.ok());
    CompileOptions options;
    options.isa = Isa::kAvx512;
    CompileReport report;
    auto executable = Compile(**module, options, &report);
    ASSERT_TRUE(executable.ok()) << executable.status();
    ASSERT_EQ(report.kernels.size(), 1u);
    EXPECT_EQ(report.kernels[0].vector_lanes, 16);
    absl::StatusOr<Literal> r = (*executable)->Run({a, b});
    ASSERT_TRUE(r.ok()) << r.status();
    const std::vector<float>& want = std::string(op) == "maximum" ? max_expected : min_expected;
    for (int i = 0; i < n; ++i) {
      const uint64_t got = r->GetBitsLinear(i);
      uint32_t expected_bits;
      std::memcpy(&expected_bits, &want[i], 4);
      if (std::isnan(want[i])) {
        EXPECT_EQ(got & 0x7F800000u, 0x7F800000u) << op << " " << i;
        EXPECT_NE(got & 0x007FFFFFu, 0u) << op << " " << i;
      } else {
        EXPECT_EQ(got, expected_bits) << op << " " << i;
      }
    }
  }
  for (const char* t : {"f32", "f64"}) {
    for (int n2 : {15, 16, 17, 33}) {
      const std::string s = absl::StrCat(t, "[", n2, "]");
      Check(ModuleText({s, s, s}, {absl::StrCat("r = ", s, " clamp(p0, p1, p2)")}));
    }
  }
}

TEST_F(JitAvx512, FloatUnaryBinary) {
  for (const char* t : {"f32", "f64"}) {
    for (int n : {1, 15, 16, 17, 33}) {
      const std::string s = absl::StrCat(t, "[", n, "]");
      for (const char* op : {"abs", "negate", "sqrt", "floor", "ceil", "round-nearest-even",
                             "round-nearest-afz", "sign"}) {
        Check(ModuleText({s}, {absl::StrCat("r = ", s, " ", op, "(p0)")}), 2);
      }
      for (const char* op : {"add", "subtract", "multiply", "divide", "maximum", "minimum"}) {
        Check(ModuleText({s, s}, {absl::StrCat("r = ", s, " ", op, "(p0, p1)")}), 2);
      }
    }
  }
}

TEST_F(JitAvx512, IntegerOps32And64) {
  for (const char* t : {"s32", "u32", "s64", "u64"}) {
    const int width = t[1] == '3' ? 32 : 64;
    const bool is_signed = t[0] == 's';
    for (int n : {1, 15, 16, 17, 33}) {
      const std::string s = absl::StrCat(t, "[", n, "]");
      const std::string p = absl::StrCat("pred[", n, "]");
      for (const char* op : {"add", "subtract", "multiply", "and", "or", "xor", "maximum",
                             "minimum", "shift-left", "shift-right-logical",
                             "shift-right-arithmetic"}) {
        const int lanes =
            Check(ModuleText({s, s}, {absl::StrCat("r = ", s, " ", op, "(p0, p1)")}), 2);
        if (n >= ZmmLanes(width)) {
          EXPECT_EQ(lanes, ZmmLanes(width)) << t << " " << op << " " << n;
        }
      }
      // One shift amount for every lane.
      for (const char* op : {"shift-left", "shift-right-logical", "shift-right-arithmetic"}) {
        Check(ModuleText({s, absl::StrCat(t, "[]")},
                     {absl::StrCat("b = ", s, " broadcast(p1), dimensions={}"),
                      absl::StrCat("r = ", s, " ", op, "(p0, b)")}),
              2);
      }
      for (const char* op : {"negate", "not", "abs", "sign"}) {
        if (!is_signed && (std::string(op) == "abs" || std::string(op) == "sign")) continue;
        Check(ModuleText({s}, {absl::StrCat("r = ", s, " ", op, "(p0)")}), 2);
      }
      for (const char* dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
        Check(ModuleText({s, s, s},
                     {absl::StrCat("c = ", p, " compare(p0, p1), direction=", dir),
                      absl::StrCat("r = ", s, " select(c, p1, p2)")}),
              2);
      }
      Check(ModuleText({s, s, s}, {absl::StrCat("r = ", s, " clamp(p0, p1, p2)")}), 2);
      // Preds loaded from memory, negated and stored.
      Check(ModuleText({p, p}, {absl::StrCat("x = ", p, " xor(p0, p1)"),
                            absl::StrCat("r = ", s, " convert(x)")}),
            2);
    }
  }
  // f32 <-> s32 conversions (saturation, NaN -> 0).
  for (int n : {1, 15, 16, 17, 33}) {
    const std::string f = absl::StrCat("f32[", n, "]");
    const std::string i = absl::StrCat("s32[", n, "]");
    // 15 elements: too few for zmm, enough for ymm.
    EXPECT_EQ(Check(ModuleText({f}, {absl::StrCat("r = ", i, " convert(p0)")})),
              n >= 16 ? 16 : n >= 8 ? 8 : 1);
    Check(ModuleText({i}, {absl::StrCat("r = ", f, " convert(p0)")}));
  }
}

TEST_F(JitAvx512, IotaAndBroadcastsInZmm) {
  // Index values (lane offsets of 16 lanes) and loop-invariant operands.
  for (int n : {15, 16, 17, 40}) {
    const std::string s = absl::StrCat("s32[3,", n, "]");
    const std::string f = absl::StrCat("f32[3,", n, "]");
    Check(ModuleText({s}, {absl::StrCat("i = ", s, " iota(), iota_dimension=1"),
                       absl::StrCat("r = ", s, " add(p0, i)")}));
    Check(ModuleText({f, "f32[3]"}, {absl::StrCat("b = ", f, " broadcast(p1), dimensions={0}"),
                                 absl::StrCat("r = ", f, " multiply(p0, b)")}));
  }
}

TEST_F(JitAvx512, ReportsZmmLanes) {
  struct Case {
    const char* type;
    int lanes;
  };
  for (const Case& c : {Case{"f32", 16}, Case{"f64", 8}, Case{"s32", 16}, Case{"u64", 8}}) {
    const std::string s = absl::StrCat(c.type, "[64]");
    const KernelInfo kernel = Kernel(ModuleText({s, s}, {absl::StrCat("r = ", s, " add(p0, p1)")}));
    EXPECT_EQ(kernel.vector_lanes, c.lanes) << c.type;
    EXPECT_TRUE(absl::StrContains(kernel.asm_text, "zmm")) << kernel.asm_text;
  }
}

TEST_F(JitAvx512, SmallKernelsKeepEverythingInRegisters) {
  // No stack slots: k-register compares, all-ones masks (vpternlogd reads
  // its destination) and selects must not make asmjit load uninitialised
  // registers from the stack.
  for (const char* body : {"n = s32[100] not(p0)\n  c = pred[100] compare(n, p1), direction=NE\n"
                           "  ROOT r = s32[100] select(c, n, p1)",
                           "c = pred[100] compare(p0, p1), direction=LT\n"
                           "  ROOT r = s32[100] select(c, p0, p1)",
                           "ROOT r = s32[100] maximum(p0, p1)"}) {
    const std::string hlo = absl::StrCat(
        "HloModule m\nENTRY e {\n  p0 = s32[100] parameter(0)\n  p1 = s32[100] parameter(1)\n  ",
        body, "\n}\n");
    const KernelInfo kernel = Kernel(hlo);
    EXPECT_EQ(kernel.vector_lanes, 16);
    EXPECT_FALSE(absl::StrContains(kernel.asm_text, "ptr [rsp")) << kernel.asm_text;
  }
  for (const char* op : {"maximum", "minimum"}) {
    const KernelInfo kernel = Kernel(ModuleText(
        {"f32[100]", "f32[100]"}, {absl::StrCat("r = f32[100] ", op, "(p0, p1)")}));
    EXPECT_FALSE(absl::StrContains(kernel.asm_text, "ptr [rsp")) << kernel.asm_text;
  }
}

TEST_F(JitAvx512, FallsBackToYmm) {
  struct Case {
    std::string hlo;
    int lanes;  // AVX2's (ymm).
    std::string why;
  };
  const std::vector<Case> cases = {
      // 8 and 16-bit lanes have no zmm code.
      {ModuleText({"s8[100]", "s8[100]"}, {"r = s8[100] add(p0, p1)"}), 32, "s8 lanes"},
      {ModuleText({"u16[100]", "u16[100]"}, {"r = u16[100] multiply(p0, p1)"}), 16, "u16 lanes"},
      // Preds only: byte masks.
      {ModuleText({"pred[100]", "pred[100]"}, {"r = pred[100] and(p0, p1)"}), 32, "preds only"},
      // Fewer elements in the vectorised loop than 16 f32 lanes (a row
      // vector broadcast along the rows keeps the loops from merging).
      {ModuleText({"f32[9,12]", "f32[12]"},
                  {"b = f32[9,12] broadcast(p1), dimensions={1}", "r = f32[9,12] add(p0, b)"}),
       8, "12 < 16"},
  };
  for (const Case& c : cases) {
    const KernelInfo kernel = Kernel(c.hlo);
    EXPECT_EQ(kernel.vector_lanes, c.lanes) << c.why;
    EXPECT_FALSE(absl::StrContains(kernel.asm_text, "zmm")) << c.why << "\n" << kernel.asm_text;
    EXPECT_TRUE(absl::StrContains(kernel.asm_text, "ymm")) << c.why << "\n" << kernel.asm_text;
    // Still right.
    Check(c.hlo, 2);
  }
}

TEST_F(JitAvx512, Reductions) {
  // Maximum/minimum and integer sums are exact in any order, so the row
  // (across the reduced loop) and column (across outputs) strategies must
  // match the evaluator bit for bit.
  for (const char* t : {"f32", "f64", "s32", "u64"}) {
    const bool is_float = t[0] == 'f';
    for (const char* op : {"maximum", "minimum", "add"}) {
      if (is_float && std::string(op) == "add") continue;
      const std::string init = std::string(op) == "add"  ? "0"
                               : std::string(op) == "maximum"
                                   ? (is_float ? "-inf" : (t[0] == 'u' ? "0" : "-2147483648"))
                                   : (is_float ? "inf" : (t[0] == 'u' ? "18446744073709551615"
                                                                      : "2147483647"));
      for (const char* dims : {"[5,37]", "[3,100]", "[40,6]"}) {
        for (const char* reduce_dims : {"{1}", "{0}"}) {
          const std::string s = absl::StrCat(t, dims);
          // The result keeps the other dimension.
          const std::string d(dims);
          const size_t comma = d.find(',');
          const std::string first = d.substr(1, comma - 1);
          const std::string second = d.substr(comma + 1, d.size() - comma - 2);
          const std::string out =
              absl::StrCat(t, "[", std::string(reduce_dims) == "{1}" ? first : second, "]");
          const std::string hlo = absl::StrCat(
              "HloModule m\nr {\n  a = ", t, "[] parameter(0)\n  b = ", t,
              "[] parameter(1)\n  ROOT c = ", t, "[] ", op, "(a, b)\n}\nENTRY e {\n  p0 = ", s,
              " parameter(0)\n  i = ", t, "[] constant(", init, ")\n  ROOT r = ", out,
              " reduce(p0, i), dimensions=", reduce_dims, ", to_apply=r\n}\n");
          Check(hlo, 2);
        }
      }
    }
  }
}

TEST_F(JitAvx512, SelectsInsideReductions) {
  // Compare + select feeding a reduction, the compare on the reduced
  // element (in the loop body: c0) or on a per-output value (c1, outside
  // the body for row reductions).
  for (const char* t : {"s32", "f32", "f64", "s64"}) {
    const bool is_float = t[0] == 'f';
    const std::string op = is_float ? "maximum" : "add";
    const std::string init = is_float ? "-inf" : "0";
    for (const char* dims : {"[4,50]", "[50,4]", "[2,3,33]"}) {
      const std::string d(dims);
      const std::string s = absl::StrCat(t, d);
      const std::string p = absl::StrCat("pred", d);
      const std::string kept = d.substr(1, d.find(',') - 1);
      const std::string hlo = absl::StrCat(
          "HloModule m\nr {\n  a = ", t, "[] parameter(0)\n  b = ", t,
          "[] parameter(1)\n  ROOT c = ", t, "[] ", op, "(a, b)\n}\nENTRY e {\n  p0 = ", s,
          " parameter(0)\n  p1 = ", s, " parameter(1)\n  p2 = ", t, "[", kept,
          "] parameter(2)\n  q = ", s, " broadcast(p2), dimensions={0}\n  c0 = ", p,
          " compare(p0, p1), direction=GT\n  zc = ", t, "[] constant(0)\n  z = ", s,
          " broadcast(zc), dimensions={}\n  c1 = ", p, " compare(q, z), direction=LE\n  x = ",
          s, " select(c0, p0, p1)\n  y = ", s, " select(c1, x, q)\n  i = ", t, "[] constant(",
          init, ")\n  ROOT r = ", t, "[", kept, "] reduce(y, i), dimensions={",
          d.find(',') == d.rfind(',') ? "1" : "1,2", "}, to_apply=r\n}\n");
      Check(hlo, 2);
    }
  }
}

TEST_F(JitAvx512, Chain) {
  // The kernel: tanh(a*x+b)*c, through vector math, bit-identical
  // to the AVX2 code (same operations in the same order).
  for (int n : {1, 15, 16, 17, 33, 1000}) {
    const std::string s = absl::StrCat("f32[", n, "]");
    const std::string hlo = ModuleText(
        {s, "f32[]", "f32[]", "f32[]"},
        {absl::StrCat("a = ", s, " broadcast(p1), dimensions={}"),
         absl::StrCat("b = ", s, " broadcast(p2), dimensions={}"),
         absl::StrCat("c = ", s, " broadcast(p3), dimensions={}"),
         absl::StrCat("ax = ", s, " multiply(a, p0)"), absl::StrCat("axb = ", s, " add(ax, b)"),
         absl::StrCat("t = ", s, " tanh(axb)"), absl::StrCat("r = ", s, " multiply(t, c)")});
    absl::StatusOr<std::unique_ptr<xjit::Module>> module = ParseVerified(hlo);
    ASSERT_TRUE(module.ok());
    std::mt19937_64 rng(7);
    std::vector<Literal> arguments;
    for (const Instruction* parameter : (*module)->entry()->parameters()) {
      arguments.push_back(RandomLiteral(parameter->shape(), rng));
    }
    std::vector<Literal> results;
    std::vector<int> lanes;
    for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
      CompileOptions options;
      options.isa = isa;
      CompileReport report;
      auto executable = Compile(**module, options, &report);
      ASSERT_TRUE(executable.ok()) << executable.status();
      ASSERT_EQ(report.kernels.size(), 1u);
      lanes.push_back(report.kernels[0].vector_lanes);
      absl::StatusOr<Literal> r = (*executable)->Run(arguments);
      ASSERT_TRUE(r.ok()) << r.status();
      results.push_back(std::move(*r));
    }
    EXPECT_EQ(Difference(results[0], results[1]), "") << n;
    if (n >= 16) {
      EXPECT_EQ(lanes[1], 16) << n;
    }
  }
}

}  // namespace
}  // namespace xjit::jit::testing
