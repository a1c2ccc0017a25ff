// The rng-bit-generator loops compiled with -mavx2 (bit_kernels.cc calls
// them only on a CPU that has AVX2).
#define XJIT_RNG_NAMESPACE avx2
#include "runtime/rng/bit_kernels.inc"
