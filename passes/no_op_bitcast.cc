#include "passes/no_op_bitcast.h"

namespace xjit {

absl::StatusOr<bool> NoOpMovesToBitcast::Run(Module* module) { return false; }

}  // namespace xjit
