// The C API's values (xjit.h, sections "Element types", "Shapes" and
// "Modules"): element type names and widths, shape handles (creation, queries,
// text) and module handles (parsing, printing, the entry's signature).
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "capi/c_api_internal.h"
#include "capi/xjit.h"
#include "ir/element_type.h"
#include "ir/hlo_text/parser.h"
#include "ir/hlo_text/printer.h"
#include "ir/layout_util.h"
#include "ir/module.h"
#include "ir/shape.h"
#include "ir/status_macros.h"
#include "ir/verifier.h"

namespace {

using xjit::Computation;
using xjit::ElementType;
using xjit::Module;
using xjit::Shape;
using xjit::capi::Guard;
using xjit::capi::InvalidArgument;
using xjit::capi::ToElementType;
using xjit::capi::ValidElementType;

// Every ElementType has the C enum value of the same position.
#define XJIT_CAPI_CHECK_TYPE(e, name, bits, kind) +1
static_assert(XJIT_NUM_ELEMENT_TYPES == 0 XJIT_ELEMENT_TYPES(XJIT_CAPI_CHECK_TYPE));
#undef XJIT_CAPI_CHECK_TYPE
static_assert(XJIT_F32 == static_cast<int>(ElementType::kF32));
static_assert(XJIT_F4E2M1FN == static_cast<int>(ElementType::kF4E2M1FN));
static_assert(XJIT_TOKEN == static_cast<int>(ElementType::kToken));
static_assert(XJIT_OPAQUE_TYPE == static_cast<int>(ElementType::kOpaque));
static_assert(XJIT_TUPLE == static_cast<int>(ElementType::kTuple));

}  // namespace

// ===========================================================================
// Element types

extern "C" {

const char* xjit_element_type_name(xjit_element_type type) {
  if (!ValidElementType(type)) return "invalid element type";
  // ElementTypeName returns views of static, NUL-terminated literals.
  return xjit::ElementTypeName(ToElementType(type)).data();
}

xjit_status* xjit_element_type_from_name(const char* name, xjit_element_type* out) {
  if (name == nullptr || out == nullptr) return InvalidArgument("element type name: null argument");
  std::optional<ElementType> type = xjit::ParseElementType(name);
  if (!type.has_value()) {
    return InvalidArgument(absl::StrCat("unknown element type \"", name, "\""));
  }
  *out = static_cast<xjit_element_type>(*type);
  return nullptr;
}

int64_t xjit_element_type_byte_width(xjit_element_type type) {
  if (!ValidElementType(type)) return -1;
  return xjit::ByteWidth(ToElementType(type));
}

// ===========================================================================
// Shapes

xjit_status* xjit_shape_create_array(xjit_element_type type, const int64_t* dims, int rank,
                                     const int64_t* minor_to_major, xjit_shape** out) {
  return Guard([&]() -> absl::Status {
    if (out == nullptr) return absl::InvalidArgumentError("shape: null output pointer");
    *out = nullptr;
    if (!ValidElementType(type) || !xjit::IsArrayElementType(ToElementType(type))) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape: element type ", static_cast<int>(type), " is not an array type"));
    }
    if (rank < 0) return absl::InvalidArgumentError(absl::StrCat("shape: negative rank ", rank));
    if (rank > 0 && dims == nullptr) {
      return absl::InvalidArgumentError("shape: null dimensions with a non-zero rank");
    }
    for (int i = 0; i < rank; ++i) {
      if (dims[i] < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("shape: dimension ", i, " has negative size ", dims[i]));
      }
    }
    absl::Span<const int64_t> dimensions(dims, rank);
    Shape shape;
    if (minor_to_major == nullptr) {
      shape = Shape::Array(ToElementType(type), dimensions);
    } else {
      // Validate the permutation before building (ArrayWithLayout may assume it).
      std::vector<bool> seen(rank, false);
      for (int i = 0; i < rank; ++i) {
        const int64_t d = minor_to_major[i];
        if (d < 0 || d >= rank || seen[d]) {
          return absl::InvalidArgumentError(
              "shape: minor_to_major is not a permutation of [0, rank)");
        }
        seen[d] = true;
      }
      shape = Shape::ArrayWithLayout(ToElementType(type), dimensions,
                                     absl::Span<const int64_t>(minor_to_major, rank));
    }
    absl::Status valid = xjit::ValidateLayout(shape);
    if (!valid.ok()) return valid;
    // The verifier's rule: no size derived from the shape may overflow.
    XJIT_RETURN_IF_ERROR(xjit::CheckedByteSize(shape).status());
    *out = new xjit_shape{std::move(shape)};
    return absl::OkStatus();
  });
}

