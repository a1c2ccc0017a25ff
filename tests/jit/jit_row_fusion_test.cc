// Row fusion (passes/fuse.cc rule 5) and row programs (jit/kernel/kernel_program.h,
// ProgramPhases; lowered by both targets, x86-64 and AArch64): a reduce whose result is
// broadcast back along its reduced dimensions joins the loop that reads it,
// so softmax and layer norm compile to one kernel each, which passes over
// each row as often as its chain of reductions needs.
//
// Every module is compiled through the whole pipeline and run; results are
// compared with the evaluator's: NaN where the evaluator has NaN, the same
// infinities, and finite values within a bound for summation order (the
// row program adds a row in vector lanes, the evaluator in order): |jit -
// eval| <= 4 (n + 2) eps max(1, |eval|), n the reduced elements per row.
// Row fusion off must agree too, and the kernel counts say what fused.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "ir/float_format.h"
#include "ir/literal.h"
#include "jit/compile.h"
#include "runtime/executable.h"
#include "tests/jit/jit_test_util.h"
#if defined(__x86_64__)
#include "jit/x64/x64_lowering.h"
#endif

namespace xjit::jit {
namespace {

using ::xjit::jit::testing::ParseVerified;

// Row fusion is on where the target lowers row programs (x86-64 and
// AArch64: Target::HasRowPrograms); on another host the modules would keep
// their kernels and only the results would be checked.
#if defined(__x86_64__) || defined(__aarch64__)
constexpr bool kRowPrograms = true;
#else
constexpr bool kRowPrograms = false;
#endif

// Rows of the largest cases. The evaluator takes most of their time, and the
// AArch64 build runs under qemu in CI (256 rows there: 85 s for this test,
// 61 s of it these cases); 32 rows still split over two threads.
#if defined(__aarch64__)
constexpr int64_t kManyRows = 32;
#else
constexpr int64_t kManyRows = 256;
#endif

// Values uniform in [-4, 4), with specials in chosen rows: row 1 holds a
// NaN, row 2 a +inf, row 3 a -inf, row 4 is all -inf (its maximum is -inf,
// so softmax gives NaN), when the array has those rows.
Literal RowData(const Shape& shape, int64_t row_length, bool specials, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> dist(-4.0, 4.0);
  std::vector<double> values(static_cast<size_t>(shape.element_count()));
  for (double& v : values) v = dist(rng);
  if (specials && row_length > 0) {
    const int64_t rows = static_cast<int64_t>(values.size()) / row_length;
    const double inf = std::numeric_limits<double>::infinity();
    auto at = [&](int64_t row, int64_t k) -> double& {
      return values[static_cast<size_t>(row * row_length + k % row_length)];
    };
    if (rows > 1) at(1, 3) = std::nan("");
    if (rows > 2) at(2, 5) = inf;
    if (rows > 3) at(3, 1) = -inf;
    if (rows > 4) {
      for (int64_t k = 0; k < row_length; ++k) at(4, k) = -inf;
    }
  }
  return Literal::FromDoubles(shape, values);
}

double Epsilon(ElementType type) { return std::ldexp(1.0, -FloatMantissaBits(type)); }

// Element i (row-major over the logical dimensions) of an array literal.
// Advances a row-major multi-index over `dims` by one element (an odometer:
// Compare walks millions of elements, and this test's code is built at -O0).
void Advance(absl::Span<const int64_t> dims, std::vector<int64_t>* index) {
  for (size_t d = dims.size(); d-- > 0;) {
    if (++(*index)[d] < dims[d]) return;
    (*index)[d] = 0;
  }
}

// "" when `actual` matches `expected` as the file comment says.
std::string Compare(const Literal& expected, const Literal& actual, int64_t n) {
  if (expected.shape().IsTuple()) {
    if (!actual.shape().IsTuple() || actual.shape().tuple_size() != expected.shape().tuple_size()) {
      return "tuple shapes differ";
    }
    for (int64_t k = 0; k < expected.shape().tuple_size(); ++k) {
      std::string d = Compare(expected.element(k), actual.element(k), n);
      if (!d.empty()) return absl::StrCat("tuple element ", k, ": ", d);
    }
    return "";
  }
  if (!actual.shape().IsArray() || expected.shape().dimensions() != actual.shape().dimensions()) {
    return "dimensions differ";
  }
  const double bound = 4.0 * static_cast<double>(n + 2) * Epsilon(expected.shape().element_type());
  const absl::Span<const int64_t> dims = expected.shape().dimensions();
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t i = 0; i < expected.shape().element_count(); ++i, Advance(dims, &index)) {
    const double e = expected.GetDouble(index);
    const double a = actual.GetDouble(index);
    const bool ok = std::isnan(e)   ? std::isnan(a)
                    : std::isinf(e) ? a == e
                                    : std::fabs(a - e) <= bound * std::max(1.0, std::fabs(e));
    if (!ok) return absl::StrCat("element ", i, ": evaluator ", e, ", jit ", a);
  }
  return "";
}

struct Outcome {
  Literal result;
  int kernels = 0;
  int interpreted = 0;
  std::string status;
};

Outcome CompileAndRun(const Module& module, const std::vector<Literal>& arguments, bool row_fusion,
                      int threads) {
  Outcome run;
  CompileOptions options;
  options.row_fusion = row_fusion;
  options.threads = threads;
  options.cache = false;
  CompileReport report;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> exe = Compile(module, options, &report);
  if (!exe.ok()) {
    run.status = std::string(exe.status().message());
    return run;
  }
  run.kernels = static_cast<int>(report.kernels.size());
  run.interpreted = static_cast<int>(report.interpreted_steps.size());
  absl::StatusOr<Literal> result = (*exe)->Run(arguments);
  if (!result.ok()) {
    run.status = std::string(result.status().message());
    return run;
  }
  run.result = std::move(*result);
  return run;
}

struct Case {
  std::string hlo;
  std::vector<Shape> parameters;
  int64_t row_length = 0;  // elements reduced per row
  int kernels = 1;         // with row fusion on
};

// Compiles with row fusion on (1 and 2 threads) and off; each must match
// the evaluator; on, the kernel count must be `c.kernels`.
void Check(const Case& c, bool specials, uint64_t seed) {
  SCOPED_TRACE(c.hlo);
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(c.hlo);
  ASSERT_TRUE(module.ok()) << module.status();
  std::mt19937_64 rng(seed);
  std::vector<Literal> arguments;
  for (const Shape& shape : c.parameters) {
    arguments.push_back(RowData(shape, c.row_length, specials, rng));
  }
  absl::StatusOr<Literal> expected = EvaluateModule(**module, arguments);
  ASSERT_TRUE(expected.ok()) << expected.status();
  for (const auto& [row_fusion, threads] : {std::pair{true, 1}, {true, 2}, {false, 1}}) {
    SCOPED_TRACE(absl::StrCat("row_fusion=", row_fusion, " threads=", threads));
    Outcome run = CompileAndRun(**module, arguments, row_fusion, threads);
    ASSERT_EQ(run.status, "");
    EXPECT_EQ(run.interpreted, 0);
    if (row_fusion && kRowPrograms) {
      EXPECT_EQ(run.kernels, c.kernels);
    }
    EXPECT_EQ(Compare(*expected, run.result, c.row_length), "");
  }
}

std::string Dims(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

constexpr char kReducers[] = R"(
max_$T {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  ROOT m = $T[] maximum(a, b)
}
add_$T {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  ROOT s = $T[] add(a, b)
}
)";

// Softmax of x (dims `dims`) over dimensions `reduced`.
Case Softmax(const std::string& type, const std::vector<int64_t>& dims,
             const std::vector<int64_t>& reduced) {
  std::vector<int64_t> kept, kept_positions;
  int64_t row_length = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
    bool r = false;
    for (int64_t x : reduced) r = r || x == d;
    if (r) {
      row_length *= dims[d];
    } else {
      kept.push_back(dims[d]);
      kept_positions.push_back(d);
    }
  }
  const std::string m = type + Dims(dims);
  const std::string v = type + Dims(kept);
  const std::string rd = absl::StrJoin(reduced, ",");
  const std::string kd = absl::StrJoin(kept_positions, ",");
  Case c;
  c.hlo = absl::StrReplaceAll(absl::StrCat("HloModule softmax\n", kReducers, R"(
ENTRY e {
  x = $M parameter(0)
  ninf = $T[] constant(-inf)
  zero = $T[] constant(0)
  mx = $V reduce(x, ninf), dimensions={$RD}, to_apply=max_$T
  mxb = $M broadcast(mx), dimensions={$KD}
  sh = $M subtract(x, mxb)
  ex = $M exponential(sh)
  sm = $V reduce(ex, zero), dimensions={$RD}, to_apply=add_$T
  smb = $M broadcast(sm), dimensions={$KD}
  ROOT out = $M divide(ex, smb)
}
)"),
                              {{"$M", m}, {"$V", v}, {"$RD", rd}, {"$KD", kd}, {"$T", type}});
  c.parameters = {Shape::Array(*ParseElementType(type), dims)};
  c.row_length = row_length;
  return c;
}

