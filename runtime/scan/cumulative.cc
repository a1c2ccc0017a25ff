// The forward cumulative reduce-window (see cumulative.h).
#include "runtime/scan/cumulative.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace xjit::runtime::scan {
namespace {

using collectives::ReductionKind;

const char* KindName(ReductionKind kind) {
  switch (kind) {
    case ReductionKind::kSum: return "sum";
    case ReductionKind::kProduct: return "product";
    case ReductionKind::kMax: return "max";
    case ReductionKind::kMin: return "min";
    case ReductionKind::kAnd: return "and";
    case ReductionKind::kOr: return "or";
  }
  return "?";
}

// out[j] = f(a[j], b[j]) for j < n, in the evaluator's scalar semantics.
// `out` may be `a`.
void FoldPair(const CumulativePlan& plan, const void* a, const void* b, int64_t n, void* out) {
  const void* inputs[2] = {a, b};
  collectives::FoldRange(plan.type, plan.kind, inputs, 2, 0, n, out);
}

// dst[j * dst_stride] = src[j * src_stride] for j < count, elements of
// `width` bytes, strides in elements.
template <typename Word>
void CopyStridedWords(const uint8_t* src, int64_t src_stride, uint8_t* dst, int64_t dst_stride,
                      int64_t count) {
  for (int64_t j = 0; j < count; ++j) {
    std::memcpy(dst + j * dst_stride * sizeof(Word), src + j * src_stride * sizeof(Word),
                sizeof(Word));
  }
}

void CopyStrided(const uint8_t* src, int64_t src_stride, uint8_t* dst, int64_t dst_stride,
                 int64_t count, int64_t width) {
  // A fixed width per loop: memcpy of a constant size is one move.
  switch (width) {
    case 1: return CopyStridedWords<uint8_t>(src, src_stride, dst, dst_stride, count);
    case 2: return CopyStridedWords<uint16_t>(src, src_stride, dst, dst_stride, count);
    case 4: return CopyStridedWords<uint32_t>(src, src_stride, dst, dst_stride, count);
    default: return CopyStridedWords<uint64_t>(src, src_stride, dst, dst_stride, count);
  }
}

// Every window folded whole, as the evaluator does: for an init value that
// is not the reducer's fixed point.
void FoldEachWindow(const CumulativePlan& plan, const uint8_t* in, const uint8_t* init,
                    uint8_t* out) {
  const int64_t width = ByteWidth(plan.type);
  uint8_t acc[16];
  for (int64_t o = 0; o < plan.outer; ++o) {
    for (int64_t r = 0; r < plan.inner; ++r) {
      for (int64_t i = 0; i < plan.length; ++i) {
        std::memcpy(acc, init, width);
        const int64_t pads = plan.length - 1 - i;
        for (int64_t k = 0; k < pads; ++k) FoldPair(plan, acc, init, 1, acc);
        for (int64_t k = 0; k <= i; ++k) {
          FoldPair(plan, acc, in + ((o * plan.length + k) * plan.inner + r) * width, 1, acc);
        }
        std::memcpy(out + ((o * plan.length + i) * plan.inner + r) * width, acc, width);
      }
    }
  }
}

// out_i = f(out_{i-1}, x_i) over rows of `inner` contiguous elements
// (out_{-1} = the init row): collectives::ScanRows's typed loops, a fold
// call per row for the types they leave out (pred, narrow floats).
void ScanRows(const CumulativePlan& plan, const uint8_t* in, const uint8_t* init_row,
              int64_t inner, uint8_t* out) {
  if (collectives::ScanRows(plan.type, plan.kind, init_row, in, plan.length, inner, out)) return;
  const int64_t row_bytes = inner * ByteWidth(plan.type);
  const uint8_t* previous = init_row;
  for (int64_t i = 0; i < plan.length; ++i) {
    FoldPair(plan, previous, in + i * row_bytes, inner, out + i * row_bytes);
    previous = out + i * row_bytes;
  }
}

}  // namespace

