// The C API's graph building (xjit.h, section "Graph building"): builders and
// sub-builders, and one function per op over the C++ Builder (ir/builder.h).
//
// Handle resolution inside an op function throws a private exception that the
// wrapper (Emit) turns into the builder's first error, so each op function
// states its operands once; no exception leaves this file.
#include <atomic>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "capi/c_api_internal.h"
#include "capi/xjit.h"
#include "ir/builder.h"
#include "ir/element_type.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "ir/shape.h"
#include "ir/verifier.h"

namespace {

using xjit::Builder;
using xjit::Computation;
using xjit::ElementType;
using xjit::Literal;
using xjit::Module;
using xjit::Op;
using xjit::Shape;
using xjit::capi::BuilderTree;
using xjit::capi::Guard;
using xjit::capi::InvalidArgument;
using xjit::capi::MakeStatus;
using xjit::capi::ToElementType;
using xjit::capi::ValidElementType;

// Handle ids: a per-builder (or per-tree) tag in the high 32 bits, the table
// index in the low 32 bits.
int64_t NewTag() {
  static std::atomic<int64_t> next{1};
  return (next.fetch_add(1) & 0x7fffffff) | 1;  // Never 0, never negative.
}
int64_t MakeId(int64_t tag, size_t index) { return (tag << 32) | static_cast<int64_t>(index); }
// The index of `id` in a table of `size` entries with `tag`, or -1.
int64_t IndexOf(int64_t id, int64_t tag, size_t size) {
  if (id < 0 || (id >> 32) != tag) return -1;
  const int64_t index = id & 0xffffffff;
  return static_cast<size_t>(index) < size ? index : -1;
}

// ---------------------------------------------------------------------------
// Graph building helpers.

// Thrown by handle resolution; caught in Emit, never leaves this file.
struct BadArgument {
  std::string message;
};

// Resolves C arguments of one op function; any failure throws BadArgument.
class Args {
 public:
  Args(xjit_builder* b, const char* op_name) : b_(b), op_name_(op_name) {}

  Builder* builder() const { return b_->builder.get(); }

  Op op(xjit_op id, const char* what = "operand") const {
    const int64_t index = IndexOf(id, b_->tag, b_->ops.size());
    if (index < 0) {
      throw BadArgument{absl::StrCat(what, " handle ", id, " is not an op of builder \"",
                                     b_->builder->name(), "\"")};
    }
    return b_->ops[index];
  }
  std::vector<Op> ops(const xjit_op* ids, int n, const char* what = "operands") const {
    Count(ids, n, what);
    std::vector<Op> result;
    for (int i = 0; i < n; ++i) result.push_back(op(ids[i], what));
    return result;
  }
  absl::Span<const int64_t> ints(const int64_t* data, int n, const char* what) const {
    Count(data, n, what);
    return absl::Span<const int64_t>(data, n);
  }
  // n entries, or `fill` repeated when data is null.
  std::vector<int64_t> ints_or(const int64_t* data, int n, int64_t fill, const char* what) const {
    if (n < 0) throw BadArgument{absl::StrCat(what, ": negative count ", n)};
    if (data == nullptr) return std::vector<int64_t>(n, fill);
    return std::vector<int64_t>(data, data + n);
  }
  // n (low, high) pairs from 2n entries (zeros when data is null).
  std::vector<std::pair<int64_t, int64_t>> pairs(const int64_t* data, int n,
                                                 const char* what) const {
    if (n < 0) throw BadArgument{absl::StrCat(what, ": negative count ", n)};
    std::vector<std::pair<int64_t, int64_t>> result(n, {0, 0});
    if (data != nullptr) {
      for (int i = 0; i < n; ++i) result[i] = {data[2 * i], data[2 * i + 1]};
    }
    return result;
  }
  Computation* computation(xjit_computation id, const char* what = "computation") const {
    const auto& table = b_->tree->computations;
    const int64_t index = IndexOf(id, b_->tree->tag, table.size());
    if (index < 0) {
      throw BadArgument{
          absl::StrCat(what, " handle ", id, " is not a computation of this builder")};
    }
    return table[index];
  }
  const Shape& shape(const xjit_shape* s, const char* what = "shape") const {
    if (s == nullptr) throw BadArgument{absl::StrCat(what, " is null")};
    return s->shape;
  }
  ElementType type(xjit_element_type t) const {
    if (!ValidElementType(t)) throw BadArgument{absl::StrCat("invalid element type ", t)};
    return ToElementType(t);
  }
  std::string str(const char* s) const { return s == nullptr ? std::string() : std::string(s); }
  xjit::ReplicaGroups groups(const int64_t* data, int num_groups, int group_size) const {
    if (num_groups < 0 || group_size < 0) {
      throw BadArgument{"replica groups: negative count"};
    }
    if (num_groups > 0 && group_size > 0 && data == nullptr) {
      throw BadArgument{"replica groups: null array with a non-zero count"};
    }
    xjit::ReplicaGroups result(num_groups);
    for (int g = 0; g < num_groups; ++g) {
      result[g].assign(data + static_cast<int64_t>(g) * group_size,
                       data + static_cast<int64_t>(g + 1) * group_size);
    }
    return result;
  }
  std::optional<int64_t> channel(int64_t id) const {
    return id < 0 ? std::nullopt : std::optional<int64_t>(id);
  }

 private:
  template <typename T>
  void Count(const T* data, int n, const char* what) const {
    if (n < 0) throw BadArgument{absl::StrCat(what, ": negative count ", n)};
    if (n > 0 && data == nullptr) {
      throw BadArgument{absl::StrCat(what, ": null array with count ", n)};
    }
  }

