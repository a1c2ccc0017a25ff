// KernelIsa; see kernel_isa.h.
#include "runtime/blas/kernel_isa.h"

#include <atomic>

namespace xjit::runtime::blas {

namespace {

// -1: no override (the CPU's best); otherwise a KernelIsa.
std::atomic<int> forced_isa{-1};

KernelIsa BestKernelIsa() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const KernelIsa best = __builtin_cpu_supports("avx512f") ? KernelIsa::kAvx512
                                : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
                                    ? KernelIsa::kAvx2
                                    : KernelIsa::kNone;
  return best;
#else
  return KernelIsa::kNone;
#endif
}

}  // namespace

const char* KernelIsaName(KernelIsa isa) {
  switch (isa) {
    case KernelIsa::kAvx512:
      return "avx512";
    case KernelIsa::kAvx2:
      return "avx2";
    case KernelIsa::kNone:
      break;
  }
  return "none";
}

bool CpuHasKernelIsa(KernelIsa isa) {
  // AVX-512F CPUs have AVX2 and FMA too (every one shipped so far).
  return static_cast<int>(isa) <= static_cast<int>(BestKernelIsa());
}

KernelIsa CurrentKernelIsa() {
  const int forced = forced_isa.load(std::memory_order_relaxed);
  return forced < 0 ? BestKernelIsa() : static_cast<KernelIsa>(forced);
}

ScopedKernelIsaForTesting::ScopedKernelIsaForTesting(KernelIsa isa)
    : previous_(forced_isa.exchange(static_cast<int>(isa))) {}

ScopedKernelIsaForTesting::~ScopedKernelIsaForTesting() { forced_isa.store(previous_); }

}  // namespace xjit::runtime::blas
