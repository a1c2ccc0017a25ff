// Internals shared by the C API's implementation files: what each opaque
// handle of xjit.h holds, and the status helpers every entry point uses. Only
// capi/*.cc include it; it is not part of the public API.
//
// Contract of the whole C API: no C++ exception and no failed check escapes a
// C entry point. Calls that return a status run their body under Guard(),
// which turns exceptions into statuses (std::bad_alloc becomes
// RESOURCE_EXHAUSTED); graph-building calls record the builder's first error
// instead (c_api_builder.cc).
//
// The implementation follows the header's sections: c_api_status.cc (status),
// c_api_shapes.cc (element types, shapes, modules), c_api_builder.cc (graph
// building), c_api_execute.cc (custom calls, compilation and execution).
#ifndef XJIT_JIT_CAPI_C_API_INTERNAL_H_
#define XJIT_JIT_CAPI_C_API_INTERNAL_H_

#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "capi/xjit.h"
#include "ir/builder.h"
#include "ir/element_type.h"
#include "ir/module.h"
#include "ir/shape.h"

namespace xjit::collectives {
class Communicator;
}  // namespace xjit::collectives

namespace xjit::capi {

// State shared by a builder and all its sub-builders.
struct BuilderTree {
  int64_t tag = 0;  // High half of this tree's computation ids.
  std::vector<xjit::Computation*> computations;
  // Once the module is built its computations belong to the caller's
  // xjit_module, so no builder of the tree may refer to them again.
  bool built = false;
};

// Runs a compiled program: flattened parameter buffers in, the flattened
// result (tuple leaves one after another) out. Must be safe to call from many
// threads at once.
class Runner {
 public:
  virtual ~Runner() = default;
  virtual absl::Status Run(absl::Span<const void* const> parameters, void* result) const = 0;
  // Runs parameters.size() in-process replicas at once: replica r reads
  // parameters[r] and writes the flattened results[r].
  virtual absl::Status RunReplicated(absl::Span<const std::vector<const void*>> parameters,
                                     absl::Span<void* const> results) const = 0;
  // Runs replica communicator.replica_id() of a run whose other replicas
  // are reached through `communicator` (MPI ranks): as Run otherwise.
  virtual absl::Status RunAsReplica(collectives::Communicator& communicator,
                                    absl::Span<const void* const> parameters,
                                    void* result) const = 0;
};

}  // namespace xjit::capi

// ---------------------------------------------------------------------------
// Handle types: the structs behind xjit.h's opaque pointers.

struct xjit_status {
  absl::StatusCode code;
  std::string message;
};

struct xjit_shape {
  xjit::Shape shape;
};

struct xjit_module {
  std::unique_ptr<xjit::Module> module;
};

struct xjit_builder {
  int64_t tag = 0;  // High half of this builder's op ids.
  std::shared_ptr<xjit::capi::BuilderTree> tree;
  std::unique_ptr<xjit::Builder> builder;
  std::vector<xjit::Op> ops;
  bool is_sub = false;
};

struct xjit_compile_options {
  xjit_backend backend = XJIT_BACKEND_JIT;
  std::string isa = "auto";
  int threads = 1;
  bool perf_map = false;
  bool jitdump = false;
  bool passes = true;
  std::string dump_dir;
  int64_t max_while_iterations = -1;
};

struct xjit_executable {
  xjit_backend backend = XJIT_BACKEND_JIT;
  std::vector<xjit::Shape> parameter_shapes;
  xjit::Shape result_shape;
  std::vector<xjit::Shape> result_leaves;
  std::vector<int64_t> leaf_offsets;  // Within the flattened result.
  int64_t result_bytes = 0;
  std::unique_ptr<xjit::capi::Runner> runner;
  // What the compile produced, for xjit_executable_describe.
  std::string description;
};

namespace xjit::capi {

// NULL for OK; otherwise a new status that the caller frees.
xjit_status* MakeStatus(const absl::Status& status);

// A new INVALID_ARGUMENT status.
xjit_status* InvalidArgument(absl::string_view message);

// A malloc'd copy of `s` (what xjit_string_free frees); null when out of
// memory.
char* CopyString(const std::string& s);

// Runs `body` (returning absl::Status) and converts exceptions.
template <typename F>
xjit_status* Guard(F&& body) {
  try {
    return MakeStatus(body());
  } catch (const std::bad_alloc&) {
    return MakeStatus(absl::ResourceExhaustedError("out of memory"));
  } catch (const std::exception& e) {
    return MakeStatus(absl::InternalError(absl::StrCat("internal error: ", e.what())));
  } catch (...) {
    return MakeStatus(absl::InternalError("internal error"));
  }
}

inline bool ValidElementType(int type) { return type >= 0 && type < XJIT_NUM_ELEMENT_TYPES; }

inline ElementType ToElementType(xjit_element_type type) { return static_cast<ElementType>(type); }

}  // namespace xjit::capi

#endif  // XJIT_JIT_CAPI_C_API_INTERNAL_H_