  xjit_builder* b_;
  const char* op_name_;
};

// Common checks before any graph-building call; false when the call must
// return an invalid handle (the reason is recorded where possible).
bool Usable(xjit_builder* b, const char* op_name) {
  if (b == nullptr || b->builder == nullptr) return false;
  if (b->builder->has_error()) return false;
  if (b->tree->built) {
    b->builder->ReportError(op_name, "the module of this builder is already built");
    return false;
  }
  return true;
}

template <typename F>
xjit_op Emit(xjit_builder* b, const char* op_name, F&& body) {
  if (!Usable(b, op_name)) return XJIT_INVALID_OP;
  try {
    Args args(b, op_name);
    Op op = body(args);
    if (!op.valid() || op.builder() != b->builder.get()) {
      if (!b->builder->has_error()) b->builder->ReportError(op_name, "the operation failed");
      return XJIT_INVALID_OP;
    }
    b->ops.push_back(op);
    return MakeId(b->tag, b->ops.size() - 1);
  } catch (const BadArgument& e) {
    b->builder->ReportError(op_name, e.message);
  } catch (const std::bad_alloc&) {
    b->builder->ReportError(absl::ResourceExhaustedError(absl::StrCat(op_name, ": out of memory")));
  } catch (const std::exception& e) {
    b->builder->ReportError(absl::InternalError(absl::StrCat(op_name, ": ", e.what())));
  } catch (...) {
    b->builder->ReportError(absl::InternalError(absl::StrCat(op_name, ": internal error")));
  }
  return XJIT_INVALID_OP;
}

xjit_computation AddComputation(xjit_builder* b, const char* op_name, Computation* computation) {
  if (computation == nullptr) {
    if (!b->builder->has_error()) b->builder->ReportError(op_name, "the computation failed");
    return XJIT_INVALID_COMPUTATION;
  }
  b->tree->computations.push_back(computation);
  return MakeId(b->tree->tag, b->tree->computations.size() - 1);
}

template <typename F>
xjit_computation EmitComputation(xjit_builder* b, const char* op_name, F&& body) {
  if (!Usable(b, op_name)) return XJIT_INVALID_COMPUTATION;
  try {
    Args args(b, op_name);
    return AddComputation(b, op_name, body(args));
  } catch (const BadArgument& e) {
    b->builder->ReportError(op_name, e.message);
  } catch (const std::bad_alloc&) {
    b->builder->ReportError(absl::ResourceExhaustedError(absl::StrCat(op_name, ": out of memory")));
  } catch (...) {
    b->builder->ReportError(absl::InternalError(absl::StrCat(op_name, ": internal error")));
  }
  return XJIT_INVALID_COMPUTATION;
}

xjit::Padding ToPadding(xjit_padding padding) {
  if (padding == XJIT_PADDING_SAME) return xjit::Padding::kSame;
  if (padding == XJIT_PADDING_VALID) return xjit::Padding::kValid;
  throw BadArgument{absl::StrCat("invalid padding ", static_cast<int>(padding))};
}

template <typename E>
E ToEnum(int value, int count, const char* what) {
  if (value < 0 || value >= count) throw BadArgument{absl::StrCat("invalid ", what, " ", value)};
  return static_cast<E>(value);
}

std::vector<int64_t> IntVector(const Args& a, const int64_t* data, int n, const char* what) {
  absl::Span<const int64_t> span = a.ints(data, n, what);
  return std::vector<int64_t>(span.begin(), span.end());
}

}  // namespace

// ===========================================================================
// Builders

extern "C" {

xjit_builder* xjit_builder_create(const char* name) {
  try {
    auto b = std::make_unique<xjit_builder>();
    b->tag = NewTag();
    b->tree = std::make_shared<BuilderTree>();
    b->tree->tag = NewTag();
    b->builder = std::make_unique<Builder>(name == nullptr ? "module" : name);
    return b.release();
  } catch (...) {
    return nullptr;
  }
}

xjit_builder* xjit_builder_create_sub(xjit_builder* parent, const char* name) {
  if (parent == nullptr || parent->builder == nullptr) return nullptr;
  try {
    auto b = std::make_unique<xjit_builder>();
    b->tag = NewTag();
    b->tree = parent->tree;
    // A prvalue initialises the new Builder directly (Builder is not movable).
    b->builder.reset(
        new Builder(parent->builder->CreateSubBuilder(name == nullptr ? "sub" : name)));
    b->is_sub = true;
    return b.release();
  } catch (...) {
    return nullptr;
  }
}

void xjit_builder_free(xjit_builder* builder) { delete builder; }

xjit_status* xjit_builder_build(xjit_builder* builder, xjit_op root, xjit_module** out) {
  return Guard([&]() -> absl::Status {
    if (out == nullptr) return absl::InvalidArgumentError("build: null output pointer");
    *out = nullptr;
    if (builder == nullptr) return absl::InvalidArgumentError("build: null builder");
    if (builder->is_sub) {
      return absl::FailedPreconditionError(
          "build: this is a sub-builder; use xjit_builder_build_sub");
    }
    if (builder->tree->built) {
      return absl::FailedPreconditionError("build: the module is already built");
    }
    if (builder->builder->has_error()) return builder->builder->first_error();
    const int64_t index = IndexOf(root, builder->tag, builder->ops.size());
    if (index < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("build: root handle ", root, " is not an op of this builder"));
    }
    absl::StatusOr<std::unique_ptr<Module>> module = builder->builder->Build(builder->ops[index]);
    if (!module.ok()) return module.status();
    builder->tree->built = true;
    absl::Status verified = xjit::VerifyModule(**module);
    if (!verified.ok()) return verified;
    *out = new xjit_module{std::move(*module)};
    return absl::OkStatus();
  });
}

xjit_computation xjit_builder_build_sub(xjit_builder* sub_builder, xjit_op root) {
  return EmitComputation(sub_builder, "BuildSubComputation", [&](Args& a) -> Computation* {
    if (!sub_builder->is_sub) {
      throw BadArgument{"not a sub-builder (use xjit_builder_build for the entry)"};
    }
    return a.builder()->BuildSubComputation(a.op(root, "root"));
  });
}

xjit_status* xjit_builder_first_error(const xjit_builder* builder) {
  if (builder == nullptr) return InvalidArgument("first error: null builder");
  return MakeStatus(builder->builder->first_error());
}

xjit_status* xjit_builder_get_shape(const xjit_builder* builder, xjit_op op, xjit_shape** out) {
  return Guard([&]() -> absl::Status {
    if (out == nullptr) return absl::InvalidArgumentError("get shape: null output pointer");
    *out = nullptr;
    if (builder == nullptr) return absl::InvalidArgumentError("get shape: null builder");
    const int64_t index = IndexOf(op, builder->tag, builder->ops.size());
    if (index < 0) {
      if (builder->builder->has_error()) return builder->builder->first_error();
      return absl::InvalidArgumentError(
          absl::StrCat("get shape: handle ", op, " is not an op of this builder"));
    }
    if (builder->tree->built) {
      return absl::FailedPreconditionError("get shape: the module is already built");
    }
    *out = new xjit_shape{builder->ops[index].shape()};
    return absl::OkStatus();
  });
}

void xjit_builder_set_replica_count(xjit_builder* builder, int64_t n) {
  if (builder != nullptr && !builder->tree->built) builder->builder->set_replica_count(n);
}

void xjit_builder_set_num_partitions(xjit_builder* builder, int64_t n) {
  if (builder != nullptr && !builder->tree->built) builder->builder->set_num_partitions(n);
}

xjit_computation xjit_scalar_computation_create(xjit_builder* builder, xjit_scalar_computation kind,
                                                xjit_element_type type) {
  return EmitComputation(builder, "ScalarComputation", [&](Args& a) -> Computation* {
    ElementType t = a.type(type);
    if (!xjit::IsArrayElementType(t)) throw BadArgument{"not an array element type"};
    switch (kind) {
      case XJIT_SCALAR_ADD:
        return xjit::CreateScalarAddComputation(a.builder(), t);
      case XJIT_SCALAR_MUL:
        return xjit::CreateScalarMultiplyComputation(a.builder(), t);
      case XJIT_SCALAR_MAX:
        return xjit::CreateScalarMaxComputation(a.builder(), t);
      case XJIT_SCALAR_MIN:
        return xjit::CreateScalarMinComputation(a.builder(), t);
      case XJIT_SCALAR_AND:
        return xjit::CreateScalarAndComputation(a.builder(), t);
      case XJIT_SCALAR_OR:
        return xjit::CreateScalarOrComputation(a.builder(), t);
    }
    throw BadArgument{absl::StrCat("invalid scalar computation kind ", static_cast<int>(kind))};
  });
}

