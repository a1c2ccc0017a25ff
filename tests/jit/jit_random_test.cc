// Differential test: seeded random modules (chains of the elementwise and
// data-movement operations the kernel emitter compiles, over random shapes,
// layouts and element types) run compiled and through the evaluator, on every
// instruction set the host has; results must be bit-identical (any NaN equals
// any NaN), except that about a third of the modules with a float result end
// in a math function
// (exp, log, tanh, sin, pow, atan2, ...), whose result must be within the
// stated ulp (MathUlpTolerance: 4 for f32/f64, 1 for f16/bf16). Half the
// modules are wrapped in one loop fusion, which exercises
// the emitter on whole chains; the pass pipeline is on, and a second test
// runs the modules with it off and with each pass alone. A failure prints
// the module and its seed.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "ir/element_type.h"
#include "passes/pipeline.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

constexpr int kModulesPerIsa = 1000;

struct Value {
  std::string name;
  ElementType type;
  std::vector<int64_t> dims;
};

class ModuleGenerator {
 public:
  // `wide`: the innermost dimension is 15..70 long, so that vector code of
  // every width (16 f32 lanes in zmm) runs, with tails.
  explicit ModuleGenerator(uint64_t seed, bool wide = false) : rng_(seed), wide_(wide) {}

  // The ulp tolerance for comparing the last module's result (0: exact).
  int math_tolerance() const { return math_tolerance_; }

  std::string Generate(bool fuse) {
    const int parameter_count = 1 + Uniform(0, 1);
    const ElementType type = RandomType();
    std::vector<int64_t> dims = RandomDims();
    for (int i = 0; i < parameter_count; ++i) {
      ElementType t = Uniform(0, 3) == 0 ? RandomType() : type;
      Value v{absl::StrCat("p", i), t, dims};
      parameters_.push_back(absl::StrCat("  ", v.name, " = ", ShapeText(v), " parameter(", i, ")"));
      pool_.push_back(v);
    }
    const int steps = Uniform(2, 9);
    for (int s = 0; s < steps; ++s) {
      for (int attempt = 0; attempt < 20 && !Step(); ++attempt) {
      }
    }
    // A third of the modules end in a math function: its result may differ
    // from the evaluator's by a few ulp, so it is only ever the root.
    if (Uniform(0, 2) == 0 && IsFloat(pool_.back().type)) MathStep();
    const Value& root = pool_.back();
    std::string text = "HloModule random\n";
    if (!fuse) {
      absl::StrAppend(&text, "ENTRY e {\n", absl::StrJoin(parameters_, "\n"), "\n");
      for (size_t i = 0; i < body_.size(); ++i) {
        absl::StrAppend(&text, i + 1 == body_.size() ? "  ROOT" : " ", body_[i].substr(1), "\n");
      }
      if (body_.empty()) absl::StrAppend(&text, "  ROOT n = ", ShapeText(root), " negate(p0)\n");
      absl::StrAppend(&text, "}\n");
      return text;
    }
    absl::StrAppend(&text, "fused {\n", absl::StrJoin(parameters_, "\n"), "\n");
    for (size_t i = 0; i < body_.size(); ++i) {
      absl::StrAppend(&text, i + 1 == body_.size() ? "  ROOT" : " ", body_[i].substr(1), "\n");
    }
    if (body_.empty()) return Generate(false);
    absl::StrAppend(&text, "}\nENTRY e {\n", absl::StrJoin(parameters_, "\n"), "\n");
    std::vector<std::string> names;
    for (size_t i = 0; i < parameters_.size(); ++i) names.push_back(absl::StrCat("p", i));
    absl::StrAppend(&text, "  ROOT f = ", last_shape_text_, " fusion(", absl::StrJoin(names, ", "),
                    "), kind=kLoop, calls=fused\n}\n");
    return text;
  }

