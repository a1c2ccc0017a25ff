// Internal to shape inference (ir/shape_inference/shape_inference.cc and the per-family
// rule files beside this header): the per-instruction context `Ctx` that
// builds errors prefixed with the opcode and hands out checked operand shapes,
// and the size, shape and called-computation helpers that several families
// share. Sizes follow ir/shape_inference/shape_inference.cc's conventions: Shape::kUnboundedSize
// matches any size, and nothing here trusts its input.
#ifndef XJIT_IR_SHAPE_INFERENCE_INFER_UTIL_H_
#define XJIT_IR_SHAPE_INFERENCE_INFER_UTIL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ir/computation.h"
#include "ir/instruction.h"
#include "ir/shape.h"
#include "ir/status_macros.h"

namespace xjit::shape_inference_internal {

inline constexpr int64_t kUnbounded = Shape::kUnboundedSize;

// ---------------------------------------------------------------------------
// Small utilities.

// A shape without its layout, a type name and a dimension list, for messages.
std::string Str(const Shape& shape);
std::string TypeName(ElementType type);
std::string DimsStr(absl::Span<const int64_t> dims);

bool IsUnbounded(int64_t size);

// Sizes match when equal or when either is unbounded.
bool SizesMatch(int64_t a, int64_t b);

// The size a result takes from two matching sizes: the bounded one if any.
int64_t MergeSize(int64_t a, int64_t b);

// True, with *out unspecified, when the sum or product does not fit in int64.
bool AddOverflows(int64_t a, int64_t b, int64_t* out);
bool MulOverflows(int64_t a, int64_t b, int64_t* out);

// Same rank and matching sizes (element types not compared).
bool SameDimensions(const Shape& a, const Shape& b);

// Compatible() that lets an unbounded size match any size.
bool ShapesMatch(const Shape& a, const Shape& b);

// An array with the default layout and the given dynamic flags (empty = none).
Shape MakeArray(ElementType type, absl::Span<const int64_t> dims,
                const std::vector<bool>& dynamic = {});

std::vector<int64_t> Dims(const Shape& shape);
std::vector<bool> DynamicFlags(const Shape& shape);

// `shape` with every array given the default layout (replacing any other).
Shape WithDefaultLayout(Shape shape);

// Checks that sizes are non-negative (or unbounded) and that the element
// count of every array fits in int64.
absl::Status CheckWellFormed(const Shape& shape, int depth = 0);

// Element count with unbounded sizes counted as 1; callers check
// well-formedness first, so this cannot overflow.
int64_t BoundedElementCount(const Shape& shape);

bool HasUnbounded(const Shape& shape);

bool IsNumeric(ElementType t);
bool IsFloatOrComplex(ElementType t);

// ---------------------------------------------------------------------------
// The per-instruction context: error construction and operand access.

class Ctx {
 public:
  explicit Ctx(const Instruction& instruction)
      : instr(instruction), attrs(instruction.attrs()), op(OpcodeName(instruction.opcode())) {}

  template <typename... Args>
  absl::Status Error(const absl::FormatSpec<Args...>& format, const Args&... args) const {
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", absl::StrFormat(format, args...)));
  }
  absl::Status Error(absl::string_view message) const {
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", message));
  }

  int64_t operand_count() const { return instr.operand_count(); }

  absl::Status ExpectOperandCount(int64_t n) const {
    if (operand_count() != n) {
      return Error("expects %d operands, has %d", n, operand_count());
    }
    return absl::OkStatus();
  }
  absl::Status ExpectMinOperandCount(int64_t n) const {
    if (operand_count() < n) {
      return Error("expects at least %d operands, has %d", n, operand_count());
    }
    return absl::OkStatus();
  }

  // The shape of operand i, after checking it exists and is well formed.
  absl::StatusOr<const Shape*> Operand(int64_t i) const {
    if (i < 0 || i >= operand_count()) return Error("missing operand %d", i);
    const Instruction* operand = instr.operand(i);
    if (operand == nullptr) return Error("operand %d is null", i);
    absl::Status status = CheckWellFormed(operand->shape());
    if (!status.ok()) return Error("operand %d: %s", i, status.message());
    return &operand->shape();
  }

  absl::StatusOr<const Shape*> ArrayOperand(int64_t i, absl::string_view what) const {
    XJIT_ASSIGN_OR_RETURN(const Shape* shape, Operand(i));
    if (!shape->IsArray()) return Error("%s must be an array, got %s", what, Str(*shape));
    return shape;
  }

