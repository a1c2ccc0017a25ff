// Vector code for integer, pred and data-movement kernels (issue #4) and the
// inline f16 <-> f32 conversions, against the evaluator on every instruction
// set the host supports: every integer width and signedness, sizes 0, 1 and
// odd sizes (vector tails; 67 > 2 * 32 lanes of s8 on AVX2), edge values
// (RandomLiteral's integer extremes, -1, 0) and shift amounts 0, width - 1,
// width, beyond and negative. Large enough kernels must be vectorised
// (KernelInfo::vector_lanes > 1).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/element_type.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

const char* kIntTypes[] = {"s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"};

int Width(const char* type) { return BitWidth(*ParseElementType(type)); }
bool Signed(const char* type) { return type[0] == 's'; }

// Dimensions: small ones (no vector iteration possible on some widths) and
// ones every width vectorises (inner extent >= 32 lanes).
const char* kSmallDims[] = {"[0]", "[1]", "[7]", "[0,40]"};
const char* kVectorDims[] = {"[67]", "[3,37]", "[2,1,45]"};

class JitIntVector : public ::testing::TestWithParam<Isa> {
 protected:
  void Check(const std::string& hlo, bool vectorized, int seeds = 2) {
    for (uint64_t seed = 1; seed <= static_cast<uint64_t>(seeds); ++seed) {
      CheckOptions options;
      options.isa = GetParam();
      options.seed = seed;
      options.require_vectorized = vectorized;
      EXPECT_TRUE(MatchesEvaluator(hlo, options)) << hlo;
    }
  }
  // Every small and vectorisable dimension list with `make(dims)`.
  template <typename Make>
  void ForDims(Make make) {
    for (const char* d : kSmallDims) Check(make(std::string(d)), false);
    for (const char* d : kVectorDims) Check(make(std::string(d)), true);
  }
};

TEST_P(JitIntVector, Binary) {
  for (const char* t : kIntTypes) {
    for (const char* op : {"add", "subtract", "multiply", "and", "or", "xor", "maximum",
                           "minimum"}) {
      ForDims([&](const std::string& d) {
        const std::string s = absl::StrCat(t, d);
        return ModuleText({s, s}, {absl::StrCat("r = ", s, " ", op, "(p0, p1)")});
      });
    }
  }
}

TEST_P(JitIntVector, Unary) {
  for (const char* t : kIntTypes) {
    for (const char* op : {"abs", "negate", "not", "sign"}) {
      // abs and sign take signed operands only (the verifier's rule).
      if (!Signed(t) && (std::string(op) == "abs" || std::string(op) == "sign")) continue;
      ForDims([&](const std::string& d) {
        const std::string s = absl::StrCat(t, d);
        return ModuleText({s}, {absl::StrCat("r = ", s, " ", op, "(p0)")});
      });
    }
  }
}

TEST_P(JitIntVector, Compare) {
  for (const char* t : kIntTypes) {
    for (const char* dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
      for (const char* type : {"", ", type=SIGNED", ", type=UNSIGNED"}) {
        ForDims([&](const std::string& d) {
          const std::string s = absl::StrCat(t, d);
          return ModuleText(
              {s, s}, {absl::StrCat("r = pred", d, " compare(p0, p1), direction=", dir, type)});
        });
      }
    }
  }
}

TEST_P(JitIntVector, SelectClamp) {
  for (const char* t : kIntTypes) {
    ForDims([&](const std::string& d) {
      const std::string s = absl::StrCat(t, d);
      return ModuleText({s, s, s}, {absl::StrCat("c = pred", d, " compare(p0, p1), direction=LT"),
                                absl::StrCat("r = ", s, " select(c, p1, p2)")});
    });
    ForDims([&](const std::string& d) {
      const std::string s = absl::StrCat(t, d);
      return ModuleText({absl::StrCat("pred", d), s, s},
                        {absl::StrCat("r = ", s, " select(p0, p1, p2)")});
    });
    ForDims([&](const std::string& d) {
      const std::string s = absl::StrCat(t, d);
      return ModuleText({s, s, s}, {absl::StrCat("r = ", s, " clamp(p0, p1, p2)")});
    });
    // Loop-invariant bounds (broadcast scalars).
    ForDims([&](const std::string& d) {
      const std::string s = absl::StrCat(t, d);
      const std::string dims = "{}";
      return ModuleText({absl::StrCat(t, "[]"), s, absl::StrCat(t, "[]")},
                    {absl::StrCat("lo = ", s, " broadcast(p0), dimensions=", dims),
                     absl::StrCat("hi = ", s, " broadcast(p2), dimensions=", dims),
                     absl::StrCat("r = ", s, " clamp(lo, p1, hi)")});
    });
  }
}

