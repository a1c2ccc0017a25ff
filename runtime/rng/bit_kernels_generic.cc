// The rng-bit-generator loops for the baseline instruction set.
#define XJIT_RNG_NAMESPACE generic
#include "runtime/rng/bit_kernels.inc"

namespace xjit::runtime::rng {

const BitKernels& GenericBitKernels() { return generic::Kernels(); }

}  // namespace xjit::runtime::rng
