// The structural key of a module: a compact binary encoding of everything
// that makes up the module (every computation, instruction, shape, layout,
// attribute, literal and opaque attribute, operands and called computations
// by position), written straight from the IR. Two modules have equal keys
// exactly when they are structurally identical, so a map keyed by it (the
// compile cache, jit/compile_cache.h) never confuses two modules: a hash of
// the key picks the bucket and the whole key is compared on a hit.
//
// It costs a small fraction of printing the module (no number formatting,
// varints instead of text) and is not meant to be read or stored: the
// encoding may change between builds.
//
// The key covers every field of the IR classes. A field added to
// InstructionAttributes, Layout, Shape, Literal, Instruction, Computation or
// Module must be added to the key too (structural_key.cc): a static_assert on
// their sizes there fails the build until it is, and structural_key_test
// checks that changing each field changes the key.
#ifndef XJIT_IR_STRUCTURAL_KEY_H_
#define XJIT_IR_STRUCTURAL_KEY_H_

#include <string>

#include "ir/module.h"

namespace xjit {

// Appends the key of `module` to `out`. The module's computations and their
// called computations must be non-null.
void AppendStructuralKey(const Module& module, std::string* out);

}  // namespace xjit

#endif  // XJIT_IR_STRUCTURAL_KEY_H_
