// Elementwise loop nests whose innermost loop is short run as one merged loop
// (jit/kernel/fusion_emitter.cc, WithMergedLoops), and integer arithmetic on
// iota values is index arithmetic (element_emitter.h, BinaryIndexValue):
// JAX's threefry counters (a u64 iota times a constant plus an iota, shifted
// right by 32, converted to u32) and its rounds over u32[n, 4] arrays, which
// ran 1 lane before. Against the evaluator on every instruction set the host
// has: inner extents 1 to 63 (vector tails), size-0 and size-1 dimensions,
// rank 3, another layout, broadcasts and iotas that keep the loops apart,
// every lane width, f32 edge values (NaN, Inf, -0 from RandomLiteral), and
// counters whose arithmetic would wrap (left to the value code), and, with
// gathers, broadcasts along a row shorter than a vector and strided loads. On
// x86-64 the merged forms must vectorise.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "jit/kernel/lane_positions.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

class JitMergedLoops : public ::testing::TestWithParam<Isa> {
 protected:
  // Compares `hlo` with the evaluator on two seeds; with `vector` on x86-64,
  // every kernel must be vectorised.
  void Check(const std::string& hlo, bool vector) {
    const CompileReport report = ExpectMatchesEvaluatorOnSeeds(hlo, GetParam());
    if (!vector || GetParam() == Isa::kNeon || GetParam() == Isa::kAuto) return;
    ASSERT_FALSE(report.kernels.empty()) << hlo;
    for (const KernelInfo& kernel : report.kernels) {
      EXPECT_GT(kernel.vector_lanes, 1) << kernel.name << " in\n" << hlo << "\n" << kernel.program;
    }
  }
};

std::string Dims(int64_t rows, int64_t cols) { return absl::StrCat("[", rows, ",", cols, "]"); }

// One threefry-style round on u32[rows, cols]: add, rotate left by a
// loaded amount (shift left, shift right by 32 minus it, or), xor.
std::string Round(int64_t rows, int64_t cols) {
  const std::string u = "u32" + Dims(rows, cols);
  return ModuleText({u, u, "u32[]"},
                    {absl::StrCat("s = ", u, " add(p0, p1)"),
                     absl::StrCat("r = ", u, " broadcast(p2), dimensions={}"),
                     "k = u32[] constant(32)", "m = u32[] subtract(k, p2)",
                     absl::StrCat("mb = ", u, " broadcast(m), dimensions={}"),
                     absl::StrCat("l = ", u, " shift-left(p1, r)"),
                     absl::StrCat("h = ", u, " shift-right-logical(p1, mb)"),
                     absl::StrCat("o = ", u, " or(l, h)"),
                     absl::StrCat("x = ", u, " xor(s, o)"),
                     absl::StrCat("y = ", u, " add(s, x)")});
}

TEST_P(JitMergedLoops, ThreefryRoundsOverShortRows) {
  for (int64_t cols : {1, 2, 3, 4, 5, 7, 16, 33, 63}) {
    for (int64_t rows : {0, 1, 3, 37}) {
      SCOPED_TRACE(Dims(rows, cols));
      Check(Round(rows, cols), rows * cols >= 64);
    }
  }
}