 private:
  int Uniform(int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng_); }
  template <typename T>
  const T& Pick(const std::vector<T>& items) { return items[Uniform(0, items.size() - 1)]; }

  ElementType RandomType() {
    static const std::vector<ElementType> types = {
        ElementType::kF32, ElementType::kF32, ElementType::kF64, ElementType::kF16,
        ElementType::kBF16, ElementType::kS8, ElementType::kS32, ElementType::kS64,
        ElementType::kU8, ElementType::kU16, ElementType::kU32, ElementType::kPred};
    return Pick(types);
  }

  std::vector<int64_t> RandomDims() {
    if (wide_) {
      std::vector<int64_t> dims;
      const int rank = Uniform(1, 3);
      for (int i = 0; i + 1 < rank; ++i) dims.push_back(Uniform(1, 4));
      dims.push_back(Uniform(15, 70));
      return dims;
    }
    const int rank = Uniform(0, 3);
    std::vector<int64_t> dims;
    for (int i = 0; i < rank; ++i) {
      const int r = Uniform(0, 9);
      dims.push_back(r == 0 ? 0 : r == 1 ? 1 : r < 8 ? Uniform(2, 7) : Uniform(8, 40));
    }
    return dims;
  }

  std::string ShapeText(const Value& v) {
    std::vector<int64_t> layout(v.dims.size());
    std::iota(layout.begin(), layout.end(), 0);
    if (Uniform(0, 2) == 0) {
      std::shuffle(layout.begin(), layout.end(), rng_);
    } else {
      std::reverse(layout.begin(), layout.end());
    }
    std::string text = absl::StrCat(ElementTypeName(v.type), "[", absl::StrJoin(v.dims, ","), "]");
    if (!v.dims.empty()) absl::StrAppend(&text, "{", absl::StrJoin(layout, ","), "}");
    return text;
  }

  std::string ConstantText(ElementType type) {
    if (type == ElementType::kPred) return Uniform(0, 1) ? "true" : "false";
    if (IsFloat(type)) return Pick(std::vector<std::string>{"1.5", "-0", "0", "-2.25", "inf", "nan"});
    if (IsUnsignedInteger(type)) return absl::StrCat(Uniform(0, 9));
    return absl::StrCat(Uniform(-9, 9));
  }

  // A pool value with the given type and dims, if any.
  const Value* Find(ElementType type, const std::vector<int64_t>& dims) {
    std::vector<const Value*> matches;
    for (const Value& v : pool_) {
      if (v.type == type && v.dims == dims) matches.push_back(&v);
    }
    return matches.empty() ? nullptr : matches[Uniform(0, matches.size() - 1)];
  }

  void Emit(Value v, const std::string& op) {
    v.name = absl::StrCat("v", counter_++);
    last_shape_text_ = ShapeText(v);
    body_.push_back(absl::StrCat("   ", v.name, " = ", last_shape_text_, " ", op));
    pool_.push_back(v);
  }

  std::string Scalar(ElementType type) {
    const std::string name = absl::StrCat("c", counter_++);
    body_.push_back(absl::StrCat("   ", name, " = ", ElementTypeName(type), "[] constant(",
                                 ConstantText(type), ")"));
    return name;
  }

  void MathStep() {
    const Value x = pool_.back();
    const ElementType t = x.type;
    static const std::vector<std::string> unary = {
        "exponential", "exponential-minus-one", "log", "log-plus-one", "tanh", "logistic",
        "sine", "cosine", "tan", "erf", "cbrt", "rsqrt"};
    const int choice = Uniform(0, unary.size() + 1);
    if (choice >= static_cast<int>(unary.size())) {
      const Value* y = Find(t, x.dims);
      Emit(x, absl::StrCat(choice == static_cast<int>(unary.size()) ? "atan2" : "power", "(",
                           x.name, ", ", y->name, ")"));
    } else {
      const std::string& op = unary[choice];
      std::string arg = x.name;
      // sin/cos/tan are accurate for |x| <= 2^22 (f32); the evaluator's
      // logistic overflows to 0 in f64 below -709.8 (where the JIT is right).
      const bool trig = op == "sine" || op == "cosine" || op == "tan";
      if (trig || op == "logistic") {
        const std::string lo = absl::StrCat("c", counter_++);
        const std::string hi = absl::StrCat("c", counter_++);
        body_.push_back(absl::StrCat("   ", lo, " = ", ElementTypeName(t), "[] constant(",
                                     trig ? "-1e6" : "-700", ")"));
        body_.push_back(absl::StrCat("   ", hi, " = ", ElementTypeName(t), "[] constant(",
                                     trig ? "1e6" : "1e6", ")"));
        Emit(x, absl::StrCat("clamp(", lo, ", ", x.name, ", ", hi, ")"));
        arg = pool_.back().name;
      }
      Emit(x, absl::StrCat(op, "(", arg, ")"));
    }
    math_tolerance_ = MathUlpTolerance(t);
  }

  bool Step() {
    // Mostly extend the newest value, so that chains grow deep.
    const Value x = Uniform(0, 9) < 7 ? pool_.back() : Pick(pool_);
    const ElementType t = x.type;
    const bool is_float = IsFloat(t);
    const bool is_pred = IsPred(t);
    const int64_t rank = x.dims.size();
    int64_t count = 1;
    for (int64_t d : x.dims) count *= d;
    switch (Uniform(0, 16)) {
      case 0: {  // unary
        std::vector<std::string> ops;
        if (is_pred) ops = {"not"};
        else if (is_float) ops = {"abs", "negate", "sqrt", "floor", "ceil", "round-nearest-even",
                                  "round-nearest-afz", "sign"};
        else ops = {"negate", "not", "count-leading-zeros", "popcnt"};
        if (IsSignedInteger(t)) ops.push_back("abs");
        Emit(x, absl::StrCat(Pick(ops), "(", x.name, ")"));
        return true;
      }
      case 1:
      case 2: {  // binary
        const Value* y = Find(t, x.dims);
        std::vector<std::string> ops;
        if (is_pred) ops = {"and", "or", "xor"};
        else if (is_float) ops = {"add", "subtract", "multiply", "divide", "maximum", "minimum"};
        else ops = {"add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum",
                    "and", "or", "xor", "shift-left", "shift-right-logical",
                    "shift-right-arithmetic"};
        Emit(x, absl::StrCat(Pick(ops), "(", x.name, ", ", y->name, ")"));
        return true;
      }
      case 3: {  // compare + select
        const std::string y_name = Find(t, x.dims)->name;  // Emit moves the pool.
        Value p{"", ElementType::kPred, x.dims};
        std::string direction = Pick(std::vector<std::string>{"EQ", "NE", "LT", "LE", "GT", "GE"});
        std::string extra = is_float && Uniform(0, 3) == 0 ? ", type=TOTALORDER" : "";
        Emit(p, absl::StrCat("compare(", x.name, ", ", y_name, "), direction=", direction, extra));
        const std::string p_name = pool_.back().name;
        Emit(x, absl::StrCat("select(", p_name, ", ", x.name, ", ", y_name, ")"));
        return true;
      }
      case 4: {  // clamp
        if (is_pred) return false;
        const Value* lo = Find(t, x.dims);
        const Value* hi = Find(t, x.dims);
        if (Uniform(0, 1) == 0) {
          const std::string a = Scalar(t);
          const std::string b = Scalar(t);
          Emit(x, absl::StrCat("clamp(", a, ", ", x.name, ", ", b, ")"));
        } else {
          Emit(x, absl::StrCat("clamp(", lo->name, ", ", x.name, ", ", hi->name, ")"));
        }
        return true;
      }
      case 5: {  // convert
        Value y = x;
        y.type = RandomType();
        Emit(y, absl::StrCat("convert(", x.name, ")"));
        return true;
      }
      case 6: {  // transpose
        std::vector<int64_t> perm(rank);
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng_);
        Value y = x;
        for (int64_t i = 0; i < rank; ++i) y.dims[i] = x.dims[perm[i]];
        Emit(y, absl::StrCat("transpose(", x.name, "), dimensions={", absl::StrJoin(perm, ","), "}"));
        return true;
      }
      case 7: {  // reverse
        std::vector<int64_t> dims;
        for (int64_t i = 0; i < rank; ++i) {
          if (Uniform(0, 1)) dims.push_back(i);
        }
        Emit(x, absl::StrCat("reverse(", x.name, "), dimensions={", absl::StrJoin(dims, ","), "}"));
        return true;
      }
      case 8: {  // slice
        Value y = x;
        std::vector<std::string> parts;
        for (int64_t i = 0; i < rank; ++i) {
          const int64_t start = Uniform(0, x.dims[i]);
          const int64_t limit = Uniform(start, x.dims[i]);
          const int64_t stride = Uniform(1, 3);
          y.dims[i] = (limit - start + stride - 1) / stride;
          parts.push_back(absl::StrCat("[", start, ":", limit, ":", stride, "]"));
        }
        Emit(y, absl::StrCat("slice(", x.name, "), slice={", absl::StrJoin(parts, ", "), "}"));
        return true;
      }
      case 9: {  // pad
        if (rank == 0) return false;
        Value y = x;
        std::vector<std::string> parts;
        for (int64_t i = 0; i < rank; ++i) {
          const int64_t low = Uniform(-1, 2);
          const int64_t high = Uniform(-1, 2);
          const int64_t interior = Uniform(0, 2);
          const int64_t d = x.dims[i];
          const int64_t size = low + high + d + (d > 0 ? (d - 1) * interior : 0);
          if (size < 0 || (d == 0 && (low < 0 || high < 0))) return false;
          y.dims[i] = size;
          parts.push_back(absl::StrCat(low, "_", high, "_", interior));
        }
        const std::string value = Scalar(t);
        Emit(y, absl::StrCat("pad(", x.name, ", ", value, "), padding=", absl::StrJoin(parts, "x")));
        return true;
      }
      case 10: {  // broadcast with one new dimension
        if (rank >= 3) return false;
        const int64_t position = Uniform(0, rank);
        Value y = x;
        y.dims.insert(y.dims.begin() + position, Uniform(1, 4));
        std::vector<int64_t> map;
        for (int64_t i = 0; i < rank; ++i) map.push_back(i < position ? i : i + 1);
        Emit(y, absl::StrCat("broadcast(", x.name, "), dimensions={", absl::StrJoin(map, ","), "}"));
        return true;
      }
      case 11: {  // reshape
        Value y = x;
        if (rank >= 2 || Uniform(0, 1)) {
          y.dims = {count};
        } else {
          y.dims.insert(y.dims.begin() + Uniform(0, rank), 1);
        }
        Emit(y, absl::StrCat("reshape(", x.name, ")"));
        return true;
      }
      case 12: {  // concatenate
        if (rank == 0) return false;
        const Value* y = Find(t, x.dims);
        const int64_t dim = Uniform(0, rank - 1);
        Value z = x;
        z.dims[dim] *= 2;
        Emit(z, absl::StrCat("concatenate(", x.name, ", ", y->name, "), dimensions={", dim, "}"));
        return true;
      }
      case 13: {  // iota
        if (rank == 0 || is_pred) return false;
        Emit(x, absl::StrCat("iota(), iota_dimension=", Uniform(0, rank - 1)));
        return true;
      }
      case 14: {  // dynamic-slice with constant starts
        if (rank == 0) return false;
        Value y = x;
        std::vector<std::string> starts;
        for (int64_t i = 0; i < rank; ++i) {
          y.dims[i] = Uniform(0, x.dims[i]);
          const std::string name = absl::StrCat("c", counter_++);
          body_.push_back(absl::StrCat("   ", name, " = s32[] constant(",
                                       Uniform(-2, x.dims[i] + 2), ")"));
          starts.push_back(name);
        }
        Emit(y, absl::StrCat("dynamic-slice(", x.name, starts.empty() ? "" : ", ",
                             absl::StrJoin(starts, ", "), "), dynamic_slice_sizes={",
                             absl::StrJoin(y.dims, ","), "}"));
        return true;
      }
      case 15: {  // dynamic-update-slice with a slice of a same-typed value
        if (rank == 0) return false;
        std::vector<std::string> parts;
        std::vector<int64_t> update_dims;
        for (int64_t i = 0; i < rank; ++i) {
          update_dims.push_back(Uniform(0, x.dims[i]));
          parts.push_back(absl::StrCat("[0:", update_dims.back(), "]"));
        }
        Value u = x;
        u.dims = update_dims;
        Emit(u, absl::StrCat("slice(", x.name, "), slice={", absl::StrJoin(parts, ", "), "}"));
        const std::string update = pool_.back().name;
        std::vector<std::string> starts;
        for (int64_t i = 0; i < rank; ++i) {
          const std::string name = absl::StrCat("c", counter_++);
          body_.push_back(absl::StrCat("   ", name, " = s32[] constant(",
                                       Uniform(-2, x.dims[i] + 2), ")"));
          starts.push_back(name);
        }
        const Value* base = Find(t, x.dims);
        Emit(x, absl::StrCat("dynamic-update-slice(", base->name, ", ", update,
                             starts.empty() ? "" : ", ", absl::StrJoin(starts, ", "), ")"));
        return true;
      }
      case 16: {  // bitcast-convert between same-width types
        ElementType to;
        switch (t) {
          case ElementType::kF32: to = ElementType::kS32; break;
          case ElementType::kS32: to = ElementType::kF32; break;
          case ElementType::kU32: to = ElementType::kF32; break;
          case ElementType::kF64: to = ElementType::kS64; break;
          case ElementType::kS64: to = ElementType::kF64; break;
          case ElementType::kF16: to = ElementType::kU16; break;
          case ElementType::kU16: to = Uniform(0, 1) ? ElementType::kF16 : ElementType::kBF16; break;
          case ElementType::kBF16: to = ElementType::kU16; break;
          case ElementType::kS8: to = ElementType::kU8; break;
          case ElementType::kU8: to = ElementType::kS8; break;
          default: return false;
        }
        Value y = x;
        y.type = to;
        Emit(y, absl::StrCat("bitcast-convert(", x.name, ")"));
        return true;
      }
    }
    return false;
  }

  std::mt19937_64 rng_;
  bool wide_ = false;
  std::vector<Value> pool_;
  std::vector<std::string> parameters_;
  std::vector<std::string> body_;
  std::string last_shape_text_;
  int counter_ = 0;
  int math_tolerance_ = 0;
};

