// Propagation helpers for absl::Status / absl::StatusOr, and XJIT_CHECK for
// invariants whose failure is a bug in xjit (never for user input).
#ifndef XJIT_IR_STATUS_MACROS_H_
#define XJIT_IR_STATUS_MACROS_H_

#include <cstdio>
#include <cstdlib>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define XJIT_RETURN_IF_ERROR(expr)                \
  do {                                            \
    ::absl::Status xjit_status_ = (expr);         \
    if (!xjit_status_.ok()) return xjit_status_;  \
  } while (0)

#define XJIT_CONCAT_INNER_(a, b) a##b
#define XJIT_CONCAT_(a, b) XJIT_CONCAT_INNER_(a, b)
#define XJIT_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(*tmp)
// XJIT_ASSIGN_OR_RETURN(auto x, F()) declares x; XJIT_ASSIGN_OR_RETURN(x, F())
// assigns an existing variable.
#define XJIT_ASSIGN_OR_RETURN(lhs, expr) \
  XJIT_ASSIGN_OR_RETURN_IMPL_(XJIT_CONCAT_(xjit_statusor_, __LINE__), lhs, expr)

#define XJIT_CHECK(cond)                                                             \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      std::fprintf(stderr, "%s:%d: xjit internal error: check failed: %s\n", __FILE__, \
                   __LINE__, #cond);                                                 \
      std::abort();                                                                  \
    }                                                                                \
  } while (0)

#endif  // XJIT_IR_STATUS_MACROS_H_
