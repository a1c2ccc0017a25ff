// The opcode table's lookups (see opcode.h): each reads a column of one row.
#include "ir/opcode.h"

#include <array>

namespace xjit {
namespace {

struct OpcodeInfo {
  absl::string_view name;
  int arity;
  ElementwiseClass elementwise;
  uint8_t flags;
};

// The table's class and flags columns name them unqualified.
using enum ElementwiseClass;
using namespace opcode_flags;

constexpr std::array<OpcodeInfo, kNumOpcodes> kInfo = {{
#define XJIT_OPCODE_INFO(e, name, arity, elementwise, flags) {name, arity, elementwise, flags},
    XJIT_OPCODES_WITH_PROPERTIES(XJIT_OPCODE_INFO)
#undef XJIT_OPCODE_INFO
}};

const OpcodeInfo& Info(Opcode opcode) { return kInfo[static_cast<int>(opcode)]; }

bool HasFlag(Opcode opcode, uint8_t flag) { return (Info(opcode).flags & flag) != 0; }

}  // namespace

absl::string_view OpcodeName(Opcode opcode) { return Info(opcode).name; }

std::optional<Opcode> ParseOpcode(absl::string_view name) {
  for (int i = 0; i < kNumOpcodes; ++i) {
    if (kInfo[i].name == name) return static_cast<Opcode>(i);
  }
  return std::nullopt;
}

int OpcodeArity(Opcode opcode) { return Info(opcode).arity; }

ElementwiseClass OpcodeElementwiseClass(Opcode opcode) { return Info(opcode).elementwise; }

bool IsElementwiseUnary(Opcode opcode) { return Info(opcode).elementwise == kUnary; }

bool IsElementwiseBinary(Opcode opcode) { return Info(opcode).elementwise == kBinary; }

bool IsElementwise(Opcode opcode) { return Info(opcode).elementwise != kNone; }

bool IsExpensiveElementwise(Opcode opcode) { return HasFlag(opcode, kExpensive); }

bool HasComplexMath(Opcode opcode) { return HasFlag(opcode, kComplexMath); }

bool HasSideEffect(Opcode opcode) { return HasFlag(opcode, kSideEffect); }

bool IsPlace(Opcode opcode) { return HasFlag(opcode, kPlace); }

}  // namespace xjit
