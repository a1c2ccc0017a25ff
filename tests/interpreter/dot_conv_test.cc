// Dot, convolution, fft, cholesky, triangular-solve and batch-norm through the
// whole evaluator. Expected values are the seeds' worked examples or hand
// calculations written next to each case.
#include <cstdio>
#include <string>

#include "gtest/gtest.h"
#include "tests/interpreter/ops_test_util.h"

namespace xjit::testing {
namespace {

Literal MustRun(absl::string_view text) {
  auto result = RunHlo(text);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? std::move(*result) : Literal();
}

TEST(DotTest, SeedContractingExample) {
  Literal r = MustRun(R"(
HloModule m
ENTRY e {
  a = f32[2,3] constant({{1,2,3},{4,5,6}})
  b = f32[2,3] constant({{1,1,1},{2,2,2}})
  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={1}
})");
  EXPECT_TRUE(LiteralsEqual(r, Lit("f32[2,2] {{6,12},{15,30}}")));
}

TEST(DotTest, SeedBatchExample) {
  Literal r = MustRun(R"(
HloModule m
ENTRY e {
  a = f32[2,2,2] constant({{{1,2},{3,4}},{{5,6},{7,8}}})
  b = f32[2,2,2] constant({{{1,0},{0,1}},{{1,0},{0,1}}})
  ROOT d = f32[2,2,2] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0},
      lhs_contracting_dims={2}, rhs_contracting_dims={1}
})");
  EXPECT_TRUE(LiteralsEqual(r, Lit("f32[2,2,2] {{{1,2},{3,4}},{{5,6},{7,8}}}")));
}

TEST(DotTest, ContractingDimsInAnyOrder) {
  // sum_ij a[0,i,j] * b[j,i] = 1*5 + 2*7 + 3*6 + 4*8 = 69.
  Literal r = MustRun(R"(
HloModule m
ENTRY e {
  a = s32[1,2,2] constant({{{1,2},{3,4}}})
  b = s32[2,2] constant({{5,6},{7,8}})
  ROOT d = s32[1] dot(a, b), lhs_contracting_dims={1,2}, rhs_contracting_dims={1,0}
})");
  EXPECT_TRUE(LiteralsEqual(r, Lit("s32[1]{0} {69}")));
}

TEST(DotTest, ResultDimOrderBatchLhsRhs) {
  // lhs [k=2, b=2, m=1], rhs [n=1, b=2, k=2]: result [b, m, n].
  // b=0: 1*10 + 3*30 = 100; b=1: 2*20 + 4*40 = 200.
  Literal r = MustRun(R"(
HloModule m
ENTRY e {
  a = f32[2,2,1] constant({{{1},{2}},{{3},{4}}})
  b = f32[1,2,2] constant({{{10,30},{20,40}}})
  ROOT d = f32[2,1,1] dot(a, b), lhs_batch_dims={1}, rhs_batch_dims={1},
      lhs_contracting_dims={0}, rhs_contracting_dims={2}
})");
  EXPECT_TRUE(LiteralsEqual(r, Lit("f32[2,1,1] {{{100}},{{200}}}")));
}

TEST(DotTest, IntegerWrapsAndU64IsExact) {
  Literal r = MustRun(R"(
HloModule m
ENTRY e {
  a = s32[1,2] constant({{2147483647, 1}})
  b = s32[2,1] constant({{2},{0}})
  ROOT d = s32[1,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  EXPECT_TRUE(LiteralsEqual(r, Lit("s32[1,1] {{-2}}")));
  Literal u = MustRun(R"(
HloModule m
ENTRY e {
  a = u64[1,2] constant({{18446744073709551615, 3}})
  b = u64[2,1] constant({{1},{1}})
  ROOT d = u64[1,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  // (2^64 - 1) + 3 wraps to 2.
  EXPECT_TRUE(LiteralsEqual(u, Lit("u64[1,1] {{2}}")));
}

TEST(DotTest, MixedIntegerOperands) {
  // s8 x s8 -> s32: 100 * 100 + 100 * 100 = 20000 (no s8 overflow).
  Literal r = MustRun(R"(
HloModule m
ENTRY e {
  a = s8[1,2] constant({{100, -100}})
  b = s8[2] constant({100, -100})
  ROOT d = s32[1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  EXPECT_TRUE(LiteralsEqual(r, Lit("s32[1]{0} {20000}")));
}

TEST(DotTest, Bf16RoundsOnce) {
  // 1 + 2^-8 + 2^-8 = 1.0078125 is a bf16 value; rounding after each add
  // would give 1 (1 + 2^-8 is a tie that rounds to even).
  Literal r = MustRun(R"(
HloModule m
ENTRY e {
  a = bf16[3] constant({1, 0.00390625, 0.00390625})
  b = bf16[3] constant({1, 1, 1})
  ROOT d = bf16[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})");
  EXPECT_TRUE(LiteralsEqual(r, Lit("bf16[] 1.0078125")));
}

TEST(DotTest, Complex) {
  // (1+2i)(3+4i) + (i)(i) = (-5+10i) + (-1) = -6+10i.
  Literal r = MustRun(R"(
HloModule m
ENTRY e {
  a = c64[2] constant({(1,2), (0,1)})
  b = c64[2] constant({(3,4), (0,1)})
  ROOT d = c64[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})");
  EXPECT_TRUE(LiteralsEqual(r, Lit("c64[] (-6, 10)")));
}

TEST(DotTest, OuterProduct) {
  Literal r = MustRun(R"(
HloModule m
ENTRY e {
  a = f32[2] constant({1, 2})
  b = f32[3] constant({1, 10, 100})
  ROOT d = f32[2,3] dot(a, b)
})");
  EXPECT_TRUE(LiteralsEqual(r, Lit("f32[2,3] {{1,10,100},{2,20,200}}")));
}

// Convolution: input x = {1,2,3,4,5} (bf0), kernel {1,10} (oi0).
constexpr char kConv1d[] = R"(
HloModule m
ENTRY e {
  x = f32[1,1,5] constant({{{1,2,3,4,5}}})
  k = f32[1,1,2] constant({{{1,10}}})
  ROOT c = f32[1,1,%d] convolution(x, k), window={%s}, dim_labels=bf0_oi0->bf0
})";

Literal Conv1d(int out, const char* window) {
  char text[1024];
  std::snprintf(text, sizeof(text), kConv1d, out, window);
  return MustRun(text);
}

TEST(ConvolutionTest, Valid) {
  // x[i] + 10 x[i+1].
  EXPECT_TRUE(LiteralsEqual(Conv1d(4, "size=2"), Lit("f32[1,1,4] {{{21,32,43,54}}}")));
}

TEST(ConvolutionTest, PaddingStrideNegativePadding) {
  EXPECT_TRUE(LiteralsEqual(Conv1d(6, "size=2 pad=1_1"), Lit("f32[1,1,6] {{{10,21,32,43,54,5}}}")));
  EXPECT_TRUE(LiteralsEqual(Conv1d(2, "size=2 stride=2"), Lit("f32[1,1,2] {{{21,43}}}")));
  // pad=-1_0 drops x[0]: windows over {2,3,4,5}.
  EXPECT_TRUE(LiteralsEqual(Conv1d(3, "size=2 pad=-1_0"), Lit("f32[1,1,3] {{{32,43,54}}}")));
}

TEST(ConvolutionTest, LhsAndRhsDilation) {
  // Base dilated: {1,0,2,0,3,0,4,0,5}.
  EXPECT_TRUE(LiteralsEqual(Conv1d(8, "size=2 lhs_dilate=2"),
                            Lit("f32[1,1,8] {{{1,20,2,30,3,40,4,50}}}")));
  // Window dilated: x[i] + 10 x[i+2].
  EXPECT_TRUE(LiteralsEqual(Conv1d(3, "size=2 rhs_dilate=2"), Lit("f32[1,1,3] {{{31,42,53}}}")));
}

TEST(ConvolutionTest, WindowReversal) {
  // Reversed kernel {10,1}: 10 x[i] + x[i+1].
  EXPECT_TRUE(LiteralsEqual(Conv1d(4, "size=2 rhs_reversal=1"),
                            Lit("f32[1,1,4] {{{12,23,34,45}}}")));
}

TEST(ConvolutionTest, Nhwc2d) {
  Literal r = MustRun(R"(
HloModule m
ENTRY e {
  x = f32[1,2,3,1] constant({{{{1},{2},{3}},{{4},{5},{6}}}})
  k = f32[2,2,1,1] constant({{{{1}},{{1}}},{{{1}},{{1}}}})
  ROOT c = f32[1,1,2,1] convolution(x, k), window={size=2x2}, dim_labels=b01f_01io->b01f
})");
  // 1+2+4+5 = 12, 2+3+5+6 = 16.
  EXPECT_TRUE(LiteralsEqual(r, Lit("f32[1,1,2,1] {{{{12},{16}}}}")));
}

TEST(ConvolutionTest, FeatureGroupCount) {
  // Input features {1,2} and {3,4}; output feature 0 = group 0 * 10,
  // output feature 1 = group 1 * 100.
  Literal r = MustRun(R"(
HloModule m
ENTRY e {
  x = f32[1,2,2] constant({{{1,2},{3,4}}})
  k = f32[2,1,1] constant({{{10}},{{100}}})
  ROOT c = f32[1,2,2] convolution(x, k), window={size=1}, dim_labels=bf0_oi0->bf0,
      feature_group_count=2
})");
  EXPECT_TRUE(LiteralsEqual(r, Lit("f32[1,2,2] {{{10,20},{300,400}}}")));
}

TEST(ConvolutionTest, BatchGroupCount) {
  // Batches {1,2} and {3,4}: output feature 0 uses batch group 0, feature 1
  // batch group 1.
  Literal r = MustRun(R"(
HloModule m
ENTRY e {
  x = f32[2,1,2] constant({{{1,2}},{{3,4}}})
  k = f32[2,1,1] constant({{{10}},{{100}}})
  ROOT c = f32[1,2,2] convolution(x, k), window={size=1}, dim_labels=bf0_oi0->bf0,
      batch_group_count=2
})");
  EXPECT_TRUE(LiteralsEqual(r, Lit("f32[1,2,2] {{{10,20},{300,400}}}")));
}

TEST(ConvolutionTest, IntegerConvolution) {
  Literal r = MustRun(R"(
HloModule m
ENTRY e {
  x = s32[1,1,3] constant({{{1,2,3}}})
  k = s32[1,1,2] constant({{{-1,1}}})
  ROOT c = s32[1,1,2] convolution(x, k), window={size=2}, dim_labels=bf0_oi0->bf0
})");
  EXPECT_TRUE(LiteralsEqual(r, Lit("s32[1,1,2] {{{1,1}}}")));
}

TEST(FftTest, ForwardInverseAndReal) {
  Literal f = MustRun(R"(
HloModule m
ENTRY e {
  x = c64[4] constant({(1,0), (0,0), (0,0), (0,0)})
  ROOT f = c64[4] fft(x), fft_type=FFT, fft_length={4}
})");
  EXPECT_TRUE(LiteralsNear(f, Lit("c64[4]{0} {(1,0), (1,0), (1,0), (1,0)}"), 1e-6));
  Literal g = MustRun(R"(
HloModule m
ENTRY e {
  x = c64[4] constant({(1,0), (2,0), (3,0), (4,0)})
  ROOT f = c64[4] fft(x), fft_type=FFT, fft_length={4}
})");
  // X[k] = sum x[t] e^{-i pi k t / 2}: 10, -2+2i, -2, -2-2i.
  EXPECT_TRUE(LiteralsNear(g, Lit("c64[4]{0} {(10,0), (-2,2), (-2,0), (-2,-2)}"), 1e-6));
  Literal inv = MustRun(R"(
HloModule m
ENTRY e {
  x = c64[4] constant({(10,0), (-2,2), (-2,0), (-2,-2)})
  ROOT f = c64[4] fft(x), fft_type=IFFT, fft_length={4}
})");
  EXPECT_TRUE(LiteralsNear(inv, Lit("c64[4]{0} {(1,0), (2,0), (3,0), (4,0)}"), 1e-6));
  Literal rf = MustRun(R"(
HloModule m
ENTRY e {
  x = f32[4] constant({1, 2, 3, 4})
  ROOT f = c64[3] fft(x), fft_type=RFFT, fft_length={4}
})");
  EXPECT_TRUE(LiteralsNear(rf, Lit("c64[3]{0} {(10,0), (-2,2), (-2,0)}"), 1e-6));
  Literal irf = MustRun(R"(
HloModule m
ENTRY e {
  x = c64[3] constant({(10,0), (-2,2), (-2,0)})
  ROOT f = f32[4] fft(x), fft_type=IRFFT, fft_length={4}
})");
  EXPECT_TRUE(LiteralsNear(irf, Lit("f32[4]{0} {1, 2, 3, 4}"), 1e-6));
}

TEST(FftTest, TwoDimensionalAndOddIrfft) {
  // 2-D DFT of {{1,2},{3,4}}: {{10,-2},{-4,0}}.
  Literal f = MustRun(R"(
HloModule m
ENTRY e {
  x = c64[2,2] constant({{(1,0), (2,0)}, {(3,0), (4,0)}})
  ROOT f = c64[2,2] fft(x), fft_type=FFT, fft_length={2,2}
})");
  EXPECT_TRUE(LiteralsNear(f, Lit("c64[2,2] {{(10,0), (-2,0)}, {(-4,0), (0,0)}}"), 1e-6));
  // RFFT then IRFFT of length 3 and a batch dimension.
  Literal r = MustRun(R"(
HloModule m
ENTRY e {
  x = f32[2,3] constant({{1,2,3},{0,1,0}})
  f = c64[2,2] fft(x), fft_type=RFFT, fft_length={3}
  ROOT g = f32[2,3] fft(f), fft_type=IRFFT, fft_length={3}
})");
  EXPECT_TRUE(LiteralsNear(r, Lit("f32[2,3] {{1,2,3},{0,1,0}}"), 1e-6));
}

TEST(CholeskyTest, LowerUpperAndNotPositiveDefinite) {
  // A = L L^T with L = {{2,0,0},{6,1,0},{-8,5,3}}; the unread triangle holds
  // junk (99) that must not matter.
  Literal lower = MustRun(R"(
HloModule m
ENTRY e {
  a = f32[3,3] constant({{4,99,99},{12,37,99},{-16,-43,98}})
  ROOT c = f32[3,3] cholesky(a), lower=true
})");
  EXPECT_TRUE(LiteralsNear(lower, Lit("f32[3,3] {{2,0,0},{6,1,0},{-8,5,3}}"), 1e-6));
  Literal upper = MustRun(R"(
HloModule m
ENTRY e {
  a = f32[3,3] constant({{4,12,-16},{99,37,-43},{99,99,98}})
  ROOT c = f32[3,3] cholesky(a), lower=false
})");
  EXPECT_TRUE(LiteralsNear(upper, Lit("f32[3,3] {{2,6,-8},{0,1,5},{0,0,3}}"), 1e-6));
  Literal batch = MustRun(R"(
HloModule m
ENTRY e {
  a = f32[2,2,2] constant({{{1,2},{2,1}}, {{9,0},{3,5}}})
  ROOT c = f32[2,2,2] cholesky(a), lower=true
})");
  // First matrix is indefinite (all NaN); second: {{3,0},{1,2}}.
  EXPECT_TRUE(LiteralsNear(batch, Lit("f32[2,2,2] {{{nan,nan},{nan,nan}}, {{3,0},{1,2}}}"), 1e-6));
}

TEST(CholeskyTest, ComplexHermitian) {
  // A = {{4, 2-2i},{2+2i, 3}} = L L^H with L = {{2,0},{1+i, 1}}.
  Literal r = MustRun(R"(
HloModule m
ENTRY e {
  a = c64[2,2] constant({{(4,0), (0,0)}, {(2,2), (3,0)}})
  ROOT c = c64[2,2] cholesky(a), lower=true
})");
  EXPECT_TRUE(LiteralsNear(r, Lit("c64[2,2] {{(2,0), (0,0)}, {(1,1), (1,0)}}"), 1e-6));
}

constexpr char kSolve[] = R"(
HloModule m
ENTRY e {
  a = f32[2,2] constant(%s)
  b = f32[%s] constant(%s)
  ROOT x = f32[%s] triangular-solve(a, b), %s
})";

Literal Solve(const char* a, const char* b_shape, const char* b, const char* attrs) {
  char text[1024];
  std::snprintf(text, sizeof(text), kSolve, a, b_shape, b, b_shape, attrs);
  return MustRun(text);
}

TEST(TriangularSolveTest, AllForms) {
  // Lower a = {{2,0},{3,4}}: 2 x0 = 2, 3 x0 + 4 x1 = 11 -> {1, 2}.
  EXPECT_TRUE(LiteralsNear(
      Solve("{{2,99},{3,4}}", "2,1", "{{2},{11}}",
            "left_side=true, lower=true, unit_diagonal=false, transpose_a=NO_TRANSPOSE"),
      Lit("f32[2,1] {{1},{2}}"), 1e-6));
  // a^T = {{2,3},{0,4}}: x1 = 11/4, x0 = (2 - 3 * 2.75) / 2 = -3.125.
  EXPECT_TRUE(LiteralsNear(
      Solve("{{2,99},{3,4}}", "2,1", "{{2},{11}}",
            "left_side=true, lower=true, unit_diagonal=false, transpose_a=TRANSPOSE"),
      Lit("f32[2,1] {{-3.125},{2.75}}"), 1e-6));
  // x a = b: 2 x0 + 3 x1 = 8, 4 x1 = 8 -> {1, 2}.
  EXPECT_TRUE(LiteralsNear(
      Solve("{{2,99},{3,4}}", "1,2", "{{8,8}}",
            "left_side=false, lower=true, unit_diagonal=false, transpose_a=NO_TRANSPOSE"),
      Lit("f32[1,2] {{1,2}}"), 1e-6));
  // Upper a = {{2,3},{0,4}} read from the upper triangle, unit diagonal:
  // x1 = 11, x0 = 2 - 3 * 11 = -31.
  EXPECT_TRUE(LiteralsNear(
      Solve("{{2,3},{99,4}}", "2,1", "{{2},{11}}",
            "left_side=true, lower=false, unit_diagonal=true, transpose_a=NO_TRANSPOSE"),
      Lit("f32[2,1] {{-31},{11}}"), 1e-6));
  // x a^T = b with lower a: a^T = {{2,3},{0,4}}: 2 x0 = 8 -> 4; 3 x0 + 4 x1 = 8 -> -1.
  EXPECT_TRUE(LiteralsNear(
      Solve("{{2,99},{3,4}}", "1,2", "{{8,8}}",
            "left_side=false, lower=true, unit_diagonal=false, transpose_a=TRANSPOSE"),
      Lit("f32[1,2] {{4,-1}}"), 1e-6));
}

TEST(TriangularSolveTest, AdjointComplex) {
  // a lower {{2,0},{i,1}}; a^H = {{2,-i},{0,1}}: x1 = 1, 2 x0 - i = 2 -> x0 = 1 + 0.5i.
  Literal r = MustRun(R"(
HloModule m
ENTRY e {
  a = c64[2,2] constant({{(2,0), (0,0)}, {(0,1), (1,0)}})
  b = c64[2,1] constant({{(2,0)}, {(1,0)}})
  ROOT x = c64[2,1] triangular-solve(a, b), left_side=true, lower=true, unit_diagonal=false,
      transpose_a=ADJOINT
})");
  EXPECT_TRUE(LiteralsNear(r, Lit("c64[2,1] {{(1,0.5)}, {(1,0)}}"), 1e-6));
}

TEST(BatchNormTest, TrainingAndInference) {
  // Feature 0: {1,3} -> mean 2, var 1; feature 1: {2,4} -> mean 3, var 1.
  // y = scale * (x - mean) / 1 + offset.
  Literal t = MustRun(R"(
HloModule m
ENTRY e {
  x = f32[2,2] constant({{1,2},{3,4}})
  s = f32[2] constant({2, 3})
  o = f32[2] constant({10, 20})
  ROOT b = (f32[2,2], f32[2], f32[2]) batch-norm-training(x, s, o), epsilon=0, feature_index=1
})");
  EXPECT_TRUE(LiteralsNear(t.element(0), Lit("f32[2,2] {{8,17},{12,23}}"), 1e-6));
  EXPECT_TRUE(LiteralsNear(t.element(1), Lit("f32[2]{0} {2,3}"), 1e-6));
  EXPECT_TRUE(LiteralsNear(t.element(2), Lit("f32[2]{0} {1,1}"), 1e-6));
  Literal i = MustRun(R"(
HloModule m
ENTRY e {
  x = f32[2,2] constant({{1,2},{3,4}})
  s = f32[2] constant({2, 3})
  o = f32[2] constant({10, 20})
  m = f32[2] constant({2, 3})
  v = f32[2] constant({0, 3})
  ROOT b = f32[2,2] batch-norm-inference(x, s, o, m, v), epsilon=1, feature_index=1
})");
  // sqrt(var + 1) = {1, 2}: {{2*-1+10, 3*-1/2+20}, {2*1+10, 3*1/2+20}}.
  EXPECT_TRUE(LiteralsNear(i, Lit("f32[2,2] {{8,18.5},{12,21.5}}"), 1e-6));
}

TEST(BatchNormTest, Grad) {
  // One feature, x = {1,3}, mean 2, var 3, eps 1 (sqrt 2), scale 2, dy = {1,2}:
  // sum dy = 3, sum dy (x - mean) = 1, d = 1.5, c = 1 / (2 * 4) = 0.125,
  // dx = 2/2 * (dy - 1.5 - 0.125 (x - mean)) = {-0.375, 0.375},
  // dscale = 1 / 2, doffset = 3.
  Literal g = MustRun(R"(
HloModule m
ENTRY e {
  x = f32[2,1] constant({{1},{3}})
  s = f32[1] constant({2})
  m = f32[1] constant({2})
  v = f32[1] constant({3})
  dy = f32[2,1] constant({{1},{2}})
  ROOT b = (f32[2,1], f32[1], f32[1]) batch-norm-grad(x, s, m, v, dy), epsilon=1, feature_index=1
})");
  EXPECT_TRUE(LiteralsNear(g.element(0), Lit("f32[2,1] {{-0.375},{0.375}}"), 1e-6));
  EXPECT_TRUE(LiteralsNear(g.element(1), Lit("f32[1]{0} {0.5}"), 1e-6));
  EXPECT_TRUE(LiteralsNear(g.element(2), Lit("f32[1]{0} {3}"), 1e-6));
}

}  // namespace
}  // namespace xjit::testing