xjit_computation xjit_sort_comparator_create(xjit_builder* builder, const xjit_element_type* types,
                                             int n, int descending) {
  return EmitComputation(builder, "SortComparator", [&](Args& a) -> Computation* {
    if (n <= 0 || types == nullptr) throw BadArgument{"a comparator needs at least one type"};
    std::vector<ElementType> ts;
    for (int i = 0; i < n; ++i) ts.push_back(a.type(types[i]));
    return descending ? xjit::CreateScalarGtComputation(a.builder(), ts)
                      : xjit::CreateScalarLtComputation(a.builder(), ts);
  });
}

// ---- Parameters and constants ----

xjit_op xjit_parameter(xjit_builder* b, int64_t number, const xjit_shape* shape, const char* name) {
  return Emit(b, "Parameter", [&](Args& a) {
    std::string n = name == nullptr ? absl::StrCat("p", number) : std::string(name);
    return xjit::Parameter(a.builder(), number, a.shape(shape), n);
  });
}

xjit_op xjit_constant(xjit_builder* b, const xjit_shape* shape, const void* data, size_t size) {
  return Emit(b, "Constant", [&](Args& a) {
    const Shape& s = a.shape(shape);
    if (!s.IsArray()) throw BadArgument{absl::StrCat("constant of non-array shape ", s.ToString())};
    Literal literal(s);
    const size_t expected = literal.data().size();
    if (size != expected) {
      throw BadArgument{absl::StrCat("constant of shape ", s.ToString(), " needs ", expected,
                                     " bytes, got ", size)};
    }
    if (expected > 0) {
      if (data == nullptr) throw BadArgument{"constant: null data"};
      std::memcpy(literal.data().data(), data, expected);
    }
    return xjit::ConstantLiteral(a.builder(), literal);
  });
}

xjit_op xjit_constant_f32(xjit_builder* b, float value) {
  return Emit(b, "ConstantR0",
              [&](Args& a) { return xjit::ConstantR0<float>(a.builder(), value); });
}
xjit_op xjit_constant_f64(xjit_builder* b, double value) {
  return Emit(b, "ConstantR0",
              [&](Args& a) { return xjit::ConstantR0<double>(a.builder(), value); });
}
xjit_op xjit_constant_s32(xjit_builder* b, int32_t value) {
  return Emit(b, "ConstantR0",
              [&](Args& a) { return xjit::ConstantR0<int32_t>(a.builder(), value); });
}
xjit_op xjit_constant_s64(xjit_builder* b, int64_t value) {
  return Emit(b, "ConstantR0",
              [&](Args& a) { return xjit::ConstantR0<int64_t>(a.builder(), value); });
}
xjit_op xjit_constant_u32(xjit_builder* b, uint32_t value) {
  return Emit(b, "ConstantR0",
              [&](Args& a) { return xjit::ConstantR0<uint32_t>(a.builder(), value); });
}
xjit_op xjit_constant_pred(xjit_builder* b, int value) {
  return Emit(b, "ConstantR0",
              [&](Args& a) { return xjit::ConstantR0<bool>(a.builder(), value != 0); });
}

#define XJIT_CAPI_TYPED_SCALAR(c_name, Fn)                                              \
  xjit_op c_name(xjit_builder* b, xjit_element_type type) {                             \
    return Emit(b, #Fn, [&](Args& a) {                                                  \
      ElementType t = a.type(type);                                                     \
      if (!xjit::IsArrayElementType(t)) throw BadArgument{"not an array element type"}; \
      return xjit::Fn(a.builder(), t);                                                  \
    });                                                                                 \
  }
XJIT_CAPI_TYPED_SCALAR(xjit_zero, Zero)
XJIT_CAPI_TYPED_SCALAR(xjit_one, One)
XJIT_CAPI_TYPED_SCALAR(xjit_min_value, MinValue)
XJIT_CAPI_TYPED_SCALAR(xjit_max_value, MaxValue)
#undef XJIT_CAPI_TYPED_SCALAR

xjit_op xjit_iota(xjit_builder* b, const xjit_shape* shape, int64_t iota_dimension) {
  return Emit(b, "Iota",
              [&](Args& a) { return xjit::Iota(a.builder(), a.shape(shape), iota_dimension); });
}

// ---- Element-wise unary ----

#define XJIT_CAPI_UNARY(c_name, Fn)                                  \
  xjit_op c_name(xjit_builder* b, xjit_op x) {                       \
    return Emit(b, #Fn, [&](Args& a) { return xjit::Fn(a.op(x)); }); \
  }
XJIT_CAPI_UNARY(xjit_abs, Abs)
XJIT_CAPI_UNARY(xjit_acos, Acos)
XJIT_CAPI_UNARY(xjit_acosh, Acosh)
XJIT_CAPI_UNARY(xjit_asin, Asin)
XJIT_CAPI_UNARY(xjit_asinh, Asinh)
XJIT_CAPI_UNARY(xjit_atan, Atan)
XJIT_CAPI_UNARY(xjit_atanh, Atanh)
XJIT_CAPI_UNARY(xjit_cbrt, Cbrt)
XJIT_CAPI_UNARY(xjit_ceil, Ceil)
XJIT_CAPI_UNARY(xjit_clz, Clz)
XJIT_CAPI_UNARY(xjit_cos, Cos)
XJIT_CAPI_UNARY(xjit_cosh, Cosh)
XJIT_CAPI_UNARY(xjit_erf, Erf)
XJIT_CAPI_UNARY(xjit_exp, Exp)
XJIT_CAPI_UNARY(xjit_expm1, Expm1)
XJIT_CAPI_UNARY(xjit_floor, Floor)
XJIT_CAPI_UNARY(xjit_imag, Imag)
XJIT_CAPI_UNARY(xjit_is_finite, IsFinite)
XJIT_CAPI_UNARY(xjit_log, Log)
XJIT_CAPI_UNARY(xjit_log1p, Log1p)
XJIT_CAPI_UNARY(xjit_logistic, Logistic)
XJIT_CAPI_UNARY(xjit_neg, Neg)
XJIT_CAPI_UNARY(xjit_not, Not)
XJIT_CAPI_UNARY(xjit_population_count, PopulationCount)
XJIT_CAPI_UNARY(xjit_real, Real)
XJIT_CAPI_UNARY(xjit_round, Round)
XJIT_CAPI_UNARY(xjit_round_nearest_even, RoundNearestEven)
XJIT_CAPI_UNARY(xjit_rsqrt, Rsqrt)
XJIT_CAPI_UNARY(xjit_sign, Sign)
XJIT_CAPI_UNARY(xjit_sin, Sin)
XJIT_CAPI_UNARY(xjit_sinh, Sinh)
XJIT_CAPI_UNARY(xjit_sqrt, Sqrt)
XJIT_CAPI_UNARY(xjit_tan, Tan)
XJIT_CAPI_UNARY(xjit_tanh, Tanh)
XJIT_CAPI_UNARY(xjit_copy, Copy)
XJIT_CAPI_UNARY(xjit_optimization_barrier, OptimizationBarrier)
#undef XJIT_CAPI_UNARY

// ---- Element-wise binary and comparisons ----

#define XJIT_CAPI_BINARY(c_name, Fn)                                                       \
  xjit_op c_name(xjit_builder* b, xjit_op lhs, xjit_op rhs, const int64_t* broadcast_dims, \
                 int n_broadcast_dims) {                                                   \
    return Emit(b, #Fn, [&](Args& a) {                                                     \
      return xjit::Fn(a.op(lhs, "lhs"), a.op(rhs, "rhs"),                                  \
                      a.ints(broadcast_dims, n_broadcast_dims, "broadcast_dims"));         \
    });                                                                                    \
  }
