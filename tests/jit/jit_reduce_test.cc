// Reduction and multi-output kernels (jit/kernel/fusion_emitter.h, the x86-64
// lowering of accumulators), called directly: EmitFusionKernel /
// EmitInstructionKernel, ExpandMath, Target::Lower, then the kernel runs on
// buffers in three ranges of its outer loop and each output is compared
// with the evaluator's. Bit exact (any NaN equals any NaN) except where a
// test says otherwise: float add/multiply sums run on data whose sums are
// exact in any order (small integers, powers of two), so reassociation
// cannot change them; one test compares random data within n*eps*sum|x|.
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "ir/float_format.h"
#include "jit/kernel/fusion_emitter.h"
#include "jit/kernel/vector_math.h"
#include "jit/target.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

enum class Data {
  kEdge,      // RandomLiteral: NaN, infinities, -0, extremes, integer limits.
  kSmall,     // Integers in [-8, 8] (floats too): sums exact in any order.
  kPowers,    // +-0.5, +-1, +-2: products exact in any order.
  kUniform,   // Floats uniform in [-1, 1].
};

Literal MakeArgument(const Shape& shape, Data data, std::mt19937_64& rng) {
  if (data == Data::kEdge || !IsFloat(shape.element_type())) {
    if (data == Data::kEdge || shape.element_type() == ElementType::kPred) {
      return RandomLiteral(shape, rng);
    }
  }
  Literal literal(shape);
  const ElementType type = shape.element_type();
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    double v = 0;
    switch (data) {
      case Data::kSmall: v = static_cast<double>(static_cast<int64_t>(rng() % 17) - 8); break;
      case Data::kPowers: {
        static const double kValues[] = {0.5, -0.5, 1, -1, 2, -2};
        v = kValues[rng() % 6];
        break;
      }
      default: v = unit(rng); break;
    }
    if (IsFloat(type)) {
      uint64_t bits;
      if (type == ElementType::kF64) {
        std::memcpy(&bits, &v, 8);
      } else {
        bits = DoubleToFloatBits(type, v);
      }
      literal.SetBitsLinear(i, bits);
    } else {
      literal.SetBitsLinear(i, static_cast<uint64_t>(static_cast<int64_t>(v)) &
                                   (BitWidth(type) >= 64 ? ~uint64_t{0}
                                                         : (uint64_t{1} << BitWidth(type)) - 1));
    }
  }
  return literal;
}

struct CheckResult {
  int lanes = 0;
  std::string program;
};

