// Instruction: one SSA value of a computation. An instruction has an opcode,
// a result shape, operands (earlier instructions of the same computation),
// called computations, and the typed attributes its opcode uses (see
// InstructionAttributes). Instructions are owned by their Computation.
#ifndef XJIT_IR_INSTRUCTION_H_
#define XJIT_IR_INSTRUCTION_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "ir/attributes.h"
#include "ir/literal.h"
#include "ir/opcode.h"
#include "ir/shape.h"

namespace xjit {

class Computation;

// An attribute that does not change semantics (metadata=, sharding=,
// frontend_attributes=, backend_config= when not used, ...), kept verbatim so
// that printing reproduces it. `value` is the text after `name=`.
struct OpaqueAttribute {
  std::string name;
  std::string value;
  bool operator==(const OpaqueAttribute&) const = default;
};

// `output_to_operand_aliasing={{0}: (1, {})}`.
struct OutputOperandAlias {
  ShapeIndex output_index;
  int64_t operand_number = 0;
  ShapeIndex operand_index;
  bool operator==(const OutputOperandAlias&) const = default;
};

// Every typed attribute any opcode takes. Each opcode reads only the fields
// its semantics need (listed per field); the parser sets only fields whose
// attribute appears in the text, and the printer prints a field only for the
// opcodes that take it.
struct InstructionAttributes {
  int64_t parameter_number = 0;       // parameter
  int64_t tuple_index = 0;            // get-tuple-element `index=`
  int64_t iota_dimension = 0;         // iota
  // broadcast, transpose, reverse, reduce, map, concatenate, sort,
  // get/set-dimension-size, all-gather, all-to-all, reduce-scatter, ...
  std::vector<int64_t> dimensions;
  bool has_dimensions = false;        // whether `dimensions=` was written
  std::optional<int64_t> inferred_dimension;  // reshape
  std::vector<SliceDimension> slice;  // slice
  PaddingConfig padding;              // pad
  Window window;                      // convolution, reduce-window, select-and-scatter
  bool has_window = false;
  ConvolutionDimensionNumbers convolution_dimension_numbers;  // convolution
  int64_t feature_group_count = 1;    // convolution
  int64_t batch_group_count = 1;      // convolution
  DotDimensionNumbers dot_dimension_numbers;  // dot
  std::vector<Precision> operand_precision;  // dot, convolution
  std::string algorithm;              // dot `algorithm=`, kept as written
  GatherDimensionNumbers gather_dimension_numbers;  // gather
  std::vector<int64_t> slice_sizes;   // gather `slice_sizes=`, dynamic-slice `dynamic_slice_sizes=`
  ScatterDimensionNumbers scatter_dimension_numbers;  // scatter
  bool indices_are_sorted = false;    // gather, scatter
  bool unique_indices = false;        // scatter
  ComparisonDirection comparison_direction = ComparisonDirection::kEq;  // compare
  ComparisonType comparison_type = ComparisonType::kDefault;            // compare
  bool is_stable = false;             // sort
  int64_t k = 0;                      // topk
  bool largest = true;                // topk
  FftType fft_type = FftType::kFft;   // fft
  std::vector<int64_t> fft_length;    // fft
  bool left_side = false;             // triangular-solve
  bool lower = false;                 // triangular-solve, cholesky
  bool unit_diagonal = false;         // triangular-solve
  TriangularSolveTranspose transpose_a = TriangularSolveTranspose::kNoTranspose;
  double epsilon = 0;                 // batch-norm-*
  int64_t feature_index = 0;          // batch-norm-*
  int64_t exponent_bits = 0;          // reduce-precision
  int64_t mantissa_bits = 0;          // reduce-precision
  RandomDistribution distribution = RandomDistribution::kUniform;  // rng
  RandomAlgorithm rng_algorithm = RandomAlgorithm::kDefault;       // rng-bit-generator
  int64_t delta = 0;                  // rng-get-and-update-state
  FusionKind fusion_kind = FusionKind::kLoop;  // fusion
  std::string custom_call_target;     // custom-call
  std::string api_version;            // custom-call, kept as written
  bool custom_call_has_side_effect = false;
  std::string backend_config;         // custom-call and others: raw text after `backend_config=`
  std::vector<Shape> operand_layout_constraints;  // custom-call
  bool has_operand_layout_constraints = false;
  std::vector<OutputOperandAlias> output_to_operand_aliasing;  // custom-call, fusion
  std::optional<int64_t> channel_id;  // send/recv, collectives
  bool is_host_transfer = false;      // send/recv
  std::vector<std::vector<int64_t>> replica_groups;  // collectives
  bool has_replica_groups = false;
  bool use_global_device_ids = false;
  bool constrain_layout = false;
  std::vector<std::pair<int64_t, int64_t>> source_target_pairs;  // collective-permute
  std::string infeed_config;          // infeed
  std::string outfeed_config;         // outfeed
  std::optional<Shape> outfeed_shape; // outfeed
  bool is_composite = false;          // call