XJIT_CAPI_BINARY(xjit_add, Add)
XJIT_CAPI_BINARY(xjit_sub, Sub)
XJIT_CAPI_BINARY(xjit_mul, Mul)
XJIT_CAPI_BINARY(xjit_div, Div)
XJIT_CAPI_BINARY(xjit_pow, Pow)
XJIT_CAPI_BINARY(xjit_rem, Rem)
XJIT_CAPI_BINARY(xjit_max, Max)
XJIT_CAPI_BINARY(xjit_min, Min)
XJIT_CAPI_BINARY(xjit_and, And)
XJIT_CAPI_BINARY(xjit_or, Or)
XJIT_CAPI_BINARY(xjit_xor, Xor)
XJIT_CAPI_BINARY(xjit_shift_left, ShiftLeft)
XJIT_CAPI_BINARY(xjit_shift_right_arithmetic, ShiftRightArithmetic)
XJIT_CAPI_BINARY(xjit_shift_right_logical, ShiftRightLogical)
XJIT_CAPI_BINARY(xjit_atan2, Atan2)
XJIT_CAPI_BINARY(xjit_complex, Complex)
XJIT_CAPI_BINARY(xjit_eq, Eq)
XJIT_CAPI_BINARY(xjit_ne, Ne)
XJIT_CAPI_BINARY(xjit_ge, Ge)
XJIT_CAPI_BINARY(xjit_gt, Gt)
XJIT_CAPI_BINARY(xjit_le, Le)
XJIT_CAPI_BINARY(xjit_lt, Lt)
XJIT_CAPI_BINARY(xjit_eq_total_order, EqTotalOrder)
XJIT_CAPI_BINARY(xjit_ne_total_order, NeTotalOrder)
XJIT_CAPI_BINARY(xjit_ge_total_order, GeTotalOrder)
XJIT_CAPI_BINARY(xjit_gt_total_order, GtTotalOrder)
XJIT_CAPI_BINARY(xjit_le_total_order, LeTotalOrder)
XJIT_CAPI_BINARY(xjit_lt_total_order, LtTotalOrder)
#undef XJIT_CAPI_BINARY

xjit_op xjit_compare(xjit_builder* b, xjit_op lhs, xjit_op rhs, const int64_t* broadcast_dims,
                     int n_broadcast_dims, xjit_comparison_direction direction,
                     xjit_comparison_type type) {
  return Emit(b, "Compare", [&](Args& a) {
    return xjit::Compare(a.op(lhs, "lhs"), a.op(rhs, "rhs"),
                         a.ints(broadcast_dims, n_broadcast_dims, "broadcast_dims"),
                         ToEnum<xjit::ComparisonDirection>(direction, 6, "comparison direction"),
                         ToEnum<xjit::ComparisonType>(type, 5, "comparison type"));
  });
}

// ---- Ternary ----

xjit_op xjit_select(xjit_builder* b, xjit_op pred, xjit_op on_true, xjit_op on_false) {
  return Emit(b, "Select", [&](Args& a) {
    return xjit::Select(a.op(pred, "pred"), a.op(on_true, "on_true"), a.op(on_false, "on_false"));
  });
}

xjit_op xjit_clamp(xjit_builder* b, xjit_op min, xjit_op x, xjit_op max) {
  return Emit(b, "Clamp",
              [&](Args& a) { return xjit::Clamp(a.op(min, "min"), a.op(x), a.op(max, "max")); });
}

// ---- Shape manipulation ----

xjit_op xjit_broadcast(xjit_builder* b, xjit_op x, const int64_t* sizes, int n) {
  return Emit(b, "Broadcast",
              [&](Args& a) { return xjit::Broadcast(a.op(x), a.ints(sizes, n, "sizes")); });
}

xjit_op xjit_broadcast_in_dim(xjit_builder* b, xjit_op x, const int64_t* out_dims, int n_out_dims,
                              const int64_t* broadcast_dims, int n_broadcast_dims) {
  return Emit(b, "BroadcastInDim", [&](Args& a) {
    return xjit::BroadcastInDim(a.op(x), a.ints(out_dims, n_out_dims, "out_dims"),
                                a.ints(broadcast_dims, n_broadcast_dims, "broadcast_dims"));
  });
}

xjit_op xjit_reshape(xjit_builder* b, xjit_op x, const int64_t* new_sizes, int n) {
  return Emit(b, "Reshape",
              [&](Args& a) { return xjit::Reshape(a.op(x), a.ints(new_sizes, n, "new_sizes")); });
}

xjit_op xjit_reshape_with_order(xjit_builder* b, xjit_op x, const int64_t* dims, int n_dims,
                                const int64_t* new_sizes, int n_sizes) {
  return Emit(b, "Reshape", [&](Args& a) {
    return xjit::Reshape(a.op(x), a.ints(dims, n_dims, "dimensions"),
                         a.ints(new_sizes, n_sizes, "new_sizes"));
  });
}

xjit_op xjit_collapse(xjit_builder* b, xjit_op x, const int64_t* dims, int n) {
  return Emit(b, "Collapse",
              [&](Args& a) { return xjit::Collapse(a.op(x), a.ints(dims, n, "dimensions")); });
}

xjit_op xjit_transpose(xjit_builder* b, xjit_op x, const int64_t* permutation, int n) {
  return Emit(b, "Transpose", [&](Args& a) {
    return xjit::Transpose(a.op(x), a.ints(permutation, n, "permutation"));
  });
}

xjit_op xjit_rev(xjit_builder* b, xjit_op x, const int64_t* dims, int n) {
  return Emit(b, "Rev", [&](Args& a) { return xjit::Rev(a.op(x), a.ints(dims, n, "dimensions")); });
}

xjit_op xjit_slice(xjit_builder* b, xjit_op x, const int64_t* start, const int64_t* limit,
                   const int64_t* strides, int n) {
  return Emit(b, "Slice", [&](Args& a) {
    std::vector<int64_t> s = a.ints_or(strides, n, 1, "strides");
    return xjit::Slice(a.op(x), a.ints(start, n, "start"), a.ints(limit, n, "limit"), s);
  });
}

xjit_op xjit_slice_in_dim(xjit_builder* b, xjit_op x, int64_t start, int64_t limit, int64_t stride,
                          int64_t dimension) {
  return Emit(b, "SliceInDim",
              [&](Args& a) { return xjit::SliceInDim(a.op(x), start, limit, stride, dimension); });
}

