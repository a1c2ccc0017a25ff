// With libFuzzer (-Dfuzz_engine=libfuzzer), libFuzzer's main drives the
// target and its coverage feedback replaces XjitFuzzKeep.
#include "fuzz/fuzz_target.h"

namespace xjit::fuzz {
void XjitFuzzKeep() {}
}  // namespace xjit::fuzz