// Emits, lowers and runs the entry root of `hlo`; compares with the
// evaluator. `rel_tolerance` > 0: floats may differ by rel_tolerance *
// sum |inputs| (absolute, the same bound for every element).
::testing::AssertionResult RunKernel(const std::string& hlo, Isa isa, Data data, uint64_t seed,
                                     CheckResult* result = nullptr, double tolerance = 0) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  if (!module.ok()) return ::testing::AssertionFailure() << "parse: " << module.status();
  const Instruction& root = *(*module)->entry()->root();
  absl::StatusOr<KernelSpec> spec = root.opcode() == Opcode::kFusion ? EmitFusionKernel(root)
                                                                      : EmitInstructionKernel(root);
  if (!spec.ok()) return ::testing::AssertionFailure() << "emit: " << spec.status();
  std::mt19937_64 rng(seed);
  std::vector<Literal> arguments;
  for (const Instruction* parameter : (*module)->entry()->parameters()) {
    arguments.push_back(MakeArgument(parameter->shape(), data, rng));
  }
  absl::StatusOr<Literal> expected = EvaluateModule(**module, arguments);
  if (!expected.ok()) return ::testing::AssertionFailure() << "evaluator: " << expected.status();
  TargetOptions target_options;
  target_options.isa = isa;
  absl::StatusOr<std::unique_ptr<Target>> target = CreateHostTarget(target_options);
  if (!target.ok()) return ::testing::AssertionFailure() << target.status();
  MathOptions math;
  math.fused_multiply_add = (*target)->HasFusedMultiplyAdd();
  KernelProgram program = spec->program;
  ExpandMath(&program, math);
  absl::StatusOr<LoweredKernel> lowered = (*target)->Lower(program);
  if (!lowered.ok()) {
    return ::testing::AssertionFailure() << "lower: " << lowered.status() << "\n"
                                         << program.ToString();
  }
  if (result != nullptr) {
    result->lanes = lowered->vector_lanes;
    result->program = program.ToString();
  }
  std::vector<const Literal*> expected_outputs;
  if (expected->shape().IsTuple()) {
    for (int64_t i = 0; i < expected->shape().tuple_size(); ++i) {
      expected_outputs.push_back(&expected->element(i));
    }
  } else {
    expected_outputs.push_back(&*expected);
  }
  if (spec->output_count != static_cast<int>(expected_outputs.size()) ||
      program.output_count != spec->output_count) {
    return ::testing::AssertionFailure() << "output count " << spec->output_count;
  }
  const Shape& root_shape = root.shape();
  std::vector<Literal> outputs;
  for (int k = 0; k < spec->output_count; ++k) {
    outputs.emplace_back(root_shape.IsTuple() ? root_shape.tuple_shapes(k) : root_shape);
  }
  std::vector<void*> buffers;
  for (const Instruction* input : spec->inputs) {
    if (input->opcode() == Opcode::kParameter && input->parent() == (*module)->entry()) {
      buffers.push_back(arguments[input->attrs().parameter_number].data().data());
    } else if (input->opcode() == Opcode::kConstant) {
      buffers.push_back(const_cast<uint8_t*>(input->literal().data().data()));
    } else {
      return ::testing::AssertionFailure() << "unexpected input " << input->name();
    }
  }
  for (Literal& output : outputs) buffers.push_back(output.data().data());
  // Three ranges of the outer loop (aligned as the driver aligns them).
  const std::vector<int64_t>& extents = program.loop_extents;
  const int64_t outer = extents.empty() ? 1 : extents[0];
  const int64_t align = extents.size() == 1 ? 64 : 1;
  auto cut = [&](int64_t at) { return std::min(outer, (at + align - 1) / align * align); };
  const int64_t cuts[] = {0, cut(outer / 3), cut(2 * outer / 3 + 1), outer};
  for (int k = 0; k < 3; ++k) {
    if (cuts[k] < cuts[k + 1] || (extents.empty() && k == 0)) {
      lowered->function(buffers.data(), cuts[k], extents.empty() ? 1 : cuts[k + 1]);
    }
  }
  double abs_sum = 0;
  if (tolerance > 0) {
    for (const Literal& argument : arguments) {
      for (int64_t i = 0; i < argument.element_count(); ++i) {
        abs_sum += std::fabs(FloatBitsToDouble(argument.shape().element_type(),
                                               argument.GetBitsLinear(i)));
      }
    }
  }
  for (int k = 0; k < spec->output_count; ++k) {
    const Literal& want = *expected_outputs[k];
    std::string difference;
    if (tolerance > 0) {
      const ElementType type = want.shape().element_type();
      for (int64_t i = 0; i < want.element_count() && difference.empty(); ++i) {
        const double e = FloatBitsToDouble(type, want.GetBitsLinear(i));
        const double a = FloatBitsToDouble(type, outputs[k].GetBitsLinear(i));
        if (!(std::fabs(e - a) <= tolerance * abs_sum)) {
          difference = absl::StrCat("element ", i, ": ", a, " vs ", e);
        }
      }
    } else {
      difference = Difference(want, outputs[k]);
    }
    if (!difference.empty()) {
      return ::testing::AssertionFailure() << "isa " << IsaName(isa) << " seed " << seed
                                           << " output " << k << ": " << difference << "\n"
                                           << program.ToString();
    }
  }
  return ::testing::AssertionSuccess();
}

std::string Reducer(const std::string& name, const std::string& type, const std::string& op) {
  return absl::StrCat(name, " {\n  a = ", type, "[] parameter(0)\n  b = ", type,
                      "[] parameter(1)\n  ROOT r = ", type, "[] ", op, "(a, b)\n}\n");
}

// A module whose root reduces p0 (of `input`) over `dims` with `op`,
// starting from parameter p1.
std::string ReduceModule(const std::string& type, const std::string& input,
                         const std::string& output, const std::string& dims,
                         const std::string& op) {
  return absl::StrCat("HloModule m\n", Reducer("red", type, op), "ENTRY e {\n  p0 = ", type,
                      input, " parameter(0)\n  p1 = ", type, "[] parameter(1)\n  ROOT r = ", type,
                      output, " reduce(p0, p1), dimensions={", dims, "}, to_apply=red\n}\n");
}

struct ReduceCase {
  std::string input;
  std::string output;
  std::string dims;
};