xjit_op xjit_dynamic_slice(xjit_builder* b, xjit_op x, const xjit_op* start_indices,
                           int n_start_indices, const int64_t* slice_sizes, int n_slice_sizes) {
  return Emit(b, "DynamicSlice", [&](Args& a) {
    return xjit::DynamicSlice(a.op(x), a.ops(start_indices, n_start_indices, "start_indices"),
                              a.ints(slice_sizes, n_slice_sizes, "slice_sizes"));
  });
}

xjit_op xjit_dynamic_update_slice(xjit_builder* b, xjit_op x, xjit_op update,
                                  const xjit_op* start_indices, int n_start_indices) {
  return Emit(b, "DynamicUpdateSlice", [&](Args& a) {
    return xjit::DynamicUpdateSlice(a.op(x), a.op(update, "update"),
                                    a.ops(start_indices, n_start_indices, "start_indices"));
  });
}

xjit_op xjit_concatenate(xjit_builder* b, const xjit_op* operands, int n, int64_t dimension) {
  return Emit(b, "Concatenate", [&](Args& a) {
    return xjit::ConcatInDim(a.builder(), a.ops(operands, n), dimension);
  });
}

xjit_op xjit_pad(xjit_builder* b, xjit_op x, xjit_op padding_value,
                 const xjit_padding_dimension* config, int n) {
  return Emit(b, "Pad", [&](Args& a) {
    if (n < 0 || (n > 0 && config == nullptr))
      throw BadArgument{"padding config: null or negative"};
    xjit::PaddingConfig padding;
    for (int i = 0; i < n; ++i)
      padding.push_back({config[i].low, config[i].high, config[i].interior});
    return xjit::Pad(a.op(x), a.op(padding_value, "padding_value"), padding);
  });
}

xjit_op xjit_get_dimension_size(xjit_builder* b, xjit_op x, int64_t dimension) {
  return Emit(b, "GetDimensionSize",
              [&](Args& a) { return xjit::GetDimensionSize(a.op(x), dimension); });
}

xjit_op xjit_set_dimension_size(xjit_builder* b, xjit_op x, xjit_op size, int64_t dimension) {
  return Emit(b, "SetDimensionSize", [&](Args& a) {
    return xjit::SetDimensionSize(a.op(x), a.op(size, "size"), dimension);
  });
}

// ---- Types ----

xjit_op xjit_convert(xjit_builder* b, xjit_op x, xjit_element_type new_type) {
  return Emit(b, "ConvertElementType",
              [&](Args& a) { return xjit::ConvertElementType(a.op(x), a.type(new_type)); });
}

xjit_op xjit_bitcast_convert(xjit_builder* b, xjit_op x, xjit_element_type new_type) {
  return Emit(b, "BitcastConvertType",
              [&](Args& a) { return xjit::BitcastConvertType(a.op(x), a.type(new_type)); });
}

xjit_op xjit_reduce_precision(xjit_builder* b, xjit_op x, int64_t exponent_bits,
                              int64_t mantissa_bits) {
  return Emit(b, "ReducePrecision", [&](Args& a) {
    return xjit::ReducePrecision(a.op(x), exponent_bits, mantissa_bits);
  });
}

// ---- Tuples ----

xjit_op xjit_tuple(xjit_builder* b, const xjit_op* elements, int n) {
  return Emit(b, "Tuple",
              [&](Args& a) { return xjit::Tuple(a.builder(), a.ops(elements, n, "elements")); });
}

xjit_op xjit_get_tuple_element(xjit_builder* b, xjit_op tuple, int64_t index) {
  return Emit(b, "GetTupleElement",
              [&](Args& a) { return xjit::GetTupleElement(a.op(tuple, "tuple"), index); });
}

// ---- Linear algebra ----

xjit_op xjit_dot(xjit_builder* b, xjit_op lhs, xjit_op rhs) {
  return Emit(b, "Dot", [&](Args& a) { return xjit::Dot(a.op(lhs, "lhs"), a.op(rhs, "rhs")); });
}

xjit_op xjit_dot_general(xjit_builder* b, xjit_op lhs, xjit_op rhs,
                         const xjit_dot_dimension_numbers* dnums) {
  return Emit(b, "DotGeneral", [&](Args& a) {
    if (dnums == nullptr) throw BadArgument{"null dimension numbers"};
    xjit::DotDimensionNumbers d;
    d.lhs_contracting_dimensions = IntVector(a, dnums->lhs_contracting_dims,
                                             dnums->n_lhs_contracting_dims, "lhs_contracting_dims");
    d.rhs_contracting_dimensions = IntVector(a, dnums->rhs_contracting_dims,
                                             dnums->n_rhs_contracting_dims, "rhs_contracting_dims");
    d.lhs_batch_dimensions =
        IntVector(a, dnums->lhs_batch_dims, dnums->n_lhs_batch_dims, "lhs_batch_dims");
    d.rhs_batch_dimensions =
        IntVector(a, dnums->rhs_batch_dims, dnums->n_rhs_batch_dims, "rhs_batch_dims");
    return xjit::DotGeneral(a.op(lhs, "lhs"), a.op(rhs, "rhs"), d);
  });
}

xjit_op xjit_conv(xjit_builder* b, xjit_op lhs, xjit_op rhs, const int64_t* strides, int n_strides,
                  xjit_padding padding, int64_t feature_group_count, int64_t batch_group_count) {
  return Emit(b, "Conv", [&](Args& a) {
    return xjit::Conv(a.op(lhs, "lhs"), a.op(rhs, "rhs"), a.ints(strides, n_strides, "strides"),
                      ToPadding(padding), feature_group_count, batch_group_count);
  });
}

xjit_op xjit_conv_with_general_padding(xjit_builder* b, xjit_op lhs, xjit_op rhs,
                                       const int64_t* strides, int n_strides,
                                       const int64_t* padding, int64_t feature_group_count,
                                       int64_t batch_group_count) {
  return Emit(b, "ConvWithGeneralPadding", [&](Args& a) {
    return xjit::ConvWithGeneralPadding(
        a.op(lhs, "lhs"), a.op(rhs, "rhs"), a.ints(strides, n_strides, "strides"),
        a.pairs(padding, n_strides, "padding"), feature_group_count, batch_group_count);
  });
}

