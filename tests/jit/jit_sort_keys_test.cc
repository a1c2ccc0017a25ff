// The sort fast path (comparators recognised by jit/calls/sort_comparator.h,
// sorted by integer keys in runtime/sort/key_sort.h) against the evaluator,
// bit for bit (NaN payloads and the sign of zero included), at 1 and 2
// threads: every recognised form (LT/GT, TOTALORDER or the partial compare,
// parameters swapped, JAX's NaN/-0 canonicalisation, lexicographic keys with
// an iota tie-break) across float and integer element types, arguments with
// NaNs of both signs and several payloads, ±inf, ±0, denormals and many
// ties, slices of length 0, 1, odd and large, several slices, both layouts.
// Each check also asserts whether the plan has keys, so a form that stops
// being recognised (or an unrecognised one that starts) fails here; the
// unrecognised comparators keep the merge sort and must still match.
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "ir/element_type.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

// How often NaNs appear in a float argument.
enum class Nans { kNone, kRare, kMany };

struct FloatBits {
  uint64_t infinity;
  uint64_t quiet_nan;
};

FloatBits BitsOf(ElementType type) {
  switch (type) {
    case ElementType::kF16:
      return {0x7c00, 0x7e00};
    case ElementType::kBF16:
      return {0x7f80, 0x7fc0};
    case ElementType::kF32:
      return {0x7f800000, 0x7fc00000};
    default:
      return {0x7ff0000000000000, 0x7ff8000000000000};
  }
}

// Element bits drawn so that ties are common (a small pool of values half
// the time) and every edge value shows up: zeros of both signs, infinities,
// denormals, the largest finite values, NaNs of both signs with payloads.
uint64_t EdgeBits(ElementType type, Nans nans, std::mt19937_64& rng) {
  const int width = IsPred(type) ? 1 : BitWidth(type);
  const uint64_t mask = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  if (IsPred(type)) return rng() & 1;
  if (!IsFloat(type)) {
    const uint64_t sign = uint64_t{1} << (width - 1);
    const uint64_t pool[] = {0, 1, mask, sign, sign - 1, 2, mask - 1, 7};
    switch (rng() % 3) {
      case 0:
        return pool[rng() % 8];
      case 1:
        return rng() % 5;  // ties
      default:
        return rng() & mask;
    }
  }
  if (BitWidth(type) < 16) return rng() & mask;  // 8-bit floats: any bits
  const FloatBits f = BitsOf(type);
  const uint64_t sign = uint64_t{1} << (width - 1);
  const uint64_t one = type == ElementType::kF16    ? 0x3c00
                       : type == ElementType::kBF16 ? 0x3f80
                       : type == ElementType::kF32  ? 0x3f800000
                                                    : 0x3ff0000000000000;
  const uint64_t nan_pool[] = {f.quiet_nan, sign | f.quiet_nan, f.infinity + 1,
                               sign | (f.quiet_nan + 3), f.quiet_nan + 1};
  const bool nan = nans == Nans::kMany ? rng() % 8 == 0 : nans == Nans::kRare && rng() % 3000 == 0;
  if (nan) return nan_pool[rng() % 5];
  const uint64_t pool[] = {0,   sign,       f.infinity,     sign | f.infinity,
                           1,   sign | 1,   f.infinity - 1, sign | (f.infinity - 1),
                           one, sign | one, one + 1,        one - 1};
  uint64_t bits;
  switch (rng() % 3) {
    case 0:
      return pool[rng() % 12];
    case 1:
      return (one + rng() % 4) | (rng() % 2 != 0 ? sign : 0);  // ties
    default:
      bits = rng() & mask;
      break;
  }
  // A random pattern that happens to be a NaN when none is wanted: 1.
  if ((bits & (sign - 1)) > f.infinity && nans != Nans::kMany) return one;
  return bits;
}

