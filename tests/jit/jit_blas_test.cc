// Dot and convolution in compiled executables: library-call steps into
// runtime/blas, against the evaluator. Floats match within a tolerance that
// grows with the contraction length K (BLAS sums in another order than the
// evaluator): |actual - expected| <= 4 K^2 eps_acc (inputs lie in [-1, 1], so
// K bounds the sum of |terms|) plus one ulp of the result type relative to
// the expected value. Integers match exactly. Also: the report lists library
// calls (not interpreted steps), scratch is part of the temporary arena,
// buffers that are not naturally aligned are staged, unsupported layouts fall
// back to the evaluator, the BLAS thread option, and concurrent runs.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "ir/layout_util.h"
#include "jit/compile.h"
#include "runtime/blas/blas_threads.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

void ForEachIndex(absl::Span<const int64_t> dims,
                  const std::function<void(const std::vector<int64_t>&)>& fn) {
  for (int64_t d : dims) {
    if (d == 0) return;
  }
  std::vector<int64_t> index(dims.size(), 0);
  while (true) {
    fn(index);
    int64_t i = static_cast<int64_t>(dims.size()) - 1;
    for (; i >= 0; --i) {
      if (++index[i] < dims[i]) break;
      index[i] = 0;
    }
    if (i < 0) return;
  }
}

// Values in [-1, 1] for floats (no infinities or NaN: BLAS and the evaluator
// order sums differently, so only finite values compare), [-50, 50] for
// integers.
Literal SmallRandomLiteral(const Shape& shape, std::mt19937_64& rng) {
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (const Shape& element : shape.tuple_shapes()) {
      elements.push_back(SmallRandomLiteral(element, rng));
    }
    return Literal::MakeTuple(std::move(elements));
  }
  Literal literal(shape);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_int_distribution<int64_t> small(-50, 50);
  const ElementType type = shape.element_type();
  ForEachIndex(shape.dimensions(), [&](const std::vector<int64_t>& index) {
    if (IsComplex(type)) {
      const double re = unit(rng);
      literal.SetComplex(index, {re, unit(rng)});
    } else if (IsFloat(type)) {
      literal.SetDouble(index, unit(rng));
    } else {
      literal.SetInt(index, small(rng));
    }
  });
  return literal;
}

double Epsilon(ElementType type) {
  switch (type) {
    case ElementType::kF64:
    case ElementType::kC128:
      return std::ldexp(1.0, -52);
    case ElementType::kBF16:
      return std::ldexp(1.0, -7);
    case ElementType::kF16:
      return std::ldexp(1.0, -10);
    default:
      return std::ldexp(1.0, -23);
  }
}

// "" when `actual` matches `expected` (see the file comment); otherwise the
// first difference. `k` is the contraction length.
std::string Compare(const Literal& expected, const Literal& actual, int64_t k) {
  const Shape& shape = expected.shape();
  if (shape.element_type() != actual.shape().element_type() ||
      !std::equal(shape.dimensions().begin(), shape.dimensions().end(),
                  actual.shape().dimensions().begin(), actual.shape().dimensions().end())) {
    return absl::StrCat("shape ", actual.shape().ToString(false), " instead of ",
                        shape.ToString(false));
  }
  const ElementType type = shape.element_type();
  // f16/bf16 accumulate in f32; f64 in f64; complex in its component type.
  const ElementType component = IsComplex(type) ? ComplexComponentType(type) : type;
  const double accumulate_eps =
      component == ElementType::kF64 ? Epsilon(ElementType::kF64) : Epsilon(ElementType::kF32);
  const double absolute = 4.0 * static_cast<double>(k * k + 1) * accumulate_eps;
  const double relative = Epsilon(component);
  std::string difference;
  ForEachIndex(shape.dimensions(), [&](const std::vector<int64_t>& index) {
    if (!difference.empty()) return;
    bool equal = true;
    std::string values;
    if (IsComplex(type)) {
      const std::complex<double> e = expected.GetComplex(index), a = actual.GetComplex(index);
      equal = std::abs(e - a) <= absolute + relative * std::abs(e);
      values = absl::StrCat("(", a.real(), ",", a.imag(), ") vs (", e.real(), ",", e.imag(), ")");
    } else if (IsFloat(type)) {
      const double e = expected.GetDouble(index), a = actual.GetDouble(index);
      equal = std::abs(e - a) <= absolute + relative * std::abs(e);
      values = absl::StrCat(a, " vs ", e);
    } else {
      equal = expected.GetBits(index) == actual.GetBits(index);
      values = absl::StrCat(actual.GetInt(index), " vs ", expected.GetInt(index));
    }
    if (!equal) {
      difference = absl::StrCat("at {", absl::StrJoin(index, ","), "}: ", values, " (expected)");
    }
  });
  return difference;
}

struct Case {
  std::string name;
  std::string hlo;
  int64_t k = 1;  // contraction length, for the tolerance
  int library_calls = 1;
};

