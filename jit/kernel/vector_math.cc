// Vector math expansions (see vector_math.h).
//
// Every function is written once, for f32 and f64 alike, as a sequence of
// kernel-program operations built by MathBuilder. The common pieces:
//   - 2^n for an integer-valued float n in the normal exponent range:
//     n + (1.5 * 2^p + bias) puts n + bias in the low mantissa bits; shifting
//     the bits left by p moves it into the exponent field (Exp2i);
//   - the exponent of a float as a float: its bits shifted right by p, or-ed
//     into 2^p, minus 2^p + bias (all exact);
//   - exp: n = round(x / ln2), r = x - n ln2 (Cody-Waite, ln2 in two parts,
//     the first short enough that n * part is exact), e^r = 1 + r + r^2 Q(r),
//     scaled by 2^n in two steps so overflow and subnormal results round
//     once;
//   - log: m in [sqrt(1/2), sqrt(2)) from the bits, f = m - 1, s = f/(2+f),
//     log(1+f) = f - (f^2/2 - s (f^2/2 + s^2 P(s^2)));
//   - double-word arithmetic (TwoSum, TwoProduct by FMA or Dekker's split)
//     where a result needs more than working precision: pow's logarithm and
//     the reduction of sin/cos/tan arguments by pi/2.
// Special values are patched in with selects at the end of each function.
#include "jit/kernel/vector_math.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <map>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "ir/status_macros.h"
#include "jit/kernel/vector_math_coefficients.h"

namespace xjit::jit {
namespace {

namespace vc = vector_math_coefficients;

// Per-type constants.
struct TypeInfo {
  int p = 23;        // Stored mantissa bits.
  int bias = 127;
  int width = 32;
  double min_normal = 0;
  double ln2[2];
  double pio2[4];
  double pi[2];
  double half_pi[2];
  double quarter_pi[2];
  double two_thirds[2];
  double log2e;
  double two_over_pi[2];
  double cbrt2;
  double cbrt4;
  double tan_pi_8;
  absl::Span<const double> exp_q, log_p, log_p2, tanh_t, sin_s, cos_c, atan_a, erf_small,
      cbrt_start;
};

TypeInfo InfoFor(bool f64) {
  TypeInfo t;
  if (!f64) {
    t.p = 23;
    t.bias = 127;
    t.width = 32;
    t.min_normal = std::ldexp(1.0, -126);
    t.ln2[0] = vc::kLn2Part0_f32;
    t.ln2[1] = vc::kLn2Part1_f32;
    t.pio2[0] = vc::kPiOver2Part0_f32;
    t.pio2[1] = vc::kPiOver2Part1_f32;
    t.pio2[2] = vc::kPiOver2Part2_f32;
    t.pio2[3] = vc::kPiOver2Part3_f32;
    t.pi[0] = vc::kPiPart0_f32;
    t.pi[1] = vc::kPiPart1_f32;
    t.half_pi[0] = vc::kHalfPiPart0_f32;
    t.half_pi[1] = vc::kHalfPiPart1_f32;
    t.quarter_pi[0] = vc::kQuarterPiPart0_f32;
    t.quarter_pi[1] = vc::kQuarterPiPart1_f32;
    t.two_thirds[0] = vc::kTwoThirdsPart0_f32;
    t.two_thirds[1] = vc::kTwoThirdsPart1_f32;
    t.log2e = vc::kLog2e_f32;
    t.two_over_pi[0] = vc::kTwoOverPiPart0_f32;
    t.two_over_pi[1] = vc::kTwoOverPiPart1_f32;
    t.cbrt2 = vc::kCbrt2_f32;
    t.cbrt4 = vc::kCbrt4_f32;
    t.tan_pi_8 = vc::kTanPiOver8_f32;
    t.exp_q = vc::kExpQ_f32;
    t.log_p = vc::kLogP_f32;
    t.log_p2 = vc::kLogP2_f32;
    t.tanh_t = vc::kTanhT_f32;
    t.sin_s = vc::kSinS_f32;
    t.cos_c = vc::kCosC_f32;
    t.atan_a = vc::kAtanA_f32;
    t.erf_small = vc::kErfSmall_f32;
    t.cbrt_start = vc::kCbrtStart_f32;
  } else {
    t.p = 52;
    t.bias = 1023;
    t.width = 64;
    t.min_normal = std::ldexp(1.0, -1022);
    t.ln2[0] = vc::kLn2Part0_f64;
    t.ln2[1] = vc::kLn2Part1_f64;
    t.pio2[0] = vc::kPiOver2Part0_f64;
    t.pio2[1] = vc::kPiOver2Part1_f64;
    t.pio2[2] = vc::kPiOver2Part2_f64;
    t.pio2[3] = vc::kPiOver2Part3_f64;
    t.pi[0] = vc::kPiPart0_f64;
    t.pi[1] = vc::kPiPart1_f64;
    t.half_pi[0] = vc::kHalfPiPart0_f64;
    t.half_pi[1] = vc::kHalfPiPart1_f64;
    t.quarter_pi[0] = vc::kQuarterPiPart0_f64;
    t.quarter_pi[1] = vc::kQuarterPiPart1_f64;
    t.two_thirds[0] = vc::kTwoThirdsPart0_f64;
    t.two_thirds[1] = vc::kTwoThirdsPart1_f64;
    t.log2e = vc::kLog2e_f64;
    t.two_over_pi[0] = vc::kTwoOverPiPart0_f64;
    t.two_over_pi[1] = vc::kTwoOverPiPart1_f64;
    t.cbrt2 = vc::kCbrt2_f64;
    t.cbrt4 = vc::kCbrt4_f64;
    t.tan_pi_8 = vc::kTanPiOver8_f64;
    t.exp_q = vc::kExpQ_f64;
    t.log_p = vc::kLogP_f64;
    t.log_p2 = vc::kLogP2_f64;
    t.tanh_t = vc::kTanhT_f64;
    t.sin_s = vc::kSinS_f64;
    t.cos_c = vc::kCosC_f64;
    t.atan_a = vc::kAtanA_f64;
    t.erf_small = vc::kErfSmall_f64;
    t.cbrt_start = vc::kCbrtStart_f64;
  }
  return t;
}

// A value carried as an unevaluated sum hi + lo, |lo| <= ulp(hi) / 2.
struct DW {
  int hi;
  int lo;
};

using Key = std::tuple<KOpKind, ElementType, ElementType, Opcode, ComparisonDirection,
                       ComparisonType, int, int, int, int64_t>;

// Appends operations to the rewritten program, sharing identical ones.
class MathBuilder {
 public:
  MathBuilder(std::vector<KOp>* ops, std::map<Key, int>* cse, bool fma, bool native_scale)
      : ops_(*ops), cse_(*cse), fma_(fma), native_scale_(native_scale) {}

