// KernelIsaTest: a test fixture parameterised by runtime kernel ISA
// (runtime/blas/kernel_isa.h). Each test runs with its ISA forced; an ISA
// the CPU lacks is skipped, and says so. Instantiate with
//   INSTANTIATE_TEST_SUITE_P(Isa, Fixture, kKernelIsas, KernelIsaTestName);
#ifndef XJIT_TESTS_BLAS_KERNEL_ISA_TEST_H_
#define XJIT_TESTS_BLAS_KERNEL_ISA_TEST_H_

#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "runtime/blas/kernel_isa.h"

namespace xjit::runtime::blas {

class KernelIsaTest : public testing::TestWithParam<KernelIsa> {
 protected:
  void SetUp() override {
    if (!CpuHasKernelIsa(GetParam())) {
      GTEST_SKIP() << "this CPU has no " << KernelIsaName(GetParam());
    }
    isa_.emplace(GetParam());
  }
  std::optional<ScopedKernelIsaForTesting> isa_;
};

inline const auto kKernelIsas = testing::Values(KernelIsa::kAvx512, KernelIsa::kAvx2);

inline std::string KernelIsaTestName(const testing::TestParamInfo<KernelIsa>& info) {
  return std::string(KernelIsaName(info.param));
}

}  // namespace xjit::runtime::blas

#endif  // XJIT_TESTS_BLAS_KERNEL_ISA_TEST_H_
