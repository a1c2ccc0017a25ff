// Rewrite utilities shared by the passes: creating instructions with inferred
// shapes and unique names, replacing an instruction by another, removing dead
// instructions, cloning instructions and computations, inlining a call, and
// the side-effect test every pass must respect.
//
// Ordering: Computation::AddInstruction appends, so a rewrite that adds
// instructions leaves the computation out of definition order until it calls
// computation->SortTopologically() (every pass does so before it returns).
// Code that walks a computation while adding to it must walk a copy of the
// instruction list (InstructionsOf).
#ifndef XJIT_PASSES_REWRITE_UTIL_H_
#define XJIT_PASSES_REWRITE_UTIL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ir/computation.h"
#include "ir/instruction.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "ir/shape.h"

namespace xjit {

// ---- Effects ----

// Operations that communicate with other replicas or devices (all-reduce,
// all-gather, collective-permute, their start/done forms, ...).
bool IsCollective(Opcode opcode);

// Whether executing `instruction` has an effect beyond computing its result,
// or its result may differ between two executions with equal operands:
// HasSideEffect(opcode) (infeed, outfeed, send/recv, rng, ...), side-effecting
// custom-calls, collectives, async start/update/done, and any instruction
// whose called computations (transitively) contain such an instruction. Such
// instructions are never removed, merged, folded or duplicated by a pass.
// Asking this of every instruction of a module walks each loop body once per
// loop around it (quadratic for loops nested in loops): passes that ask about
// many instructions use a SideEffectCache.
bool HasSideEffectDeep(const Instruction& instruction);

// HasSideEffectDeep for many instructions of one module: each called
// computation's answer is found once, bottom-up over the call graph, and
// remembered, so that asking about every instruction of a module costs time
// linear in the module's size.
//
// The answers stay right while a pass changes the module, because no pass
// that keeps one adds a side effect to a computation: they remove, merge,
// fold, fuse or reorder only instructions without one, and inlining moves a
// callee's instructions into its caller, whose answer already included them.
// (A pass that makes instructions with side effects must not keep one across
// that change.) A computation created meanwhile is looked at when first asked
// about. Answers are kept by address: a computation deleted while a cache is
// kept must be forgotten first (Forget), as a new one may take its address.
class SideEffectCache {
 public:
  // `shallow` decides whether one instruction has an effect by itself,
  // whatever it calls; null: HasSideEffectDeep's rule (the JIT leaves out
  // the collectives it runs as steps of their own).
  explicit SideEffectCache(bool (*shallow)(const Instruction&) = nullptr);

  // HasSideEffectDeep(instruction) (under `shallow`).
  bool HasSideEffectDeep(const Instruction& instruction);
  // Whether running `computation` has one: an instruction of it does.
  bool HasSideEffect(const Computation& computation);
  // Drops the answer for `computation`, which is about to be deleted.
  void Forget(const Computation* computation) { answers_.erase(computation); }

 private:
  bool (*shallow_)(const Instruction&);
  absl::flat_hash_map<const Computation*, bool> answers_;
};

// The instructions side-effect walks have looked at in this process (each
// computation a walk answers counts its instructions once): tests use it to
// check that passes look at each computation once, not once per caller.
int64_t SideEffectWalkInstructions();

// Whether `instruction` takes part in a control edge (it has control
// predecessors, or is one of another instruction of its computation).
// Rewrites leave such instructions in place.
bool HasControlEdges(const Instruction& instruction);

// ---- Walking ----

// Snapshots, safe to iterate while the module or computation changes.
std::vector<Computation*> ComputationsOf(const Module& module);
std::vector<Instruction*> InstructionsOf(const Computation& computation);

// ---- Creating ----

// `base` if no instruction of `computation` has that name, otherwise
// `base.N` with the smallest free N >= 1 (a trailing `.N` of base is
// dropped first, so hints may be existing names).
std::string UniqueInstructionName(const Computation& computation, absl::string_view base);
// The same for computation names within a module (amortised constant time:
// Module::FreeComputationName).
std::string UniqueComputationName(const Module& module, absl::string_view base);
// The same for a set of names in use (for code that names many instructions
// at once and keeps the set itself instead of searching the computation).
std::string UniqueNameAmong(absl::string_view base, const absl::flat_hash_set<std::string>& taken);
// The same result as UniqueInstructionName, from one pass over the names.
std::string UniqueInstructionNameOnePass(const Computation& computation, absl::string_view base);

// The names in use in one computation, for code that adds many
// instructions to it: Unique gives what UniqueInstructionName would (were
// every name handed out still in use: names of instructions removed
// meanwhile stay taken), in amortised constant time instead of a search of
// the computation per candidate, which made copying n instructions into a
// computation quadratic in n.
class NameSet {
 public:
  // No name taken yet (for code that names instructions in order).
  NameSet() = default;
  explicit NameSet(const Computation& computation);
  // A free name derived from `base` as UniqueInstructionName does; now taken.
  std::string Unique(absl::string_view base);