class JitRandom : public ::testing::TestWithParam<Isa> {};

TEST_P(JitRandom, MatchesEvaluator) {
  int failures = 0;
  int64_t kernels = 0;
  int64_t vectorized = 0;
  int64_t elements = 0;
  for (uint64_t seed = 1; seed <= kModulesPerIsa && failures < 5; ++seed) {
    ModuleGenerator generator(seed * 7919);
    const std::string hlo = generator.Generate(/*fuse=*/seed % 2 == 0);
    CheckOptions options;
    options.isa = GetParam();
    options.seed = seed;
    options.ulp_tolerance = generator.math_tolerance();
    CompileReport report;
    options.report = &report;
    ::testing::AssertionResult result = MatchesEvaluator(hlo, options);
    kernels += report.kernels.size();
    for (const KernelInfo& kernel : report.kernels) {
      vectorized += kernel.vector_lanes > 1 ? 1 : 0;
      elements += std::count(kernel.program.begin(), kernel.program.end(), '\n');
    }
    if (std::getenv("XJIT_PRINT_MODULES") != nullptr) std::cout << hlo << "\n";
    if (!result) {
      ++failures;
      ADD_FAILURE() << "module seed " << seed << ":\n" << hlo << "\n" << result.message();
    }
  }
  std::cout << kModulesPerIsa << " modules, " << kernels << " kernels (" << vectorized
            << " vectorised), " << elements << " kernel program lines\n";
}