// Shapes: scalars, empty, size-1 dimensions, vector tails, reductions over
// minor, major, middle and all dimensions, non-default layouts.
const std::vector<ReduceCase>& Cases() {
  static const std::vector<ReduceCase> cases = {
      {"[]", "[]", ""},
      {"[0]", "[]", "0"},
      {"[1]", "[]", "0"},
      {"[37]", "[]", "0"},
      {"[7,33]", "[7]", "1"},
      {"[7,33]", "[33]", "0"},
      {"[7,33]", "[]", "0,1"},
      {"[7,33]{0,1}", "[7]", "1"},
      {"[7,33]{0,1}", "[33]", "0"},
      {"[3,0,4]", "[3,4]", "1"},
      {"[3,0,4]", "[3,0]", "2"},
      {"[4,5,6]", "[4,6]", "1"},
      {"[4,5,6]{0,2,1}", "[4,6]{0,1}", "1"},
      {"[4,5,6]{1,0,2}", "[5]", "0,2"},
      {"[4,5,6]", "[]", "0,1,2"},
      {"[2,1,9]", "[2,9]", "1"},
      {"[2,1,9]", "[1]", "0,2"},
      {"[3,67]", "[3]", "1"},
      {"[67,3]", "[3]", "0"},
      {"[5,2,19]{2,1,0}", "[5]", "1,2"},
  };
  return cases;
}

class JitReduce : public ::testing::TestWithParam<Isa> {
 protected:
  void Check(const std::string& hlo, Data data, int seeds = 2) {
    for (int seed = 1; seed <= seeds; ++seed) {
      EXPECT_TRUE(RunKernel(hlo, GetParam(), data, seed)) << hlo;
    }
  }
};

TEST_P(JitReduce, FloatMinMaxEdgeValues) {
  for (const char* type : {"f32", "f64", "f16", "bf16"}) {
    for (const char* op : {"maximum", "minimum"}) {
      for (const ReduceCase& c : Cases()) {
        Check(ReduceModule(type, c.input, c.output, c.dims, op), Data::kEdge, 3);
      }
    }
  }
}

TEST_P(JitReduce, FloatSumsAndProducts) {
  for (const char* type : {"f32", "f64", "f16", "bf16"}) {
    for (const ReduceCase& c : Cases()) {
      Check(ReduceModule(type, c.input, c.output, c.dims, "add"), Data::kSmall);
      Check(ReduceModule(type, c.input, c.output, c.dims, "multiply"), Data::kPowers);
    }
  }
}

TEST_P(JitReduce, IntegersAndPred) {
  for (const char* type : {"s8", "s32", "u64", "u8", "s64"}) {
    for (const char* op : {"add", "multiply", "maximum", "minimum", "and", "xor"}) {
      for (const ReduceCase& c : Cases()) {
        Check(ReduceModule(type, c.input, c.output, c.dims, op), Data::kEdge);
      }
    }
  }
  for (const char* op : {"and", "or", "xor"}) {
    for (const ReduceCase& c : Cases()) {
      Check(ReduceModule("pred", c.input, c.output, c.dims, op), Data::kEdge);
    }
  }
}

// A reducer that is not one binary op: the evaluator's order is kept.
TEST_P(JitReduce, GeneralReducer) {
  const std::string hlo = R"(HloModule m
red {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = f32[] constant(0.5)
  m = f32[] multiply(b, c)
  s = f32[] add(a, m)
  ROOT r = f32[] maximum(s, a)
}
ENTRY e {
  p0 = f32[9,13]{0,1} parameter(0)
  p1 = f32[] parameter(1)
  ROOT r = f32[9] reduce(p0, p1), dimensions={1}, to_apply=red
})";
  Check(hlo, Data::kUniform);
  Check(hlo, Data::kEdge);
}

// Reducers that ignore an argument, return a constant or swap their
// accumulators (the accumulator update is a parallel copy).
TEST_P(JitReduce, DegenerateReducers) {
  const std::string first = R"(HloModule m
red {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT r = s32[] copy(b)
}
ENTRY e {
  p0 = s32[6,11] parameter(0)
  p1 = s32[] parameter(1)
  ROOT r = s32[6] reduce(p0, p1), dimensions={1}, to_apply=red
})";
  Check(first, Data::kEdge);
  Check(absl::StrReplaceAll(first, {{"copy(b)", "copy(a)"}}), Data::kEdge);
  Check(absl::StrReplaceAll(first, {{"ROOT r = s32[] copy(b)", "ROOT r = s32[] constant(7)"}}),
        Data::kEdge);
  const std::string swap = R"(HloModule m