// JAX's iota_2x32_shape: a u64 counter over [rows, cols] split into its
// high and low u32 words, then the bits made a float in [1, 2) as
// jax.random.uniform does.
std::string Counter(int64_t rows, int64_t cols, const std::string& scale,
                    const std::string& shift) {
  const std::string u64 = "u64" + Dims(rows, cols);
  const std::string u32 = "u32" + Dims(rows, cols);
  const std::string f32 = "f32" + Dims(rows, cols);
  return ModuleText(
      {u32},
      {absl::StrCat("i = u64[", rows, "] iota(), iota_dimension=0"),
       absl::StrCat("ib = ", u64, " broadcast(i), dimensions={0}"),
       absl::StrCat("c = u64[] constant(", scale, ")"),
       absl::StrCat("cb = ", u64, " broadcast(c), dimensions={}"),
       absl::StrCat("m = ", u64, " multiply(ib, cb)"),
       absl::StrCat("j = u64[", cols, "] iota(), iota_dimension=0"),
       absl::StrCat("jb = ", u64, " broadcast(j), dimensions={1}"),
       absl::StrCat("n = ", u64, " add(m, jb)"),
       absl::StrCat("t = u64[] constant(", shift, ")"),
       absl::StrCat("tb = ", u64, " broadcast(t), dimensions={}"),
       absl::StrCat("hi64 = ", u64, " shift-right-logical(n, tb)"),
       absl::StrCat("hi = ", u32, " convert(hi64)"), absl::StrCat("lo = ", u32, " convert(n)"),
       absl::StrCat("x = ", u32, " xor(hi, lo)"), absl::StrCat("y = ", u32, " add(x, p0)"),
       "nine = u32[] constant(9)", absl::StrCat("nb = ", u32, " broadcast(nine), dimensions={}"),
       absl::StrCat("z = ", u32, " shift-right-logical(y, nb)"),
       "one = u32[] constant(1065353216)",
       absl::StrCat("ob = ", u32, " broadcast(one), dimensions={}"),
       absl::StrCat("w = ", u32, " or(z, ob)"), absl::StrCat("f = ", f32,
                                                              " bitcast-convert(w)")});
}

TEST_P(JitMergedLoops, IotaCountersBecomeIndexArithmetic) {
  for (int64_t cols : {1, 4, 5, 17}) {
    for (int64_t rows : {0, 1, 16, 45}) {
      SCOPED_TRACE(Dims(rows, cols));
      // The counter is the merged loop's index: vectorised.
      Check(Counter(rows, cols, std::to_string(cols), "32"), rows * cols >= 64);
      // Other scales and shifts keep value arithmetic (or a non-affine
      // index): still the evaluator's bits, wrapping included.
      Check(Counter(rows, cols, "3", "32"), false);
      Check(Counter(rows, cols, std::to_string(cols), "2"), false);
      Check(Counter(rows, cols, "4611686018427387904", "32"), false);  // 2^62: wraps.
      Check(Counter(rows, cols, "18446744073709551615", "63"), false);
    }
  }
}

TEST_P(JitMergedLoops, NarrowCountersThatWrap) {
  // s32 and u32 iotas times constants past 2^31, converted to u8 and s64.
  for (const char* type : {"s32", "u32"}) {
    const std::string t = absl::StrCat(type, "[40,3]");
    Check(ModuleText({"s64[40,3]"},
                     {absl::StrCat("i = ", t, " iota(), iota_dimension=0"),
                      absl::StrCat("c = ", type, "[] constant(100000000)"),
                      absl::StrCat("cb = ", t, " broadcast(c), dimensions={}"),
                      absl::StrCat("m = ", t, " multiply(i, cb)"),
                      absl::StrCat("j = ", t, " iota(), iota_dimension=1"),
                      absl::StrCat("n = ", t, " add(m, j)"), "b = u8[40,3] convert(n)",
                      "w = s64[40,3] convert(b)", "v = s64[40,3] convert(n)",
                      "x = s64[40,3] add(w, v)", "y = s64[40,3] add(x, p0)"}),
          false);
  }
}

TEST_P(JitMergedLoops, EveryLaneWidth) {
  for (const std::string type : {"s8", "u16", "s32", "u64", "f32", "f64", "bf16", "pred"}) {
    for (const std::string& dims : {std::string("[50,3]"), std::string("[7,1,5]"),
                                    std::string("[0,4]"), std::string("[1,1]"),
                                    std::string("[3,4,5]")}) {
      SCOPED_TRACE(type + dims);
      const std::string s = type + dims;
      const std::string op = type == "pred" ? "xor" : "maximum";
      Check(ModuleText({s, s}, {absl::StrCat("r = ", s, " ", op, "(p0, p1)")}), false);
    }
  }
  // f32 edge values through arithmetic, merged and vectorised.
  const std::string s = "f32[31,5]";
  Check(ModuleText({s, s, "f32[]"},
                   {absl::StrCat("a = ", s, " multiply(p0, p1)"),
                    absl::StrCat("b = ", s, " broadcast(p2), dimensions={}"),
                    absl::StrCat("c = ", s, " subtract(a, b)"),
                    absl::StrCat("d = ", s, " minimum(c, p0)")}),
        true);
}

