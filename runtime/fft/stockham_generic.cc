// The Stockham kernels for the baseline instruction set (see
// stockham_kernels.inc).
#define XJIT_FFT_NS generic
#include "runtime/fft/stockham_kernels.inc"