Literal EdgeLiteral(const Shape& shape, Nans nans, std::mt19937_64& rng) {
  Literal literal(shape);
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    literal.SetBitsLinear(i, EdgeBits(shape.element_type(), nans, rng));
  }
  return literal;
}

// The comparator `cmp` of 2 * types.size() parameters x0, x1, ... whose
// root is `root` (instructions before it in `body`).
std::string Comparator(const std::vector<std::string>& types, const std::string& body) {
  std::string text = "cmp {\n";
  for (size_t i = 0; i < 2 * types.size(); ++i) {
    absl::StrAppend(&text, "  x", i, " = ", types[i / 2], "[] parameter(", i, ")\n");
  }
  return absl::StrCat(text, body, "}\n");
}

// compare(x<a>, x<b>) as the root, with `direction` and `type`.
std::string CompareRoot(int a, int b, const std::string& direction, const std::string& type) {
  return absl::StrCat("  ROOT r = pred[] compare(x", a, ", x", b, "), direction=", direction,
                      type.empty() ? "" : absl::StrCat(", type=", type), "\n");
}

// JAX's canonicalisation of a float key x<i> into k<i> (NaN to one NaN, ±0
// to +0), `nan_outer`: NaN's select outside zero's, as JAX writes it.
std::string Canonical(int i, const std::string& t, bool nan_outer = true) {
  const std::string x = absl::StrCat("x", i);
  std::string text =
      absl::StrCat("  isnan", i, " = pred[] compare(", x, ", ", x, "), direction=NE\n  nan", i,
                   " = ", t, "[] constant(nan)\n  zero", i, " = ", t, "[] constant(0)\n  iszero", i,
                   " = pred[] compare(", x, ", zero", i, "), direction=EQ\n");
  if (nan_outer) {
    absl::StrAppend(&text, "  z", i, " = ", t, "[] select(iszero", i, ", zero", i, ", ", x,
                    ")\n  k", i, " = ", t, "[] select(isnan", i, ", nan", i, ", z", i, ")\n");
  } else {
    absl::StrAppend(&text, "  z", i, " = ", t, "[] select(isnan", i, ", nan", i, ", ", x, ")\n  k",
                    i, " = ", t, "[] select(iszero", i, ", zero", i, ", z", i, ")\n");
  }
  return text;
}

// A module sorting parameters of `shapes` along `dimension` with `cmp`.
std::string SortModule(const std::string& comparator, const std::vector<std::string>& shapes,
                       int dimension) {
  std::string text = absl::StrCat("HloModule m\n", comparator, "ENTRY e {\n");
  std::vector<std::string> names;
  for (size_t i = 0; i < shapes.size(); ++i) {
    absl::StrAppend(&text, "  p", i, " = ", shapes[i], " parameter(", i, ")\n");
    names.push_back(absl::StrCat("p", i));
  }
  const std::string result =
      shapes.size() == 1 ? shapes[0] : absl::StrCat("(", absl::StrJoin(shapes, ", "), ")");
  absl::StrAppend(&text, "  ROOT s = ", result, " sort(", absl::StrJoin(names, ", "),
                  "), dimensions={", dimension, "}, is_stable=true, to_apply=cmp\n}\n");
  return text;
}