xjit_op xjit_conv_general_dilated(xjit_builder* b, xjit_op lhs, xjit_op rhs, const int64_t* strides,
                                  const int64_t* padding, const int64_t* lhs_dilation,
                                  const int64_t* rhs_dilation, int n_spatial,
                                  const xjit_conv_dimension_numbers* dnums,
                                  int64_t feature_group_count, int64_t batch_group_count) {
  return Emit(b, "ConvGeneralDilated", [&](Args& a) {
    xjit::ConvolutionDimensionNumbers d;
    if (dnums == nullptr) {
      if (n_spatial < 0) throw BadArgument{"negative spatial dimension count"};
      d = xjit::DefaultConvolutionDimensionNumbers(n_spatial);
    } else {
      if (dnums->n_spatial != n_spatial) {
        throw BadArgument{absl::StrCat("dimension numbers have ", dnums->n_spatial,
                                       " spatial dimensions, the window ", n_spatial)};
      }
      d.input_batch_dimension = dnums->input_batch_dimension;
      d.input_feature_dimension = dnums->input_feature_dimension;
      d.input_spatial_dimensions =
          IntVector(a, dnums->input_spatial_dimensions, n_spatial, "input_spatial_dimensions");
      d.kernel_input_feature_dimension = dnums->kernel_input_feature_dimension;
      d.kernel_output_feature_dimension = dnums->kernel_output_feature_dimension;
      d.kernel_spatial_dimensions =
          IntVector(a, dnums->kernel_spatial_dimensions, n_spatial, "kernel_spatial_dimensions");
      d.output_batch_dimension = dnums->output_batch_dimension;
      d.output_feature_dimension = dnums->output_feature_dimension;
      d.output_spatial_dimensions =
          IntVector(a, dnums->output_spatial_dimensions, n_spatial, "output_spatial_dimensions");
    }
    std::vector<int64_t> s = a.ints_or(strides, n_spatial, 1, "strides");
    std::vector<int64_t> ld = a.ints_or(lhs_dilation, n_spatial, 1, "lhs_dilation");
    std::vector<int64_t> rd = a.ints_or(rhs_dilation, n_spatial, 1, "rhs_dilation");
    return xjit::ConvGeneralDilated(a.op(lhs, "lhs"), a.op(rhs, "rhs"), s,
                                    a.pairs(padding, n_spatial, "padding"), ld, rd, d,
                                    feature_group_count, batch_group_count);
  });
}

xjit_op xjit_fft(xjit_builder* b, xjit_op x, xjit_fft_type type, const int64_t* fft_length, int n) {
  return Emit(b, "Fft", [&](Args& a) {
    return xjit::Fft(a.op(x), ToEnum<xjit::FftType>(type, 4, "fft type"),
                     a.ints(fft_length, n, "fft_length"));
  });
}

xjit_op xjit_cholesky(xjit_builder* b, xjit_op x, int lower) {
  return Emit(b, "Cholesky", [&](Args& a) { return xjit::Cholesky(a.op(x), lower != 0); });
}

xjit_op xjit_triangular_solve(xjit_builder* b, xjit_op x, xjit_op rhs, int left_side, int lower,
                              int unit_diagonal, xjit_transpose_kind transpose_a) {
  return Emit(b, "TriangularSolve", [&](Args& a) {
    return xjit::TriangularSolve(
        a.op(x, "a"), a.op(rhs, "b"), left_side != 0, lower != 0, unit_diagonal != 0,
        ToEnum<xjit::TriangularSolveTranspose>(transpose_a, 3, "transpose_a"));
  });
}

xjit_op xjit_batch_norm_training(xjit_builder* b, xjit_op x, xjit_op scale, xjit_op offset,
                                 float epsilon, int64_t feature_index) {
  return Emit(b, "BatchNormTraining", [&](Args& a) {
    return xjit::BatchNormTraining(a.op(x), a.op(scale, "scale"), a.op(offset, "offset"), epsilon,
                                   feature_index);
  });
}

xjit_op xjit_batch_norm_inference(xjit_builder* b, xjit_op x, xjit_op scale, xjit_op offset,
                                  xjit_op mean, xjit_op variance, float epsilon,
                                  int64_t feature_index) {
  return Emit(b, "BatchNormInference", [&](Args& a) {
    return xjit::BatchNormInference(a.op(x), a.op(scale, "scale"), a.op(offset, "offset"),
                                    a.op(mean, "mean"), a.op(variance, "variance"), epsilon,
                                    feature_index);
  });
}

xjit_op xjit_batch_norm_grad(xjit_builder* b, xjit_op x, xjit_op scale, xjit_op mean,
                             xjit_op variance, xjit_op grad_output, float epsilon,
                             int64_t feature_index) {
  return Emit(b, "BatchNormGrad", [&](Args& a) {
    return xjit::BatchNormGrad(a.op(x), a.op(scale, "scale"), a.op(mean, "mean"),
                               a.op(variance, "variance"), a.op(grad_output, "grad_output"),
                               epsilon, feature_index);
  });
}

// ---- Reductions, windows, sorting, indexing ----

xjit_op xjit_reduce(xjit_builder* b, const xjit_op* operands, const xjit_op* init_values, int n,
                    xjit_computation computation, const int64_t* dims, int n_dims) {
  return Emit(b, "Reduce", [&](Args& a) {
    return xjit::Reduce(a.builder(), a.ops(operands, n), a.ops(init_values, n, "init_values"),
                        a.computation(computation), a.ints(dims, n_dims, "dimensions"));
  });
}

xjit_op xjit_reduce_window(xjit_builder* b, const xjit_op* operands, const xjit_op* init_values,
                           int n, xjit_computation computation, const int64_t* window_dimensions,
                           const int64_t* strides, int rank, xjit_padding padding) {
  return Emit(b, "ReduceWindow", [&](Args& a) {
    std::vector<int64_t> s = a.ints_or(strides, rank, 1, "strides");
    return xjit::ReduceWindow(a.builder(), a.ops(operands, n), a.ops(init_values, n, "init_values"),
                              a.computation(computation),
                              a.ints(window_dimensions, rank, "window_dimensions"), s,
                              ToPadding(padding));
  });
}

xjit_op xjit_reduce_window_with_general_padding(
    xjit_builder* b, const xjit_op* operands, const xjit_op* init_values, int n,
    xjit_computation computation, const int64_t* window_dimensions, const int64_t* strides,
    const int64_t* base_dilations, const int64_t* window_dilations, const int64_t* padding,
    int rank) {
  return Emit(b, "ReduceWindowWithGeneralPadding", [&](Args& a) {
    std::vector<int64_t> s = a.ints_or(strides, rank, 1, "strides");
    std::vector<int64_t> bd = a.ints_or(base_dilations, rank, 1, "base_dilations");
    std::vector<int64_t> wd = a.ints_or(window_dilations, rank, 1, "window_dilations");
    return xjit::ReduceWindowWithGeneralPadding(
        a.builder(), a.ops(operands, n), a.ops(init_values, n, "init_values"),
        a.computation(computation), a.ints(window_dimensions, rank, "window_dimensions"), s, bd, wd,
        a.pairs(padding, rank, "padding"));
  });
}

xjit_op xjit_select_and_scatter(xjit_builder* b, xjit_op operand, xjit_computation select,
                                const int64_t* window_dimensions, const int64_t* strides, int rank,
                                xjit_padding padding, xjit_op source, xjit_op init_value,
                                xjit_computation scatter) {
  return Emit(b, "SelectAndScatter", [&](Args& a) {
    std::vector<int64_t> s = a.ints_or(strides, rank, 1, "strides");
    return xjit::SelectAndScatter(
        a.op(operand), a.computation(select, "select"),
        a.ints(window_dimensions, rank, "window_dimensions"), s, ToPadding(padding),
        a.op(source, "source"), a.op(init_value, "init_value"), a.computation(scatter, "scatter"));
  });
}

