// Decoding and checking jaxlib's LAPACK custom calls (see jaxlib_lapack.h):
// target name to routine and type, backend_config to attributes, shapes to
// batches of packed column-major items, and the scratch layout.
#include "runtime/host/jaxlib_lapack.h"

#include <algorithm>
#include <climits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "ir/layout_util.h"
#include "ir/status_macros.h"
#include "runtime/host/jaxlib_lapack_internal.h"
#include "runtime/host/lapack_routines.h"

namespace xjit::runtime::host {
namespace {

constexpr absl::string_view kPrefix = "lapack_";
constexpr absl::string_view kSuffix = "_ffi";

struct RoutineName {
  absl::string_view name;
  LapackRoutine routine;
  int kinds;  // 1: real letters only, 2: complex only, 3: both.
};

constexpr RoutineName kRoutines[] = {
    {"trsm", LapackRoutine::kTrsm, 3},   {"getrf", LapackRoutine::kGetrf, 3},
    {"geqrf", LapackRoutine::kGeqrf, 3}, {"geqp3", LapackRoutine::kGeqp3, 3},
    {"orgqr", LapackRoutine::kOrgqr, 1}, {"ungqr", LapackRoutine::kOrgqr, 2},
    {"ormqr", LapackRoutine::kOrmqr, 1}, {"unmqr", LapackRoutine::kOrmqr, 2},
    {"potrf", LapackRoutine::kPotrf, 3}, {"syevd", LapackRoutine::kSyevd, 1},
    {"heevd", LapackRoutine::kSyevd, 2}, {"gesdd", LapackRoutine::kGesdd, 3},
    {"gesvd", LapackRoutine::kGesvd, 3}, {"geev", LapackRoutine::kGeev, 3},
    {"gees", LapackRoutine::kGees, 3},   {"gehrd", LapackRoutine::kGehrd, 3},
    {"sytrd", LapackRoutine::kSytrd, 1}, {"hetrd", LapackRoutine::kSytrd, 2},
    {"gtsv", LapackRoutine::kGtsv, 3},
};

// backend_config's FFI attributes, `{name = value : type, ...}`: name to the
// value's text (`76`, `true`).
absl::flat_hash_map<std::string, std::string> ParseAttributes(absl::string_view text) {
  absl::flat_hash_map<std::string, std::string> attributes;
  text = absl::StripAsciiWhitespace(text);
  if (absl::StartsWith(text, "\"") && absl::EndsWith(text, "\"") && text.size() >= 2) {
    text = text.substr(1, text.size() - 2);
  }
  if (absl::StartsWith(text, "{")) text.remove_prefix(1);
  if (absl::EndsWith(text, "}")) text.remove_suffix(1);
  for (absl::string_view entry : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    const size_t equals = entry.find('=');
    if (equals == absl::string_view::npos) continue;
    absl::string_view name = absl::StripAsciiWhitespace(entry.substr(0, equals));
    absl::string_view value = entry.substr(equals + 1);
    const size_t colon = value.find(':');
    if (colon != absl::string_view::npos) value = value.substr(0, colon);
    attributes[std::string(name)] = std::string(absl::StripAsciiWhitespace(value));
  }
  return attributes;
}

class Decoder {
 public:
  Decoder(const Instruction& call, JaxlibLapackPlan* plan)
      : call_(call), plan_(plan), attributes_(ParseAttributes(call.attrs().backend_config)) {}

  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat("custom-call \"", plan_->target, "\" ",
                                                   call_.name(), ": ", what));
  }

