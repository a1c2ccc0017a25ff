// The C API's statuses (xjit.h, section "Status"): reading and freeing a
// status, code names, xjit_string_free, xjit_version; and MakeStatus /
// InvalidArgument / CopyString (declared in c_api_internal.h), which every
// other part uses to report errors and return strings.
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "capi/c_api_internal.h"
#include "capi/xjit.h"

// The C codes are absl::StatusCode's values (xjit_status_code casts).
static_assert(XJIT_UNIMPLEMENTED == static_cast<int>(absl::StatusCode::kUnimplemented));
static_assert(XJIT_UNAUTHENTICATED == static_cast<int>(absl::StatusCode::kUnauthenticated));

namespace xjit::capi {

xjit_status* MakeStatus(const absl::Status& status) {
  if (status.ok()) return nullptr;
  try {
    return new xjit_status{status.code(), std::string(status.message())};
  } catch (...) {
    // Out of memory while reporting an error: a static status would be freed
    // by the caller, so the best we can do is a minimal allocation.
    return new (std::nothrow) xjit_status{absl::StatusCode::kResourceExhausted, ""};
  }
}

xjit_status* InvalidArgument(absl::string_view message) {
  return MakeStatus(absl::InvalidArgumentError(message));
}

char* CopyString(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out == nullptr) return nullptr;
  std::memcpy(out, s.data(), s.size() + 1);
  return out;
}

}  // namespace xjit::capi

// ===========================================================================
// Status

extern "C" {

xjit_code xjit_status_code(const xjit_status* status) {
  return status == nullptr ? XJIT_OK : static_cast<xjit_code>(status->code);
}

const char* xjit_status_message(const xjit_status* status) {
  return status == nullptr ? "" : status->message.c_str();
}

void xjit_status_free(xjit_status* status) { delete status; }

const char* xjit_code_name(xjit_code code) {
  switch (code) {
    case XJIT_OK:
      return "OK";
    case XJIT_CANCELLED:
      return "CANCELLED";
    case XJIT_UNKNOWN:
      return "UNKNOWN";
    case XJIT_INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case XJIT_DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case XJIT_NOT_FOUND:
      return "NOT_FOUND";
    case XJIT_ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case XJIT_PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case XJIT_RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case XJIT_FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case XJIT_ABORTED:
      return "ABORTED";
    case XJIT_OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case XJIT_UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case XJIT_INTERNAL:
      return "INTERNAL";
    case XJIT_UNAVAILABLE:
      return "UNAVAILABLE";
    case XJIT_DATA_LOSS:
      return "DATA_LOSS";
    case XJIT_UNAUTHENTICATED:
      return "UNAUTHENTICATED";
  }
  return "UNKNOWN_CODE";
}

void xjit_string_free(char* string) { std::free(string); }

const char* xjit_version(void) { return XJIT_PROJECT_VERSION; }

}  // extern "C"
