// Element types of XLA arrays: their HLO text names, storage widths and
// classification. The table below is the single definition; everything else
// (the enum, name lookup, widths) is derived from it.
#ifndef XJIT_IR_ELEMENT_TYPE_H_
#define XJIT_IR_ELEMENT_TYPE_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"

namespace xjit {

// V(enum, text name, bit width, kind). Kind is one of: pred, sint, uint,
// float, complex, other. Bit width is the natural (unpacked-array) width;
// PRED occupies one byte. Sub-byte types occupy one byte per element unless a
// layout's element_size_in_bits packs them.
#define XJIT_ELEMENT_TYPES(V)                  \
  V(kPred, "pred", 8, kPredKind)               \
  V(kS1, "s1", 1, kSignedKind)                 \
  V(kS2, "s2", 2, kSignedKind)                 \
  V(kS4, "s4", 4, kSignedKind)                 \
  V(kS8, "s8", 8, kSignedKind)                 \
  V(kS16, "s16", 16, kSignedKind)              \
  V(kS32, "s32", 32, kSignedKind)              \
  V(kS64, "s64", 64, kSignedKind)              \
  V(kU1, "u1", 1, kUnsignedKind)               \
  V(kU2, "u2", 2, kUnsignedKind)               \
  V(kU4, "u4", 4, kUnsignedKind)               \
  V(kU8, "u8", 8, kUnsignedKind)               \
  V(kU16, "u16", 16, kUnsignedKind)            \
  V(kU32, "u32", 32, kUnsignedKind)            \
  V(kU64, "u64", 64, kUnsignedKind)            \
  V(kF16, "f16", 16, kFloatKind)               \
  V(kBF16, "bf16", 16, kFloatKind)             \
  V(kF32, "f32", 32, kFloatKind)               \
  V(kF64, "f64", 64, kFloatKind)               \
  V(kC64, "c64", 64, kComplexKind)             \
  V(kC128, "c128", 128, kComplexKind)          \
  V(kF8E5M2, "f8e5m2", 8, kFloatKind)          \
  V(kF8E4M3, "f8e4m3", 8, kFloatKind)          \
  V(kF8E4M3FN, "f8e4m3fn", 8, kFloatKind)      \
  V(kF8E3M4, "f8e3m4", 8, kFloatKind)          \
  V(kF8E4M3FNUZ, "f8e4m3fnuz", 8, kFloatKind)  \
  V(kF8E5M2FNUZ, "f8e5m2fnuz", 8, kFloatKind)  \
  V(kF8E4M3B11FNUZ, "f8e4m3b11fnuz", 8, kFloatKind) \
  V(kF8E8M0FNU, "f8e8m0fnu", 8, kFloatKind)    \
  V(kF4E2M1FN, "f4e2m1fn", 4, kFloatKind)      \
  V(kToken, "token", 0, kOtherKind)            \
  V(kOpaque, "opaque", 0, kOtherKind)          \
  V(kTuple, "tuple", 0, kOtherKind)

enum class ElementType : uint8_t {
#define XJIT_DECLARE_ELEMENT_TYPE(e, name, bits, kind) e,
  XJIT_ELEMENT_TYPES(XJIT_DECLARE_ELEMENT_TYPE)
#undef XJIT_DECLARE_ELEMENT_TYPE
};

inline constexpr int kNumElementTypes = 0
#define XJIT_COUNT_ELEMENT_TYPE(e, name, bits, kind) +1
    XJIT_ELEMENT_TYPES(XJIT_COUNT_ELEMENT_TYPE)
#undef XJIT_COUNT_ELEMENT_TYPE
    ;

// The HLO text spelling: "f32", "pred", "bf16", ...
absl::string_view ElementTypeName(ElementType type);
// The inverse of ElementTypeName; nullopt for an unknown name.
std::optional<ElementType> ParseElementType(absl::string_view name);

// Natural width in bits (0 for token, opaque, tuple).
int BitWidth(ElementType type);
// Bytes per element in an unpacked array: ceil(BitWidth / 8); PRED is 1.
int64_t ByteWidth(ElementType type);

bool IsPred(ElementType type);
bool IsSignedInteger(ElementType type);
bool IsUnsignedInteger(ElementType type);
bool IsInteger(ElementType type);  // Signed or unsigned; not PRED.
bool IsFloat(ElementType type);    // Every real floating-point type.
bool IsComplex(ElementType type);
// An element type an array may have (not token, opaque or tuple).
bool IsArrayElementType(ElementType type);
// Floats narrower than 16 bits: the f8 and f4 families.
bool IsMiniFloat(ElementType type);
// The real component type of a complex type (c64 -> f32, c128 -> f64).
ElementType ComplexComponentType(ElementType type);

}  // namespace xjit

#endif  // XJIT_IR_ELEMENT_TYPE_H_