  // A character attribute (`uplo = 76 : ui8`), one of `allowed`.
  absl::StatusOr<char> Char(absl::string_view name, absl::string_view allowed) const {
    auto it = attributes_.find(name);
    if (it == attributes_.end()) return Error(absl::StrCat("attribute ", name, " missing"));
    int value = 0;
    if (!absl::SimpleAtoi(it->second, &value) || value <= 0 || value > 127 ||
        !absl::StrContains(allowed, static_cast<char>(value))) {
      return Error(absl::StrCat("attribute ", name, " = ", it->second, " is not one of '",
                                allowed, "'"));
    }
    return static_cast<char>(value);
  }
  absl::StatusOr<int64_t> Int(absl::string_view name) const {
    auto it = attributes_.find(name);
    int64_t value = 0;
    if (it == attributes_.end() || !absl::SimpleAtoi(it->second, &value)) {
      return Error(absl::StrCat("integer attribute ", name, " missing"));
    }
    return value;
  }
  absl::StatusOr<bool> Bool(absl::string_view name) const {
    auto it = attributes_.find(name);
    if (it == attributes_.end()) return Error(absl::StrCat("attribute ", name, " missing"));
    if (it->second == "true" || it->second == "1") return true;
    if (it->second == "false" || it->second == "0") return false;
    return Error(absl::StrCat("attribute ", name, " is not a bool"));
  }

  // Shape i of the operands (result = false) or result leaves.
  absl::StatusOr<const Shape*> ShapeOf(bool result, int64_t i) const {
    if (result) {
      const Shape& shape = call_.shape();
      if (!shape.IsTuple()) {
        if (i == 0) return &shape;
      } else if (i < shape.tuple_size()) {
        return &shape.tuple_shapes(i);
      }
      return Error(absl::StrCat("has no result ", i));
    }
    if (i >= call_.operand_count()) return Error(absl::StrCat("has no operand ", i));
    return &call_.operand(i)->shape();
  }

  // Adds an array: `inner` trailing dimensions (2: a matrix, 1: a vector, 0:
  // a scalar) of `rows` x `cols` (cols 1 for vectors) elements of `type`.
  absl::Status Add(bool result, ElementType type, int inner, int64_t rows, int64_t cols) {
    std::vector<LapackArray>& arrays = result ? plan_->results : plan_->operands;
    const int64_t index = static_cast<int64_t>(arrays.size());
    XJIT_ASSIGN_OR_RETURN(const Shape* shape, ShapeOf(result, index));
    const std::string what = absl::StrCat(result ? "result " : "operand ", index);
    if (!shape->IsArray() || shape->rank() < inner) {
      return Error(absl::StrCat(what, " is not an array of rank >= ", inner));
    }
    if (shape->element_type() != type) {
      return Error(absl::StrCat(what, " is ", ElementTypeName(shape->element_type()),
                                ", expected ", ElementTypeName(type)));
    }
    const int64_t rank = shape->rank();
    const int64_t got_rows = inner >= 1 ? shape->dimensions(rank - inner) : 1;
    const int64_t got_cols = inner == 2 ? shape->dimensions(rank - 1) : 1;
    if (got_rows != rows || got_cols != cols) {
      return Error(absl::StrCat(what, " is ", shape->ToString(false), "; expected ",
                                inner == 2 ? absl::StrCat(rows, "x", cols) : absl::StrCat(rows),
                                " in its last ", inner, " dimension(s)"));
    }
    std::vector<int64_t> batch_dims(shape->dimensions().begin(),
                                    shape->dimensions().end() - inner);
    if (!have_batch_) {
      batch_dims_ = batch_dims;
      have_batch_ = true;
    } else if (batch_dims != batch_dims_) {
      return Error(absl::StrCat(what, " has other batch dimensions than operand 0"));
    }
    if (!IsPlainLayout(*shape)) {
      return absl::UnimplementedError(absl::StrCat("custom-call \"", plan_->target, "\": ", what,
                                                   " has a layout that is not plain"));
    }
    const std::vector<int64_t> strides = PlainStrides(*shape);
    LapackArray array;
    array.type = type;
    array.rows = rows;
    array.cols = cols;
    array.row_stride = inner >= 1 ? strides[rank - inner] : 0;
    array.col_stride = inner == 2 ? strides[rank - 1] : 0;
    // Offsets in row-major order of the batch dimensions.
    const int64_t batch_rank = rank - inner;
    int64_t count = 1;
    for (int64_t d : batch_dims) count *= d;
    array.offsets.reserve(count);
    std::vector<int64_t> index_(batch_rank, 0);
    for (int64_t b = 0; b < count; ++b) {
      int64_t offset = 0;
      for (int64_t d = 0; d < batch_rank; ++d) offset += index_[d] * strides[d];
      array.offsets.push_back(offset);
      for (int64_t d = batch_rank - 1; d >= 0; --d) {
        if (++index_[d] < batch_dims[d]) break;
        index_[d] = 0;
      }
    }
    plan_->batch = count;
    arrays.push_back(std::move(array));
    return absl::OkStatus();
  }