// Layer norm over the last dimension of x[rows, cols], with scale and
// offset: two reductions per row, the second reading the first.
Case LayerNorm(const std::string& type, int64_t rows, int64_t cols) {
  const std::string m = absl::StrCat(type, "[", rows, ",", cols, "]");
  const std::string r = absl::StrCat(type, "[", rows, "]");
  const std::string c = absl::StrCat(type, "[", cols, "]");
  Case k;
  k.hlo = absl::StrReplaceAll(
      absl::StrCat("HloModule layer_norm\n", kReducers, R"(
ENTRY e {
  x = $M parameter(0)
  g = $C parameter(1)
  b = $C parameter(2)
  zero = $T[] constant(0)
  n = $T[] constant($COLS)
  eps = $T[] constant(1e-5)
  s = $R reduce(x, zero), dimensions={1}, to_apply=add_$T
  nb = $R broadcast(n), dimensions={}
  mean = $R divide(s, nb)
  meanb = $M broadcast(mean), dimensions={0}
  xc = $M subtract(x, meanb)
  sq = $M multiply(xc, xc)
  ss = $R reduce(sq, zero), dimensions={1}, to_apply=add_$T
  var = $R divide(ss, nb)
  epsb = $R broadcast(eps), dimensions={}
  ve = $R add(var, epsb)
  rs = $R rsqrt(ve)
  rsb = $M broadcast(rs), dimensions={0}
  y = $M multiply(xc, rsb)
  gb = $M broadcast(g), dimensions={1}
  bb = $M broadcast(b), dimensions={1}
  yg = $M multiply(y, gb)
  ROOT out = $M add(yg, bb)
}
)"),
      {{"$M", m}, {"$R", r}, {"$C", c}, {"$T", type}, {"$COLS", absl::StrCat(cols)}});
  const ElementType t = *ParseElementType(type);
  k.parameters = {Shape::Array(t, {rows, cols}), Shape::Array(t, {cols}), Shape::Array(t, {cols})};
  k.row_length = cols;
  return k;
}

class RowFusionTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RowFusionTest, SoftmaxShapes) {
  const std::string type = GetParam();
  uint64_t seed = 1;
  // Rows of 1 element, odd lengths, one row, lengths around the vector
  // width, and a length the vector loop does not divide.
  for (const std::vector<int64_t>& dims : std::vector<std::vector<int64_t>>{
           {kManyRows, 1024}, {7, 1}, {1, 1}, {1, 33}, {5, 17}, {9, 16}, {3, 63}, {6, 100}}) {
    SCOPED_TRACE(Dims(dims));
    Check(Softmax(type, dims, {1}), /*specials=*/false, ++seed);
  }
}

TEST_P(RowFusionTest, SoftmaxNanAndInfinities) {
  const std::string type = GetParam();
  Check(Softmax(type, {6, 40}, {1}), /*specials=*/true, 11);
  Check(Softmax(type, {8, 5}, {1}), /*specials=*/true, 12);
}

// Size 0: no rows, and rows of no elements (sums of nothing).
TEST_P(RowFusionTest, SoftmaxEmpty) {
  const std::string type = GetParam();
  for (const std::vector<int64_t>& dims :
       std::vector<std::vector<int64_t>>{{0, 8}, {4, 0}, {0, 0}}) {
    SCOPED_TRACE(Dims(dims));
    Case c = Softmax(type, dims, {1});
    c.kernels = -1;  // Empty arrays need no kernels; the count is not the point.
    absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(c.hlo);
    ASSERT_TRUE(module.ok()) << module.status();
    std::mt19937_64 rng(3);
    std::vector<Literal> arguments = {RowData(c.parameters[0], 0, false, rng)};
    absl::StatusOr<Literal> expected = EvaluateModule(**module, arguments);
    ASSERT_TRUE(expected.ok()) << expected.status();
    for (bool row_fusion : {true, false}) {
      Outcome run = CompileAndRun(**module, arguments, row_fusion, 1);
      ASSERT_EQ(run.status, "");
      EXPECT_EQ(run.interpreted, 0);
      EXPECT_EQ(Compare(*expected, run.result, 0), "");
    }
  }
}