class JitSortKeys : public ::testing::TestWithParam<Isa> {
 protected:
  // Runs `hlo` compiled (1 and 2 threads) and in the evaluator on edge
  // arguments for each NaN density, and requires equal bits; `keys`: the
  // sort's plan must (or must not) have recognised keys.
  void Check(const std::string& hlo, bool keys, const std::string& routine = "sort",
             const std::string& plan_has = "") {
    absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
    ASSERT_TRUE(module.ok()) << module.status() << "\n" << hlo;
    uint64_t seed = 0;
    for (Nans nans : {Nans::kNone, Nans::kRare, Nans::kMany}) {
      std::mt19937_64 rng(++seed);
      std::vector<Literal> arguments;
      for (const Instruction* parameter : (*module)->entry()->parameters()) {
        arguments.push_back(EdgeLiteral(parameter->shape(), nans, rng));
      }
      // The evaluator's answer does not depend on the instruction set: one
      // evaluation serves every Isa's test (it dominates the run time).
      static auto* evaluated = new std::map<std::string, Literal>();
      const std::string cache_key = absl::StrCat(hlo, "#", static_cast<int>(nans));
      auto it = evaluated->find(cache_key);
      if (it == evaluated->end()) {
        absl::StatusOr<Literal> result = EvaluateModule(**module, arguments);
        ASSERT_TRUE(result.ok()) << result.status();
        it = evaluated->emplace(cache_key, *std::move(result)).first;
      }
      const Literal* expected = &it->second;
      for (int threads : {1, 2}) {
        CompileOptions options;
        options.isa = GetParam();
        options.threads = threads;
        CompileReport report;
        absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
            Compile(**module, options, &report);
        ASSERT_TRUE(executable.ok()) << executable.status();
        EXPECT_TRUE(report.interpreted_steps.empty()) << hlo;
        bool found = false;
        for (const LibraryCallInfo& call : report.library_calls) {
          if (call.routine != routine) continue;
          found = true;
          EXPECT_TRUE(absl::StrContains(call.plan, plan_has)) << call.plan << "\n" << hlo;
          if (routine != "sort") continue;
          EXPECT_EQ(absl::StrContains(call.plan, "keys="), keys) << call.plan << "\n" << hlo;
          // The large cases are split between the threads.
          if (absl::StrContains(hlo, "[33,257]")) {
            EXPECT_TRUE(absl::StrContains(call.plan, absl::StrCat("threads=", threads)))
                << call.plan;
          }
        }
        // A sort or topk of an empty array is no step at all.
        if (!absl::StrContains(hlo, "[0]") && !absl::StrContains(hlo, ",0]")) {
          EXPECT_TRUE(found) << "no " << routine << " call\n" << hlo;
        }
        absl::StatusOr<Literal> actual = (*executable)->Run(arguments);
        ASSERT_TRUE(actual.ok()) << actual.status();
        EXPECT_TRUE(*actual == *expected)
            << "threads " << threads << " nans " << static_cast<int>(nans) << "\n"
            << hlo << "\nexpected " << expected->ToString() << "\nactual " << actual->ToString();
      }
    }
  }
};

// The shapes each form is checked on (`t` the key type, an s32 payload
// beside it shows the permutation of equal keys): lengths 0, 1, odd and
// long, several slices in both layouts, along each dimension, and a sort
// large enough to be split between threads.
struct Case {
  std::vector<std::string> shapes;
  int dimension;
};

std::vector<Case> Cases(const std::string& t, bool large = false) {
  std::vector<Case> cases = {
      {{t + "[0]", "s32[0]"}, 0},
      {{t + "[1]", "s32[1]"}, 0},
      {{t + "[23]", "s32[23]"}, 0},
      {{t + "[5,77]{1,0}", "s32[5,77]{1,0}"}, 1},
      {{t + "[5,77]{0,1}", "s32[5,77]{1,0}"}, 1},
      {{t + "[77,5]{0,1}", "s32[77,5]{0,1}"}, 0},
      {{t + "[3,0]", "s32[3,0]"}, 1},
  };
  // Long slices (radix passes rather than the insertion sort), and enough
  // elements for 2 threads to share the slices (runtime/sort's threshold):
  // the evaluator takes long for these, so not every form gets them.
  if (large) {
    cases.push_back({{t + "[1001]", "s32[1001]"}, 0});
    cases.push_back({{t + "[33,257]", "s32[33,257]"}, 1});
  }
  return cases;
}

