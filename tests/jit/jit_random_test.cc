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
// runs the modules with it off and with each pass alone. A third test
// (JitRandomSteps) builds modules around the operations compiled as steps of
// their own (gather, scatter, reduce-window, sort, while, conditional,
// rng-bit-generator, variadic scatter, map, select-and-scatter, top-k, fft,
// cholesky, triangular-solve) and complex iota, with the pipeline on and
// off; fft, cholesky and triangular-solve are the root, on well-conditioned
// inputs built in the module, and compared within a stated norm-wise bound
// (kFftBoundConstant, kLinalgBoundConstant), everything else bit for bit.
// A failure prints the module and its seed.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "ir/element_type.h"
#include "passes/pipeline.h"
#include "runtime/fft/transform.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

constexpr int kModulesPerIsa = 1000;

// The constant c of docs/fft.md's bound on an fft's error per signal,
// c L u ||y||_2.
constexpr double kFftBoundConstant = 2.0;

// The constant c of the bound c (n + 1) n u ||X||_F on the error of each n x
// n matrix X of a cholesky or triangular-solve result against the
// evaluator's (which computes in double and rounds once), u the unit
// roundoff of the element type: LAPACK's backward error is about n u ||A||,
// times the condition number (at most n + 1 for the cholesky inputs, at
// most 8 for the triangular ones); for cholesky the input A itself comes
// from a dot whose summation order differs. Measured over 4000 seeds: at
// most 0.3 (n + 1) n u ||X||_F (docs/linalg.md).
constexpr double kLinalgBoundConstant = 2.0;

// XJIT_RANDOM_MODULES=N runs the first N modules of each test instead of its
// default count (the sanitizer job's sample, .ci/sanitize.sh).
uint64_t ModuleCount(uint64_t default_count) {
  const char* count = std::getenv("XJIT_RANDOM_MODULES");
  return count != nullptr ? std::strtoull(count, nullptr, 10) : default_count;
}

// XJIT_RANDOM_SHARD=K/N runs, of every test, the seeds in runs of four
// consecutive ones dealt to the N shards in turn (seeds 1-4 to shard 1, 5-8
// to shard 2, ...), so that N processes (meson's jit_random_test_KofN) share
// the work evenly. Runs of four, because the generators key what they build
// on the seed modulo 2 or 4 (fused or not, the edge case: "huge" shapes are
// most of the edge test's time): each shard gets every residue equally.
// gtest's own sharding deals out whole tests (221 s against 111 s under the
// sanitizers); seeds dealt one by one gave one shard every odd seed (48 s
// against 8 s), and a hash of the seed most of the huge cases (45 s against
// 7 s). Unset: every seed.
bool InShard(uint64_t seed) {
  static const std::pair<uint64_t, uint64_t> shard = [] {
    const char* text = std::getenv("XJIT_RANDOM_SHARD");
    uint64_t k = 1, n = 1;
    if (text != nullptr && (std::sscanf(text, "%" SCNu64 "/%" SCNu64, &k, &n) != 2 || n == 0 || k == 0 ||
                            k > n)) {
      std::cerr << "XJIT_RANDOM_SHARD must be K/N with 1 <= K <= N, not " << text << "\n";
      std::abort();
    }
    return std::make_pair(k, n);
  }();
  return (seed - 1) / 4 % shard.second == shard.first - 1;
}

struct Value {
  std::string name;
  ElementType type;
  std::vector<int64_t> dims;
};

class ModuleGenerator {
 public:
  // `wide`: the innermost dimension is 15..70 long, so that vector code of
  // every width (16 f32 lanes in zmm) runs, with tails.
  explicit ModuleGenerator(uint64_t seed, bool wide = false)
      : rng_(seed), wide_(wide) {}

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

  // The type of one instruction's start indices (they must all have one):
  // s32 mostly, s64 or u32 a third of the time.
  std::string StartIndexType() {
    static const char* const kTypes[] = {"s32", "s32", "s64", "u32"};
    return kTypes[Uniform(0, 3)];
  }

  // A start index of type `type` of a dimension of `size` for dynamic-slice
  // and dynamic-update-slice: a constant in [-2, size + 2] (u32: [0, size +
  // 2]), or (one in three) a scalar parameter, which the test fills with edge
  // values (negative and huge starts, clamped) and the kernel loads.
  std::string StartIndex(int64_t size, const std::string& type) {
    if (Uniform(0, 2) == 0) {
      const size_t index = parameters_.size();
      const std::string name = absl::StrCat("p", index);
      parameters_.push_back(absl::StrCat("  ", name, " = ", type, "[] parameter(", index, ")"));
      return name;
    }
    const std::string name = absl::StrCat("c", counter_++);
    body_.push_back(absl::StrCat("   ", name, " = ", type, "[] constant(",
                                 Uniform(type == "u32" ? 0 : -2, size + 2), ")"));
    return name;
  }

  ElementType RandomType() {
    static const std::vector<ElementType> types = {
        ElementType::kF32, ElementType::kF32, ElementType::kF64, ElementType::kF16,
        ElementType::kBF16, ElementType::kS8, ElementType::kS32, ElementType::kS64,
        ElementType::kU8, ElementType::kU16, ElementType::kU32, ElementType::kPred};
    // The narrow floats (jit_types_test.cc), about one pick in eight:
    // computed in f32 and rounded back after every operation.
    static const std::vector<ElementType> mini_floats = {
        ElementType::kF8E5M2,        ElementType::kF8E4M3,     ElementType::kF8E4M3FN,
        ElementType::kF8E3M4,        ElementType::kF8E4M3FNUZ, ElementType::kF8E5M2FNUZ,
        ElementType::kF8E4M3B11FNUZ, ElementType::kF8E8M0FNU,  ElementType::kF4E2M1FN};
    // Sub-byte integers, about one pick in sixteen, half the time packed
    // (ShapeText's E(bits) layouts, docs/types.md).
    static const std::vector<ElementType> sub_byte = {
        ElementType::kS4, ElementType::kU4, ElementType::kS2, ElementType::kU2,
        ElementType::kS4, ElementType::kU4, ElementType::kS1, ElementType::kU1};
    if (Uniform(0, 7) == 0) return Pick(mini_floats);
    if (Uniform(0, 15) == 0) return Pick(sub_byte);
    return Pick(types);
  }

  // A random type to convert `from` to. A 64-bit integer never goes to
  // f8e8m0fnu: that convert has no kernel (docs/types.md) and would be an
  // interpreted step.
  ElementType ConvertTarget(ElementType from) {
    const ElementType to = RandomType();
    if (to == ElementType::kF8E8M0FNU && IsInteger(from) && BitWidth(from) == 64) {
      return ElementType::kF8E4M3;
    }
    return to;
  }