std::string CumulativePlan::ToString() const {
  return absl::StrCat("cumulative ", KindName(kind), " of ", ElementTypeName(type), " along ",
                      length, " (", outer, " outer x ", inner, " inner)");
}

CumulativePlan PlanCumulative(ElementType type, ReductionKind kind, int64_t outer, int64_t length,
                              int64_t inner) {
  CumulativePlan plan;
  plan.type = type;
  plan.kind = kind;
  plan.outer = outer;
  plan.length = length;
  plan.inner = inner;
  const int64_t width = ByteWidth(type);
  if (inner == 1) {
    // About 32 KiB of rows per block, so that both blocks stay in L1/L2.
    plan.block_rows =
        std::clamp<int64_t>(32768 / std::max<int64_t>(length * width, 1), 1, 64);
    plan.block_rows = std::max<int64_t>(std::min(plan.block_rows, outer), 1);
    plan.scratch_bytes = (2 * length + 1) * plan.block_rows * width;
  } else {
    plan.scratch_bytes = inner * width;  // The init row.
  }
  return plan;
}

void RunCumulativeCall(const void* plan_pointer, void* const* buffers, void* scratch) {
  const CumulativePlan& plan = *static_cast<const CumulativePlan*>(plan_pointer);
  const uint8_t* in = static_cast<const uint8_t*>(buffers[0]);
  const uint8_t* init = static_cast<const uint8_t*>(buffers[1]);
  uint8_t* out = static_cast<uint8_t*>(buffers[2]);
  const int64_t width = ByteWidth(plan.type);
  if (plan.outer == 0 || plan.length == 0 || plan.inner == 0) return;
  uint8_t twice[16];
  FoldPair(plan, init, init, 1, twice);
  if (std::memcmp(twice, init, width) != 0) return FoldEachWindow(plan, in, init, out);

  uint8_t* work = static_cast<uint8_t*>(scratch);
  if (plan.inner > 1) {
    for (int64_t r = 0; r < plan.inner; ++r) std::memcpy(work + r * width, init, width);
    const int64_t slab = plan.length * plan.inner * width;
    for (int64_t o = 0; o < plan.outer; ++o) {
      ScanRows(plan, in + o * slab, work, plan.inner, out + o * slab);
    }
    return;
  }
  // Scans along contiguous rows: a block of rows is transposed, so that
  // each fold step runs across the block, scanned, and transposed back. A
  // block of one row (a long row, or the only one) is scanned where it
  // lies, in one typed loop: a fold step per element cost 10x more
  // (jraph_gcn's cumsum of s32[8192]: 5% of its run).
  const int64_t rows = plan.block_rows;
  if (rows == 1) {
    bool scanned = true;
    for (int64_t o = 0; o < plan.outer && scanned; ++o) {
      const int64_t offset = o * plan.length * width;
      scanned = collectives::ScanRows(plan.type, plan.kind, init, in + offset, plan.length, 1,
                                      out + offset);
    }
    if (scanned) return;
  }
  uint8_t* transposed = work;
  uint8_t* scanned = work + plan.length * rows * width;
  uint8_t* init_row = scanned + plan.length * rows * width;
  for (int64_t k = 0; k < rows; ++k) std::memcpy(init_row + k * width, init, width);
  for (int64_t first = 0; first < plan.outer; first += rows) {
    const int64_t block = std::min(rows, plan.outer - first);
    const uint8_t* block_in = in + first * plan.length * width;
    uint8_t* block_out = out + first * plan.length * width;
    for (int64_t k = 0; k < block; ++k) {
      CopyStrided(block_in + k * plan.length * width, 1, transposed + k * width, block,
                  plan.length, width);
    }
    ScanRows(plan, transposed, init_row, block, scanned);
    for (int64_t k = 0; k < block; ++k) {
      CopyStrided(scanned + k * width, block, block_out + k * plan.length * width, 1, plan.length,
                  width);
    }
  }
}

}  // namespace xjit::runtime::scan
