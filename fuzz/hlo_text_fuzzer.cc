// Fuzz target: the HLO text parser and the verifier. Any input must parse or
// fail with a status (never crash or hang); a module that parses and
// verifies must print as text that parses and verifies again and prints the
// same (the printer and parser agree on everything the IR holds).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz/fuzz_target.h"
#include "ir/hlo_text/parser.h"
#include "ir/hlo_text/printer.h"
#include "ir/verifier.h"

namespace xjit::fuzz {

std::vector<std::string> XjitFuzzSeeds() {
  return {R"(HloModule seed
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  p = f32[2,3]{1,0} parameter(0)
  c = f32[2,3]{0,1} copy(p)
  z = f32[] constant(0)
  r = f32[2]{0} reduce(c, z), dimensions={1}, to_apply=add
  t = (f32[2,3]{1,0}, f32[2]{0}) tuple(p, r)
  ROOT g = f32[2]{0} get-tuple-element(t), index=1
}
)"};
}

std::vector<std::string> XjitFuzzDictionary() {
  return {"f32[",
          "s32[",
          "pred[",
          "(",
          ")",
          "{",
          "}",
          "[",
          "]",
          ",",
          "=",
          "{1,0}",
          "{0,1}",
          ":T(",
          ":PD(",
          "L(",
          "E(",
          "ROOT ",
          "ENTRY ",
          "parameter(0)",
          "<=",
          "?",
          "-1",
          "4611686018427387904",
          "9223372036854775807",
          "control-predecessors={",
          "to_apply=",
          "calls=",
          "dimensions={",
          "slice={[0:2:9223372036854775807]}",
          "padding=0_0_-1",
          "replica_groups={{0,0}}",
          "\"",
          "/*",
          "*/",
          "\n",
          "%"};
}

}  // namespace xjit::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace xjit;  // NOLINT
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text, "fuzz.hlo");
  if (!module.ok()) {
    (void)ParseShape(text);
    (void)ParseLiteral(text);
    return 0;
  }
  if (!VerifyModule(**module).ok()) return 0;
  fuzz::XjitFuzzKeep();
  const std::string printed = PrintModule(**module);
  absl::StatusOr<std::unique_ptr<Module>> again = ParseHloModule(printed, "printed.hlo");
  if (!again.ok()) {
    std::fprintf(stderr, "printed module does not parse: %s\n%s\n",
                 std::string(again.status().message()).c_str(), printed.c_str());
    std::abort();
  }
  const absl::Status verified = VerifyModule(**again);
  if (!verified.ok()) {
    std::fprintf(stderr, "printed module does not verify: %s\n%s\n",
                 std::string(verified.message()).c_str(), printed.c_str());
    std::abort();
  }
  if (PrintModule(**again) != printed) {
    std::fprintf(stderr, "printing is not stable:\n%s\n---\n%s\n", printed.c_str(),
                 PrintModule(**again).c_str());
    std::abort();
  }
  return 0;
}