red {
  a0 = f32[] parameter(0)
  a1 = s8[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = s8[] parameter(3)
  c0 = f32[] convert(a1)
  c1 = s8[] convert(a0)
  s0 = f32[] add(c0, b0)
  s1 = s8[] add(c1, b1)
  ROOT r = (f32[], s8[]) tuple(s0, s1)
}
fused {
  x = f32[4,9,3]{0,1,2} parameter(0)
  y = s8[4,9,3] parameter(1)
  i0 = f32[] constant(1)
  i1 = s8[] constant(-3)
  ROOT r = (f32[9], s8[9]) reduce(x, y, i0, i1), dimensions={0,2}, to_apply=red
}
ENTRY e {
  p0 = f32[4,9,3]{0,1,2} parameter(0)
  p1 = s8[4,9,3] parameter(1)
  ROOT f = (f32[9], s8[9]) fusion(p0, p1), kind=kInput, calls=fused
})";
  Check(swap, Data::kSmall);
}

// A kInput fusion whose root is a variadic argmax reduce (value, then the
// lowest index among equal values) over dimension 1 of f32`input`, the
// indices an s32`iota` along that dimension; results f32`result`, s32`result`.
std::string ArgmaxFusion(const std::string& input, const std::string& iota,
                         const std::string& result) {
  return absl::StrCat(R"(HloModule m
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  take_a = pred[] or(gt, tie)
  v = f32[] select(take_a, av, bv)
  i = s32[] select(take_a, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
fused {
  x = f32)", input, R"( parameter(0)
  io = s32)", iota, R"( iota(), iota_dimension=1
  c0 = f32[] constant(-inf)
  c1 = s32[] constant(-1)
  ROOT r = (f32)", result, ", s32", result,
                                         R"() reduce(x, io, c0, c1), dimensions={1}, to_apply=argmax
}
ENTRY e {
  p0 = f32)", input, R"( parameter(0)
  ROOT f = (f32)", result, ", s32", result, R"() fusion(p0), kind=kInput, calls=fused
})");
}

TEST_P(JitReduce, VariadicArgmax) {
  struct Case {
    const char* input;
    const char* iota;
    const char* result;
  };
  for (const Case& c : {Case{"[5,37]", "[5,37]", "[5]"}, Case{"[5,37]{0,1}", "[5,37]", "[5]"},
                        Case{"[37,5]", "[37,5]", "[37]"}, Case{"[1,1]", "[1,1]", "[1]"},
                        Case{"[5,0]", "[5,0]", "[5]"}}) {
    const std::string hlo = ArgmaxFusion(c.input, c.iota, c.result);
    Check(hlo, Data::kSmall);
    Check(hlo, Data::kEdge);
  }
}

std::string Add(const std::string& type) { return Reducer("add", type, "add"); }

TEST_P(JitReduce, SumOfSquaresFusion) {
  for (const char* dims : {"[16,1024]", "[3,1001]", "[1,7]"}) {
    const std::string hlo = absl::StrCat("HloModule m\n", Add("f32"), R"(fused {
  x = f32)", dims, R"( parameter(0)
  sq = f32)", dims, R"( multiply(x, x)
  z = f32[] constant(0)
  ROOT r = f32[)", std::string(dims).substr(1, std::string(dims).find(',') - 1), R"(] reduce(sq, z), dimensions={1}, to_apply=add
}
ENTRY e {
  p0 = f32)", dims, R"( parameter(0)
  ROOT f = f32[)", std::string(dims).substr(1, std::string(dims).find(',') - 1), R"(] fusion(p0), kind=kInput, calls=fused
})");
    CheckResult result;
    EXPECT_TRUE(RunKernel(hlo, GetParam(), Data::kSmall, 1, &result)) << hlo;
    if (std::string(dims) != "[1,7]") {
      EXPECT_GT(result.lanes, 1) << result.program;
    }
  }
}

