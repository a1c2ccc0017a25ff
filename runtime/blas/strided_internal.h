// Strided loops shared by the dot and convolution kernels: an odometer over
// up to kMaxLoopDims dimensions that carries up to three running offsets, and
// the strided copy between an operand and its dense image in scratch.
// Private to runtime/blas.
#ifndef XJIT_RUNTIME_BLAS_STRIDED_INTERNAL_H_
#define XJIT_RUNTIME_BLAS_STRIDED_INTERNAL_H_

#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ir/shape.h"
#include "runtime/blas/dot.h"

namespace xjit::runtime::blas::internal {

// Calls f(o0, o1, o2) for every index of `sizes[0..nd)` (row-major, last
// dimension fastest) with oK = base_K + sum(index[d] * strides_K[d]).
// nd == 0 calls f once; a zero size calls it never.
template <typename F>
inline void ForEachOffset(int nd, const int64_t* sizes, const int64_t* s0, const int64_t* s1,
                          const int64_t* s2, int64_t b0, int64_t b1, int64_t b2, F&& f) {
  for (int d = 0; d < nd; ++d) {
    if (sizes[d] == 0) return;
  }
  if (nd == 0) {
    f(b0, b1, b2);
    return;
  }
  int64_t counter[kMaxLoopDims] = {};
  int64_t o0 = b0, o1 = b1, o2 = b2;
  const int inner = nd - 1;
  while (true) {
    // The innermost dimension as a plain loop.
    int64_t i0 = o0, i1 = o1, i2 = o2;
    for (int64_t i = 0; i < sizes[inner]; ++i) {
      f(i0, i1, i2);
      i0 += s0[inner];
      i1 += s1[inner];
      i2 += s2[inner];
    }
    int d = inner - 1;
    for (; d >= 0; --d) {
      if (++counter[d] < sizes[d]) {
        o0 += s0[d];
        o1 += s1[d];
        o2 += s2[d];
        break;
      }
      o0 -= s0[d] * (sizes[d] - 1);
      o1 -= s1[d] * (sizes[d] - 1);
      o2 -= s2[d] * (sizes[d] - 1);
      counter[d] = 0;
    }
    if (d < 0) return;
  }
}

// Element strides of every dimension of an array under its (plain) layout.
std::vector<int64_t> ElementStrides(const Shape& shape);
// OK for an array with a plain layout (see dot.h); `what` names it in errors.
absl::Status CheckPlainArray(const Shape& shape, absl::string_view what);

// Copies between `operand` (at copy.operand_offset elements, strided) and
// `image` (dense, at copy.scratch_offset bytes of scratch). to_image chooses
// the direction. With parts > 1, only part `part` of the copy (a range of
// its outermost dimension of at least `parts` elements): the parts 0 ..
// parts-1, run on as many threads at once, make the whole copy.
void RunStridedCopy(const StridedCopy& copy, const void* operand_in, void* operand_out,
                    uint8_t* scratch, bool to_image, int part = 0, int parts = 1);

}  // namespace xjit::runtime::blas::internal

#endif  // XJIT_RUNTIME_BLAS_STRIDED_INTERNAL_H_