  int Add(const KOp& op) {
    if (op.kind == KOpKind::kStore) {
      ops_.push_back(op);
      return static_cast<int>(ops_.size()) - 1;
    }
    const Key key{op.kind, op.type,  op.operand_type, op.opcode, op.direction,
                  op.comparison, op.a, op.b, op.c, op.imm};
    auto it = cse_.find(key);
    if (it != cse_.end()) return it->second;
    ops_.push_back(op);
    const int id = static_cast<int>(ops_.size()) - 1;
    cse_[key] = id;
    return id;
  }

  // Everything below works on values of type_ (f32 or f64).
  void SetType(ElementType type) {
    type_ = type;
    f64_ = type == ElementType::kF64;
    info_ = InfoFor(f64_);
  }
  const TypeInfo& info() const { return info_; }
  bool f64() const { return f64_; }

  // One operation; opcode kAdd (KOp's default) where the kind has none.
  int Make(KOpKind kind, ElementType type, ElementType operand_type, Opcode opcode, int a,
           int b = -1, int c = -1, int64_t imm = 0) {
    KOp op;
    op.kind = kind;
    op.type = type;
    op.operand_type = operand_type;
    op.opcode = opcode;
    op.a = a;
    op.b = b;
    op.c = c;
    op.imm = imm;
    return Add(op);
  }
  // The same on values of type_.
  int Make(KOpKind kind, Opcode opcode, int a, int b = -1, int c = -1, int64_t imm = 0) {
    return Make(kind, type_, type_, opcode, a, b, c, imm);
  }

  int Convert(int x, ElementType from, ElementType to) {
    return Make(KOpKind::kConvert, to, from, Opcode::kAdd, x);
  }

  // ---- Constants ----
  int C(double v) { return Bits(BitsOf(v)); }
  int Bits(uint64_t bits) {
    return Make(KOpKind::kConst, Opcode::kAdd, -1, -1, -1, static_cast<int64_t>(bits));
  }
  int Inf() { return C(HUGE_VAL); }
  int NaN() { return Bits(f64_ ? 0x7FF8000000000000ull : 0x7FC00000u); }
  uint64_t SignMask() const { return f64_ ? 0x8000000000000000ull : 0x80000000u; }
  uint64_t MantissaMask() const { return (uint64_t{1} << info_.p) - 1; }
  uint64_t BitsOf(double v) const {
    if (f64_) {
      uint64_t b;
      std::memcpy(&b, &v, 8);
      return b;
    }
    const float f = static_cast<float>(v);
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
  }

  // ---- Arithmetic ----
  int Binary(Opcode opcode, int a, int b) { return Make(KOpKind::kBinary, opcode, a, b); }
  int Unary(Opcode opcode, int a) { return Make(KOpKind::kUnary, opcode, a); }
  int Sum(int a, int b) { return Binary(Opcode::kAdd, a, b); }
  int Sub(int a, int b) { return Binary(Opcode::kSubtract, a, b); }
  int Mul(int a, int b) { return Binary(Opcode::kMultiply, a, b); }
  int Div(int a, int b) { return Binary(Opcode::kDivide, a, b); }
  int Min(int a, int b) { return Binary(Opcode::kMinimum, a, b); }
  int Max(int a, int b) { return Binary(Opcode::kMaximum, a, b); }
  int Neg(int a) { return Unary(Opcode::kNegate, a); }
  int Abs(int a) { return Unary(Opcode::kAbs, a); }
  int Sqrt(int a) { return Unary(Opcode::kSqrt, a); }
  int Floor(int a) { return Unary(Opcode::kFloor, a); }
  int Round(int a) { return Unary(Opcode::kRoundNearestEven, a); }
  // a * b + c: one rounding with a native FMA, two otherwise.
  int Fma(int a, int b, int c) {
    if (!fma_) return Sum(Mul(a, b), c);
    return Make(KOpKind::kFma, Opcode::kAdd, a, b, c);
  }
  int Clamp(int lo, int x, int hi) { return Make(KOpKind::kClamp, Opcode::kAdd, lo, x, hi); }
  // min/max/clamp against constant bounds (never NaN): a compare and a
  // select each, NaN x kept (the compare is false), zero signs not ordered.
  int MinC(int x, double hi) { return Sel(Gt(x, C(hi)), C(hi), x); }
  int MaxC(int x, double lo) { return Sel(Lt(x, C(lo)), C(lo), x); }
  int ClampC(double lo, int x, double hi) { return MinC(MaxC(x, lo), hi); }
  // The polynomial c at x by Estrin's scheme (pairs, then pairs of pairs):
  // a shorter dependency chain than Horner's; x2 = x * x.
  int Estrin(absl::Span<const double> c, int x, int x2) {
    std::vector<int> terms;
    for (size_t i = 0; i < c.size(); i += 2) {
      terms.push_back(i + 1 < c.size() ? Fma(C(c[i + 1]), x, C(c[i])) : C(c[i]));
    }
    int power = x2;
    while (terms.size() > 1) {
      std::vector<int> next;
      for (size_t i = 0; i < terms.size(); i += 2) {
        next.push_back(i + 1 < terms.size() ? Fma(terms[i + 1], power, terms[i]) : terms[i]);
      }
      terms = std::move(next);
      if (terms.size() > 1) power = Mul(power, power);
    }
    return terms[0];
  }
  int Horner(absl::Span<const double> c, int x) {
    int r = C(c.back());
    for (size_t i = c.size() - 1; i-- > 0;) r = Fma(r, x, C(c[i]));
    return r;
  }

  // ---- Compare and select ----
  int Cmp(ComparisonDirection direction, int a, int b) {
    KOp op;
    op.kind = KOpKind::kCompare;
    op.type = ElementType::kPred;
    op.operand_type = type_;
    op.direction = direction;
    op.comparison = ComparisonType::kFloat;
    op.a = a;
    op.b = b;
    return Add(op);
  }
  int Lt(int a, int b) { return Cmp(ComparisonDirection::kLt, a, b); }
  int Le(int a, int b) { return Cmp(ComparisonDirection::kLe, a, b); }
  int Gt(int a, int b) { return Cmp(ComparisonDirection::kGt, a, b); }
  int Ge(int a, int b) { return Cmp(ComparisonDirection::kGe, a, b); }
  int Eq(int a, int b) { return Cmp(ComparisonDirection::kEq, a, b); }
  int Ne(int a, int b) { return Cmp(ComparisonDirection::kNe, a, b); }
  int Sel(int p, int if_true, int if_false) {
    return Make(KOpKind::kSelect, type_, ElementType::kPred, Opcode::kAdd, p, if_true, if_false);
  }
  int PAnd(int p, int q) {
    return Make(KOpKind::kBinary, ElementType::kPred, ElementType::kPred, Opcode::kAnd, p, q);
  }