// Softmax's two reductions as the fuse pass forms them: the row maximum,
// and the row sum of exp(x - max) with the maximum broadcast in.
TEST_P(JitReduce, SoftmaxFusions) {
  const std::string max_hlo = absl::StrCat("HloModule m\n", Reducer("max", "f32", "maximum"),
                                           R"(fused {
  x = f32[8,1024] parameter(0)
  z = f32[] constant(-inf)
  ROOT r = f32[8] reduce(x, z), dimensions={1}, to_apply=max
}
ENTRY e {
  p0 = f32[8,1024] parameter(0)
  ROOT f = f32[8] fusion(p0), kind=kInput, calls=fused
})");
  CheckResult result;
  EXPECT_TRUE(RunKernel(max_hlo, GetParam(), Data::kEdge, 1, &result));
  EXPECT_GT(result.lanes, 1) << result.program;
  const std::string sum_hlo = absl::StrCat("HloModule m\n", Add("f32"), R"(fused {
  x = f32[8,1021] parameter(0)
  m = f32[8] parameter(1)
  b = f32[8,1021] broadcast(m), dimensions={0}
  d = f32[8,1021] subtract(x, b)
  e = f32[8,1021] exponential(d)
  z = f32[] constant(0)
  ROOT r = f32[8] reduce(e, z), dimensions={1}, to_apply=add
}
ENTRY e {
  p0 = f32[8,1021] parameter(0)
  p1 = f32[8] parameter(1)
  ROOT f = f32[8] fusion(p0, p1), kind=kInput, calls=fused
})");
  // exp is within 4 ulp and the sum reassociated: n * 8 eps relative.
  EXPECT_TRUE(RunKernel(sum_hlo, GetParam(), Data::kUniform, 1, &result, 1021 * 8 * 6e-8));
  EXPECT_GT(result.lanes, 1) << result.program;
}