TEST_P(JitMergedLoops, AccessesThatKeepLoopsApart) {
  // A row vector broadcast along rows, a column vector along columns, an
  // iota of either dimension, an operand in the other layout, a slice and a
  // reverse: the merged positions are not affine, so the loops stay apart.
  const std::string s = "f32[37,5]";
  Check(ModuleText({s, "f32[5]"}, {absl::StrCat("b = ", s, " broadcast(p1), dimensions={1}"),
                                   absl::StrCat("r = ", s, " add(p0, b)")}),
        false);
  Check(ModuleText({s, "f32[37]"}, {absl::StrCat("b = ", s, " broadcast(p1), dimensions={0}"),
                                    absl::StrCat("r = ", s, " add(p0, b)")}),
        false);
  for (int dim : {0, 1}) {
    Check(ModuleText({"s32[37,5]"},
                     {absl::StrCat("i = s32[37,5] iota(), iota_dimension=", dim),
                      "r = s32[37,5] add(p0, i)"}),
          false);
  }
  Check(ModuleText({"f32[37,5]{0,1}", s}, {absl::StrCat("r = ", s, " add(p0, p1)")}), false);
  Check(ModuleText({"f32[37,8]"}, {"a = f32[37,5] slice(p0), slice={[0:37], [2:7]}",
                                   "r = f32[37,5] negate(a)"}),
        false);
  Check(ModuleText({s}, {absl::StrCat("a = ", s, " reverse(p0), dimensions={1}"),
                         absl::StrCat("r = ", s, " abs(a)")}),
        false);
  // A reshape that only merges dimensions stays affine: merged.
  Check(ModuleText({"f32[37,5]"}, {"a = f32[185] reshape(p0)", "b = f32[185] sqrt(a)",
                                   "r = f32[37,5] reshape(b)"}),
        true);
}

// With gathers (AVX2, AVX-512), a row shorter than a vector is merged even
// where a broadcast along it makes positions non-affine: a per-row key
// broadcast along [rows, 2] (dimensions={0}: position m / 2) or a per-column
// one (dimensions={1}: m % 2), their lanes gathered at positions computed
// lane by lane (jit/kernel/lane_positions.h; a width that is not a power of
// two divides by a multiply-high). SSE4.1 (no gathers) keeps the loops
// apart; both must still match the evaluator.
TEST_P(JitMergedLoops, BroadcastsAlongShortRowsGather) {
  const bool gathers = GetParam() == Isa::kAvx2 || GetParam() == Isa::kAvx512;
  for (const std::string type : {"u32", "f32", "s64", "f64"}) {
    for (int64_t cols : {2, 3, 4, 5, 7}) {
      for (int64_t rows : {0, 1, 5, 37, 300}) {
        for (int dim : {0, 1}) {
          SCOPED_TRACE(absl::StrCat(type, Dims(rows, cols), " dimensions={", dim, "}"));
          const std::string s = type + Dims(rows, cols);
          const std::string key = absl::StrCat(type, "[", dim == 0 ? rows : cols, "]");
          const std::string op = type[0] == 'f' ? "multiply" : "xor";
          const bool vector = gathers && rows * cols >= 64;
          Check(ModuleText({s, key}, {absl::StrCat("b = ", s, " broadcast(p1), dimensions={", dim,
                                                   "}"),
                                      absl::StrCat("x = ", s, " ", op, "(p0, b)"),
                                      absl::StrCat("r = ", s, " add(x, b)")}),
                vector);
        }
      }
    }
  }
}