  // Every leaf of the call must have been described.
  absl::Status CheckCounts() const {
    const int64_t results = call_.shape().IsTuple() ? call_.shape().tuple_size() : 1;
    if (call_.operand_count() != static_cast<int64_t>(plan_->operands.size()) ||
        results != static_cast<int64_t>(plan_->results.size())) {
      return Error(absl::StrCat("takes ", plan_->operands.size(), " operand(s) and gives ",
                                plan_->results.size(), " result(s); the call has ",
                                call_.operand_count(), " and ", results));
    }
    return absl::OkStatus();
  }

  // The dimensions of operand 0's (or `result`'s) last two dimensions.
  absl::StatusOr<std::pair<int64_t, int64_t>> MatrixDims(bool result, int64_t i) const {
    XJIT_ASSIGN_OR_RETURN(const Shape* shape, ShapeOf(result, i));
    if (!shape->IsArray() || shape->rank() < 2) {
      return Error(absl::StrCat(result ? "result " : "operand ", i, " is not a matrix"));
    }
    return std::make_pair(shape->dimensions(shape->rank() - 2),
                          shape->dimensions(shape->rank() - 1));
  }

 private:
  const Instruction& call_;
  JaxlibLapackPlan* plan_;
  absl::flat_hash_map<std::string, std::string> attributes_;
  std::vector<int64_t> batch_dims_;
  bool have_batch_ = false;
};