  // ---- Bits ----
  int BitOp(Opcode opcode, int a, int b) { return Make(KOpKind::kBits, opcode, a, b); }
  int And(int a, int b) { return BitOp(Opcode::kAnd, a, b); }
  int Or(int a, int b) { return BitOp(Opcode::kOr, a, b); }
  int Xor(int a, int b) { return BitOp(Opcode::kXor, a, b); }
  int IAdd(int a, int b) { return BitOp(Opcode::kAdd, a, b); }
  int Shift(Opcode opcode, int a, int amount) {
    return Make(KOpKind::kBitShift, opcode, a, -1, -1, amount);
  }
  int Shl(int a, int amount) { return Shift(Opcode::kShiftLeft, a, amount); }
  int Shr(int a, int amount) { return Shift(Opcode::kShiftRightLogical, a, amount); }
  int SignOf(int x) { return And(x, Bits(SignMask())); }
  // Whether x's sign bit is set (also for -0 and NaN with the bit set).
  int SignBitSet(int x) { return Lt(Or(SignOf(x), C(1)), C(0)); }

  // 2^(n + offset) for an integer-valued n with 2^(n + offset) normal (the
  // offset is folded into the constant).
  int Exp2i(int n, int offset = 0) {
    const double magic = 1.5 * std::ldexp(1.0, info_.p) + info_.bias + offset;
    return Shl(Sum(n, C(magic)), info_.p);
  }
  // v * 2^n in two exactly-representable steps (n up to twice the exponent
  // range): one rounding, also into the subnormals and to infinity.
  int Scale(int v, int n) {
    if (native_scale_) return Make(KOpKind::kScale, Opcode::kAdd, v, n);
    const int n1 = Floor(Mul(n, C(0.5)));
    const int n2 = Sub(n, n1);
    return Mul(Mul(v, Exp2i(n1)), Exp2i(n2));
  }
  // The biased exponent field of bits `field` (already shifted down) as an
  // unbiased float.
  int FieldToFloat(int field) {
    const double two_p = std::ldexp(1.0, info_.p);
    return Sub(Or(field, C(two_p)), C(two_p + info_.bias));
  }

  // ---- Double-word arithmetic ----
  DW TwoSum(int a, int b) {
    const int s = Sum(a, b);
    const int bb = Sub(s, a);
    const int e = Sum(Sub(a, Sub(s, bb)), Sub(b, bb));
    return {s, e};
  }
  // |a| >= |b| (or a == 0).
  DW FastTwoSum(int a, int b) {
    const int s = Sum(a, b);
    return {s, Sub(b, Sub(s, a))};
  }
  DW TwoProduct(int a, int b) {
    const int p = Mul(a, b);
    if (fma_) return {p, Fma(a, b, Neg(p))};
    // Dekker: split each factor into halves whose products are exact.
    const double splitter = std::ldexp(1.0, (info_.p + 2) / 2) + 1;
    auto split = [&](int v) {
      const int c = Mul(v, C(splitter));
      const int hi = Sub(c, Sub(c, v));
      return DW{hi, Sub(v, hi)};
    };
    const DW sa = split(a);
    const DW sb = split(b);
    int e = Sub(Mul(sa.hi, sb.hi), p);
    e = Sum(e, Mul(sa.hi, sb.lo));
    e = Sum(e, Mul(sa.lo, sb.hi));
    e = Sum(e, Mul(sa.lo, sb.lo));
    return {p, e};
  }
  DW DWMul(DW a, DW b) {
    DW p = TwoProduct(a.hi, b.hi);
    const int e = Sum(p.lo, Sum(Mul(a.hi, b.lo), Mul(a.lo, b.hi)));
    return FastTwoSum(p.hi, e);
  }
  DW DWAdd(DW a, DW b) {
    DW s = TwoSum(a.hi, b.hi);
    const int e = Sum(s.lo, Sum(a.lo, b.lo));
    return FastTwoSum(s.hi, e);
  }

  // ---- Shared kernels ----

  // e^x - 1 as 2^n (1 + p1) - 1 with |r| <= ln2/2: returns n and p1 =
  // expm1(r), for x clamped by the caller to where 2^n stays sane. `lo` (or
  // -1) is added to the reduced argument (for pow's double-word input).
  struct ExpParts {
    int n;
    int p1;
  };
  ExpParts ExpReduce(int x, int lo) {
    const TypeInfo& t = info_;
    const int n = Round(Mul(x, C(t.log2e)));
    int r = Fma(n, C(-t.ln2[0]), x);  // Exact: n * ln2[0] has few bits.
    r = Fma(n, C(-t.ln2[1]), r);
    if (lo >= 0) r = Sum(r, lo);
    const int q = Horner(t.exp_q, r);
    return {n, Fma(Mul(r, r), q, r)};
  }

  int Exp(int x) {
    const int xc = ClampC(f64_ ? -746.0 : -104.0, x, f64_ ? 710.0 : 89.0);
    const ExpParts e = ExpReduce(xc, -1);
    return Scale(Sum(e.p1, C(1)), e.n);
  }

  int Expm1(int x) {
    const double big = info_.p + 2;  // Beyond this 2^n - 1 rounds to 2^n.
    const int xc = ClampC(f64_ ? -60.0 : -30.0, x, f64_ ? 710.0 : 89.0);
    const ExpParts e = ExpReduce(xc, -1);
    const int s = Exp2i(MinC(e.n, big));
    const int small = Fma(s, e.p1, Sub(s, C(1)));
    const int large = Scale(Sum(e.p1, C(1)), e.n);
    int r = Sel(Gt(e.n, C(big)), large, small);
    return Sel(Eq(x, C(0)), x, r);  // Keeps -0.
  }

