// The inner loops of rng-bit-generator (bit_generator.h): ThreeFry-2x32 and
// Philox-4x32 over runs of consecutive counters, eight blocks at a time in
// vector registers. They are compiled twice on x86-64 (baseline and
// AVX2; HostBitKernels picks by the CPU) from one source, bit_kernels.inc.
//
// Every function writes words of one width (kernel table index 0: u8,
// 1: u16, 2: u32): a generated 32-bit word truncated to its low bits. 64-bit
// outputs are written as pairs of u32 words, low word first.
#ifndef XJIT_RUNTIME_RNG_BIT_KERNELS_H_
#define XJIT_RUNTIME_RNG_BIT_KERNELS_H_

#include <cstdint>

namespace xjit::runtime::rng {

struct BitKernels {
  // Blocks j in [0, n) with counters counter + j (64-bit, wrapping): word 0
  // of block j to out0[j], word 1 to out1[j] (out1 may be null: dropped).
  void (*threefry_split[3])(uint32_t k0, uint32_t k1, uint64_t counter, int64_t n, void* out0,
                            void* out1);
  // Words w in [0, words): word w % 2 of the block with counter
  // counter + w / 2, to out[w].
  void (*threefry_interleaved[3])(uint32_t k0, uint32_t k1, uint64_t counter, int64_t words,
                                  void* out);
  // Words w in [0, words): word w % 4 of the block whose 128-bit counter is
  // (high, low) + w / 4, to out[w].
  void (*philox[3])(uint32_t k0, uint32_t k1, uint64_t low, uint64_t high, int64_t words,
                    void* out);
};

// The baseline build, and the one the compile driver's host runs best
// (AVX2 where the CPU has it).
const BitKernels& GenericBitKernels();
const BitKernels& HostBitKernels();

}  // namespace xjit::runtime::rng

#endif  // XJIT_RUNTIME_RNG_BIT_KERNELS_H_