// The division by a multiply-high is exact over the whole range it is used
// for: merged loops of up to 2^31 elements would need inputs too large for a
// test, so the rows' count varies the quotient's range as far as a test
// affords, and the divisors cover each shift (3: 33, 5 and 7: 34, 6).
TEST_P(JitMergedLoops, NonPowerOfTwoRowsEveryTail) {
  const bool gathers = GetParam() == Isa::kAvx2 || GetParam() == Isa::kAvx512;
  for (int64_t cols : {3, 5, 6, 7}) {
    for (int64_t rows = 1; rows <= 40; rows += 3) {
      SCOPED_TRACE(Dims(rows, cols));
      const std::string s = "f32" + Dims(rows, cols);
      Check(ModuleText({s, absl::StrCat("f32[", rows, "]"), absl::StrCat("f32[", cols, "]")},
                       {absl::StrCat("a = ", s, " broadcast(p1), dimensions={0}"),
                        absl::StrCat("b = ", s, " broadcast(p2), dimensions={1}"),
                        absl::StrCat("x = ", s, " multiply(p0, a)"),
                        absl::StrCat("r = ", s, " subtract(x, b)")}),
            gathers && rows * cols >= 64);
    }
  }
}

// An iota along the merged dimensions is the merged position's quotient or
// remainder itself, as a 32-bit integer (JAX's categorical over 5 classes
// compares an s32[n, 5] iota); a pred broadcast along a short row, or read
// at a stride, is a byte gathered within its aligned dword (a sampler's
// per-chain acceptance selecting along [n, 2]). Other lane widths (f64
// beside a gathered pred, u8 lanes) keep scalar code; all must match the
// evaluator.
TEST_P(JitMergedLoops, IotasAndPredsAlongShortRowsGather) {
  const bool gathers = GetParam() == Isa::kAvx2 || GetParam() == Isa::kAvx512;
  for (int64_t cols : {2, 5}) {
    for (int64_t rows : {0, 1, 13, 300}) {
      const bool vector = gathers && rows * cols >= 64;
      for (const std::string type : {"s32", "u32"}) {
        for (int dim : {0, 1}) {
          SCOPED_TRACE(absl::StrCat(type, Dims(rows, cols), " iota ", dim));
          const std::string s = type + Dims(rows, cols);
          Check(ModuleText({s}, {absl::StrCat("i = ", s, " iota(), iota_dimension=", dim),
                                 absl::StrCat("r = ", s, " multiply(p0, i)")}),
                vector);
        }
      }
      for (const std::string type : {"f32", "s32", "f64"}) {
        for (int dim : {0, 1}) {
          SCOPED_TRACE(absl::StrCat(type, Dims(rows, cols), " pred along ", dim));
          const std::string s = type + Dims(rows, cols);
          const std::string p = "pred" + Dims(rows, cols);
          const std::string key = absl::StrCat("pred[", dim == 0 ? rows : cols, "]");
          Check(ModuleText({s, s, key},
                           {absl::StrCat("c = ", p, " broadcast(p2), dimensions={", dim, "}"),
                            absl::StrCat("r = ", s, " select(c, p0, p1)")}),
                vector && type != "f64");
        }
      }
    }
  }
  // Strided pred reads (a column of a [n, 3] mask), every tail length, and
  // a pred result (u8 lanes: scalar).
  for (int64_t n : {0, 1, 15, 16, 17, 100}) {
    SCOPED_TRACE(absl::StrCat("pred[", n, "] stride 3"));
    const std::string f = absl::StrCat("f32[", n, "]");
    const std::string p = absl::StrCat("pred[", n, "]");
    const std::string mask = absl::StrCat("pred[", 3 * n + 2, "]");
    Check(ModuleText({mask, f},
                     {absl::StrCat("c = ", p, " slice(p0), slice={[1:", 3 * n + 1, ":3]}"),
                      "z = f32[] constant(0)", absl::StrCat("zb = ", f, " broadcast(z), dimensions={}"),
                      absl::StrCat("r = ", f, " select(c, p1, zb)")}),
          gathers && n >= 16);
    Check(ModuleText({mask, p},
                     {absl::StrCat("c = ", p, " slice(p0), slice={[2:", 3 * n + 2, ":3]}"),
                      absl::StrCat("r = ", p, " xor(c, p1)")}),
          false);
  }
}