TEST_P(JitIntVector, Shifts) {
  for (const char* t : kIntTypes) {
    const int width = Width(t);
    for (const char* op : {"shift-left", "shift-right-logical", "shift-right-arithmetic"}) {
      // Per-lane amounts: random (mostly out of range or negative), and
      // masked to [0, 2 * width) so that in-range amounts and exactly
      // `width` occur. Scalar on SSE4.1 and for 8/16-bit lanes.
      for (const char* d : {"[7]", "[67]", "[3,37]"}) {
        const std::string s = absl::StrCat(t, d);
        Check(ModuleText({s, s}, {absl::StrCat("r = ", s, " ", op, "(p0, p1)")}), false);
        Check(ModuleText({s, s}, {absl::StrCat("k = ", t, "[] constant(", 2 * width - 1, ")"),
                              absl::StrCat("m = ", s, " broadcast(k), dimensions={}"),
                              absl::StrCat("a = ", s, " and(p1, m)"),
                              absl::StrCat("r = ", s, " ", op, "(p0, a)")}),
              false, 4);
      }
      // One amount for every lane: vectorised on both ISAs.
      std::vector<std::string> amounts = {"0", "1", absl::StrCat(width - 1),
                                          absl::StrCat(width), absl::StrCat(width + 1),
                                          absl::StrCat(width / 2 + 1)};
      amounts.push_back(Signed(t) ? "-1" : "255");
      if (Signed(t)) amounts.push_back(width == 64 ? "-9223372036854775808" : "-64");
      for (const std::string& amount : amounts) {
        ForDims([&](const std::string& d) {
          const std::string s = absl::StrCat(t, d);
          return ModuleText({s}, {absl::StrCat("k = ", t, "[] constant(", amount, ")"),
                              absl::StrCat("m = ", s, " broadcast(k), dimensions={}"),
                              absl::StrCat("r = ", s, " ", op, "(p0, m)")});
        });
      }
      ForDims([&](const std::string& d) {  // a random scalar amount
        const std::string s = absl::StrCat(t, d);
        return ModuleText({s, absl::StrCat(t, "[]")},
                      {absl::StrCat("m = ", s, " broadcast(p1), dimensions={}"),
                       absl::StrCat("r = ", s, " ", op, "(p0, m)")});
      });
    }
  }
}

TEST_P(JitIntVector, PerLaneShiftsVectorisedOnAvx2) {
  if (GetParam() == Isa::kSse4) GTEST_SKIP() << "per-lane shifts need AVX2";
  for (const char* t : {"s32", "u32", "s64", "u64"}) {
    for (const char* op : {"shift-left", "shift-right-logical", "shift-right-arithmetic"}) {
      const std::string s = absl::StrCat(t, "[67]");
      Check(ModuleText({s, s}, {absl::StrCat("k = ", t, "[] constant(", 2 * Width(t) - 1, ")"),
                            absl::StrCat("m = ", s, " broadcast(k), dimensions={}"),
                            absl::StrCat("a = ", s, " and(p1, m)"),
                            absl::StrCat("r = ", s, " ", op, "(p0, a)")}),
            true, 4);
    }
  }
}

