// Picks the rng-bit-generator loops for this CPU (bit_kernels.h).
#include "runtime/rng/bit_kernels.h"

namespace xjit::runtime::rng {

#if XJIT_RNG_HAVE_AVX2
namespace avx2 {
const BitKernels& Kernels();
}  // namespace avx2
#endif

const BitKernels& HostBitKernels() {
#if XJIT_RNG_HAVE_AVX2
  static const bool use_avx2 = __builtin_cpu_supports("avx2");
  if (use_avx2) return avx2::Kernels();
#endif
  return GenericBitKernels();
}

}  // namespace xjit::runtime::rng
