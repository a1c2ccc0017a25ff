#include "ir/element_type.h"

#include <array>

namespace xjit {
namespace {

enum Kind { kPredKind, kSignedKind, kUnsignedKind, kFloatKind, kComplexKind, kOtherKind };

struct ElementTypeInfo {
  absl::string_view name;
  int bits;
  Kind kind;
};

constexpr std::array<ElementTypeInfo, kNumElementTypes> kInfo = {{
#define XJIT_ELEMENT_TYPE_INFO(e, name, bits, kind) {name, bits, kind},
    XJIT_ELEMENT_TYPES(XJIT_ELEMENT_TYPE_INFO)
#undef XJIT_ELEMENT_TYPE_INFO
}};

const ElementTypeInfo& Info(ElementType type) { return kInfo[static_cast<int>(type)]; }

}  // namespace

absl::string_view ElementTypeName(ElementType type) { return Info(type).name; }

std::optional<ElementType> ParseElementType(absl::string_view name) {
  for (int i = 0; i < kNumElementTypes; ++i) {
    if (kInfo[i].name == name) return static_cast<ElementType>(i);
  }
  return std::nullopt;
}

int BitWidth(ElementType type) { return Info(type).bits; }
int64_t ByteWidth(ElementType type) { return (Info(type).bits + 7) / 8; }

bool IsPred(ElementType type) { return Info(type).kind == kPredKind; }
bool IsSignedInteger(ElementType type) { return Info(type).kind == kSignedKind; }
bool IsUnsignedInteger(ElementType type) { return Info(type).kind == kUnsignedKind; }
bool IsInteger(ElementType type) { return IsSignedInteger(type) || IsUnsignedInteger(type); }
bool IsFloat(ElementType type) { return Info(type).kind == kFloatKind; }
bool IsComplex(ElementType type) { return Info(type).kind == kComplexKind; }
bool IsArrayElementType(ElementType type) { return Info(type).kind != kOtherKind; }
bool IsMiniFloat(ElementType type) { return IsFloat(type) && BitWidth(type) < 16; }

ElementType ComplexComponentType(ElementType type) {
  return type == ElementType::kC128 ? ElementType::kF64 : ElementType::kF32;
}

}  // namespace xjit