// Rank 3: over the last dimension and over the last two. Over the middle
// one, or dimension 0 of a matrix, the reduces keep the minor dimension: a
// row program would stride, so rule 5 leaves them apart (passes/fuse.cc) and
// the four separate kernels (as with row fusion off) run vectorised across
// the kept minor dimension.
TEST_P(RowFusionTest, SoftmaxOtherDimensions) {
  const std::string type = GetParam();
  Check(Softmax(type, {3, 4, 37}, {2}), false, 21);
  Check(Softmax(type, {3, 5, 7}, {1, 2}), false, 22);
  Case middle = Softmax(type, {4, 9, 6}, {1});
  middle.kernels = 4;
  Check(middle, false, 23);
  Case columns = Softmax(type, {20, 3}, {0});
  columns.kernels = 4;
  Check(columns, false, 24);
}

TEST_P(RowFusionTest, LayerNorm) {
  const std::string type = GetParam();
  Check(LayerNorm(type, kManyRows, 1024), false, 31);
  Check(LayerNorm(type, 7, 33), false, 32);
  Check(LayerNorm(type, 1, 1), false, 33);
  Check(LayerNorm(type, 9, 40), true, 34);
}

INSTANTIATE_TEST_SUITE_P(Types, RowFusionTest, ::testing::Values("f32", "f64", "bf16"));