 private:
  absl::flat_hash_set<std::string> taken_;
  // Per stem, the smallest N whose `stem.N` may be free.
  absl::flat_hash_map<std::string, int64_t> next_;
};

struct NewInstruction {
  Opcode opcode = Opcode::kTuple;
  std::vector<Instruction*> operands;
  InstructionAttributes attrs;
  // The result shape. When absent it is inferred (default layouts); opcodes
  // whose shape the operands do not determine (reshape, convert, bitcast,
  // broadcast, iota, ...) need it. When present it is checked against
  // inference, layouts aside.
  std::optional<Shape> shape;
  std::vector<Computation*> called_computations;
  // Name hint (made unique); empty: the opcode name.
  std::string name;
};

// Appends a new instruction to `computation` (see the ordering note above).
// Errors (the shape cannot be inferred or disagrees) leave the computation
// unchanged.
absl::StatusOr<Instruction*> AddInstruction(Computation* computation, NewInstruction spec);

// A constant with `literal`'s shape and value.
Instruction* AddConstant(Computation* computation, Literal literal,
                         absl::string_view name = "constant");

// broadcast(scalar) to `shape` (dimensions={}); the result takes `shape`'s
// layout. `scalar` must be a scalar of shape's element type.
absl::StatusOr<Instruction*> AddBroadcastScalar(Computation* computation, Instruction* scalar,
                                                const Shape& shape);

// A copy of `source` (opcode, shape, attributes, literal, opaque attributes,
// called computations; not control predecessors) added to `dest` with the
// given operands. Keeps source's name when `dest` has no instruction of that
// name. A parameter keeps its parameter_number.
Instruction* CloneInstruction(const Instruction& source, Computation* dest,
                              absl::Span<Instruction* const> operands);
// The same, named by `names` (dest's names).
Instruction* CloneInstruction(const Instruction& source, Computation* dest,
                              absl::Span<Instruction* const> operands, NameSet* names);

// A deep copy of `source` (its called computations are shared, not copied)
// added to `module` under a unique name derived from `name`.
Computation* CloneComputation(const Computation& source, Module* module, absl::string_view name);

// ---- Replacing and removing ----

// Whether `instruction` may be deleted once unused: it is not the root, not a
// parameter, has no side effect (HasSideEffectDeep) and no control edges.
bool IsRemovable(const Instruction& instruction);
// The same with the side effects taken from `effects` (null: none kept).
bool IsRemovable(const Instruction& instruction, SideEffectCache* effects);

// Removes `instruction` if it has no users and IsRemovable, then each of its
// operands that thereby became unused and removable. Returns the number of
// instructions removed.
int64_t RemoveIfDead(Instruction* instruction);
// The same for several candidates; safe when removing one removes another.
int64_t RemoveIfDead(absl::Span<Instruction* const> instructions);
// The same with the side effects taken from `effects` (null: none kept).
int64_t RemoveIfDead(absl::Span<Instruction* const> instructions, SideEffectCache* effects);

// Points every use of `old` (operands of its users, the root slot) at
// `replacement`, then RemoveIfDead(old). Requires equal shapes, layouts
// included (Shape::operator==); returns false and changes nothing otherwise,
// or when old == replacement.
bool ReplaceInstruction(Instruction* old, Instruction* replacement);

// The first half of ReplaceInstruction: redirects the uses and the root slot,
// removes nothing (for passes that hold pointers to instructions that might
// otherwise be deleted under them). Same conditions and result.
bool ReplaceAllUses(Instruction* old, Instruction* replacement);

// Removes every removable instruction the root does not (transitively) use.
// Instructions with side effects, parameters and instructions in control
// edges stay, and so does everything they use. Returns the number removed.
int64_t RemoveDeadInstructions(Computation* computation);
// The same with the side effects taken from `effects` (null: none kept).
int64_t RemoveDeadInstructions(Computation* computation, SideEffectCache* effects);

// Replaces a `call` instruction by a copy of its callee's body in the
// caller (the callee stays in the module; DCE removes it once unused).
// Refused (FailedPrecondition, nothing changed) when the call has control
// edges or the callee's parameter or root shapes differ from the call's
// operands or result other than in an array's layout; an array operand or
// result whose layout alone differs goes through a `copy` into the other
// layout (also listed in `copies`). With `copies`, appends the instructions
// copied into the caller there, in the callee's order. With `names` (the
// caller's), the copies are named by it (for many inlinings into one
// caller).
absl::Status InlineCall(Instruction* call, std::vector<Instruction*>* copies = nullptr,
                        NameSet* names = nullptr);

// ---- Constants ----

// Whether `instruction` is a constant, or a broadcast of one, every element
// of which has the bit pattern `bits` (the low BitWidth bits, as
// Literal::GetBits). False for anything else, and for complex types.
bool IsSplatBits(const Instruction& instruction, uint64_t bits);
// The scalar bit pattern all elements share, if `instruction` is a constant
// whose elements are all equal or a broadcast of a scalar constant.
std::optional<uint64_t> SplatBits(const Instruction& instruction);
// The bit pattern of `value` in `type` (float types round to nearest even,
// integers take the low bits). Only for real float and integer/pred types.
uint64_t BitsOf(ElementType type, double value);

}  // namespace xjit

#endif  // XJIT_PASSES_REWRITE_UTIL_H_
