// HLO sort compiled as a library call (runtime/sort with the comparator
// compiled as a kernel), against the evaluator, on every instruction set
// the host supports: float total order with NaN and -0, descending
// integers, variadic key/value sorts with pred, u8 and c64 payloads, sorts
// along each dimension of arrays with non-default layouts, size-0 and size-1
// dimensions, stable sorts with many ties, comparators that are not strict
// weak orders (the runtime shares the evaluator's merge sort, so even those
// match bit for bit), and comparators without a kernel (interpreted).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

// A comparator of 2 * types.size() scalar parameters comparing the first
// pair with `direction` (and `type`, if not empty).
std::string KeyComparator(const std::string& name, const std::vector<std::string>& types,
                          const std::string& direction, const std::string& type = "") {
  std::string text = absl::StrCat(name, " {\n");
  for (size_t i = 0; i < 2 * types.size(); ++i) {
    absl::StrAppend(&text, "  x", i, " = ", types[i / 2], "[] parameter(", i, ")\n");
  }
  absl::StrAppend(&text, "  ROOT c = pred[] compare(x0, x1), direction=", direction,
                  type.empty() ? "" : absl::StrCat(", type=", type), "\n}\n");
  return text;
}

// A module sorting parameters of `shapes` (element type and dimensions with
// layout, e.g. "f32[3,5]{0,1}") along `dimension` with comparator `cmp`.
std::string SortModule(const std::string& comparator, const std::vector<std::string>& shapes,
                       int dimension, bool stable = false,
                       const std::vector<std::string>& result_shapes = {}) {
  std::string text = absl::StrCat("HloModule m\n", comparator, "ENTRY e {\n");
  std::vector<std::string> names;
  for (size_t i = 0; i < shapes.size(); ++i) {
    absl::StrAppend(&text, "  p", i, " = ", shapes[i], " parameter(", i, ")\n");
    names.push_back(absl::StrCat("p", i));
  }
  const std::vector<std::string>& results = result_shapes.empty() ? shapes : result_shapes;
  const std::string result = results.size() == 1
                                 ? results[0]
                                 : absl::StrCat("(", absl::StrJoin(results, ", "), ")");
  absl::StrAppend(&text, "  ROOT s = ", result, " sort(", absl::StrJoin(names, ", "),
                  "), dimensions={", dimension, "}", stable ? ", is_stable=true" : "",
                  ", to_apply=cmp\n}\n");
  return text;
}

class JitSort : public ::testing::TestWithParam<Isa> {
 protected:
  // Checks against the evaluator on three seeds; with `compiled`, also that
  // the sort is a library call (a sort of one empty array is no step at
  // all), otherwise that it is interpreted.
  void Check(const std::string& hlo, bool compiled = true) {
    const bool empty_array =
        absl::StrContains(hlo, "[0]") && !absl::StrContains(hlo, "ROOT s = (");
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      CheckOptions options;
      options.isa = GetParam();
      options.seed = seed;
      options.require_all_compiled = compiled;
      CompileReport report;
      options.report = &report;
      EXPECT_TRUE(MatchesEvaluator(hlo, options)) << hlo;
      if (compiled && !empty_array) {
        bool found = false;
        for (const LibraryCallInfo& call : report.library_calls) found |= call.routine == "sort";
        EXPECT_TRUE(found) << hlo;
      } else if (!compiled) {
        bool interpreted = false;
        for (const std::string& line : report.interpreted_steps) {
          interpreted |= absl::StrContains(line, "(sort)");
        }
        EXPECT_TRUE(interpreted) << hlo;
      }
    }
  }
};

TEST_P(JitSort, FloatTotalOrderAscending) {
  for (const char* t : {"f32", "f64", "f16", "bf16"}) {
    for (const char* d : {"[1000]", "[37]", "[2]", "[1]", "[0]"}) {
      Check(SortModule(KeyComparator("cmp", {t}, "LT", "TOTALORDER"), {absl::StrCat(t, d)}, 0));
    }
  }
}

TEST_P(JitSort, FloatDefaultCompareDescending) {
  // GT under the default (partial) order: NaN compares false both ways.
  Check(SortModule(KeyComparator("cmp", {"f32"}, "GT"), {"f32[500]"}, 0));
}

TEST_P(JitSort, IntegersDescending) {
  for (const char* t : {"s32", "s8", "u64", "s4", "u16"}) {
    Check(SortModule(KeyComparator("cmp", {t}, "GT"), {absl::StrCat(t, "[300]")}, 0));
  }
}

TEST_P(JitSort, VariadicKeyValue) {
  const std::vector<std::string> types = {"s32", "pred", "u8", "c64"};
  Check(SortModule(KeyComparator("cmp", types, "LT"),
                   {"s32[257]", "pred[257]", "u8[257]", "c64[257]"}, 0));
  // Keys in f32, payloads of another layout than the keys.
  Check(SortModule(KeyComparator("cmp", {"f32", "c64"}, "LT", "TOTALORDER"),
                   {"f32[5,40]{1,0}", "c64[5,40]{0,1}"}, 1));
}

