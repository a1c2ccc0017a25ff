// Unit tests of runtime/blas dot: the seed's DotGeneral examples (003), hand
// calculated integer, f16, bf16 and complex cases, and layouts that must (or
// must not) need a copy, checked against hand values or the evaluator.
#include <cmath>
#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/float_format.h"
#include "ir/hlo_text/parser.h"
#include "ir/literal.h"
#include "ir/shape.h"
#include "runtime/blas/axpy_gemv.h"
#include "runtime/blas/blas_threads.h"
#include "runtime/blas/dot.h"
#include "tests/blas/blas_test_util.h"

namespace xjit::runtime::blas {
namespace {

using testing::RunCase;
using testing::RunWithValues;

std::string DotModule(const std::string& lhs, const std::string& rhs, const std::string& out,
                      const std::string& dims) {
  return absl::StrCat("HloModule dot\n\nENTRY e {\n  a = ", lhs, " parameter(0)\n  b = ", rhs,
                      " parameter(1)\n  ROOT d = ", out, " dot(a, b), ", dims, "\n}\n");
}

Literal Doubles(const std::string& shape, const std::vector<double>& values) {
  return Literal::FromDoubles(*ParseShape(shape), values);
}
Literal Ints(const std::string& shape, const std::vector<int64_t>& values) {
  return Literal::FromInts(*ParseShape(shape), values);
}

class DotTest : public ::testing::Test {
 protected:
  void SetUp() override { SetBlasThreads(1); }
};

// 003, DotGeneral: contracting dimension 1 of both operands.
TEST_F(DotTest, SeedContractingExample) {
  for (const char* type : {"f32", "f64"}) {
    const std::string l = absl::StrCat(type, "[2,3]{1,0}"), o = absl::StrCat(type, "[2,2]{1,0}");
    EXPECT_TRUE(RunWithValues(
        DotModule(l, l, o, "lhs_contracting_dims={1}, rhs_contracting_dims={1}"),
        {Doubles(l, {1, 2, 3, 4, 5, 6}), Doubles(l, {1, 1, 1, 2, 2, 2})},
        Doubles(o, {6, 12, 15, 30}), 3));
  }
}

// 003, DotGeneral: batch dimension 0, 2x2 matrices times the identity.
TEST_F(DotTest, SeedBatchExample) {
  const std::string s = "f32[2,2,2]{2,1,0}";
  EXPECT_TRUE(RunWithValues(
      DotModule(s, s, s,
                "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                "rhs_contracting_dims={1}"),
      {Doubles(s, {1, 2, 3, 4, 5, 6, 7, 8}), Doubles(s, {1, 0, 0, 1, 1, 0, 0, 1})},
      Doubles(s, {1, 2, 3, 4, 5, 6, 7, 8}), 2));
}

// 003, Dot: vector . vector, matrix x vector, matrix x matrix.
TEST_F(DotTest, SeedDotForms) {
  EXPECT_TRUE(RunWithValues(
      DotModule("f32[3]{0}", "f32[3]{0}", "f32[]",
                "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
      {Doubles("f32[3]{0}", {1, 2, 3}), Doubles("f32[3]{0}", {4, 5, 6})}, Doubles("f32[]", {32}),
      3));
  EXPECT_TRUE(RunWithValues(
      DotModule("f32[2,3]{1,0}", "f32[3]{0}", "f32[2]{0}",
                "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
      {Doubles("f32[2,3]{1,0}", {1, 2, 3, 4, 5, 6}), Doubles("f32[3]{0}", {1, 0, -1})},
      Doubles("f32[2]{0}", {-2, -2}), 3));
  EXPECT_TRUE(RunWithValues(
      DotModule("f32[2,3]{0,1}", "f32[3,2]{0,1}", "f32[2,2]{0,1}",
                "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
      {Doubles("f32[2,3]{1,0}", {1, 2, 3, 4, 5, 6}), Doubles("f32[3,2]{1,0}", {1, 2, 3, 4, 5, 6})},
      Doubles("f32[2,2]{1,0}", {22, 28, 49, 64}), 3));
}

// Integers wrap at the result width: 65536 * 65536 = 2^32 is 0 in s32.
TEST_F(DotTest, IntegersWrap) {
  EXPECT_TRUE(RunWithValues(
      DotModule("s32[1,2]{1,0}", "s32[2,1]{1,0}", "s32[1,1]{1,0}",
                "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
      {Ints("s32[1,2]{1,0}", {65536, 3}), Ints("s32[2,1]{1,0}", {65536, 5})},
      Ints("s32[1,1]{1,0}", {15}), 2));
  // s8: 100*2 + 100*1 = 300 = 44 (mod 256); -128 * -1 = 128 = -128.
  EXPECT_TRUE(RunWithValues(
      DotModule("s8[2,2]{1,0}", "s8[2]{0}", "s8[2]{0}",
                "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
      {Ints("s8[2,2]{1,0}", {100, 100, -128, 0}), Ints("s8[2]{0}", {2, 1})},
      Ints("s8[2]{0}", {44, 0}), 2));
  EXPECT_TRUE(RunWithValues(
      DotModule("s8[1]{0}", "s8[1]{0}", "s8[]", "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
      {Ints("s8[1]{0}", {-128}), Ints("s8[1]{0}", {-1})}, Ints("s8[]", {-128}), 1));
  // u8: 200 * 2 = 400 = 144.
  EXPECT_TRUE(RunWithValues(
      DotModule("u8[1]{0}", "u8[1]{0}", "u8[]", "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
      {Ints("u8[1]{0}", {200}), Ints("u8[1]{0}", {2})}, Ints("u8[]", {144}), 1));
}

// f16 and bf16 accumulate in f32: 1 + 2048 + 1 = 2050 (representable in f16);
// an f16 accumulator would give 2048 (2049 rounds to even).
TEST_F(DotTest, HalfAccumulatesInF32) {
  EXPECT_TRUE(RunWithValues(
      DotModule("f16[3]{0}", "f16[3]{0}", "f16[]", "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
      {Doubles("f16[3]{0}", {1, 2048, 1}), Doubles("f16[3]{0}", {1, 1, 1})},
      Doubles("f16[]", {2050}), 0));
  EXPECT_TRUE(RunWithValues(
      DotModule("bf16[3]{0}", "bf16[3]{0}", "bf16[]",
                "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
      {Doubles("bf16[3]{0}", {1, 256, 1}), Doubles("bf16[3]{0}", {1, 1, 1})},
      Doubles("bf16[]", {258}), 0));
}

// (1+2i)(3+4i) = -5+10i; dot does not conjugate.
TEST_F(DotTest, Complex) {
  for (const char* t : {"c64", "c128"}) {
    const std::string v = absl::StrCat(t, "[1]{0}"), s = absl::StrCat(t, "[]");
    auto a = *ParseLiteral(absl::StrCat(v, " {(1, 2)}"));
    auto b = *ParseLiteral(absl::StrCat(v, " {(3, 4)}"));
    auto e = *ParseLiteral(absl::StrCat(s, " (-5, 10)"));
    EXPECT_TRUE(RunWithValues(
        DotModule(v, v, s, "lhs_contracting_dims={0}, rhs_contracting_dims={0}"), {a, b}, e, 1));
  }
}

// A zero-length contraction gives zeros; an empty result does nothing.
TEST_F(DotTest, ZeroSizes) {
  EXPECT_TRUE(RunWithValues(
      DotModule("f32[2,0]{1,0}", "f32[0,3]{1,0}", "f32[2,3]{1,0}",
                "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
      {Doubles("f32[2,0]{1,0}", {}), Doubles("f32[0,3]{1,0}", {})},
      Doubles("f32[2,3]{1,0}", {0, 0, 0, 0, 0, 0}), 0));
  auto r = RunCase(DotModule("f32[0,4]{1,0}", "f32[4,3]{1,0}", "f32[0,3]{1,0}",
                             "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
                   1, 4);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.kind, DotPlan::Kind::kNothing);
}

// Every combination of row/column-major lhs, rhs and result maps to BLAS
// flags with no copy.
TEST_F(DotTest, TwoDimensionalLayoutsNeedNoCopy) {
  const char* layouts[] = {"{1,0}", "{0,1}"};
  int cases = 0;
  for (const char* l : layouts) {
    for (const char* r : layouts) {
      for (const char* o : layouts) {
        auto res = RunCase(DotModule(absl::StrCat("f32[5,7]", l), absl::StrCat("f32[7,6]", r),
                                     absl::StrCat("f32[5,6]", o),
                                     "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
                           ++cases, 7);
        EXPECT_TRUE(res.ok);
        EXPECT_EQ(res.copies, 0) << res.plan;
        EXPECT_EQ(res.kind, DotPlan::Kind::kGemm) << res.plan;
      }
    }
  }
}

// Several contracting dims that are contiguous (in either order) merge into one.
TEST_F(DotTest, MultipleContractingDimsMerge) {
  auto r = RunCase(DotModule("f32[4,3,5]{2,1,0}", "f32[3,5,6]{2,1,0}", "f32[4,6]{1,0}",
                             "lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}"),
                   7, 15);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.copies, 0) << r.plan;
  // Pairs listed in the other order: still the same memory.
  r = RunCase(DotModule("f32[4,3,5]{2,1,0}", "f32[5,3,6]{2,0,1}", "f32[4,6]{1,0}",
                        "lhs_contracting_dims={2,1}, rhs_contracting_dims={0,1}"),
              8, 15);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.copies, 0) << r.plan;
}

// Contracting dims split by a free dim cannot merge: exactly one copy.
TEST_F(DotTest, NonContiguousContractingDimsCopyOnce) {
  auto r = RunCase(DotModule("f32[4,3,5]{2,1,0}", "f32[4,5,6]{2,1,0}", "f32[3,6]{1,0}",
                             "lhs_contracting_dims={0,2}, rhs_contracting_dims={0,1}"),
                   9, 20);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.copies, 1) << r.plan;
}

// Contracting dims split by a free dim, with enough work per call and a
// result that stays in cache (einsum('bhqd,bhkd->qk')): no copy, the outer
// contracting dims are a loop of GEMMs accumulated into the result. Odd
// sizes, f64 and c64, contracting dims listed out of order, a batch
// dimension, a column-major result, and one side transposed.
TEST_F(DotTest, ContractingDimsSplitByAFreeDimLoopOverK) {
  struct Form {
    std::string lhs, rhs, out, dims;
    int64_t contraction;
    std::string k_loop;
  };
  const std::vector<Form> forms = {
      {"f32[3,2,64,32]", "f32[3,2,65,32]", "f32[64,65]",
       "lhs_contracting_dims={0,1,3}, rhs_contracting_dims={0,1,3}", 192, "k_loop=6"},
      {"f64[2,3,64,41]", "f64[2,3,70,41]", "f64[64,70]",
       "lhs_contracting_dims={0,3,1}, rhs_contracting_dims={0,3,1}", 246, "k_loop=6"},
      {"c64[2,64,40]", "c64[2,70,40]", "c64[64,70]{0,1}",
       "lhs_contracting_dims={0,2}, rhs_contracting_dims={0,2}", 80, "k_loop=2"},
      {"f32[4,2,64,36]", "f32[4,2,36,70]{3,2,1,0}", "f32[4,64,70]",
       "lhs_batch_dims={0}, lhs_contracting_dims={1,3}, rhs_batch_dims={0}, "
       "rhs_contracting_dims={1,2}", 72, "k_loop=2"},
      {"f32[5,33,64]{2,1,0}", "f32[5,33,66]", "f32[64,66]",
       "lhs_contracting_dims={0,1}, rhs_contracting_dims={0,1}", 165, ""},  // K merges
  };
  uint64_t seed = 30;
  for (const Form& f : forms) {
    SCOPED_TRACE(f.lhs + " x " + f.rhs + " -> " + f.out);
    for (int threads : {1, 2}) {
      auto r = RunCase(DotModule(f.lhs, f.rhs, f.out, f.dims), ++seed, f.contraction, threads);
      EXPECT_TRUE(r.ok);
      EXPECT_EQ(r.copies, 0) << r.plan;
      EXPECT_EQ(r.kind, DotPlan::Kind::kGemm) << r.plan;
      if (f.k_loop.empty()) {
        EXPECT_EQ(r.plan.find("k_loop"), std::string::npos) << r.plan;
      } else {
        EXPECT_NE(r.plan.find(f.k_loop), std::string::npos) << r.plan;
      }
    }
  }
  // Too little work per call (4 x 6 x 5): the operand is copied as before
  // (NonContiguousContractingDimsCopyOnce); a size-0 contracting dim: nothing
  // to loop over, the result is zeros.
  auto r = RunCase(DotModule("f32[0,2,64,32]", "f32[0,2,65,32]", "f32[64,65]",
                             "lhs_contracting_dims={0,1,3}, rhs_contracting_dims={0,1,3}"),
                   40, 1);
  EXPECT_TRUE(r.ok);
}

// A result whose M dims are interleaved with N is computed in scratch and
// copied out once.
TEST_F(DotTest, InterleavedResultCopiesOnce) {
  auto r = RunCase(DotModule("f32[3,4,5]{2,1,0}", "f32[5,6]{1,0}", "f32[3,4,6]{1,2,0}",
                             "lhs_contracting_dims={2}, rhs_contracting_dims={0}"),
                   10, 5);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.copies, 1) << r.plan;
}

// Batch dims anywhere cost nothing: they are the loop around the GEMMs.
TEST_F(DotTest, BatchDimsAnywhere) {
  auto r = RunCase(DotModule("f32[3,2,4]{2,1,0}", "f32[4,5,2]{0,2,1}", "f32[2,3,5]{2,0,1}",
                             "lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={2}, "
                             "rhs_contracting_dims={0}"),
                   11, 4);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.copies, 0) << r.plan;
  EXPECT_EQ(r.kind, DotPlan::Kind::kGemm);
}

TEST_F(DotTest, MatrixVectorAndVectorVector) {
  auto r = RunCase(DotModule("f32[9,7]{0,1}", "f32[7]{0}", "f32[9]{0}",
                             "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
                   12, 7);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.kind, DotPlan::Kind::kGemv) << r.plan;
  EXPECT_EQ(r.copies, 0);
  // Vector x matrix, the vector read with a stride (a column of a matrix).
  r = RunCase(DotModule("f64[7,3]{1,0}", "f64[7,9]{0,1}", "f64[3,9]{1,0}",
                        "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
              13, 7);
  EXPECT_TRUE(r.ok);
  r = RunCase(DotModule("c64[1,7]{1,0}", "c64[7,9]{0,1}", "c64[1,9]{1,0}",
                        "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
              14, 7);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.kind, DotPlan::Kind::kGemv) << r.plan;
  r = RunCase(DotModule("c128[2,11]{0,1}", "c128[11,2]{1,0}", "c128[2]{0}",
                        "lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={1}, "
                        "rhs_contracting_dims={0}"),
              15, 11);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.kind, DotPlan::Kind::kDot) << r.plan;
}

// Gemv clears its result before OpenBLAS's beta = 0 call (one memset when
// the result is contiguous): stale NaNs in the output buffer must not come
// through. Small integers, so every sum is exact in any order.
TEST_F(DotTest, GemvIgnoresStaleNaNsInItsResult) {
  DotDimensionNumbers d;
  d.lhs_contracting_dimensions = {1};
  d.rhs_contracting_dimensions = {0};
  const int64_t m = 203, k = 37;
  absl::StatusOr<DotPlan> plan =
      PlanDot(Shape::Array(ElementType::kF32, {m, k}), Shape::Array(ElementType::kF32, {k}),
              Shape::Array(ElementType::kF32, {m}), d);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->kind, DotPlan::Kind::kGemv) << plan->ToString();
  std::vector<float> a(m * k), x(k), y(m, std::nanf(""));
  for (int64_t i = 0; i < m * k; ++i) a[i] = static_cast<float>(i % 7 - 3);
  for (int64_t j = 0; j < k; ++j) x[j] = static_cast<float>(j % 5 - 2);
  std::vector<uint8_t> scratch(plan->scratch_bytes);
  RunDot(*plan, a.data(), x.data(), y.data(), scratch.data());
  for (int64_t i = 0; i < m; ++i) {
    float expected = 0;
    for (int64_t j = 0; j < k; ++j) expected += a[i * k + j] * x[j];
    EXPECT_EQ(y[i], expected) << "row " << i;
  }
}

TEST_F(DotTest, MixedAndNarrowTypesUseTheLoop) {
  for (const char* t : {"s32", "u16", "pred", "s4"}) {
    auto r = RunCase(DotModule(absl::StrCat(t, "[2,5,3]{1,2,0}"), absl::StrCat(t, "[2,3,4]{2,1,0}"),
                               absl::StrCat(t, "[2,5,4]{0,2,1}"),
                               "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                               "rhs_contracting_dims={1}"),
                     16, 3);
    EXPECT_TRUE(r.ok) << t;
    EXPECT_EQ(r.kind, DotPlan::Kind::kLoop) << t;
  }
}

// A dot of 16-bit floats (or mixed with f32) that RunCase checks against the
// evaluator; it must plan as `kind`, on f32 images.
struct F32ImageCase {
  std::string lhs, rhs, out, dims;
  int64_t k;
  DotPlan::Kind kind;
};
constexpr char kBatched[] =
    "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}";

void ExpectRunsOnF32Images(const std::vector<F32ImageCase>& cases) {
  for (const F32ImageCase& c : cases) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      auto r = RunCase(DotModule(c.lhs, c.rhs, c.out, c.dims), seed, c.k);
      EXPECT_TRUE(r.ok) << c.lhs << " x " << c.rhs << ": " << r.plan;
      EXPECT_EQ(r.kind, c.kind) << r.plan;
      EXPECT_NE(r.plan.find("on f32 images"), std::string::npos) << r.plan;
    }
  }
}

// bf16 runs in f32 BLAS on f32 images of its bf16 operands (and result),
// against the evaluator: batched with transposed layouts, mixed with f32
// operands or an f32 result, matrix-vector and vector-vector forms.
TEST_F(DotTest, Bf16RunsOnF32Images) {
  const std::vector<F32ImageCase> cases = {
      {"bf16[2,5,3]{1,2,0}", "bf16[2,3,4]{2,1,0}", "bf16[2,5,4]{0,2,1}", kBatched, 3,
       DotPlan::Kind::kGemm},
      {"bf16[3,40,70]{2,1,0}", "bf16[3,70,9]{1,2,0}", "bf16[3,40,9]{2,1,0}", kBatched, 70,
       DotPlan::Kind::kGemm},
      {"bf16[2,5,3]{2,1,0}", "f32[2,3,4]{2,1,0}", "f32[2,5,4]{2,1,0}", kBatched, 3,
       DotPlan::Kind::kGemm},
      {"f32[2,5,3]{2,1,0}", "f32[2,3,4]{2,1,0}", "bf16[2,5,4]{2,1,0}", kBatched, 3,
       DotPlan::Kind::kGemm},
      {"bf16[17,33]{1,0}", "bf16[33]{0}", "bf16[17]{0}",
       "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 33, DotPlan::Kind::kGemv},
      {"bf16[300]{0}", "bf16[300]{0}", "bf16[]",
       "lhs_contracting_dims={0}, rhs_contracting_dims={0}", 300, DotPlan::Kind::kDot},
  };
  ExpectRunsOnF32Images(cases);
}

// f16 runs like bf16 (XLA:CPU converts f16 dot operands to f32 too): f32
// BLAS on f32 images, against the evaluator in the same forms, f16 mixed
// with f32 and with bf16.
TEST_F(DotTest, F16RunsOnF32Images) {
  const std::vector<F32ImageCase> cases = {
      {"f16[2,5,3]{1,2,0}", "f16[2,3,4]{2,1,0}", "f16[2,5,4]{0,2,1}", kBatched, 3,
       DotPlan::Kind::kGemm},
      {"f16[3,40,70]{2,1,0}", "f16[3,70,9]{1,2,0}", "f16[3,40,9]{2,1,0}", kBatched, 70,
       DotPlan::Kind::kGemm},
      {"f16[2,5,3]{2,1,0}", "f32[2,3,4]{2,1,0}", "f32[2,5,4]{2,1,0}", kBatched, 3,
       DotPlan::Kind::kGemm},
      {"f32[2,5,3]{2,1,0}", "f32[2,3,4]{2,1,0}", "f16[2,5,4]{2,1,0}", kBatched, 3,
       DotPlan::Kind::kGemm},
      {"f16[2,5,3]{2,1,0}", "bf16[2,3,4]{2,1,0}", "f32[2,5,4]{2,1,0}", kBatched, 3,
       DotPlan::Kind::kGemm},
      {"f16[17,33]{1,0}", "f16[33]{0}", "f16[17]{0}",
       "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 33, DotPlan::Kind::kGemv},
      {"f16[33]{0}", "f16[33,1]{1,0}", "f16[1]{0}",
       "lhs_contracting_dims={0}, rhs_contracting_dims={0}", 33, DotPlan::Kind::kDot},
      {"f16[300]{0}", "f16[300]{0}", "f16[]",
       "lhs_contracting_dims={0}, rhs_contracting_dims={0}", 300, DotPlan::Kind::kDot},
  };
  ExpectRunsOnF32Images(cases);
}

// Every f16 bit pattern through the f32 image and back: x . 1 (one product,
// exact in f32) is x itself, rounded by the evaluator's encoder from the
// double sum 0 + x (so -0 gives +0, as in the evaluator; a BLAS that skips
// the 0 + may keep -0, which compares equal); NaN gives a NaN.
TEST_F(DotTest, F16WidensAndNarrowsEveryPatternExactly) {
  DotDimensionNumbers d;
  d.lhs_contracting_dimensions = {0};
  d.rhs_contracting_dimensions = {0};
  const Shape v = Shape::Array(ElementType::kF16, {1});
  absl::StatusOr<DotPlan> plan = PlanDot(v, v, Shape::Array(ElementType::kF16, {}), d);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_NE(plan->ToString().find("on f32 images"), std::string::npos) << plan->ToString();
  std::vector<uint8_t> scratch(plan->scratch_bytes);
  const uint16_t one = 0x3C00;
  int wrong = 0;
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const uint16_t x = static_cast<uint16_t>(bits);
    uint16_t out = 0x1234;
    RunDot(*plan, &x, &one, &out, scratch.data());
    const double value = FloatBitsToDouble(ElementType::kF16, x);
    const auto expected = static_cast<uint16_t>(DoubleToFloatBits(ElementType::kF16, 0.0 + value));
    const bool nan = std::isnan(value);
    const bool ok = nan ? (out & 0x7C00) == 0x7C00 && (out & 0x3FF) != 0
                        : out == expected || ((out | expected) & 0x7FFF) == 0;
    if (!ok && ++wrong <= 5) {
      ADD_FAILURE() << std::hex << "f16 0x" << bits << ": 0x" << out << ", expected 0x" << expected;
    }
  }
  EXPECT_EQ(wrong, 0);
}

// f32 sums rounded to f16 by the f32 image's narrowing: f32 . 1 -> f16 for
// every 2^11-th f32 bit pattern and its neighbours 1 and 0x7FF above (both
// signs, every exponent: f16 normals, subnormals, values that round to zero
// or overflow to inf, the halfway cases of normals, whose 13 dropped bits
// are 0x1000, and the patterns just above and below them), against the
// evaluator's encoder.
TEST_F(DotTest, F32SumsRoundToF16LikeTheEvaluator) {
  DotDimensionNumbers d;
  d.lhs_contracting_dimensions = {0};
  d.rhs_contracting_dimensions = {0};
  absl::StatusOr<DotPlan> plan =
      PlanDot(Shape::Array(ElementType::kF32, {1}), Shape::Array(ElementType::kF16, {1}),
              Shape::Array(ElementType::kF16, {}), d);
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::vector<uint8_t> scratch(plan->scratch_bytes);
  const uint16_t one = 0x3C00;
  int wrong = 0;
  for (uint64_t pattern = 0; pattern <= 0xFFFFFFFFu; pattern += 0x800) {
    for (uint32_t low : {0u, 1u, 0x7FFu}) {
      const uint32_t bits = static_cast<uint32_t>(pattern) + low;
      float x;
      std::memcpy(&x, &bits, 4);
      if (std::isnan(x)) continue;
      uint16_t out = 0x1234;
      RunDot(*plan, &x, &one, &out, scratch.data());
      const auto expected =
          static_cast<uint16_t>(DoubleToFloatBits(ElementType::kF16, 0.0 + static_cast<double>(x)));
      const bool ok = out == expected || ((out | expected) & 0x7FFF) == 0;
      if (!ok && ++wrong <= 5) {
        ADD_FAILURE() << std::hex << "f32 0x" << bits << ": 0x" << out << ", expected 0x"
                      << expected;
      }
    }
  }
  EXPECT_EQ(wrong, 0);
}

// The f32 sum is rounded once to bf16, to nearest even: 1 + 2^-8 lies
// halfway between 1 and 1 + 2^-7 and goes to 1 (even); 1 + 3 * 2^-8 lies
// halfway between 1 + 2^-7 and 1 + 2^-6 and goes to 1 + 2^-6.
TEST_F(DotTest, Bf16RoundsTheF32SumToNearestEven) {
  DotDimensionNumbers d;
  d.lhs_contracting_dimensions = {0};
  d.rhs_contracting_dimensions = {0};
  const Shape v = Shape::Array(ElementType::kBF16, {2});
  absl::StatusOr<DotPlan> plan = PlanDot(v, v, Shape::Array(ElementType::kBF16, {}), d);
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::vector<uint8_t> scratch(plan->scratch_bytes);
  const uint16_t one = 0x3F80, two_to_minus_8 = 0x3B80, three_times = 0x3C40;
  const uint16_t ones[2] = {one, one};
  uint16_t out = 0;
  const uint16_t halfway_low[2] = {one, two_to_minus_8};
  RunDot(*plan, halfway_low, ones, &out, scratch.data());
  EXPECT_EQ(out, 0x3F80);
  const uint16_t halfway_high[2] = {one, three_times};
  RunDot(*plan, halfway_high, ones, &out, scratch.data());
  EXPECT_EQ(out, 0x3F82);
}

// Every bf16 pattern through rows of the f32 image (16 elements at a time,
// the vectorised path, NaNs through the encoder) and back, scaled by a:
// y * a is exact in f32 (8-bit by 8-bit significands) and then rounded
// once to bf16, so the result is the evaluator's encoding of the double
// product (±0 equal, NaN any NaN). The copies split over 1 to 3 threads
// must give the same bits.
TEST_F(DotTest, Bf16RowsWidenAndNarrowEveryPattern) {
  DotDimensionNumbers d;
  d.lhs_contracting_dimensions = {1};
  d.rhs_contracting_dimensions = {0};
  const Shape lhs = Shape::Array(ElementType::kBF16, {1, 1});
  const Shape rhs = Shape::Array(ElementType::kBF16, {1, 65536});
  absl::StatusOr<DotPlan> plan = PlanDot(lhs, rhs, rhs, d);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_NE(plan->ToString().find("on f32 images"), std::string::npos) << plan->ToString();
  std::vector<uint8_t> scratch(plan->scratch_bytes);
  std::vector<uint16_t> y(65536);
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) y[bits] = static_cast<uint16_t>(bits);
  // 1, 1 + 2^-7 (products halfway between bf16 values: ties to even), 3.
  for (const uint16_t a : {uint16_t{0x3F80}, uint16_t{0x3F81}, uint16_t{0x4040}}) {
    std::vector<uint16_t> first;
    for (int threads = 1; threads <= 3; ++threads) {
      std::vector<uint16_t> out(65536, 0x1234);
      RunDot(*plan, &a, y.data(), out.data(), scratch.data(), threads);
      int wrong = 0;
      for (uint32_t j = 0; j <= 0xFFFF; ++j) {
        const double product = FloatBitsToDouble(ElementType::kBF16, y[j]) *
                               FloatBitsToDouble(ElementType::kBF16, a);
        const auto expected = static_cast<uint16_t>(DoubleToFloatBits(ElementType::kBF16, product));
        const bool ok = std::isnan(product)
                            ? (out[j] & 0x7F80) == 0x7F80 && (out[j] & 0x7F) != 0
                            : out[j] == expected || ((out[j] | expected) & 0x7FFF) == 0;
        if (!ok && ++wrong <= 5) {
          ADD_FAILURE() << "a " << a << " y " << y[j] << ": got " << out[j] << " want "
                        << expected << " (threads " << threads << ")";
        }
      }
      EXPECT_EQ(wrong, 0);
      if (threads == 1) first = out;
      EXPECT_EQ(out, first) << "threads " << threads;
    }
  }
}

// Batched bf16 GEMMs with transposed layouts and odd sizes, whose operand
// and result copies are large enough to split over threads: the same bits
// with 1, 2 and 3 threads (the split changes who copies, not what).
TEST_F(DotTest, Bf16CopiesSplitOverThreadsGiveTheSameBits) {
  auto module = ParseHloModule(DotModule(
      "bf16[3,201,157]{1,2,0}", "bf16[3,157,299]{2,1,0}", "bf16[3,201,299]{1,2,0}",
      "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
      "rhs_contracting_dims={1}"));
  ASSERT_TRUE(module.ok()) << module.status();
  const Instruction& root = *(*module)->entry()->root();
  absl::StatusOr<DotPlan> plan = PlanDot(root);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_GE(plan->copies.size(), 3u) << plan->ToString();
  std::mt19937_64 rng(7);
  Literal a(root.operand(0)->shape()), b(root.operand(1)->shape());
  testing::FillRandom(&a, rng);
  testing::FillRandom(&b, rng);
  std::vector<uint8_t> scratch(plan->scratch_bytes);
  std::vector<uint8_t> first;
  for (int threads = 1; threads <= 3; ++threads) {
    Literal out(root.shape());
    RunDot(*plan, a.data().data(), b.data().data(), out.data().data(), scratch.data(), threads);
    std::vector<uint8_t> bytes(out.data().begin(), out.data().end());
    if (threads == 1) first = bytes;
    EXPECT_EQ(bytes, first) << "threads " << threads;
  }
}

// PlanDotThreads with the dots' limits (kDotSplitLimits), then RunDot on 2
// and 3 threads: every form gives the bits of the single-threaded, unsplit
// call (bands of rows or columns keep each element's sum over the full K in
// OpenBLAS's order; a batch split makes the same calls), and the plan is
// split as expected at 2 threads ("" for forms that must stay whole). The
// operands are random in [-1, 1]: a different summation order would show.
TEST_F(DotTest, SplitOverThreadsGivesTheSingleThreadBits) {
  struct Form {
    std::string lhs, rhs, out, dims;
    std::string split;  // expected in the 2-thread plan; "" for none
  };
  const std::string mk = "lhs_contracting_dims={1}, rhs_contracting_dims={0}";
  const std::string batch =
      "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
      "rhs_contracting_dims={1}";
  const std::string axpy_split = AxpyGemvAvailable() ? "split=rows bands=2" : "";
  const std::vector<Form> forms = {
      {"f32[130,140]", "f32[140,120]", "f32[130,120]", mk, "split=rows bands=2"},
      {"f32[160,100]{0,1}", "f32[160,150]", "f32[100,150]",
       "lhs_contracting_dims={0}, rhs_contracting_dims={0}", "split=columns bands=2"},
      {"f32[120,140]", "f32[140,130]{0,1}", "f32[120,130]{0,1}", mk, "split=columns bands=2"},
      {"f32[150,160]", "f32[100,160]", "f32[150,100]{0,1}",
       "lhs_contracting_dims={1}, rhs_contracting_dims={1}", "split=rows bands=2"},
      {"f64[130,140]", "f64[140,120]", "f64[130,120]", mk, "split=rows bands=2"},
      {"c64[100,120]", "c64[120,200]", "c64[100,200]", mk, "split=columns bands=2"},
      {"bf16[130,140]", "bf16[140,120]", "bf16[130,120]", mk, "split=rows bands=2"},
      {"f16[130,140]", "f16[140,120]{0,1}", "f16[130,120]", mk, "split=rows bands=2"},
      {"f32[4,128,64]", "f32[4,64,96]", "f32[4,128,96]", batch, "split=batch"},
      {"f32[4,64,32]", "f32[4,32,48]", "f32[4,64,48]", batch, ""},  // too little work
      // A batch that pays for a split keeps its GEMMs whole, so that one
      // thread makes the same calls (3 indices on 2 threads: uneven, still).
      {"f32[3,128,100]", "f32[3,100,160]", "f32[3,128,160]", batch, "split=batch"},
      {"f32[8,500,300]", "f32[8,300]", "f32[8,500]",
       "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
       "rhs_contracting_dims={1}",
       "split=batch"},
      // Gemvs of 2^19 elements or more, in bands of output elements (f32,
      // f64, the matrix as either operand): where the outputs are dots over
      // contiguous rows (cblas calls), and in the axpy form (outputs along
      // the contiguous dimension) where AxpyGemv runs it (elsewhere
      // OpenBLAS's axpy form stays whole); gemvs below 2^19 stay whole.
      {"f32[2050,256]", "f32[256]", "f32[2050]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}",
       "split=rows bands=2"},
      {"f64[700]", "f64[777,700]", "f64[777]", "lhs_contracting_dims={0}, rhs_contracting_dims={1}",
       "split=rows bands=2"},
      {"f32[1000]", "f32[1000,1000]", "f32[1000]", "lhs_contracting_dims={0}, rhs_contracting_dims={0}",
       axpy_split},
      {"f64[777,700]{0,1}", "f64[700]", "f64[777]",
       "lhs_contracting_dims={1}, rhs_contracting_dims={0}", axpy_split},
      {"f32[2049]", "f32[2049,777]", "f32[777]",
       "lhs_contracting_dims={0}, rhs_contracting_dims={0}", axpy_split},
      {"f32[4096]", "f32[4096,256]", "f32[256]",
       "lhs_contracting_dims={0}, rhs_contracting_dims={0}", axpy_split},
      {"f32[16]", "f32[16,100001]", "f32[100001]",
       "lhs_contracting_dims={0}, rhs_contracting_dims={0}", axpy_split},
      {"f64[3001,301]{0,1}", "f64[301]", "f64[3001]",
       "lhs_contracting_dims={1}, rhs_contracting_dims={0}", axpy_split},
      {"bf16[1024]", "bf16[1024,600]", "bf16[600]",
       "lhs_contracting_dims={0}, rhs_contracting_dims={0}", axpy_split},
      {"f32[500]", "f32[500,1000]", "f32[1000]",
       "lhs_contracting_dims={0}, rhs_contracting_dims={0}", ""},  // below 2^19
      {"f32[1000,500]", "f32[500]", "f32[1000]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}",
       ""},
      {"f32[1,5000]", "f32[5000,1]", "f32[1,1]", mk, ""},        // one dot product
      {"f32[20,30]", "f32[30,40]", "f32[20,40]", mk, ""},        // too small to split
      {"s32[40,50]", "s32[50,30]", "s32[40,30]", mk, ""},        // the strided loop
      {"f32[0,140]", "f32[140,120]", "f32[0,120]", mk, ""},      // no elements
      // The K loop (contracting dims split by a free dim) in bands.
      {"f32[2,2,130,160]", "f32[2,2,120,160]", "f32[130,120]",
       "lhs_contracting_dims={0,1,3}, rhs_contracting_dims={0,1,3}", "split=rows bands=2"},
  };
  std::mt19937_64 rng(11);
  for (const Form& f : forms) {
    SCOPED_TRACE(f.lhs + " x " + f.rhs + " -> " + f.out);
    auto module = ParseHloModule(DotModule(f.lhs, f.rhs, f.out, f.dims));
    ASSERT_TRUE(module.ok()) << module.status();
    const Instruction& root = *(*module)->entry()->root();
    absl::StatusOr<DotPlan> plan = PlanDot(root);
    ASSERT_TRUE(plan.ok()) << plan.status();
    Literal a(root.operand(0)->shape()), b(root.operand(1)->shape());
    testing::FillRandom(&a, rng);
    testing::FillRandom(&b, rng);
    std::vector<uint8_t> scratch(plan->scratch_bytes);
    Literal single(root.shape());
    DotPlan one = *plan;
    PlanDotThreads(one, 1);
    RunDot(one, a.data().data(), b.data().data(), single.data().data(), scratch.data());
    for (int threads : {2, 3}) {
      DotPlan split = *plan;
      PlanDotThreads(split, threads);
      const std::string text = split.ToString();
      if (threads == 2) {
        if (f.split.empty()) {
          EXPECT_EQ(text.find("split="), std::string::npos) << text;
        } else {
          EXPECT_NE(text.find(f.split), std::string::npos) << text;
        }
      }
      EXPECT_EQ(split.blas_threads, 1) << text;
      Literal out(root.shape());
      {
        ScopedBlasThreads blas(split.blas_threads);
        RunDot(split, a.data().data(), b.data().data(), out.data().data(), scratch.data(),
               threads);
      }
      EXPECT_TRUE(std::equal(out.data().begin(), out.data().end(), single.data().begin(),
                             single.data().end()))
          << "threads " << threads << ": " << text;
    }
  }
}

// Dots split with no floor on a band's size (bands of one row or column, M
// or N smaller than the threads, batches that do not divide, size-0 and
// size-1 dimensions, transposed layouts) against the evaluator.
TEST_F(DotTest, SmallSplitsMatchTheEvaluator) {
  const std::string mk = "lhs_contracting_dims={1}, rhs_contracting_dims={0}";
  const std::string batch =
      "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
      "rhs_contracting_dims={1}";
  struct Form {
    std::string lhs, rhs, out, dims;
    int64_t k;
  };
  const std::vector<Form> forms = {
      {"f32[2,7]", "f32[7,9]", "f32[2,9]", mk, 7},     // M = 2 < 3 threads: bands of N
      {"f32[5,7]", "f32[7,1]{0,1}", "f32[5,1]", mk, 7},
      {"f32[3,4]", "f32[4,2]", "f32[3,2]", mk, 4},
      {"f32[1,6]", "f32[6,5]", "f32[1,5]", mk, 6},
      {"f64[9,3]{0,1}", "f64[3,4]", "f64[9,4]{0,1}", mk, 3},
      {"c64[7,5]", "c64[5,3]{0,1}", "c64[7,3]", mk, 5},
      {"bf16[6,16]", "bf16[16,5]", "bf16[6,5]", mk, 16},
      {"f16[5,8]", "f16[8,7]", "f16[5,7]{0,1}", mk, 8},
      {"s32[5,6]", "s32[6,4]", "s32[5,4]", mk, 6},
      {"f32[3,5,4]", "f32[3,4,6]", "f32[3,5,6]", batch, 4},   // 3 batches on 2 threads
      {"f32[1,5,4]", "f32[1,4,6]", "f32[1,5,6]", batch, 4},
      {"f32[5,1,4]", "f32[5,4,1]", "f32[5,1,1]", batch, 4},   // a batch of dot products
      {"f32[2,0,4]", "f32[2,4,6]", "f32[2,0,6]", batch, 4},
      {"f32[0,5,4]", "f32[0,4,6]", "f32[0,5,6]", batch, 4},
      {"f32[4,3]", "f32[0,3]", "f32[4,0]", "lhs_contracting_dims={1}, rhs_contracting_dims={1}", 3},
  };
  uint64_t seed = 100;
  for (const Form& f : forms) {
    for (int threads : {2, 3}) {
      SCOPED_TRACE(f.lhs + " x " + f.rhs + " -> " + f.out + " threads " +
                   std::to_string(threads));
      auto r = RunCase(DotModule(f.lhs, f.rhs, f.out, f.dims), ++seed, f.k, threads);
      EXPECT_TRUE(r.ok) << r.plan;
    }
  }
}

// Gemvs in the axpy form (outputs along the matrix's contiguous dimension:
// a row-major matrix contracted over its rows, a column-major one over its
// columns), which AxpyGemv runs where the CPU has it, against the
// evaluator: odd sizes around the kernels' vectors and row blocks, size-1
// and size-0 dimensions, f32, f64 and bf16 (on f32 images), large ones
// summed in two halves of their rows, on 1 to 3 threads (bands with no
// floor on their size).
TEST_F(DotTest, AxpyFormGemvsMatchTheEvaluator) {
  const std::string k0 = "lhs_contracting_dims={0}, rhs_contracting_dims={0}";
  const std::string k1 = "lhs_contracting_dims={1}, rhs_contracting_dims={0}";
  struct Form {
    std::string lhs, rhs, out, dims;
    int64_t k;
  };
  const std::vector<Form> forms = {
      {"f32[37]", "f32[37,53]", "f32[53]", k0, 37},
      {"f32[8]", "f32[8,16]", "f32[16]", k0, 8},
      {"f32[9]", "f32[9,17]", "f32[17]", k0, 9},
      {"f32[1]", "f32[1,300]", "f32[300]", k0, 1},
      {"f32[130]", "f32[130,1]", "f32[1]", k0, 130},
      {"f32[33]", "f32[33,129]", "f32[129]", k0, 33},
      {"f32[300]", "f32[300,2050]", "f32[2050]", k0, 300},
      {"f64[37]", "f64[37,53]", "f64[53]", k0, 37},
      {"f64[17]", "f64[17,2049]", "f64[2049]", k0, 17},
      {"f32[9,130]{0,1}", "f32[130]", "f32[9]", k1, 130},     // column-major, not transposed
      {"f64[67,45]{0,1}", "f64[45]", "f64[67]", k1, 45},
      {"f32[70]", "f32[70,40]{1,0}", "f32[40]", k0, 70},
      {"f32[70]", "f32[40,70]{0,1}", "f32[40]",
       "lhs_contracting_dims={0}, rhs_contracting_dims={1}", 70},  // the transposed layout
      {"bf16[64]", "bf16[64,100]", "bf16[100]", k0, 64},
      // 2^19 elements or more with at least as many rows as columns: the
      // rows in two halves (DotPlan::axpy_half_rows), on two threads when
      // split.
      {"f32[1100]", "f32[1100,500]", "f32[500]", k0, 1100},
      {"f64[1037]", "f64[1037,513]", "f64[513]", k0, 1037},
      {"f32[700,750]{0,1}", "f32[750]", "f32[700]", k1, 750},
      {"bf16[1030]", "bf16[1030,520]", "bf16[520]", k0, 1030},
      {"f32[0]", "f32[0,40]", "f32[40]", k0, 0},
      {"f32[40]", "f32[40,0]", "f32[0]", k0, 40},
  };
  uint64_t seed = 300;
  for (const Form& f : forms) {
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(f.lhs + " x " + f.rhs + " -> " + f.out + " threads " +
                   std::to_string(threads));
      auto r = RunCase(DotModule(f.lhs, f.rhs, f.out, f.dims), ++seed, f.k, threads);
      EXPECT_TRUE(r.ok) << r.plan;
    }
  }
}

// NaN and infinities in the axpy form reach exactly the outputs whose sums
// contain them, whole and in bands (2 and 3 threads).
TEST_F(DotTest, AxpyFormGemvPropagatesNanAndInfinity) {
  DotDimensionNumbers d;
  d.lhs_contracting_dimensions = {0};
  d.rhs_contracting_dimensions = {0};
  const int64_t k = 41, n = 1203;
  for (ElementType t : {ElementType::kF32, ElementType::kF64}) {
    absl::StatusOr<DotPlan> plan =
        PlanDot(Shape::Array(t, {k}), Shape::Array(t, {k, n}), Shape::Array(t, {n}), d);
    ASSERT_TRUE(plan.ok()) << plan.status();
    Literal x(Shape::Array(t, {k})), a(Shape::Array(t, {k, n}));
    std::mt19937_64 rng(9);
    testing::FillRandom(&x, rng);
    testing::FillRandom(&a, rng);
    const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
    a.SetDouble({3, 5}, nan);
    a.SetDouble({7, 1200}, inf);
    a.SetDouble({8, 600}, -inf);
    for (int threads : {1, 2, 3}) {
      DotPlan split = *plan;
      PlanDotThreads(split, threads, DotSplitLimits{1, 0, 0});
      Literal y(Shape::Array(t, {n}));
      std::vector<uint8_t> scratch(split.scratch_bytes);
      RunDot(split, x.data().data(), a.data().data(), y.data().data(), scratch.data(), threads);
      SCOPED_TRACE(split.ToString());
      for (int64_t j = 0; j < n; ++j) {
        const double v = y.GetDouble({j});
        if (j == 5) {
          EXPECT_TRUE(std::isnan(v));
        } else if (j == 1200 || j == 600) {
          EXPECT_TRUE(std::isinf(v)) << j;
        } else {
          EXPECT_TRUE(std::isfinite(v)) << j;
        }
      }
    }
  }
}

TEST_F(DotTest, PlanRejectsBadShapes) {
  Shape a = Shape::Array(ElementType::kF32, {2, 3});
  Shape b = Shape::Array(ElementType::kF32, {4, 5});
  DotDimensionNumbers d;
  d.lhs_contracting_dimensions = {1};
  d.rhs_contracting_dimensions = {0};
  EXPECT_FALSE(PlanDot(a, b, Shape::Array(ElementType::kF32, {2, 5}), d).ok());
  d.lhs_contracting_dimensions = {7};
  EXPECT_FALSE(PlanDot(a, a, Shape::Array(ElementType::kF32, {2, 2}), d).ok());
}

TEST_F(DotTest, ThreadsSetting) {
  SetBlasThreads(2);
  EXPECT_GE(BlasThreads(), 1);
  SetBlasThreads(1);
  EXPECT_EQ(BlasThreads(), 1);
}

}  // namespace
}  // namespace xjit::runtime::blas