  std::vector<int64_t> RandomDims() {
    if (wide_) {
      std::vector<int64_t> dims;
      const int rank = Uniform(1, 3);
      for (int i = 0; i + 1 < rank; ++i) dims.push_back(Uniform(1, 4));
      dims.push_back(Uniform(15, 70));
      return dims;
    }
    if (degenerate_) {  // Rank 0 to 4, dimensions mostly of size 1, some 0.
      std::vector<int64_t> dims(Uniform(0, 4));
      for (int64_t& d : dims) d = Pick(std::vector<int64_t>{0, 1, 1, 1, 2, 3});
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
    const int bits = BitWidth(v.type);
    const bool packed = bits < 8 && !IsPred(v.type) && Uniform(0, 1) == 0;
    if (!v.dims.empty()) {
      absl::StrAppend(&text, "{", absl::StrJoin(layout, ","), packed ? absl::StrCat(":E(", bits, ")") : "", "}");
    }
    return text;
  }

  std::string ConstantText(ElementType type) {
    if (type == ElementType::kPred) return Uniform(0, 1) ? "true" : "false";
    if (IsFloat(type)) return Pick(std::vector<std::string>{"1.5", "-0", "0", "-2.25", "inf", "nan"});
    // Within the type's range (sub-byte integers are narrow).
    const int bits = BitWidth(type);
    if (IsUnsignedInteger(type)) return absl::StrCat(Uniform(0, bits < 8 ? (1 << bits) - 1 : 9));
    if (bits < 8) return absl::StrCat(Uniform(-(1 << (bits - 1)), (1 << (bits - 1)) - 1));
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

  void Emit(Value v, const std::string& op) { pool_.push_back(EmitAside(std::move(v), op)); }

  // Emits `v` (a random layout unless `text` is given) without adding it to
  // the pool; returns it named.
  Value EmitAside(Value v, const std::string& op, std::string text = "") {
    v.name = absl::StrCat("v", counter_++);
    if (text.empty()) text = ShapeText(v);
    last_shape_text_ = text;
    texts_[v.name] = text;
    body_.push_back(absl::StrCat("   ", v.name, " = ", text, " ", op));
    return v;
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
    return StepOn(x, Uniform(0, 17));
  }

  // One operation of kind `kind` (0..17) on `x`; false when it does not apply.
  bool StepOn(const Value x, int kind) {
    const ElementType t = x.type;
    const bool is_float = IsFloat(t);
    const bool is_pred = IsPred(t);
    const int64_t rank = x.dims.size();
    int64_t count = 1;
    for (int64_t d : x.dims) count *= d;
    switch (kind) {
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
        y.type = ConvertTarget(x.type);
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
      case 14: {  // dynamic-slice with constant or loaded starts
        if (rank == 0) return false;
        Value y = x;
        std::vector<std::string> starts;
        const std::string index_type = StartIndexType();
        for (int64_t i = 0; i < rank; ++i) {
          y.dims[i] = Uniform(0, x.dims[i]);
          starts.push_back(StartIndex(x.dims[i], index_type));
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
        const std::string index_type = StartIndexType();
        for (int64_t i = 0; i < rank; ++i) starts.push_back(StartIndex(x.dims[i], index_type));
        const Value* base = Find(t, x.dims);
        Emit(x, absl::StrCat("dynamic-update-slice(", base->name, ", ", update,
                             starts.empty() ? "" : ", ", absl::StrJoin(starts, ", "), ")"));
        return true;
      }
      case 16: {  // bitcast-convert between same-width types
        if (no_float_bitcast_ && IsFloat(t)) return false;
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
      case 17:
        return StepSmallOp(x);
    }
    return false;
  }

  // The small operations compiled for issue 16 (jit_small_ops_test.cc):
  // reduce-precision, real/imag of a real float, bitcast-convert that
  // splits elements into a new minor dimension of narrower integers or
  // joins a minor dimension of them into wider elements, and
  // get-dimension-size (broadcast to continue the chain).
  bool StepSmallOp(const Value& x) {
    const ElementType t = x.type;
    const bool native_float = t == ElementType::kF16 || t == ElementType::kBF16 ||
                              t == ElementType::kF32 || t == ElementType::kF64;
    switch (Uniform(0, 4)) {
      case 0: {
        if (!native_float) return false;
        const int exponent_bits = static_cast<int>(Uniform(1, 11));
        const int mantissa_bits = static_cast<int>(Uniform(0, 30));
        Emit(x, absl::StrCat("reduce-precision(", x.name, "), exponent_bits=", exponent_bits,
                             ", mantissa_bits=", mantissa_bits));
        return true;
      }
      case 1:
        if (!native_float) return false;
        Emit(x, absl::StrCat(Uniform(0, 1) ? "real(" : "imag(", x.name, ")"));
        return true;
      case 2: {  // Split into pieces of 8, 16 or 32 bits.
        if (no_float_bitcast_ && IsFloat(t)) return false;
        const int bits = BitWidth(t);
        int64_t count = 1;
        for (int64_t d : x.dims) count *= d;
        if (IsPred(t) || IsComplex(t) || bits <= 8 || x.dims.size() >= 4 ||
            count * (bits / 8) > 4096) {
          return false;
        }
        std::vector<ElementType> pieces = {ElementType::kU8, ElementType::kS8};
        if (bits >= 32) pieces.insert(pieces.end(), {ElementType::kU16, ElementType::kS16});
        if (bits == 64) pieces.insert(pieces.end(), {ElementType::kU32, ElementType::kS32});
        Value y = x;
        y.type = Pick(pieces);
        y.dims.push_back(bits / BitWidth(y.type));
        Emit(y, absl::StrCat("bitcast-convert(", x.name, ")"));
        return true;
      }
      case 3: {  // Join a minor dimension of 2, 4 or 8 integers.
        if (x.dims.empty() || (!IsSignedInteger(t) && !IsUnsignedInteger(t))) return false;
        const int bits = BitWidth(t) * x.dims.back();
        if (BitWidth(t) < 8 || x.dims.back() < 2 || (bits != 16 && bits != 32 && bits != 64)) {
          return false;
        }
        std::vector<ElementType> joined;
        for (ElementType to : {ElementType::kU16, ElementType::kS16, ElementType::kF16,
                               ElementType::kBF16, ElementType::kU32, ElementType::kS32,
                               ElementType::kF32, ElementType::kU64, ElementType::kS64,
                               ElementType::kF64}) {
          if (BitWidth(to) == bits) joined.push_back(to);
        }
        Value y = x;
        y.type = Pick(joined);
        y.dims.pop_back();
        Emit(y, absl::StrCat("bitcast-convert(", x.name, ")"));
        return true;
      }
      default: {
        if (x.dims.empty()) return false;
        const std::string size =
            EmitLine("s32[]", absl::StrCat("get-dimension-size(", x.name, "), dimensions={",
                                           Uniform(0, x.dims.size() - 1), "}"));
        Emit(Value{"", ElementType::kS32, x.dims},
             absl::StrCat("broadcast(", size, "), dimensions={}"));
        return true;
      }
    }
  }

 public:
  // The operations compiled as steps of their own (gather, scatter,
  // reduce-window, sort, while, conditional) and complex iota, which
  // GenerateAround puts between a producer and a consumer chain.
  enum Feature { kGather, kScatter, kReduceWindow, kSort, kWhile, kConditional, kComplexIota,
                 kRngBitGenerator, kVariadicScatter, kMap, kSelectAndScatter, kTopK, kFft,
                 kCholesky, kTriangularSolve, kFeatureCount };

  static const char* FeatureName(int feature) {
    static const char* const kNames[] = {
        "gather",           "scatter",           "reduce-window",     "sort",
        "while",            "conditional",       "complex iota",      "rng-bit-generator",
        "variadic scatter", "map",               "select-and-scatter", "top-k",
        "fft",              "cholesky",          "triangular-solve"};
    return kNames[feature];
  }

  // A module (never wrapped in a fusion, exact results): a random producer
  // chain, then `feature` with random valid attributes on its newest value,
  // then a random consumer chain extending the feature's result. Complex
  // values never enter the pool (most chain operations do not compile for
  // them): the feature's complex results are turned real (real, imag or
  // convert) before the consumer chain.
  std::string GenerateAround(Feature feature) {
    no_float_bitcast_ = true;
    const ElementType type = RandomType();
    const std::vector<int64_t> dims = RandomDims();
    const int parameter_count = 1 + Uniform(0, 1);
    for (int i = 0; i < parameter_count; ++i) {
      AddParameter(Value{"", Uniform(0, 3) == 0 ? RandomType() : type, dims}, /*pool=*/true);
    }
    const int producers = Uniform(0, 4);
    for (int s = 0; s < producers; ++s) {
      for (int attempt = 0; attempt < 20 && !Step(); ++attempt) {
      }
    }
    for (int attempt = 0; attempt < 20 && !feature_emitted_; ++attempt) {
      switch (feature) {
        case kGather: feature_emitted_ = GatherStep(); break;
        case kScatter: feature_emitted_ = ScatterStep(); break;
        case kReduceWindow: feature_emitted_ = ReduceWindowStep(); break;
        case kSort: feature_emitted_ = SortStep(); break;
        case kWhile: feature_emitted_ = WhileStep(); break;
        case kConditional: feature_emitted_ = ConditionalStep(); break;
        case kRngBitGenerator: feature_emitted_ = RngBitGeneratorStep(); break;
        case kVariadicScatter: feature_emitted_ = VariadicScatterStep(); break;
        case kMap: feature_emitted_ = MapStep(); break;
        case kSelectAndScatter: feature_emitted_ = SelectAndScatterStep(); break;
        case kTopK: feature_emitted_ = TopKStep(); break;
        case kFft: feature_emitted_ = FftStep(); break;
        case kCholesky: feature_emitted_ = CholeskyStep(); break;
        case kTriangularSolve: feature_emitted_ = TriangularSolveStep(); break;
        default: feature_emitted_ = ComplexIotaStep(); break;
      }
    }
    // Each consumer extends the newest value (iota, case 13, would not), so
    // the root depends on the feature. A result compared within a norm-wise
    // bound is the root itself: a consumer (a convert to an integer, a
    // compare) could turn a difference within the bound into any other.
    const int consumers = norm_tolerance_ > 0 ? 0 : Uniform(0, 3);
    for (int s = 0; s < consumers; ++s) {
      for (int attempt = 0; attempt < 20; ++attempt) {
        const int kind = Uniform(0, 15);
        if (StepOn(pool_.back(), kind == 13 ? 16 : kind)) break;
      }
    }
    static const char* const kModuleNames[] = {"gather",       "scatter",      "reduce_window",
                                               "sort",         "while",        "conditional",
                                               "complex_iota", "rng_bit_generator",
                                               "variadic_scatter", "map", "select_and_scatter",
                                               "topk", "fft", "cholesky", "triangular_solve"};
    std::string text = absl::StrCat("HloModule random_", kModuleNames[feature], "\n\n");
    for (const std::string& computation : computations_) absl::StrAppend(&text, computation, "\n");
    absl::StrAppend(&text, "ENTRY e {\n", absl::StrJoin(parameters_, "\n"), "\n");
    for (size_t i = 0; i < body_.size(); ++i) {
      absl::StrAppend(&text, i + 1 == body_.size() ? "  ROOT" : " ", body_[i].substr(1), "\n");
    }
    absl::StrAppend(&text, "}\n");
    return text;
  }

  // Whether GenerateAround managed to place its feature (a generator bug if not).
  bool feature_emitted() const { return feature_emitted_; }

  // For a root computed in a legitimately different order (fft, cholesky,
  // triangular-solve: library calls with a stated error bound): the
  // CheckOptions::norm_tolerance and norm_minor_dims it is compared with; 0
  // for exact results.
  double norm_tolerance() const { return norm_tolerance_; }
  int norm_minor_dims() const { return norm_minor_dims_; }

  // Whether the module has an operation that compiles only through a pass
  // (topk, through expand-topk): with the pipeline off it is an interpreted
  // step, still compared with the evaluator.
  bool needs_passes() const { return needs_passes_; }

 private:
  Value AddParameter(Value v, bool pool) {
    const size_t index = parameters_.size();
    v.name = absl::StrCat("p", index);
    const std::string text = ShapeText(v);
    texts_[v.name] = text;
    parameters_.push_back(absl::StrCat("  ", v.name, " = ", text, " parameter(", index, ")"));
    if (pool) pool_.push_back(v);
    return v;
  }

  std::string Text(const Value& v) const { return texts_.at(v.name); }

  // A line of a tuple-shaped (or otherwise fixed-text) value; returns its name.
  std::string EmitLine(const std::string& text, const std::string& op) {
    const std::string name = absl::StrCat("v", counter_++);
    body_.push_back(absl::StrCat("   ", name, " = ", text, " ", op));
    return name;
  }

  std::string Constant(ElementType type, const std::string& literal) {
    const std::string name = absl::StrCat("c", counter_++);
    body_.push_back(absl::StrCat("   ", name, " = ", ElementTypeName(type), "[] constant(",
                                 literal, ")"));
    return name;
  }

  static int64_t Count(const std::vector<int64_t>& dims) {
    int64_t count = 1;
    for (int64_t d : dims) count *= d;
    return count;
  }

  // k distinct numbers of [0, n), sorted.
  std::vector<int64_t> SortedSubset(int64_t n, int64_t k) {
    std::vector<int64_t> all(n);
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), rng_);
    all.resize(k);
    std::sort(all.begin(), all.end());
    return all;
  }

  // The element type of a feature's operand.
  ElementType FeatureType(bool complex) {
    static const std::vector<ElementType> types = {
        ElementType::kF32, ElementType::kF32, ElementType::kF64, ElementType::kS32,
        ElementType::kS32, ElementType::kS8,  ElementType::kU8,  ElementType::kF16,
        ElementType::kBF16, ElementType::kPred, ElementType::kC64, ElementType::kC64};
    for (;;) {
      const ElementType t = Pick(types);
      if (complex || !IsComplex(t)) return t;
    }
  }

  // The newest value, made an array (with `need_rank`, of rank >= 1) of at
  // most 1000 elements, so that the evaluator stays quick.
  Value Operand(bool need_rank) {
    Value x = pool_.back();
    if (need_rank && x.dims.empty()) {
      Value y = x;
      y.dims = {Uniform(1, 6)};
      Emit(y, absl::StrCat("broadcast(", x.name, "), dimensions={}"));
      x = pool_.back();
    }
    // Mostly nonempty: an empty operand leaves little to check.
    if (Count(x.dims) == 0 && Uniform(0, 4) != 0) {
      std::vector<int64_t> dims;
      do {
        dims = RandomDims();
      } while (Count(dims) == 0 || (need_rank && dims.empty()));
      x = AddParameter(Value{"", x.type, dims}, /*pool=*/true);
    }
    if (Count(x.dims) > 1000) {
      Value y = x;
      std::vector<std::string> parts;
      for (int64_t& d : y.dims) {
        d = std::min<int64_t>(d, 9);
        parts.push_back(absl::StrCat("[0:", d, "]"));
      }
      Emit(y, absl::StrCat("slice(", x.name, "), slice={", absl::StrJoin(parts, ", "), "}"));
      x = pool_.back();
    }
    return x;
  }

  // `x` converted to `type`; a complex value is complex(re, im) of two real
  // values of the part type, and stays out of the pool.
  Value ToType(const Value& x, ElementType type) {
    if (x.type == type) return x;
    if (IsComplex(type)) {
      const ElementType part = type == ElementType::kC64 ? ElementType::kF32 : ElementType::kF64;
      const Value re = ToType(x, part);
      std::string im = re.name;
      if (Uniform(0, 1)) {
        Emit(re, absl::StrCat("negate(", re.name, ")"));
        im = pool_.back().name;
      }
      Value c = x;
      c.type = type;
      return EmitAside(c, absl::StrCat("complex(", re.name, ", ", im, ")"));
    }
    Value y = x;
    y.type = type;
    Emit(y, absl::StrCat("convert(", x.name, ")"));
    return pool_.back();
  }

  // Puts a feature's result in the pool: real values as they are, complex
  // ones through real, imag or a convert.
  void Finish(const Value& v) {
    if (!IsComplex(v.type)) {
      pool_.push_back(v);
      return;
    }
    Value y = v;
    y.type = v.type == ElementType::kC64 ? ElementType::kF32 : ElementType::kF64;
    switch (Uniform(0, 2)) {
      case 0: Emit(y, absl::StrCat("real(", v.name, ")")); break;
      case 1: Emit(y, absl::StrCat("imag(", v.name, ")")); break;
      default:
        y.type = Pick(std::vector<ElementType>{ElementType::kF32, ElementType::kF64,
                                               ElementType::kS32});
        Emit(y, absl::StrCat("convert(", v.name, ")"));
    }
  }

  // Gather and scatter indices: a parameter of a random integer type (the
  // random arguments are rich in 0, +-1, small values and extremes, so
  // starts repeat and are often out of range), sometimes doubled.
  Value Indices(const std::vector<int64_t>& dims) {
    const ElementType t = Pick(std::vector<ElementType>{ElementType::kS32, ElementType::kS32,
                                                        ElementType::kU8, ElementType::kS64,
                                                        ElementType::kU64});
    const Value p = AddParameter(Value{"", t, dims}, /*pool=*/false);
    if (Uniform(0, 2) == 0) return EmitAside(p, absl::StrCat("add(", p.name, ", ", p.name, ")"));
    return p;
  }

  // The index vector of `vector_size` entries for `batch`: implicit (a
  // trailing size-1 dimension) or inserted at a random position, returned
  // in `index_vector_dim`; the indices parameter of those dimensions.
  Value IndexVector(const std::vector<int64_t>& batch, size_t vector_size,
                    int64_t* index_vector_dim) {
    const int64_t batch_rank = static_cast<int64_t>(batch.size());
    const bool implicit = vector_size == 1 && Uniform(0, 1) == 1;
    *index_vector_dim = implicit ? batch_rank : Uniform(0, batch_rank);
    std::vector<int64_t> index_dims = batch;
    if (!implicit) index_dims.insert(index_dims.begin() + *index_vector_dim, vector_size);
    return Indices(index_dims);
  }

  // Dimensions of rank chosen.size() + others.size(): chosen_sizes at the
  // positions `chosen` (sorted), `others` in order elsewhere.
  static std::vector<int64_t> Interleave(const std::vector<int64_t>& chosen,
                                         const std::vector<int64_t>& chosen_sizes,
                                         const std::vector<int64_t>& others) {
    std::vector<int64_t> dims;
    size_t c = 0, o = 0;
    for (size_t i = 0; i < chosen.size() + others.size(); ++i) {
      const bool is_chosen = c < chosen.size() && chosen[c] == static_cast<int64_t>(i);
      dims.push_back(is_chosen ? chosen_sizes[c++] : others[o++]);
    }
    return dims;
  }

  static std::string Dims(const std::vector<int64_t>& dims) {
    return absl::StrCat("{", absl::StrJoin(dims, ","), "}");
  }

  // A binary computation `name` on scalars of `type` applying `op`
  // ("second": returns its second parameter).
  std::string Binary(ElementType type, const std::string& op) {
    const std::string name = absl::StrCat("comb", computations_.size());
    const std::string t = absl::StrCat(ElementTypeName(type), "[]");
    computations_.push_back(
        op == "second"
            ? absl::StrCat(name, " {\n  a = ", t, " parameter(0)\n  ROOT b = ", t,
                           " parameter(1)\n}\n")
            : absl::StrCat(name, " {\n  a = ", t, " parameter(0)\n  b = ", t,
                           " parameter(1)\n  ROOT r = ", t, " ", op, "(a, b)\n}\n"));
    return name;
  }

  // A reducer or combiner operation for `type`.
  std::string ReducerOp(ElementType type, bool overwrite) {
    std::vector<std::string> ops;
    if (IsPred(type)) {
      ops = {"or", "and", "xor"};
    } else if (IsComplex(type)) {
      ops = {"add", "add", "multiply"};
    } else {
      ops = {"add", "add", "maximum", "minimum", "multiply"};
    }
    if (overwrite) ops.push_back("second");
    return Pick(ops);
  }

  bool GatherStep() {
    const ElementType type = FeatureType(/*complex=*/true);
    const Value x = ToType(Operand(true), type);
    const int64_t rank = x.dims.size();
    std::vector<int64_t> map(rank);
    std::iota(map.begin(), map.end(), 0);
    std::shuffle(map.begin(), map.end(), rng_);
    map.resize(Uniform(1, rank));
    // Batch dimensions of the indices; one of them may pair with an operand
    // batching dimension (outside the index map, slice size 1).
    std::vector<int64_t> batch;
    const int batch_rank = Uniform(0, 2);
    for (int i = 0; i < batch_rank; ++i) batch.push_back(Uniform(0, 9) == 0 ? 0 : Uniform(1, 4));
    int64_t operand_batching = -1;
    int64_t batch_position = -1;
    if (batch_rank > 0 && static_cast<int64_t>(map.size()) < rank && Uniform(0, 3) == 0) {
      for (int64_t d = 0; d < rank; ++d) {
        if (std::find(map.begin(), map.end(), d) == map.end() && x.dims[d] >= 1) {
          operand_batching = d;
        }
      }
      if (operand_batching >= 0) {
        batch_position = Uniform(0, batch_rank - 1);
        batch[batch_position] = x.dims[operand_batching];
      }
    }
    std::vector<int64_t> collapsed;
    std::vector<int64_t> slice_sizes(rank);
    std::vector<int64_t> offset_sizes;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t size = x.dims[d];
      if (d == operand_batching) {
        slice_sizes[d] = 1;
      } else if (size >= 1 && Uniform(0, 2) == 0) {
        collapsed.push_back(d);
        slice_sizes[d] = 1;
      } else {
        slice_sizes[d] = Uniform(0, 2) == 0 ? size : Uniform(0, size);
        offset_sizes.push_back(slice_sizes[d]);
      }
    }
    int64_t index_vector_dim = 0;
    const Value indices = IndexVector(batch, map.size(), &index_vector_dim);
    const int64_t out_rank = batch_rank + offset_sizes.size();
    const std::vector<int64_t> offset_dims = SortedSubset(out_rank, offset_sizes.size());
    Value result{"", type, Interleave(offset_dims, offset_sizes, batch)};
    std::string batching;
    if (operand_batching >= 0) {
      const int64_t indices_dim =
          batch_position >= index_vector_dim ? batch_position + 1 : batch_position;
      batching = absl::StrCat(", operand_batching_dims={", operand_batching,
                              "}, start_indices_batching_dims={", indices_dim, "}");
    }
    const Value g = EmitAside(
        result, absl::StrCat("gather(", x.name, ", ", indices.name, "), offset_dims=",
                             Dims(offset_dims), ", collapsed_slice_dims=", Dims(collapsed),
                             ", start_index_map=", Dims(map), ", index_vector_dim=",
                             index_vector_dim, ", slice_sizes=", Dims(slice_sizes), batching));
    Finish(g);
    return true;
  }

  bool ScatterStep() {
    const ElementType type = FeatureType(/*complex=*/true);
    const Value x = ToType(Operand(true), type);
    const int64_t rank = x.dims.size();
    std::vector<int64_t> map(rank);
    std::iota(map.begin(), map.end(), 0);
    std::shuffle(map.begin(), map.end(), rng_);
    map.resize(Uniform(1, rank));
    std::vector<int64_t> inserted;
    std::vector<int64_t> windows;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t size = x.dims[d];
      if (Uniform(0, 2) == 0) {
        inserted.push_back(d);
      } else {
        // Full-size windows fit only at start 0: most windows are then out of bounds.
        const int r = Uniform(0, 3);
        windows.push_back(r == 0 ? size : r == 1 ? Uniform(0, size)
                                                 : std::min<int64_t>(size, Uniform(1, 2)));
      }
    }
    std::vector<int64_t> batch;
    const int batch_rank = Uniform(0, 2);
    for (int i = 0; i < batch_rank; ++i) batch.push_back(Uniform(0, 9) == 0 ? 0 : Uniform(1, 5));
    int64_t index_vector_dim = 0;
    const Value indices = IndexVector(batch, map.size(), &index_vector_dim);
    const int64_t update_rank = batch_rank + windows.size();
    const std::vector<int64_t> window_dims = SortedSubset(update_rank, windows.size());
    const Value updates =
        AddParameter(Value{"", type, Interleave(window_dims, windows, batch)}, /*pool=*/false);
    const std::string combiner = Binary(type, ReducerOp(type, /*overwrite=*/true));
    // The result keeps the operand's layout: with the pass pipeline off, a
    // scatter whose layouts differ is an interpreted step (its kernel starts
    // from the operand's bytes; layout assignment makes the layouts equal),
    // and this test requires every step compiled. (Found by this test: the
    // kernel used to run on the unpermuted bytes.)
    const std::string result_text = Text(x);
    const Value s = EmitAside(
        x, absl::StrCat("scatter(", x.name, ", ", indices.name, ", ", updates.name,
                        "), update_window_dims=", Dims(window_dims), ", inserted_window_dims=",
                        Dims(inserted), ", scatter_dims_to_operand_dims=", Dims(map),
                        ", index_vector_dim=", index_vector_dim, ", to_apply=", combiner),
        result_text);
    // Reading the operand after the scatter keeps it alive: the scatter
    // cannot update it in place and copies it first.
    if (Uniform(0, 2) == 0) {
      const std::string op = IsPred(type) ? "xor" : "subtract";
      Finish(EmitAside(x, absl::StrCat(op, "(", s.name, ", ", x.name, ")")));
    } else {
      Finish(s);
    }
    return true;
  }