// A load whose position moves by a constant other than 0 or 1 (a strided
// slice, a reverse) outside tiled loops: a gather at positions computed per
// lane where the instruction set has one, scalar code on SSE4.1.
TEST_P(JitMergedLoops, StridedLoadsGather) {
  const bool gathers = GetParam() == Isa::kAvx2 || GetParam() == Isa::kAvx512;
  for (const std::string type : {"s32", "f32", "u64", "f64"}) {
    for (int64_t n : {0, 1, 7, 100, 257}) {
      for (int64_t stride : {2, 3}) {
        SCOPED_TRACE(absl::StrCat(type, "[", n, "] stride ", stride));
        const std::string in = absl::StrCat(type, "[", n * stride, "]");
        const std::string out = absl::StrCat(type, "[", n, "]");
        Check(ModuleText({in, out},
                         {absl::StrCat("a = ", out, " slice(p0), slice={[0:", n * stride, ":",
                                       stride, "]}"),
                          absl::StrCat("r = ", out, " add(a, p1)")}),
              gathers && n >= 16);
      }
      SCOPED_TRACE(absl::StrCat(type, "[", n, "] reversed"));
      const std::string s = absl::StrCat(type, "[", n, "]");
      Check(ModuleText({s, s}, {absl::StrCat("a = ", s, " reverse(p0), dimensions={0}"),
                                absl::StrCat("r = ", s, " subtract(a, p1)")}),
            gathers && n >= 16);
    }
  }
}

// The multiply-high form of a division by a constant (LaneDivisor) against
// `/` for every divisor below 2^16 that is not a power of two and a few up
// to 2^31 - 1: dividends at each multiple's edges near 0 and near 2^31 - 1,
// and spread between.
TEST(LaneDivisor, ExactBelow2To31) {
  std::vector<int64_t> divisors;
  for (int64_t d = 3; d < (1 << 16); ++d) {
    if ((d & (d - 1)) != 0) divisors.push_back(d);
  }
  for (int64_t d : {100003, 1 << 20 | 1, 123456789, 0x7ffffffe, 0x7fffffff}) divisors.push_back(d);
  constexpr int64_t kMax = 0x7fffffff;
  int wrong = 0;
  for (int64_t d : divisors) {
    const LaneDivisor div = LaneDivisorFor(d);
    auto check = [&](int64_t x) {
      if (x < 0 || x > kMax) return;
      const uint64_t q = (static_cast<uint64_t>(x) * div.multiplier) >> div.shift;
      if (static_cast<int64_t>(q) != x / d && ++wrong <= 5) {
        ADD_FAILURE() << x << " / " << d << ": " << q << ", expected " << x / d;
      }
    };
    for (int64_t x : {int64_t{0}, d - 1, d, d + 1, 2 * d - 1, kMax, kMax - 1}) check(x);
    const int64_t top = kMax / d * d;  // The last multiple of d.
    for (int64_t x : {top - d - 1, top - d, top - 1, top, top + d - 1}) check(x);
    for (int64_t x = 12345; x <= kMax; x += 99991 * 31) check(x);
  }
  EXPECT_EQ(wrong, 0);
}

INSTANTIATE_TEST_SUITE_P(Isas, JitMergedLoops, ::testing::ValuesIn(HostIsas()),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(IsaName(info.param));
                         });

}  // namespace
}  // namespace xjit::jit::testing
