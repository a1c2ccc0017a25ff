// Between jaxlib_lapack.cc (decoding and checking a call) and
// jaxlib_lapack_run.cc (LAPACK's workspace queries and the run). Private to
// runtime/host/jaxlib_lapack*.cc.
#ifndef XJIT_RUNTIME_HOST_JAXLIB_LAPACK_INTERNAL_H_
#define XJIT_RUNTIME_HOST_JAXLIB_LAPACK_INTERNAL_H_

#include <cstddef>

#include "absl/status/status.h"
#include "runtime/host/jaxlib_lapack.h"

namespace xjit::runtime::host {

// The most operands, and the most results, a plan may have (the routines
// have at most 4 and 7): the run keeps per-array facts in arrays this long.
inline constexpr size_t kMaxLapackArrays = 16;

// Sets plan->lwork, lrwork and liwork (in elements, at least 1) from
// LAPACK's own queries (lwork = -1) or its documented minimums, for a plan
// whose routine, type, attributes and arrays are set.
absl::Status SizeLapackWorkspaces(JaxlibLapackPlan* plan);

}  // namespace xjit::runtime::host

#endif  // XJIT_RUNTIME_HOST_JAXLIB_LAPACK_INTERNAL_H_