  // The window of one dimension of size `size` and the number of window
  // positions along it, as interpreter/reduce_window.cc computes it.
  int64_t RandomWindowDimension(int64_t size, std::vector<int64_t>* parts) {
    const int64_t window = Uniform(1, 4);
    const int64_t stride = Uniform(0, 2) == 0 ? Uniform(2, 3) : 1;
    const int64_t base_dilation = Uniform(0, 3) == 0 ? Uniform(2, 3) : 1;
    const int64_t window_dilation = Uniform(0, 3) == 0 ? Uniform(2, 3) : 1;
    int64_t low = Uniform(0, 2) == 0 ? Uniform(-2, 3) : 0;
    int64_t high = Uniform(0, 2) == 0 ? Uniform(-2, 3) : 0;
    const int64_t reversal = Uniform(0, 3) == 0 ? 1 : 0;
    const int64_t dilated = size == 0 ? 0 : (size - 1) * base_dilation + 1;
    if (dilated + low + high < 0) low = high = 0;  // The padded size must not be negative.
    const int64_t padded = dilated + low + high;
    const int64_t dilated_window = (window - 1) * window_dilation + 1;
    const int64_t out = padded < dilated_window ? 0 : (padded - dilated_window) / stride + 1;
    *parts = {window, stride, low, high, base_dilation, window_dilation, reversal};
    return out;
  }

  bool ReduceWindowStep() {
    const ElementType type = FeatureType(/*complex=*/true);
    const Value x = ToType(Operand(true), type);
    const int64_t rank = x.dims.size();
    std::vector<std::vector<int64_t>> parts(7);
    std::vector<int64_t> out_dims;
    for (int64_t d = 0; d < rank; ++d) {
      std::vector<int64_t> w;
      out_dims.push_back(RandomWindowDimension(x.dims[d], &w));
      for (int i = 0; i < 7; ++i) parts[i].push_back(w[i]);
    }
    std::vector<std::string> pads;
    for (int64_t d = 0; d < rank; ++d) pads.push_back(absl::StrCat(parts[2][d], "_", parts[3][d]));
    const std::string window = absl::StrCat(
        "window={size=", absl::StrJoin(parts[0], "x"), " stride=", absl::StrJoin(parts[1], "x"),
        " pad=", absl::StrJoin(pads, "x"), " lhs_dilate=", absl::StrJoin(parts[4], "x"),
        " rhs_dilate=", absl::StrJoin(parts[5], "x"), " rhs_reversal=",
        absl::StrJoin(parts[6], "x"), "}");
    // The init value: a constant (often not the reducer's identity, so
    // padding and dilation holes show) or a scalar parameter.
    auto init = [&](ElementType t) {
      if (IsComplex(t)) {
        const ElementType part = t == ElementType::kC64 ? ElementType::kF32 : ElementType::kF64;
        const std::string re = Constant(part, Pick(std::vector<std::string>{"0", "1", "-2.5"}));
        const std::string im = Constant(part, Pick(std::vector<std::string>{"0", "-0", "0.5"}));
        return EmitLine(absl::StrCat(ElementTypeName(t), "[]"),
                        absl::StrCat("complex(", re, ", ", im, ")"));
      }
      if (Uniform(0, 3) == 0) return AddParameter(Value{"", t, {}}, /*pool=*/false).name;
      return Constant(t, ConstantText(t));
    };
    if (IsComplex(type) || Uniform(0, 2) != 0) {
      const std::string reducer = Binary(type, ReducerOp(type, /*overwrite=*/false));
      const std::string init_value = init(type);
      Finish(EmitAside(Value{"", type, out_dims},
                       absl::StrCat("reduce-window(", x.name, ", ", init_value, "), ", window,
                                    ", to_apply=", reducer)));
      return true;
    }
    // Variadic: the value with an s32 iota (argmax-like, or independent
    // reductions), or with another value of the same dimensions.
    Value y{"", ElementType::kS32, x.dims};
    if (Uniform(0, 1) == 0) {
      y = EmitAside(y, absl::StrCat("iota(), iota_dimension=", Uniform(0, rank - 1)));
    } else {
      const Value* other = nullptr;
      for (const Value& v : pool_) {
        if (v.dims == x.dims && !IsComplex(v.type)) other = &v;
      }
      y = *other;  // x itself at least.
    }
    const std::string a = absl::StrCat(ElementTypeName(type), "[]");
    const std::string i = absl::StrCat(ElementTypeName(y.type), "[]");
    const std::string name = absl::StrCat("reducer", computations_.size());
    std::string text = absl::StrCat(name, " {\n  a = ", a, " parameter(0)\n  i = ", i,
                                    " parameter(1)\n  b = ", a, " parameter(2)\n  j = ", i,
                                    " parameter(3)\n");
    if (Uniform(0, 1) == 0) {
      const std::string direction = Pick(std::vector<std::string>{"GE", "GT", "LE", "LT"});
      const std::string total = IsFloat(type) && Uniform(0, 1) ? ", type=TOTALORDER" : "";
      absl::StrAppend(&text, "  ge = pred[] compare(a, b), direction=", direction, total, "\n",
                      "  m = ", a, " select(ge, a, b)\n  k = ", i, " select(ge, i, j)\n");
    } else {
      absl::StrAppend(&text, "  m = ", a, " ", ReducerOp(type, false), "(a, b)\n  k = ", i, " ",
                      ReducerOp(y.type, false), "(i, j)\n");
    }
    absl::StrAppend(&text, "  ROOT r = (", a, ", ", i, ") tuple(m, k)\n}\n");
    computations_.push_back(text);
    const std::string init0 = init(type);
    const std::string init1 = init(y.type);
    Value r0{"", type, out_dims};
    Value r1{"", y.type, out_dims};
    const std::string t0 = ShapeText(r0);
    const std::string t1 = ShapeText(r1);
    const std::string tuple =
        EmitLine(absl::StrCat("(", t0, ", ", t1, ")"),
                 absl::StrCat("reduce-window(", x.name, ", ", y.name, ", ", init0, ", ", init1,
                              "), ", window, ", to_apply=", name));
    const Value g1 = EmitAside(r1, absl::StrCat("get-tuple-element(", tuple, "), index=1"), t1);
    const Value g0 = EmitAside(r0, absl::StrCat("get-tuple-element(", tuple, "), index=0"), t0);
    Finish(g1);
    Finish(g0);
    return true;
  }