INSTANTIATE_TEST_SUITE_P(Isas, JitRandom, ::testing::ValuesIn(HostIsas()),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(IsaName(info.param));
                         });

// Modules whose innermost dimension is 15..70 long: most kernels have a
// vector loop of the ISA's full width (zmm with avx512) and a scalar tail.
class JitRandomWide : public ::testing::TestWithParam<Isa> {};

TEST_P(JitRandomWide, MatchesEvaluator) {
  int failures = 0;
  int64_t kernels = 0;
  int64_t vectorized = 0;
  int64_t widest = 0;  // Kernels with the ISA's widest vectors (64 bytes for avx512).
  const int widest_bits = GetParam() == Isa::kAvx512 ? 512 : GetParam() == Isa::kAvx2 ? 256 : 128;
  for (uint64_t seed = 1; seed <= kModulesPerIsa && failures < 5; ++seed) {
    ModuleGenerator generator(seed * 6151, /*wide=*/true);
    const std::string hlo = generator.Generate(/*fuse=*/seed % 2 == 0);
    CheckOptions options;
    options.isa = GetParam();
    options.seed = seed;
    options.ulp_tolerance = generator.math_tolerance();
    CompileReport report;
    options.report = &report;
    ::testing::AssertionResult result = MatchesEvaluator(hlo, options);
    kernels += report.kernels.size();
    for (const KernelInfo& kernel : report.kernels) {
      vectorized += kernel.vector_lanes > 1 ? 1 : 0;
      // 64-bit lanes: f64/s64/u64 in the program's loads or stores.
      const bool wide_lanes = absl::StrContains(kernel.program, "= f64 ") ||
                              absl::StrContains(kernel.program, "= s64 load") ||
                              absl::StrContains(kernel.program, "= u64 load");
      if (kernel.vector_lanes > 1 && kernel.vector_lanes * (wide_lanes ? 64 : 32) == widest_bits) {
        ++widest;
      }
    }
    if (!result) {
      ++failures;
      ADD_FAILURE() << "module seed " << seed << ":\n" << hlo << "\n" << result.message();
    }
  }
  std::cout << kModulesPerIsa << " wide modules, " << kernels << " kernels (" << vectorized
            << " vectorised, about " << widest << " at " << widest_bits << " bits)\n";
  EXPECT_GT(vectorized, kernels / 10);
}