// Per-row values (a pred mask, a float scale) broadcast into a vectorised
// row reduction.
TEST_P(JitReduce, RowValuesBroadcastIntoTheLoop) {
  for (const char* type : {"f32", "f64"}) {
    const std::string hlo = absl::StrReplaceAll(absl::StrCat("HloModule m\n", Add("T"), R"(fused {
  x = T[5,45] parameter(0)
  m = pred[5] parameter(1)
  s = T[5] parameter(2)
  mb = pred[5,45] broadcast(m), dimensions={0}
  sb = T[5,45] broadcast(s), dimensions={0}
  z = T[] constant(0)
  zb = T[5,45] broadcast(z), dimensions={}
  xs = T[5,45] multiply(x, sb)
  v = T[5,45] select(mb, xs, zb)
  ROOT r = T[5] reduce(v, z), dimensions={1}, to_apply=add
}
ENTRY e {
  p0 = T[5,45] parameter(0)
  p1 = pred[5] parameter(1)
  p2 = T[5] parameter(2)
  ROOT f = T[5] fusion(p0, p1, p2), kind=kInput, calls=fused
})"), {{"T[", absl::StrCat(type, "[")}});
    for (int seed = 1; seed <= 3; ++seed) {
      CheckResult result;
      EXPECT_TRUE(RunKernel(hlo, GetParam(), Data::kSmall, seed, &result)) << hlo;
      EXPECT_GT(result.lanes, 1) << result.program;
    }
  }
}

// Random data: the reassociated sum within n * eps * sum |x|.
TEST_P(JitReduce, SumWithinTolerance) {
  for (const char* type : {"f32", "f64"}) {
    const double eps = std::string(type) == "f32" ? 6e-8 : 1.2e-16;
    for (const ReduceCase& c : {ReduceCase{"[4,1000]", "[4]", "1"},
                                ReduceCase{"[3001]", "[]", "0"},
                                ReduceCase{"[100,30]", "[30]", "0"}}) {
      CheckResult result;
      EXPECT_TRUE(RunKernel(ReduceModule(type, c.input, c.output, c.dims, "add"), GetParam(),
                            Data::kUniform, 7, &result, 3000 * eps));
      EXPECT_GT(result.lanes, 1) << result.program;
    }
  }
}

// Rows shorter than a vector (a sampler's 2 coordinates per particle, 5
// classes per draw): lanes across the kept dimension, each lane gathering
// its row at stride r (AVX2 and AVX-512; the row strategy where a row fills
// a vector). Row lengths 1..17 cover every gather stride and the switch to
// the row strategy; outer sizes every tail; max/min on NaN, infinities and
// -0 (each lane reduces in the scalar order, so results are bit exact).
TEST_P(JitReduce, ShortRowsGatherAcrossOutputs) {
  const bool gathers = GetParam() == Isa::kAvx2 || GetParam() == Isa::kAvx512;
  for (int64_t r = 1; r <= 17; ++r) {
    for (int64_t n : {0, 1, 7, 37}) {
      const std::string in = absl::StrCat("[", n, ",", r, "]");
      const std::string out = absl::StrCat("[", n, "]");
      SCOPED_TRACE(in);
      for (const char* type : {"f32", "f64", "s32"}) {
        for (const char* op : {"add", "maximum", "minimum"}) {
          const Data data = std::string(op) == "add" ? Data::kSmall : Data::kEdge;
          CheckResult result;
          EXPECT_TRUE(RunKernel(ReduceModule(type, in, out, "1", op), GetParam(), data, 3,
                                &result));
          if (gathers && n == 37) {
            EXPECT_GT(result.lanes, 1) << type << " " << op << "\n" << result.program;
          }
        }
      }
    }
  }
  // A kInput fusion of the kind the samplers reduce (an elementwise chain
  // with a select on a pred over [n, 2], squared and summed per row) and an
  // argmax over 5 classes: both vectorised where gathers exist.
  for (int64_t n : {0, 1, 19, 256}) {
    const std::string s = absl::StrCat("[", n, ",2]");
    const std::string hlo = absl::StrCat("HloModule m\n", Add("f32"), R"(fused {
  x = f32)", s, R"( parameter(0)
  y = f32)", s, R"( parameter(1)
  c = pred)", s, R"( parameter(2)
  a = f32)", s, R"( abs(x)
  t = f32)", s, R"( select(c, a, y)
  m = f32)", s, R"( multiply(t, t)
  z = f32[] constant(0)
  ROOT r = f32[)", n, R"(] reduce(m, z), dimensions={1}, to_apply=add
}
ENTRY e {
  p0 = f32)", s, R"( parameter(0)
  p1 = f32)", s, R"( parameter(1)
  p2 = pred)", s, R"( parameter(2)
  ROOT f = f32[)", n, R"(] fusion(p0, p1, p2), kind=kInput, calls=fused
})");
    for (Data data : {Data::kSmall, Data::kEdge}) {
      CheckResult result;
      EXPECT_TRUE(RunKernel(hlo, GetParam(), data, 5, &result)) << hlo;
      if (gathers && n == 256) {
        EXPECT_GT(result.lanes, 1) << result.program;
      }
    }
  }
  // A multi-output kInput fusion: an output of the reduce input's
  // dimensions beside the row sums, stored at stride r per output (a
  // scatter on AVX-512, lane by lane on AVX2); 32- and 64-bit lanes.
  for (const char* type : {"f32", "f64", "s32"}) {
    for (int64_t r : {2, 3}) {
      for (int64_t n : {0, 1, 19, 100}) {
        const std::string s = absl::StrCat(type, "[", n, ",", r, "]");
        const std::string o = absl::StrCat(type, "[", n, "]");
        const std::string hlo = absl::StrCat("HloModule m\n", Add(type), R"(fused {
  x = )", s, R"( parameter(0)
  y = )", s, R"( parameter(1)
  m = )", s, R"( multiply(x, y)
  d = )", s, R"( subtract(x, y)
  z = )", type, R"([] constant(0)
  sum = )", o, R"( reduce(m, z), dimensions={1}, to_apply=add
  ROOT t = ()", s, ", ", o, R"() tuple(d, sum)
}
ENTRY e {
  p0 = )", s, R"( parameter(0)
  p1 = )", s, R"( parameter(1)
  ROOT f = ()", s, ", ", o, R"() fusion(p0, p1), kind=kInput, calls=fused
})");
        for (Data data : {Data::kSmall, Data::kEdge}) {
          CheckResult result;
          EXPECT_TRUE(RunKernel(hlo, GetParam(), data, 5, &result)) << hlo;
          if (gathers && n == 100) {
            EXPECT_GT(result.lanes, 1) << result.program;
          }
        }
      }
    }
  }
  for (int64_t n : {1, 17, 100}) {
    const std::string s = absl::StrCat("[", n, ",5]");
    const std::string o = absl::StrCat("[", n, "]");
    const std::string hlo = ArgmaxFusion(s, s, o);
    for (Data data : {Data::kSmall, Data::kEdge}) {
      CheckResult result;
      EXPECT_TRUE(RunKernel(hlo, GetParam(), data, 5, &result)) << hlo;
      if (gathers && n == 100) {
        EXPECT_GT(result.lanes, 1) << result.program;
      }
    }
  }
}