// The routine's operands and results (see jaxlib_lapack.h).
absl::Status Describe(Decoder& d, JaxlibLapackPlan& p) {
  const ElementType t = p.type;
  const ElementType real = IsComplex(t) ? ComplexComponentType(t) : t;
  const ElementType complex = IsComplex(t) ? t
                              : t == ElementType::kF32 ? ElementType::kC64
                                                       : ElementType::kC128;
  constexpr ElementType s32 = ElementType::kS32;
  switch (p.routine) {
    case LapackRoutine::kTrsm: {
      XJIT_ASSIGN_OR_RETURN(auto b, d.MatrixDims(false, 1));
      XJIT_ASSIGN_OR_RETURN(p.side, d.Char("side", "LR"));
      XJIT_ASSIGN_OR_RETURN(p.uplo, d.Char("uplo", "LU"));
      XJIT_ASSIGN_OR_RETURN(p.trans, d.Char("trans_x", "NTC"));
      XJIT_ASSIGN_OR_RETURN(p.diag, d.Char("diag", "NU"));
      const int64_t s = p.side == 'L' ? b.first : b.second;
      XJIT_RETURN_IF_ERROR(d.Add(false, t, 2, s, s));
      XJIT_RETURN_IF_ERROR(d.Add(false, t, 2, b.first, b.second));
      XJIT_RETURN_IF_ERROR(d.Add(true, t, 2, b.first, b.second));
      p.from_operand = {1};
      return absl::OkStatus();
    }
    case LapackRoutine::kGetrf:
    case LapackRoutine::kGeqrf:
    case LapackRoutine::kGeqp3: {
      XJIT_ASSIGN_OR_RETURN(auto a, d.MatrixDims(false, 0));
      const int64_t k = std::min(a.first, a.second);
      XJIT_RETURN_IF_ERROR(d.Add(false, t, 2, a.first, a.second));
      if (p.routine == LapackRoutine::kGeqp3) {
        XJIT_RETURN_IF_ERROR(d.Add(false, s32, 1, a.second, 1));
      }
      XJIT_RETURN_IF_ERROR(d.Add(true, t, 2, a.first, a.second));
      if (p.routine == LapackRoutine::kGetrf) {
        XJIT_RETURN_IF_ERROR(d.Add(true, s32, 1, k, 1));
        XJIT_RETURN_IF_ERROR(d.Add(true, s32, 0, 1, 1));
        p.from_operand = {0, -1, -1};
      } else if (p.routine == LapackRoutine::kGeqrf) {
        XJIT_RETURN_IF_ERROR(d.Add(true, t, 1, k, 1));
        p.from_operand = {0, -1};
      } else {
        XJIT_RETURN_IF_ERROR(d.Add(true, s32, 1, a.second, 1));
        XJIT_RETURN_IF_ERROR(d.Add(true, t, 1, k, 1));
        p.from_operand = {0, 1, -1};
      }
      return absl::OkStatus();
    }
    case LapackRoutine::kOrgqr: {
      XJIT_ASSIGN_OR_RETURN(auto a, d.MatrixDims(false, 0));
      XJIT_ASSIGN_OR_RETURN(const Shape* tau, d.ShapeOf(false, 1));
      const int64_t k = tau->IsArray() && tau->rank() >= 1 ? tau->dimensions(tau->rank() - 1) : -1;
      if (a.first < a.second || k < 0 || k > a.second) {
        return d.Error("needs a m x n with m >= n and taus of k <= n elements");
      }
      XJIT_RETURN_IF_ERROR(d.Add(false, t, 2, a.first, a.second));
      XJIT_RETURN_IF_ERROR(d.Add(false, t, 1, k, 1));
      XJIT_RETURN_IF_ERROR(d.Add(true, t, 2, a.first, a.second));
      p.from_operand = {0};
      return absl::OkStatus();
    }
    case LapackRoutine::kOrmqr: {
      XJIT_ASSIGN_OR_RETURN(auto a, d.MatrixDims(false, 0));
      XJIT_ASSIGN_OR_RETURN(auto c, d.MatrixDims(false, 2));
      XJIT_ASSIGN_OR_RETURN(bool left, d.Bool("left"));
      XJIT_ASSIGN_OR_RETURN(bool transpose, d.Bool("transpose"));
      p.side = left ? 'L' : 'R';
      p.trans = transpose ? (IsComplex(t) ? 'C' : 'T') : 'N';
      const int64_t q = left ? c.first : c.second;  // The order of Q.
      const int64_t k = a.second;
      if (a.first != q || k > q) return d.Error("a must be (order of Q) x k with k <= that order");
      XJIT_RETURN_IF_ERROR(d.Add(false, t, 2, q, k));
      XJIT_RETURN_IF_ERROR(d.Add(false, t, 1, k, 1));
      XJIT_RETURN_IF_ERROR(d.Add(false, t, 2, c.first, c.second));
      XJIT_RETURN_IF_ERROR(d.Add(true, t, 2, c.first, c.second));
      p.from_operand = {2};
      return absl::OkStatus();
    }
    case LapackRoutine::kPotrf:
    case LapackRoutine::kSyevd:
    case LapackRoutine::kGehrd:
    case LapackRoutine::kSytrd: {
      XJIT_ASSIGN_OR_RETURN(auto a, d.MatrixDims(false, 0));
      if (a.first != a.second) return d.Error("needs square matrices");
      const int64_t n = a.first;
      XJIT_RETURN_IF_ERROR(d.Add(false, t, 2, n, n));
      XJIT_RETURN_IF_ERROR(d.Add(true, t, 2, n, n));
      if (p.routine == LapackRoutine::kPotrf) {
        XJIT_ASSIGN_OR_RETURN(p.uplo, d.Char("uplo", "LU"));
        p.from_operand = {0, -1};
      } else if (p.routine == LapackRoutine::kSyevd) {
        XJIT_ASSIGN_OR_RETURN(p.uplo, d.Char("uplo", "LU"));
        XJIT_ASSIGN_OR_RETURN(p.mode, d.Char("mode", "NV"));
        XJIT_RETURN_IF_ERROR(d.Add(true, real, 1, n, 1));
        p.from_operand = {0, -1, -1};
      } else if (p.routine == LapackRoutine::kGehrd) {
        if (n < 1) return d.Error("needs n >= 1");
        XJIT_ASSIGN_OR_RETURN(p.ilo, d.Int("low"));
        XJIT_ASSIGN_OR_RETURN(p.ihi, d.Int("high"));
        if (p.ilo < 1 || p.ilo > std::max<int64_t>(1, p.ihi) || p.ihi > n) {
          return d.Error("needs 1 <= low <= high <= n");
        }
        XJIT_RETURN_IF_ERROR(d.Add(true, t, 1, n - 1, 1));
        p.from_operand = {0, -1, -1};
      } else {
        if (n < 1) return d.Error("needs n >= 1");
        XJIT_ASSIGN_OR_RETURN(p.uplo, d.Char("uplo", "LU"));
        XJIT_RETURN_IF_ERROR(d.Add(true, real, 1, n, 1));
        XJIT_RETURN_IF_ERROR(d.Add(true, real, 1, n - 1, 1));
        XJIT_RETURN_IF_ERROR(d.Add(true, t, 1, n - 1, 1));
        p.from_operand = {0, -1, -1, -1, -1};
      }
      return d.Add(true, s32, 0, 1, 1);
    }
    case LapackRoutine::kGesdd:
    case LapackRoutine::kGesvd: {
      XJIT_ASSIGN_OR_RETURN(auto a, d.MatrixDims(false, 0));
      XJIT_ASSIGN_OR_RETURN(p.mode, d.Char("mode", "ASNO"));
      if (p.mode == 'O') {
        return absl::UnimplementedError(
            absl::StrCat("custom-call \"", p.target, "\": mode 'O' is not supported"));
      }
      const int64_t m = a.first, n = a.second, k = std::min(m, n);
      XJIT_ASSIGN_OR_RETURN(auto u, d.MatrixDims(true, 2));
      XJIT_ASSIGN_OR_RETURN(auto vt, d.MatrixDims(true, 3));
      const int64_t u_cols = p.mode == 'A' ? m : p.mode == 'S' ? k : u.second;
      const int64_t vt_rows = p.mode == 'A' ? n : p.mode == 'S' ? k : vt.first;
      if (u.first != m || vt.second != n || vt_rows < 1) {
        return d.Error("u must be m x (m or min(m, n)) and vt (n or min(m, n)) x n");
      }
      XJIT_RETURN_IF_ERROR(d.Add(false, t, 2, m, n));
      XJIT_RETURN_IF_ERROR(d.Add(true, t, 2, m, n));
      XJIT_RETURN_IF_ERROR(d.Add(true, real, 1, k, 1));
      XJIT_RETURN_IF_ERROR(d.Add(true, t, 2, m, u_cols));
      XJIT_RETURN_IF_ERROR(d.Add(true, t, 2, vt_rows, n));
      XJIT_RETURN_IF_ERROR(d.Add(true, s32, 0, 1, 1));
      p.from_operand = {0, -1, -1, -1, -1};
      return absl::OkStatus();
    }
    case LapackRoutine::kGeev: {
      XJIT_ASSIGN_OR_RETURN(auto a, d.MatrixDims(false, 0));
      if (a.first != a.second) return d.Error("needs square matrices");
      const int64_t n = a.first;
      XJIT_ASSIGN_OR_RETURN(p.jobvl, d.Char("compute_left", "NV"));
      XJIT_ASSIGN_OR_RETURN(p.jobvr, d.Char("compute_right", "NV"));
      XJIT_RETURN_IF_ERROR(d.Add(false, t, 2, n, n));
      XJIT_RETURN_IF_ERROR(d.Add(true, t, 1, n, 1));
      if (!IsComplex(t)) XJIT_RETURN_IF_ERROR(d.Add(true, t, 1, n, 1));
      XJIT_RETURN_IF_ERROR(d.Add(true, complex, 2, n, n));
      XJIT_RETURN_IF_ERROR(d.Add(true, complex, 2, n, n));
      XJIT_RETURN_IF_ERROR(d.Add(true, s32, 0, 1, 1));
      p.from_operand.assign(p.results.size(), -1);
      return absl::OkStatus();
    }
    case LapackRoutine::kGees: {
      XJIT_ASSIGN_OR_RETURN(auto a, d.MatrixDims(false, 0));
      if (a.first != a.second) return d.Error("needs square matrices");
      const int64_t n = a.first;
      XJIT_ASSIGN_OR_RETURN(p.mode, d.Char("mode", "NV"));
      XJIT_ASSIGN_OR_RETURN(p.sort, d.Char("sort", "NS"));
      if (p.sort != 'N') {  // jaxlib's own error.
        return absl::UnimplementedError(absl::StrCat(
            "custom-call \"", p.target, "\": ordering eigenvalues on the diagonal is not implemented"));
      }
      XJIT_RETURN_IF_ERROR(d.Add(false, t, 2, n, n));
      XJIT_RETURN_IF_ERROR(d.Add(true, t, 2, n, n));
      XJIT_RETURN_IF_ERROR(d.Add(true, t, 2, n, n));
      XJIT_RETURN_IF_ERROR(d.Add(true, t, 1, n, 1));
      if (!IsComplex(t)) XJIT_RETURN_IF_ERROR(d.Add(true, t, 1, n, 1));
      XJIT_RETURN_IF_ERROR(d.Add(true, s32, 0, 1, 1));
      XJIT_RETURN_IF_ERROR(d.Add(true, s32, 0, 1, 1));
      p.from_operand.assign(p.results.size(), -1);
      p.from_operand[0] = 0;
      return absl::OkStatus();
    }
    case LapackRoutine::kGtsv: {
      XJIT_ASSIGN_OR_RETURN(auto b, d.MatrixDims(false, 3));
      const int64_t m = b.first;
      for (int i = 0; i < 3; ++i) XJIT_RETURN_IF_ERROR(d.Add(false, t, 1, m, 1));
      XJIT_RETURN_IF_ERROR(d.Add(false, t, 2, m, b.second));
      for (int i = 0; i < 3; ++i) XJIT_RETURN_IF_ERROR(d.Add(true, t, 1, m, 1));
      XJIT_RETURN_IF_ERROR(d.Add(true, t, 2, m, b.second));
      XJIT_RETURN_IF_ERROR(d.Add(true, s32, 0, 1, 1));
      p.from_operand = {0, 1, 2, 3, -1};
      return absl::OkStatus();
    }
  }
  return absl::InternalError("unknown LAPACK routine");
}