  bool operator==(const InstructionAttributes&) const = default;
};

class Instruction {
 public:
  Instruction(Opcode opcode, Shape shape) : opcode_(opcode), shape_(std::move(shape)) {}
  Instruction(const Instruction&) = delete;
  Instruction& operator=(const Instruction&) = delete;

  Opcode opcode() const { return opcode_; }
  const std::string& name() const { return name_; }
  // Renaming an instruction of a computation keeps the computation's name
  // index (Computation::FindInstruction) in step.
  void set_name(std::string name);
  const Shape& shape() const { return shape_; }
  Shape* mutable_shape() { return &shape_; }

  // Operands, in order. Setting operands keeps every operand's users() list
  // up to date.
  const std::vector<Instruction*>& operands() const { return operands_; }
  Instruction* operand(int64_t i) const { return operands_[i]; }
  int64_t operand_count() const { return static_cast<int64_t>(operands_.size()); }
  void AppendOperand(Instruction* operand);
  void ReplaceOperand(int64_t i, Instruction* new_operand);
  // Instructions that use this one as an operand (each user listed once), in
  // the order they became users. Like Computation::instructions(), removals
  // leave empty slots that this closes, so that removing a user is constant
  // time however many users there are (issue 30).
  const std::vector<Instruction*>& users() const {
    if (user_holes_.load(std::memory_order_acquire) != 0) CloseUserHoles();
    return users_;
  }
  // Points every user at `replacement` instead of this instruction. Time
  // linear in the uses replaced (plus the users' operand counts for users of
  // at most kIndexedOperands operands), so replacing each operand of a tuple
  // of n values, one RAUW at a time, is O(n) in all (issue 30: it was O(n^2)).
  void ReplaceAllUsesWith(Instruction* replacement);
  // Instructions that must run before this one (control-predecessors=).
  const std::vector<Instruction*>& control_predecessors() const { return control_predecessors_; }
  void AddControlPredecessor(Instruction* predecessor) { control_predecessors_.push_back(predecessor); }

  // Called computations, by opcode:
  //   reduce, reduce-window, map, sort, scatter, all-reduce, reduce-scatter,
  //   call, custom-call `to_apply=`: {to_apply}
  //   while: {condition, body}; select-and-scatter: {select, scatter}
  //   conditional: {true, false} or the branch list; fusion: {calls};
  //   custom-call `called_computations=`: the list.
  const std::vector<Computation*>& called_computations() const { return called_computations_; }
  void AppendCalledComputation(Computation* computation) { called_computations_.push_back(computation); }
  void set_called_computations(std::vector<Computation*> computations) {
    called_computations_ = std::move(computations);
  }
  Computation* to_apply() const { return called_computations_.at(0); }
  Computation* while_condition() const { return called_computations_.at(0); }
  Computation* while_body() const { return called_computations_.at(1); }