  // log(x) for finite x > 0 (any other input gives some value): the
  // exponent e and the parts of log(m), x = 2^e m, m in [sqrt(1/2), sqrt(2)).
  struct LogParts {
    int e;
    int f;      // m - 1, exact.
    int hfsq;   // f^2 / 2
    int s_term; // s (f^2/2 + R)
  };
  LogParts LogReduce(int x) {
    const TypeInfo& t = info_;
    const int p = t.p;
    const double subnormal_scale = std::ldexp(1.0, f64_ ? 54 : 24);
    const int sub = Lt(x, C(t.min_normal));
    const int xs = Sel(sub, Mul(x, C(subnormal_scale)), x);
    const int e_adjust = Sel(sub, C(f64_ ? -54.0 : -24.0), C(0));
    // With c = bits(sqrt(1/2)): bits + (bits(1) - c) carries into the
    // exponent exactly when the mantissa is >= sqrt(2)'s.
    const uint64_t c = BitsOf(std::sqrt(0.5));
    const int ix = IAdd(xs, Bits(BitsOf(1.0) - c));
    const int e = Sum(FieldToFloat(Shr(ix, p)), e_adjust);
    const int m = IAdd(And(ix, Bits(MantissaMask())), Bits(c));
    const int f = Sub(m, C(1));
    const int s = Div(f, Sum(f, C(2)));
    const int z = Mul(s, s);
    const int big_r = Mul(z, Horner(t.log_p, z));
    const int hfsq = Mul(C(0.5), Mul(f, f));
    return {e, f, hfsq, Mul(s, Sum(hfsq, big_r))};
  }
  // e ln2 + log(1+f) + extra (extra: -1 or a small correction).
  int LogCombine(const LogParts& l, int extra) {
    const TypeInfo& t = info_;
    // log(1+f) = f - (hfsq - s_term); the e ln2 low part joins the small
    // terms, e * ln2[0] is exact.
    int low = Sub(l.hfsq, Fma(l.e, C(t.ln2[1]), l.s_term));
    if (extra >= 0) low = Sub(low, extra);
    return Fma(l.e, C(t.ln2[0]), Sub(l.f, low));
  }

  int Log(int x) {
    int r = LogCombine(LogReduce(x), -1);
    r = Sel(Eq(x, Inf()), x, r);
    r = Sel(Eq(x, C(0)), Neg(Inf()), r);
    return Sel(Ge(x, C(0)), r, NaN());  // Negative or NaN.
  }

  int Log1p(int x) {
    const int u = Sum(x, C(1));
    // 1 + x = u + (x - (u - 1)) exactly; log(1+x) = log(u) + c, c = that / u.
    const int c = Div(Sub(x, Sub(u, C(1))), u);
    int r = LogCombine(LogReduce(u), c);
    const double tiny = std::ldexp(1.0, f64_ ? -54 : -25);
    r = Sel(Eq(x, Inf()), x, r);
    r = Sel(Eq(x, C(-1)), Neg(Inf()), r);
    r = Sel(Ge(x, C(-1)), r, NaN());
    return Sel(Lt(Abs(x), C(tiny)), x, r);  // Also keeps -0.
  }

  int Tanh(int x) {
    const TypeInfo& t = info_;
    const int a = Abs(x);
    const int w = Mul(a, a);
    const int small = Fma(Mul(a, w), Horner(t.tanh_t, w), a);
    // tanh(a) = em1 / (em1 + 2), em1 = expm1(2a), for a >= 0.55, where an
    // error in em1 is damped (by 1/4 at least). Arranged for a short
    // dependency chain (the kernels are latency-bound): 2a = n ln2 + 2r with
    // no doubling and, with FMA, one multiply-add with ln2/2 rounded to the
    // type (that rounding, times n, is damped by about 2/e^(2a)); the
    // polynomial by Estrin's scheme; beyond `limit`, where tanh rounds to 1,
    // the garbage of the unclamped reduction is replaced at the end.
    const double limit = f64_ ? 19.5 : 9.5;
    const int n = Round(Mul(a, C(2 * t.log2e)));
    int r;
    if (fma_) {
      r = Fma(n, C(-std::ldexp(f64_ ? vc::kLn2Part0_f64 + vc::kLn2Part1_f64
                                    : vc::kLn2Part0_f32 + vc::kLn2Part1_f32, -1)),
              a);
    } else {
      r = Fma(n, C(-0.5 * t.ln2[0]), a);  // Exact: ln2[0] has few bits.
      r = Fma(n, C(-0.5 * t.ln2[1]), r);
    }
    // expm1(2r) = 2r + (2r)^2 Q(2r) = 2r + r^2 Q2(r), Q2(r) = 4 Q(2r): the
    // coefficients scaled by powers of two, exactly.
    std::vector<double> q2(t.exp_q.begin(), t.exp_q.end());
    for (size_t i = 0; i < q2.size(); ++i) q2[i] = std::ldexp(q2[i], 2 + static_cast<int>(i));
    const int rr = Mul(r, r);
    const int p1 = Fma(rr, Estrin(q2, r, rr), Sum(r, r));
    const int s = Exp2i(n);
    // em1 + 2 from the rounded em1: the rounding errors of numerator and
    // denominator cancel where tanh is near 1.
    const int em1 = Fma(s, p1, Sub(s, C(1)));
    const int large = Div(em1, Sum(em1, C(2)));
    int y = Sel(Lt(a, C(0.55)), small, large);
    y = Sel(Gt(a, C(limit)), C(1), y);
    return Or(y, SignOf(x));
  }

  int Logistic(int x) {
    // e = e^-|x|: 1 / (1 + e) for x >= 0, e / (1 + e) for x < 0. -|x| is
    // x with the sign bit set; only the lower clamp is needed.
    const int xn = MaxC(Or(x, Bits(SignMask())), f64_ ? -746.0 : -104.0);
    const ExpParts ep = ExpReduce(xn, -1);
    // e = (1 + p1) 2^n, n in [-1076, 0]: scaled up by 2^k first (exact,
    // normal), then down by 2^-k (one rounding, also into the subnormals).
    const int k = f64_ ? 512 : 64;
    const int e = Mul(Mul(Sum(ep.p1, C(1)), Exp2i(ep.n, k)), C(std::ldexp(1.0, -k)));
    const int numerator = Sel(Lt(x, C(0)), e, C(1));
    // 1 + e = dh + dl exactly; q (1 - dl/dh) removes the rounding of 1 + e.
    // dl/dh is a correction below 2^-p relative: 1/dh in [1/2, 1] is taken
    // as 3/2 - dh/2 (exact at dh = 1 and 2, within 12% between).
    const DW d = FastTwoSum(C(1), e);
    const int q = Div(numerator, d.hi);
    const int minus_inv = Fma(d.hi, C(0.5), C(-1.5));
    return Fma(Mul(q, d.lo), minus_inv, q);
  }

