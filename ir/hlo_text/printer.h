// HLO text printer: the canonical text of a module, in the form XLA prints
// (`%name = shape opcode(shape %operand, ...), attr=...`). Parsing the output
// and printing again gives the same text.
#ifndef XJIT_IR_HLO_TEXT_PRINTER_H_
#define XJIT_IR_HLO_TEXT_PRINTER_H_

#include <string>

#include "ir/computation.h"
#include "ir/instruction.h"
#include "ir/module.h"

namespace xjit {

std::string PrintModule(const Module& module);
std::string PrintComputation(const Computation& computation);
// One instruction line without indentation or trailing newline.
std::string PrintInstruction(const Instruction& instruction);

}  // namespace xjit

#endif  // XJIT_IR_HLO_TEXT_PRINTER_H_