xjit_op xjit_select_and_scatter_with_general_padding(xjit_builder* b, xjit_op operand,
                                                     xjit_computation select,
                                                     const int64_t* window_dimensions,
                                                     const int64_t* strides, const int64_t* padding,
                                                     int rank, xjit_op source, xjit_op init_value,
                                                     xjit_computation scatter) {
  return Emit(b, "SelectAndScatterWithGeneralPadding", [&](Args& a) {
    std::vector<int64_t> s = a.ints_or(strides, rank, 1, "strides");
    return xjit::SelectAndScatterWithGeneralPadding(
        a.op(operand), a.computation(select, "select"),
        a.ints(window_dimensions, rank, "window_dimensions"), s, a.pairs(padding, rank, "padding"),
        a.op(source, "source"), a.op(init_value, "init_value"), a.computation(scatter, "scatter"));
  });
}

xjit_op xjit_map(xjit_builder* b, const xjit_op* operands, int n, xjit_computation computation,
                 const int64_t* dims, int n_dims) {
  return Emit(b, "Map", [&](Args& a) {
    return xjit::Map(a.builder(), a.ops(operands, n), a.computation(computation),
                     a.ints(dims, n_dims, "dimensions"));
  });
}

xjit_op xjit_sort(xjit_builder* b, const xjit_op* operands, int n, xjit_computation comparator,
                  int64_t dimension, int is_stable) {
  return Emit(b, "Sort", [&](Args& a) {
    std::vector<Op> ops = a.ops(operands, n);
    if (ops.empty()) throw BadArgument{"sort needs at least one operand"};
    return xjit::Sort(ops, a.computation(comparator, "comparator"), dimension, is_stable != 0);
  });
}

xjit_op xjit_top_k(xjit_builder* b, xjit_op x, int64_t k, int largest) {
  return Emit(b, "TopK", [&](Args& a) { return xjit::TopK(a.op(x), k, largest != 0); });
}

xjit_op xjit_gather(xjit_builder* b, xjit_op operand, xjit_op start_indices,
                    const xjit_gather_dimension_numbers* dnums, const int64_t* slice_sizes,
                    int n_slice_sizes, int indices_are_sorted) {
  return Emit(b, "Gather", [&](Args& a) {
    if (dnums == nullptr) throw BadArgument{"null dimension numbers"};
    xjit::GatherDimensionNumbers d;
    d.offset_dims = IntVector(a, dnums->offset_dims, dnums->n_offset_dims, "offset_dims");
    d.collapsed_slice_dims = IntVector(a, dnums->collapsed_slice_dims,
                                       dnums->n_collapsed_slice_dims, "collapsed_slice_dims");
    d.start_index_map =
        IntVector(a, dnums->start_index_map, dnums->n_start_index_map, "start_index_map");
    d.index_vector_dim = dnums->index_vector_dim;
    d.operand_batching_dims = IntVector(a, dnums->operand_batching_dims,
                                        dnums->n_operand_batching_dims, "operand_batching_dims");
    d.start_indices_batching_dims =
        IntVector(a, dnums->start_indices_batching_dims, dnums->n_start_indices_batching_dims,
                  "start_indices_batching_dims");
    return xjit::Gather(a.op(operand), a.op(start_indices, "start_indices"), d,
                        a.ints(slice_sizes, n_slice_sizes, "slice_sizes"), indices_are_sorted != 0);
  });
}

xjit_op xjit_scatter(xjit_builder* b, const xjit_op* operands, int n, xjit_op scatter_indices,
                     const xjit_op* updates, xjit_computation update_computation,
                     const xjit_scatter_dimension_numbers* dnums, int indices_are_sorted,
                     int unique_indices) {
  return Emit(b, "Scatter", [&](Args& a) {
    if (dnums == nullptr) throw BadArgument{"null dimension numbers"};
    xjit::ScatterDimensionNumbers d;
    d.update_window_dims =
        IntVector(a, dnums->update_window_dims, dnums->n_update_window_dims, "update_window_dims");
    d.inserted_window_dims = IntVector(a, dnums->inserted_window_dims,
                                       dnums->n_inserted_window_dims, "inserted_window_dims");
    d.scatter_dims_to_operand_dims =
        IntVector(a, dnums->scatter_dims_to_operand_dims, dnums->n_scatter_dims_to_operand_dims,
                  "scatter_dims_to_operand_dims");
    d.index_vector_dim = dnums->index_vector_dim;
    d.input_batching_dims = IntVector(a, dnums->input_batching_dims, dnums->n_input_batching_dims,
                                      "input_batching_dims");
    d.scatter_indices_batching_dims =
        IntVector(a, dnums->scatter_indices_batching_dims, dnums->n_scatter_indices_batching_dims,
                  "scatter_indices_batching_dims");
    std::vector<Op> ops = a.ops(operands, n);
    if (ops.empty()) throw BadArgument{"scatter needs at least one operand"};
    return xjit::Scatter(ops, a.op(scatter_indices, "scatter_indices"),
                         a.ops(updates, n, "updates"),
                         a.computation(update_computation, "update_computation"), d,
                         indices_are_sorted != 0, unique_indices != 0);
  });
}

// ---- Control flow and calls ----

xjit_op xjit_call(xjit_builder* b, xjit_computation computation, const xjit_op* operands, int n) {
  return Emit(b, "Call", [&](Args& a) {
    return xjit::Call(a.builder(), a.computation(computation), a.ops(operands, n));
  });
}

xjit_op xjit_composite_call(xjit_builder* b, xjit_computation computation, const xjit_op* operands,
                            int n, const char* name, const char* attributes, int64_t version) {
  return Emit(b, "CompositeCall", [&](Args& a) {
    if (name == nullptr) throw BadArgument{"null composite name"};
    std::optional<absl::string_view> attrs;
    if (attributes != nullptr) attrs = absl::string_view(attributes);
    std::optional<int64_t> v;
    if (version >= 0) v = version;
    return xjit::CompositeCall(a.builder(), a.computation(computation), a.ops(operands, n), name,
                               attrs, v);
  });
}

xjit_op xjit_conditional(xjit_builder* b, xjit_op pred, xjit_op true_operand,
                         xjit_computation true_computation, xjit_op false_operand,
                         xjit_computation false_computation) {
  return Emit(b, "Conditional", [&](Args& a) {
    return xjit::Conditional(a.op(pred, "pred"), a.op(true_operand, "true_operand"),
                             a.computation(true_computation, "true_computation"),
                             a.op(false_operand, "false_operand"),
                             a.computation(false_computation, "false_computation"));
  });
}

xjit_op xjit_conditional_indexed(xjit_builder* b, xjit_op branch_index,
                                 const xjit_computation* branches, const xjit_op* operands, int n) {
  return Emit(b, "Conditional", [&](Args& a) {
    if (n <= 0 || branches == nullptr) throw BadArgument{"a conditional needs at least one branch"};
    std::vector<Computation*> comps;
    for (int i = 0; i < n; ++i) comps.push_back(a.computation(branches[i], "branch"));
    return xjit::Conditional(a.op(branch_index, "branch_index"), comps,
                             a.ops(operands, n, "branch_operands"));
  });
}

xjit_op xjit_while(xjit_builder* b, xjit_computation condition, xjit_computation body,
                   xjit_op init) {
  return Emit(b, "While", [&](Args& a) {
    return xjit::While(a.computation(condition, "condition"), a.computation(body, "body"),
                       a.op(init, "init"));
  });
}