INSTANTIATE_TEST_SUITE_P(Isas, JitRandomWide, ::testing::ValuesIn(HostIsas()),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(IsaName(info.param));
                         });

// The same modules compiled with the pass pipeline off, and with each of its
// passes alone (the test above has them all on): every configuration must
// match the evaluator, so all give the same results.
constexpr int kModulesPerPassConfiguration = 1000;

std::vector<std::string> PassConfigurations() {
  std::vector<std::string> configurations = {"off"};
  for (const std::string& name : DefaultPipelinePassNames()) {
    if (std::find(configurations.begin(), configurations.end(), name) == configurations.end()) {
      configurations.push_back(name);
    }
  }
  return configurations;
}

class JitRandomPasses : public ::testing::TestWithParam<std::string> {};

TEST_P(JitRandomPasses, MatchesEvaluator) {
  int failures = 0;
  for (uint64_t seed = 1; seed <= kModulesPerPassConfiguration && failures < 5; ++seed) {
    ModuleGenerator generator(seed * 104729);
    const std::string hlo = generator.Generate(/*fuse=*/seed % 4 == 0);
    CheckOptions options;
    options.seed = seed;
    options.ulp_tolerance = generator.math_tolerance();
    options.run_passes = GetParam() != "off";
    if (options.run_passes) options.only_passes = {GetParam()};
    ::testing::AssertionResult result = MatchesEvaluator(hlo, options);
    if (!result) {
      ++failures;
      ADD_FAILURE() << "module seed " << seed << ":\n" << hlo << "\n" << result.message();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Passes, JitRandomPasses, ::testing::ValuesIn(PassConfigurations()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace xjit::jit::testing