const char* kFloatTypes[] = {"f32", "f64", "f16", "bf16"};
const char* kIntegerTypes[] = {"s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "pred"};

TEST_P(JitSortKeys, FloatSingleKey) {
  for (const char* t : kFloatTypes) {
    for (const char* direction : {"LT", "GT"}) {
      for (const char* type : {"TOTALORDER", ""}) {
        const std::string cmp = Comparator({t, "s32"}, CompareRoot(0, 1, direction, type));
        for (const Case& c : Cases(t, std::string(direction) == "GT"))
          Check(SortModule(cmp, c.shapes, c.dimension), true);
      }
    }
  }
}

TEST_P(JitSortKeys, FloatSingleOperandAndSwappedParameters) {
  for (const char* t : kFloatTypes) {
    // compare(x1, x0), LT is a descending sort; one operand, no payload.
    const std::string cmp = Comparator({t}, CompareRoot(1, 0, "LT", "TOTALORDER"));
    Check(SortModule(cmp, {absl::StrCat(t, "[6,300]")}, 1), true);
    const std::string partial = Comparator({t}, CompareRoot(1, 0, "GT", ""));
    Check(SortModule(partial, {absl::StrCat(t, "[300,6]{0,1}")}, 0), true);
  }
}

TEST_P(JitSortKeys, IntegerKeys) {
  for (const char* t : kIntegerTypes) {
    for (const char* direction : {"LT", "GT"}) {
      const std::string cmp = Comparator({t, "s32"}, CompareRoot(0, 1, direction, ""));
      for (const Case& c :
           Cases(t, std::string(direction) == "LT" && BitWidth(*ParseElementType(t)) >= 16))
        Check(SortModule(cmp, c.shapes, c.dimension), true);
    }
  }
  // A comparison type other than the element type's: the evaluator
  // sign-extends under SIGNED and TOTALORDER, zero-extends under UNSIGNED.
  for (const char* t : {"s16", "u32", "u8", "s64"}) {
    for (const char* type : {"SIGNED", "UNSIGNED", "TOTALORDER"}) {
      const std::string cmp = Comparator({t, "s32"}, CompareRoot(0, 1, "LT", type));
      Check(SortModule(cmp, {absl::StrCat(t, "[4,200]"), "s32[4,200]"}, 1), true);
    }
  }
}

TEST_P(JitSortKeys, JaxCanonicalisedFloatKey) {
  // JAX's argsort comparator: NaNs made one NaN, -0 made +0, then LT under
  // TOTALORDER (also checked under the partial compare, and with the
  // selects nested the other way round).
  for (const char* t : kFloatTypes) {
    for (bool nan_outer : {true, false}) {
      for (const char* type : {", type=TOTALORDER", ""}) {
        const std::string cmp =
            Comparator({t, "s32"},
                       absl::StrCat(Canonical(0, t, nan_outer), Canonical(1, t, nan_outer),
                                    "  ROOT r = pred[] compare(k0, k1), direction=LT", type, "\n"));
        const bool large = nan_outer && std::string(t) == "f32";
        for (const Case& c : Cases(t, large)) Check(SortModule(cmp, c.shapes, c.dimension), true);
      }
    }
  }
}

TEST_P(JitSortKeys, LexicographicKeys) {
  // or(lt(k0), and(eq(k0), lt(x2, x3))): JAX's comparator with num_keys=2,
  // the second key an iota (here any s32: ties of the first key decided by
  // it, not by position).
  for (const char* t : kFloatTypes) {
    const std::string body =
        absl::StrCat(Canonical(0, t), Canonical(1, t),
                     "  lt0 = pred[] compare(k0, k1), direction=LT, type=TOTALORDER\n"
                     "  eq0 = pred[] compare(k0, k1), direction=EQ, type=TOTALORDER\n"
                     "  lt1 = pred[] compare(x2, x3), direction=LT\n"
                     "  tie = pred[] and(eq0, lt1)\n"
                     "  ROOT r = pred[] or(lt0, tie)\n");
    for (const Case& c : Cases(t, std::string(t) == "bf16")) {
      Check(SortModule(Comparator({t, "s32"}, body), c.shapes, c.dimension), true);
    }
  }
  // Operands of or/and the other way round, descending u8 then ascending
  // partial f32 then s16: three keys, a payload.
  const std::string three =
      "  gt0 = pred[] compare(x1, x0), direction=LT\n"
      "  eq0 = pred[] compare(x0, x1), direction=EQ\n"
      "  lt1 = pred[] compare(x2, x3), direction=LT\n"
      "  eq1 = pred[] compare(x3, x2), direction=EQ\n"
      "  lt2 = pred[] compare(x4, x5), direction=LT\n"
      "  tie1 = pred[] and(lt2, eq1)\n"
      "  or1 = pred[] or(tie1, lt1)\n"
      "  tie0 = pred[] and(or1, eq0)\n"
      "  ROOT r = pred[] or(tie0, gt0)\n";
  const std::string cmp = Comparator({"u8", "f32", "s16", "s32"}, three);
  Check(SortModule(cmp, {"u8[6,150]", "f32[6,150]", "s16[6,150]", "s32[6,150]"}, 1), true);
  Check(SortModule(cmp, {"u8[150,6]{0,1}", "f32[150,6]", "s16[150,6]{0,1}", "s32[150,6]"}, 0),
        true);
}

// topk compiles as a selection (runtime/sort/topk.h) when k is small
// against the row and keys fit 32 bits, else as a radix sort of the row:
// both against the evaluator for every element type with a compiled topk,
// largest and smallest, k from 0 to the row length, rows in either layout.
std::string TopKModule(const std::string& type, const std::string& operand,
                       const std::string& result, int64_t k, bool largest,
                       const std::string& indices_layout = "") {
  return absl::StrCat("HloModule m\nENTRY e {\n  p = ", type, operand,
                      " parameter(0)\n  ROOT t = (", type, result, ", s32", result, indices_layout,
                      ") topk(p), k=", k, ", largest=", largest ? "true" : "false", "\n}\n");
}

TEST_P(JitSortKeys, TopKSelection) {
  for (const char* t : {"f32", "bf16", "f16", "s32", "u8", "s16", "pred"}) {
    for (bool largest : {true, false}) {
      Check(TopKModule(t, "[7,300]", "[7,5]", 5, largest), false, "topk", " select");
      Check(TopKModule(t, "[3,2,130]{1,2,0}", "[3,2,8]", 8, largest), false, "topk", " select");
      Check(TopKModule(t, "[33,257]", "[33,16]", 16, largest, "{0,1}"), false, "topk", "threads=");
    }
  }
}

TEST_P(JitSortKeys, TopKSort) {
  // k a large part of the row, or 64-bit keys: the row is sorted.
  for (const char* t : {"f32", "f64", "s64", "u64", "s8", "bf16"}) {
    for (bool largest : {true, false}) {
      Check(TopKModule(t, "[5,40]", "[5,40]", 40, largest), false, "topk", " sort");
      Check(TopKModule(t, "[5,40]{0,1}", "[5,7]", 7, largest), false, "topk", " sort");
      Check(TopKModule(t, "[1]", "[1]", 1, largest), false, "topk", " sort");
      Check(TopKModule(t, "[4,9]", "[4,0]", 0, largest), false, "topk");
    }
  }
  Check(TopKModule("f64", "[2,600]", "[2,3]", 3, true), false, "topk", " sort");
}

TEST_P(JitSortKeys, TopKOfOtherTypesIsAStableSort) {
  // expand-topk still expands a topk without a compiled one (8-bit floats,
  // sub-byte integers); the sort's comparator is then not recognised.
  Check(TopKModule("f8e5m2", "[4,50]", "[4,5]", 5, true), false, "sort");
  Check(TopKModule("s4", "[4,50]", "[4,5]", 5, false), false, "sort");
}

// Modules exactly as JAX 0.x writes them (jax.jit(f).lower(...).as_text(
// dialect="hlo")) for lax.sort with num_keys=2, argsort descending (reverse
// around an ascending sort), jnp.sort of bf16 along dimension 0, an
// unstable argsort and an integer argsort: every sort takes the key path.
const char* const kJaxModules[] = {
    // lexsort2
    R"hlo(HloModule jit__lambda, entry_computation_layout={(f32[4,50]{1,0}, s32[4,50]{1,0})->(f32[4,50]{1,0}, s32[4,50]{1,0})}

region_0.1 {
  sort.4 = f32[] parameter(0)
  ne.2 = pred[] compare(sort.4, sort.4), direction=NE
  constant.2 = f32[] constant(nan)
  constant.3 = f32[] constant(0)
  eq.2 = pred[] compare(sort.4, constant.3), direction=EQ
  select_n.4 = f32[] select(eq.2, constant.3, sort.4)
  select_n.5 = f32[] select(ne.2, constant.2, select_n.4)
  sort.5 = f32[] parameter(1)
  ne.3 = pred[] compare(sort.5, sort.5), direction=NE
  eq.3 = pred[] compare(sort.5, constant.3), direction=EQ
  select_n.6 = f32[] select(eq.3, constant.3, sort.5)
  select_n.7 = f32[] select(ne.3, constant.2, select_n.6)
  lt_to.3 = pred[] compare(select_n.5, select_n.7), direction=LT, type=TOTALORDER
  eq_to.1 = pred[] compare(select_n.5, select_n.7), direction=EQ, type=TOTALORDER
  sort.6 = s32[] parameter(2)
  sort.7 = s32[] parameter(3)
  lt_to.2 = pred[] compare(sort.6, sort.7), direction=LT
  and.1 = pred[] and(eq_to.1, lt_to.2)
  ROOT or.1 = pred[] or(lt_to.3, and.1)
}

ENTRY main.2 {
  x.1 = f32[4,50]{1,0} parameter(0)
  i.1 = s32[4,50]{1,0} parameter(1)
  sort.11 = (f32[4,50]{1,0}, s32[4,50]{1,0}) sort(x.1, i.1), dimensions={1}, is_stable=true, to_apply=region_0.1
  sort.12 = f32[4,50]{1,0} get-tuple-element(sort.11), index=0
  sort.13 = s32[4,50]{1,0} get-tuple-element(sort.11), index=1
  ROOT tuple.1 = (f32[4,50]{1,0}, s32[4,50]{1,0}) tuple(sort.12, sort.13)
}

)hlo",
    // argsort_desc
    R"hlo(HloModule jit__lambda, entry_computation_layout={(f32[4,50]{1,0})->s32[4,50]{1,0}}

region_0.1 {
  sort.6 = s32[] parameter(2)
  sort.7 = s32[] parameter(3)
  sort.4 = f32[] parameter(0)
  ne.2 = pred[] compare(sort.4, sort.4), direction=NE
  constant.2 = f32[] constant(nan)
  constant.3 = f32[] constant(0)
  eq.2 = pred[] compare(sort.4, constant.3), direction=EQ
  select_n.4 = f32[] select(eq.2, constant.3, sort.4)
  select_n.5 = f32[] select(ne.2, constant.2, select_n.4)
  sort.5 = f32[] parameter(1)
  ne.3 = pred[] compare(sort.5, sort.5), direction=NE
  eq.3 = pred[] compare(sort.5, constant.3), direction=EQ
  select_n.6 = f32[] select(eq.3, constant.3, sort.5)
  select_n.7 = f32[] select(ne.3, constant.2, select_n.6)
  ROOT lt_to.1 = pred[] compare(select_n.5, select_n.7), direction=LT, type=TOTALORDER
}

argsort.2 {
  Arg_0.1 = f32[4,50]{1,0} parameter(0)
  rev.3 = f32[4,50]{1,0} reverse(Arg_0.1), dimensions={1}
  iota.2 = s32[50]{0} iota(), iota_dimension=0
  iota.3 = s32[4,50]{1,0} broadcast(iota.2), dimensions={1}
  rev.4 = s32[4,50]{1,0} reverse(iota.3), dimensions={1}
  sort.11 = (f32[4,50]{1,0}, s32[4,50]{1,0}) sort(rev.3, rev.4), dimensions={1}, is_stable=true, to_apply=region_0.1
  sort.12 = f32[4,50]{1,0} get-tuple-element(sort.11), index=0
  sort.13 = s32[4,50]{1,0} get-tuple-element(sort.11), index=1
  ROOT rev.5 = s32[4,50]{1,0} reverse(sort.13), dimensions={1}
}

ENTRY main.3 {
  x.1 = f32[4,50]{1,0} parameter(0)
  ROOT jit_argsort_.1 = s32[4,50]{1,0} call(x.1), to_apply=argsort.2
}

)hlo",
    // sort_bf16
    R"hlo(HloModule jit__lambda, entry_computation_layout={(bf16[4,50]{1,0})->bf16[4,50]{1,0}}

