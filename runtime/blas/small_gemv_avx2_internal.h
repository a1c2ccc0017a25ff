// The AVX2+FMA versions of SmallGemv's two forms (small_gemv.h), for CPUs
// without AVX-512F: the same loops with 8-lane vectors. Called by
// small_gemv.cc only where the CPU has AVX2 and FMA (kernel_isa.h) and
// PreferSmallGemv took the shape (rows of at most 64 elements for dots).
#ifndef XJIT_RUNTIME_BLAS_SMALL_GEMV_AVX2_INTERNAL_H_
#define XJIT_RUNTIME_BLAS_SMALL_GEMV_AVX2_INTERNAL_H_

#include "runtime/blas/small_gemv.h"

namespace xjit::runtime::blas {

// y[r] = sum_c P[r, c] x[c]: 8 rows at a time, each a vector accumulator
// over c, the 8 summed across lanes together by a horizontal-add tree.
void SmallGemvDotsAvx2(const SmallGemvArgs& g);

// y[c] = sum_r P[r, c] x[r]: 32 columns at a time in registers, even and
// odd rows on separate accumulators, added at the end.
void SmallGemvAxpysAvx2(const SmallGemvArgs& g);

}  // namespace xjit::runtime::blas

#endif  // XJIT_RUNTIME_BLAS_SMALL_GEMV_AVX2_INTERNAL_H_