// Layer norm's statistics: a tuple of two reduces over the same dimensions
// (sum and sum of squares), plus an output of the input's dimensions stored
// from the loop body and one of the result's dimensions.
TEST_P(JitReduce, MultiOutputInputFusion) {
  for (const char* layout : {"{1,0}", "{0,1}"}) {
    const std::string hlo = absl::StrCat("HloModule m\n", Add("f32"), R"(fused {
  x = f32[6,77])", layout, R"( parameter(0)
  y = f32[6] parameter(1)
  sq = f32[6,77])", layout, R"( multiply(x, x)
  z = f32[] constant(0)
  s = f32[6] reduce(x, z), dimensions={1}, to_apply=add
  s2 = f32[6] reduce(sq, z), dimensions={1}, to_apply=add
  n = f32[6,77] negate(x)
  y2 = f32[6] add(y, y)
  ROOT t = (f32[6], f32[6], f32[6,77], f32[6]) tuple(s, s2, n, y2)
}
ENTRY e {
  p0 = f32[6,77])", layout, R"( parameter(0)
  p1 = f32[6] parameter(1)
  ROOT f = (f32[6], f32[6], f32[6,77], f32[6]) fusion(p0, p1), kind=kInput, calls=fused
})");
    Check(hlo, Data::kSmall);
  }
  // Reduces over different dimensions cannot share a loop nest.
  const std::string mixed = absl::StrCat("HloModule m\n", Add("f32"), R"(fused {
  x = f32[6,7] parameter(0)
  z = f32[] constant(0)
  a = f32[6] reduce(x, z), dimensions={1}, to_apply=add
  b = f32[7] reduce(x, z), dimensions={0}, to_apply=add
  ROOT t = (f32[6], f32[7]) tuple(a, b)
}
ENTRY e {
  p0 = f32[6,7] parameter(0)
  ROOT f = (f32[6], f32[7]) fusion(p0), kind=kInput, calls=fused
})");
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(mixed);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<KernelSpec> spec = EmitFusionKernel(*(*module)->entry()->root());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kUnimplemented);
}

TEST_P(JitReduce, MultiOutputLoopFusion) {
  for (const char* dims : {"[]", "[0]", "[1]", "[37]", "[5,19]", "[3,4,5]"}) {
    const std::string shape = absl::StrCat("f32", dims);
    std::string other = shape;
    if (std::string(dims) == "[5,19]") other = "f32[5,19]{0,1}";
    const std::string hlo = absl::StrCat(R"(HloModule m
fused {
  x = )", shape, R"( parameter(0)
  y = )", shape, R"( parameter(1)
  a = )", shape, R"( add(x, y)
  m = )", other, R"( multiply(x, y)
  c = pred)", dims, R"( compare(x, y), direction=LT
  ROOT t = ()", shape, ", ", other, ", pred", dims, R"() tuple(a, m, c)
}
ENTRY e {
  p0 = )", shape, R"( parameter(0)
  p1 = )", shape, R"( parameter(1)
  ROOT f = ()", shape, ", ", other, ", pred", dims, R"() fusion(p0, p1), kind=kLoop, calls=fused
})");
    Check(hlo, Data::kEdge);
  }
}


// End to end through Compile with the pass pipeline (the fuse pass forms the
// kInput and multi-output fusions): softmax, layer norm's statistics, an
// argmax, a reduce over a non-default layout. Every instruction must run as
// a kernel or a copy (no interpreted step).
TEST_P(JitReduce, CompiledModules) {
  const std::string softmax = absl::StrCat("HloModule m\n", Add("f32"),
                                           Reducer("max", "f32", "maximum"), R"(ENTRY e {
  x = f32[6,1024] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[6] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[6,1024] broadcast(m), dimensions={0}
  d = f32[6,1024] subtract(x, mb)
  e = f32[6,1024] exponential(d)
  z = f32[] constant(0)
  s = f32[6] reduce(e, z), dimensions={1}, to_apply=add
  sb = f32[6,1024] broadcast(s), dimensions={0}
  ROOT r = f32[6,1024] divide(e, sb)
})");
  const std::string layer_norm = absl::StrCat("HloModule m\n", Add("f32"), R"(ENTRY e {
  x = f32[5,300] parameter(0)
  z = f32[] constant(0)
  s = f32[5] reduce(x, z), dimensions={1}, to_apply=add
  sq = f32[5,300] multiply(x, x)
  s2 = f32[5] reduce(sq, z), dimensions={1}, to_apply=add
  ROOT t = (f32[5], f32[5]) tuple(s, s2)
})");
  const std::string column = absl::StrCat("HloModule m\n", Add("s32"), R"(ENTRY e {
  x = s32[3,50,7]{0,2,1} parameter(0)
  z = s32[] constant(0)
  ROOT s = s32[50] reduce(x, z), dimensions={0,2}, to_apply=add
})");
  for (const std::string& hlo : {softmax, layer_norm, column}) {
    CheckOptions options;
    options.isa = GetParam();
    // exp is within 4 ulp; the sums of the random (edge-rich) data are
    // compared within a few ulp only where they stay finite.
    options.ulp_tolerance = hlo == softmax ? 64 : hlo == layer_norm ? 64 : 0;
    CompileReport report;
    options.report = &report;
    EXPECT_TRUE(MatchesEvaluator(hlo, options)) << hlo;
  }
}