// JAX's form (models/fixtures): the row results kept as [rows, 1], divided
// there, reshaped and broadcast back; the maximum clamped with -inf.
TEST(RowFusionJaxTest, JaxSoftmaxAndLayerNormAreOneKernelEach) {
  Case softmax;
  softmax.hlo =
      absl::StrCat("HloModule jax_softmax\n", absl::StrReplaceAll(kReducers, {{"$T", "f32"}}), R"(
ENTRY e {
  x = f32[2,4,16,24] parameter(0)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  rmax = f32[2,4,16] reduce(x, ninf), dimensions={3}, to_apply=max_f32
  ninfb = f32[2,4,16] broadcast(ninf), dimensions={}
  m = f32[2,4,16] maximum(rmax, ninfb)
  m1 = f32[2,4,16,1] reshape(m)
  m2 = f32[2,4,16,1] broadcast(m1), dimensions={0,1,2,3}
  m3 = f32[2,4,16] reshape(m2)
  mb = f32[2,4,16,24] broadcast(m3), dimensions={0,1,2}
  sh = f32[2,4,16,24] subtract(x, mb)
  ex = f32[2,4,16,24] exponential(sh)
  s = f32[2,4,16] reduce(ex, zero), dimensions={3}, to_apply=add_f32
  s1 = f32[2,4,16,1] reshape(s)
  s2 = f32[2,4,16,1] broadcast(s1), dimensions={0,1,2,3}
  s3 = f32[2,4,16] reshape(s2)
  sb = f32[2,4,16,24] broadcast(s3), dimensions={0,1,2}
  ROOT out = f32[2,4,16,24] divide(ex, sb)
}
)");
  softmax.parameters = {Shape::Array(ElementType::kF32, {2, 4, 16, 24})};
  softmax.row_length = 24;
  Check(softmax, true, 41);

  Case norm;
  norm.hlo = absl::StrCat("HloModule jax_layer_norm\n",
                          absl::StrReplaceAll(kReducers, {{"$T", "f32"}}), R"(
ENTRY e {
  x = f32[2,16,64] parameter(0)
  zero = f32[] constant(0)
  s = f32[2,16] reduce(x, zero), dimensions={2}, to_apply=add_f32
  s1 = f32[2,16,1] reshape(s)
  n = f32[] constant(64)
  nb = f32[2,16,1] broadcast(n), dimensions={}
  mean = f32[2,16,1] divide(s1, nb)
  mean1 = f32[2,16,1] broadcast(mean), dimensions={0,1,2}
  mean2 = f32[2,16] reshape(mean1)
  meanb = f32[2,16,64] broadcast(mean2), dimensions={0,1}
  xc = f32[2,16,64] subtract(x, meanb)
  sq = f32[2,16,64] multiply(xc, xc)
  ss = f32[2,16] reduce(sq, zero), dimensions={2}, to_apply=add_f32
  ss1 = f32[2,16,1] reshape(ss)
  var = f32[2,16,1] divide(ss1, nb)
  eps = f32[] constant(1e-05)
  epsb = f32[2,16,1] broadcast(eps), dimensions={}
  ve = f32[2,16,1] add(var, epsb)
  rs = f32[2,16,1] rsqrt(ve)
  rs1 = f32[2,16,1] broadcast(rs), dimensions={0,1,2}
  rs2 = f32[2,16] reshape(rs1)
  rsb = f32[2,16,64] broadcast(rs2), dimensions={0,1}
  ROOT y = f32[2,16,64] multiply(xc, rsb)
}
)");
  norm.parameters = {Shape::Array(ElementType::kF32, {2, 16, 64})};
  norm.row_length = 64;
  Check(norm, false, 42);
}

#if defined(__x86_64__)
// Streaming rows through memory (next-row prefetch, non-temporal stores) is
// the x86-64 lowering's (PlanRowStreaming); the AArch64 target has none, and
// its row programs are checked by the tests above.

// A case's module, seeded row data with special values, the evaluator's
// result, and the arguments flattened into raw buffers for Execute.
struct RowsOnRawBuffers {
  std::unique_ptr<Module> module;
  std::vector<Literal> arguments;
  std::optional<Literal> expected;
  std::vector<std::vector<uint8_t>> flat;
  std::vector<const void*> parameters;
};

void PrepareRowsOnRawBuffers(const Case& c, uint64_t seed, RowsOnRawBuffers* run) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(c.hlo);
  ASSERT_TRUE(module.ok()) << module.status();
  run->module = *std::move(module);
  std::mt19937_64 rng(seed);
  for (const Shape& shape : c.parameters) {
    run->arguments.push_back(RowData(shape, c.row_length, /*specials=*/true, rng));
  }
  absl::StatusOr<Literal> expected = EvaluateModule(*run->module, run->arguments);
  ASSERT_TRUE(expected.ok()) << expected.status();
  run->expected = *std::move(expected);
  for (const Literal& argument : run->arguments) {
    run->flat.push_back(runtime::FlattenLiteral(argument));
  }
  for (const std::vector<uint8_t>& bytes : run->flat) run->parameters.push_back(bytes.data());
}