xjit_status* xjit_shape_create_tuple(const xjit_shape* const* elements, int n, xjit_shape** out) {
  return Guard([&]() -> absl::Status {
    if (out == nullptr) return absl::InvalidArgumentError("tuple shape: null output pointer");
    *out = nullptr;
    if (n < 0) return absl::InvalidArgumentError("tuple shape: negative element count");
    if (n > 0 && elements == nullptr) {
      return absl::InvalidArgumentError("tuple shape: null element array");
    }
    std::vector<Shape> shapes;
    for (int i = 0; i < n; ++i) {
      if (elements[i] == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat("tuple shape: element ", i, " is null"));
      }
      shapes.push_back(elements[i]->shape);
    }
    Shape tuple = Shape::Tuple(std::move(shapes));
    XJIT_RETURN_IF_ERROR(xjit::CheckedByteSize(tuple).status());  // The total may overflow.
    *out = new xjit_shape{std::move(tuple)};
    return absl::OkStatus();
  });
}

xjit_status* xjit_shape_create_token(xjit_shape** out) {
  if (out == nullptr) return InvalidArgument("token shape: null output pointer");
  return Guard([&]() -> absl::Status {
    *out = new xjit_shape{Shape::Token()};
    return absl::OkStatus();
  });
}

xjit_status* xjit_shape_parse(const char* text, xjit_shape** out) {
  return Guard([&]() -> absl::Status {
    if (out == nullptr) return absl::InvalidArgumentError("shape parse: null output pointer");
    *out = nullptr;
    if (text == nullptr) return absl::InvalidArgumentError("shape parse: null text");
    absl::StatusOr<Shape> shape = xjit::ParseShape(text);
    if (!shape.ok()) return shape.status();
    XJIT_RETURN_IF_ERROR(xjit::VerifyShape(*shape));
    *out = new xjit_shape{xjit::WithDefaultLayouts(std::move(*shape))};
    return absl::OkStatus();
  });
}

xjit_shape* xjit_shape_clone(const xjit_shape* shape) {
  if (shape == nullptr) return nullptr;
  return new (std::nothrow) xjit_shape{shape->shape};
}

void xjit_shape_free(xjit_shape* shape) { delete shape; }

xjit_element_type xjit_shape_element_type(const xjit_shape* shape) {
  if (shape == nullptr) return XJIT_TUPLE;
  return static_cast<xjit_element_type>(shape->shape.element_type());
}

int xjit_shape_is_array(const xjit_shape* shape) {
  return shape != nullptr && shape->shape.IsArray();
}

int xjit_shape_is_tuple(const xjit_shape* shape) {
  return shape != nullptr && shape->shape.IsTuple();
}

int xjit_shape_rank(const xjit_shape* shape) {
  if (shape == nullptr || !shape->shape.IsArray()) return -1;
  return static_cast<int>(shape->shape.rank());
}

int64_t xjit_shape_dimension(const xjit_shape* shape, int i) {
  if (shape == nullptr || !shape->shape.IsArray() || i < 0 || i >= shape->shape.rank()) return -1;
  return shape->shape.dimensions(i);
}

int xjit_shape_minor_to_major(const xjit_shape* shape, int64_t* out, int capacity) {
  if (shape == nullptr || !shape->shape.IsArray()) return -1;
  const int rank = static_cast<int>(shape->shape.rank());
  xjit::Layout layout =
      shape->shape.has_layout() ? shape->shape.layout() : xjit::Layout::Default(rank);
  if (out != nullptr) {
    for (int i = 0; i < rank && i < capacity && i < static_cast<int>(layout.minor_to_major.size());
         ++i) {
      out[i] = layout.minor_to_major[i];
    }
  }
  return rank;
}

int xjit_shape_tuple_size(const xjit_shape* shape) {
  if (shape == nullptr || !shape->shape.IsTuple()) return -1;
  return static_cast<int>(shape->shape.tuple_size());
}

