// The typed custom-call registry (see ffi_registry.h).
#include "runtime/host/ffi_registry.h"

#include <exception>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/layout_util.h"

namespace xjit {

FfiRegistry& FfiRegistry::Global() {
  static FfiRegistry* registry = new FfiRegistry();
  return *registry;
}

void FfiRegistry::Register(absl::string_view target_name, FfiHandler handler) {
  auto shared = std::make_shared<const FfiHandler>(std::move(handler));
  std::lock_guard<std::mutex> lock(mutex_);
  handlers_[std::string(target_name)] = std::move(shared);
}

bool FfiRegistry::Unregister(absl::string_view target_name) {
  std::lock_guard<std::mutex> lock(mutex_);
  return handlers_.erase(std::string(target_name)) > 0;
}

std::shared_ptr<const FfiHandler> FfiRegistry::Find(absl::string_view target_name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = handlers_.find(target_name);
  return it == handlers_.end() ? nullptr : it->second;
}

namespace {

void CollectLeaves(const Shape& shape, std::vector<const Shape*>* leaves) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) CollectLeaves(element, leaves);
  } else if (shape.IsArray()) {
    leaves->push_back(&shape);
  }
}

absl::Status MakeBuffers(const std::vector<const Shape*>& shapes, absl::Span<void* const> data,
                         absl::string_view what, std::vector<FfiBuffer>* buffers) {
  if (shapes.size() != data.size()) {
    return absl::InternalError(absl::StrCat("custom call: ", data.size(), " ", what,
                                            " buffers for ", shapes.size(), " leaves"));
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Shape& shape = *shapes[i];
    const int64_t dense = shape.element_count() * ByteWidth(shape.element_type());
    if (ByteSize(shape) != dense ||
        (shape.has_layout() && (!shape.layout().tiles.empty() ||
                                !shape.layout().padded_dimensions.empty()))) {
      return absl::UnimplementedError(absl::StrCat(
          "custom call: the ", what, " layout of ", shape.ToString(), " is not dense"));
    }
    FfiBuffer buffer;
    buffer.type = shape.element_type();
    buffer.dimensions = shape.dimensions();
    if (shape.has_layout()) buffer.minor_to_major = shape.layout().minor_to_major;
    buffer.data = data[i];
    buffer.byte_size = dense;
    buffers->push_back(buffer);
  }
  return absl::OkStatus();
}

// backend_config= is kept as written; a quoted string is passed unquoted
// (its \" and \\ escapes undone), anything else (a {...} JSON form) as is.
std::string Unquoted(const std::string& text) {
  if (text.size() < 2 || text.front() != '"' || text.back() != '"') return text;
  std::string out;
  for (size_t i = 1; i + 1 < text.size(); ++i) {
    if (text[i] == '\\' && i + 2 < text.size()) ++i;
    out.push_back(text[i]);
  }
  return out;
}

}  // namespace

absl::Status InvokeFfi(const FfiHandler& handler, const Instruction& instruction,
                       absl::Span<void* const> operand_leaves,
                       absl::Span<void* const> result_leaves) {
  std::vector<const Shape*> operand_shapes, result_shapes;
  for (const Instruction* operand : instruction.operands()) {
    CollectLeaves(operand->shape(), &operand_shapes);
  }
  CollectLeaves(instruction.shape(), &result_shapes);
  std::vector<FfiBuffer> operands, results;
  if (absl::Status status = MakeBuffers(operand_shapes, operand_leaves, "operand", &operands);
      !status.ok()) {
    return status;
  }
  if (absl::Status status = MakeBuffers(result_shapes, result_leaves, "result", &results);
      !status.ok()) {
    return status;
  }
  const std::string& target = instruction.attrs().custom_call_target;
  FfiCall call;
  call.target = target;
  const std::string config = Unquoted(instruction.attrs().backend_config);
  call.backend_config = config;
  call.operands = operands;
  call.results = results;
  absl::Status status;
  try {
    status = handler(call);
  } catch (const std::exception& error) {
    status = absl::InternalError(absl::StrCat("threw: ", error.what()));
  } catch (...) {
    status = absl::InternalError("threw an exception");
  }
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrCat("custom call \"", target, "\": ", status.message()));
}

}  // namespace xjit