  bool SortStep() {
    const ElementType key_type = FeatureType(/*complex=*/false);
    const Value x = ToType(Operand(true), key_type);
    const int64_t rank = x.dims.size();
    const int64_t dimension = Uniform(0, rank - 1);
    std::vector<Value> operands = {x};
    const int payloads = Uniform(0, 2);
    for (int k = 0; k < payloads; ++k) {
      switch (Uniform(0, 2)) {
        case 0:  // The permutation itself.
          operands.push_back(EmitAside(Value{"", ElementType::kS32, x.dims},
                                       absl::StrCat("iota(), iota_dimension=", dimension)));
          break;
        case 1: {  // Another value, perhaps complex.
          Value other = x;  // A copy: ToType grows the pool.
          for (const Value& v : pool_) {
            if (v.dims == x.dims) other = v;
          }
          operands.push_back(ToType(other, FeatureType(/*complex=*/true)));
          break;
        }
        default:
          operands.push_back(AddParameter(Value{"", FeatureType(true), x.dims}, false));
      }
    }
    // The key is any real operand (the others ride along).
    std::vector<size_t> real;
    for (size_t k = 0; k < operands.size(); ++k) {
      if (!IsComplex(operands[k].type)) real.push_back(k);
    }
    const size_t key = Pick(real);
    const ElementType kt = operands[key].type;
    const std::string name = absl::StrCat("cmp", computations_.size());
    std::string text = absl::StrCat(name, " {\n");
    for (size_t k = 0; k < 2 * operands.size(); ++k) {
      absl::StrAppend(&text, "  x", k, " = ", ElementTypeName(operands[k / 2].type),
                      "[] parameter(", k, ")\n");
    }
    const std::string direction = Pick(std::vector<std::string>{"LT", "GT"});
    std::string type_attr;
    if (IsFloat(kt) && Uniform(0, 1)) type_attr = ", type=TOTALORDER";
    absl::StrAppend(&text, "  ROOT r = pred[] compare(x", 2 * key, ", x", 2 * key + 1,
                    "), direction=", direction, type_attr, "\n}\n");
    computations_.push_back(text);
    std::vector<std::string> names;
    std::vector<std::string> texts;
    for (const Value& v : operands) {
      names.push_back(v.name);
      texts.push_back(ShapeText(v));
    }
    const std::string attrs = absl::StrCat("), dimensions={", dimension, "}",
                                           Uniform(0, 1) ? ", is_stable=true" : "",
                                           ", to_apply=", name);
    if (operands.size() == 1) {
      Finish(EmitAside(x, absl::StrCat("sort(", x.name, attrs), texts[0]));
      return true;
    }
    const std::string sorted =
        EmitLine(absl::StrCat("(", absl::StrJoin(texts, ", "), ")"),
                 absl::StrCat("sort(", absl::StrJoin(names, ", "), attrs));
    // The key last, so that the consumers extend it.
    std::vector<size_t> order;
    for (size_t k = 0; k < operands.size(); ++k) {
      if (k != key) order.push_back(k);
    }
    order.push_back(key);
    for (size_t k : order) {
      Finish(EmitAside(operands[k], absl::StrCat("get-tuple-element(", sorted, "), index=", k),
                       texts[k]));
    }
    return true;
  }

  // A step that keeps shapes (for loop bodies and branches): unary, binary,
  // compare+select, clamp, reverse, or a convert there and back; complex
  // values get the complex operations that compile.
  bool SameShapeStep() {
    const Value x = Uniform(0, 9) < 7 ? pool_.back() : Pick(pool_);
    if (IsComplex(x.type)) {
      const std::string y = Find(x.type, x.dims)->name;
      switch (Uniform(0, 3)) {
        case 0: Emit(x, absl::StrCat("negate(", x.name, ")")); return true;
        case 1:
          Emit(x, absl::StrCat(Pick(std::vector<std::string>{"add", "subtract", "multiply",
                                                             "divide"}),
                               "(", x.name, ", ", y, ")"));
          return true;
        case 2: {
          const Value p = EmitAside(Value{"", ElementType::kPred, x.dims},
                                    absl::StrCat("compare(", x.name, ", ", y, "), direction=",
                                                 Uniform(0, 1) ? "EQ" : "NE"));
          Emit(x, absl::StrCat("select(", p.name, ", ", x.name, ", ", y, ")"));
          return true;
        }
        default: {
          Value part = x;
          part.type = x.type == ElementType::kC64 ? ElementType::kF32 : ElementType::kF64;
          const Value re = EmitAside(part, absl::StrCat("real(", x.name, ")"));
          const Value im = EmitAside(part, absl::StrCat("imag(", x.name, ")"));
          Emit(x, absl::StrCat("complex(", im.name, ", ", re.name, ")"));
          return true;
        }
      }
    }
    const int kind = Pick(std::vector<int>{0, 1, 2, 3, 4, 7, 17});
    if (kind != 17) return StepOn(x, kind);
    Value y = x;
    y.type = ConvertTarget(x.type);
    const Value there = EmitAside(y, absl::StrCat("convert(", x.name, ")"));
    Emit(x, absl::StrCat("convert(", there.name, ")"));
    return true;
  }

  // Appends to `lines` (a called computation's body after its parameter
  // lines, which define `inputs`) a random chain of shape-keeping steps,
  // ending in a value of `result`'s type and dims written as `result_text`
  // (a binary operation of the newest such value and another); returns its
  // name.
  std::string SameShapeChain(std::vector<std::string>* lines, const std::vector<Value>& inputs,
                             const Value& result, const std::string& result_text) {
    ModuleGenerator sub(rng_());
    sub.no_float_bitcast_ = no_float_bitcast_;
    sub.counter_ = 1000 * ++sub_generators_;
    sub.pool_ = inputs;
    const int steps = Uniform(0, 4);
    for (int s = 0; s < steps; ++s) {
      for (int attempt = 0; attempt < 20 && !sub.SameShapeStep(); ++attempt) {
      }
    }
    const Value* last = nullptr;
    for (const Value& v : sub.pool_) {
      if (v.type == result.type && v.dims == result.dims) last = &v;
    }
    const std::string other = sub.Find(result.type, result.dims)->name;
    std::vector<std::string> ops;
    if (IsPred(result.type)) ops = {"and", "or", "xor"};
    else if (IsComplex(result.type)) ops = {"add", "subtract", "multiply"};
    else ops = {"add", "subtract", "multiply", "maximum", "minimum"};
    const std::string op = absl::StrCat(sub.Pick(ops), "(", last->name, ", ", other, ")");
    const Value final_value = sub.EmitAside(result, op, result_text);
    for (const std::string& line : sub.body_) lines->push_back(line);
    return final_value.name;
  }

  // A feature operand of a random type (complex too), any rank.
  Value ControlFlowOperand() { return ToType(Operand(false), FeatureType(/*complex=*/true)); }

  bool WhileStep() {
    const Value x = ControlFlowOperand();
    const std::string x_text = Text(x);
    std::optional<Value> y;
    if (Uniform(0, 1)) y = Pick(pool_);
    const Value n = AddParameter(Value{"", ElementType::kS32, {}}, /*pool=*/false);
    std::string state = absl::StrCat("(s32[], s32[], ", x_text);
    if (y) absl::StrAppend(&state, ", ", Text(*y));
    absl::StrAppend(&state, ")");
    const std::string id = absl::StrCat(computations_.size());
    // Condition: i < clamp(-1, n, max), so loops run 0 to 5 times.
    computations_.push_back(absl::StrCat(
        "cond", id, " {\n  s = ", state, " parameter(0)\n",
        "  i = s32[] get-tuple-element(s), index=0\n",
        "  n = s32[] get-tuple-element(s), index=1\n  lo = s32[] constant(-1)\n",
        "  hi = s32[] constant(", Uniform(1, 5), ")\n  m = s32[] clamp(lo, n, hi)\n",
        "  ROOT lt = pred[] compare(i, m), direction=LT\n}\n"));
    std::vector<std::string> lines = {
        absl::StrCat("  s = ", state, " parameter(0)"),
        "  i = s32[] get-tuple-element(s), index=0",
        "  n = s32[] get-tuple-element(s), index=1",
        absl::StrCat("  x = ", x_text, " get-tuple-element(s), index=2"),
        "  one = s32[] constant(1)",
        "  i1 = s32[] add(i, one)"};
    std::vector<Value> inputs = {Value{"x", x.type, x.dims}};
    if (y) {
      lines.push_back(absl::StrCat("  y = ", Text(*y), " get-tuple-element(s), index=3"));
      inputs.insert(inputs.begin(), Value{"y", y->type, y->dims});
    }
    if (!IsPred(x.type) && Uniform(0, 1)) {  // The counter as a value of x's type.
      const std::string t = ElementTypeName(x.type).data();
      lines.push_back(absl::StrCat("  ic = ", t, "[] convert(i)"));
      lines.push_back(absl::StrCat("  ib = ", ShapeText(x), " broadcast(ic), dimensions={}"));
      inputs.insert(inputs.end() - 1, Value{"ib", x.type, x.dims});
    }
    const std::string x1 = SameShapeChain(&lines, inputs, x, x_text);
    std::string y1 = "y";
    if (y && Uniform(0, 1)) y1 = SameShapeChain(&lines, {inputs.back(), Value{"y", y->type, y->dims}},
                                           *y, Text(*y));
    std::vector<std::string> next = {"i1", "n", x1};
    if (y) next.push_back(y1);
    lines.push_back(absl::StrCat("  ROOT next = ", state, " tuple(", absl::StrJoin(next, ", "),
                                 ")"));
    computations_.push_back(absl::StrCat("body", id, " {\n", absl::StrJoin(lines, "\n"), "\n}\n"));
    const std::string zero = Constant(ElementType::kS32, Uniform(0, 3) ? "0" : "-2");
    std::vector<std::string> init = {zero, n.name, x.name};
    if (y) init.push_back(y->name);
    const std::string start = EmitLine(state, absl::StrCat("tuple(", absl::StrJoin(init, ", "), ")"));
    const std::string loop = EmitLine(state, absl::StrCat("while(", start, "), condition=cond", id,
                                                          ", body=body", id));
    if (y && Uniform(0, 1)) {
      Finish(EmitAside(*y, absl::StrCat("get-tuple-element(", loop, "), index=3"), Text(*y)));
    }
    Finish(EmitAside(x, absl::StrCat("get-tuple-element(", loop, "), index=2"), x_text));
    return true;
  }

  bool ConditionalStep() {
    const Value x = ControlFlowOperand();
    const std::string result_text = ShapeText(x);
    std::string selector;
    int branches = 2;
    const bool pred_selector = Uniform(0, 1);
    if (pred_selector) {  // pred: a parameter or a comparison.
      const Value p = AddParameter(
          Value{"", Uniform(0, 1) ? ElementType::kPred : ElementType::kS32, {}}, false);
      selector = p.type == ElementType::kPred
                     ? p.name
                     : EmitLine("pred[]", absl::StrCat("compare(", p.name, ", ",
                                                       Constant(ElementType::kS32, "0"),
                                                       "), direction=LT"));
    } else {  // s32: negative and large values pick the last branch.
      selector = AddParameter(Value{"", ElementType::kS32, {}}, false).name;
      branches = Uniform(1, 3);
    }
    std::vector<std::string> names;
    std::vector<std::string> operands;
    for (int k = 0; k < branches; ++k) {
      const std::string name = absl::StrCat("branch", computations_.size());
      names.push_back(name);
      std::vector<std::string> lines;
      std::vector<Value> inputs;
      // The branch operand: x, another value like x, or a tuple of x and any value.
      const int kind = Uniform(0, 2);
      if (kind < 2) {
        Value operand = x;
        if (kind == 1 && !IsComplex(x.type)) operand = *Find(x.type, x.dims);
        operands.push_back(operand.name);
        lines.push_back(absl::StrCat("  p = ", Text(operand), " parameter(0)"));
        inputs.push_back(Value{"p", x.type, x.dims});
      } else {
        const Value y = Pick(pool_);
        const std::string tuple_text = absl::StrCat("(", Text(x), ", ", Text(y), ")");
        operands.push_back(EmitLine(tuple_text, absl::StrCat("tuple(", x.name, ", ", y.name, ")")));
        lines.push_back(absl::StrCat("  p = ", tuple_text, " parameter(0)"));
        lines.push_back(absl::StrCat("  a = ", Text(x), " get-tuple-element(p), index=0"));
        lines.push_back(absl::StrCat("  b = ", Text(y), " get-tuple-element(p), index=1"));
        inputs.push_back(Value{"b", y.type, y.dims});
        inputs.push_back(Value{"a", x.type, x.dims});
      }
      const std::string root = SameShapeChain(&lines, inputs, x, result_text);
      // SameShapeChain's last line is the root.
      lines.back().replace(0, 3 + root.size(), absl::StrCat("  ROOT ", root));
      computations_.push_back(absl::StrCat(name, " {\n", absl::StrJoin(lines, "\n"), "\n}\n"));
    }
    const std::string attrs =
        pred_selector ? absl::StrCat("true_computation=", names[0], ", false_computation=",
                                     names[1])
                      : absl::StrCat("branch_computations={", absl::StrJoin(names, ", "), "}");
    Finish(EmitAside(x, absl::StrCat("conditional(", selector, ", ",
                                     absl::StrJoin(operands, ", "), "), ", attrs),
                     result_text));
    return true;
  }