// Rows streamed through memory (x86-64 PlanRowStreaming): with an output of
// 16 MiB or more, the passes after the first prefetch the next row and the
// output goes through non-temporal stores when its rows are vector aligned,
// ordinary ones when not. Both versions, on 1 and 2 threads, must match the
// evaluator; the output is written at a 64-byte boundary and one element
// past it (raw buffers: Execute takes any alignment), on every instruction
// set of the host (the vector width sets the alignment needed).
void CheckStreamed(const Case& c, uint64_t seed) {
  SCOPED_TRACE(c.hlo.substr(0, c.hlo.find('\n')));
  RowsOnRawBuffers run;
  PrepareRowsOnRawBuffers(c, seed, &run);
  if (::testing::Test::HasFatalFailure()) return;
  const std::unique_ptr<Module>* module = &run.module;
  const Literal* expected = &*run.expected;
  const std::vector<const void*>& parameters = run.parameters;
  const Shape& shape = expected->shape();
  const int64_t bytes = static_cast<int64_t>(runtime::FlattenLiteral(*expected).size());
  const int64_t element = static_cast<int64_t>(ByteWidth(shape.element_type()));
  std::vector<uint8_t> storage(static_cast<size_t>(bytes + 64 + element));
  uint8_t* aligned = storage.data();
  while (reinterpret_cast<uintptr_t>(aligned) % 64 != 0) ++aligned;
  const std::vector<Isa> host = testing::HostIsas();
  for (const auto& [isa, threads] : {std::pair{Isa::kAuto, 1}, {Isa::kAuto, 2}, {Isa::kSse4, 1},
                                     {Isa::kAvx2, 1}}) {
    if (isa != Isa::kAuto && std::find(host.begin(), host.end(), isa) == host.end()) continue;
    CompileOptions options;
    options.isa = isa;
    options.threads = threads;
    options.cache = false;
    options.collect_asm = true;
    CompileReport report;
    absl::StatusOr<std::unique_ptr<runtime::Executable>> exe = Compile(**module, options, &report);
    ASSERT_TRUE(exe.ok()) << exe.status();
    EXPECT_TRUE(report.interpreted_steps.empty());
    {
      ASSERT_EQ(report.kernels.size(), 1u);
      EXPECT_NE(report.kernels[0].asm_text.find("prefetcht1"), std::string::npos);
      if (isa != Isa::kSse4) {
        EXPECT_NE(report.kernels[0].asm_text.find("prefetchw"), std::string::npos);
      }
      EXPECT_NE(report.kernels[0].asm_text.find("movntp"), std::string::npos);
      EXPECT_NE(report.kernels[0].asm_text.find("sfence"), std::string::npos);
    }
    for (int64_t offset : {int64_t{0}, element}) {
      SCOPED_TRACE(absl::StrCat("isa=", IsaName(isa), " threads=", threads, " offset=", offset));
      uint8_t* out = aligned + offset;
      std::memset(out, 0xFF, static_cast<size_t>(bytes));
      ASSERT_TRUE((*exe)->Execute(parameters, out).ok());
      EXPECT_EQ(Compare(*expected, runtime::UnflattenLiteral(shape, out), c.row_length), "");
    }
  }
}

// The smallest size that streams (the evaluator takes most of the time:
// under the sanitizers this test was most of a four-minute unit test). Rows
// whose alignment changes from row to row (the kernel switching between its
// two versions), f64 and layer norm stream in AnyOutputAlignment below, with
// every row program forced to stream; this case checks that the threshold
// itself picks streaming, and the output against the evaluator at full size.
TEST(RowFusionStreamingTest, LargeSoftmax) {
  CheckStreamed(Softmax("f32", {1024, 4096}, {1}), 61);
}

