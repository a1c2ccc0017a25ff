// The buffer plan of an Executable: where every value of the entry computation
// lives while the program runs.
//
// A slot is one array: a byte range in one of four places (a caller's
// parameter buffer, the per-run temporary arena, a constant owned by the
// Executable, or the caller's result buffer), holding ByteSize(shape) bytes
// in the layout's physical form (exactly Literal::data()). A tuple value is
// the list of its array leaves' slots. The caller's parameter and result
// buffers hold tuples flattened: their array leaves one after another, depth
// first, each leaf at the sum of the preceding leaves' sizes (FlatOffset).
//
// The compile driver fills the plan from buffer allocation's analysis
// (passes/buffer_plan.h): values whose lifetimes do not overlap share arena
// bytes, and an elementwise step may write over an operand that dies there,
// so several slots may name the same bytes.
//
// Library-call steps (BLAS dot and convolution) also need working memory (an
// im2col image, dense copies of operands): one scratch range at the end of
// the arena, as large as the largest call needs, shared by those steps
// because they run one after another. Being in the arena, it is per run.
#ifndef XJIT_RUNTIME_BUFFER_PLAN_H_
#define XJIT_RUNTIME_BUFFER_PLAN_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "ir/shape.h"

namespace xjit::runtime {

// Arena ranges start at multiples of this (a cache line, and more than any
// vector load needs).
inline constexpr int64_t kBufferAlignment = 64;

struct BufferSlot {
  enum class Kind : uint8_t { kParameter, kTemp, kConstant, kResult };
  Kind kind = Kind::kTemp;
  // kParameter: the entry parameter number; kConstant: the constant number.
  int64_t index = 0;
  // Byte offset of the range within its place.
  int64_t offset = 0;
  // Byte size of the range (ByteSize(shape)).
  int64_t size = 0;
  // The value's shape (with layouts).
  Shape shape;
};

struct BufferPlan {
  std::vector<BufferSlot> slots;
  // Size of the per-run temporary arena, scratch included.
  int64_t temp_bytes = 0;
  // The scratch range of library-call steps within the arena (offset is a
  // multiple of kBufferAlignment; size 0 when no step needs any).
  int64_t scratch_offset = 0;
  int64_t scratch_bytes = 0;
  // Size of the flattened result.
  int64_t result_bytes = 0;
};

// Byte offsets of subshapes within the flattened form of shapes. Each
// tuple's element offsets are computed on first use and kept, keyed by the
// tuple shape's address (so the shapes must outlive this and not change):
// asked for every leaf of a root tuple of n scalars, a walk over the tuple
// per question made compiles quadratic in n.
class FlatOffsets {
 public:
  // Byte offset of the subshape at `index` within the flattened form of `shape`.
  int64_t Of(const Shape& shape, const ShapeIndex& index);

 private:
  absl::flat_hash_map<const Shape*, std::vector<int64_t>> element_offsets_;
};
// The number of array leaves of `shape` (1 for an array, 0 for a token).
int64_t ArrayLeafCount(const Shape& shape);

}  // namespace xjit::runtime

#endif  // XJIT_RUNTIME_BUFFER_PLAN_H_