  // x - k pi/2 as a double-word, k = round(x 2/pi), and k.
  struct Reduced {
    DW r;
    int k;
  };
  Reduced ReducePiOver2(int x) {
    const TypeInfo& t = info_;
    // Arguments beyond the accurate range (see vector_math.h) are clamped
    // so that every intermediate stays finite.
    const double limit = std::ldexp(1.0, f64_ ? 60 : 28);
    const int xc = ClampC(-limit, x, limit);
    // k = round(x 2/pi) from a product accurate enough that |r| <= pi/4
    // (plus a hair) while k < 2^(p-1).
    const DW kp = TwoProduct(xc, C(t.two_over_pi[0]));
    const int k = Round(Sum(kp.hi, Fma(xc, C(t.two_over_pi[1]), kp.lo)));
    // x - k (P0 + P1 + P2 + P3), pi/2 in four parts, with exact products
    // (but the last) and exact sums where it matters.
    const DW h0 = TwoProduct(k, C(t.pio2[0]));
    const int t0 = Sub(xc, h0.hi);  // Exact (Sterbenz).
    const DW s0 = TwoSum(t0, Neg(h0.lo));
    const DW h1 = TwoProduct(k, C(t.pio2[1]));
    const DW s1 = TwoSum(s0.hi, Neg(h1.hi));
    const DW h2 = TwoProduct(k, C(t.pio2[2]));
    int lo = Sum(s0.lo, s1.lo);
    lo = Sub(lo, h1.lo);
    lo = Sub(lo, h2.hi);
    lo = Sub(lo, h2.lo);
    lo = Fma(Neg(k), C(t.pio2[3]), lo);
    return {FastTwoSum(s1.hi, lo), k};
  }
  // sin and cos of a reduced double-word argument.
  int SinReduced(DW r) {
    const int z = Mul(r.hi, r.hi);
    // sin(hi + lo) = sin(hi) + lo cos(hi), cos(hi) ~ 1 - z/2.
    const int lo_term = Mul(r.lo, Fma(z, C(-0.5), C(1)));
    return Sum(r.hi, Fma(Mul(r.hi, z), Horner(info_.sin_s, z), lo_term));
  }
  int CosReduced(DW r) {
    const int z = Mul(r.hi, r.hi);
    const int w = Mul(z, C(0.5));
    const int hz = Sub(C(1), w);
    // cos(hi + lo) = cos(hi) - lo sin(hi); (1 - hz) - w is hz's rounding error.
    int tail = Fma(Mul(z, z), Horner(info_.cos_c, z), Neg(Mul(r.hi, r.lo)));
    tail = Sum(Sub(Sub(C(1), hz), w), tail);
    return Sum(hz, tail);
  }
  // k mod 4 in [0, 4), exact for every integer-valued k.
  int Mod4(int k) { return Sub(k, Mul(C(4), Floor(Mul(k, C(0.25))))); }
  int Odd(int k) {
    const int h = Mul(k, C(0.5));
    return Ne(Floor(h), h);
  }
  int SignIf(int p) { return Sel(p, Bits(SignMask()), C(0)); }
  int NaNUnlessFinite(int x, int y) { return Sel(Lt(Abs(x), Inf()), y, NaN()); }

  // Beyond |x| = 2^(p-5) or so the reduction loses accuracy (see
  // vector_math.h); the results stay in [-1, 1].
  int Sin(int x) {
    const Reduced red = ReducePiOver2(x);
    const int s = SinReduced(red.r);
    const int c = CosReduced(red.r);
    const int q = Mod4(red.k);
    const int y = Xor(Sel(Odd(red.k), c, s), SignIf(Ge(q, C(2))));  // Negative for q = 2, 3.
    return Sel(Eq(x, C(0)), x, NaNUnlessFinite(x, ClampC(-1, y, 1)));
  }
  int Cos(int x) {
    const Reduced red = ReducePiOver2(x);
    const int s = SinReduced(red.r);
    const int c = CosReduced(red.r);
    const int q = Mod4(red.k);
    // Negative for q = 1, 2.
    const int y = Xor(Sel(Odd(red.k), s, c), SignIf(PAnd(Ge(q, C(1)), Le(q, C(2)))));
    return NaNUnlessFinite(x, ClampC(-1, y, 1));
  }
  int Tan(int x) {
    const Reduced red = ReducePiOver2(x);
    const int s = SinReduced(red.r);
    const int c = CosReduced(red.r);
    const int odd = Odd(red.k);
    // Odd quadrants: tan = -cos/sin.
    const int y = Div(Sel(odd, c, s), Sel(odd, s, c));
    return Sel(Eq(x, C(0)), x, NaNUnlessFinite(x, Xor(y, SignIf(odd))));
  }

  int Atan2(int y, int x) {
    const TypeInfo& t = info_;
    const int ax = Abs(x);
    const int ay = Abs(y);
    const int mx = Max(ax, ay);
    const int mn = Min(ax, ay);
    const int a = Div(mn, mx);  // [0, 1]
    const int big = Gt(a, C(t.tan_pi_8));
    // atan(a) = pi/4 + atan((a - 1) / (a + 1)) for a > tan(pi/8).
    const int z = Sel(big, Div(Sub(a, C(1)), Sum(a, C(1))), a);
    const int w = Mul(z, z);
    int theta = Fma(Mul(z, w), Horner(t.atan_a, w), z);
    theta = Sel(big, Sum(C(t.quarter_pi[0]), Sum(theta, C(t.quarter_pi[1]))), theta);
    // |y| > |x|: pi/2 - theta; x negative: pi - theta.
    theta = Sel(Gt(ay, ax), Sum(C(t.half_pi[0]), Sub(C(t.half_pi[1]), theta)), theta);
    const int x_negative = SignBitSet(x);
    theta = Sel(x_negative, Sum(C(t.pi[0]), Sub(C(t.pi[1]), theta)), theta);
    // Both zero: 0 or pi; both infinite: pi/4 or 3pi/4.
    theta = Sel(Eq(mx, C(0)), Sel(x_negative, C(t.pi[0]), C(0)), theta);
    theta = Sel(Eq(mn, Inf()), Sel(x_negative, C(3 * M_PI / 4), C(M_PI / 4)), theta);
    return Or(theta, SignOf(y));
  }

  int Erf(int x) {
    const TypeInfo& t = info_;
    const int a = Abs(x);
    const int small = Fma(a, Horner(t.erf_small, Mul(a, a)), a);
    // erf = 1 - erfc, erfc(a) = exp(-a^2) t H(t), t = 1/a.
    const double limit = f64_ ? 6.0 : 4.0;  // erf rounds to 1 beyond.
    const int ac = ClampC(0.875, a, limit);
    const int inv = Div(C(1), ac);
    int h;
    if (!f64_) {
      h = Horner(vc::kErfcH_f32, Sub(inv, C(0.6875)));
    } else {
      const int h1 = Horner(vc::kErfcH1_f64, Sub(inv, C(0.796875)));
      const int h2 = Horner(vc::kErfcH2_f64, Sub(inv, C(0.3046875)));
      h = Sel(Lt(ac, C(2.25)), h1, h2);
    }
    const int sq = Mul(ac, ac);
    const ExpParts e = ExpReduce(Neg(sq), -1);
    const int ex = Mul(Sum(e.p1, C(1)), Exp2i(e.n));  // e^-36 at least: normal.
    const int erfc = Mul(Mul(ex, h), inv);
    int y = Sel(Lt(a, C(0.875)), small, Sub(C(1), erfc));
    y = Sel(Ge(a, C(limit)), C(1), y);
    return Or(y, SignOf(x));
  }

