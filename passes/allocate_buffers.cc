// Buffer allocation: the design note.
//
// Each sequential computation (the entry, then the computations its while,
// conditional and call instructions run, recursively) is planned in four
// steps over its schedule (passes/schedule.h):
//   1. Values. Walking the schedule, every instruction gets, per array leaf of
//      its shape, the value it holds: a new value where it computes one, its
//      operand's value where it only renames storage (bitcast,
//      get-tuple-element, tuple, opt-barrier, domain, add-dependency).
//      Parameters of nested computations are bound to the caller's slices (a
//      while's state, a conditional's or call's operands). A while's result
//      leaf that its body passes through unchanged holds its operand's value
//      (PassesThrough), where that value lies in storage the run owns: the
//      loop reads it where it lies, and no copy moves it in or out per entry.
//   2. Liveness. A value is read at the steps of the instructions that use any
//      instruction holding it (aliasing instructions do not read); it is live
//      from its definition to its last read, to the end if it is part of the
//      root.
//   3. In place. At each step, a new value may join the buffer set of an
//      operand's value instead of taking new bytes when the operation allows
//      it (see allocate_buffers.h), the operand's set dies at this very step,
//      is at least as large, is not part of the result, and may be written:
//      not a constant, not an entry parameter unless donated by
//      input_output_alias, and, inside a while body, a state buffer only for
//      the value that becomes that same state element (so that the state is
//      updated in place and no copy-back is needed). A body planned on its
//      own as an entry with state_in_place has the same rule for its
//      parameter's leaves, except that values outside the result may use
//      them too (the runtime then copies the root's leaf back at the end),
//      and a result leaf whose old state leaf is dead before it is written
//      takes that leaf's bytes (JoinDeadStateLeaves).
//   4. Placement. Sets holding an entry parameter or a constant keep that
//      allocation; sets in the entry result get a result allocation; bound
//      sets keep the caller's slice; every other set is a temp placed in the
//      computation's arena by first fit in order of definition: an interval
//      may reuse bytes of any set whose last read is strictly before its
//      definition (a value is never written over an operand it is still
//      reading, except in place).
// Peak bytes count, at each step, the sets live there plus the peaks of the
// computations a control-flow step runs (an upper bound: nested arenas are
// not shared with the caller's free bytes).
#include "passes/allocate_buffers.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/layout_util.h"
#include "ir/status_macros.h"
#include "passes/fuse.h"
#include "passes/rewrite_util.h"
#include "passes/schedule.h"