// Rotates as JAX writes threefry's: (x << r) | (x >> (width - r)) with r
// read from an array (a loop-carried rotation table), so the amounts and
// width - r are loop invariants computed from a parameter (hoisted before
// the vector loop, and shifted by with the per-lane forms on AVX2 and
// AVX-512). Amounts masked to [0, 2 * width) give every rotate, 0 and
// width (where one shift is by width: 0) and amounts past width (where
// width - r wraps and both shifts give 0, which is not a rotate); unmasked
// ones are mostly huge. Two rounds of add / rotate / xor, so several
// invariants are live across the loop.
TEST_P(JitIntVector, RotatesByInvariantAmounts) {
  for (const char* t : {"u32", "s32", "u64"}) {
    const int width = Width(t);
    for (bool masked : {true, false}) {
      ForDims([&](const std::string& d) {
        const std::string s = absl::StrCat(t, d);
        const std::string k = absl::StrCat(t, "[]");
        const std::string all_ones = Signed(t)      ? "-1"
                                     : width == 32 ? "4294967295"
                                                   : "18446744073709551615";
        const std::string m = masked ? absl::StrCat(2 * width - 1) : all_ones;
        std::vector<std::string> body = {
            absl::StrCat("w = ", k, " constant(", width, ")"),
            absl::StrCat("mask = ", t, "[2] constant({", m, ", ", m, "})"),
            absl::StrCat("amounts = ", t, "[2] and(p2, mask)")};
        std::string x = "p0", y = "p1";
        for (int round = 0; round < 2; ++round) {
          const std::string n = absl::StrCat(round);
          body.push_back(absl::StrCat("s", n, " = ", t, "[1] slice(amounts), slice={[", round,
                                      ":", round + 1, "]}"));
          body.push_back(absl::StrCat("r", n, " = ", k, " reshape(s", n, ")"));
          body.push_back(absl::StrCat("q", n, " = ", k, " subtract(w, r", n, ")"));
          body.push_back(absl::StrCat("rb", n, " = ", s, " broadcast(r", n, "), dimensions={}"));
          body.push_back(absl::StrCat("qb", n, " = ", s, " broadcast(q", n, "), dimensions={}"));
          body.push_back(absl::StrCat("x", n, " = ", s, " add(", x, ", ", y, ")"));
          body.push_back(absl::StrCat("l", n, " = ", s, " shift-left(", y, ", rb", n, ")"));
          body.push_back(
              absl::StrCat("h", n, " = ", s, " shift-right-logical(", y, ", qb", n, ")"));
          body.push_back(absl::StrCat("o", n, " = ", s, " or(l", n, ", h", n, ")"));
          body.push_back(absl::StrCat("y", n, " = ", s, " xor(o", n, ", x", n, ")"));
          x = "x" + n;
          y = "y" + n;
        }
        body.push_back(absl::StrCat("r = ", s, " add(", x, ", ", y, ")"));
        return ModuleText({s, s, absl::StrCat(t, "[2]")}, body);
      });
    }
  }
}

TEST_P(JitIntVector, Converts) {
  const std::vector<std::pair<const char*, const char*>> vectorised = {
      {"s32", "u32"}, {"u32", "s32"}, {"u8", "s8"}, {"s16", "u16"}, {"u64", "s64"},
      {"pred", "s16"}, {"pred", "u8"}, {"pred", "s64"}, {"s32", "pred"}, {"u64", "pred"},
      {"u8", "pred"}, {"f32", "s32"}, {"s32", "f32"}, {"pred", "f32"}, {"f32", "pred"},
      {"pred", "f64"}, {"f64", "pred"}};
  for (const auto& [from, to] : vectorised) {
    ForDims([&](const std::string& d) {
      return ModuleText({absl::StrCat(from, d)},
                    {absl::StrCat("r = ", to, d, " convert(p0)")});
    });
  }
  // Mixed widths stay scalar but must stay right.
  for (const auto& [from, to] : std::vector<std::pair<const char*, const char*>>{
           {"s32", "s8"}, {"u8", "s64"}, {"f32", "u32"}, {"u32", "f32"}, {"f64", "s64"}}) {
    Check(ModuleText({absl::StrCat(from, "[67]")}, {absl::StrCat("r = ", to, "[67] convert(p0)")}),
          false);
  }
  // Bitcasts of one width.
  for (const auto& [from, to] : std::vector<std::pair<const char*, const char*>>{
           {"s32", "f32"}, {"f32", "u32"}, {"u64", "f64"}, {"s8", "u8"}}) {
    ForDims([&](const std::string& d) {
      return ModuleText({absl::StrCat(from, d)},
                    {absl::StrCat("r = ", to, d, " bitcast-convert(p0)")});
    });
  }
}

// f32 -> s32 edge values: NaN, +-inf, +-2^31, the largest f32 below 2^31,
// the next below -2^31.
TEST_P(JitIntVector, FloatToS32Edges) {
  Check(ModuleText({}, {"c = f32[9] constant({nan, inf, -inf, 2147483648, -2147483648, 2147483520, "
                    "-2147483904, -0.9, 1e10})",
                    "b = f32[4,9] broadcast(c), dimensions={1}",
                    "p = f32[4,9] negate(b)",
                    "r = s32[4,9] convert(p)"}),
        false, 1);
  Check(ModuleText({"f32[67]"}, {"r = s32[67] convert(p0)"}), true, 4);
}