  // rng-bit-generator with a random algorithm, state size and element type
  // over the newest value's dimensions; the bits continue the chain (added
  // to the newest value, or alone).
  bool RngBitGeneratorStep() {
    const Value x = Operand(false);
    const ElementType type = Pick(std::vector<ElementType>{
        ElementType::kU32, ElementType::kU32, ElementType::kS32, ElementType::kU8,
        ElementType::kS8, ElementType::kU16, ElementType::kS64, ElementType::kU64,
        ElementType::kF32, ElementType::kF16, ElementType::kBF16, ElementType::kF64});
    const std::string algorithm =
        Pick(std::vector<std::string>{"rng_three_fry", "rng_philox", "rng_default"});
    // The verifier's state sizes: 2 for ThreeFry, 3 for Philox, any for the default.
    const int64_t state_size = algorithm == "rng_three_fry" ? 2
                               : algorithm == "rng_philox"  ? 3
                                                            : Uniform(2, 4);
    const Value state = AddParameter(Value{"", ElementType::kU64, {state_size}}, /*pool=*/false);
    const Value bits{"", type, x.dims};
    const std::string bits_text = ShapeText(bits);
    const std::string tuple = EmitLine(
        absl::StrCat("(u64[", state_size, "]{0}, ", bits_text, ")"),
        absl::StrCat("rng-bit-generator(", state.name, "), algorithm=", algorithm));
    const Value g = EmitAside(bits, absl::StrCat("get-tuple-element(", tuple, "), index=1"),
                              bits_text);
    if (x.type == type && Uniform(0, 1) == 0) {
      Finish(EmitAside(g, absl::StrCat(IsPred(type) ? "xor" : "add", "(", g.name, ", ", x.name,
                                       ")")));
    } else {
      Finish(g);
    }
    return true;
  }

  // The update computation of a two-operand scatter: per operand a reducer
  // op or "second", or an argmax-like pair (the larger first value wins,
  // with its second value).
  std::string PairCombiner(ElementType t0, ElementType t1) {
    const std::string name = absl::StrCat("vcomb", computations_.size());
    const std::string a = absl::StrCat(ElementTypeName(t0), "[]");
    const std::string b = absl::StrCat(ElementTypeName(t1), "[]");
    std::string text = absl::StrCat(name, " {\n  a0 = ", a, " parameter(0)\n  a1 = ", b,
                                    " parameter(1)\n  b0 = ", a, " parameter(2)\n  b1 = ", b,
                                    " parameter(3)\n");
    if (!IsPred(t0) && Uniform(0, 2) == 0) {
      absl::StrAppend(&text, "  gt = pred[] compare(b0, a0), direction=GT\n  m0 = ", a,
                      " select(gt, b0, a0)\n  m1 = ", b, " select(gt, b1, a1)\n");
    } else {
      const std::string op0 = ReducerOp(t0, /*overwrite=*/true);
      const std::string op1 = ReducerOp(t1, /*overwrite=*/true);
      absl::StrAppend(&text, "  m0 = ", a, " ",
                      op0 == "second" ? "copy(b0)" : absl::StrCat(op0, "(a0, b0)"), "\n");
      absl::StrAppend(&text, "  m1 = ", b, " ",
                      op1 == "second" ? "copy(b1)" : absl::StrCat(op1, "(a1, b1)"), "\n");
    }
    absl::StrAppend(&text, "  ROOT r = (", a, ", ", b, ") tuple(m0, m1)\n}\n");
    computations_.push_back(text);
    return name;
  }

