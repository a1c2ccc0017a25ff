// The Stockham kernels compiled with -mavx2 -mfma (x86-64 only; chosen at
// run time when the CPU has both, see stockham.cc).
#define XJIT_FFT_NS avx2
#include "runtime/fft/stockham_kernels.inc"