TEST_P(JitIntVector, Preds) {
  for (const char* op : {"and", "or", "xor"}) {
    ForDims([&](const std::string& d) {
      const std::string s = absl::StrCat("pred", d);
      return ModuleText({s, s}, {absl::StrCat("r = ", s, " ", op, "(p0, p1)")});
    });
  }
  ForDims([&](const std::string& d) {
    const std::string s = absl::StrCat("pred", d);
    return ModuleText({s, s, s}, {absl::StrCat("r = ", s, " select(p0, p1, p2)")});
  });
  ForDims([&](const std::string& d) {
    const std::string s = absl::StrCat("pred", d);
    return ModuleText({s}, {absl::StrCat("r = ", s, " not(p0)")});
  });
  ForDims([&](const std::string& d) {
    const std::string s = absl::StrCat("pred", d);
    return ModuleText({s, s}, {absl::StrCat("r = ", s, " compare(p0, p1), direction=GT")});
  });
}

TEST_P(JitIntVector, InvariantsAndIota) {
  for (const char* t : kIntTypes) {
    ForDims([&](const std::string& d) {
      const std::string s = absl::StrCat(t, d);
      return ModuleText({s, absl::StrCat(t, "[]")},
                    {absl::StrCat("b = ", s, " broadcast(p1), dimensions={}"),
                     absl::StrCat("r = ", s, " add(p0, b)")});
    });
    for (int dim : {0, 1}) {
      const std::string s = absl::StrCat(t, "[3,45]");
      Check(ModuleText({s}, {absl::StrCat("i = ", s, " iota(), iota_dimension=", dim),
                         absl::StrCat("r = ", s, " multiply(p0, i)")}),
            true);
    }
    // Wrapping iota: 300 elements of an 8-bit type.
    const std::string s = absl::StrCat(t, "[2,300]");
    Check(ModuleText({}, {absl::StrCat("r = ", s, " iota(), iota_dimension=1")}), true, 1);
  }
}

TEST_P(JitIntVector, DataMovement) {
  for (const char* t : {"s8", "u16", "s32", "u64"}) {
    const std::string s = absl::StrCat(t, "[5,70]");
    Check(ModuleText({s}, {absl::StrCat("r = ", s, " copy(p0)")}), false);
    Check(ModuleText({absl::StrCat(t, "[5,100]")},
                 {absl::StrCat("r = ", t, "[3,67] slice(p0), slice={[1:4], [3:70]}")}),
          true);
    Check(ModuleText({absl::StrCat(t, "[70]")},
                 {absl::StrCat("r = ", s, " broadcast(p0), dimensions={1}")}),
          true);
    Check(ModuleText({absl::StrCat(t, "[5]")},
                 {absl::StrCat("r = ", s, " broadcast(p0), dimensions={0}")}),
          true);
    // Not unit-stride: scalar, still right.
    Check(ModuleText({s}, {absl::StrCat("r = ", t, "[70,5] transpose(p0), dimensions={1,0}")}),
          false);
    Check(ModuleText({s}, {absl::StrCat("r = ", s, " reverse(p0), dimensions={1}")}), false);
    Check(ModuleText({s, s},
                     {absl::StrCat("r = ", t, "[10,70] concatenate(p0, p1), dimensions={0}")}),
          false);
  }
}

TEST_P(JitIntVector, Reductions) {
  for (const char* t : kIntTypes) {
    for (const char* op : {"add", "multiply", "maximum", "minimum", "and", "or", "xor"}) {
      const std::string reducer = absl::StrCat(
          "HloModule m\nsum {\n  a = ", t, "[] parameter(0)\n  b = ", t,
          "[] parameter(1)\n  ROOT c = ", t, "[] ", op, "(a, b)\n}\n");
      for (const auto& [dims, reduced, result] :
           std::vector<std::tuple<const char*, const char*, const char*>>{
               {"[9,67]", "0", "[67]"}, {"[9,67]", "1", "[9]"}, {"[3,5,70]", "0,2", "[5]"},
               {"[0,40]", "0", "[40]"}}) {
        std::string hlo = reducer + "ENTRY e {\n";
        absl::StrAppend(&hlo, "  p0 = ", t, dims, " parameter(0)\n  z = ", t,
                        "[] parameter(1)\n  ROOT r = ", t, result,
                        " reduce(p0, z), dimensions={", reduced, "}, to_apply=sum\n}\n");
        // Across outputs (reducing dimension 0): vector columns; along the
        // innermost reduced dimension: vector rows (exact for integers).
        Check(hlo, std::string(dims) != "[0,40]");
      }
    }
  }
}