xjit_op xjit_custom_call(xjit_builder* b, const char* target, const xjit_op* operands, int n,
                         const xjit_shape* shape, const char* opaque, int has_side_effect) {
  return Emit(b, "CustomCall", [&](Args& a) {
    if (target == nullptr || *target == '\0') throw BadArgument{"empty call target name"};
    return xjit::CustomCall(a.builder(), target, a.ops(operands, n), a.shape(shape), a.str(opaque),
                            has_side_effect != 0);
  });
}

// ---- Random numbers ----

xjit_op xjit_rng_normal(xjit_builder* b, xjit_op mu, xjit_op sigma, const xjit_shape* shape) {
  return Emit(b, "RngNormal", [&](Args& a) {
    return xjit::RngNormal(a.op(mu, "mu"), a.op(sigma, "sigma"), a.shape(shape));
  });
}

xjit_op xjit_rng_uniform(xjit_builder* b, xjit_op lo, xjit_op hi, const xjit_shape* shape) {
  return Emit(b, "RngUniform", [&](Args& a) {
    return xjit::RngUniform(a.op(lo, "a"), a.op(hi, "b"), a.shape(shape));
  });
}

xjit_op xjit_rng_bit_generator(xjit_builder* b, xjit_rng_algorithm algorithm, xjit_op initial_state,
                               const xjit_shape* shape) {
  return Emit(b, "RngBitGenerator", [&](Args& a) {
    return xjit::RngBitGenerator(ToEnum<xjit::RandomAlgorithm>(algorithm, 3, "rng algorithm"),
                                 a.op(initial_state, "initial_state"), a.shape(shape));
  });
}

// ---- Tokens, I/O, channels ----

xjit_op xjit_create_token(xjit_builder* b) {
  return Emit(b, "CreateToken", [&](Args& a) { return xjit::CreateToken(a.builder()); });
}

xjit_op xjit_after_all(xjit_builder* b, const xjit_op* tokens, int n) {
  return Emit(b, "AfterAll",
              [&](Args& a) { return xjit::AfterAll(a.builder(), a.ops(tokens, n, "tokens")); });
}

xjit_op xjit_infeed(xjit_builder* b, const xjit_shape* shape, const char* config) {
  return Emit(b, "Infeed",
              [&](Args& a) { return xjit::Infeed(a.builder(), a.shape(shape), a.str(config)); });
}

xjit_op xjit_infeed_with_token(xjit_builder* b, xjit_op token, const xjit_shape* shape,
                               const char* config) {
  return Emit(b, "InfeedWithToken", [&](Args& a) {
    return xjit::InfeedWithToken(a.op(token, "token"), a.shape(shape), a.str(config));
  });
}

xjit_op xjit_outfeed_with_token(xjit_builder* b, xjit_op x, xjit_op token,
                                const xjit_shape* shape_with_layout, const char* config) {
  return Emit(b, "OutfeedWithToken", [&](Args& a) {
    return xjit::OutfeedWithToken(a.op(x), a.op(token, "token"), a.shape(shape_with_layout),
                                  a.str(config));
  });
}

xjit_op xjit_send(xjit_builder* b, xjit_op x, int64_t channel_id) {
  return Emit(b, "Send", [&](Args& a) { return xjit::Send(a.op(x), channel_id); });
}

xjit_op xjit_recv(xjit_builder* b, const xjit_shape* shape, int64_t channel_id) {
  return Emit(b, "Recv",
              [&](Args& a) { return xjit::Recv(a.builder(), a.shape(shape), channel_id); });
}

xjit_op xjit_send_with_token(xjit_builder* b, xjit_op x, xjit_op token, int64_t channel_id) {
  return Emit(b, "SendWithToken", [&](Args& a) {
    return xjit::SendWithToken(a.op(x), a.op(token, "token"), channel_id);
  });
}

xjit_op xjit_recv_with_token(xjit_builder* b, xjit_op token, const xjit_shape* shape,
                             int64_t channel_id) {
  return Emit(b, "RecvWithToken", [&](Args& a) {
    return xjit::RecvWithToken(a.op(token, "token"), a.shape(shape), channel_id);
  });
}

// ---- Collectives ----

xjit_op xjit_replica_id(xjit_builder* b) {
  return Emit(b, "ReplicaId", [&](Args& a) { return xjit::ReplicaId(a.builder()); });
}

xjit_op xjit_partition_id(xjit_builder* b) {
  return Emit(b, "PartitionId", [&](Args& a) { return xjit::PartitionId(a.builder()); });
}

xjit_op xjit_all_gather(xjit_builder* b, xjit_op x, int64_t all_gather_dimension,
                        int64_t shard_count, const int64_t* replica_groups, int num_groups,
                        int group_size, int64_t channel_id) {
  return Emit(b, "AllGather", [&](Args& a) {
    return xjit::AllGather(a.op(x), all_gather_dimension, shard_count,
                           a.groups(replica_groups, num_groups, group_size), a.channel(channel_id));
  });
}

xjit_op xjit_all_reduce(xjit_builder* b, xjit_op x, xjit_computation computation,
                        const int64_t* replica_groups, int num_groups, int group_size,
                        int64_t channel_id) {
  return Emit(b, "AllReduce", [&](Args& a) {
    return xjit::AllReduce(a.op(x), a.computation(computation),
                           a.groups(replica_groups, num_groups, group_size), a.channel(channel_id));
  });
}

xjit_op xjit_all_to_all(xjit_builder* b, xjit_op x, int64_t split_dimension,
                        int64_t concat_dimension, int64_t split_count,
                        const int64_t* replica_groups, int num_groups, int group_size) {
  return Emit(b, "AllToAll", [&](Args& a) {
    return xjit::AllToAll(a.op(x), split_dimension, concat_dimension, split_count,
                          a.groups(replica_groups, num_groups, group_size));
  });
}

xjit_op xjit_collective_permute(xjit_builder* b, xjit_op x, const int64_t* pairs, int n) {
  return Emit(b, "CollectivePermute", [&](Args& a) {
    if (n > 0 && pairs == nullptr) throw BadArgument{"null source-target pairs"};
    return xjit::CollectivePermute(a.op(x), a.pairs(pairs, n, "source_target_pairs"));
  });
}

xjit_op xjit_reduce_scatter(xjit_builder* b, xjit_op x, xjit_computation computation,
                            int64_t scatter_dimension, int64_t shard_count,
                            const int64_t* replica_groups, int num_groups, int group_size,
                            int64_t channel_id) {
  return Emit(b, "ReduceScatter", [&](Args& a) {
    return xjit::ReduceScatter(a.op(x), a.computation(computation), scatter_dimension, shard_count,
                               a.groups(replica_groups, num_groups, group_size),
                               a.channel(channel_id));
  });
}

xjit_op xjit_cross_replica_sum(xjit_builder* b, xjit_op x, const int64_t* replica_groups,
                               int num_groups, int group_size) {
  return Emit(b, "CrossReplicaSum", [&](Args& a) {
    return xjit::CrossReplicaSum(a.op(x), a.groups(replica_groups, num_groups, group_size));
  });
}

}  // extern "C"