region_0.1 {
  sort.2 = bf16[] parameter(0)
  ne.2 = pred[] compare(sort.2, sort.2), direction=NE
  constant.2 = bf16[] constant(nan)
  constant.3 = bf16[] constant(0)
  eq.2 = pred[] compare(sort.2, constant.3), direction=EQ
  select_n.4 = bf16[] select(eq.2, constant.3, sort.2)
  select_n.5 = bf16[] select(ne.2, constant.2, select_n.4)
  sort.3 = bf16[] parameter(1)
  ne.3 = pred[] compare(sort.3, sort.3), direction=NE
  eq.3 = pred[] compare(sort.3, constant.3), direction=EQ
  select_n.6 = bf16[] select(eq.3, constant.3, sort.3)
  select_n.7 = bf16[] select(ne.3, constant.2, select_n.6)
  ROOT lt_to.1 = pred[] compare(select_n.5, select_n.7), direction=LT, type=TOTALORDER
}

sort.2 {
  Arg_0.1 = bf16[4,50]{1,0} parameter(0)
  ROOT sort.5 = bf16[4,50]{1,0} sort(Arg_0.1), dimensions={0}, is_stable=true, to_apply=region_0.1
}

ENTRY main.3 {
  b.1 = bf16[4,50]{1,0} parameter(0)
  ROOT jit_sort_.1 = bf16[4,50]{1,0} call(b.1), to_apply=sort.2
}

)hlo",
    // argsort_unstable
    R"hlo(HloModule jit__lambda, entry_computation_layout={(f32[4,50]{1,0})->s32[4,50]{1,0}}

