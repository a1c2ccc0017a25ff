// BufferPlan: where every array value of a module lives when it runs, as
// buffer allocation (passes/allocate_buffers.h) decides it and the runtime
// reads it. The plan points into the module it was computed for and is valid
// while that module is not changed.
//
// Allocations are the blocks the runtime provides:
//   - kParameter: one per array leaf of each entry parameter (the caller's
//     buffer; never written unless the module's input_output_alias donates it);
//   - kResult: one per distinct buffer of the entry result's array leaves
//     (the caller receives them);
//   - kConstant: one per constant instruction (read-only, filled from the
//     literal at compile time);
//   - kTemp: one arena per sequential computation (the entry, and each while
//     body / condition, conditional branch and call target), holding every
//     other value at an offset; values whose lifetimes do not overlap share
//     bytes.
// Every array leaf (instruction, shape index) of the sequential computations
// has a slice (allocation, offset, size). Instructions that define no storage
// of their own share their operand's slices: bitcast, get-tuple-element,
// tuple, opt-barrier, domain, add-dependency. A value computed in place shares
// its operand's slice (see in_place_operand). Fused computations, reducers
// and comparators have no slices: their values live in registers.
//
// Control flow:
//   - while: the loop state lives in the while's result slices; the body's and
//     condition's parameters have those same slices. Before the loop the
//     runtime copies each init leaf whose slice differs into the state; after
//     each body iteration it copies each root leaf whose slice differs from
//     the state slice of the same index (all such copies of one iteration are
//     done as a parallel assignment, since the body may permute its state).
//   - conditional / call: the callee's parameters have the caller's operand
//     slices (read-only); the callee's root leaves are copied into the
//     caller's result slices.
//   - a computation run from several places keeps parameters of its own
//     (ComputationBufferPlan::parameters_bound is false), filled by copies;
//   - an entry result leaf may share a parameter's or constant's allocation
//     (ROOT is a parameter, a constant, or a bitcast of one); the runtime
//     copies it out.
//
// Accounting: temp bytes = the sum of the kTemp arenas (everything that is
// neither an entry parameter, nor the result, nor a constant). Peak bytes =
// the most bytes live at once over the entry's schedule: all entry
// parameters, the result buffers from their definition on, the temps live at
// that step, and the arenas of computations a control-flow step runs.
#ifndef XJIT_PASSES_BUFFER_PLAN_H_
#define XJIT_PASSES_BUFFER_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "ir/computation.h"
#include "ir/instruction.h"
#include "ir/module.h"
#include "ir/shape.h"

namespace xjit {

// Offsets of temps in an arena are multiples of this.
inline constexpr int64_t kBufferAlignment = 64;

struct BufferAllocation {
  enum class Kind : uint8_t { kParameter, kResult, kConstant, kTemp };
  int64_t id = 0;
  Kind kind = Kind::kTemp;
  int64_t size = 0;  // Bytes.
  // kParameter: which entry parameter leaf.
  int64_t parameter_number = -1;
  ShapeIndex parameter_index;
  // Entry result leaves stored here (kResult; also a parameter or constant
  // allocation that the result aliases).
  std::vector<ShapeIndex> result_indices;
  // kConstant: the constant.
  const Instruction* constant = nullptr;
  // kTemp: the computation whose arena this is.
  const Computation* computation = nullptr;
};

absl::string_view BufferAllocationKindName(BufferAllocation::Kind kind);

struct BufferSlice {
  int64_t allocation = -1;
  int64_t offset = 0;
  int64_t size = 0;
  bool operator==(const BufferSlice&) const = default;
};

// The slice of one array leaf of an instruction's result.
struct LeafSlice {
  ShapeIndex index;
  BufferSlice slice;
};

// The plan of one sequential computation.
struct ComputationBufferPlan {
  const Computation* computation = nullptr;
  // The order the runtime executes the instructions in.
  std::vector<const Instruction*> schedule;
  // Whether the parameters have the caller's slices (the entry's are the
  // caller's buffers). False for a computation run from several places: its
  // parameters have slices of its own arena and the runtime copies the
  // operands (or the while state) in before it runs and the root out after.
  bool parameters_bound = true;
  // The kTemp arena's allocation id, -1 if the computation needs no temps.
  int64_t arena = -1;
  // Most bytes live at once in this computation's own arena and results.
  int64_t peak_bytes = 0;
};

class BufferPlan {
 public:
  const std::vector<BufferAllocation>& allocations() const { return allocations_; }
  const BufferAllocation& allocation(int64_t id) const { return allocations_[id]; }
  const std::vector<ComputationBufferPlan>& computations() const { return computations_; }
  // The plan of `computation`, or null if it is not sequential.
  const ComputationBufferPlan* ForComputation(const Computation* computation) const;

  // The array leaves of `instruction` with their slices (empty for an
  // instruction of a fused computation or a reducer, and for tokens).
  const std::vector<LeafSlice>& Slices(const Instruction* instruction) const;
  // The slice of the array leaf at `index`, if any.
  std::optional<BufferSlice> Slice(const Instruction* instruction, const ShapeIndex& index = {}) const;
  // For an instruction that writes its result over an operand's buffer, that
  // operand's number (while: the init, leaf by leaf, reported as 0).
  std::optional<int64_t> InPlaceOperand(const Instruction* instruction) const;

  // The allocation of entry parameter `number` at `index`, if it has array
  // storage.
  std::optional<int64_t> ParameterAllocation(int64_t number, const ShapeIndex& index = {}) const;

  int64_t temp_bytes() const { return temp_bytes_; }
  int64_t peak_bytes() const { return peak_bytes_; }
  int64_t parameter_bytes() const;
  int64_t result_bytes() const;
  int64_t constant_bytes() const;

  // Text for `xjit compile --dump` and tests: allocations, then each
  // computation's schedule with every leaf's slice, then the totals as
  // `temp bytes: N` and `peak bytes: N` lines.
  std::string ToString() const;

  // ---- Construction (allocate_buffers.cc) ----
  int64_t AddAllocation(BufferAllocation allocation);
  BufferAllocation* mutable_allocation(int64_t id) { return &allocations_[id]; }
  void SetSlices(const Instruction* instruction, std::vector<LeafSlice> slices) {
    slices_[instruction] = std::move(slices);
  }
  void SetInPlaceOperand(const Instruction* instruction, int64_t operand) {
    in_place_[instruction] = operand;
  }
  void AddComputation(ComputationBufferPlan plan) { computations_.push_back(std::move(plan)); }
  ComputationBufferPlan* mutable_computation(size_t i) { return &computations_[i]; }
  void set_temp_bytes(int64_t bytes) { temp_bytes_ = bytes; }
  void set_peak_bytes(int64_t bytes) { peak_bytes_ = bytes; }

 private:
  std::vector<BufferAllocation> allocations_;
  std::vector<ComputationBufferPlan> computations_;
  absl::flat_hash_map<const Instruction*, std::vector<LeafSlice>> slices_;
  absl::flat_hash_map<const Instruction*, int64_t> in_place_;
  int64_t temp_bytes_ = 0;
  int64_t peak_bytes_ = 0;
};

// The array leaves of `shape` in order ({} for an array; {0}, {1, 0}, ... for
// tuples); tokens and opaque values have none.
std::vector<ShapeIndex> ArrayLeafIndices(const Shape& shape);

}  // namespace xjit

#endif  // XJIT_PASSES_BUFFER_PLAN_H_