int64_t Aligned(int64_t bytes) { return (bytes + 63) / 64 * 64; }

}  // namespace

bool IsJaxlibLapackTarget(absl::string_view target) {
  return absl::StartsWith(target, kPrefix) && absl::EndsWith(target, kSuffix);
}

std::string JaxlibLapackPlan::ToString() const {
  std::string text = absl::StrCat(target, " batch=", batch);
  for (const LapackArray& array : operands) {
    absl::StrAppend(&text, " in=", array.rows, "x", array.cols);
  }
  absl::StrAppend(&text, " lwork=", lwork, " lrwork=", lrwork, " liwork=", liwork,
                  " scratch=", scratch_bytes);
  return text;
}

absl::StatusOr<JaxlibLapackPlan> PlanJaxlibLapack(const Instruction& custom_call) {
  JaxlibLapackPlan plan;
  plan.target = custom_call.attrs().custom_call_target;
  const absl::string_view target = plan.target;
  if (custom_call.opcode() != Opcode::kCustomCall || !IsJaxlibLapackTarget(target)) {
    return absl::InvalidArgumentError("not a jaxlib LAPACK custom call");
  }
  absl::string_view body = target.substr(kPrefix.size());
  body.remove_suffix(kSuffix.size());
  const RoutineName* found = nullptr;
  if (!body.empty()) {
    switch (body[0]) {
      case 's': plan.type = ElementType::kF32; break;
      case 'd': plan.type = ElementType::kF64; break;
      case 'c': plan.type = ElementType::kC64; break;
      case 'z': plan.type = ElementType::kC128; break;
      default: body = ""; break;
    }
  }
  const bool complex = IsComplex(plan.type);
  for (const RoutineName& routine : kRoutines) {
    if (!body.empty() && body.substr(1) == routine.name &&
        (routine.kinds & (complex ? 2 : 1)) != 0) {
      found = &routine;
    }
  }
  if (found == nullptr) {
    return absl::UnimplementedError(absl::StrCat(
        "custom-call target \"", target, "\" is a jaxlib LAPACK target xjit does not implement "
        "(see docs/linalg.md for the supported ones)"));
  }
  plan.routine = found->routine;
  Decoder decoder(custom_call, &plan);
  XJIT_RETURN_IF_ERROR(Describe(decoder, plan));
  XJIT_RETURN_IF_ERROR(decoder.CheckCounts());
  if (plan.operands.size() > kMaxLapackArrays || plan.results.size() > kMaxLapackArrays) {
    return absl::InternalError(absl::StrCat("custom-call \"", target, "\": too many arrays"));
  }
  for (const std::vector<LapackArray>* arrays : {&plan.operands, &plan.results}) {
    for (const LapackArray& array : *arrays) {
      if (array.rows > INT_MAX / 2 || array.cols > INT_MAX / 2) {
        return absl::UnimplementedError(
            absl::StrCat("custom-call \"", target, "\": too large for LAPACK's 32-bit indices"));
      }
    }
  }
  XJIT_RETURN_IF_ERROR(SizeLapackWorkspaces(&plan));
  // Scratch: a packed copy of every result and of every operand no result
  // starts from, then the workspaces.
  int64_t bytes = 0;
  for (LapackArray& array : plan.results) {
    array.packed_offset = bytes;
    bytes += Aligned(array.Elements() * ByteWidth(array.type));
  }
  for (size_t i = 0; i < plan.operands.size(); ++i) {
    LapackArray& array = plan.operands[i];
    auto aliased = std::find(plan.from_operand.begin(), plan.from_operand.end(),
                             static_cast<int>(i));
    if (aliased != plan.from_operand.end()) {
      array.packed_offset = plan.results[aliased - plan.from_operand.begin()].packed_offset;
      continue;
    }
    array.packed_offset = bytes;
    bytes += Aligned(array.Elements() * ByteWidth(array.type));
  }
  const ElementType real = complex ? ComplexComponentType(plan.type) : plan.type;
  plan.work_offset = bytes;
  bytes += Aligned(plan.lwork * ByteWidth(plan.type));
  plan.rwork_offset = bytes;
  bytes += Aligned(plan.lrwork * ByteWidth(real));
  plan.iwork_offset = bytes;
  bytes += Aligned(plan.liwork * static_cast<int64_t>(sizeof(blasint)));
  plan.extra_offset = bytes;
  if (plan.routine == LapackRoutine::kGeev && !complex) {
    const int64_t n = plan.operands[0].rows;
    bytes += Aligned(2 * n * n * ByteWidth(real));
  }
  plan.scratch_bytes = bytes;
  return plan;
}

}  // namespace xjit::runtime::host