// Compiles, checks the report (the expected number of library calls, no
// interpreted step) and compares three runs on random arguments with the
// evaluator. Without the pass pipeline the module's dots and convolutions
// reach runtime/blas as written, which is what the form tests need; with
// it, library_calls < 0 skips the count (simplification may turn a dot
// into elementwise code).
void CheckCase(const Case& c, CompileReport* report_out = nullptr, bool run_passes = false,
               int threads = 1) {
  SCOPED_TRACE(c.name);
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(c.hlo);
  ASSERT_TRUE(module.ok()) << module.status();
  CompileReport report;
  CompileOptions options;
  options.run_passes = run_passes;
  options.threads = threads;
  auto executable = Compile(**module, options, &report);
  ASSERT_TRUE(executable.ok()) << executable.status();
  EXPECT_TRUE(report.interpreted_steps.empty())
      << absl::StrJoin(report.interpreted_steps, "\n");
  int library_steps = 0;
  for (const runtime::Step& step : (*executable)->steps()) {
    library_steps += step.kind == runtime::Step::Kind::kLibraryCall;
    EXPECT_NE(step.kind, runtime::Step::Kind::kInterpreted) << step.name;
  }
  if (c.library_calls >= 0) {
    EXPECT_EQ(static_cast<int>(report.library_calls.size()), c.library_calls);
    EXPECT_EQ(library_steps, c.library_calls);
  }
  std::mt19937_64 rng(std::hash<std::string>()(c.name));
  for (int run = 0; run < 3; ++run) {
    std::vector<Literal> arguments;
    for (const Instruction* parameter : (*module)->entry()->parameters()) {
      arguments.push_back(SmallRandomLiteral(parameter->shape(), rng));
    }
    absl::StatusOr<Literal> expected = EvaluateModule(**module, arguments);
    ASSERT_TRUE(expected.ok()) << expected.status();
    absl::StatusOr<Literal> actual = (*executable)->Run(arguments);
    ASSERT_TRUE(actual.ok()) << actual.status();
    EXPECT_EQ(Compare(*expected, *actual, c.k), "") << "run " << run;
    // The comparison can fail: one element off by 1/8 is caught.
    if (run == 0 && actual->element_count() > 0) {
      Literal wrong = std::move(*actual);
      const std::vector<int64_t> first(wrong.shape().rank(), 0);
      const ElementType type = wrong.shape().element_type();
      if (IsComplex(type)) {
        wrong.SetComplex(first, wrong.GetComplex(first) + std::complex<double>(0.125, 0));
      } else if (IsFloat(type)) {
        wrong.SetDouble(first, wrong.GetDouble(first) + 0.125);
      } else {
        wrong.SetInt(first, wrong.GetInt(first) + 1);
      }
      EXPECT_NE(Compare(*expected, wrong, c.k), "");
    }
  }
  if (report_out != nullptr) *report_out = report;
}

// A one-instruction module: ROOT r = RESULT OP(a, b), ATTRS.
std::string Binary(const std::string& op, const std::string& lhs, const std::string& rhs,
                   const std::string& result, const std::string& attrs) {
  return absl::StrCat("HloModule ", op, "\nENTRY e {\n  a = ", lhs, " parameter(0)\n  b = ", rhs,
                      " parameter(1)\n  ROOT r = ", result, " ", op, "(a, b), ", attrs, "\n}\n");
}

std::string Dot(const std::string& lhs, const std::string& rhs, const std::string& result,
                const std::string& dnums) {
  return Binary("dot", lhs, rhs, result, dnums);
}

std::string Conv(const std::string& input, const std::string& kernel, const std::string& result,
                 const std::string& attrs) {
  return Binary("convolution", input, kernel, result, attrs);
}