  // scatter of two operands of the newest value's dimensions (of two real
  // types) with two updates, as ScatterStep otherwise.
  bool VariadicScatterStep() {
    const ElementType type0 = FeatureType(/*complex=*/false);
    const ElementType type1 = FeatureType(/*complex=*/false);
    const Value x0 = ToType(Operand(true), type0);
    const Value x1 = Uniform(0, 3) == 0 ? x0 : ToType(x0, type1);
    const int64_t rank = x0.dims.size();
    std::vector<int64_t> map(rank);
    std::iota(map.begin(), map.end(), 0);
    std::shuffle(map.begin(), map.end(), rng_);
    map.resize(Uniform(1, rank));
    std::vector<int64_t> inserted;
    std::vector<int64_t> windows;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t size = x0.dims[d];
      if (Uniform(0, 2) == 0) {
        inserted.push_back(d);
      } else {
        const int r = Uniform(0, 3);
        windows.push_back(r == 0 ? size : r == 1 ? Uniform(0, size)
                                                 : std::min<int64_t>(size, Uniform(1, 2)));
      }
    }
    std::vector<int64_t> batch;
    const int batch_rank = Uniform(0, 2);
    for (int i = 0; i < batch_rank; ++i) batch.push_back(Uniform(0, 9) == 0 ? 0 : Uniform(1, 5));
    int64_t index_vector_dim = 0;
    const Value indices = IndexVector(batch, map.size(), &index_vector_dim);
    const int64_t update_rank = batch_rank + windows.size();
    const std::vector<int64_t> window_dims = SortedSubset(update_rank, windows.size());
    const std::vector<int64_t> update_dims = Interleave(window_dims, windows, batch);
    const Value updates0 = AddParameter(Value{"", x0.type, update_dims}, /*pool=*/false);
    const Value updates1 = AddParameter(Value{"", x1.type, update_dims}, /*pool=*/false);
    const std::string combiner = PairCombiner(x0.type, x1.type);
    // The results keep the operands' layouts (see ScatterStep).
    const std::string t0 = Text(x0);
    const std::string t1 = Text(x1);
    const std::string tuple = EmitLine(
        absl::StrCat("(", t0, ", ", t1, ")"),
        absl::StrCat("scatter(", x0.name, ", ", x1.name, ", ", indices.name, ", ", updates0.name,
                     ", ", updates1.name, "), update_window_dims=", Dims(window_dims),
                     ", inserted_window_dims=", Dims(inserted),
                     ", scatter_dims_to_operand_dims=", Dims(map),
                     ", index_vector_dim=", index_vector_dim, ", to_apply=", combiner));
    const Value g1 = EmitAside(x1, absl::StrCat("get-tuple-element(", tuple, "), index=1"), t1);
    const Value g0 = EmitAside(x0, absl::StrCat("get-tuple-element(", tuple, "), index=0"), t0);
    Finish(g1);
    Finish(g0);
    return true;
  }

  // map of 1 to 3 values of the newest value's dimensions (any types, a
  // complex one now and then) through a random elementwise computation on
  // scalars (SameShapeChain: unary, binary, compare+select, clamp with
  // constants, converts there and back), whose result has the type of one
  // of the operands.
  bool MapStep() {
    const Value x = Operand(false);
    std::vector<Value> operands = {x};
    const int arity = Uniform(1, 3);
    for (int i = 1; i < arity; ++i) {
      std::vector<Value> same;
      for (const Value& v : pool_) {
        if (v.dims == x.dims) same.push_back(v);
      }
      operands.push_back(Uniform(0, 2) == 0
                             ? AddParameter(Value{"", RandomType(), x.dims}, /*pool=*/false)
                             : Pick(same));
    }
    if (Uniform(0, 5) == 0) {
      const size_t i = Uniform(0, operands.size() - 1);
      operands[i] = ToType(operands[i], Uniform(0, 1) ? ElementType::kC64 : ElementType::kC128);
    }
    const ElementType result_type = Pick(operands).type;
    const std::string name = absl::StrCat("mapped", computations_.size());
    std::vector<std::string> lines;
    std::vector<Value> inputs;
    std::vector<std::string> names;
    for (size_t i = 0; i < operands.size(); ++i) {
      const std::string t = absl::StrCat(ElementTypeName(operands[i].type), "[]");
      lines.push_back(absl::StrCat("  a", i, " = ", t, " parameter(", i, ")"));
      inputs.push_back(Value{absl::StrCat("a", i), operands[i].type, {}});
      names.push_back(operands[i].name);
    }
    const std::string root =
        SameShapeChain(&lines, inputs, Value{"", result_type, {}},
                       absl::StrCat(ElementTypeName(result_type), "[]"));
    lines.back().replace(0, 3 + root.size(), absl::StrCat("  ROOT ", root));
    computations_.push_back(absl::StrCat(name, " {\n", absl::StrJoin(lines, "\n"), "\n}\n"));
    std::vector<int64_t> all(x.dims.size());
    std::iota(all.begin(), all.end(), 0);
    Finish(EmitAside(Value{"", result_type, x.dims},
                     absl::StrCat("map(", absl::StrJoin(names, ", "), "), dimensions=", Dims(all),
                                  ", to_apply=", name)));
    return true;
  }

  // select-and-scatter over the newest value: per dimension a window of 1
  // to 3 (or the whole padded dimension), stride 1 to 3, padding -1 to 2
  // (mostly 0); select compare(a, b) or compare(b, a) with GE, GT or LE
  // (total order now and then for floats); scatter add or maximum; source a
  // parameter of the windowed shape, init a constant or a parameter. Exact:
  // the routine visits the same pairs in the same order as the evaluator.
  bool SelectAndScatterStep() {
    const ElementType type = Pick(std::vector<ElementType>{
        ElementType::kF32, ElementType::kF32, ElementType::kF64, ElementType::kS32,
        ElementType::kS64, ElementType::kU32, ElementType::kU64, ElementType::kF16,
        ElementType::kBF16, ElementType::kS8, ElementType::kU8});
    const Value x = ToType(Operand(true), type);
    std::vector<std::string> sizes, strides, pads;
    std::vector<int64_t> out_dims;
    for (int64_t d : x.dims) {
      int64_t low = Uniform(0, 3) == 0 ? Uniform(-1, 2) : 0;
      int64_t high = Uniform(0, 3) == 0 ? Uniform(-1, 2) : 0;
      if (d + low + high < 0) low = high = 0;
      const int64_t padded = d + low + high;
      const int64_t window = Uniform(0, 5) == 0 ? std::max<int64_t>(padded, 1) : Uniform(1, 3);
      const int64_t stride = Uniform(0, 2) == 0 ? 1 : Uniform(1, 3);
      out_dims.push_back(padded < window ? 0 : (padded - window) / stride + 1);
      sizes.push_back(absl::StrCat(window));
      strides.push_back(absl::StrCat(stride));
      pads.push_back(absl::StrCat(low, "_", high));
    }
    const Value source = AddParameter(Value{"", type, out_dims}, /*pool=*/false);
    const std::string init = Uniform(0, 3) == 0
                                 ? AddParameter(Value{"", type, {}}, /*pool=*/false).name
                                 : Constant(type, ConstantText(type));
    const std::string t = absl::StrCat(ElementTypeName(type), "[]");
    const std::string select = absl::StrCat("select", computations_.size());
    const bool swapped = Uniform(0, 3) == 0;
    computations_.push_back(absl::StrCat(
        select, " {\n  a = ", t, " parameter(0)\n  b = ", t,
        " parameter(1)\n  ROOT r = pred[] compare(", swapped ? "b, a" : "a, b", "), direction=",
        Pick(std::vector<std::string>{"GE", "GE", "GT", "LE"}),
        IsFloat(type) && Uniform(0, 3) == 0 ? ", type=TOTALORDER" : "", "\n}\n"));
    const std::string scatter = Binary(type, Uniform(0, 2) == 0 ? "maximum" : "add");
    Finish(EmitAside(x, absl::StrCat("select-and-scatter(", x.name, ", ", source.name, ", ", init,
                                     "), window={size=", absl::StrJoin(sizes, "x"),
                                     " stride=", absl::StrJoin(strides, "x"),
                                     " pad=", absl::StrJoin(pads, "x"), "}, select=", select,
                                     ", scatter=", scatter)));
    return true;
  }

  // topk of the newest value (a real type) along its last dimension, k from
  // 0 to its size, largest or smallest; both results continue. It compiles
  // through the expand-topk pass (a stable sort), so with the pipeline off
  // it is an interpreted step.
  bool TopKStep() {
    ElementType type = FeatureType(/*complex=*/false);
    if (IsPred(type)) type = ElementType::kS32;
    const Value x = ToType(Operand(true), type);
    Value values = x;
    values.dims.back() = Uniform(0, 3) == 0 ? x.dims.back() : Uniform(0, x.dims.back());
    const Value indices{"", ElementType::kS32, values.dims};
    const std::string values_text = ShapeText(values);
    const std::string indices_text = ShapeText(indices);
    const std::string tuple =
        EmitLine(absl::StrCat("(", values_text, ", ", indices_text, ")"),
                 absl::StrCat("topk(", x.name, "), k=", values.dims.back(),
                              ", largest=", Uniform(0, 1) ? "true" : "false"));
    Finish(EmitAside(indices, absl::StrCat("get-tuple-element(", tuple, "), index=1"),
                     indices_text));
    Finish(EmitAside(values, absl::StrCat("get-tuple-element(", tuple, "), index=0"),
                     values_text));
    needs_passes_ = true;
    return true;
  }

  // `x` converted to the float `type` with every element whose magnitude is
  // not within [1e-12, bound] (NaN and the infinities too) replaced by 0:
  // the inputs of the operations compared within a norm-wise bound, which
  // means nothing with infinities, whose NaN patterns may legitimately
  // differ, and which holds only while no result underflows (a subnormal
  // result carries an absolute error; found by this test: an IFFT of
  // subnormal values).
  Value Bounded(const Value& x, ElementType type, const std::string& bound) {
    const Value y = ToType(x, type);
    auto broadcast = [&](const std::string& literal) {
      return EmitAside(y, absl::StrCat("broadcast(", Constant(type, literal), "), dimensions={}"));
    };
    const Value limit = broadcast(bound);
    const Value tiny = broadcast("1e-12");
    const Value zero = broadcast("0");
    const Value magnitude = EmitAside(y, absl::StrCat("abs(", y.name, ")"));
    const Value p{"", ElementType::kPred, y.dims};
    const Value below = EmitAside(p, absl::StrCat("compare(", magnitude.name, ", ", limit.name,
                                                  "), direction=LE"));
    const Value above = EmitAside(p, absl::StrCat("compare(", magnitude.name, ", ", tiny.name,
                                                  "), direction=GE"));
    const Value inside = EmitAside(p, absl::StrCat("and(", below.name, ", ", above.name, ")"));
    return EmitAside(y, absl::StrCat("select(", inside.name, ", ", y.name, ", ", zero.name, ")"));
  }

  // The elements of `x` (row-major), cut or padded with zeros to `dims`.
  Value Refit(const Value& x, const std::vector<int64_t>& dims) {
    const int64_t count = Count(x.dims);
    const int64_t total = Count(dims);
    Value flat = EmitAside(Value{"", x.type, {count}}, absl::StrCat("reshape(", x.name, ")"));
    if (count > total) {
      flat = EmitAside(Value{"", x.type, {total}},
                       absl::StrCat("slice(", flat.name, "), slice={[0:", total, "]}"));
    } else if (count < total) {
      flat = EmitAside(Value{"", x.type, {total}},
                       absl::StrCat("pad(", flat.name, ", ", Constant(x.type, "0"),
                                    "), padding=0_", total - count));
    }
    return EmitAside(Value{"", x.type, dims}, absl::StrCat("reshape(", flat.name, ")"));
  }

  // complex(x, reverse(x)) of the complex type whose parts have x's type.
  Value Complexify(const Value& x) {
    std::vector<int64_t> all(x.dims.size());
    std::iota(all.begin(), all.end(), 0);
    const Value reversed =
        EmitAside(x, absl::StrCat("reverse(", x.name, "), dimensions=", Dims(all)));
    Value c = x;
    c.type = x.type == ElementType::kF32 ? ElementType::kC64 : ElementType::kC128;
    return EmitAside(c, absl::StrCat("complex(", x.name, ", ", reversed.name, ")"));
  }

  // Batch dimensions of a feature (0 to 2, of 1 to 3; now and then 0).
  std::vector<int64_t> BatchDims() {
    std::vector<int64_t> batch(Uniform(0, 2));
    for (int64_t& d : batch) d = Uniform(0, 12) == 0 ? 0 : Uniform(1, 3);
    return batch;
  }

  static double UnitRoundoff(ElementType type) {
    return type == ElementType::kF32 || type == ElementType::kC64 ? std::ldexp(1.0, -24)
                                                                  : std::ldexp(1.0, -53);
  }

  // fft of every form (FFT, IFFT, RFFT, IRFFT) over 1 to 3 axes of lengths
  // 1 to 64 (Stockham and Bluestein lengths), batched, c64/c128, on the
  // newest value's elements bounded to [-16, 16] (the imaginary parts
  // reversed). The root, compared within docs/fft.md's bound per signal:
  // 2 L u ||y||_2.
  bool FftStep() {
    static const std::vector<int64_t> kLengths = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12,
                                                  13, 15, 16, 17, 20, 24, 25, 31, 32, 64};
    const int axes = Uniform(1, 3);
    std::vector<int64_t> lengths;
    int64_t points = 1;
    for (int a = 0; a < axes; ++a) {
      int64_t n = Pick(kLengths);
      while (points * n > 512) n = Pick(kLengths);
      lengths.push_back(n);
      points *= n;
    }
    const std::vector<int64_t> batch = BatchDims();
    const bool wide = Uniform(0, 2) == 0;
    const ElementType real = wide ? ElementType::kF64 : ElementType::kF32;
    const ElementType complex = wide ? ElementType::kC128 : ElementType::kC64;
    const std::string form = Pick(std::vector<std::string>{"FFT", "IFFT", "RFFT", "IRFFT"});
    std::vector<int64_t> in_dims = batch, out_dims = batch;
    in_dims.insert(in_dims.end(), lengths.begin(), lengths.end());
    out_dims.insert(out_dims.end(), lengths.begin(), lengths.end());
    if (form == "RFFT") out_dims.back() = lengths.back() / 2 + 1;
    const Value parts = Refit(Bounded(Operand(false), real, "16"), in_dims);
    Value in = form == "FFT" || form == "IFFT" ? Complexify(parts) : parts;
    double terms = form == "RFFT" || form == "IRFFT" ? 2 : 0;
    for (int64_t n : lengths) {
      const runtime::fft::ComplexPlan<double> plan = runtime::fft::MakeComplexPlan<double>(n, true);
      terms += plan.bluestein ? 3 * Log2Terms(plan.m) + 2 : Log2Terms(n);
    }
    if (form == "IRFFT") {
      // IRFFT of the RFFT of a real signal: an input that is the transform
      // of a real signal, as IRFFT assumes. Of an arbitrary one it ignores
      // imaginary parts (of the zero and Nyquist entries, after the outer
      // axes) that the evaluator's direct DFT still multiplies by sin(pi)
      // ~ 1e-16, an error relative to the input, not to the result
      // (found by this test: an IRFFT whose exact result is 0). The error
      // of the pair is the sum of both bounds: it comes back at the
      // signal's scale.
      std::vector<int64_t> half = in_dims;
      half.back() = lengths.back() / 2 + 1;
      in = EmitAside(Value{"", complex, half}, absl::StrCat("fft(", in.name, "), fft_type=RFFT, ",
                                                            "fft_length=", Dims(lengths)));
      terms *= 2;
    }
    EmitAside(Value{"", form == "IRFFT" ? real : complex, out_dims},
              absl::StrCat("fft(", in.name, "), fft_type=", form, ", fft_length=", Dims(lengths)));
    norm_tolerance_ = kFftBoundConstant * terms * UnitRoundoff(complex);
    norm_minor_dims_ = axes;
    return true;
  }

  // ceil(log2 n) + 1.
  static double Log2Terms(int64_t n) {
    double l = 1;
    for (int64_t p = 1; p < n; p *= 2) ++l;
    return l;
  }

  // The iotas of the two minor dimensions of `dims` (s32 row and column
  // numbers of every matrix element).
  std::pair<Value, Value> RowsAndColumns(const std::vector<int64_t>& dims) {
    const int64_t rank = dims.size();
    const Value rows = EmitAside(Value{"", ElementType::kS32, dims},
                                 absl::StrCat("iota(), iota_dimension=", rank - 2));
    const Value columns = EmitAside(Value{"", ElementType::kS32, dims},
                                    absl::StrCat("iota(), iota_dimension=", rank - 1));
    return {rows, columns};
  }

  Value Mask(const std::pair<Value, Value>& rc, const std::string& direction) {
    return EmitAside(Value{"", ElementType::kPred, rc.first.dims},
                     absl::StrCat("compare(", rc.first.name, ", ", rc.second.name,
                                  "), direction=", direction));
  }

  // The float or complex type of a linear algebra feature and its part type.
  std::pair<ElementType, ElementType> LinalgType() {
    const ElementType type = Pick(std::vector<ElementType>{
        ElementType::kF32, ElementType::kF32, ElementType::kF64, ElementType::kC64,
        ElementType::kC128});
    const ElementType part = type == ElementType::kC64    ? ElementType::kF32
                             : type == ElementType::kC128 ? ElementType::kF64
                                                          : type;
    return {type, part};
  }

  // A matrix side: mostly 2 to 8, now and then 0 or 1.
  int64_t MatrixSide() { return Uniform(0, 7) == 0 ? Uniform(0, 1) : Uniform(2, 8); }

  // cholesky of a well-conditioned Hermitian positive definite A = M M^H +
  // n I (M: the newest value's elements bounded to [-1, 1], the imaginary
  // parts reversed; the product a batched dot; so A's eigenvalues lie in
  // [n, n + n^2]: condition number at most n + 1), batched; the triangle
  // not read is a parameter (NaN, infinities). The root, compared per
  // matrix within 16 (n + 1) n u ||L||_F (see kLinalgBoundConstant).
  bool CholeskyStep() {
    const auto [type, part] = LinalgType();
    const int64_t n = MatrixSide();
    std::vector<int64_t> dims = BatchDims();
    const int64_t b = dims.size();
    dims.push_back(n);
    dims.push_back(n);
    Value m = Refit(Bounded(Operand(false), part, "1"), dims);
    if (IsComplex(type)) m = Complexify(m);
    Value mh = m;  // conj(M): the dot contracts the minor dimensions of both.
    if (IsComplex(type)) {
      Value p = m;
      p.type = part;
      const Value re = EmitAside(p, absl::StrCat("real(", m.name, ")"));
      const Value im = EmitAside(p, absl::StrCat("imag(", m.name, ")"));
      const Value minus = EmitAside(p, absl::StrCat("negate(", im.name, ")"));
      mh = EmitAside(m, absl::StrCat("complex(", re.name, ", ", minus.name, ")"));
    }
    std::vector<int64_t> batch_dims(b);
    std::iota(batch_dims.begin(), batch_dims.end(), 0);
    const Value product = EmitAside(
        m, absl::StrCat("dot(", m.name, ", ", mh.name, "), lhs_batch_dims=", Dims(batch_dims),
                        ", lhs_contracting_dims={", b + 1, "}, rhs_batch_dims=", Dims(batch_dims),
                        ", rhs_contracting_dims={", b + 1, "}"));
    const auto rc = RowsAndColumns(dims);
    Value p{"", part, dims};
    const Value shift = EmitAside(p, absl::StrCat("broadcast(", Constant(part, absl::StrCat(n)),
                                                  "), dimensions={}"));
    const Value zero = EmitAside(p, absl::StrCat("broadcast(", Constant(part, "0"),
                                                 "), dimensions={}"));
    Value diagonal = EmitAside(p, absl::StrCat("select(", Mask(rc, "EQ").name, ", ", shift.name,
                                               ", ", zero.name, ")"));
    if (IsComplex(type)) diagonal = EmitAside(m, absl::StrCat("convert(", diagonal.name, ")"));
    const Value a = EmitAside(m, absl::StrCat("add(", product.name, ", ", diagonal.name, ")"));
    const bool lower = Uniform(0, 1);
    const Value junk = AddParameter(Value{"", type, dims}, /*pool=*/false);
    const Value read = EmitAside(m, absl::StrCat("select(", Mask(rc, lower ? "GE" : "LE").name,
                                                 ", ", a.name, ", ", junk.name, ")"));
    EmitAside(m, absl::StrCat("cholesky(", read.name, "), lower=", lower ? "true" : "false"));
    norm_tolerance_ = kLinalgBoundConstant * (n + 1) * n * UnitRoundoff(type);
    norm_minor_dims_ = 2;
    return true;
  }

  // triangular-solve in every form (left_side, lower, unit_diagonal,
  // transpose_a NO_TRANSPOSE/TRANSPOSE/ADJOINT), batched, with a
  // well-conditioned A: the triangle read holds the newest value's elements
  // bounded to [-1, 1] times 2^-k <= 1/(2n) off the diagonal, and 1 plus
  // such an element on it, so ||A^-1||_inf <= 4 and ||A||_inf <= 2; the
  // other triangle (and a unit diagonal) is a parameter (NaN, infinities).
  // B: another value's elements bounded to [-1, 1]. The root, compared per
  // matrix within 16 (n + 1) n u ||X||_F (see kLinalgBoundConstant).
  bool TriangularSolveStep() {
    const auto [type, part] = LinalgType();
    const int64_t n = MatrixSide();
    const int64_t m = Uniform(0, 7) == 0 ? 0 : Uniform(1, 5);
    const std::vector<int64_t> batch = BatchDims();
    const bool left = Uniform(0, 1), lower = Uniform(0, 1), unit = Uniform(0, 2) == 0;
    const std::string transpose =
        Pick(std::vector<std::string>{"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"});
    std::vector<int64_t> a_dims = batch, b_dims = batch;
    a_dims.insert(a_dims.end(), {n, n});
    if (left) {
      b_dims.insert(b_dims.end(), {n, m});
    } else {
      b_dims.insert(b_dims.end(), {m, n});
    }
    const Value other = Pick(pool_);
    int scale = 0;
    while ((int64_t{1} << scale) < 2 * n) ++scale;
    Value entries = Refit(Bounded(Operand(false), part, "1"), a_dims);
    entries = EmitAside(entries, absl::StrCat("multiply(", entries.name, ", ",
                                              EmitAside(entries, absl::StrCat(
                                                  "broadcast(", Constant(part, absl::StrCat(
                                                      std::ldexp(1.0, -scale))),
                                                  "), dimensions={}")).name, ")"));
    const Value one = EmitAside(entries, absl::StrCat("broadcast(", Constant(part, "1"),
                                                      "), dimensions={}"));
    Value diagonal = EmitAside(entries, absl::StrCat("add(", entries.name, ", ", one.name, ")"));
    if (IsComplex(type)) {  // 1 + e + i e': the imaginary parts as off the diagonal.
      const Value complex_entries = Complexify(entries);
      diagonal = EmitAside(complex_entries, absl::StrCat("add(", complex_entries.name, ", ",
                                                         EmitAside(complex_entries, absl::StrCat(
                                                             "convert(", one.name, ")")).name,
                                                         ")"));
      entries = complex_entries;
    }
    const Value junk = AddParameter(Value{"", type, a_dims}, /*pool=*/false);
    const auto rc = RowsAndColumns(a_dims);
    const Value on_diagonal =
        EmitAside(entries, absl::StrCat("select(", Mask(rc, "EQ").name, ", ",
                                        unit ? junk.name : diagonal.name, ", ", junk.name, ")"));
    const Value a = EmitAside(entries, absl::StrCat("select(", Mask(rc, lower ? "GT" : "LT").name,
                                                    ", ", entries.name, ", ", on_diagonal.name,
                                                    ")"));
    Value rhs = Refit(Bounded(other, part, "1"), b_dims);
    if (IsComplex(type)) rhs = Complexify(rhs);
    EmitAside(rhs, absl::StrCat("triangular-solve(", a.name, ", ", rhs.name, "), left_side=",
                                left ? "true" : "false", ", lower=", lower ? "true" : "false",
                                ", unit_diagonal=", unit ? "true" : "false",
                                ", transpose_a=", transpose));
    norm_tolerance_ = kLinalgBoundConstant * (n + 1) * n * UnitRoundoff(type);
    norm_minor_dims_ = 2;
    return true;
  }

  bool ComplexIotaStep() {
    const Value x = Operand(true);
    const ElementType type = Uniform(0, 2) == 0 ? ElementType::kC128 : ElementType::kC64;
    const Value iota = EmitAside(Value{"", type, x.dims},
                                 absl::StrCat("iota(), iota_dimension=", Uniform(0, x.dims.size() - 1)));
    if (Uniform(0, 2) == 0) {
      Finish(iota);
      return true;
    }
    const Value w = ToType(x, type);
    const std::string op = Pick(std::vector<std::string>{"add", "subtract", "multiply"});
    Finish(EmitAside(iota, absl::StrCat(op, "(", iota.name, ", ", w.name, ")")));
    return true;
  }

 public:
  // The edge cases of issue 15 (GenerateEdge): degenerate shapes (rank 0,
  // dimensions of size 0 and 1 throughout), huge but legal shapes (a size-0
  // dimension beside dimensions of up to 2^40, and one computable array of
  // about 2^18 elements), computations nested up to about 2 * kMaxEdgeDepth
  // levels through call, while and conditional, and tuples whose element
  // layouts differ from their operands' and their users'.
  enum EdgeCase { kDegenerate, kHuge, kDeep, kMixedLayoutTuple, kEdgeCaseCount };
  static constexpr int kMaxEdgeDepth = 24;

  static const char* EdgeCaseName(int edge) {
    static const char* const kNames[] = {"degenerate", "huge", "deep", "mixed-layout tuple"};
    return kNames[edge];
  }

  std::string GenerateEdge(EdgeCase edge) {
    switch (edge) {
      case kDegenerate:
        degenerate_ = true;
        if (Uniform(0, 2) == 0) return GenerateAround(Uniform(0, 1) ? kWhile : kConditional);
        return Generate(/*fuse=*/Uniform(0, 1));
      case kHuge: return GenerateHuge();
      case kDeep: return GenerateDeep();
      default: return GenerateMixedLayoutTuple();
    }
  }

 private:
  // "HloModule NAME", the called computations, then the entry.
  std::string ModuleText(const std::string& name) {
    std::string text = absl::StrCat("HloModule ", name, "\n\n");
    for (const std::string& computation : computations_) absl::StrAppend(&text, computation, "\n");
    absl::StrAppend(&text, "ENTRY e {\n", absl::StrJoin(parameters_, "\n"), "\n");
    for (size_t i = 0; i < body_.size(); ++i) {
      absl::StrAppend(&text, i + 1 == body_.size() ? "  ROOT" : " ", body_[i].substr(1), "\n");
    }
    absl::StrAppend(&text, "}\n");
    return text;
  }

  // The product of the nonzero dimensions: what strides and offsets reach.
  static int64_t NonzeroProduct(const std::vector<int64_t>& dims) {
    int64_t product = 1;
    for (int64_t d : dims) product *= std::max<int64_t>(d, 1);
    return product;
  }

  // A reducer computation for `type` (add; or for pred), named by its text.
  std::string Reducer(ElementType type) {
    const std::string t = ElementTypeName(type).data();
    const std::string name = absl::StrCat("reduce_", t);
    for (const std::string& c : computations_) {
      if (absl::StartsWith(c, name + " ")) return name;
    }
    computations_.push_back(absl::StrCat(name, " {\n  a = ", t, "[] parameter(0)\n  b = ", t,
                                         "[] parameter(1)\n  ROOT r = ", t, "[] ",
                                         IsPred(type) ? "or" : "add", "(a, b)\n}\n"));
    return name;
  }

  // An empty array with huge dimensions (sizes, strides and offsets of up to
  // 2^40 elements and nothing to read or write) through a chain of
  // operations that keep it empty (or make it small), and beside it a
  // computable array of about 2^18 elements reduced to a few; the root is the
  // tuple of both.
  std::string GenerateHuge() {
    const ElementType type = Pick(std::vector<ElementType>{
        ElementType::kF32, ElementType::kS32, ElementType::kU8, ElementType::kF64});
    const int64_t huge = Pick(std::vector<int64_t>{(int64_t{1} << 31) + 1, int64_t{1} << 32,
                                                   int64_t{1} << 40});
    std::vector<int64_t> dims = {0, huge};
    if (Uniform(0, 1)) dims.push_back(Uniform(1, 5));
    std::shuffle(dims.begin(), dims.end(), rng_);
    Value x = AddParameter(Value{"", type, dims}, /*pool=*/false);
    // Strides stay below 2^44 elements (2^47 bytes of f64), so every shape
    // verifies (kMaxArrayBytes is 2^48).
    constexpr int64_t kMaxProduct = int64_t{1} << 44;
    const int steps = Uniform(2, 6);
    for (int s = 0; s < steps; ++s) {
      const int64_t rank = x.dims.size();
      Value y = x;
      switch (Uniform(0, 7)) {
        case 0:
          x = EmitAside(x, absl::StrCat(type == ElementType::kU8 ? "not" : "negate", "(", x.name,
                                        ")"));
          break;
        case 1:
          x = EmitAside(x, absl::StrCat(Pick(std::vector<std::string>{"add", "multiply", "maximum"}),
                                        "(", x.name, ", ", x.name, ")"));
          break;
        case 2: {
          std::vector<int64_t> permutation(rank);
          std::iota(permutation.begin(), permutation.end(), 0);
          std::shuffle(permutation.begin(), permutation.end(), rng_);
          for (int64_t i = 0; i < rank; ++i) y.dims[i] = x.dims[permutation[i]];
          x = EmitAside(y, absl::StrCat("transpose(", x.name, "), dimensions={",
                                        absl::StrJoin(permutation, ","), "}"));
          break;
        }
        case 3:
          x = EmitAside(x, absl::StrCat("reverse(", x.name, "), dimensions={", Uniform(0, rank - 1),
                                        "}"));
          break;
        case 4: {  // Strided windows far into the huge dimensions.
          std::vector<std::string> parts;
          for (int64_t i = 0; i < rank; ++i) {
            const int64_t d = x.dims[i];
            const int64_t start = d > 2 ? Uniform(0, 1) * (d / 2) : 0;
            const int64_t stride = d > 2 ? Pick(std::vector<int64_t>{1, 3, d / 3}) : 1;
            y.dims[i] = d - start == 0 ? 0 : (d - start + stride - 1) / stride;
            parts.push_back(absl::StrCat("[", start, ":", d, ":", stride, "]"));
          }
          x = EmitAside(y, absl::StrCat("slice(", x.name, "), slice={", absl::StrJoin(parts, ", "),
                                        "}"));
          break;
        }
        case 5: {  // Edge padding (the empty dimension may become nonempty:
                   // then the others must stay small, so only it is padded).
          std::vector<std::string> parts;
          const bool pad_empty = NonzeroProduct(x.dims) <= 1000 && Uniform(0, 1);
          for (int64_t i = 0; i < rank; ++i) {
            const int64_t low = (x.dims[i] == 0) == pad_empty ? Uniform(0, 2) : 0;
            const int64_t high = (x.dims[i] == 0) == pad_empty ? Uniform(0, 2) : 0;
            y.dims[i] += low + high;
            parts.push_back(absl::StrCat(low, "_", high));
          }
          if (NonzeroProduct(y.dims) > kMaxProduct) break;
          const std::string zero = Scalar(type);
          x = EmitAside(y, absl::StrCat("pad(", x.name, ", ", zero, "), padding=",
                                        absl::StrJoin(parts, "x")));
          break;
        }
        case 6: {
          const int64_t d = Uniform(0, rank - 1);
          y.dims[d] *= 2;
          if (NonzeroProduct(y.dims) > kMaxProduct) break;
          x = EmitAside(y, absl::StrCat("concatenate(", x.name, ", ", x.name, "), dimensions={", d,
                                        "}"));
          break;
        }
        default: {  // Reduce one dimension, if what remains is empty or small.
          if (rank < 2) break;
          const int64_t d = Uniform(0, rank - 1);
          y.dims.erase(y.dims.begin() + d);
          if (Count(y.dims) > 1000) break;
          // The reducer's identity as the initial value: a split reduction
          // may apply it more than once.
          const std::string init = Constant(type, "0");
          x = EmitAside(y, absl::StrCat("reduce(", x.name, ", ", init, "), dimensions={", d,
                                        "}, to_apply=", Reducer(type)));
          break;
        }
      }
    }
    // 2^18 + a few u32 elements per row, an iota added to a parameter,
    // summed per row (wrapping, so exact on both sides).
    const int64_t rows = Uniform(1, 2), columns = (int64_t{1} << 18) + Uniform(1, 99);
    const Value big_scalar = AddParameter(Value{"", ElementType::kU32, {}}, /*pool=*/false);
    const Value big = EmitAside(Value{"", ElementType::kU32, {rows, columns}},
                                absl::StrCat("broadcast(", big_scalar.name, "), dimensions={}"));
    const Value iota = EmitAside(Value{"", ElementType::kU32, {rows, columns}}, "iota(), iota_dimension=1");
    const Value sum = EmitAside(big, absl::StrCat("add(", big.name, ", ", iota.name, ")"));
    const Value reduced = EmitAside(Value{"", ElementType::kU32, {rows}},
                                    absl::StrCat("reduce(", sum.name, ", ",
                                                 Constant(ElementType::kU32, "0"),
                                                 "), dimensions={1}, to_apply=",
                                                 Reducer(ElementType::kU32)));
    EmitLine(absl::StrCat("(", Text(x), ", ", Text(reduced), ")"),
             absl::StrCat("tuple(", x.name, ", ", reduced.name, ")"));
    return ModuleText("random_huge");
  }

  // Computations nested 2 to kMaxEdgeDepth levels (a while level is two: its
  // body, which calls the level below): each level runs a random
  // shape-keeping chain on the result of the level below, reached through a
  // call, a while loop running it 0 to 2 times, or a conditional.
  std::string GenerateDeep() {
    const ElementType type = RandomType();
    const std::vector<int64_t> dims = RandomDims();
    const Value x{"x", type, dims};
    const std::string text = ShapeText(x);
    const int depth = Uniform(2, kMaxEdgeDepth);
    std::string below;
    for (int level = 0; level < depth; ++level) {
      const std::string name = absl::StrCat("level", level);
      std::vector<std::string> lines = {absl::StrCat("  x = ", text, " parameter(0)")};
      std::string input = "x";
      if (level > 0) {
        input = "y";
        switch (Uniform(0, 2)) {
          case 0:
            lines.push_back(absl::StrCat("  y = ", text, " call(x), to_apply=", below));
            break;
          case 1: {
            const std::string state = absl::StrCat("(s32[], ", text, ")");
            computations_.push_back(absl::StrCat(
                name, "_cond {\n  s = ", state, " parameter(0)\n",
                "  i = s32[] get-tuple-element(s), index=0\n  n = s32[] constant(", Uniform(0, 2),
                ")\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n"));
            computations_.push_back(absl::StrCat(
                name, "_body {\n  s = ", state, " parameter(0)\n",
                "  i = s32[] get-tuple-element(s), index=0\n  one = s32[] constant(1)\n",
                "  i1 = s32[] add(i, one)\n  v = ", text, " get-tuple-element(s), index=1\n",
                "  w = ", text, " call(v), to_apply=", below, "\n  ROOT next = ", state,
                " tuple(i1, w)\n}\n"));
            lines.push_back("  zero = s32[] constant(0)");
            lines.push_back(absl::StrCat("  s0 = ", state, " tuple(zero, x)"));
            lines.push_back(absl::StrCat("  s1 = ", state, " while(s0), condition=", name,
                                         "_cond, body=", name, "_body"));
            lines.push_back(absl::StrCat("  y = ", text, " get-tuple-element(s1), index=1"));
            break;
          }
          default:
            lines.push_back(absl::StrCat("  k = s32[] constant(", Uniform(-1, 2), ")"));
            lines.push_back(absl::StrCat("  y = ", text, " conditional(k, x, x), ",
                                         "branch_computations={", below, ", ", below, "}"));
        }
      }
      const std::string root = SameShapeChain(&lines, {Value{input, type, dims}}, x, text);
      lines.back().replace(0, 3 + root.size(), absl::StrCat("  ROOT ", root));
      computations_.push_back(absl::StrCat(name, " {\n", absl::StrJoin(lines, "\n"), "\n}\n"));
      below = name;
    }
    const Value p = AddParameter(Value{"", type, dims}, /*pool=*/false);
    EmitLine(text, absl::StrCat("call(", p.name, "), to_apply=", below));
    // The parameter's own layout may differ from the levels' `text`.
    return ModuleText("random_deep");
  }

  // Tuples whose element layouts are drawn afresh (so they mostly differ
  // from their operands'), read back by get-tuple-element with layouts drawn
  // afresh again, passed through a call whose parameter has its own layouts,
  // and a tuple root: every layout must be honoured whichever passes run.
  std::string GenerateMixedLayoutTuple() {
    const ElementType type = RandomType();
    const std::vector<int64_t> dims = RandomDims();
    const int parameter_count = 1 + Uniform(0, 1);
    for (int i = 0; i < parameter_count; ++i) {
      AddParameter(Value{"", Uniform(0, 3) == 0 ? RandomType() : type, dims}, /*pool=*/true);
    }
    const int producers = Uniform(1, 4);
    for (int s = 0; s < producers; ++s) {
      for (int attempt = 0; attempt < 20 && !Step(); ++attempt) {
      }
    }
    std::vector<Value> elements;
    const int count = Uniform(1, 3);
    for (int i = 0; i < count; ++i) elements.push_back(Uniform(0, 1) ? pool_.back() : Pick(pool_));
    std::vector<std::string> names, texts;
    for (const Value& v : elements) {
      names.push_back(v.name);
      texts.push_back(ShapeText(v));
    }
    const std::string tuple_text = absl::StrCat("(", absl::StrJoin(texts, ", "), ")");
    std::string tuple = EmitLine(tuple_text, absl::StrCat("tuple(", absl::StrJoin(names, ", "), ")"));
    if (Uniform(0, 1)) {  // Through a call whose parameter and root have layouts of their own.
      std::vector<std::string> inner_texts;
      for (const Value& v : elements) inner_texts.push_back(ShapeText(v));
      const std::string inner = absl::StrCat("(", absl::StrJoin(inner_texts, ", "), ")");
      std::vector<std::string> lines = {absl::StrCat("  t = ", inner, " parameter(0)")};
      std::vector<std::string> parts;
      for (size_t i = 0; i < elements.size(); ++i) {
        lines.push_back(absl::StrCat("  e", i, " = ", ShapeText(elements[i]),
                                     " get-tuple-element(t), index=", i));
        parts.push_back(absl::StrCat("e", i));
      }
      lines.push_back(absl::StrCat("  ROOT r = ", inner, " tuple(", absl::StrJoin(parts, ", "), ")"));
      const std::string name = absl::StrCat("pass", computations_.size());
      computations_.push_back(absl::StrCat(name, " {\n", absl::StrJoin(lines, "\n"), "\n}\n"));
      tuple = EmitLine(tuple_text, absl::StrCat("call(", tuple, "), to_apply=", name));
    }
    // Read every element back with a fresh layout, extend one, and end in a
    // tuple of them (or the extended one alone).
    std::vector<std::string> outs, out_texts;
    for (size_t i = 0; i < elements.size(); ++i) {
      Value e = EmitAside(elements[i], absl::StrCat("get-tuple-element(", tuple, "), index=", i));
      pool_.push_back(e);
      outs.push_back(e.name);
      out_texts.push_back(ShapeText(e));
    }
    for (int attempt = 0; attempt < 20 && !Step(); ++attempt) {
    }
    outs.push_back(pool_.back().name);
    out_texts.push_back(ShapeText(pool_.back()));
    if (Uniform(0, 3) != 0) {
      EmitLine(absl::StrCat("(", absl::StrJoin(out_texts, ", "), ")"),
               absl::StrCat("tuple(", absl::StrJoin(outs, ", "), ")"));
    }
    return ModuleText("random_tuple_layouts");
  }

  bool degenerate_ = false;

  bool feature_emitted_ = false;
  double norm_tolerance_ = 0;
  int norm_minor_dims_ = 0;
  bool needs_passes_ = false;
  // No bitcast-convert from floats: it shows NaN payloads and signs, where
  // the JIT and the evaluator differ (not covered by NaN == NaN; reported):
  // f16 negate/abs/floor/sign of a signalling NaN is quieted by the JIT and
  // kept by the evaluator, f32 negate/abs/sign the other way round.
  bool no_float_bitcast_ = false;
  int sub_generators_ = 0;

 private:
  std::mt19937_64 rng_;
  bool wide_ = false;
  std::vector<Value> pool_;
  std::vector<std::string> parameters_;
  std::vector<std::string> body_;
  std::string last_shape_text_;
  std::map<std::string, std::string> texts_;  // Value name -> its shape text.
  std::vector<std::string> computations_;     // Called computations, before ENTRY.
  int counter_ = 0;
  int math_tolerance_ = 0;
};