TEST_P(JitSort, LexicographicWithConstant) {
  // (k0 * 0.5, k1) lexicographic: a comparator with a constant and
  // select/and/or.
  const std::string cmp = R"(cmp {
  a0 = f32[] parameter(0)
  b0 = f32[] parameter(1)
  a1 = s32[] parameter(2)
  b1 = s32[] parameter(3)
  half = f32[] constant(0.5)
  ha = f32[] multiply(a0, half)
  hb = f32[] multiply(b0, half)
  lt0 = pred[] compare(ha, hb), direction=LT, type=TOTALORDER
  eq0 = pred[] compare(ha, hb), direction=EQ, type=TOTALORDER
  lt1 = pred[] compare(a1, b1), direction=LT
  tie = pred[] and(eq0, lt1)
  ROOT r = pred[] or(lt0, tie)
}
)";
  Check(SortModule(cmp, {"f32[4,64]", "s32[4,64]"}, 1));
  Check(SortModule(cmp, {"f32[64,3]{0,1}", "s32[64,3]"}, 0));
}

TEST_P(JitSort, EachDimensionOfNonDefaultLayouts) {
  for (int dimension : {0, 1}) {
    for (const char* shape : {"f32[13,9]{0,1}", "f32[13,9]{1,0}"}) {
      Check(SortModule(KeyComparator("cmp", {"f32"}, "LT", "TOTALORDER"), {shape}, dimension));
    }
    // A result in another layout than its operand.
    Check(SortModule(KeyComparator("cmp", {"s32"}, "GT"), {"s32[6,11]{0,1}"}, dimension, false,
                     {"s32[6,11]{1,0}"}));
  }
  for (int dimension : {0, 1, 2}) {
    Check(SortModule(KeyComparator("cmp", {"s16", "f64"}, "LT"),
                     {"s16[3,4,5]{1,0,2}", "f64[3,4,5]{2,0,1}"}, dimension));
  }
}

TEST_P(JitSort, SizeZeroAndSizeOneDimensions) {
  const std::string cmp = KeyComparator("cmp", {"f32", "s32"}, "LT");
  for (const char* d : {"[0,5]", "[5,0]", "[1,6]", "[6,1]", "[1,1]", "[0,0]"}) {
    for (int dimension : {0, 1}) {
      Check(SortModule(cmp, {absl::StrCat("f32", d), absl::StrCat("s32", d)}, dimension));
    }
  }
}

TEST_P(JitSort, StableWithManyTies) {
  // u2 keys take four values: long runs of ties, the payload shows order.
  Check(SortModule(KeyComparator("cmp", {"u2", "s32"}, "LT"), {"u2[300]", "s32[300]"}, 0, true));
  Check(SortModule(KeyComparator("cmp", {"pred", "f32"}, "GT"), {"pred[8,70]", "f32[8,70]"}, 1,
                   true));
}

TEST_P(JitSort, NotAStrictWeakOrder) {
  // LE answers true for equal keys: the merge takes from the right run on
  // ties, so the permutation depends on the exact merge sort.
  Check(SortModule(KeyComparator("cmp", {"u2", "s32"}, "LE"), {"u2[300]", "s32[300]"}, 0));
  Check(SortModule(KeyComparator("cmp", {"f32", "s32"}, "NE"), {"f32[100]", "s32[100]"}, 0));
  // Compares the payloads the wrong way round (neither a nor b's key).
  const std::string odd = R"(cmp {
  a0 = s8[] parameter(0)
  b0 = s8[] parameter(1)
  a1 = s32[] parameter(2)
  b1 = s32[] parameter(3)
  x = s32[] convert(a0)
  ROOT r = pred[] compare(x, b1), direction=LT
}
)";
  Check(SortModule(odd, {"s8[5,90]", "s32[5,90]"}, 1));
}

TEST_P(JitSort, MiniFloatKeys) {
  // f8/f4 keys: the comparator kernel orders their raw bits (docs/types.md).
  for (const char* t : {"f8e5m2", "f8e4m3fnuz", "f8e8m0fnu", "f4e2m1fn"}) {
    Check(SortModule(KeyComparator("cmp", {t}, "LT", "TOTALORDER"), {absl::StrCat(t, "[50]")}, 0));
  }
}

TEST_P(JitSort, ComparatorWithoutKernelIsInterpreted) {
  // A comparator with a side effect (rng) is interpreted too.
  const std::string random = R"(cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  u = f32[] rng(lo, hi), distribution=rng_uniform
  ab = f32[] add(a, u)
  ROOT r = pred[] compare(ab, b), direction=LT
}
)";
  Check(SortModule(random, {"f32[20]"}, 0), /*compiled=*/false);
}

INSTANTIATE_TEST_SUITE_P(Isas, JitSort, ::testing::ValuesIn(HostIsas()),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(IsaName(info.param));
                         });

}  // namespace
}  // namespace xjit::jit::testing