TEST(JitBlas, DotForms) {
  const std::vector<Case> cases = {
      {"f32 matrix", Dot("f32[5,7]", "f32[7,3]", "f32[5,3]",
                         "lhs_contracting_dims={1}, rhs_contracting_dims={0}"), 7},
      {"f32 transposed operands",
       Dot("f32[7,5]{0,1}", "f32[3,7]", "f32[5,3]",
           "lhs_contracting_dims={0}, rhs_contracting_dims={1}"), 7},
      {"f32 result layout",
       Dot("f32[6,4]", "f32[4,9]{0,1}", "f32[6,9]{0,1}",
           "lhs_contracting_dims={1}, rhs_contracting_dims={0}"), 4},
      {"f32 batch", Dot("f32[2,3,4]", "f32[2,4,5]", "f32[2,3,5]",
                        "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                        "rhs_contracting_dims={1}"), 4},
      {"f32 inner batch, two contracting dims, result layout",
       Dot("f32[3,2,4,5]", "f32[5,2,6,3]", "f32[2,4,6]{0,1,2}",
           "lhs_batch_dims={1}, lhs_contracting_dims={0,3}, rhs_batch_dims={1}, "
           "rhs_contracting_dims={3,0}"), 15},
      {"f32 conflicting contracting orders (a copy)",
       Dot("f32[2,3,4]{0,2,1}", "f32[4,2,5]{0,1,2}", "f32[3,5]",
           "lhs_contracting_dims={0,2}, rhs_contracting_dims={1,0}"), 8},
      {"f32 contracting dims split by a free dim (a K loop)",
       Dot("f32[2,3,64,33]", "f32[2,3,65,33]", "f32[64,65]",
           "lhs_contracting_dims={0,1,3}, rhs_contracting_dims={0,1,3}"), 198},
      {"f32 empty contraction", Dot("f32[3,0]", "f32[0,4]", "f32[3,4]",
                                    "lhs_contracting_dims={1}, rhs_contracting_dims={0}"), 1},
      {"f32 odd sizes", Dot("f32[17,33]", "f32[33,9]", "f32[17,9]",
                            "lhs_contracting_dims={1}, rhs_contracting_dims={0}"), 33},
      // Few rows: the small-GEMM kernels (runtime/blas/small_gemm.h) where
      // the CPU has them, in each form the plan can hand them.
      {"f32 few rows", Dot("f32[13,40]", "f32[40,130]", "f32[13,130]",
                           "lhs_contracting_dims={1}, rhs_contracting_dims={0}"), 40},
      {"f32 few rows, transposed rhs",
       Dot("f32[7,100]", "f32[70,100]", "f32[7,70]",
           "lhs_contracting_dims={1}, rhs_contracting_dims={1}"), 100},
      {"f32 few columns, column-major result",
       Dot("f32[100,9]", "f32[9,20]", "f32[100,20]{0,1}",
           "lhs_contracting_dims={1}, rhs_contracting_dims={0}"), 9},
      {"f32 few rows, batch", Dot("f32[2,6,33]", "f32[2,33,80]", "f32[2,6,80]",
                                  "lhs_batch_dims={0}, lhs_contracting_dims={2}, "
                                  "rhs_batch_dims={0}, rhs_contracting_dims={1}"), 33},
      {"f64 matrix-vector", Dot("f64[6,9]", "f64[9]", "f64[6]",
                                "lhs_contracting_dims={1}, rhs_contracting_dims={0}"), 9},
      {"f64 vector-matrix", Dot("f64[9]", "f64[9,4]{0,1}", "f64[4]",
                                "lhs_contracting_dims={0}, rhs_contracting_dims={0}"), 9},
      {"f64 vector-vector", Dot("f64[9]", "f64[9]", "f64[]",
                                "lhs_contracting_dims={0}, rhs_contracting_dims={0}"), 9},
      {"f64 outer product", Dot("f64[4]", "f64[3]", "f64[4,3]", "lhs_contracting_dims={}, "
                                "rhs_contracting_dims={}"), 1},
      {"f64 batch", Dot("f64[3,4,2]{1,2,0}", "f64[3,2,5]", "f64[3,4,5]{1,2,0}",
                        "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                        "rhs_contracting_dims={1}"), 2},
      {"c64 matrix", Dot("c64[4,6]", "c64[6,3]", "c64[4,3]",
                         "lhs_contracting_dims={1}, rhs_contracting_dims={0}"), 6},
      {"c64 batch", Dot("c64[2,4,6]", "c64[2,3,6]", "c64[2,4,3]",
                        "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                        "rhs_contracting_dims={2}"), 6},
      {"s32 matrix", Dot("s32[5,6]", "s32[6,4]{0,1}", "s32[5,4]",
                         "lhs_contracting_dims={1}, rhs_contracting_dims={0}"), 6},
      {"s32 batch", Dot("s32[2,5,6]", "s32[2,6,3]", "s32[2,5,3]",
                        "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                        "rhs_contracting_dims={1}"), 6},
      {"bf16 matrix", Dot("bf16[8,16]", "bf16[16,4]", "bf16[8,4]",
                          "lhs_contracting_dims={1}, rhs_contracting_dims={0}"), 16},
      {"bf16 batch", Dot("bf16[2,3,16]", "bf16[2,16,5]", "bf16[2,3,5]",
                         "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                         "rhs_contracting_dims={1}"), 16},
  };
  for (Case c : cases) {
    CheckCase(c);
    c.library_calls = -1;
    CheckCase(c, nullptr, /*run_passes=*/true);
  }
}

// Dots compiled for 2 and 3 threads run split over the pool (bands of rows
// or columns, or the batch; OpenBLAS single-threaded): against the
// evaluator, and bit for bit against the 1-thread executable (the bands keep
// each element's sum over the full K in OpenBLAS's order).
TEST(JitBlas, DotFormsSplitOverThreads) {
  const std::string mk = "lhs_contracting_dims={1}, rhs_contracting_dims={0}";
  const std::string batch =
      "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
      "rhs_contracting_dims={1}";
  const std::vector<Case> cases = {
      {"f32 rows", Dot("f32[130,140]", "f32[140,120]", "f32[130,120]", mk), 140},
      {"f32 columns, transposed lhs",
       Dot("f32[160,100]{0,1}", "f32[160,150]", "f32[100,150]",
           "lhs_contracting_dims={0}, rhs_contracting_dims={0}"), 160},
      {"f32 column-major result", Dot("f32[120,140]", "f32[140,130]{0,1}", "f32[120,130]{0,1}", mk),
       140},
      {"f64 rows", Dot("f64[130,140]", "f64[140,120]", "f64[130,120]", mk), 140},
      {"c64 columns", Dot("c64[100,120]", "c64[120,200]", "c64[100,200]", mk), 120},
      {"bf16 rows", Dot("bf16[130,140]", "bf16[140,120]", "bf16[130,120]", mk), 140},
      {"f32 batch", Dot("f32[4,128,64]", "f32[4,64,96]", "f32[4,128,96]", batch), 64},
      {"f32 three batches, split over the batch",
       Dot("f32[3,128,100]", "f32[3,100,160]", "f32[3,128,160]", batch), 100},
      {"s32 loop", Dot("s32[40,50]", "s32[50,30]", "s32[40,30]", mk), 50},
  };
  for (const Case& c : cases) {
    for (int threads : {2, 3}) {
      SCOPED_TRACE(absl::StrCat("threads ", threads));
      CompileReport report;
      CheckCase(c, &report, /*run_passes=*/false, threads);
      ASSERT_EQ(report.library_calls.size(), 1u);
      const std::string& plan = report.library_calls[0].plan;
      EXPECT_EQ(plan.find("split=") != std::string::npos, c.name != "s32 loop") << plan;
      EXPECT_EQ(plan.find("blas_threads="), std::string::npos) << plan;
    }
    // Bit for bit against one thread.
    absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(c.hlo);
    ASSERT_TRUE(module.ok()) << module.status();
    std::mt19937_64 rng(5);
    std::vector<Literal> arguments;
    for (const Instruction* parameter : (*module)->entry()->parameters()) {
      arguments.push_back(SmallRandomLiteral(parameter->shape(), rng));
    }
    std::optional<Literal> first;
    for (int threads : {1, 2, 3}) {
      CompileOptions options;
      options.run_passes = false;
      options.threads = threads;
      auto executable = Compile(**module, options);
      ASSERT_TRUE(executable.ok()) << executable.status();
      absl::StatusOr<Literal> result = (*executable)->Run(arguments);
      ASSERT_TRUE(result.ok()) << result.status();
      if (!first.has_value()) {
        first = std::move(*result);
        continue;
      }
      EXPECT_TRUE(std::equal(result->data().begin(), result->data().end(),
                             first->data().begin(), first->data().end()))
          << c.name << " threads " << threads;
    }
  }
}

// A dot whose only user is a transpose swapping its lhs-free and rhs-free
// dimension groups is laid out so that the GEMM writes the transpose's bytes
// (assign_layouts.h): outer products (no contracting dimension) as the
// per-example gradients of a vmapped grad lower, several free dimensions on
// a side, size-0 and size-1 dimensions, batch dimensions. The transpose's
// users read it as a default-layout value (an elementwise use, a reduction,
// a reshape), and the result matches the evaluator.
TEST(JitBlas, DotFeedingTransposeWritesItThroughThePasses) {
  // `root`: "r" (the reduction of the transposed value squared) or "n" (the
  // transposed value negated); CheckCase compares arrays, not tuples, so
  // the two uses are checked one module at a time.
  auto module = [](const std::string& root, const std::string& type, const std::string& a,
                   const std::string& b, const std::string& d, const std::string& t,
                   const std::string& dnums, const std::string& perm,
                   const std::string& reduced, const std::string& reduce_dims) {
    const std::string r = root == "r" ? "ROOT r" : "r";
    const std::string n = root == "n" ? "ROOT n" : "n";
    return absl::StrCat("HloModule m\nadd {\n  x = ", type, "[] parameter(0)\n  y = ", type,
                        "[] parameter(1)\n  ROOT s = ", type, "[] add(x, y)\n}\n",
                        "ENTRY e {\n  a = ", type, a, " parameter(0)\n  b = ", type, b,
                        " parameter(1)\n  d = ", type, d, " dot(a, b), ", dnums,
                        "\n  t = ", type, t, " transpose(d), dimensions=", perm,
                        "\n  sq = ", type, t, " multiply(t, t)\n  z = ", type,
                        "[] constant(0)\n  ", r, " = ", type, reduced,
                        " reduce(sq, z), dimensions=", reduce_dims, ", to_apply=add\n  ", n,
                        " = ", type, t, " negate(t)\n}\n");
  };
  const std::string outer =
      "lhs_batch_dims={0}, lhs_contracting_dims={}, rhs_batch_dims={0}, rhs_contracting_dims={}";
  for (const std::string root : {"r", "n"}) {
    const std::vector<Case> cases = {
        {"f32 batched outer product",
         module(root, "f32", "[5,17]", "[5,9]", "[5,17,9]", "[5,9,17]", outer, "{0,2,1}",
                "[9,17]", "{0}"), 1, -1},
        {"f64 batched outer product, batch reduced",
         module(root, "f64", "[7,3]", "[7,16]", "[7,3,16]", "[7,16,3]", outer, "{0,2,1}", "[7]",
                "{1,2}"), 1, -1},
        {"f32 outer product, size-1 dimensions",
         module(root, "f32", "[1,1]", "[1,33]", "[1,1,33]", "[1,33,1]", outer, "{0,2,1}",
                "[33,1]", "{0}"), 1, -1},
        {"f32 outer product, size-0 batch",
         module(root, "f32", "[0,4]", "[0,5]", "[0,4,5]", "[0,5,4]", outer, "{0,2,1}", "[5,4]",
                "{0}"), 1, -1},
        {"f32 two free dimensions a side, contracting",
         module(root, "f32", "[3,4,6,5]", "[3,5,2,7]", "[3,4,6,2,7]", "[3,2,7,4,6]",
                "lhs_batch_dims={0}, lhs_contracting_dims={3}, rhs_batch_dims={0}, "
                "rhs_contracting_dims={1}",
                "{0,3,4,1,2}", "[2,7,4,6]", "{0}"), 5, -1},
        {"f32 matrix, no batch",
         module(root, "f32", "[31,20]", "[20,13]", "[31,13]", "[13,31]",
                "lhs_contracting_dims={1}, rhs_contracting_dims={0}", "{1,0}", "[31]", "{0}"),
         20, -1},
        // Not the two groups swapped (the lhs's free dimensions reordered):
        // the dot stays row-major and the transpose moves the data.
        {"f32 free group broken apart",
         module(root, "f32", "[3,4,6]", "[3,5]", "[3,4,6,5]", "[3,5,6,4]", outer, "{0,3,2,1}",
                "[5,6,4]", "{0}"), 1, -1},
    };
    for (Case c : cases) {
      c.name += ", root " + root;
      CheckCase(c, nullptr, /*run_passes=*/true);
      CheckCase(c, nullptr, /*run_passes=*/true, /*threads=*/2);
    }
  }
}

TEST(JitBlas, ConvolutionForms) {
  const std::vector<Case> cases = {
      {"f32 NHWC same padding",
       Conv("f32[2,5,5,3]", "f32[3,3,3,4]", "f32[2,5,5,4]",
            "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"), 27},
      {"f32 NCHW stride 2",
       Conv("f32[2,3,7,7]", "f32[4,3,3,3]", "f32[2,4,3,3]",
            "window={size=3x3 stride=2x2}, dim_labels=bf01_oi01->bf01"), 27},
      {"f32 lhs and rhs dilation",
       Conv("f32[1,2,5,5]", "f32[2,2,2,2]", "f32[1,2,7,9]",
            "window={size=2x2 pad=0_0x1_0 lhs_dilate=2x2 rhs_dilate=2x1}, "
            "dim_labels=bf01_oi01->bf01"), 8},
      {"f32 feature groups",
       Conv("f32[1,4,6,6]", "f32[3,3,2,8]", "f32[1,8,4,4]",
            "window={size=3x3}, dim_labels=bf01_01io->bf01, feature_group_count=2"), 18},
      {"f32 depthwise NHWC",
       Conv("f32[1,6,6,3]", "f32[3,3,1,3]", "f32[1,6,6,3]",
            "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=3"),
       9},
      {"f32 batch groups",
       Conv("f32[4,3,5]", "f32[3,2,4]", "f32[2,4,4]",
            "window={size=2}, dim_labels=bf0_i0o->bf0, batch_group_count=2"), 6},
      {"f32 negative padding and reversal",
       Conv("f32[1,8,2]", "f32[3,2,2]", "f32[1,7,2]",
            "window={size=3 pad=-1_2 rhs_reversal=1}, dim_labels=b0f_0io->b0f"), 6},
      {"f32 1x1 NHWC (plain GEMM)",
       Conv("f32[2,4,4,8]", "f32[1,1,8,5]", "f32[2,4,4,5]",
            "window={size=1x1}, dim_labels=b01f_01io->b01f"), 8},
      {"f32 1x1 stride 2 NCHW",
       Conv("f32[2,8,5,5]", "f32[6,8,1,1]", "f32[2,6,3,3]",
            "window={size=1x1 stride=2x2}, dim_labels=bf01_oi01->bf01"), 8},
      {"f32 3-D", Conv("f32[1,2,4,4,4]", "f32[3,2,2,2,2]", "f32[1,3,3,3,3]",
                       "window={size=2x2x2}, dim_labels=bf012_oi012->bf012"), 16},
      {"f32 unusual dim labels",
       Conv("f32[3,5,5,2]", "f32[3,3,3,4]", "f32[3,3,2,4]",
            "window={size=3x3}, dim_labels=f01b_i01o->01bf"), 27},
      {"f32 non-default layouts",
       Conv("f32[2,5,5,3]{1,2,3,0}", "f32[3,3,3,4]{0,1,2,3}", "f32[2,3,3,4]{0,3,2,1}",
            "window={size=3x3}, dim_labels=b01f_01io->b01f"), 27},
      {"f64 1-D transposed and atrous",
       Conv("f64[1,6,2]", "f64[3,2,3]", "f64[1,7,3]",
            "window={size=3 lhs_dilate=2 rhs_dilate=2}, dim_labels=b0f_0io->b0f"), 6},
      {"f64 NHWC strides and asymmetric padding",
       Conv("f64[1,9,8,3]", "f64[4,3,3,5]", "f64[1,5,3,5]",
            "window={size=4x3 stride=2x3 pad=1_2x0_1}, dim_labels=b01f_01io->b01f"), 36},
      {"c64 NHWC", Conv("c64[1,4,4,2]", "c64[2,2,2,3]", "c64[1,3,3,3]",
                        "window={size=2x2}, dim_labels=b01f_01io->b01f"), 8},
      {"s32 NHWC", Conv("s32[1,5,5,2]", "s32[3,3,2,2]", "s32[1,3,3,2]",
                        "window={size=3x3}, dim_labels=b01f_01io->b01f"), 18},
      {"bf16 NHWC", Conv("bf16[1,5,5,4]", "bf16[3,3,4,2]", "bf16[1,3,3,2]",
                         "window={size=3x3}, dim_labels=b01f_01io->b01f"), 36},
      // Transposed convolutions as JAX lowers them: phases of ordinary
      // convolutions (16 output features), GEMM + col2im (3), and phases on
      // the plain loop (bf16, lhs dilation 3x2 with a stride).
      {"f32 transposed 4x4/2 NHWC (phases)",
       Conv("f32[2,5,5,4]", "f32[4,4,4,16]", "f32[2,10,10,16]",
            "window={size=4x4 pad=2_2x2_2 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f"), 64},
      {"f32 transposed 3x3/2 to 3 features (GEMM + col2im)",
       Conv("f32[2,5,5,6]", "f32[3,3,6,3]", "f32[2,10,10,3]",
            "window={size=3x3 pad=2_1x2_1 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f"), 54},
      {"bf16 transposed with a stride (phases)",
       Conv("bf16[1,4,3,2]", "bf16[3,3,2,3]", "bf16[1,5,3,3]",
            "window={size=3x3 stride=2x1 pad=1_1x0_0 lhs_dilate=3x2}, "
            "dim_labels=b01f_01io->b01f"), 18},
  };
  for (Case c : cases) {
    CheckCase(c);
    c.library_calls = -1;
    CheckCase(c, nullptr, /*run_passes=*/true);
  }
}

constexpr char kMixed[] = R"(HloModule mixed_blas
ENTRY e {
  x = f32[1,6,6,3] parameter(0)
  k = f32[3,3,3,4] parameter(1)
  w = f32[4,5] parameter(2)
  b = f32[5] parameter(3)
  half = f32[] constant(0.5)
  halves = f32[1,6,6,3] broadcast(half), dimensions={}
  xs = f32[1,6,6,3] multiply(x, halves)
  c = f32[1,6,6,4] convolution(xs, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  r = f32[36,4] reshape(c)
  d = f32[36,5] dot(r, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[36,5] broadcast(b), dimensions={1}
  s = f32[36,5] add(d, bb)
  zero = f32[] constant(0)
  zeros = f32[36,5] broadcast(zero), dimensions={}
  ROOT relu = f32[36,5] maximum(s, zeros)
}
)";

// Channels-major convolutions (NCW, NCHW) with fewer than 16 output
// features keep their input's layout through the passes (assign_layouts.cc,
// KeepsChannelsMajorInput): im2col along the spatial dimensions, then per
// image a GEMM with as many rows as output features, which the few-row
// kernels take when there are 64 or more output positions (small_gemm.h).
// Odd widths (vector tails), dilation, stride, padding on either side,
// size-1 batch and features, f64 (OpenBLAS), and 16 output features (the
// input is copied to channels-minor as before), against the evaluator on
// one and two threads.
TEST(JitBlas, ChannelsMajorConvolutionsWithFewOutputFeatures) {
  const std::vector<Case> cases = {
      {"f32 NCW, 8 features, dilation 2 (few-row GEMM)",
       Conv("f32[3,16,100]", "f32[8,16,3]", "f32[3,8,100]",
            "window={size=3 pad=2_2 rhs_dilate=2}, dim_labels=bf0_oi0->bf0"), 48, -1},
      {"f32 NCW, 5 features, stride 2, odd width",
       Conv("f32[2,7,263]", "f32[5,7,5]", "f32[2,5,131]",
            "window={size=5 stride=2 pad=2_1}, dim_labels=bf0_oi0->bf0"), 35, -1},
      {"f32 NCW, one feature in, one out, batch 1",
       Conv("f32[1,1,90]", "f32[1,1,2]", "f32[1,1,90]",
            "window={size=2 pad=1_0}, dim_labels=bf0_oi0->bf0"), 2, -1},
      {"f32 NCHW, 3 features, 3x3",
       Conv("f32[2,4,12,13]", "f32[3,4,3,3]", "f32[2,3,12,13]",
            "window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01"), 36, -1},
      {"f32 NCHW, HWIO kernel, 15 features",
       Conv("f32[1,6,9,9]", "f32[3,3,6,15]", "f32[1,15,7,7]",
            "window={size=3x3}, dim_labels=bf01_01io->bf01"), 54, -1},
      {"f64 NCW, 4 features",
       Conv("f64[2,6,70]", "f64[4,6,3]", "f64[2,4,68]",
            "window={size=3}, dim_labels=bf0_oi0->bf0"), 18, -1},
      {"f32 NCW, 16 features (copied to channels-minor)",
       Conv("f32[2,8,80]", "f32[16,8,3]", "f32[2,16,80]",
            "window={size=3 pad=1_1}, dim_labels=bf0_oi0->bf0"), 24, -1},
  };
  for (const Case& c : cases) {
    CheckCase(c, nullptr, /*run_passes=*/true);
    CheckCase(c, nullptr, /*run_passes=*/true, /*threads=*/2);
  }
}

// Integer convolutions run the dot's plain loop with each integer type loaded
// and stored as its C++ type ("typed" in the plan), never the loop that
// decodes every element's type as it goes ("decoded"): an s8 convolution on
// that loop took 4151 ms against the evaluator's 400 (issue 30, case 5).
// Results against the evaluator (products wrap at the result's width),
// with and without the pass pipeline; forms with an image, without one (1x1),
// with feature groups, and with a size-1 and a size-0 batch.
TEST(JitBlas, IntegerConvolutionsRunTheTypedLoop) {
  struct Form {
    std::string name, input, kernel, output, attrs;
    int64_t k;
  };
  const std::vector<Form> forms = {
      {"NHWC 3x3", "[2,5,7,3]", "[3,3,3,4]", "[2,5,7,4]",
       "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f", 27},
      {"NCHW stride 2", "[1,3,7,6]", "[5,3,3,2]", "[1,5,3,3]",
       "window={size=3x2 stride=2x2}, dim_labels=bf01_oi01->bf01", 18},
      {"1x1", "[1,3,3,5]", "[1,1,5,2]", "[1,3,3,2]", "window={size=1x1}, dim_labels=b01f_01io->b01f",
       5},
      {"depthwise", "[1,6,5,4]", "[3,3,1,4]", "[1,6,5,4]",
       "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=4", 9},
      {"empty batch", "[0,4,4,2]", "[3,3,2,3]", "[0,2,2,3]",
       "window={size=3x3}, dim_labels=b01f_01io->b01f", 18},
  };
  for (const char* type : {"s8", "s16", "s32", "u8"}) {
    for (const Form& form : forms) {
      Case c{absl::StrCat(type, " ", form.name),
             Conv(type + form.input, type + form.kernel, type + form.output, form.attrs), form.k};
      for (bool run_passes : {false, true}) {
        SCOPED_TRACE(run_passes ? "with the pipeline" : "as written");
        // An empty result has nothing to compute: no step, no loop.
        const bool empty = form.name == "empty batch";
        c.library_calls = run_passes || empty ? -1 : 1;
        CompileReport report;
        CheckCase(c, &report, run_passes);
        if (empty) continue;
        ASSERT_EQ(report.library_calls.size(), 1u) << c.name;
        const LibraryCallInfo& call = report.library_calls[0];
        EXPECT_EQ(call.routine, "convolution") << c.name;
        EXPECT_TRUE(absl::StrContains(call.plan, absl::StrCat("loop ", type, " typed")))
            << c.name << ": " << call.plan;
        EXPECT_FALSE(absl::StrContains(call.plan, "decoded")) << c.name << ": " << call.plan;
      }
    }
  }
}

TEST(JitBlas, KernelsAndLibraryCallsTogether) {
  // conv (K = 27) feeds a dot (K = 4): tolerance for K = 27 * 4.
  CompileReport report;
  CheckCase({"mixed", kMixed, 27 * 4, 2}, &report);
  EXPECT_GE(report.kernels.size(), 4u);  // multiply, reshape, add, maximum (at least)
  ASSERT_EQ(report.library_calls.size(), 2u);
  // With the pipeline, the epilogue (bias add and relu) is one kernel that
  // runs in place on the dot's result; the scaling of x is another.
  CompileReport fused;
  CheckCase({"mixed", kMixed, 27 * 4, 2}, &fused, /*run_passes=*/true);
  EXPECT_EQ(fused.kernels.size(), 2u);
  EXPECT_EQ(fused.library_calls.size(), 2u);
  EXPECT_EQ(report.library_calls[0].name, "c");
  EXPECT_EQ(report.library_calls[0].routine, "convolution");
  EXPECT_EQ(report.library_calls[1].name, "d");
  EXPECT_EQ(report.library_calls[1].routine, "dot");
  EXPECT_FALSE(report.library_calls[1].plan.empty());
}

TEST(JitBlas, ReportSummaryAndScratchInTempBytes) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(kMixed);
  ASSERT_TRUE(module.ok()) << module.status();
  CompileReport report;
  CompileOptions options;
  options.run_passes = false;
  auto executable = Compile(**module, options, &report);
  ASSERT_TRUE(executable.ok()) << executable.status();
  const std::string summary = report.Summary();
  EXPECT_TRUE(absl::StartsWith(summary, "library calls: 2\nkernels: ")) << summary;
  EXPECT_TRUE(absl::StrContains(summary, "\ninterpreted steps: 0\ntemp bytes: ")) << summary;
  // The 3x3 convolution needs an im2col image (36 positions x 27 taps of
  // f32) or, on the direct kernel, a zero-bordered copy of the input (8x8x3).
  const int64_t conv_scratch = report.library_calls[0].scratch_bytes;
  const bool direct = absl::StartsWith(report.library_calls[0].plan, "direct-kernel");
  EXPECT_GE(conv_scratch, direct ? 8 * 8 * 3 * 4 : 36 * 27 * 4) << report.library_calls[0].plan;
  const runtime::BufferPlan& plan = (*executable)->plan();
  int64_t largest = 0;
  for (const LibraryCallInfo& call : report.library_calls) {
    largest = std::max(largest, call.scratch_bytes);
  }
  EXPECT_EQ(plan.scratch_bytes, largest);
  EXPECT_EQ(plan.scratch_offset % runtime::kBufferAlignment, 0);
  EXPECT_EQ(plan.temp_bytes, plan.scratch_offset + plan.scratch_bytes);
  // Every value's range ends before the scratch.
  for (const runtime::BufferSlot& slot : plan.slots) {
    if (slot.kind == runtime::BufferSlot::Kind::kTemp) {
      EXPECT_LE(slot.offset + slot.size, plan.scratch_offset);
    }
  }
  EXPECT_EQ(report.temp_bytes, plan.temp_bytes);
  // Peak: the parameters and the result are live throughout, plus at least
  // the largest scratch and at most every temp.
  const int64_t parameters = (1 * 6 * 6 * 3 + 3 * 3 * 3 * 4 + 4 * 5 + 5) * 4;
  const int64_t result = 36 * 5 * 4;
  EXPECT_GE(report.peak_bytes, parameters + result + largest);
  EXPECT_LE(report.peak_bytes, parameters + result + plan.temp_bytes);
}

TEST(JitBlas, InterpretOnlyHasNoLibraryCalls) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(kMixed);
  ASSERT_TRUE(module.ok()) << module.status();
  CompileOptions options;
  options.interpret_only = true;
  CompileReport report;
  auto executable = Compile(**module, options, &report);
  ASSERT_TRUE(executable.ok()) << executable.status();
  EXPECT_TRUE(report.library_calls.empty());
  EXPECT_EQ((*executable)->plan().scratch_bytes, 0);
  bool dot_interpreted = false;
  for (const std::string& step : report.interpreted_steps) {
    dot_interpreted |= absl::StartsWith(step, "d (dot)");
  }
  EXPECT_TRUE(dot_interpreted) << absl::StrJoin(report.interpreted_steps, "\n");
}

TEST(JitBlas, TiledLayoutOperandIsRelaidOutForTheDot) {
  const std::string hlo = Dot("f32[4,6]{1,0:T(2,2)}", "f32[6,3]", "f32[4,3]",
                              "lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  ASSERT_TRUE(module.ok()) << module.status();
  // With or without the pipeline, the tiled operand is copied into a plain
  // layout (a relayout library call: passes/isolate_tiled_layouts.h) and the
  // dot is a BLAS call; nothing is interpreted.
  auto dot_calls = [](const CompileReport& report) {
    int dots = 0;
    for (const LibraryCallInfo& call : report.library_calls) dots += call.routine == "dot";
    return dots;
  };
  auto routines = [](const CompileReport& report) {
    std::vector<std::string> names;
    for (const LibraryCallInfo& call : report.library_calls) names.push_back(call.routine);
    return absl::StrJoin(names, ", ");
  };
  CompileReport with_passes;
  ASSERT_TRUE(Compile(**module, {}, &with_passes).ok());
  EXPECT_EQ(dot_calls(with_passes), 1) << routines(with_passes);
  EXPECT_TRUE(with_passes.interpreted_steps.empty());
  CompileReport report;
  CompileOptions options;
  options.run_passes = false;
  auto executable = Compile(**module, options, &report);
  ASSERT_TRUE(executable.ok()) << executable.status();
  EXPECT_EQ(dot_calls(report), 1) << routines(report);
  EXPECT_TRUE(report.interpreted_steps.empty())
      << absl::StrJoin(report.interpreted_steps, "\n");
  std::mt19937_64 rng(5);
  std::vector<Literal> arguments;
  for (const Instruction* parameter : (*module)->entry()->parameters()) {
    arguments.push_back(SmallRandomLiteral(parameter->shape(), rng));
  }
  absl::StatusOr<Literal> expected = EvaluateModule(**module, arguments);
  ASSERT_TRUE(expected.ok()) << expected.status();
  absl::StatusOr<Literal> actual = (*executable)->Run(arguments);
  ASSERT_TRUE(actual.ok()) << actual.status();
  EXPECT_EQ(Compare(*expected, *actual, 6), "");
}

TEST(JitBlas, MisalignedOperandsAreStaged) {
  // The f32 leaf of a flattened (s8[3], f32[4,4]) parameter lies at byte 3.
  const char* hlo = R"(HloModule packed
ENTRY e {
  p = (s8[3], f32[4,4]) parameter(0)
  m = f32[4,4] get-tuple-element(p), index=1
  w = f32[4,4] parameter(1)
  ROOT d = f32[4,4] dot(m, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
  CheckCase({"packed tuple leaf", hlo, 4, 1});

  // Raw buffers one byte off their natural alignment, the result too.
  absl::StatusOr<std::unique_ptr<Module>> module =
      ParseVerified(Dot("f64[3,5]", "f64[5,2]", "f64[3,2]",
                        "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
  ASSERT_TRUE(module.ok()) << module.status();
  auto executable = Compile(**module, {});
  ASSERT_TRUE(executable.ok()) << executable.status();
  std::mt19937_64 rng(9);
  std::vector<Literal> arguments;
  for (const Instruction* parameter : (*module)->entry()->parameters()) {
    arguments.push_back(SmallRandomLiteral(parameter->shape(), rng));
  }
  absl::StatusOr<Literal> expected = EvaluateModule(**module, arguments);
  ASSERT_TRUE(expected.ok()) << expected.status();
  std::vector<uint8_t> lhs(1 + 15 * 8), rhs(1 + 10 * 8), out(1 + 6 * 8);
  std::memcpy(lhs.data() + 1, arguments[0].data().data(), 15 * 8);
  std::memcpy(rhs.data() + 1, arguments[1].data().data(), 10 * 8);
  ASSERT_TRUE((*executable)->Execute({lhs.data() + 1, rhs.data() + 1}, out.data() + 1).ok());
  Literal actual(Shape::Array(ElementType::kF64, {3, 2}));
  std::memcpy(actual.data().data(), out.data() + 1, 6 * 8);
  EXPECT_EQ(Compare(*expected, actual, 5), "");
}

// CompileOptions::threads reaches OpenBLAS only around each library call
// (runtime/blas/blas_threads.h): neither compiling nor running changes the
// process-wide setting that the host application (or another executable)
// sees afterwards.
TEST(JitBlas, ThreadsOptionIsScopedToLibraryCalls) {
  const std::string with_dot = Dot("f32[2,2]", "f32[2,2]", "f32[2,2]",
                                   "lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  absl::StatusOr<std::unique_ptr<Module>> dot = ParseVerified(with_dot);
  ASSERT_TRUE(dot.ok()) << dot.status();
  const int before = runtime::blas::BlasThreads();
  const int wanted = before == 1 ? 2 : 1;
  CompileOptions options;
  options.threads = wanted;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable = Compile(**dot, options);
  ASSERT_TRUE(executable.ok()) << executable.status();
  EXPECT_EQ(runtime::blas::BlasThreads(), before);
  const Shape shape = Shape::Array(ElementType::kF32, {2, 2});
  Literal a(shape), b(shape);
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 2; ++j) {
      a.SetDouble({i, j}, static_cast<double>(i + 2 * j));
      b.SetDouble({i, j}, static_cast<double>(1 + i - j));
    }
  }
  absl::StatusOr<Literal> result = (*executable)->Run({a, b});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(runtime::blas::BlasThreads(), before);
  // [[0,2],[1,3]] x [[1,0],[2,1]] = [[4,2],[7,3]]
  EXPECT_EQ(result->GetDouble({0, 0}), 4.0);
  EXPECT_EQ(result->GetDouble({1, 0}), 7.0);
  EXPECT_EQ(result->GetDouble({1, 1}), 3.0);
}

// A few-row dot large enough to split between threads (the small-GEMM
// kernels, where the CPU has them, divide the columns): 1 and 2 threads give
// the same bits, and the evaluator's values.
TEST(JitBlas, FewRowDotSameBitsOnTwoThreads) {
  for (const std::string& hlo :
       {Dot("f32[32,64]", "f32[64,1024]", "f32[32,1024]",
            "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
        Dot("f32[32,1024]", "f32[80,1024]", "f32[32,80]",
            "lhs_contracting_dims={1}, rhs_contracting_dims={1}")}) {
    absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
    ASSERT_TRUE(module.ok()) << module.status();
    std::mt19937_64 rng(3);
    std::vector<Literal> arguments;
    for (const Instruction* parameter : (*module)->entry()->parameters()) {
      arguments.push_back(SmallRandomLiteral(parameter->shape(), rng));
    }
    absl::StatusOr<Literal> expected = EvaluateModule(**module, arguments);
    ASSERT_TRUE(expected.ok()) << expected.status();
    std::vector<Literal> results;
    for (int threads : {1, 2}) {
      CompileOptions options;
      options.threads = threads;
      absl::StatusOr<std::unique_ptr<runtime::Executable>> executable = Compile(**module, options);
      ASSERT_TRUE(executable.ok()) << executable.status();
      absl::StatusOr<Literal> actual = (*executable)->Run(arguments);
      ASSERT_TRUE(actual.ok()) << actual.status();
      EXPECT_EQ(Compare(*expected, *actual, 1024), "") << threads << " threads";
      results.push_back(std::move(*actual));
    }
    EXPECT_TRUE(results[0] == results[1]) << hlo;
  }
}

TEST(JitBlas, OneExecutableFromFourThreads) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(kMixed);
  ASSERT_TRUE(module.ok()) << module.status();
  auto executable = Compile(**module, {});
  ASSERT_TRUE(executable.ok()) << executable.status();
  constexpr int kThreads = 4;
  constexpr int kSets = 3;
  // Argument sets and expected values per thread, computed up front.
  std::vector<std::vector<std::vector<Literal>>> arguments(kThreads);
  std::vector<std::vector<Literal>> expected(kThreads);
  std::mt19937_64 rng(17);
  for (int t = 0; t < kThreads; ++t) {
    for (int s = 0; s < kSets; ++s) {
      std::vector<Literal> set;
      for (const Instruction* parameter : (*module)->entry()->parameters()) {
        set.push_back(SmallRandomLiteral(parameter->shape(), rng));
      }
      absl::StatusOr<Literal> value = EvaluateModule(**module, set);
      ASSERT_TRUE(value.ok()) << value.status();
      expected[t].push_back(std::move(*value));
      arguments[t].push_back(std::move(set));
    }
  }
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int iteration = 0; iteration < 30 && failures[t].empty(); ++iteration) {
        const int s = iteration % kSets;
        absl::StatusOr<Literal> actual = (*executable)->Run(arguments[t][s]);
        if (!actual.ok()) {
          failures[t] = actual.status().ToString();
        } else {
          failures[t] = Compare(expected[t][s], *actual, 27 * 4);
        }
        if (!failures[t].empty()) failures[t] = absl::StrCat("iteration ", iteration, ": ",
                                                             failures[t]);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
}

}  // namespace
}  // namespace xjit::jit::testing