// Row programs streamed whatever their sizes (x64::StreamAllRowsForTesting)
// while in scope, so that small arrays run the streaming code.
class StreamAllRows {
 public:
  StreamAllRows() { x64::StreamAllRowsForTesting(true); }
  ~StreamAllRows() { x64::StreamAllRowsForTesting(false); }
  StreamAllRows(const StreamAllRows&) = delete;
  StreamAllRows& operator=(const StreamAllRows&) = delete;
};

// Streaming with any output alignment: a pass that stores and accumulates
// nothing runs each row's elements up to the first vector-aligned output
// element as scalar iterations, then streams (PlanRowStreaming, peel_).
// `c` compiled with every row streamed, on each instruction set of the host
// (1 thread) and on 2 threads, writes its output at a 64-byte boundary and
// at 1..17 elements past it (rows then start at every alignment, and
// change it row by row when their length is odd), and half an element past
// it (never aligned: ordinary stores). The aligned output must match the
// evaluator, every other output must be the same bits, and so must the
// same module compiled without streaming; no byte around the output may
// change.
void CheckAnyAlignment(const Case& c, uint64_t seed) {
  SCOPED_TRACE(c.hlo.substr(0, c.hlo.find('\n')));
  RowsOnRawBuffers run;
  PrepareRowsOnRawBuffers(c, seed, &run);
  if (::testing::Test::HasFatalFailure()) return;
  const std::unique_ptr<Module>* module = &run.module;
  const Literal* expected = &*run.expected;
  const std::vector<const void*>& parameters = run.parameters;
  const Shape& shape = expected->shape();
  const size_t bytes = runtime::FlattenLiteral(*expected).size();
  const int64_t element = static_cast<int64_t>(ByteWidth(shape.element_type()));
  std::vector<int64_t> offsets;
  for (int64_t k = 0; k <= 17; ++k) offsets.push_back(k * element);
  offsets.push_back(element / 2);
  constexpr size_t kGuard = 256;
  std::vector<uint8_t> storage(bytes + 2 * kGuard + 64);
  uint8_t* base = storage.data() + kGuard;
  while (reinterpret_cast<uintptr_t>(base) % 64 != 0) ++base;
  auto compile = [&](Isa isa, int threads, bool stream,
                     CompileReport* report) -> std::unique_ptr<runtime::Executable> {
    std::optional<StreamAllRows> all;
    if (stream) all.emplace();
    CompileOptions options;
    options.isa = isa;
    options.threads = threads;
    options.cache = false;
    options.collect_asm = true;
    absl::StatusOr<std::unique_ptr<runtime::Executable>> exe = Compile(**module, options, report);
    EXPECT_TRUE(exe.ok()) << exe.status();
    return exe.ok() ? std::move(*exe) : nullptr;
  };
  std::vector<std::pair<Isa, int>> runs;
  for (Isa isa : testing::HostIsas()) runs.push_back({isa, 1});
  runs.push_back({Isa::kAuto, 2});
  for (const auto& [isa, threads] : runs) {
    SCOPED_TRACE(absl::StrCat("isa=", IsaName(isa), " threads=", threads));
    CompileReport report;
    std::unique_ptr<runtime::Executable> streamed = compile(isa, threads, true, &report);
    CompileReport plain_report;
    std::unique_ptr<runtime::Executable> plain = compile(isa, threads, false, &plain_report);
    ASSERT_NE(streamed, nullptr);
    ASSERT_NE(plain, nullptr);
    EXPECT_TRUE(report.interpreted_steps.empty());
    if (c.row_length >= 16 && shape.element_count() > 0) {
      ASSERT_EQ(report.kernels.size(), 1u);
      EXPECT_NE(report.kernels[0].asm_text.find("movntp"), std::string::npos);
      EXPECT_EQ(plain_report.kernels[0].asm_text.find("movntp"), std::string::npos);
    }
    std::vector<uint8_t> reference(bytes);
    std::memset(base, 0xA5, bytes);
    ASSERT_TRUE(plain->Execute(parameters, base).ok());
    if (bytes > 0) std::memcpy(reference.data(), base, bytes);
    EXPECT_EQ(Compare(*expected, runtime::UnflattenLiteral(shape, reference.data()), c.row_length),
              "");
    for (int64_t offset : offsets) {
      SCOPED_TRACE(absl::StrCat("offset=", offset));
      std::fill(storage.begin(), storage.end(), uint8_t{0xA5});
      uint8_t* out = base + offset;
      ASSERT_TRUE(streamed->Execute(parameters, out).ok());
      EXPECT_TRUE(bytes == 0 || std::memcmp(out, reference.data(), bytes) == 0)
          << Compare(*expected, runtime::UnflattenLiteral(shape, out), c.row_length);
      const bool untouched =
          std::all_of(storage.data(), out, [](uint8_t b) { return b == 0xA5; }) &&
          std::all_of(out + bytes, storage.data() + storage.size(),
                      [](uint8_t b) { return b == 0xA5; });
      EXPECT_TRUE(untouched) << "a byte outside the output changed";
    }
  }
}