// Throughput of a large sum, softmax's row reductions over rows of 1024 and
// a column sum (printed; the assertion is only that they run and are
// vectorised). XJIT_REDUCE_BENCH_ASM=1 prints the kernels' assembly.
double BenchKernel(const std::string& hlo, Isa isa, int64_t bytes, std::string* asm_text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return 0;
  const Instruction& root = *(*module)->entry()->root();
  absl::StatusOr<KernelSpec> spec = root.opcode() == Opcode::kFusion ? EmitFusionKernel(root)
                                                                      : EmitInstructionKernel(root);
  EXPECT_TRUE(spec.ok()) << spec.status();
  if (!spec.ok()) return 0;
  TargetOptions target_options;
  target_options.isa = isa;
  target_options.collect_asm = true;
  std::unique_ptr<Target> target = *CreateHostTarget(target_options);
  MathOptions math;
  math.fused_multiply_add = target->HasFusedMultiplyAdd();
  ExpandMath(&spec->program, math);
  absl::StatusOr<LoweredKernel> lowered = target->Lower(spec->program);
  EXPECT_TRUE(lowered.ok()) << lowered.status();
  if (!lowered.ok()) return 0;
  EXPECT_GT(lowered->vector_lanes, 1) << spec->program.ToString();
  *asm_text = lowered->asm_text;
  std::vector<std::vector<uint8_t>> storage;
  std::vector<void*> buffers;
  for (const KernelBuffer& buffer : spec->program.buffers) {
    storage.emplace_back(buffer.element_count * ByteWidth(buffer.type) + 64, 0);
    // Small values: no overflow, no NaN.
    for (size_t i = 0; i + 4 <= storage.back().size(); i += 4) {
      const float v = 0.25f * static_cast<float>(i % 7);
      if (buffer.type == ElementType::kF32) std::memcpy(&storage.back()[i], &v, 4);
    }
    buffers.push_back(storage.back().data());
  }
  const int64_t outer = spec->program.loop_extents[0];
  double best = 1e30;
  for (int rep = 0; rep < 7; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    lowered->function(buffers.data(), 0, outer);
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::min(best, s);
  }
  return static_cast<double>(bytes) / best / 1e9;
}

TEST_P(JitReduce, Throughput) {
  const int64_t n = 1 << 24;  // 64 MiB of f32.
  const std::string sum = ReduceModule("f32", absl::StrCat("[", n, "]"), "[]", "0", "add");
  const std::string rows = "[8192,1024]";  // 32 MiB.
  const std::string row_max = ReduceModule("f32", rows, "[8192]", "1", "maximum");
  const std::string row_sum = absl::StrCat("HloModule m\n", Add("f32"), R"(fused {
  x = f32[8192,1024] parameter(0)
  m = f32[8192] parameter(1)
  b = f32[8192,1024] broadcast(m), dimensions={0}
  d = f32[8192,1024] subtract(x, b)
  e = f32[8192,1024] exponential(d)
  z = f32[] constant(0)
  ROOT r = f32[8192] reduce(e, z), dimensions={1}, to_apply=add
}
ENTRY e {
  p0 = f32[8192,1024] parameter(0)
  p1 = f32[8192] parameter(1)
  ROOT f = f32[8192] fusion(p0, p1), kind=kInput, calls=fused
})");
  const std::string column_sum = ReduceModule("f32", rows, "[1024]", "0", "add");
  const bool print_asm = std::getenv("XJIT_REDUCE_BENCH_ASM") != nullptr;
  for (const auto& [name, hlo, bytes] :
       std::vector<std::tuple<std::string, std::string, int64_t>>{
           {"sum f32[16M]", sum, 4 * n},
           {"row max f32[8192,1024]", row_max, 4 * 8192 * 1024},
           {"row sum exp(x-max) f32[8192,1024]", row_sum, 4 * 8192 * 1024},
           {"column sum f32[8192,1024]", column_sum, 4 * 8192 * 1024}}) {
    std::string asm_text;
    const double gbs = BenchKernel(hlo, GetParam(), bytes, &asm_text);
    std::printf("[ bench    ] %s %s: %.2f GB/s (1 thread)\n", std::string(IsaName(GetParam())).c_str(), name.c_str(),
                gbs);
    if (print_asm) std::printf("%s\n", asm_text.c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, JitReduce, ::testing::ValuesIn(HostIsas()),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(IsaName(info.param));
                         });

}  // namespace
}  // namespace xjit::jit::testing