class JitRandom : public ::testing::TestWithParam<Isa> {};

TEST_P(JitRandom, MatchesEvaluator) {
  int failures = 0;
  int64_t kernels = 0;
  int64_t vectorized = 0;
  int64_t elements = 0;
  uint64_t modules = 0;
  for (uint64_t seed = 1; seed <= ModuleCount(kModulesPerIsa) && failures < 5; ++seed) {
    if (!InShard(seed)) continue;
    ++modules;
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
  std::cout << modules << " modules, " << kernels << " kernels ("
            << vectorized << " vectorised), " << elements << " kernel program lines\n";
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
  uint64_t modules = 0;
  for (uint64_t seed = 1; seed <= ModuleCount(kModulesPerIsa) && failures < 5; ++seed) {
    if (!InShard(seed)) continue;
    ++modules;
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
  std::cout << modules << " wide modules, " << kernels << " kernels (" << vectorized
            << " vectorised, about " << widest << " at " << widest_bits << " bits)\n";
  // The share of vectorised kernels is a property of a large set (all the
  // seeds, or every N-th of them for a shard of N <= 4): a small sample
  // (XJIT_RANDOM_MODULES, the sanitizer stage's 40 modules: 4 of 41 kernels)
  // says nothing about it.
  constexpr uint64_t kShareModules = kModulesPerIsa / 4;
  if (modules >= kShareModules) {
    EXPECT_GT(vectorized, kernels / 10);
  } else {
    std::cout << "vectorised share not checked: it is checked over at least " << kShareModules
              << " modules, not a sample of " << modules << "\n";
  }
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
  const uint64_t count = ModuleCount(kModulesPerPassConfiguration);
  for (uint64_t seed = 1; seed <= count && failures < 5; ++seed) {
    if (!InShard(seed)) continue;
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

// Modules around the operations compiled as steps of their own (gather,
// scatter with one operand, reduce-window also variadic, sort also
// variadic, while loops and conditionals run as executables of their own)
// and complex iota: ModuleGenerator::GenerateAround, one feature per seed in
// turn, each module with the pass pipeline on and off. Every instruction
// must compile (no interpreted step) and the results must be bit-identical.
// XJIT_RANDOM_SEED=N runs seed N alone; XJIT_PRINT_MODULES prints them.
constexpr int kFeatureModulesPerIsa = 700;

class JitRandomSteps : public ::testing::TestWithParam<Isa> {};

TEST_P(JitRandomSteps, MatchesEvaluator) {
  int failures = 0;
  std::vector<int> modules(ModuleGenerator::kFeatureCount);
  int64_t kernels = 0;
  int64_t library_calls = 0;
  uint64_t first = 1;
  uint64_t last = kFeatureModulesPerIsa;
  if (const char* count = std::getenv("XJIT_RANDOM_MODULES")) last = std::atoll(count);
  if (const char* only = std::getenv("XJIT_RANDOM_SEED")) first = last = std::atoll(only);
  // XJIT_RANDOM_HLO=FILE checks that module instead (to reduce a failure by hand).
  if (const char* path = std::getenv("XJIT_RANDOM_HLO")) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    for (bool passes : {true, false}) {
      CheckOptions options;
      options.isa = GetParam();
      options.seed = first;
      options.run_passes = passes;
      EXPECT_TRUE(MatchesEvaluator(text.str(), options)) << "passes " << passes;
    }
    return;
  }
  for (uint64_t seed = first; seed <= last && failures < 5; ++seed) {
    if (first != last && !InShard(seed)) continue;  // XJIT_RANDOM_SEED runs its seed.
    const auto feature = static_cast<ModuleGenerator::Feature>(seed % ModuleGenerator::kFeatureCount);
    ModuleGenerator generator(seed * 3571);
    const std::string hlo = generator.GenerateAround(feature);
    if (std::getenv("XJIT_PRINT_MODULES") != nullptr) std::cout << "seed " << seed << "\n" << hlo;
    if (!generator.feature_emitted()) {
      ++failures;
      ADD_FAILURE() << "seed " << seed << ": no " << ModuleGenerator::FeatureName(feature)
                    << " placed:\n" << hlo;
      continue;
    }
    ++modules[feature];
    for (bool passes : {true, false}) {
      CheckOptions options;
      options.isa = GetParam();
      options.seed = seed;
      options.run_passes = passes;
      options.require_all_compiled = passes || !generator.needs_passes();
      options.norm_tolerance = generator.norm_tolerance();
      options.norm_minor_dims = generator.norm_minor_dims();
      CompileReport report;
      options.report = &report;
      ::testing::AssertionResult result = MatchesEvaluator(hlo, options);
      kernels += report.kernels.size();
      library_calls += report.library_calls.size();
      if (!result) {
        ++failures;
        ADD_FAILURE() << "module seed " << seed << " (" << ModuleGenerator::FeatureName(feature)
                      << ", passes " << (passes ? "on" : "off") << "):\n" << hlo << "\n"
                      << result.message();
        break;
      }
    }
  }
  std::vector<std::string> counts;
  for (int f = 0; f < ModuleGenerator::kFeatureCount; ++f) {
    counts.push_back(absl::StrCat(modules[f], " ", ModuleGenerator::FeatureName(f)));
  }
  std::cout << absl::StrJoin(counts, ", ") << " modules (each with passes on and off), "
            << kernels << " kernels, " << library_calls << " library calls\n";
}

INSTANTIATE_TEST_SUITE_P(Isas, JitRandomSteps, ::testing::ValuesIn(HostIsas()),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(IsaName(info.param));
                         });

// The edge cases of issue 15 (ModuleGenerator::GenerateEdge, one case per
// seed in turn): degenerate shapes, huge but legal shapes, deep nesting
// through call, while and conditional, and tuples with mixed layouts; each
// module on every instruction set, with the pass pipeline on and off. An
// instruction may run interpreted; the results must match the evaluator's.
constexpr int kEdgeModulesPerIsa = 60;

class JitRandomEdges : public ::testing::TestWithParam<Isa> {};

TEST_P(JitRandomEdges, MatchesEvaluator) {
  int failures = 0;
  std::vector<int> modules(ModuleGenerator::kEdgeCaseCount);
  for (uint64_t seed = 1; seed <= ModuleCount(kEdgeModulesPerIsa) && failures < 5; ++seed) {
    if (!InShard(seed)) continue;
    const auto edge =
        static_cast<ModuleGenerator::EdgeCase>(seed % ModuleGenerator::kEdgeCaseCount);
    ModuleGenerator generator(seed * 7727);
    const std::string hlo = generator.GenerateEdge(edge);
    if (std::getenv("XJIT_PRINT_MODULES") != nullptr) std::cout << "seed " << seed << "\n" << hlo;
    ++modules[edge];
    for (bool passes : {true, false}) {
      CheckOptions options;
      options.isa = GetParam();
      options.seed = seed;
      options.run_passes = passes;
      options.require_all_compiled = false;
      options.ulp_tolerance = generator.math_tolerance();
      ::testing::AssertionResult result = MatchesEvaluator(hlo, options);
      if (!result) {
        ++failures;
        ADD_FAILURE() << "module seed " << seed << " (" << ModuleGenerator::EdgeCaseName(edge)
                      << ", passes " << (passes ? "on" : "off") << "):\n" << hlo << "\n"
                      << result.message();
        break;
      }
    }
  }
  std::vector<std::string> counts;
  for (int e = 0; e < ModuleGenerator::kEdgeCaseCount; ++e) {
    counts.push_back(absl::StrCat(modules[e], " ", ModuleGenerator::EdgeCaseName(e)));
  }
  std::cout << absl::StrJoin(counts, ", ") << " modules (each with passes on and off)\n";
}

INSTANTIATE_TEST_SUITE_P(Isas, JitRandomEdges, ::testing::ValuesIn(HostIsas()),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(IsaName(info.param));
                         });

}  // namespace
}  // namespace xjit::jit::testing