region_0.1 {
  sort.6 = s32[] parameter(2)
  sort.7 = s32[] parameter(3)
  sort.4 = f32[] parameter(0)
  ne.2 = pred[] compare(sort.4, sort.4), direction=NE
  constant.2 = f32[] constant(nan)
  constant.3 = f32[] constant(0)
  eq.2 = pred[] compare(sort.4, constant.3), direction=EQ
  select_n.4 = f32[] select(eq.2, constant.3, sort.4)
  select_n.5 = f32[] select(ne.2, constant.2, select_n.4)
  sort.5 = f32[] parameter(1)
  ne.3 = pred[] compare(sort.5, sort.5), direction=NE
  eq.3 = pred[] compare(sort.5, constant.3), direction=EQ
  select_n.6 = f32[] select(eq.3, constant.3, sort.5)
  select_n.7 = f32[] select(ne.3, constant.2, select_n.6)
  ROOT lt_to.1 = pred[] compare(select_n.5, select_n.7), direction=LT, type=TOTALORDER
}

argsort.2 {
  Arg_0.1 = f32[4,50]{1,0} parameter(0)
  iota.2 = s32[50]{0} iota(), iota_dimension=0
  iota.3 = s32[4,50]{1,0} broadcast(iota.2), dimensions={1}
  sort.11 = (f32[4,50]{1,0}, s32[4,50]{1,0}) sort(Arg_0.1, iota.3), dimensions={1}, to_apply=region_0.1
  sort.12 = f32[4,50]{1,0} get-tuple-element(sort.11), index=0
  ROOT sort.13 = s32[4,50]{1,0} get-tuple-element(sort.11), index=1
}