// Floats and integers of one width in one vector program.
TEST_P(JitIntVector, MixedFloatAndInteger) {
  for (const auto& [f, i] : std::vector<std::pair<const char*, const char*>>{
           {"f32", "s32"}, {"f32", "u32"}, {"f64", "s64"}, {"f64", "u64"}}) {
    ForDims([&](const std::string& d) {
      const std::string fs = absl::StrCat(f, d);
      const std::string is = absl::StrCat(i, d);
      return ModuleText({is, is, fs, fs},
                    {absl::StrCat("c = pred", d, " compare(p0, p1), direction=LT"),
                     absl::StrCat("r = ", fs, " select(c, p2, p3)")});
    });
    // |x| through the bits: bitcast, and, bitcast back.
    ForDims([&](const std::string& d) {
      const std::string fs = absl::StrCat(f, d);
      const std::string is = absl::StrCat(i, d);
      const char* mask = std::string(f) == "f32" ? "2147483647" : "9223372036854775807";
      return ModuleText({fs}, {absl::StrCat("b = ", is, " bitcast-convert(p0)"),
                           absl::StrCat("k = ", i, "[] constant(", mask, ")"),
                           absl::StrCat("kb = ", is, " broadcast(k), dimensions={}"),
                           absl::StrCat("a = ", is, " and(b, kb)"),
                           absl::StrCat("r = ", fs, " bitcast-convert(a)")});
    });
  }
  // An f32 maximum of converted s32 (row; a float sum would be
  // reassociated), a float compare selecting integers.
  Check(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] maximum(a, b)
}
ENTRY e {
  p0 = s32[9,67] parameter(0)
  c = f32[9,67] convert(p0)
  z = f32[] constant(0)
  ROOT r = f32[9] reduce(c, z), dimensions={1}, to_apply=add
}
)",
        true);
  Check(ModuleText({"f32[67]", "f32[67]", "s32[67]", "s32[67]"},
               {"c = pred[67] compare(p0, p1), direction=GE",
                "r = s32[67] select(c, p2, p3)"}),
        true);
}

// A row reduction whose body reads a value fixed per output element (a
// broadcast row factor), an integer reduce with a non-identity init.
TEST_P(JitIntVector, ReductionWithRowInvariant) {
  for (const char* t : kIntTypes) {
    std::string hlo = absl::StrCat("HloModule m\nsum {\n  a = ", t, "[] parameter(0)\n  b = ", t,
                                   "[] parameter(1)\n  ROOT c = ", t, "[] add(a, b)\n}\n");
    absl::StrAppend(&hlo, "ENTRY e {\n  p0 = ", t, "[9,67] parameter(0)\n  p1 = ", t,
                    "[9] parameter(1)\n  z = ", t, "[] parameter(2)\n  f = ", t,
                    "[9,67] broadcast(p1), dimensions={0}\n  m = ", t,
                    "[9,67] multiply(p0, f)\n  ROOT r = ", t,
                    "[9] reduce(m, z), dimensions={1}, to_apply=sum\n}\n");
    Check(hlo, true, 3);
  }
}

// Every f16 bit pattern to f32, and f32 patterns with every top-20-bit
// combination (exact, halfway and just-above-halfway cases of every
// exponent, subnormals, overflow, NaN) to f16: the inline code on SSE4.1,
// F16C on AVX2.
TEST_P(JitIntVector, F16Conversions) {
  Check(ModuleText({}, {"i = u16[65536] iota(), iota_dimension=0",
                    "h = f16[65536] bitcast-convert(i)", "r = f32[65536] convert(h)"}),
        false, 1);
  for (const char* low : {"0", "1", "4095"}) {
    Check(ModuleText({}, {"i = u32[1048576] iota(), iota_dimension=0",
                      "k = u32[] constant(12)", "kb = u32[1048576] broadcast(k), dimensions={}",
                      "s = u32[1048576] shift-left(i, kb)",
                      absl::StrCat("l = u32[] constant(", low, ")"),
                      "lb = u32[1048576] broadcast(l), dimensions={}",
                      "o = u32[1048576] or(s, lb)",
                      "f = f32[1048576] bitcast-convert(o)", "r = f16[1048576] convert(f)"}),
          false, 1);
  }
  // Arithmetic in f16 rounds after every operation.
  Check(ModuleText({"f16[67]", "f16[67]"}, {"r = f16[67] multiply(p0, p1)"}), false, 3);
}

INSTANTIATE_TEST_SUITE_P(Isas, JitIntVector, ::testing::ValuesIn(HostIsas()),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(IsaName(info.param));
                         });

}  // namespace
}  // namespace xjit::jit::testing
