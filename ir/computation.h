// Computation: a list of instructions in SSA form, in an order where every
// operand precedes its users, with parameters and one root. Owned by a Module.
#ifndef XJIT_IR_COMPUTATION_H_
#define XJIT_IR_COMPUTATION_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "ir/instruction.h"
#include "ir/name_index.h"

namespace xjit {

class Module;

class Computation {
 public:
  explicit Computation(std::string name) : name_(std::move(name)) {}
  Computation(const Computation&) = delete;
  Computation& operator=(const Computation&) = delete;

  const std::string& name() const { return name_; }
  // Renames (and keeps the module's name index in step).
  void set_name(std::string name);

  // Appends an instruction (its operands must already belong to this
  // computation); parameters are also registered by parameter_number.
  Instruction* AddInstruction(std::unique_ptr<Instruction> instruction);
  // Removes an instruction with no users. The caller guarantees it is not the
  // root and not a parameter. Constant time (besides the operands' user
  // lists): the slot is emptied and the list closes its gaps at the next
  // instructions() (one pass for any number of removals), where an erase per
  // removal made a pass that replaces n of n instructions quadratic (issue
  // 30: fusing a root tuple of 100,000 values).
  void RemoveInstruction(Instruction* instruction);

  // Instructions in definition order (operands before users). The reference
  // stays valid until the computation is next changed (as a vector's would).
  const std::vector<std::unique_ptr<Instruction>>& instructions() const {
    if (holes_.load(std::memory_order_acquire) != 0) CloseHoles();
    return instructions_;
  }
  int64_t instruction_count() const {
    return static_cast<int64_t>(instructions_.size()) - holes_.load(std::memory_order_acquire);
  }

  // Parameters by number; entries may be null while parsing (the verifier
  // checks that numbers are dense).
  const std::vector<Instruction*>& parameters() const { return parameters_; }
  Instruction* parameter(int64_t i) const { return parameters_[i]; }
  int64_t parameter_count() const { return static_cast<int64_t>(parameters_.size()); }

  Instruction* root() const { return root_; }
  void set_root(Instruction* root) { root_ = root; }

  // `execution_thread="..."` after the body, if written.
  const std::string& execution_thread() const { return execution_thread_; }
  void set_execution_thread(std::string thread) { execution_thread_ = std::move(thread); }

  Module* parent() const { return parent_; }

  // The instruction named `name`, or null (the first in definition order if
  // several share it). Constant time: the computation keeps an index of its
  // instructions' names, which a scan per lookup made quadratic in the
  // number of instructions of programs that name many (issue 26).
  Instruction* FindInstruction(absl::string_view name) const;

  // `base` if no instruction has that name, otherwise `base.N` with the
  // smallest free N >= 1, a trailing `.N` of base dropped first (so hints may
  // be existing names). The name is not taken until an instruction gets it.
  // Amortised constant time: per stem the computation remembers up to where
  // every `stem.N` is taken and which of those were freed since, where a
  // search from N = 1 made adding n constants (folding) cost O(n^2) lookups.
  std::string FreeInstructionName(absl::string_view base) const { return names_.Free(base); }

  // Reorders instructions so that operands and control predecessors precede
  // users (a stable topological sort); used after rewrites that append.
  void SortTopologically();

  // Moves `instruction` to just before `before` (both of this computation;
  // null `before`: to the end), the others keeping their order. For rewrites
  // that place what they add themselves instead of sorting afterwards.
  void MoveInstructionBefore(Instruction* instruction, const Instruction* before);

  // Renumbers the parameters: `parameters` (parameter instructions of this
  // computation, each once, all that remain) become parameters 0, 1, ... in
  // that order, their parameter_number included. For rewrites that add or
  // remove parameters (a fusion whose operands change); a parameter added
  // with parameter_number -1 is registered only by this call.
  void SetParameters(std::vector<Instruction*> parameters);

 private:
  friend class Module;
  friend class Instruction;  // set_name keeps the name index in step.

  // Drops the empty slots RemoveInstruction left, keeping the order, and
  // renumbers positions. Logically const; safe against concurrent readers of
  // an unchanging computation (compiling one module on several threads).
  void CloseHoles() const;
  // Sets every instruction's position_ to its index (after reordering).
  void Renumber();

  std::string name_;
  mutable std::vector<std::unique_ptr<Instruction>> instructions_;
  mutable std::atomic<int64_t> holes_{0};  // Empty slots in instructions_.
  mutable std::mutex holes_mutex_;
  std::vector<Instruction*> parameters_;
  Instruction* root_ = nullptr;
  std::string execution_thread_;
  Module* parent_ = nullptr;
  NameIndex<Instruction> names_;
};

}  // namespace xjit

#endif  // XJIT_IR_COMPUTATION_H_