ENTRY main.3 {
  x.1 = f32[4,50]{1,0} parameter(0)
  ROOT jit_argsort_.1 = s32[4,50]{1,0} call(x.1), to_apply=argsort.2
}

)hlo",
    // argsort_int
    R"hlo(HloModule jit__lambda, entry_computation_layout={(s32[4,50]{1,0})->s32[4,50]{1,0}}

region_0.1 {
  sort.6 = s32[] parameter(2)
  sort.7 = s32[] parameter(3)
  sort.4 = s32[] parameter(0)
  sort.5 = s32[] parameter(1)
  ROOT lt_to.1 = pred[] compare(sort.4, sort.5), direction=LT
}

argsort.2 {
  Arg_0.1 = s32[4,50]{1,0} parameter(0)
  iota.2 = s32[50]{0} iota(), iota_dimension=0
  iota.3 = s32[4,50]{1,0} broadcast(iota.2), dimensions={1}
  sort.11 = (s32[4,50]{1,0}, s32[4,50]{1,0}) sort(Arg_0.1, iota.3), dimensions={1}, is_stable=true, to_apply=region_0.1
  sort.12 = s32[4,50]{1,0} get-tuple-element(sort.11), index=0
  ROOT sort.13 = s32[4,50]{1,0} get-tuple-element(sort.11), index=1
}