  int Cbrt(int x) {
    const TypeInfo& t = info_;
    const int a = Abs(x);
    const int sub = Lt(a, C(t.min_normal));
    const int as = Sel(sub, Mul(a, C(std::ldexp(1.0, f64_ ? 54 : 24))), a);
    const int q_adjust = Sel(sub, C(f64_ ? -18.0 : -8.0), C(0));
    const int e = FieldToFloat(Shr(as, t.p));
    const int m = Or(And(as, Bits(MantissaMask())), C(1));  // [1, 2)
    // e = 3q + rem, rem in {0, 1, 2}; (e + 0.5) / 3 is never near an integer.
    const int q = Floor(Mul(Sum(e, C(0.5)), C(1.0 / 3.0)));
    const int rem = Sub(e, Mul(q, C(3)));
    const int rem1 = Eq(rem, C(1));
    const int rem2 = Eq(rem, C(2));
    const int m8 = Mul(m, Sel(rem1, C(2), Sel(rem2, C(4), C(1))));  // [1, 8), exact
    int y = Mul(Horner(t.cbrt_start, m), Sel(rem1, C(t.cbrt2), Sel(rem2, C(t.cbrt4), C(1))));
    // Newton: y += (m8 / y^2 - y) / 3.
    for (int i = 0; i < (f64_ ? 2 : 1); ++i) {
      y = Fma(Sub(Div(m8, Mul(y, y)), y), C(1.0 / 3.0), y);
    }
    int r = Or(Mul(y, Exp2i(Sum(q, q_adjust))), SignOf(x));
    // 0, inf and NaN are their own cube roots.
    r = Sel(Gt(a, C(0)), r, x);
    return Sel(Lt(a, Inf()), r, x);
  }

  int Rsqrt(int x) { return Div(C(1), Sqrt(x)); }

  // ---- Inverse trigonometric and hyperbolic functions ----
  // atan, asin and acos through atan2 (its special values give theirs:
  // atan(+-inf) = +-pi/2, asin(+-1) = +-pi/2, acos(-1) = pi, NaN for |x| > 1
  // from the square root of a negative number); 1 - x^2 as (1 - x)(1 + x),
  // exact to a rounding or two, so that acos near 1 and asin near +-1 keep
  // their relative accuracy.
  int Atan(int x) { return Atan2(x, C(1)); }
  int OneMinusSquareRoot(int x) { return Sqrt(Mul(Sub(C(1), x), Sum(C(1), x))); }
  int Asin(int x) { return Atan2(x, OneMinusSquareRoot(x)); }
  int Acos(int x) { return Atan2(OneMinusSquareRoot(x), x); }

  // e^a for a >= 0 as its parts: 2^n (1 + p1), for the hyperbolic functions;
  // a is clamped just beyond where their results overflow (sinh and cosh
  // round to infinity below a = 90 (f32), 711 (f64)).
  ExpParts ExpPositive(int a) { return ExpReduce(MinC(a, f64_ ? 711.0 : 90.0), -1); }
  // e^a / 2 for n > p + 2, where e^-a no longer matters: scaled in two steps
  // (2^(n-1) alone may overflow although the product does not).
  int HalfExpLarge(const ExpParts& e) { return Scale(Sum(e.p1, C(1)), Sub(e.n, C(1))); }

  int Sinh(int x) {
    const int a = Abs(x);
    const ExpParts e = ExpPositive(a);
    const double big = info_.p + 2;
    // sinh(a) = (em1 + em1 / (em1 + 1)) / 2, em1 = e^a - 1 >= 0: no
    // cancellation anywhere, and em1 = a for tiny a.
    const int s = Exp2i(MinC(e.n, big));
    const int em1 = Fma(s, e.p1, Sub(s, C(1)));
    const int mid = Mul(C(0.5), Sum(em1, Div(em1, Sum(em1, C(1)))));
    const int y = Sel(Gt(e.n, C(big)), HalfExpLarge(e), mid);
    return Or(y, SignOf(x));
  }

  int Cosh(int x) {
    const int a = Abs(x);
    const ExpParts e = ExpPositive(a);
    const double big = info_.p + 2;
    // cosh(a) = (E + 1/E) / 2, E = e^a.
    const int ea = Mul(Sum(e.p1, C(1)), Exp2i(MinC(e.n, big)));
    const int mid = Mul(C(0.5), Sum(ea, Div(C(1), ea)));
    return Sel(Gt(e.n, C(big)), HalfExpLarge(e), mid);
  }

  // log(2a) for a beyond 2^(p/2 + 2), where asinh(a) and acosh(a) equal it
  // to working precision: log(a) + ln2 (2a may overflow).
  int LogTwice(int a) {
    const TypeInfo& t = info_;
    return Sum(Log(a), Sum(C(t.ln2[0]), C(t.ln2[1])));
  }
  double LargeHyperbolic() const { return std::ldexp(1.0, info_.p / 2 + 2); }

  int Asinh(int x) {
    const int a = Abs(x);
    // asinh(a) = log1p(a + a^2 / (1 + sqrt(1 + a^2))): no cancellation.
    const int t = Mul(a, a);
    const int u = Sum(a, Div(t, Sum(C(1), Sqrt(Sum(t, C(1))))));
    const int y = Sel(Gt(a, C(LargeHyperbolic())), LogTwice(a), Log1p(u));
    return Or(y, SignOf(x));
  }

  int Acosh(int x) {
    // acosh(x) = log1p(t + sqrt(t (t + 2))), t = x - 1 (exact for x <= 2).
    const int t = Sub(x, C(1));
    const int u = Sum(t, Sqrt(Mul(t, Sum(t, C(2)))));
    const int r = Sel(Gt(x, C(LargeHyperbolic())), LogTwice(x), Log1p(u));
    return Sel(Lt(x, C(1)), NaN(), r);  // t (t + 2) > 0 again for x < -1.
  }

  int Atanh(int x) {
    const int a = Abs(x);
    // atanh(a) = log1p(2a / (1 - a)) / 2; 1 - a is exact for a >= 1/2; a = 1
    // gives log1p(inf) = inf, a > 1 log1p of a number below -1, NaN.
    const int y = Mul(C(0.5), Log1p(Div(Sum(a, a), Sub(C(1), a))));
    return Or(y, SignOf(x));
  }