// Softmax and layer norm, f32 and f64: rows of 1, around the vector widths
// (15, 16, 17), 1000 and 4097 (odd: each row starts at another alignment),
// and size 0 (no rows; rows of no elements).
TEST(RowFusionStreamingTest, AnyOutputAlignment) {
  uint64_t seed = 70;
  for (const std::vector<int64_t>& dims : std::vector<std::vector<int64_t>>{
           {9, 1}, {7, 15}, {7, 16}, {9, 17}, {5, 1000}, {3, 4097}, {0, 16}, {4, 0}}) {
    SCOPED_TRACE(Dims(dims));
    CheckAnyAlignment(Softmax("f32", dims, {1}), ++seed);
  }
  CheckAnyAlignment(Softmax("f64", {9, 17}, {1}), ++seed);
  CheckAnyAlignment(Softmax("f64", {3, 1001}, {1}), ++seed);
  CheckAnyAlignment(LayerNorm("f32", 9, 17), ++seed);
  CheckAnyAlignment(LayerNorm("f32", 3, 4097), ++seed);
  CheckAnyAlignment(LayerNorm("f64", 5, 1000), ++seed);
}
#endif

// What must not fuse: a row maximum that is also a result (the reduce has
// another user: never computed twice), and a row sum read along the
// reduced dimension (broadcast over the other axis). Both still match.
TEST(RowFusionJaxTest, ReducesWithOtherReadersStayKernels) {
  Case shared;
  shared.hlo =
      absl::StrCat("HloModule shared\n", absl::StrReplaceAll(kReducers, {{"$T", "f32"}}), R"(
ENTRY e {
  x = f32[8,32] parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[8] reduce(x, ninf), dimensions={1}, to_apply=max_f32
  mxb = f32[8,32] broadcast(mx), dimensions={0}
  sh = f32[8,32] subtract(x, mxb)
  ROOT t = (f32[8,32], f32[8]) tuple(sh, mx)
}
)");
  shared.parameters = {Shape::Array(ElementType::kF32, {8, 32})};
  shared.row_length = 32;
  shared.kernels = 2;
  Check(shared, false, 51);

  Case across;
  across.hlo =
      absl::StrCat("HloModule across\n", absl::StrReplaceAll(kReducers, {{"$T", "f32"}}), R"(
ENTRY e {
  x = f32[16,16] parameter(0)
  zero = f32[] constant(0)
  s = f32[16] reduce(x, zero), dimensions={1}, to_apply=add_f32
  sb = f32[16,16] broadcast(s), dimensions={1}
  ROOT d = f32[16,16] subtract(x, sb)
}
)");
  across.parameters = {Shape::Array(ElementType::kF32, {16, 16})};
  across.row_length = 16;
  across.kernels = 2;
  Check(across, false, 52);
}

}  // namespace
}  // namespace xjit::jit
