#include "ir/opcode.h"

#include <array>

namespace xjit {
namespace {

struct OpcodeInfo {
  absl::string_view name;
  int arity;
};

constexpr std::array<OpcodeInfo, kNumOpcodes> kInfo = {{
#define XJIT_OPCODE_INFO(e, name, arity) {name, arity},
    XJIT_OPCODES(XJIT_OPCODE_INFO)
#undef XJIT_OPCODE_INFO
}};

}  // namespace

absl::string_view OpcodeName(Opcode opcode) { return kInfo[static_cast<int>(opcode)].name; }

std::optional<Opcode> ParseOpcode(absl::string_view name) {
  for (int i = 0; i < kNumOpcodes; ++i) {
    if (kInfo[i].name == name) return static_cast<Opcode>(i);
  }
  return std::nullopt;
}

int OpcodeArity(Opcode opcode) { return kInfo[static_cast<int>(opcode)].arity; }

bool IsElementwiseUnary(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAbs: case Opcode::kAcos: case Opcode::kAcosh: case Opcode::kAsin:
    case Opcode::kAsinh: case Opcode::kAtan: case Opcode::kAtanh: case Opcode::kCbrt:
    case Opcode::kCeil: case Opcode::kClz: case Opcode::kCos: case Opcode::kCosh:
    case Opcode::kErf: case Opcode::kExp: case Opcode::kExpm1: case Opcode::kFloor:
    case Opcode::kImag: case Opcode::kIsFinite: case Opcode::kLog: case Opcode::kLog1p:
    case Opcode::kLogistic: case Opcode::kNegate: case Opcode::kNot:
    case Opcode::kPopulationCount: case Opcode::kReal: case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven: case Opcode::kRsqrt: case Opcode::kSign: case Opcode::kSin:
    case Opcode::kSinh: case Opcode::kSqrt: case Opcode::kTan: case Opcode::kTanh:
      return true;
    default:
      return false;
  }
}

bool IsElementwiseBinary(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAdd: case Opcode::kAnd: case Opcode::kAtan2: case Opcode::kCompare:
    case Opcode::kComplex: case Opcode::kDivide: case Opcode::kMaximum: case Opcode::kMinimum:
    case Opcode::kMulhi: case Opcode::kMultiply: case Opcode::kOr: case Opcode::kPower:
    case Opcode::kRemainder: case Opcode::kShiftLeft: case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical: case Opcode::kSubtract: case Opcode::kXor:
      return true;
    default:
      return false;
  }
}

bool IsElementwise(Opcode opcode) {
  return IsElementwiseUnary(opcode) || IsElementwiseBinary(opcode) || opcode == Opcode::kSelect ||
         opcode == Opcode::kClamp || opcode == Opcode::kConvert ||
         opcode == Opcode::kReducePrecision || opcode == Opcode::kStochasticConvert;
}

bool HasSideEffect(Opcode opcode) {
  switch (opcode) {
    case Opcode::kInfeed: case Opcode::kOutfeed: case Opcode::kSend: case Opcode::kSendDone:
    case Opcode::kRecv: case Opcode::kRecvDone: case Opcode::kRng:
    case Opcode::kRngGetAndUpdateState: case Opcode::kAfterAll:
    case Opcode::kAddDependency: case Opcode::kOptimizationBarrier:
      return true;
    default:
      return false;
  }
}

}  // namespace xjit
