// Typed folds of the recognised reducers and the gather-then-fold AllReduce
// (see communicator.h).
#include "runtime/collectives/communicator.h"

#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"

namespace xjit::collectives {
namespace {

// The evaluator's IEEE maximum/minimum (interpreter/elementwise.cc): a NaN
// operand wins (the first one), and -0 orders below +0.
template <typename F>
F FloatMax(F a, F b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == 0 && b == 0) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

template <typename F>
F FloatMin(F a, F b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == 0 && b == 0) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

template <typename T>
T Combine(ReductionKind kind, T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    switch (kind) {
      case ReductionKind::kSum: return a + b;
      case ReductionKind::kProduct: return a * b;
      case ReductionKind::kMax: return FloatMax(a, b);
      case ReductionKind::kMin: return FloatMin(a, b);
      default: return a;  // CanFold excludes the rest.
    }
  } else {
    // Integer arithmetic wraps: computed unsigned.
    using U = std::make_unsigned_t<T>;
    switch (kind) {
      case ReductionKind::kSum: return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
      case ReductionKind::kProduct:
        // Promote so that narrow types do not multiply as (signed) int.
        return static_cast<T>(static_cast<uint64_t>(static_cast<U>(a)) *
                              static_cast<uint64_t>(static_cast<U>(b)));
      case ReductionKind::kMax: return a >= b ? a : b;
      case ReductionKind::kMin: return a <= b ? a : b;
      case ReductionKind::kAnd: return static_cast<T>(a & b);
      case ReductionKind::kOr: return static_cast<T>(a | b);
    }
    return a;
  }
}

template <typename T>
void Fold(ReductionKind kind, const void* values, int64_t members, int64_t count, void* out) {
  // Element by element with memcpy: the buffers need no alignment.
  const uint8_t* in = static_cast<const uint8_t*>(values);
  uint8_t* result = static_cast<uint8_t*>(out);
  for (int64_t i = 0; i < count; ++i) {
    T accumulator;
    std::memcpy(&accumulator, in + i * sizeof(T), sizeof(T));
    for (int64_t m = 1; m < members; ++m) {
      T next;
      std::memcpy(&next, in + (m * count + i) * sizeof(T), sizeof(T));
      accumulator = Combine(kind, accumulator, next);
    }
    std::memcpy(result + i * sizeof(T), &accumulator, sizeof(T));
  }
}

void FoldPred(ReductionKind kind, const void* values, int64_t members, int64_t count,
              void* out) {
  const uint8_t* in = static_cast<const uint8_t*>(values);
  uint8_t* result = static_cast<uint8_t*>(out);
  // The evaluator's pred rules: and/multiply/minimum are "and", the others "or".
  const bool is_and = kind == ReductionKind::kAnd || kind == ReductionKind::kProduct ||
                      kind == ReductionKind::kMin;
  for (int64_t i = 0; i < count; ++i) {
    bool accumulator = in[i] != 0;
    for (int64_t m = 1; m < members; ++m) {
      const bool next = in[m * count + i] != 0;
      accumulator = is_and ? accumulator && next : accumulator || next;
    }
    result[i] = accumulator ? 1 : 0;
  }
}

}  // namespace

bool CanFold(ElementType type, ReductionKind kind) {
  const bool bitwise = kind == ReductionKind::kAnd || kind == ReductionKind::kOr;
  switch (type) {
    case ElementType::kPred:
      return true;
    case ElementType::kF32: case ElementType::kF64:
      return !bitwise;
    case ElementType::kS8: case ElementType::kS16: case ElementType::kS32: case ElementType::kS64:
    case ElementType::kU8: case ElementType::kU16: case ElementType::kU32: case ElementType::kU64:
      return true;
    default:
      return false;
  }
}

void FoldInGroupOrder(ElementType type, ReductionKind kind, const void* values,
                      int64_t members, int64_t count, void* out) {
  switch (type) {
    case ElementType::kPred: return FoldPred(kind, values, members, count, out);
    case ElementType::kF32: return Fold<float>(kind, values, members, count, out);
    case ElementType::kF64: return Fold<double>(kind, values, members, count, out);
    case ElementType::kS8: return Fold<int8_t>(kind, values, members, count, out);
    case ElementType::kS16: return Fold<int16_t>(kind, values, members, count, out);
    case ElementType::kS32: return Fold<int32_t>(kind, values, members, count, out);
    case ElementType::kS64: return Fold<int64_t>(kind, values, members, count, out);
    case ElementType::kU8: return Fold<uint8_t>(kind, values, members, count, out);
    case ElementType::kU16: return Fold<uint16_t>(kind, values, members, count, out);
    case ElementType::kU32: return Fold<uint32_t>(kind, values, members, count, out);
    case ElementType::kU64: return Fold<uint64_t>(kind, values, members, count, out);
    default: XJIT_CHECK(false);
  }
}

absl::Status Communicator::AllReduce(const Instruction& site, absl::Span<const int64_t> group,
                                     ElementType type, ReductionKind kind, const void* in,
                                     void* out, int64_t count) {
  const int64_t bytes = count * ByteWidth(type);
  std::vector<uint8_t> all(static_cast<size_t>(bytes) * group.size());
  XJIT_RETURN_IF_ERROR(AllGather(
      site, group, absl::MakeConstSpan(static_cast<const uint8_t*>(in), bytes), absl::MakeSpan(all)));
  FoldInGroupOrder(type, kind, all.data(), static_cast<int64_t>(group.size()), count, out);
  return absl::OkStatus();
}

absl::Status Communicator::Send(const Instruction& site, int64_t /*peer*/, int64_t /*tag*/,
                                absl::Span<const uint8_t> /*bytes*/) {
  return absl::UnimplementedError(
      absl::StrCat(site.name(), ": this transport has no point-to-point send"));
}

absl::Status Communicator::Recv(const Instruction& site, int64_t /*peer*/, int64_t /*tag*/,
                                absl::Span<uint8_t> /*bytes*/) {
  return absl::UnimplementedError(
      absl::StrCat(site.name(), ": this transport has no point-to-point recv"));
}

}  // namespace xjit::collectives