xjit_status* xjit_shape_tuple_element(const xjit_shape* shape, int i, xjit_shape** out) {
  return Guard([&]() -> absl::Status {
    if (out == nullptr) return absl::InvalidArgumentError("tuple element: null output pointer");
    *out = nullptr;
    if (shape == nullptr) return absl::InvalidArgumentError("tuple element: null shape");
    if (!shape->shape.IsTuple()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tuple element: ", shape->shape.ToString(), " is not a tuple"));
    }
    if (i < 0 || i >= shape->shape.tuple_size()) {
      return absl::OutOfRangeError(
          absl::StrCat("tuple element ", i, " of a tuple of ", shape->shape.tuple_size()));
    }
    *out = new xjit_shape{shape->shape.tuple_shapes(i)};
    return absl::OkStatus();
  });
}

int64_t xjit_shape_byte_size(const xjit_shape* shape) {
  if (shape == nullptr) return -1;
  absl::StatusOr<int64_t> bytes = xjit::CheckedByteSize(shape->shape);
  return bytes.ok() ? *bytes : -1;
}

int64_t xjit_shape_element_count(const xjit_shape* shape) {
  if (shape == nullptr || !shape->shape.IsArray()) return -1;
  return shape->shape.element_count();
}

char* xjit_shape_to_string(const xjit_shape* shape) {
  if (shape == nullptr) return nullptr;
  try {
    return xjit::capi::CopyString(shape->shape.ToString());
  } catch (...) {
    return nullptr;
  }
}

int xjit_shape_equal(const xjit_shape* a, const xjit_shape* b) {
  if (a == nullptr || b == nullptr) return a == b;
  return a->shape == b->shape;
}

// ===========================================================================
// Modules

xjit_status* xjit_module_parse(const char* text, xjit_module** out) {
  return Guard([&]() -> absl::Status {
    if (out == nullptr) return absl::InvalidArgumentError("module parse: null output pointer");
    *out = nullptr;
    if (text == nullptr) return absl::InvalidArgumentError("module parse: null text");
    absl::StatusOr<std::unique_ptr<Module>> module = xjit::ParseHloModule(text);
    if (!module.ok()) return module.status();
    absl::Status verified = xjit::VerifyModule(**module);
    if (!verified.ok()) return verified;
    *out = new xjit_module{std::move(*module)};
    return absl::OkStatus();
  });
}

xjit_status* xjit_module_to_string(const xjit_module* module, char** out) {
  return Guard([&]() -> absl::Status {
    if (out == nullptr) return absl::InvalidArgumentError("module text: null output pointer");
    *out = nullptr;
    if (module == nullptr) return absl::InvalidArgumentError("module text: null module");
    *out = xjit::capi::CopyString(xjit::PrintModule(*module->module));
    if (*out == nullptr) return absl::ResourceExhaustedError("out of memory");
    return absl::OkStatus();
  });
}

void xjit_module_free(xjit_module* module) { delete module; }

int xjit_module_num_parameters(const xjit_module* module) {
  if (module == nullptr) return -1;
  return static_cast<int>(module->module->entry()->parameter_count());
}

xjit_status* xjit_module_parameter_shape(const xjit_module* module, int i, xjit_shape** out) {
  return Guard([&]() -> absl::Status {
    if (out == nullptr) return absl::InvalidArgumentError("parameter shape: null output pointer");
    *out = nullptr;
    if (module == nullptr) return absl::InvalidArgumentError("parameter shape: null module");
    const Computation* entry = module->module->entry();
    if (i < 0 || i >= entry->parameter_count()) {
      return absl::OutOfRangeError(absl::StrCat("parameter ", i, " of a module with ",
                                                entry->parameter_count(), " parameters"));
    }
    *out = new xjit_shape{entry->parameter(i)->shape()};
    return absl::OkStatus();
  });
}

xjit_status* xjit_module_result_shape(const xjit_module* module, xjit_shape** out) {
  return Guard([&]() -> absl::Status {
    if (out == nullptr) return absl::InvalidArgumentError("result shape: null output pointer");
    *out = nullptr;
    if (module == nullptr) return absl::InvalidArgumentError("result shape: null module");
    *out = new xjit_shape{module->module->entry()->root()->shape()};
    return absl::OkStatus();
  });
}

}  // extern "C"