  // The attributes live out of line and are allocated on the first write
  // (mutable_attrs, or set_attrs with anything but the defaults): most
  // instructions (elementwise ops) use none, and holding the 1.4 KB struct
  // inline in every instruction made instruction lists cache-unfriendly
  // (docs/compile_time.md). attrs() of an instruction that never had any
  // returns the defaults.
  const InstructionAttributes& attrs() const { return attrs_ ? *attrs_ : DefaultAttributes(); }
  InstructionAttributes* mutable_attrs() {
    if (!attrs_) attrs_ = std::make_unique<InstructionAttributes>();
    return attrs_.get();
  }
  // Replaces the attributes; stores nothing when `attrs` are the defaults.
  void set_attrs(const InstructionAttributes& attrs);
  // Whether the attributes were ever written (attrs() may still equal the
  // defaults).
  bool has_attrs() const { return attrs_ != nullptr; }

  // constant: the value, in the instruction's shape and layout. Like the
  // attributes, held out of line: an instruction that is not a constant
  // never allocates one, and literal() returns an empty literal.
  const Literal& literal() const { return literal_ ? *literal_ : EmptyLiteral(); }
  void set_literal(Literal literal) { literal_ = std::make_unique<Literal>(std::move(literal)); }
  bool has_literal() const { return literal_ != nullptr; }

  // Copies the attributes, literal and opaque attributes of `source` (what a
  // clone keeps besides opcode, shape, operands and called computations),
  // allocating only what `source` has.
  void CopyAttributesFrom(const Instruction& source);

  // Attributes kept verbatim for printing (metadata, sharding, ...).
  const std::vector<OpaqueAttribute>& opaque_attributes() const { return opaque_attributes_; }
  std::vector<OpaqueAttribute>* mutable_opaque_attributes() { return &opaque_attributes_; }

  Computation* parent() const { return parent_; }

 private:
  friend class Computation;
  static const InstructionAttributes& DefaultAttributes();
  static const Literal& EmptyLiteral();
  void RemoveUser(Instruction* user);
  void AddUser(Instruction* user);

  // An instruction with more operands than this keeps, once asked, an index
  // from each operand to the positions it fills (OperandPositions), so that
  // "does this user still read that value", "where", and the bookkeeping of
  // ReplaceOperand take constant time instead of a scan of every operand:
  // wide tuples (a root tuple of 100,000 values) made each replacement of
  // one operand scan them all (issue 30).
  static constexpr int64_t kIndexedOperands = 32;
  using Positions = absl::InlinedVector<int64_t, 1>;
  using OperandIndex = absl::flat_hash_map<const Instruction*, Positions>;
  // The index, built on first use; null for instructions of at most
  // kIndexedOperands operands.
  OperandIndex* OperandPositions();
  // How many operands of this instruction are `operand`.
  int64_t UsesOf(const Instruction* operand);
  void IndexOperand(const Instruction* operand, int64_t position);
  void UnindexOperand(const Instruction* operand, int64_t position);
  void ClearOperands();
  // users_ with slots: PushUser appends, EraseUser empties the user's slot
  // (found through user_index_ once users_ is longer than
  // kIndexedOperands), CloseUserHoles drops empty slots.
  void PushUser(Instruction* user);
  void EraseUser(const Instruction* user);
  bool HasUser(const Instruction* user);
  void CloseUserHoles() const;

  Opcode opcode_;
  std::string name_;
  Shape shape_;
  std::vector<Instruction*> operands_;
  std::unique_ptr<OperandIndex> operand_index_;  // See kIndexedOperands.
  mutable std::vector<Instruction*> users_;
  mutable std::unique_ptr<absl::flat_hash_map<const Instruction*, int64_t>> user_index_;
  mutable std::atomic<int64_t> user_holes_{0};
  std::vector<Instruction*> control_predecessors_;
  std::vector<Computation*> called_computations_;
  std::unique_ptr<InstructionAttributes> attrs_;  // null: the defaults
  std::unique_ptr<Literal> literal_;               // null: empty
  std::vector<OpaqueAttribute> opaque_attributes_;
  Computation* parent_ = nullptr;
  // Index of this instruction in parent_->instructions_ (kept by Computation,
  // for removal in constant time).
  int64_t position_ = -1;
};

}  // namespace xjit

#endif  // XJIT_IR_INSTRUCTION_H_
