// The interface between a fuzz target and whatever drives it: libFuzzer
// (the optional `-Dfuzz_engine=libfuzzer` build) or xjit's own deterministic
// mutator (fuzz_driver.cc, the default and what CI runs). A target defines
// LLVMFuzzerTestOneInput, which must return 0 and must not crash, hang, leak
// or read out of bounds on any input; and XjitFuzzSeeds, its built-in seed
// inputs. It calls XjitFuzzKeep when an input got far (parsed, verified):
// the deterministic driver then keeps it as a seed for further mutation,
// which stands in for libFuzzer's coverage feedback.
#ifndef XJIT_FUZZ_FUZZ_TARGET_H_
#define XJIT_FUZZ_FUZZ_TARGET_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace xjit::fuzz {

// Built-in seeds (the driver adds files from --seeds directories).
std::vector<std::string> XjitFuzzSeeds();
// Tokens the mutator splices in (numbers at the edges of int64, syntax).
std::vector<std::string> XjitFuzzDictionary();
// Called by the target when the current input was interesting.
void XjitFuzzKeep();

}  // namespace xjit::fuzz

#endif  // XJIT_FUZZ_FUZZ_TARGET_H_
