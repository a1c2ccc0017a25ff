// Implementation of blas_test_util.h.
#include "tests/blas/blas_test_util.h"

#include <cmath>
#include <complex>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "interpreter/evaluator.h"
#include "ir/float_format.h"
#include "ir/hlo_text/parser.h"
#include "ir/layout_util.h"
#include "ir/module.h"
#include "ir/verifier.h"
#include "runtime/blas/blas_threads.h"

namespace xjit::runtime::blas::testing {

namespace {

// Unit roundoff of a real float type (2^-(mantissa bits + 1)).
double Roundoff(ElementType t) { return std::ldexp(1.0, -(FloatMantissaBits(t) + 1)); }

double Tolerance(ElementType t, double magnitude, int64_t contraction) {
  const ElementType real = IsComplex(t) ? ComplexComponentType(t) : t;
  // The kernels accumulate in f32 for every type up to 32 bits, in f64 for f64.
  const double acc = real == ElementType::kF64 ? Roundoff(ElementType::kF64)
                                               : Roundoff(ElementType::kF32);
  return 2 * Roundoff(real) * magnitude + 4.0 * static_cast<double>(contraction + 1) * acc +
         Roundoff(real) * FloatMinNormal(real);
}

std::vector<int64_t> Dims(const Shape& s) { return {s.dimensions().begin(), s.dimensions().end()}; }

struct Prepared {
  std::unique_ptr<Module> module;
  const Instruction* root = nullptr;
};

::testing::AssertionResult Prepare(const std::string& hlo, Prepared* out) {
  auto module = ParseHloModule(hlo);
  if (!module.ok()) return ::testing::AssertionFailure() << "parse: " << module.status() << "\n" << hlo;
  absl::Status verified = VerifyModule(**module);
  if (!verified.ok()) return ::testing::AssertionFailure() << "verify: " << verified << "\n" << hlo;
  out->module = std::move(*module);
  out->root = out->module->entry()->root();
  return ::testing::AssertionSuccess();
}

// Plans and runs the root on `arguments`; fills `result` and `info`. A
// convolution with a direct plan also runs the path the planner did not
// choose (direct kernel or im2col + GEMM) into `other` when given, so that
// both are checked whichever is faster.
::testing::AssertionResult RunKernel(const Instruction& root, const std::vector<Literal>& arguments,
                                     Literal* result, CaseResult* info, Literal* other = nullptr,
                                     int dot_threads = 1) {
  *result = Literal(root.shape());
  std::vector<uint8_t> scratch;
  // Canary bytes around the buffers catch writes out of bounds.
  const void* a = arguments[0].data().data();
  const void* b = arguments[1].data().data();
  void* out = result->data().data();
  if (root.opcode() == Opcode::kDot) {
    auto plan = PlanDot(root);
    if (!plan.ok()) return ::testing::AssertionFailure() << "PlanDot: " << plan.status();
    info->plan = plan->ToString();
    info->copies = static_cast<int64_t>(plan->copies.size());
    info->kind = plan->kind;
    if (dot_threads > 1) {
      // Split wherever it can (no floor on a band's size), so that small
      // shapes reach the split's edges.
      PlanDotThreads(*plan, dot_threads, DotSplitLimits{1, 0});
      info->plan = plan->ToString();
    }
    scratch.assign(plan->scratch_bytes + 64, 0xA5);
    ScopedBlasThreads blas(plan->blas_threads);  // as the JIT's call does
    RunDot(*plan, a, b, out, scratch.data(), dot_threads);
  } else if (root.opcode() == Opcode::kConvolution) {
    // The direct kernel splits over as many threads as BLAS uses.
    auto plan = PlanConvolution(root, BlasThreads());
    if (!plan.ok()) return ::testing::AssertionFailure() << "PlanConvolution: " << plan.status();
    info->plan = plan->ToString();
    info->copies = static_cast<int64_t>(plan->dot.copies.size());
    info->kind = plan->dot.kind;
    info->uses_im2col = plan->uses_im2col;
    info->uses_direct = plan->has_direct && plan->use_direct;
    // Each path gets only the scratch the JIT would reserve for it.
    if (plan->ChosenScratchBytes() > plan->scratch_bytes) {
      return ::testing::AssertionFailure() << "chosen path's scratch exceeds scratch_bytes";
    }
    scratch.assign(plan->ChosenScratchBytes() + 64, 0xA5);
    {
      ScopedBlasThreads blas(plan->BlasThreads());  // as the JIT's call does
      RunConvolution(*plan, a, b, out, scratch.data());
    }
    if (other != nullptr && plan->has_direct) {
      for (size_t i = scratch.size() - 64; i < scratch.size(); ++i) {
        if (scratch[i] != 0xA5)
          return ::testing::AssertionFailure() << "scratch overrun; " << info->plan;
      }
      *other = Literal(root.shape());
      plan->use_direct = !plan->use_direct;
      scratch.assign(plan->ChosenScratchBytes() + 64, 0xA5);
      ScopedBlasThreads blas(plan->BlasThreads());
      RunConvolution(*plan, a, b, other->data().data(), scratch.data());
      info->ran_both = true;
    }
  } else {
    return ::testing::AssertionFailure() << "root is neither dot nor convolution";
  }
  for (size_t i = scratch.size() - 64; i < scratch.size(); ++i) {
    if (scratch[i] != 0xA5) return ::testing::AssertionFailure() << "scratch overrun; " << info->plan;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace

void FillRandom(Literal* literal, std::mt19937_64& rng) {
  const Shape& shape = literal->shape();
  const ElementType t = shape.element_type();
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::vector<int64_t> index(shape.rank(), 0);
  const std::vector<int64_t> dims = Dims(shape);
  if (shape.element_count() == 0) return;
  do {
    if (IsComplex(t)) {
      const double re = unit(rng), im = unit(rng);
      literal->SetComplex(index, {re, im});
    } else if (IsFloat(t)) {
      literal->SetDouble(index, unit(rng));
    } else if (IsPred(t)) {
      literal->SetBits(index, rng() & 1);
    } else {
      const int bits = BitWidth(t);
      uint64_t v = rng();
      if (bits < 64) v &= (uint64_t{1} << bits) - 1;
      literal->SetBits(index, v);
    }
  } while (NextIndex(dims, absl::MakeSpan(index)));
}

::testing::AssertionResult CompareLiterals(const Literal& actual, const Literal& expected,
                                           int64_t contraction) {
  if (!actual.shape().SameDimensions(expected.shape()) ||
      actual.shape().element_type() != expected.shape().element_type()) {
    return ::testing::AssertionFailure() << "shapes differ: " << actual.shape().ToString()
                                         << " vs " << expected.shape().ToString();
  }
  const ElementType t = expected.shape().element_type();
  const std::vector<int64_t> dims = Dims(expected.shape());
  if (expected.element_count() == 0) return ::testing::AssertionSuccess();
  std::vector<int64_t> index(dims.size(), 0);
  int64_t bad = 0;
  std::string first;
  do {
    bool ok;
    std::string got, want;
    if (IsComplex(t)) {
      const std::complex<double> a = actual.GetComplex(index), e = expected.GetComplex(index);
      const double tol = Tolerance(t, std::abs(e), contraction);
      ok = std::abs(a.real() - e.real()) <= tol && std::abs(a.imag() - e.imag()) <= tol;
      got = absl::StrCat(a.real(), "+", a.imag(), "i");
      want = absl::StrCat(e.real(), "+", e.imag(), "i");
    } else if (IsFloat(t)) {
      const double a = actual.GetDouble(index), e = expected.GetDouble(index);
      ok = std::abs(a - e) <= Tolerance(t, std::abs(e), contraction);
      got = absl::StrCat(a);
      want = absl::StrCat(e);
    } else {
      ok = actual.GetBits(index) == expected.GetBits(index);
      got = absl::StrCat(actual.GetBits(index));
      want = absl::StrCat(expected.GetBits(index));
    }
    if (!ok && bad++ == 0) {
      first = absl::StrCat("at [", absl::StrJoin(index, ","), "]: got ", got, ", want ", want);
    }
  } while (NextIndex(dims, absl::MakeSpan(index)));
  if (bad > 0) {
    return ::testing::AssertionFailure() << bad << " of " << expected.element_count()
                                         << " elements differ; first " << first;
  }
  return ::testing::AssertionSuccess();
}

CaseResult RunCase(const std::string& hlo, uint64_t seed, int64_t contraction, int dot_threads) {
  CaseResult r;
  Prepared p;
  r.ok = Prepare(hlo, &p);
  if (!r.ok) return r;
  std::mt19937_64 rng(seed);
  std::vector<Literal> arguments;
  for (const Instruction* param : p.module->entry()->parameters()) {
    arguments.emplace_back(param->shape());
    FillRandom(&arguments.back(), rng);
  }
  auto expected = EvaluateModule(*p.module, arguments);
  if (!expected.ok()) {
    r.ok = ::testing::AssertionFailure() << "evaluator: " << expected.status();
    return r;
  }
  Literal actual, other;
  r.ok = RunKernel(*p.root, arguments, &actual, &r, &other, dot_threads);
  if (!r.ok) return r;
  r.ok = CompareLiterals(actual, *expected, contraction);
  if (!r.ok) {
    r.ok << "\nplan: " << r.plan << "\n" << hlo;
    return r;
  }
  if (r.ran_both) {
    r.ok = CompareLiterals(other, *expected, contraction);
    if (!r.ok) r.ok << "\nthe path not chosen, plan: " << r.plan << "\n" << hlo;
  }
  return r;
}

::testing::AssertionResult RunWithValues(const std::string& hlo,
                                         const std::vector<Literal>& arguments,
                                         const Literal& expected, int64_t contraction) {
  Prepared p;
  ::testing::AssertionResult ok = Prepare(hlo, &p);
  if (!ok) return ok;
  std::vector<Literal> args;
  for (size_t i = 0; i < arguments.size(); ++i) {
    args.push_back(arguments[i].Relayout(p.module->entry()->parameter(i)->shape()));
  }
  CaseResult info;
  Literal actual;
  ok = RunKernel(*p.root, args, &actual, &info);
  if (!ok) return ok;
  ok = CompareLiterals(actual, expected, contraction);
  if (!ok) ok << "\nplan: " << info.plan;
  return ok;
}

namespace {

std::string ShapeText(ElementType t, const std::vector<int64_t>& dims,
                      std::vector<int64_t> layout) {
  if (layout.empty()) {
    for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) layout.push_back(i);
  }
  if (dims.empty()) return absl::StrCat(ElementTypeName(t), "[]");
  return absl::StrCat(ElementTypeName(t), "[", absl::StrJoin(dims, ","), "]{",
                      absl::StrJoin(layout, ","), "}");
}

// Dimensions of an operand given its labels: `a`/`b` stand for the two
// non-spatial labels, digits for spatial dimension numbers.
std::vector<int64_t> LabelDims(const std::string& labels, char a, int64_t a_size, char b,
                               int64_t b_size, const std::vector<int64_t>& spatial) {
  std::vector<int64_t> dims;
  for (char c : labels) {
    if (c == a) {
      dims.push_back(a_size);
    } else if (c == b) {
      dims.push_back(b_size);
    } else {
      dims.push_back(spatial[c - '0']);
    }
  }
  return dims;
}

}  // namespace

int64_t ConvContraction(const ConvSpec& spec) {
  int64_t k = spec.input_features / spec.feature_group_count;
  for (int64_t s : spec.kernel_spatial) k *= s;
  return k;
}

std::string ConvModuleText(const ConvSpec& spec) {
  const size_t ns = spec.input_spatial.size();
  std::vector<WindowDimension> window = spec.window;
  window.resize(ns);
  std::vector<int64_t> out_spatial;
  std::vector<std::string> size, stride, pad, lhs_dilate, rhs_dilate, reversal;
  for (size_t i = 0; i < ns; ++i) {
    const WindowDimension& w = window[i];
    const int64_t in = spec.input_spatial[i], k = spec.kernel_spatial[i];
    const int64_t dilated = in == 0 ? 0 : (in - 1) * w.base_dilation + 1;
    const int64_t padded = dilated + w.padding_low + w.padding_high;
    const int64_t extent = k == 0 ? 0 : (k - 1) * w.window_dilation + 1;
    out_spatial.push_back(padded < extent ? 0 : (padded - extent) / w.stride + 1);
    size.push_back(absl::StrCat(k));
    stride.push_back(absl::StrCat(w.stride));
    pad.push_back(absl::StrCat(w.padding_low, "_", w.padding_high));
    lhs_dilate.push_back(absl::StrCat(w.base_dilation));
    rhs_dilate.push_back(absl::StrCat(w.window_dilation));
    reversal.push_back(w.window_reversal ? "1" : "0");
  }
  const std::string in_shape = ShapeText(
      spec.type,
      LabelDims(spec.input_labels, 'b', spec.batch, 'f', spec.input_features, spec.input_spatial),
      spec.input_layout);
  const std::string k_shape =
      ShapeText(spec.type,
                LabelDims(spec.kernel_labels, 'i', spec.input_features / spec.feature_group_count,
                          'o', spec.output_features, spec.kernel_spatial),
                spec.kernel_layout);
  const std::string out_shape =
      ShapeText(spec.type,
                LabelDims(spec.output_labels, 'b', spec.batch / spec.batch_group_count, 'f',
                          spec.output_features, out_spatial),
                spec.output_layout);
  std::string attrs;
  if (ns > 0) {
    attrs = absl::StrCat(
        "window={size=", absl::StrJoin(size, "x"), " stride=", absl::StrJoin(stride, "x"),
        " pad=", absl::StrJoin(pad, "x"), " lhs_dilate=", absl::StrJoin(lhs_dilate, "x"),
        " rhs_dilate=", absl::StrJoin(rhs_dilate, "x"), " rhs_reversal=",
        absl::StrJoin(reversal, "x"), "}, ");
  }
  absl::StrAppend(&attrs, "dim_labels=", spec.input_labels, "_", spec.kernel_labels, "->",
                  spec.output_labels);
  if (spec.feature_group_count != 1) {
    absl::StrAppend(&attrs, ", feature_group_count=", spec.feature_group_count);
  }
  if (spec.batch_group_count != 1) {
    absl::StrAppend(&attrs, ", batch_group_count=", spec.batch_group_count);
  }
  return absl::StrCat("HloModule conv\n\nENTRY e {\n  a = ", in_shape, " parameter(0)\n  b = ",
                      k_shape, " parameter(1)\n  ROOT c = ", out_shape, " convolution(a, b), ",
                      attrs, "\n}\n");
}

}  // namespace xjit::runtime::blas::testing