ENTRY main.3 {
  i.1 = s32[4,50]{1,0} parameter(0)
  ROOT jit_argsort_.1 = s32[4,50]{1,0} call(i.1), to_apply=argsort.2
}

)hlo",
};

TEST_P(JitSortKeys, ModulesJaxWrites) {
  for (const char* hlo : kJaxModules) Check(hlo, true);
}

TEST_P(JitSortKeys, UnrecognisedComparatorsKeepTheMergeSort) {
  // LE (not strict), a key compared with a payload, a canonicalisation
  // testing another parameter, a key plus an extra condition, c64.
  Check(SortModule(Comparator({"f32", "s32"}, CompareRoot(0, 1, "LE", "")),
                   {"f32[4,100]", "s32[4,100]"}, 1),
        false);
  Check(SortModule(Comparator({"s32", "s32"}, CompareRoot(0, 3, "LT", "")),
                   {"s32[4,100]", "s32[4,100]"}, 1),
        false);
  Check(SortModule(Comparator({"f32", "f32"},
                              "  isnan = pred[] compare(x2, x2), direction=NE\n"
                              "  nan = f32[] constant(nan)\n"
                              "  k0 = f32[] select(isnan, nan, x0)\n"
                              "  ROOT r = pred[] compare(k0, x1), direction=LT\n"),
                   {"f32[4,100]", "f32[4,100]"}, 1),
        false);
  Check(SortModule(Comparator({"f32", "s32"},
                              "  lt = pred[] compare(x0, x1), direction=LT\n"
                              "  neg = pred[] compare(x2, x3), direction=LT\n"
                              "  ROOT r = pred[] and(lt, neg)\n"),
                   {"f32[4,100]", "s32[4,100]"}, 1),
        false);
  Check(SortModule(Comparator({"f8e5m2"}, CompareRoot(0, 1, "LT", "TOTALORDER")), {"f8e5m2[4,100]"},
                   1),
        false);
}

INSTANTIATE_TEST_SUITE_P(Isas, JitSortKeys, ::testing::ValuesIn(HostIsas()),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(IsaName(info.param));
                         });

}  // namespace
}  // namespace xjit::jit::testing