  int Pow(int x, int y) {
    const TypeInfo& t = info_;
    const int ax = Abs(x);
    // |x|^y = e^(y log|x|) with log|x| as a double-word.
    const int sub = Lt(ax, C(t.min_normal));
    const int xs = Sel(sub, Mul(ax, C(std::ldexp(1.0, f64_ ? 54 : 24))), ax);
    const int e_adjust = Sel(sub, C(f64_ ? -54.0 : -24.0), C(0));
    const uint64_t c = BitsOf(std::sqrt(0.5));
    const int ix = IAdd(xs, Bits(BitsOf(1.0) - c));
    const int e = Sum(FieldToFloat(Shr(ix, t.p)), e_adjust);
    const int m = IAdd(And(ix, Bits(MantissaMask())), Bits(c));
    const int f = Sub(m, C(1));
    // s = f / (2 + f) as a double-word.
    const DW d = FastTwoSum(C(2), f);
    const int sh = Div(f, d.hi);
    const DW p = TwoProduct(sh, d.hi);
    const int residual = Sub(Sub(Sub(f, p.hi), p.lo), Mul(sh, d.lo));
    const DW s = FastTwoSum(sh, Div(residual, d.hi));
    // log(m) = 2s + s z (2/3 + z P2(z)), z = s^2.
    const DW z = DWMul(s, s);
    const int tail = Mul(z.hi, Horner(t.log_p2, z.hi));
    const DW poly = DWAdd({C(t.two_thirds[0]), C(t.two_thirds[1])}, {tail, C(0)});
    const DW v = DWMul(s, DWMul(z, poly));
    const DW log_m = DWAdd({Sum(s.hi, s.hi), Sum(s.lo, s.lo)}, v);
    const DW log_x = DWAdd({Mul(e, C(t.ln2[0])), Mul(e, C(t.ln2[1]))}, log_m);
    // t = y log|x|, y clamped where the result over/underflows anyway.
    const double y_limit = std::ldexp(1.0, f64_ ? 900 : 60);
    const int yc = ClampC(-y_limit, y, y_limit);
    const DW prod = TwoProduct(yc, log_x.hi);
    const DW tw = FastTwoSum(prod.hi, Fma(yc, log_x.lo, prod.lo));
    const int th = tw.hi;
    const int tl = tw.lo;
    const int thc = ClampC(f64_ ? -746.0 : -104.0, th, f64_ ? 710.0 : 89.0);
    const int tlc = Sel(Eq(th, thc), tl, C(0));
    const ExpParts ep = ExpReduce(thc, tlc);
    int r = Scale(Sum(ep.p1, C(1)), ep.n);

    // Special cases (C99 F.9.4.4), later ones overriding earlier ones.
    const int y_negative = Lt(y, C(0));
    const int inf = Inf();
    const int zero = C(0);
    const int one = C(1);
    // y = +-inf: 1 for |x| = 1, else inf or 0 by |x| < 1 and the sign of y.
    const int y_inf_value = Sel(Eq(ax, one), one,
                                Sel(Lt(ax, one), Sel(y_negative, inf, zero),
                                    Sel(y_negative, zero, inf)));
    r = Sel(Eq(Abs(y), inf), y_inf_value, r);
    r = Sel(Eq(ax, zero), Sel(y_negative, inf, zero), r);
    r = Sel(Eq(ax, inf), Sel(y_negative, zero, inf), r);
    // x with the sign bit: y odd integer negates; y not an integer is NaN
    // for finite nonzero x. Infinite y counts as even.
    const int y_integer = Eq(Floor(y), y);
    const int half = Mul(y, C(0.5));
    const int y_odd = PAnd(y_integer, Ne(Floor(half), half));
    const int x_negative = SignBitSet(x);
    r = Xor(r, Sel(PAnd(x_negative, y_odd), Bits(SignMask()), zero));
    const int finite_nonzero = PAnd(Gt(ax, zero), Lt(ax, inf));
    r = Sel(PAnd(PAnd(x_negative, finite_nonzero), Ne(Floor(y), y)), NaN(), r);
    r = Sel(Ne(x, x), NaN(), r);
    r = Sel(Ne(y, y), NaN(), r);
    r = Sel(Eq(y, zero), one, r);
    return Sel(Eq(x, one), one, r);
  }