  absl::StatusOr<const Shape*> ScalarOperand(int64_t i, absl::string_view what) const {
    XJIT_ASSIGN_OR_RETURN(const Shape* shape, Operand(i));
    if (!shape->IsScalar()) return Error("%s must be a scalar, got %s", what, Str(*shape));
    return shape;
  }

  // The instruction's own shape, for opcodes whose result it defines.
  absl::StatusOr<Shape> GivenShape() const {
    absl::Status status = CheckWellFormed(instr.shape());
    if (!status.ok()) return Error("result shape: %s", status.message());
    return WithDefaultLayout(instr.shape());
  }
  absl::StatusOr<Shape> GivenArrayShape() const {
    XJIT_ASSIGN_OR_RETURN(Shape shape, GivenShape());
    if (!shape.IsArray()) return Error("result must be an array, got %s", Str(shape));
    return shape;
  }

  absl::StatusOr<const Computation*> Called(int64_t i, absl::string_view role) const {
    const auto& called = instr.called_computations();
    if (i < 0 || i >= static_cast<int64_t>(called.size()) || called[i] == nullptr) {
      return Error("missing %s computation", role);
    }
    return called[i];
  }

  absl::Status ExpectCalledCount(int64_t n) const {
    int64_t have = static_cast<int64_t>(instr.called_computations().size());
    if (have != n) return Error("expects %d called computations, has %d", n, have);
    return absl::OkStatus();
  }

  // A dimension index attribute in [0, rank).
  absl::Status CheckDimension(int64_t dim, int64_t rank, absl::string_view what) const {
    if (dim < 0 || dim >= rank) return Error("%s %d is out of range for rank %d", what, dim, rank);
    return absl::OkStatus();
  }

  // A list of distinct dimension indices in [0, rank), sorted if asked.
  absl::Status CheckDimensionList(absl::Span<const int64_t> dims, int64_t rank,
                                  absl::string_view what, bool sorted = false) const {
    absl::flat_hash_set<int64_t> seen;
    for (size_t i = 0; i < dims.size(); ++i) {
      XJIT_RETURN_IF_ERROR(CheckDimension(dims[i], rank, what));
      if (!seen.insert(dims[i]).second) return Error("%s %d is repeated", what, dims[i]);
      if (sorted && i > 0 && dims[i] < dims[i - 1]) {
        return Error("%s %s must be sorted", what, DimsStr(dims));
      }
    }
    return absl::OkStatus();
  }

  const Instruction& instr;
  const InstructionAttributes& attrs;
  absl::string_view op;
};

// The parameter shapes and root shape of a called computation.
struct Signature {
  std::vector<const Shape*> params;
  const Shape* result = nullptr;
};

absl::StatusOr<Signature> GetSignature(const Ctx& ctx, const Computation* computation,
                                       absl::string_view role);

// Checks a called computation's parameters against the shapes the caller
// passes (layouts aside) and returns its signature.
absl::StatusOr<Signature> CheckParams(const Ctx& ctx, const Computation* computation,
                                      absl::string_view role,
                                      const std::vector<const Shape*>& args);

// Checks a reducer of N accumulators: parameters (acc_0..acc_{N-1},
// value_0..value_{N-1}) are scalars, accumulators of the init types, values
// of the init or input types; the root is the accumulators (a tuple if N > 1).
absl::Status CheckReducer(const Ctx& ctx, const Computation* comp, absl::string_view role,
                          const std::vector<ElementType>& inits,
                          const std::vector<ElementType>& inputs);

std::vector<ElementType> ElementTypes(const std::vector<const Shape*>& shapes);

// The window output size of one dimension: the number of valid placements of
// a (dilated) window of `size` with `stride` over the padded, dilated base.
absl::StatusOr<int64_t> WindowOutputSize(const Ctx& ctx, int64_t base, const WindowDimension& w,
                                         int64_t dim);

// The integers of an opaque attribute `key={1,2}` (or `key=3`); nullopt when
// absent. ragged-dot's ragged dimension numbers and the scan and shuffle
// attributes stay opaque in InstructionAttributes.
absl::StatusOr<std::optional<std::vector<int64_t>>> OpaqueInts(const Ctx& ctx,
                                                               absl::string_view key);

// The operands' shapes, null where an operand is null (unchecked).
std::vector<const Shape*> OperandShapes(const Ctx& ctx);

// Every operand exists and is well formed.
absl::Status CheckAllOperands(const Ctx& ctx);

// Shapes of all operands with default layouts; a tuple if there are several.
absl::StatusOr<Shape> OperandsAsResult(const Ctx& ctx, bool force_tuple = false);

}  // namespace xjit::shape_inference_internal

#endif  // XJIT_IR_SHAPE_INFERENCE_INFER_UTIL_H_