namespace xjit {
namespace {

int64_t AlignUp(int64_t value, int64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

bool IsPrefix(const ShapeIndex& prefix, const ShapeIndex& index) {
  return prefix.size() <= index.size() && std::equal(prefix.begin(), prefix.end(), index.begin());
}

// Same bytes for the same elements: dimensions, layout, element width.
bool SameStorage(const Shape& a, const Shape& b) {
  return a.IsArray() && b.IsArray() && a.dimensions() == b.dimensions() && a.has_layout() &&
         b.has_layout() && a.layout() == b.layout() &&
         ByteWidth(a.element_type()) == ByteWidth(b.element_type()) && ByteSize(a) == ByteSize(b) &&
         !a.is_dynamic() && !b.is_dynamic();
}

// Whether fused parameter `number` reaches the root only through elementwise
// operations of the root's dimensions, so that output element i depends on
// input element i alone.
bool ReadsElementwise(const Computation& body, int64_t number) {
  if (number >= body.parameter_count() || body.parameter(number) == nullptr) return false;
  const Instruction* root = body.root();
  if (!root->shape().IsArray()) return false;
  absl::flat_hash_set<const Instruction*> reached = {body.parameter(number)};
  for (const auto& instruction : body.instructions()) {
    bool reads = false;
    for (const Instruction* operand : instruction->operands()) reads |= reached.contains(operand);
    if (!reads) continue;
    if (!IsElementwise(instruction->opcode()) ||
        !instruction->shape().SameDimensions(root->shape())) {
      return false;
    }
    reached.insert(instruction.get());
  }
  return true;
}

// For a fusion rooted at a one-operand scatter (passes/fuse.cc, rule 6): the
// fusion operand its output starts from, when nothing else in the body reads
// it, so that the scatter may update that operand's buffer in place (its
// fused producers read other buffers only). nullopt otherwise.
std::optional<int64_t> ScatterFusionStart(const Instruction& instruction) {
  if (instruction.opcode() != Opcode::kFusion) return std::nullopt;
  const Instruction* root = ScatterOf(instruction);
  if (root == nullptr) return std::nullopt;
  const Instruction* start = root->operand(0);
  if (start->opcode() != Opcode::kParameter || start->users().size() != 1) return std::nullopt;
  const int64_t number = start->attrs().parameter_number;
  if (number < 0 || number >= instruction.operand_count()) return std::nullopt;
  return number;
}

// Whether a while's body passes state element `k` through unchanged (the
// root tuple's element k is element k of the body's parameter), so that the
// while's result element k is the value of its operand's element k.
bool PassesThrough(const Instruction& loop, int64_t k) {
  const Computation* body = loop.while_body();
  if (body == nullptr || body->parameter_count() != 1 || body->parameter(0) == nullptr) {
    return false;
  }
  const Instruction* root = body->root();
  if (root == nullptr || root->opcode() != Opcode::kTuple || k >= root->operand_count()) {
    return false;
  }
  const Instruction* element = root->operand(k);
  return element->opcode() == Opcode::kGetTupleElement && element->attrs().tuple_index == k &&
         element->operand(0) == body->parameter(0);
}

enum class Origin : uint8_t { kNormal, kEntryParameter, kConstant, kBoundReadOnly, kBoundState };

struct Value {
  const Instruction* instruction = nullptr;
  ShapeIndex index;
  int64_t size = 0;
  int64_t defined = 0;
  int64_t last_use = 0;
  bool live_out = false;
  Origin origin = Origin::kNormal;
  bool donated = false;        // Entry parameter named by input_output_alias.
  bool entry_state = false;    // Entry parameter 0 under state_in_place.
  int64_t state_index = -1;    // kBoundState, entry_state: leaf ordinal of the while state.
  BufferSlice bound;           // kBoundReadOnly / kBoundState.
  int64_t parameter_number = -1;
};

// How a computation's parameters relate to its caller.
struct Context {
  enum class Kind : uint8_t { kEntry, kWhileBody, kReadOnlyCallee } kind = Kind::kEntry;
  // Per parameter number, the slices of its array leaves in leaf order.
  std::vector<std::vector<BufferSlice>> parameter_slices;
};

class Allocator {
 public:
  Allocator(const Module& module, const Computation* entry, const BufferPlanOptions& options)
      : module_(module),
        entry_(entry),
        options_(options),
        effects_(options.side_effects != nullptr ? options.side_effects : &own_effects_) {}

  absl::StatusOr<BufferPlan> Run() {
    const Computation* entry = entry_;
    if (entry == nullptr || entry->root() == nullptr) {
      return absl::InvalidArgumentError("allocate-buffers: the module has no entry computation");
    }
    if (options_.state_in_place &&
        (entry->parameter_count() != 1 || entry->parameter(0) == nullptr ||
         !(entry->parameter(0)->shape() == entry->root()->shape()))) {
      return absl::InvalidArgumentError(
          "allocate-buffers: state_in_place needs one parameter of the root's shape");
    }
    // Entry parameters first, so that their allocation ids are 0, 1, ...
    for (int64_t number = 0; number < entry->parameter_count(); ++number) {
      const Instruction* parameter = entry->parameter(number);
      if (parameter == nullptr) continue;
      for (const ShapeIndex& index : ArrayLeafIndices(parameter->shape())) {
        BufferAllocation allocation;
        allocation.kind = BufferAllocation::Kind::kParameter;
        allocation.size = ByteSize(Subshape(parameter->shape(), index));
        allocation.parameter_number = number;
        allocation.parameter_index = index;
        parameter_allocations_[{number, index}] = plan_.AddAllocation(std::move(allocation));
      }
    }
    // Callers per computation, for planning callees (PlanCallees).
    if (options_.plan_callees) {
      for (const auto& computation : module_.computations()) {
        for (const auto& instruction : computation->instructions()) {
          const Opcode opcode = instruction->opcode();
          if (opcode != Opcode::kWhile && opcode != Opcode::kConditional && opcode != Opcode::kCall) {
            continue;
          }
          absl::flat_hash_set<const Computation*> seen;
          for (const Computation* callee : instruction->called_computations()) {
            if (seen.insert(callee).second) ++callers_[callee];
          }
        }
      }
    }
    XJIT_ASSIGN_OR_RETURN(int64_t peak, PlanComputation(entry, Context{}));
    int64_t temp = 0;
    for (const BufferAllocation& allocation : plan_.allocations()) {
      if (allocation.kind == BufferAllocation::Kind::kTemp) temp += allocation.size;
    }
    plan_.set_temp_bytes(temp);
    plan_.set_peak_bytes(peak + plan_.parameter_bytes());
    return std::move(plan_);
  }

 private:
  // Per computation: values and their union-find sets.
  struct State {
    std::vector<Value> values;
    std::vector<int64_t> parent;  // Union-find over values.
    absl::flat_hash_map<const Instruction*, std::vector<std::pair<ShapeIndex, int64_t>>> holds;

    int64_t Find(int64_t v) {
      while (parent[v] != v) v = parent[v] = parent[parent[v]];
      return v;
    }
    int64_t NewValue(Value value) {
      values.push_back(std::move(value));
      parent.push_back(static_cast<int64_t>(parent.size()));
      return static_cast<int64_t>(values.size()) - 1;
    }
    const std::vector<std::pair<ShapeIndex, int64_t>>& Holds(const Instruction* instruction) {
      return holds[instruction];
    }
  };

  // Set-level facts, kept at the representative.
  struct SetInfo {
    int64_t size = 0;
    int64_t start = 0;
    int64_t end = 0;
    bool live_out = false;
  };

  absl::StatusOr<int64_t> PlanComputation(const Computation* computation, const Context& context) {
    if (auto it = planned_.find(computation); it != planned_.end()) return it->second;
    const size_t plan_index = plan_.computations().size();
    {
      ComputationBufferPlan plan;
      plan.computation = computation;
      plan.parameters_bound = context.kind == Context::Kind::kEntry || !context.parameter_slices.empty();
      plan.schedule = ComputeSchedule(*computation, effects_);
      plan_.AddComputation(std::move(plan));
    }
    const std::vector<const Instruction*> schedule = plan_.computations()[plan_index].schedule;
    const int64_t steps = static_cast<int64_t>(schedule.size());
    absl::flat_hash_map<const Instruction*, int64_t> step_of;
    for (int64_t t = 0; t < steps; ++t) step_of[schedule[t]] = t;

    State state;
    // 1. Values.
    for (int64_t t = 0; t < steps; ++t) DefineValues(computation, context, schedule[t], t, &state);
    // 2. Liveness.
    for (int64_t t = 0; t < steps; ++t) {
      const Instruction* instruction = schedule[t];
      for (auto& [index, v] : state.holds[instruction]) state.values[v].last_use = std::max(state.values[v].last_use, t);
      if (IsAliasingInstruction(*instruction)) continue;
      for (const Instruction* operand : instruction->operands()) {
        for (const auto& [index, v] : state.Holds(operand)) {
          state.values[v].last_use = std::max(state.values[v].last_use, t);
        }
      }
    }
    std::vector<int64_t> root_values;
    for (const auto& [index, v] : state.Holds(computation->root())) {
      state.values[v].live_out = true;
      state.values[v].last_use = steps;
      root_values.push_back(v);
    }
    // Set-level facts start as the values' own.
    std::vector<SetInfo> sets(state.values.size());
    for (size_t v = 0; v < state.values.size(); ++v) {
      const Value& value = state.values[v];
      sets[v] = {value.size, value.defined, value.last_use, value.live_out};
    }
    // 3. In place.
    if (options_.in_place) {
      for (int64_t t = 0; t < steps; ++t) {
        TryInPlace(schedule[t], t, context, root_values, &state, &sets);
      }
    }
    if (options_.in_place && options_.state_in_place && context.kind == Context::Kind::kEntry) {
      JoinDeadStateLeaves(root_values, &state, &sets);
    }
    // 4. Placement.
    XJIT_RETURN_IF_ERROR(Place(computation, context, schedule, plan_index, &state, &sets));

    // Nested computations, now that the caller's slices are known; their
    // peaks add to the caller's at the step that runs them.
    std::vector<int64_t> nested_peak(steps, 0);
    if (options_.plan_callees) {
      for (int64_t t = 0; t < steps; ++t) {
        XJIT_ASSIGN_OR_RETURN(nested_peak[t], PlanCallees(schedule[t]));
      }
    }
    int64_t with_nested = 0;
    for (int64_t t = 0; t < steps; ++t) {
      with_nested = std::max(with_nested, live_at_[t] + nested_peak[t]);
    }
    live_at_.clear();
    plan_.mutable_computation(plan_index)->peak_bytes = with_nested;
    planned_[computation] = with_nested;
    return with_nested;
  }

  void DefineValues(const Computation* computation, const Context& context,
                    const Instruction* instruction, int64_t t, State* state) {
    std::vector<std::pair<ShapeIndex, int64_t>> holds;
    auto operand_holds = [&](int64_t i) -> const std::vector<std::pair<ShapeIndex, int64_t>>& {
      return state->Holds(instruction->operand(i));
    };
    switch (instruction->opcode()) {
      case Opcode::kBitcast:
      case Opcode::kOptimizationBarrier:
      case Opcode::kDomain:
      case Opcode::kAddDependency:
        if (instruction->operand_count() > 0) holds = operand_holds(0);
        if (instruction->opcode() == Opcode::kBitcast && holds.size() == 1) holds[0].first = {};
        state->holds[instruction] = std::move(holds);
        return;
      case Opcode::kGetTupleElement: {
        const int64_t k = instruction->attrs().tuple_index;
        for (const auto& [index, v] : operand_holds(0)) {
          if (!index.empty() && index[0] == k) holds.push_back({ShapeIndex(index.begin() + 1, index.end()), v});
        }
        state->holds[instruction] = std::move(holds);
        return;
      }
      case Opcode::kTuple:
        for (int64_t i = 0; i < instruction->operand_count(); ++i) {
          for (const auto& [index, v] : operand_holds(i)) {
            ShapeIndex prefixed = {i};
            prefixed.insert(prefixed.end(), index.begin(), index.end());
            holds.push_back({std::move(prefixed), v});
          }
        }
        state->holds[instruction] = std::move(holds);
        return;
      default:
        break;
    }
    const std::vector<ShapeIndex> leaves = ArrayLeafIndices(instruction->shape());
    for (size_t ordinal = 0; ordinal < leaves.size(); ++ordinal) {
      const ShapeIndex& index = leaves[ordinal];
      // A state element the body passes through holds its operand's value
      // (one buffer, read-only in the loop): a loop-invariant matrix is
      // neither copied into the loop's state nor out of it per entry.
      if (instruction->opcode() == Opcode::kWhile && index.size() == 1 &&
          PassesThrough(*instruction, index[0])) {
        int64_t passed = -1;
        for (const auto& [operand_index, v] : operand_holds(0)) {
          if (operand_index == index) passed = v;
        }
        // Only over storage this run owns: a run whose loop state lies in
        // flat buffers copies the final state back to every result leaf,
        // here the same bytes over the operand's, which must not be a
        // caller's argument or a constant that other runs share.
        const Value* operand_value = passed >= 0 ? &state->values[passed] : nullptr;
        if (operand_value != nullptr &&
            (operand_value->origin == Origin::kNormal ||
             operand_value->origin == Origin::kBoundState || operand_value->entry_state)) {
          holds.push_back({index, passed});
          continue;
        }
      }
      Value value;
      value.instruction = instruction;
      value.index = index;
      value.size = ByteSize(Subshape(instruction->shape(), index));
      value.defined = t;
      value.last_use = t;
      if (instruction->opcode() == Opcode::kConstant) {
        value.origin = Origin::kConstant;
      } else if (instruction->opcode() == Opcode::kParameter) {
        const int64_t number = instruction->attrs().parameter_number;
        value.parameter_number = number;
        if (context.kind == Context::Kind::kEntry) {
          value.origin = Origin::kEntryParameter;
          // The module's aliases name its own entry's parameters.
          if (options_.state_in_place && number == 0) {
            value.entry_state = true;
            value.state_index = static_cast<int64_t>(ordinal);
          }
          for (const InputOutputAlias& alias : module_.input_output_aliases()) {
            if (entry_ == module_.entry() && alias.parameter_number == number &&
                IsPrefix(alias.parameter_index, index)) {
              value.donated = true;
            }
          }
        } else {
          value.origin = context.kind == Context::Kind::kWhileBody ? Origin::kBoundState
                                                                    : Origin::kBoundReadOnly;
          value.state_index = static_cast<int64_t>(ordinal);
          if (number < static_cast<int64_t>(context.parameter_slices.size()) &&
              ordinal < context.parameter_slices[number].size()) {
            value.bound = context.parameter_slices[number][ordinal];
          } else {
            value.origin = Origin::kNormal;  // Unbound: give it storage of its own.
          }
        }
      }
      holds.push_back({index, state->NewValue(std::move(value))});
    }
    state->holds[instruction] = std::move(holds);
  }

  // (operand number, operand leaf, result leaf) pairs `instruction` may
  // write in place of.
  std::vector<std::tuple<int64_t, ShapeIndex, ShapeIndex>> InPlaceCandidates(
      const Instruction& instruction) {
    std::vector<std::tuple<int64_t, ShapeIndex, ShapeIndex>> out;
    const Opcode opcode = instruction.opcode();
    for (const OutputOperandAlias& alias : instruction.attrs().output_to_operand_aliasing) {
      if (opcode == Opcode::kFusion || opcode == Opcode::kCustomCall) {
        out.push_back({alias.operand_number, alias.operand_index, alias.output_index});
      }
    }
    if (!out.empty()) return out;
    if (std::optional<int64_t> start = ScatterFusionStart(instruction)) {
      if (SameStorage(instruction.operand(*start)->shape(), instruction.shape())) {
        out.push_back({*start, {}, {}});
      }
      return out;
    }
    if (IsElementwise(opcode) && instruction.shape().IsArray()) {
      for (int64_t i = 0; i < instruction.operand_count(); ++i) {
        if (SameStorage(instruction.operand(i)->shape(), instruction.shape())) out.push_back({i, {}, {}});
      }
    } else if (opcode == Opcode::kFusion && instruction.attrs().fusion_kind == FusionKind::kLoop &&
               instruction.shape().IsArray() && !instruction.called_computations().empty()) {
      const Computation& body = *instruction.called_computations()[0];
      for (int64_t i = 0; i < instruction.operand_count(); ++i) {
        if (SameStorage(instruction.operand(i)->shape(), instruction.shape()) &&
            ReadsElementwise(body, i)) {
          out.push_back({i, {}, {}});
        }
      }
    } else if ((opcode == Opcode::kDynamicUpdateSlice ||
                (opcode == Opcode::kScatter && instruction.operand_count() == 3)) &&
               instruction.shape().IsArray()) {
      if (SameStorage(instruction.operand(0)->shape(), instruction.shape())) out.push_back({0, {}, {}});
    } else if (opcode == Opcode::kWhile) {
      for (const ShapeIndex& index : ArrayLeafIndices(instruction.shape())) out.push_back({0, index, index});
    }
    return out;
  }

  // A body run over its state in place (state_in_place): a result value that
  // becomes state leaf j, and is not there already, takes leaf j's bytes when
  // the old leaf j is read for the last time before the value's set is first
  // written and is not part of the result itself. The body then writes the
  // new state where it lies, and the copy into the result at the end of each
  // iteration disappears (the vectors a scan or a solver recomputes from
  // other leaves: conjugate gradients' next iterate). Each leaf has its own
  // parameter allocation here, so no other leaf shares the bytes.
  void JoinDeadStateLeaves(const std::vector<int64_t>& root_values, State* state,
                           std::vector<SetInfo>* sets) {
    absl::flat_hash_map<int64_t, int64_t> leaf_value;  // State leaf ordinal -> its value.
    for (size_t v = 0; v < state->values.size(); ++v) {
      if (state->values[v].entry_state) leaf_value[state->values[v].state_index] = v;
    }
    for (size_t j = 0; j < root_values.size(); ++j) {
      auto it = leaf_value.find(static_cast<int64_t>(j));
      if (it == leaf_value.end()) continue;
      const int64_t old_set = state->Find(it->second);
      const int64_t new_set = state->Find(root_values[j]);
      if (old_set == new_set || state->values[new_set].origin != Origin::kNormal) continue;
      SetInfo& old_info = (*sets)[old_set];
      const SetInfo& new_info = (*sets)[new_set];
      if (old_info.live_out || old_info.end >= new_info.start || old_info.size < new_info.size) {
        continue;
      }
      state->parent[new_set] = old_set;
      old_info.end = std::max(old_info.end, new_info.end);
      old_info.live_out = true;
    }
  }

  void TryInPlace(const Instruction* instruction, int64_t t, const Context& context,
                  const std::vector<int64_t>& root_values, State* state, std::vector<SetInfo>* sets) {
    if (IsAliasingInstruction(*instruction)) return;
    const auto& holds = state->Holds(instruction);
    const bool elementwise_reader = instruction->opcode() != Opcode::kDynamicUpdateSlice &&
                                    instruction->opcode() != Opcode::kScatter &&
                                    !ScatterFusionStart(*instruction).has_value() &&
                                    instruction->opcode() != Opcode::kWhile &&
                                    instruction->opcode() != Opcode::kCustomCall;
    for (const auto& [operand_number, operand_index, result_index] : InPlaceCandidates(*instruction)) {
      if (operand_number < 0 || operand_number >= instruction->operand_count()) continue;
      int64_t new_value = -1;
      for (const auto& [index, v] : holds) {
        if (index == result_index) new_value = v;
      }
      int64_t old_value = -1;
      for (const auto& [index, v] : state->Holds(instruction->operand(operand_number))) {
        if (index == operand_index) old_value = v;
      }
      if (new_value < 0 || old_value < 0) continue;
      if (state->Find(new_value) != new_value) continue;  // Already in place.
      if (state->Find(old_value) == new_value) continue;  // One value (a passed-through leaf).
      const int64_t set = state->Find(old_value);
      SetInfo& info = (*sets)[set];
      const Value& representative = state->values[set];
      if (info.live_out || info.end != t || info.size < state->values[new_value].size) continue;
      switch (representative.origin) {
        case Origin::kNormal:
          break;
        case Origin::kEntryParameter:
          if (representative.entry_state) {
            // A result value only over its own state leaf; others anywhere.
            const int64_t j = representative.state_index;
            if ((*sets)[new_value].live_out &&
                (j < 0 || j >= static_cast<int64_t>(root_values.size()) ||
                 root_values[j] != new_value)) {
              continue;
            }
            break;
          }
          if (!representative.donated || !options_.donate_parameters) continue;
          break;
        case Origin::kBoundState: {
          const int64_t j = representative.state_index;
          if (j < 0 || j >= static_cast<int64_t>(root_values.size()) || root_values[j] != new_value) {
            continue;
          }
          break;
        }
        case Origin::kConstant:
        case Origin::kBoundReadOnly:
          continue;
      }
      // An operation that reads other elements than the one it writes must
      // not find the operand's buffer among its other operands.
      if (!elementwise_reader) {
        bool read_elsewhere = false;
        for (int64_t i = 0; i < instruction->operand_count(); ++i) {
          if (i == operand_number) continue;
          for (const auto& [index, v] : state->Holds(instruction->operand(i))) {
            read_elsewhere |= state->Find(v) == set;
          }
        }
        if (read_elsewhere) continue;
      }
      state->parent[new_value] = set;
      const SetInfo& added = (*sets)[new_value];
      info.end = std::max(info.end, added.end);
      info.live_out = info.live_out || added.live_out;
      plan_.SetInPlaceOperand(instruction, operand_number);
    }
  }

  // Fills live_at_ with the bytes live at each step.
  absl::Status Place(const Computation* computation, const Context& context,
                     const std::vector<const Instruction*>& schedule, size_t plan_index,
                     State* state, std::vector<SetInfo>* sets) {
    const int64_t steps = static_cast<int64_t>(schedule.size());
    const bool is_entry = context.kind == Context::Kind::kEntry;
    absl::flat_hash_map<int64_t, BufferSlice> slice_of_set;
    // Sizes of sets: the largest member.
    for (size_t v = 0; v < state->values.size(); ++v) {
      SetInfo& info = (*sets)[state->Find(v)];
      info.size = std::max(info.size, state->values[v].size);
    }
    struct Interval {
      int64_t set, start, end, size;
    };
    std::vector<Interval> temps;
    std::vector<Interval> results;  // Counted in the peak, not placed in the arena.
    absl::flat_hash_map<const Instruction*, int64_t> constant_allocation;
    for (size_t v = 0; v < state->values.size(); ++v) {
      const int64_t set = state->Find(v);
      if (set != static_cast<int64_t>(v)) continue;
      const Value& value = state->values[v];
      const SetInfo& info = (*sets)[set];
      switch (value.origin) {
        case Origin::kEntryParameter: {
          const int64_t id = parameter_allocations_.at({value.parameter_number, value.index});
          slice_of_set[set] = {id, 0, plan_.allocation(id).size};
          continue;
        }
        case Origin::kConstant: {
          BufferAllocation allocation;
          allocation.kind = BufferAllocation::Kind::kConstant;
          allocation.size = info.size;
          allocation.constant = value.instruction;
          const int64_t id = plan_.AddAllocation(std::move(allocation));
          slice_of_set[set] = {id, 0, info.size};
          continue;
        }
        case Origin::kBoundReadOnly:
        case Origin::kBoundState:
          slice_of_set[set] = value.bound;
          continue;
        case Origin::kNormal:
          break;
      }
      // Under state_in_place the result is the parameter's buffer: a root
      // value outside it is a temp, copied into its leaf at the end.
      if (is_entry && info.live_out && !options_.state_in_place) {
        BufferAllocation allocation;
        allocation.kind = BufferAllocation::Kind::kResult;
        allocation.size = info.size;
        const int64_t id = plan_.AddAllocation(std::move(allocation));
        slice_of_set[set] = {id, 0, info.size};
        results.push_back({set, info.start, steps, info.size});
        continue;
      }
      temps.push_back({set, info.start, info.end, info.size});
    }
    // The arena: first fit in order of definition.
    std::sort(temps.begin(), temps.end(), [](const Interval& a, const Interval& b) {
      return a.start != b.start ? a.start < b.start : a.set < b.set;
    });
    int64_t arena_id = -1;
    int64_t arena_size = 0;
    if (!temps.empty()) {
      BufferAllocation allocation;
      allocation.kind = BufferAllocation::Kind::kTemp;
      allocation.computation = computation;
      arena_id = plan_.AddAllocation(std::move(allocation));
    }
    struct Placed {
      int64_t offset, size, end;
    };
    std::vector<Placed> active;
    int64_t running = 0;
    for (const Interval& interval : temps) {
      int64_t offset = 0;
      if (options_.reuse) {
        active.erase(std::remove_if(active.begin(), active.end(),
                                    [&](const Placed& p) { return p.end < interval.start; }),
                     active.end());
        std::sort(active.begin(), active.end(),
                  [](const Placed& a, const Placed& b) { return a.offset < b.offset; });
        for (const Placed& p : active) {
          if (offset + interval.size <= p.offset) break;
          offset = std::max(offset, AlignUp(p.offset + p.size, kBufferAlignment));
        }
      } else {
        offset = running;
        running = AlignUp(running + interval.size, kBufferAlignment);
      }
      active.push_back({offset, interval.size, interval.end});
      arena_size = std::max(arena_size, offset + interval.size);
      slice_of_set[interval.set] = {arena_id, offset, interval.size};
    }
    if (arena_id >= 0) plan_.mutable_allocation(arena_id)->size = arena_size;
    plan_.mutable_computation(plan_index)->arena = arena_id;

    // Slices of every instruction, and the result indices of allocations.
    for (const Instruction* instruction : schedule) {
      std::vector<LeafSlice> slices;
      for (const auto& [index, v] : state->Holds(instruction)) {
        BufferSlice slice = slice_of_set.at(state->Find(v));
        slice.size = ByteSize(Subshape(instruction->shape(), index));
        slices.push_back({index, slice});
      }
      plan_.SetSlices(instruction, std::move(slices));
    }
    if (is_entry) {
      for (const auto& [index, v] : state->Holds(computation->root())) {
        const BufferSlice& slice = slice_of_set.at(state->Find(v));
        plan_.mutable_allocation(slice.allocation)->result_indices.push_back(index);
      }
    }
    // Bytes live at each step (arena and result sets; parameters are added by
    // the caller of the entry): each interval adds its size where it starts
    // and takes it away after it ends, then a running sum. Adding each size
    // over its whole interval was quadratic for n results that all live to
    // the end (a root tuple of 100,000 scalars, issue 30).
    std::vector<int64_t> change(steps + 1, 0);
    for (const std::vector<Interval>* list : {&temps, &results}) {
      for (const Interval& interval : *list) {
        const int64_t first = std::max<int64_t>(interval.start, 0);
        const int64_t last = std::min(interval.end, steps - 1);
        if (first > last) continue;
        change[first] += interval.size;
        change[last + 1] -= interval.size;
      }
    }
    live_at_.assign(steps, 0);
    int64_t live = 0;
    for (int64_t t = 0; t < steps; ++t) live_at_[t] = live += change[t];
    return absl::OkStatus();
  }

  // Plans the computations `instruction` runs; returns the bytes they need
  // at once while it runs.
  absl::StatusOr<int64_t> PlanCallees(const Instruction* instruction) {
    auto slices_of = [&](const Instruction* operand) {
      std::vector<BufferSlice> out;
      for (const LeafSlice& leaf : plan_.Slices(operand)) out.push_back(leaf.slice);
      return out;
    };
    const Opcode opcode = instruction->opcode();
    if (opcode != Opcode::kWhile && opcode != Opcode::kConditional && opcode != Opcode::kCall) {
      return 0;
    }
    // live_at_ belongs to the caller; nested planning overwrites it. Moved,
    // not copied: a copy per instruction made planning quadratic in the
    // number of steps (a root tuple of 100,000 scalars, issue 30).
    std::vector<int64_t> saved = std::move(live_at_);
    int64_t peak = 0;
    // A computation run from several places cannot take one caller's
    // slices: its parameters get storage of their own (copied in).
    auto shared = [&](const Computation* callee) {
      auto it = callers_.find(callee);
      return it != callers_.end() && it->second > 1;
    };
    switch (opcode) {
      case Opcode::kWhile: {
        Context body;
        body.kind = Context::Kind::kWhileBody;
        body.parameter_slices = {slices_of(instruction)};
        Context condition;
        condition.kind = Context::Kind::kReadOnlyCallee;
        condition.parameter_slices = body.parameter_slices;
        if (shared(instruction->while_body()) || shared(instruction->while_condition())) {
          body = Context{Context::Kind::kReadOnlyCallee, {}};
          condition = body;
        }
        XJIT_ASSIGN_OR_RETURN(int64_t condition_peak,
                              PlanComputation(instruction->while_condition(), condition));
        XJIT_ASSIGN_OR_RETURN(int64_t body_peak, PlanComputation(instruction->while_body(), body));
        peak = condition_peak + body_peak;
        break;
      }
      case Opcode::kConditional: {
        const auto& branches = instruction->called_computations();
        for (size_t b = 0; b < branches.size(); ++b) {
          Context branch;
          branch.kind = Context::Kind::kReadOnlyCallee;
          if (b + 1 < static_cast<size_t>(instruction->operand_count()) && !shared(branches[b])) {
            branch.parameter_slices = {slices_of(instruction->operand(b + 1))};
          }
          XJIT_ASSIGN_OR_RETURN(int64_t branch_peak, PlanComputation(branches[b], branch));
          peak = std::max(peak, branch_peak);
        }
        break;
      }
      case Opcode::kCall: {
        Context callee;
        callee.kind = Context::Kind::kReadOnlyCallee;
        if (!shared(instruction->to_apply())) {
          for (const Instruction* operand : instruction->operands()) {
            callee.parameter_slices.push_back(slices_of(operand));
          }
        }
        XJIT_ASSIGN_OR_RETURN(peak, PlanComputation(instruction->to_apply(), callee));
        break;
      }
      default:
        break;
    }
    live_at_ = std::move(saved);
    return peak;
  }

  const Module& module_;
  const Computation* entry_;
  BufferPlanOptions options_;
  SideEffectCache own_effects_;
  SideEffectCache* effects_;
  BufferPlan plan_;
  std::map<std::pair<int64_t, ShapeIndex>, int64_t> parameter_allocations_;
  // Peak bytes of each computation planned so far.
  absl::flat_hash_map<const Computation*, int64_t> planned_;
  // Number of control-flow instructions that run each computation.
  absl::flat_hash_map<const Computation*, int64_t> callers_;
  std::vector<int64_t> live_at_;
};

}  // namespace

absl::StatusOr<BufferPlan> ComputeBufferPlan(const Module& module, const BufferPlanOptions& options) {
  Allocator allocator(module, module.entry(), options);
  return allocator.Run();
}

absl::StatusOr<BufferPlan> ComputeBufferPlan(const Module& module, const Computation& entry,
                                             const BufferPlanOptions& options) {
  Allocator allocator(module, &entry, options);
  return allocator.Run();
}

absl::StatusOr<bool> AllocateBuffers::Run(Module* module) {
  XJIT_ASSIGN_OR_RETURN(BufferPlan plan, ComputeBufferPlan(*module, options_));
  plan_ = std::make_unique<BufferPlan>(std::move(plan));
  return false;
}

}  // namespace xjit