 private:
  std::vector<KOp>& ops_;
  std::map<Key, int>& cse_;
  const bool fma_;
  const bool native_scale_;
  ElementType type_ = ElementType::kF32;
  bool f64_ = false;
  TypeInfo info_ = InfoFor(false);
};

// Integer power by repeated squaring over every bit of the exponent
// (wrapping products, as the evaluator's IntegerPower), unrolled; a negative
// signed exponent gives 1 for base 1, +-1 for base -1 by its parity, else 0.
// Built from integer add/and/shift/multiply, compare and select, which every
// target lowers (in scalar code).
int ExpandIntegerPower(MathBuilder& b, ElementType type, int x, int y) {
  const bool is_signed = IsSignedInteger(type);
  auto constant = [&](int64_t v) {
    KOp index;
    index.kind = KOpKind::kIConst;
    index.imm = v;
    KOp op;
    op.kind = KOpKind::kFromIndex;
    op.type = type;
    op.operand_type = ElementType::kS64;
    op.a = b.Add(index);
    return b.Add(op);
  };
  auto binary = [&](Opcode opcode, int l, int r) {
    return b.Make(KOpKind::kBinary, type, type, opcode, l, r);
  };
  auto compare = [&](ComparisonDirection direction, int l, int r) {
    KOp op;
    op.kind = KOpKind::kCompare;
    op.type = ElementType::kPred;
    op.operand_type = type;
    op.direction = direction;
    op.comparison = is_signed ? ComparisonType::kSigned : ComparisonType::kUnsigned;
    op.a = l;
    op.b = r;
    return b.Add(op);
  };
  auto select = [&](int p, int t, int f) {
    return b.Make(KOpKind::kSelect, type, ElementType::kPred, Opcode::kAdd, p, t, f);
  };
  const int zero = constant(0);
  const int one = constant(1);
  int result = one;
  int base = x;
  const int width = BitWidth(type);
  for (int i = 0; i < width; ++i) {
    const int shifted = i == 0 ? y : binary(Opcode::kShiftRightLogical, y, constant(i));
    const int bit_set = compare(ComparisonDirection::kNe, binary(Opcode::kAnd, shifted, one), zero);
    result = select(bit_set, binary(Opcode::kMultiply, result, base), result);
    if (i + 1 < width) base = binary(Opcode::kMultiply, base, base);
  }
  if (!is_signed) return result;
  const int minus_one = constant(-1);
  const int odd = compare(ComparisonDirection::kNe, binary(Opcode::kAnd, y, one), zero);
  const int negative_value =
      select(compare(ComparisonDirection::kEq, x, one), one,
             select(compare(ComparisonDirection::kEq, x, minus_one), select(odd, minus_one, one),
                    zero));
  return select(compare(ComparisonDirection::kLt, y, zero), negative_value, result);
}

bool IsIntegerPower(const KOp& op) {
  if (op.kind != KOpKind::kBinary || op.opcode != Opcode::kPower) return false;
  if (!IsInteger(op.type) || op.operand_type != op.type) return false;
  const int width = BitWidth(op.type);
  return width == 8 || width == 16 || width == 32 || width == 64;
}

bool IsMathType(ElementType type) {
  switch (type) {
    case ElementType::kF16: case ElementType::kBF16: case ElementType::kF32:
    case ElementType::kF64:
      return true;
    default:
      return false;
  }
}

}  // namespace

bool IsExpandedMathOp(const KOp& op) {
  if (IsIntegerPower(op)) return true;
  if (!IsMathType(op.type) || op.operand_type != op.type) return false;
  if (op.kind == KOpKind::kUnary) {
    switch (op.opcode) {
      case Opcode::kExp: case Opcode::kExpm1: case Opcode::kLog: case Opcode::kLog1p:
      case Opcode::kTanh: case Opcode::kLogistic: case Opcode::kSin: case Opcode::kCos:
      case Opcode::kTan: case Opcode::kErf: case Opcode::kCbrt: case Opcode::kRsqrt:
      case Opcode::kAtan: case Opcode::kAsin: case Opcode::kAcos: case Opcode::kSinh:
      case Opcode::kCosh: case Opcode::kAsinh: case Opcode::kAcosh: case Opcode::kAtanh:
        return true;
      default:
        return false;
    }
  }
  if (op.kind == KOpKind::kBinary) {
    return op.opcode == Opcode::kAtan2 || op.opcode == Opcode::kPower;
  }
  return false;
}

int CountMathOps(const KernelProgram& program) {
  int count = 0;
  for (const KOp& op : program.ops) {
    if (IsExpandedMathOp(op) && !IsIntegerPower(op)) ++count;
  }
  return count;
}

KernelProgram MathRoutineProgram(Opcode opcode, ElementType type, int64_t lanes) {
  KernelProgram program;
  program.name = absl::StrCat("math.", OpcodeName(opcode), ".", ElementTypeName(type));
  const bool binary = opcode == Opcode::kAtan2 || opcode == Opcode::kPower;
  const int inputs = binary ? 2 : 1;
  for (int k = 0; k <= inputs; ++k) program.buffers.push_back({type, lanes});
  program.loop_extents = {lanes};
  auto add = [&](KOp op) {
    program.ops.push_back(op);
    return static_cast<int>(program.ops.size()) - 1;
  };
  KOp index;
  index.kind = KOpKind::kLoopIndex;
  const int i = add(index);
  KOp math;
  math.kind = binary ? KOpKind::kBinary : KOpKind::kUnary;
  math.type = type;
  math.operand_type = type;
  math.opcode = opcode;
  for (int k = 0; k < inputs; ++k) {
    KOp load;
    load.kind = KOpKind::kLoad;
    load.type = type;
    load.imm = k;
    load.a = i;
    (k == 0 ? math.a : math.b) = add(load);
  }
  const int result = add(math);
  KOp store;
  store.kind = KOpKind::kStore;
  store.type = ElementType::kTuple;
  store.operand_type = type;
  store.a = i;
  store.b = result;
  add(store);
  return program;
}

void ExpandMath(KernelProgram* program, const MathOptions& options) {
  bool any = false;
  for (const KOp& op : program->ops) any = any || IsExpandedMathOp(op);
  if (!any) return;
  std::vector<KOp> out;
  std::map<Key, int> cse;
  MathBuilder b(&out, &cse, options.fused_multiply_add, options.native_scale);
  std::vector<int> renumber(program->ops.size(), -1);
  // The operations an expansion creates take the expanded one's origin
  // (KOp::origin): a profile names the instruction of every line.
  size_t first_unnamed = 0;
  auto name_new_ops = [&](int origin) {
    for (; first_unnamed < out.size(); ++first_unnamed) {
      if (out[first_unnamed].origin < 0) out[first_unnamed].origin = origin;
    }
  };
  for (size_t i = 0; i < program->ops.size(); ++i) {
    name_new_ops(i == 0 ? -1 : program->ops[i - 1].origin);
    KOp op = program->ops[i];
    for (int* operand : {&op.a, &op.b, &op.c}) {
      if (*operand >= 0) *operand = renumber[*operand];
    }
    if (!IsExpandedMathOp(op)) {
      renumber[i] = b.Add(op);
      continue;
    }
    if (IsIntegerPower(op)) {
      renumber[i] = ExpandIntegerPower(b, op.type, op.a, op.b);
      continue;
    }
    const ElementType type = op.type;
    const ElementType compute = type == ElementType::kF64 ? ElementType::kF64 : ElementType::kF32;
    b.SetType(compute);
    int x = op.a;
    int y = op.b;
    if (type != compute) {
      x = b.Convert(x, type, compute);
      if (y >= 0) y = b.Convert(y, type, compute);
    }
    int r = -1;
    if (options.out_of_line) {
      // The target calls its routine for this function (see MathOptions).
      r = op.kind == KOpKind::kUnary ? b.Unary(op.opcode, x) : b.Binary(op.opcode, x, y);
      if (type != compute) r = b.Convert(r, compute, type);
      renumber[i] = r;
      continue;
    }
    switch (op.opcode) {
      case Opcode::kExp: r = b.Exp(x); break;
      case Opcode::kExpm1: r = b.Expm1(x); break;
      case Opcode::kLog: r = b.Log(x); break;
      case Opcode::kLog1p: r = b.Log1p(x); break;
      case Opcode::kTanh: r = b.Tanh(x); break;
      case Opcode::kLogistic: r = b.Logistic(x); break;
      case Opcode::kSin: r = b.Sin(x); break;
      case Opcode::kCos: r = b.Cos(x); break;
      case Opcode::kTan: r = b.Tan(x); break;
      case Opcode::kErf: r = b.Erf(x); break;
      case Opcode::kCbrt: r = b.Cbrt(x); break;
      case Opcode::kRsqrt: r = b.Rsqrt(x); break;
      case Opcode::kAtan: r = b.Atan(x); break;
      case Opcode::kAsin: r = b.Asin(x); break;
      case Opcode::kAcos: r = b.Acos(x); break;
      case Opcode::kSinh: r = b.Sinh(x); break;
      case Opcode::kCosh: r = b.Cosh(x); break;
      case Opcode::kAsinh: r = b.Asinh(x); break;
      case Opcode::kAcosh: r = b.Acosh(x); break;
      case Opcode::kAtanh: r = b.Atanh(x); break;
      case Opcode::kAtan2: r = b.Atan2(x, y); break;
      case Opcode::kPower: r = b.Pow(x, y); break;
      default: XJIT_CHECK(false);
    }
    if (type != compute) r = b.Convert(r, compute, type);
    renumber[i] = r;
  }
  if (!program->ops.empty()) name_new_ops(program->ops.back().origin);
  program->ops = std::move(out);
  RemoveDeadOps(program);
}

}  // namespace xjit::jit
