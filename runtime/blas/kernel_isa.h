// KernelIsa: which vector instruction set the runtime's hand-written f32
// kernels (SmallGemm, DirectConvolution) run with on this CPU.
//
// The kernels exist in AVX-512F (16 lanes, 32 zmm registers) and AVX2+FMA
// (8 lanes, 16 ymm registers) versions, compiled in functions with those
// targets so the rest of the build needs neither flag. The best one the CPU
// has is used; without either (or off x86-64) callers keep OpenBLAS/im2col.
// Tests force a narrower ISA than the CPU's best (ScopedKernelIsaForTesting)
// so that every version the CPU can run is tested on it.
#ifndef XJIT_RUNTIME_BLAS_KERNEL_ISA_H_
#define XJIT_RUNTIME_BLAS_KERNEL_ISA_H_

namespace xjit::runtime::blas {

enum class KernelIsa { kNone, kAvx2, kAvx512 };

// "none", "avx2", "avx512".
const char* KernelIsaName(KernelIsa isa);

// Whether this CPU runs `isa`'s kernels (kNone: always).
bool CpuHasKernelIsa(KernelIsa isa);

// The ISA the kernels use now: the best the CPU has, or the one a
// ScopedKernelIsaForTesting forces.
KernelIsa CurrentKernelIsa();

// Tests only: while alive, CurrentKernelIsa() is `isa` (which the CPU must
// have). Not thread-safe against kernels running meanwhile.
class ScopedKernelIsaForTesting {
 public:
  explicit ScopedKernelIsaForTesting(KernelIsa isa);
  ~ScopedKernelIsaForTesting();
  ScopedKernelIsaForTesting(const ScopedKernelIsaForTesting&) = delete;
  ScopedKernelIsaForTesting& operator=(const ScopedKernelIsaForTesting&) = delete;

 private:
  int previous_;
};

}  // namespace xjit::runtime::blas

#endif  // XJIT_RUNTIME_BLAS_KERNEL_ISA_H_
