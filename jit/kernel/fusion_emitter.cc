// The loop-fusion emitter (see fusion_emitter.h): the kernel assembler,
// which lays out a kernel's buffers, loops, reductions and stores and asks
// the element emitter (element_emitter.h) for each value, and the entry
// points that run it. The program builder is program_builder.h.
#include "jit/kernel/fusion_emitter.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/float_format.h"
#include "ir/layout_util.h"
#include "ir/status_macros.h"
#include "jit/kernel/complex_calls.h"
#include "jit/kernel/element_emitter.h"
#include "jit/kernel/lane_positions.h"
#include "jit/kernel/minifloat_codec.h"
#include "jit/kernel/program_builder.h"
#include "passes/rewrite_util.h"

namespace xjit::jit {
namespace {

// The program builder, the element emitter and the buffer conventions they
// share (program_builder.h, element_emitter.h); the kernel assembler below
// drives them.
using namespace fusion_internal;  // NOLINT(build/namespaces): this file's own internals.

// Sets up the loop nest over `output`'s physical order and returns its index
// values, one per logical dimension. A rank-0 output gets one loop of extent
// 1 when `at_least_one` (reduction programs need an output loop).
Index LoopNest(const Shape& output, ProgramBuilder* builder, KernelProgram* program,
               bool at_least_one = false) {
  const int64_t rank = output.rank();
  Index index(rank);
  const std::vector<int64_t>& minor_to_major = output.layout().minor_to_major;
  for (int64_t level = 0; level < rank; ++level) {
    const int64_t dim = minor_to_major[rank - 1 - level];
    program->loop_extents.push_back(output.dimensions(dim));
    index[dim] = builder->LoopIndex(static_cast<int>(level), output.dimensions(dim));
  }
  if (rank == 0 && at_least_one) {
    program->loop_extents.push_back(1);
    builder->LoopIndex(0, 1);
  }
  return index;
}

// LoopNest with the `merged` innermost physical dimensions of `output` run
// as one loop over their product (see CollapsedLevels): each of their
// indices is that loop's index divided by the dimension's stride within
// the merged ones, modulo its extent.
Index MergedLoopNest(const Shape& output, int64_t merged, ProgramBuilder* builder,
                     KernelProgram* program) {
  const int64_t rank = output.rank();
  Index index(rank);
  const std::vector<int64_t>& minor_to_major = output.layout().minor_to_major;
  const int64_t outer = rank - merged;
  for (int64_t level = 0; level < outer; ++level) {
    const int64_t dim = minor_to_major[rank - 1 - level];
    program->loop_extents.push_back(output.dimensions(dim));
    index[dim] = builder->LoopIndex(static_cast<int>(level), output.dimensions(dim));
  }
  int64_t extent = 1;
  for (int64_t k = 0; k < merged; ++k) extent *= output.dimensions(minor_to_major[k]);
  program->loop_extents.push_back(extent);
  const int j = builder->LoopIndex(static_cast<int>(outer), extent);
  int64_t stride = 1;
  for (int64_t k = 0; k < merged; ++k) {
    const int64_t dim = minor_to_major[k];
    index[dim] = builder->IRem(builder->IDiv(j, stride), std::max<int64_t>(output.dimensions(dim), 1));
    stride *= output.dimensions(dim);
  }
  return index;
}

// Loops merged (MergedLoopNest) when the innermost one is shorter than this:
// a few vectors per row leave the vector loop's setup and the scalar tail a
// large share of the work (threefry's [n, 4] counters ran 1 lane).
constexpr int64_t kCollapseBelow = 64;
// Merged loops whose positions are not affine (gathers) only when the
// innermost loop is shorter than this: too short for one vector of 32-bit
// lanes, so the separate loops run scalar anyway, while a longer row keeps
// its contiguous vector loads (a gather moves about one element a cycle).
constexpr int64_t kGatherBelow = 8;
// Merging stops once the merged loop has this many iterations.
constexpr int64_t kCollapseUntil = 4096;

// How many innermost loops of `program` (a RunLoop program) to merge into
// one: 0 when the innermost loop is long enough or there is only one.
int64_t CollapsedLevels(const KernelProgram& program) {
  const int64_t loops = static_cast<int64_t>(program.loop_extents.size());
  if (program.reduction_loops != 0 || loops < 2) return 0;
  for (int64_t extent : program.loop_extents) {
    if (extent < 1) return 0;
  }
  if (program.loop_extents.back() >= kCollapseBelow) return 0;
  int64_t merged = 1;
  int64_t extent = program.loop_extents.back();
  while (merged < loops && extent < kCollapseUntil) {
    extent *= program.loop_extents[loops - 1 - merged];
    ++merged;
  }
  return merged;
}

// Whether every index operation of `program` is affine in its innermost
// loop's index: what a merged loop nest must give for its loads and stores to
// move by a constant step (otherwise the program with separate loops is
// kept).
bool AffineAlongInnermost(const KernelProgram& program) {
  const std::vector<std::optional<int64_t>> strides = InnerStrides(program);
  for (size_t i = 0; i < program.ops.size(); ++i) {
    if (IsIndexOp(program.ops[i].kind) && !strides[i].has_value()) return false;
  }
  return true;
}

// One output buffer of a kernel: element `element` of `value`'s result (a
// variadic reduce has several; -1 for an array result).
struct OutputPlan {
  const Instruction* value = nullptr;
  int element = -1;
  Shape shape;
};

// Whether `reducer` is one binary add/multiply/maximum/minimum/and/or/xor of
// its two scalar parameters: then the order of the reduced elements does
// not matter (up to float rounding), so the loops follow memory order.
bool IsSimpleMonoid(const Computation& reducer) {
  const Instruction* root = reducer.root();
  if (root == nullptr || reducer.parameter_count() != 2 || root->operand_count() != 2) return false;
  switch (root->opcode()) {
    case Opcode::kAdd: case Opcode::kMultiply: case Opcode::kMaximum: case Opcode::kMinimum:
    case Opcode::kAnd: case Opcode::kOr: case Opcode::kXor:
      break;
    default:
      return false;
  }
  return root->operand(0)->opcode() == Opcode::kParameter &&
         root->operand(1)->opcode() == Opcode::kParameter &&
         root->operand(0) != root->operand(1);
}

class KernelAssembler {
 public:
  KernelAssembler(KernelSpec* spec, const Instruction& kernel)
      : spec_(spec), kernel_(kernel), builder_(&spec->program), emitter_(spec, &builder_) {}

  ElementEmitter& emitter() { return emitter_; }

  // Run then emits only part `k` of the one output, a concatenate
  // (EmitConcatenatePart).
  void set_concatenate_part(int k) { concatenate_part_ = k; }
  // Run then merges the `levels` innermost loops of an elementwise loop
  // nest (RunLoop) into one (MergedLoopNest).
  void set_merged_levels(int64_t levels) { merged_levels_ = levels; }
  void set_target(EmitTarget target) { target_ = target; }
  // Whether Run emitted an elementwise loop nest (RunLoop, not packed): the
  // programs whose loops may be merged.
  bool ran_loop() const { return ran_loop_; }

  // Emits the loops and stores of `outputs` (in output buffer order).
  absl::Status Run(const std::vector<OutputPlan>& outputs) {
    // Loops, stores and the other operations of no one instruction belong
    // to the kernel's (the element emitter names the rest: KOp::origin).
    builder_.EnterOrigin(kernel_);
    for (const OutputPlan& output : outputs) {
      if (!IsKernelCompatibleShape(output.shape)) {
        return Unsupported(kernel_, absl::StrCat("unsupported result shape ",
                                                 output.shape.ToString()));
      }
    }
    const Instruction* reduce = nullptr;
    for (const OutputPlan& output : outputs) {
      if (output.value->opcode() == Opcode::kReduce) {
        reduce = output.value;
        break;
      }
    }
    // A row fusion (passes/fuse.h): reduces inside, read back through
    // broadcasts by the outputs, which have the reduces' input dimensions.
    // Only a reduce the outputs read counts (a kernel making some of a
    // fusion's outputs may need none).
    if (reduce == nullptr && kernel_.opcode() == Opcode::kFusion &&
        kernel_.attrs().fusion_kind == FusionKind::kInput &&
        kernel_.called_computations().size() == 1) {
      std::vector<const Instruction*> pending;
      absl::flat_hash_set<const Instruction*> read;
      for (const OutputPlan& output : outputs) pending.push_back(output.value);
      while (!pending.empty()) {
        const Instruction* value = pending.back();
        pending.pop_back();
        if (!read.insert(value).second) continue;
        for (const Instruction* operand : value->operands()) pending.push_back(operand);
      }
      for (const auto& instruction : kernel_.called_computations()[0]->instructions()) {
        if (instruction->opcode() == Opcode::kReduce && read.contains(instruction.get())) {
          reduce = instruction.get();
          break;
        }
      }
    }
    if (concatenate_part_ >= 0) {
      if (outputs.size() != 1 || outputs[0].value->opcode() != Opcode::kConcatenate) {
        return Unsupported(kernel_, "a concatenate part of something else");
      }
      XJIT_RETURN_IF_ERROR(RunConcatenatePart(outputs[0], concatenate_part_));
    } else if (outputs[0].value->opcode() == Opcode::kReduceWindow) {
      XJIT_RETURN_IF_ERROR(RunReduceWindow(outputs));
    } else if (outputs[0].value->opcode() == Opcode::kScatter) {
      XJIT_RETURN_IF_ERROR(RunScatter(outputs));
    } else if (outputs[0].value->opcode() == Opcode::kDynamicUpdateSlice &&
               !spec_->start_operands.empty()) {
      XJIT_RETURN_IF_ERROR(RunDynamicUpdateSlice(*outputs[0].value));
    } else if (reduce == nullptr) {
      XJIT_RETURN_IF_ERROR(RunLoop(outputs));
    } else {
      const int kernel_origin = builder_.EnterOrigin(*reduce);
      XJIT_RETURN_IF_ERROR(RunReduce(outputs, *reduce));
      builder_.RestoreOrigin(kernel_origin);
    }
    if (builder_.mini_float_misuse()) {
      return Unsupported(kernel_, "an f8/f4 operation the emitter does not decode");
    }
    spec_->program.output_count = static_cast<int>(outputs.size());
    for (const OutputPlan& output : outputs) {
      spec_->program.buffers.push_back({BufferType(output.shape), BufferElements(output.shape)});
    }
    SplitIndexChains(&spec_->program);
    RemoveDeadOps(&spec_->program);
    return absl::OkStatus();
  }

 private:
  // Part `k` of a concatenate (EmitConcatenatePart): the loop nest runs over
  // operand k's dimensions in the output's layout, and element i of the
  // operand is stored at i shifted by the operand's offset along the
  // concatenated dimension.
  absl::Status RunConcatenatePart(const OutputPlan& output, int k) {
    const Instruction& concat = *output.value;
    const Shape& shape = output.shape;
    if (PackedBits(shape) > 0) return Unsupported(kernel_, "a packed concatenate");
    const int64_t dim = concat.attrs().dimensions.empty() ? -1 : concat.attrs().dimensions[0];
    if (dim < 0 || dim >= shape.rank() || k < 0 || k >= concat.operand_count()) {
      return Unsupported(kernel_, "no such concatenate part");
    }
    int64_t offset = 0;
    for (int j = 0; j < k; ++j) offset += concat.operand(j)->shape().dimensions(dim);
    Shape part = shape;
    part.set_dimensions(dim, concat.operand(k)->shape().dimensions(dim));
    const Index index = LoopNest(part, &builder_, &spec_->program);
    Index out = index;
    out[dim] = builder_.IAdd(index[dim], builder_.Const(offset));
    XJIT_ASSIGN_OR_RETURN(int value, emitter_.Emit(*concat.operand(k), index));
    Store(0, shape, out, value);
    return absl::OkStatus();
  }

  absl::Status RunLoop(const std::vector<OutputPlan>& outputs) {
    const Shape& first = outputs[0].shape;
    for (const OutputPlan& output : outputs) {
      if (output.shape.dimensions() != first.dimensions() || output.element >= 0) {
        return Unsupported(kernel_, "outputs of different dimensions");
      }
    }
    if (PackedBits(first) > 0) return RunPackedLoop(outputs);
    ran_loop_ = true;
    const Index index = merged_levels_ > 1
                            ? MergedLoopNest(first, merged_levels_, &builder_, &spec_->program)
                            : LoopNest(first, &builder_, &spec_->program);
    for (size_t k = 0; k < outputs.size(); ++k) {
      XJIT_ASSIGN_OR_RETURN(int value, emitter_.Emit(*outputs[k].value, index));
      Store(static_cast<int>(k), outputs[k].shape, index, value);
    }
    return absl::OkStatus();
  }

  // A packed output (PackedBits): the loop runs over its bytes, and each
  // iteration computes the elements of one byte and stores it whole, so
  // no two iterations (or threads) write one byte. The bits past the last
  // element are zero.
  absl::Status RunPackedLoop(const std::vector<OutputPlan>& outputs) {
    constexpr ElementType kU8 = ElementType::kU8;
    if (outputs.size() != 1) return Unsupported(kernel_, "a packed output among several");
    const Shape& shape = outputs[0].shape;
    const int bits = PackedBits(shape);
    const int per_byte = 8 / bits;
    const int64_t n = PhysicalElementCount(shape);
    const Shape bytes = Shape::Array(kU8, {(n * bits + 7) / 8});
    const int j = LoopNest(bytes, &builder_, &spec_->program)[0];
    int byte = -1;
    for (int p = 0; p < per_byte; ++p) {
      const int position =
          builder_.IAdd(builder_.IMul(j, builder_.Const(per_byte)), builder_.Const(p));
      const int clamped = builder_.IMin(position, builder_.Const(std::max<int64_t>(n - 1, 0)));
      XJIT_ASSIGN_OR_RETURN(int value,
                            emitter_.Emit(*outputs[0].value, emitter_.IndexAt(shape, clamped)));
      int piece = emitter_.ToRawBits(shape.element_type(), value, bits);
      if (p > 0) piece = emitter_.U8Binary(Opcode::kShiftLeft, piece, emitter_.U8Const(p * bits));
      piece = emitter_.Select(builder_.ILt(position, builder_.Const(n)), piece, emitter_.U8Const(0),
                              kU8);
      byte = byte < 0 ? piece : emitter_.U8Binary(Opcode::kOr, byte, piece);
    }
    KOp store;
    store.kind = KOpKind::kStore;
    store.type = ElementType::kTuple;
    store.operand_type = kU8;
    store.a = j;
    store.b = byte;
    builder_.Add(store);
    return absl::OkStatus();
  }

  void Store(int output, const Shape& shape, const Index& index, int value) {
    KOp store;
    store.kind = KOpKind::kStore;
    store.type = ElementType::kTuple;
    store.operand_type = BufferType(shape.element_type());
    store.a = emitter_.Offset(shape, index);
    store.b = value;
    store.imm = output;
    if (!IsComplex(shape.element_type())) {
      builder_.Add(store);
      return;
    }
    const int offset = store.a;
    store.a = emitter_.ComponentPosition(offset, 0);
    store.b = emitter_.Re(value);
    builder_.Add(store);
    store.a = emitter_.ComponentPosition(offset, 1);
    store.b = emitter_.Im(value);
    builder_.Add(store);
  }

  int Acc(KOpKind kind, ElementType type, int slot, int a = -1) {
    KOp op;
    op.kind = kind;
    op.type = type;
    op.imm = slot;
    op.a = a;
    if (a >= 0) op.operand_type = spec_->program.ops[a].type;
    return builder_.Add(op);
  }

  absl::Status CheckReduce(const Instruction& reduce) {
    const int64_t n = reduce.operand_count() / 2;
    if (n < 1 || reduce.operand_count() != 2 * n || reduce.called_computations().size() != 1) {
      return Unsupported(reduce, "malformed reduce");
    }
    const Computation& reducer = *reduce.to_apply();
    if (reducer.parameter_count() != 2 * n || reducer.root() == nullptr) {
      return Unsupported(reduce, "reducer does not take 2N parameters");
    }
    for (int64_t i = 0; i < n; ++i) {
      const Shape& input = reduce.operand(i)->shape();
      const Shape& init = reduce.operand(n + i)->shape();
      const Shape& result = n == 1 && !reduce.shape().IsTuple() ? reduce.shape()
                                                                 : reduce.shape().tuple_shapes(i);
      if (!input.IsArray() || input.dimensions() != reduce.operand(0)->shape().dimensions() ||
          !init.IsArray() || init.rank() != 0 || !result.IsArray() ||
          init.element_type() != result.element_type() ||
          input.element_type() != result.element_type() ||
          !IsKernelElementType(result.element_type())) {
        return Unsupported(reduce, "reduce operand, init or result types");
      }
      for (int64_t k : {i, n + i}) {
        const Shape& p = reducer.parameter(k)->shape();
        if (!p.IsArray() || p.rank() != 0 || p.element_type() != result.element_type()) {
          return Unsupported(reduce, "reducer parameters are not scalars of the result type");
        }
      }
    }
    const Instruction* root = reducer.root();
    if (n > 1 && (root->opcode() != Opcode::kTuple || root->operand_count() != n)) {
      return Unsupported(reduce, "variadic reducer without a tuple root");
    }
    for (int64_t i = 0; i < n; ++i) {
      const Shape& r = n > 1 ? root->operand(i)->shape() : root->shape();
      if (!r.IsArray() || r.rank() != 0 ||
          r.element_type() != reducer.parameter(i)->shape().element_type()) {
        return Unsupported(reduce, "reducer result is not a scalar of the accumulator type");
      }
    }
    return absl::OkStatus();
  }

  // The reducer applied to (accumulators..., values...).
  absl::StatusOr<std::vector<int>> ApplyReducer(const Instruction& reduce,
                                                const std::vector<int>& args) {
    const Computation& reducer = *reduce.to_apply();
    const int64_t n = reduce.operand_count() / 2;
    std::vector<int> results;
    XJIT_RETURN_IF_ERROR(emitter_.WithFixedParameters(reducer, args, [&]() -> absl::Status {
      const Instruction* root = reducer.root();
      for (int64_t i = 0; i < n; ++i) {
        const Instruction& r = n > 1 ? *root->operand(i) : *root;
        XJIT_ASSIGN_OR_RETURN(int value, emitter_.Emit(r, {}));
        results.push_back(value);
      }
      return absl::OkStatus();
    }));
    return results;
  }

  // Folds `values()` (the N values at the current iteration of the
  // reduction loops) into accumulators that start at `inits`, with the
  // reducer of `reduce` (a reduce or reduce-window, N inputs then N inits);
  // `count` iterations in all. Returns the N results: the inits for no
  // iteration, the reducer applied once (no accumulator) for one. `slot` is
  // the next free accumulator slot.
  template <typename Values>
  absl::StatusOr<std::vector<int>> Fold(const Instruction& reduce, const std::vector<int>& inits,
                                        int64_t count, int* slot, Values values) {
    const int64_t n = reduce.operand_count() / 2;
    if (count == 0) return inits;
    if (count == 1) {
      std::vector<int> args = inits;
      XJIT_ASSIGN_OR_RETURN(std::vector<int> xs, values());
      args.insert(args.end(), xs.begin(), xs.end());
      return ApplyReducer(reduce, args);
    }
    // One slot per accumulator; a complex accumulator has two (re, im).
    std::vector<int> args;
    std::vector<int> first_slot(n);
    for (int64_t i = 0; i < n; ++i) {
      const ElementType type = reduce.operand(i)->shape().element_type();
      first_slot[i] = *slot;
      if (IsComplex(type)) {
        const ElementType c = ComplexComponentType(type);
        Acc(KOpKind::kAccInit, c, *slot, emitter_.Re(inits[i]));
        Acc(KOpKind::kAccInit, c, *slot + 1, emitter_.Im(inits[i]));
        args.push_back(emitter_.Pair(Acc(KOpKind::kAccRead, c, *slot),
                                     Acc(KOpKind::kAccRead, c, *slot + 1)));
        *slot += 2;
      } else {
        Acc(KOpKind::kAccInit, type, *slot, inits[i]);
        args.push_back(Acc(KOpKind::kAccRead, type, *slot));
        *slot += 1;
      }
    }
    XJIT_ASSIGN_OR_RETURN(std::vector<int> xs, values());
    args.insert(args.end(), xs.begin(), xs.end());
    XJIT_ASSIGN_OR_RETURN(std::vector<int> updated, ApplyReducer(reduce, args));
    std::vector<int> results(n);
    for (int64_t i = 0; i < n; ++i) {
      const ElementType type = reduce.operand(i)->shape().element_type();
      const int s = first_slot[i];
      if (IsComplex(type)) {
        const ElementType c = ComplexComponentType(type);
        Acc(KOpKind::kAccWrite, c, s, emitter_.Re(updated[i]));
        Acc(KOpKind::kAccWrite, c, s + 1, emitter_.Im(updated[i]));
        results[i] =
            emitter_.Pair(Acc(KOpKind::kAccResult, c, s), Acc(KOpKind::kAccResult, c, s + 1));
      } else {
        Acc(KOpKind::kAccWrite, type, s, updated[i]);
        results[i] = Acc(KOpKind::kAccResult, type, s);
      }
    }
    return results;
  }

  // A reduce-window alone (variadic: one output per result): output loops
  // over its result, reduction loops over the window in row-major order (the
  // evaluator's), and every window coordinate contributes one reducer call,
  // padding and base-dilation holes with the init value (interpreter/
  // reduce_window.cc); loads are clamped into the operand.
  absl::Status RunReduceWindow(const std::vector<OutputPlan>& outputs) {
    const Instruction& rw = *outputs[0].value;
    XJIT_RETURN_IF_ERROR(CheckReduce(rw));
    const int64_t n = rw.operand_count() / 2;
    const Shape& input = rw.operand(0)->shape();
    const Window& window = rw.attrs().window;
    const int64_t rank = input.rank();
    if (static_cast<int64_t>(window.size()) != rank ||
        static_cast<int64_t>(outputs.size()) != n) {
      return Unsupported(rw, "window rank or result count");
    }
    for (const OutputPlan& output : outputs) {
      if (output.value != &rw || output.shape.dimensions() != outputs[0].shape.dimensions()) {
        return Unsupported(kernel_, "reduce-window with other outputs");
      }
    }
    const Index out_index = LoopNest(outputs[0].shape, &builder_, &spec_->program, true);
    Index window_index(rank);
    int64_t window_count = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (window[d].size < 0 || window[d].stride < 1 || window[d].base_dilation < 1 ||
          window[d].window_dilation < 1) {
        return Unsupported(rw, "invalid window");
      }
      window_count *= window[d].size;
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (window[d].size <= 1 || window_count == 0) {
        window_index[d] = builder_.Const(0);
        continue;
      }
      const int level = static_cast<int>(spec_->program.loop_extents.size());
      spec_->program.loop_extents.push_back(window[d].size);
      ++spec_->program.reduction_loops;
      window_index[d] = builder_.LoopIndex(level, window[d].size);
    }
    // The padded coordinate p of each dimension, whether every p is on a base
    // element, and the operand index there.
    int inside = builder_.Const(1);
    Index in_index(rank);
    for (int64_t d = 0; d < rank; ++d) {
      const WindowDimension& w = window[d];
      int k = window_index[d];
      if (w.window_reversal) k = builder_.ISub(builder_.Const(w.size - 1), k);
      const int p = builder_.ISub(
          builder_.IAdd(builder_.IMul(out_index[d], builder_.Const(w.stride)),
                        builder_.IMul(k, builder_.Const(w.window_dilation))),
          builder_.Const(w.padding_low));
      const int64_t size = input.dimensions(d);
      const int64_t dilated = size == 0 ? 0 : (size - 1) * w.base_dilation + 1;
      int ok = builder_.IAnd(builder_.IGe(p, builder_.Const(0)),
                             builder_.ILt(p, builder_.Const(dilated)));
      const int clamped = builder_.IClamp(p, 0, std::max<int64_t>(dilated - 1, 0));
      if (w.base_dilation > 1) {
        ok = builder_.IAnd(ok, builder_.IEq(builder_.IRem(clamped, w.base_dilation),
                                            builder_.Const(0)));
      }
      inside = builder_.IAnd(inside, ok);
      in_index[d] = builder_.IClamp(builder_.IDiv(clamped, w.base_dilation), 0,
                                    std::max<int64_t>(size - 1, 0));
    }
    std::vector<int> inits;
    for (int64_t i = 0; i < n; ++i) {
      XJIT_ASSIGN_OR_RETURN(int init, emitter_.Emit(*rw.operand(n + i), {}));
      inits.push_back(init);
    }
    bool empty_input = input.element_count() == 0;
    auto values = [&]() -> absl::StatusOr<std::vector<int>> {
      if (empty_input || builder_.IsConst(inside, 0)) return inits;
      std::vector<int> xs;
      for (int64_t i = 0; i < n; ++i) {
        XJIT_ASSIGN_OR_RETURN(int x, emitter_.Emit(*rw.operand(i), in_index));
        xs.push_back(emitter_.Select(inside, x, inits[i],
                                          rw.operand(i)->shape().element_type()));
      }
      return xs;
    };
    int slot = 0;
    XJIT_ASSIGN_OR_RETURN(std::vector<int> results, Fold(rw, inits, window_count, &slot, values));
    for (int64_t i = 0; i < n; ++i) {
      Store(static_cast<int>(i), outputs[i].shape, out_index, results[i]);
    }
    return absl::OkStatus();
  }

  // Every call of a kernel claiming rows computes every update's index, so
  // a split pays only where a window's work outweighs that: jraph_gcn's
  // degree histograms (one element a window) ran 14% slower at 1 thread and
  // no faster at 2 when claimed; its 16-element message rows, 0.9x at 2
  // threads and unchanged at 1 (docs/zoo.md, Session 18).
  static constexpr int64_t kClaimedWindowMinElements = 16;

  // A scatter alone (one operand): the driver first copies the operand into
  // the output (a no-op when the buffer plan puts them in one place), and
  // the kernel, which also reads the output as an input (the scatter's own
  // value), applies the update computation window by window in the
  // evaluator's order (interpreter/gather_scatter.cc): scatter indices in
  // row-major order, then window elements. A window whose start is out of
  // bounds in some dimension is skipped: its stores write back the value
  // they read. Updates to one element must stay in that order, so the
  // kernel is split between threads by target rows, never by updates: where
  // the target can (EmitTarget::range_claims) and each window lies in one
  // row of the output's major-most dimension, loop 0 claims those rows
  // (KernelProgram::claims_range): a call for rows [begin, end) walks every
  // update in order and skips those whose (clamped) row it does not own, so
  // each element sees its updates in the same order on any number of
  // threads. Otherwise loop 0 has one iteration (never split).
  //
  // A variadic scatter (N operands, N updates, a tuple of N results) is the
  // same loop with N outputs: each iteration reads the N current values
  // (input buffers over its own outputs, KernelSpec::input_elements),
  // applies the update computation to all of them at once, and stores N.
  absl::Status RunScatter(const std::vector<OutputPlan>& outputs) {
    const Instruction& scatter = *outputs[0].value;
    const int64_t n = (scatter.operand_count() - 1) / 2;
    if (n < 1 || scatter.operand_count() != 2 * n + 1 ||
        static_cast<int64_t>(outputs.size()) != n || scatter.called_computations().size() != 1) {
      return Unsupported(scatter, "scatter operands and results do not match");
    }
    const bool variadic = scatter.shape().IsTuple();
    auto result_shape = [&](int64_t k) -> const Shape& {
      return variadic ? scatter.shape().tuple_shapes(k) : scatter.shape();
    };
    const Shape& shape = result_shape(0);
    const Instruction& indices = *scatter.operand(n);
    const Instruction& updates = *scatter.operand(n + 1);
    const Computation& combiner = *scatter.to_apply();
    if (!IsInteger(indices.shape().element_type()) || combiner.parameter_count() != 2 * n ||
        combiner.root() == nullptr) {
      return Unsupported(scatter, "scatter types or update computation");
    }
    // The combiner's results: its root, or the operands of its root tuple.
    std::vector<const Instruction*> combined_roots;
    if (variadic) {
      if (combiner.root()->opcode() != Opcode::kTuple || combiner.root()->operand_count() != n) {
        return Unsupported(scatter, "a variadic update computation whose root is not a tuple");
      }
      combined_roots.assign(combiner.root()->operands().begin(),
                            combiner.root()->operands().end());
    } else {
      combined_roots.push_back(combiner.root());
    }
    for (int64_t k = 0; k < n; ++k) {
      const Shape& result = result_shape(k);
      const ElementType type = result.element_type();
      // The driver's copy moves the operand's bytes: they must be in the
      // result's layout (layout assignment makes them so; with passes off,
      // a different layout leaves the scatter to the evaluator).
      if (!(scatter.operand(k)->shape() == result)) {
        return Unsupported(scatter, "operand layout differs from the result's");
      }
      const Shape& root = combined_roots[k]->shape();
      if (!root.IsArray() || root.rank() != 0 || root.element_type() != type ||
          scatter.operand(n + 1 + k)->shape().element_type() != type ||
          scatter.operand(n + 1 + k)->shape().dimensions() != updates.shape().dimensions() ||
          result.dimensions() != shape.dimensions()) {
        return Unsupported(scatter, "scatter types or update computation");
      }
    }
    const ScatterDimensionNumbers& dn = scatter.attrs().scatter_dimension_numbers;
    const int64_t operand_rank = shape.rank();
    const int64_t indices_rank = indices.shape().rank();
    const int64_t update_rank = updates.shape().rank();
    auto contains = [](const std::vector<int64_t>& v, int64_t x) {
      return std::find(v.begin(), v.end(), x) != v.end();
    };
    if (dn.index_vector_dim < 0 || dn.index_vector_dim > indices_rank ||
        dn.input_batching_dims.size() != dn.scatter_indices_batching_dims.size()) {
      return Unsupported(scatter, "malformed scatter dimension numbers");
    }
    std::vector<int64_t> window_operand_dims;
    for (int64_t d = 0; d < operand_rank; ++d) {
      if (!contains(dn.inserted_window_dims, d) && !contains(dn.input_batching_dims, d)) {
        window_operand_dims.push_back(d);
      }
    }
    std::vector<int64_t> scatter_dims;  // Update dimensions that pick an index vector.
    for (int64_t d = 0; d < update_rank; ++d) {
      if (!contains(dn.update_window_dims, d)) scatter_dims.push_back(d);
    }
    if (window_operand_dims.size() != dn.update_window_dims.size() ||
        static_cast<int64_t>(scatter_dims.size()) !=
            indices_rank - (dn.index_vector_dim < indices_rank ? 1 : 0)) {
      return Unsupported(scatter, "scatter dimension numbers do not match the shapes");
    }
    // Loop 0 (the claimed rows, or one iteration), then the scatter
    // dimensions, then the window's.
    const int64_t owned_dim = shape.has_layout() && operand_rank > 0
                                  ? shape.layout().minor_to_major.back() : -1;
    int64_t windows = 1;
    for (int64_t d : scatter_dims) windows *= updates.shape().dimensions(d);
    const int64_t window_elements = windows > 0 ? updates.shape().element_count() / windows : 0;
    bool claims = target_.range_claims && owned_dim >= 0 && shape.dimensions(owned_dim) >= 2 &&
                  windows >= 2 && window_elements >= kClaimedWindowMinElements;
    for (size_t k = 0; claims && k < window_operand_dims.size(); ++k) {
      claims = window_operand_dims[k] != owned_dim ||
               updates.shape().dimensions(dn.update_window_dims[k]) == 1;
    }
    int owned_begin = -1, owned_end = -1;
    if (claims) {
      const int64_t rows = shape.dimensions(owned_dim);
      spec_->program.loop_extents.push_back(rows);
      spec_->program.claims_range = true;
      owned_begin = builder_.LoopIndex(0, rows);
      owned_end = builder_.LoopEnd(rows);
    } else {
      spec_->program.loop_extents.push_back(1);
      builder_.LoopIndex(0, 1);
    }
    Index update_index(update_rank);
    for (int64_t d : scatter_dims) update_index[d] = Loop(updates.shape().dimensions(d));
    for (int64_t d : dn.update_window_dims) update_index[d] = Loop(updates.shape().dimensions(d));
    Index start(operand_rank, builder_.Const(0));
    Index indices_index(indices_rank);
    for (size_t b = 0, d = 0; d < static_cast<size_t>(indices_rank); ++d) {
      if (static_cast<int64_t>(d) != dn.index_vector_dim) {
        indices_index[d] = update_index[scatter_dims[b++]];
      }
    }
    for (size_t k = 0; k < dn.scatter_dims_to_operand_dims.size(); ++k) {
      const int64_t d = dn.scatter_dims_to_operand_dims[k];
      if (d < 0 || d >= operand_rank) return Unsupported(scatter, "bad scatter_dims_to_operand_dims");
      if (dn.index_vector_dim < indices_rank) {
        indices_index[dn.index_vector_dim] = builder_.Const(static_cast<int64_t>(k));
      }
      XJIT_ASSIGN_OR_RETURN(int value, emitter_.Emit(indices, indices_index));
      start[d] = builder_.IAdd(start[d], builder_.Value(KOpKind::kToIndex, ElementType::kS64, value));
    }
    for (size_t i = 0; i < dn.input_batching_dims.size(); ++i) {
      const int64_t d = dn.scatter_indices_batching_dims[i];
      if (d < 0 || d >= indices_rank || d == dn.index_vector_dim) {
        return Unsupported(scatter, "bad scatter_indices_batching_dims");
      }
      const int64_t od = dn.input_batching_dims[i];
      start[od] = builder_.IAdd(start[od], indices_index[d]);
    }
    std::vector<int64_t> window_size(operand_rank, 1);
    for (size_t k = 0; k < window_operand_dims.size(); ++k) {
      window_size[window_operand_dims[k]] = updates.shape().dimensions(dn.update_window_dims[k]);
    }
    // A window longer than its dimension (an empty operand, say) is never in
    // bounds: nothing is updated, and the clamped index below would address
    // an element that does not exist (found by jit_random_test: a variadic
    // scatter into s32[0,6] wrote past its empty buffers).
    for (int64_t d = 0; d < operand_rank; ++d) {
      if (window_size[d] > shape.dimensions(d)) return absl::OkStatus();
    }
    // A start is in bounds exactly when clamping leaves it as it is: one
    // compare of the clamped start that the address needs anyway, instead
    // of two range compares and their conjunction (jraph_gcn's degree
    // histograms spent a third of their instructions on those).
    int inside = builder_.Const(1);
    Index operand_index(operand_rank);
    for (int64_t d = 0; d < operand_rank; ++d) {
      const int64_t last_start = shape.dimensions(d) - window_size[d];
      operand_index[d] = builder_.IClamp(start[d], 0, std::max<int64_t>(last_start, 0));
      inside = builder_.IAnd(inside, builder_.IEq(start[d], operand_index[d]));
    }
    for (size_t k = 0; k < window_operand_dims.size(); ++k) {
      const int64_t d = window_operand_dims[k];
      operand_index[d] = builder_.IAdd(operand_index[d], update_index[dn.update_window_dims[k]]);
    }
    if (updates.shape().element_count() == 0 || builder_.IsConst(inside, 0)) return absl::OkStatus();
    if (claims) {
      // Before every load and store of the window: a row this call does not
      // own costs only the index arithmetic above.
      const int row = operand_index[owned_dim];
      const int before_begin = builder_.ISub(owned_begin, builder_.Const(1));
      builder_.SkipUnless(
          builder_.IAnd(builder_.ILt(before_begin, row), builder_.ILt(row, owned_end)));
    }
    std::vector<int> arguments;  // The current values, then the updates.
    for (int64_t k = 0; k < n; ++k) {
      XJIT_ASSIGN_OR_RETURN(int current,
                            variadic ? emitter_.LoadElement(scatter, static_cast<int>(k),
                                                            operand_index)
                                     : emitter_.Emit(scatter, operand_index));
      arguments.push_back(current);
    }
    for (int64_t k = 0; k < n; ++k) {
      XJIT_ASSIGN_OR_RETURN(int update, emitter_.Emit(*scatter.operand(n + 1 + k), update_index));
      arguments.push_back(update);
    }
    std::vector<int> combined;
    XJIT_RETURN_IF_ERROR(emitter_.WithFixedParameters(combiner, arguments,
                                                      [&]() -> absl::Status {
      for (const Instruction* root : combined_roots) {
        XJIT_ASSIGN_OR_RETURN(int value, emitter_.Emit(*root, {}));
        combined.push_back(value);
      }
      return absl::OkStatus();
    }));
    for (int64_t k = 0; k < n; ++k) {
      Store(static_cast<int>(k), result_shape(k), operand_index,
            emitter_.Select(inside, combined[k], arguments[k], result_shape(k).element_type()));
    }
    return absl::OkStatus();
  }

  // A dynamic-update-slice over its output where it stands: the output
  // already holds operand 0 (the driver copies it there unless buffer
  // allocation wrote the result over the operand, as in a loop's state), and
  // the kernel stores the update's elements only, at the clamped start, so
  // its cost is the update's size, not the operand's. Loop 0 has one
  // iteration (stores are not split between threads); the update's loops
  // follow its physical order, so that a contiguous row of the update is a
  // vectorised inner loop.
  absl::Status RunDynamicUpdateSlice(const Instruction& dus) {
    const Shape& shape = dus.shape();
    const Instruction& update = *dus.operand(1);
    spec_->program.loop_extents.push_back(1);
    builder_.LoopIndex(0, 1);
    if (update.shape().element_count() == 0) return absl::OkStatus();
    XJIT_ASSIGN_OR_RETURN(Index starts, emitter_.ClampedStarts(dus, 2, shape,
                                                               update.shape().dimensions()));
    const int64_t rank = shape.rank();
    Index update_index(rank);
    const std::vector<int64_t>& minor_to_major = update.shape().layout().minor_to_major;
    for (int64_t level = rank - 1; level >= 0; --level) {
      const int64_t dim = minor_to_major[level];
      update_index[dim] = Loop(update.shape().dimensions(dim));
    }
    Index out_index(rank);
    for (int64_t d = 0; d < rank; ++d) out_index[d] = builder_.IAdd(starts[d], update_index[d]);
    XJIT_ASSIGN_OR_RETURN(int value, emitter_.Emit(update, update_index));
    Store(0, shape, out_index, value);
    return absl::OkStatus();
  }

  // A new loop (after the existing ones) of `extent`; extent 1 needs none.
  int Loop(int64_t extent) {
    if (extent == 1) return builder_.Const(0);
    const int level = static_cast<int>(spec_->program.loop_extents.size());
    spec_->program.loop_extents.push_back(extent);
    return builder_.LoopIndex(level, extent);
  }

  absl::Status RunReduce(const std::vector<OutputPlan>& outputs, const Instruction& first) {
    XJIT_RETURN_IF_ERROR(CheckReduce(first));
    const Shape& input = first.operand(0)->shape();
    const int64_t rank = input.rank();
    std::vector<bool> reduced(rank, false);
    for (int64_t d : first.attrs().dimensions) {
      if (d < 0 || d >= rank || reduced[d]) return Unsupported(first, "bad reduce dimensions");
      reduced[d] = true;
    }
    std::vector<int64_t> kept;
    for (int64_t d = 0; d < rank; ++d) {
      if (!reduced[d]) kept.push_back(d);
    }
    std::vector<int64_t> kept_sizes;
    for (int64_t d : kept) kept_sizes.push_back(input.dimensions(d));
    // Every reduce reduces the same dimensions of inputs of the same
    // dimensions; other outputs are of the input's or the result's
    // dimensions.
    std::vector<const Instruction*> reduces;
    bool simple = true;
    for (const OutputPlan& output : outputs) {
      const Instruction& value = *output.value;
      if (value.opcode() == Opcode::kReduce) {
        if (std::find(reduces.begin(), reduces.end(), &value) == reduces.end()) {
          XJIT_RETURN_IF_ERROR(CheckReduce(value));
          std::vector<int64_t> dims = value.attrs().dimensions;
          std::vector<int64_t> first_dims = first.attrs().dimensions;
          std::sort(dims.begin(), dims.end());
          std::sort(first_dims.begin(), first_dims.end());
          if (value.operand(0)->shape().dimensions() != input.dimensions() || dims != first_dims) {
            return Unsupported(kernel_, "reduces over different iteration spaces in one kernel");
          }
          reduces.push_back(&value);
          simple = simple && IsSimpleMonoid(*value.to_apply());
        }
      } else if (output.shape.dimensions() != input.dimensions() &&
                 std::vector<int64_t>(output.shape.dimensions().begin(),
                                      output.shape.dimensions().end()) != kept_sizes) {
        return Unsupported(kernel_, "an output is neither of the reduce's input nor result size");
      }
    }
    // Every reduce inside a fusion counts for the loop order (a row
    // fusion's reduces are all inside).
    if (kernel_.opcode() == Opcode::kFusion && kernel_.called_computations().size() == 1) {
      for (const auto& instruction : kernel_.called_computations()[0]->instructions()) {
        if (instruction->opcode() == Opcode::kReduce) {
          simple = simple && instruction->called_computations().size() == 1 &&
                   IsSimpleMonoid(*instruction->to_apply());
        }
      }
    }
    // Output loops over the first reduce's (first) result.
    const Shape& result_shape = first.shape().IsTuple() ? first.shape().tuple_shapes(0)
                                                        : first.shape();
    const Index out_index = LoopNest(result_shape, &builder_, &spec_->program, true);
    Index in_index(rank, -1);
    for (size_t k = 0; k < kept.size(); ++k) in_index[kept[k]] = out_index[k];
    // Reduction loops: reduced dimensions of size > 1, in memory order (major
    // first) for simple reducers, in the evaluator's order otherwise.
    std::vector<int64_t> order;
    if (simple) {
      const std::vector<int64_t>& m2m = input.layout().minor_to_major;
      for (size_t k = m2m.size(); k-- > 0;) order.push_back(m2m[k]);
    } else {
      for (int64_t d = 0; d < rank; ++d) order.push_back(d);
    }
    int64_t reduced_count = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (reduced[d]) reduced_count *= input.dimensions(d);
    }
    for (int64_t d : order) {
      if (!reduced[d]) continue;
      if (input.dimensions(d) <= 1 || reduced_count == 0) {
        in_index[d] = builder_.Const(0);
        continue;
      }
      const int level = static_cast<int>(spec_->program.loop_extents.size());
      spec_->program.loop_extents.push_back(input.dimensions(d));
      ++spec_->program.reduction_loops;
      in_index[d] = builder_.LoopIndex(level, input.dimensions(d));
    }
    // The value of each reduce result.
    absl::flat_hash_map<std::pair<const Instruction*, int>, int> result_of;
    int slot = 0;
    // Reduces the outputs read (a row fusion's: passes/fuse.h): the
    // reduction of the row that the requested index names, folded in this
    // output element's reduction loops; a kAccResult that later reads of the
    // row use (kernel_program.h: row programs). The index must not move
    // along the reduced dimensions (the fusion pass forms only fusions whose
    // reduces are read through broadcasts along them).
    const int output_loops =
        static_cast<int>(spec_->program.loop_extents.size()) - spec_->program.reduction_loops;
    std::vector<int8_t> varies;  // By op: -1 unknown, 0 no, 1 yes.
    std::function<bool(int)> moves = [&](int id) -> bool {
      if (id < 0) return false;
      if (static_cast<size_t>(id) >= varies.size()) varies.resize(id + 1, -1);
      if (varies[id] >= 0) return varies[id] != 0;
      const KOp& op = spec_->program.ops[id];
      bool v = op.kind == KOpKind::kLoopIndex && op.imm >= output_loops;
      v = v || op.kind == KOpKind::kAccRead || moves(op.a) || moves(op.b) || moves(op.c);
      varies[id] = v ? 1 : 0;
      return v;
    };
    std::vector<int64_t> first_dims = first.attrs().dimensions;
    std::sort(first_dims.begin(), first_dims.end());
    emitter_.set_reduce_hook([&](const Instruction& r, const Index& at) -> absl::StatusOr<int> {
      XJIT_RETURN_IF_ERROR(CheckReduce(r));
      if (r.operand_count() != 2 || r.shape().IsTuple()) {
        return Unsupported(r, "a variadic reduce read back by a row fusion");
      }
      std::vector<int64_t> dims = r.attrs().dimensions;
      std::sort(dims.begin(), dims.end());
      if (r.operand(0)->shape().dimensions() != input.dimensions() || dims != first_dims ||
          static_cast<int64_t>(at.size()) != rank - static_cast<int64_t>(dims.size())) {
        return Unsupported(r, "reduces over different iteration spaces in one row fusion");
      }
      for (int v : at) {
        if (moves(v)) return Unsupported(r, "a reduce read along its reduced dimensions");
      }
      Index row_index(rank, -1);
      size_t k = 0;
      for (int64_t d = 0; d < rank; ++d) row_index[d] = reduced[d] ? in_index[d] : at[k++];
      XJIT_ASSIGN_OR_RETURN(int init, emitter_.Emit(*r.operand(1), {}));
      if (moves(init) || OpSections(spec_->program)[init] != KSection::kPre) {
        return Unsupported(r, "a reduce whose init is computed from a reduction");
      }
      auto values = [&]() -> absl::StatusOr<std::vector<int>> {
        XJIT_ASSIGN_OR_RETURN(int x, emitter_.Emit(*r.operand(0), row_index));
        return std::vector<int>{x};
      };
      XJIT_ASSIGN_OR_RETURN(std::vector<int> results,
                            Fold(r, {init}, reduced_count, &slot, values));
      return results[0];
    });
    absl::Status status = EmitReduceOutputs(outputs, input, reduces, reduced_count, in_index,
                                            out_index, &slot, &result_of);
    emitter_.set_reduce_hook(nullptr);
    return status;
  }

  absl::Status EmitReduceOutputs(
      const std::vector<OutputPlan>& outputs, const Shape& input,
      const std::vector<const Instruction*>& reduces, int64_t reduced_count, const Index& in_index,
      const Index& out_index, int* slot_counter,
      absl::flat_hash_map<std::pair<const Instruction*, int>, int>* result_map) {
    int& slot = *slot_counter;
    auto& result_of = *result_map;
    for (const Instruction* reduce : reduces) {
      const int64_t n = reduce->operand_count() / 2;
      std::vector<int> inits;
      for (int64_t i = 0; i < n; ++i) {
        XJIT_ASSIGN_OR_RETURN(int init, emitter_.Emit(*reduce->operand(n + i), {}));
        inits.push_back(init);
      }
      auto values = [&]() -> absl::StatusOr<std::vector<int>> {
        std::vector<int> xs;
        for (int64_t i = 0; i < n; ++i) {
          XJIT_ASSIGN_OR_RETURN(int x, emitter_.Emit(*reduce->operand(i), in_index));
          xs.push_back(x);
        }
        return xs;
      };
      XJIT_ASSIGN_OR_RETURN(std::vector<int> results,
                            Fold(*reduce, inits, reduced_count, &slot, values));
      for (int64_t i = 0; i < n; ++i) {
        result_of[{reduce, reduce->shape().IsTuple() ? static_cast<int>(i) : -1}] = results[i];
      }
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
      const OutputPlan& output = outputs[k];
      if (output.value->opcode() == Opcode::kReduce) {
        auto it = result_of.find({output.value, output.element});
        if (it == result_of.end()) return Unsupported(kernel_, "reduce output mismatch");
        Store(static_cast<int>(k), output.shape, out_index, it->second);
      } else if (output.shape.dimensions() == input.dimensions()) {
        if (reduced_count == 0) continue;  // No elements.
        XJIT_ASSIGN_OR_RETURN(int value, emitter_.Emit(*output.value, in_index));
        Store(static_cast<int>(k), output.shape, in_index, value);
      } else {
        XJIT_ASSIGN_OR_RETURN(int value, emitter_.Emit(*output.value, out_index));
        Store(static_cast<int>(k), output.shape, out_index, value);
      }
    }
    return absl::OkStatus();
  }

  KernelSpec* spec_;
  const Instruction& kernel_;
  ProgramBuilder builder_;
  ElementEmitter emitter_;
  int concatenate_part_ = -1;
  int64_t merged_levels_ = 0;
  EmitTarget target_;
  bool ran_loop_ = false;
};

// The outputs of an instruction whose value is `root` (a tuple: its
// elements; a variadic reduce: its results).
absl::StatusOr<std::vector<OutputPlan>> PlanOutputs(const Instruction& kernel,
                                                    const Instruction& root) {
  std::vector<OutputPlan> outputs;
  auto add = [&](const Instruction& value) -> absl::Status {
    if (value.shape().IsTuple()) {
      if (value.opcode() != Opcode::kReduce && value.opcode() != Opcode::kReduceWindow &&
          value.opcode() != Opcode::kScatter) {
        return Unsupported(kernel, "nested tuple result");
      }
      for (int64_t i = 0; i < value.shape().tuple_size(); ++i) {
        outputs.push_back({&value, static_cast<int>(i), value.shape().tuple_shapes(i)});
      }
      return absl::OkStatus();
    }
    outputs.push_back({&value, -1, value.shape()});
    return absl::OkStatus();
  };
  if (root.opcode() == Opcode::kTuple) {
    if (root.operand_count() == 0) return Unsupported(kernel, "empty tuple result");
    for (const Instruction* element : root.operands()) {
      if (element->shape().IsTuple()) return Unsupported(kernel, "nested tuple result");
      XJIT_RETURN_IF_ERROR(add(*element));
    }
  } else {
    XJIT_RETURN_IF_ERROR(add(root));
  }
  return outputs;
}

}  // namespace

bool IsKernelCompatibleShape(const Shape& shape) {
  return shape.IsArray() && IsKernelElementType(shape.element_type()) &&
         (IsPlainLayout(shape) || IsPackedPlainLayout(shape));
}

namespace {

// Runs `emit(merged_levels, &ran_loop)` (an emitter entry point with the
// assembler's set_merged_levels and ran_loop), first without merging; an
// elementwise loop nest whose innermost loop is short (CollapsedLevels) is
// emitted again with its inner loops merged into one, and that program is
// kept when all its index arithmetic is affine in the merged loop
// (AffineAlongInnermost): then every access moves by a constant step
// along it, so it vectorises wherever the separate loops did, over the
// whole merged extent instead of a few elements per row. For a target with
// gathers it is also kept when the positions that are not affine can be
// computed lane by lane (GatherableAlongInnermost: a broadcast along the
// merged dimensions) and the innermost loop is shorter than kGatherBelow.
// Every element still runs the same operations, so results are unchanged.
template <typename Emit>
absl::StatusOr<KernelSpec> WithMergedLoops(EmitTarget target, Emit emit) {
  bool ran_loop = false;
  XJIT_ASSIGN_OR_RETURN(KernelSpec spec, emit(0, &ran_loop));
  if (!ran_loop) return spec;
  const int64_t levels = CollapsedLevels(spec.program);
  if (levels < 2) return spec;
  absl::StatusOr<KernelSpec> merged = emit(levels, &ran_loop);
  if (merged.ok() && (AffineAlongInnermost(merged->program) ||
                      (target.gathers && spec.program.loop_extents.back() < kGatherBelow &&
                       GatherableAlongInnermost(merged->program)))) {
    return merged;
  }
  return spec;
}

absl::StatusOr<KernelSpec> EmitInstructionKernelWith(const Instruction& instruction,
                                                     EmitTarget target, int64_t merged_levels,
                                                     bool* ran_loop) {
  KernelSpec spec;
  spec.program.name = instruction.name();
  switch (instruction.opcode()) {
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kFusion: case Opcode::kTuple:
      return Unsupported(instruction, "not an elemental operation");
    default:
      break;
  }
  if (instruction.shape().IsTuple() && instruction.opcode() != Opcode::kReduce &&
      instruction.opcode() != Opcode::kReduceWindow && instruction.opcode() != Opcode::kScatter) {
    return Unsupported(instruction,
                       absl::StrCat("unsupported result shape ", instruction.shape().ToString()));
  }
  KernelAssembler assembler(&spec, instruction);
  for (const Instruction* operand : instruction.operands()) {
    bool seen = false;
    for (const Instruction* input : spec.inputs) seen = seen || input == operand;
    if (!seen) XJIT_RETURN_IF_ERROR(assembler.emitter().AddLeaf(*operand, operand));
  }
  // A scatter updates its output where it stands (see RunScatter), and so
  // does a dynamic-update-slice whose operand has the result's layout (its
  // bytes are the output's starting value), unless that layout is packed: a
  // packed output is written a whole byte at a time (RunPackedLoop), so the
  // kernel computes every element, the update's and the operand's.
  if (instruction.opcode() == Opcode::kScatter) {
    if (instruction.shape().IsTuple()) {
      for (int64_t k = 0; k < instruction.shape().tuple_size(); ++k) {
        XJIT_RETURN_IF_ERROR(
            assembler.emitter().AddTupleElementLeaf(instruction, static_cast<int>(k)));
      }
    } else {
      XJIT_RETURN_IF_ERROR(assembler.emitter().AddLeaf(instruction, &instruction));
    }
    for (int64_t k = 0; k < std::max<int64_t>(1, instruction.shape().tuple_size()); ++k) {
      spec.start_operands.push_back(k);
    }
  }
  if (instruction.opcode() == Opcode::kDynamicUpdateSlice && instruction.shape().IsArray() &&
      PackedBits(instruction.shape()) == 0 && instruction.operand_count() >= 2 &&
      instruction.operand(0)->shape() == instruction.shape() &&
      instruction.operand(1)->shape().has_layout() &&
      instruction.operand(1)->shape().rank() == instruction.shape().rank()) {
    spec.start_operands = {0};
  }
  XJIT_ASSIGN_OR_RETURN(std::vector<OutputPlan> outputs, PlanOutputs(instruction, instruction));
  assembler.set_merged_levels(merged_levels);
  assembler.set_target(target);
  XJIT_RETURN_IF_ERROR(assembler.Run(outputs));
  *ran_loop = assembler.ran_loop();
  spec.output_count = spec.program.output_count;
  return spec;
}

// Registers the fused computation's parameters (as the fusion's operands)
// and constants as the kernel's leaves.
absl::Status AddFusionLeaves(const Instruction& fusion, const Computation& fused,
                             KernelAssembler& assembler) {
  for (const auto& instruction : fused.instructions()) {
    if (instruction->opcode() == Opcode::kParameter) {
      const int64_t number = instruction->attrs().parameter_number;
      if (number < 0 || number >= fusion.operand_count()) {
        return Unsupported(fusion, "fused parameter without an operand");
      }
      XJIT_RETURN_IF_ERROR(assembler.emitter().AddLeaf(*instruction, fusion.operand(number)));
    } else if (instruction->opcode() == Opcode::kConstant) {
      XJIT_RETURN_IF_ERROR(assembler.emitter().AddLeaf(*instruction, instruction.get()));
    }
  }
  return absl::OkStatus();
}

// A fusion rooted at a scatter (passes/fuse.cc, rule 6) updates its output
// where it stands, as a lone scatter does (RunScatter): the scatter reads its
// current values from the fusion's own output, which starts as the operand
// its operand-0 parameter stands for.
absl::Status StartFromScatterOperand(const Instruction& fusion, const Instruction& scatter,
                                     KernelAssembler& assembler, KernelSpec* spec) {
  const Instruction& start = *scatter.operand(0);
  if (scatter.operand_count() != 3 || !scatter.shape().IsArray() ||
      start.opcode() != Opcode::kParameter) {
    return Unsupported(fusion, "a fused scatter must be one scatter of a fusion parameter");
  }
  XJIT_RETURN_IF_ERROR(assembler.emitter().AddLeaf(scatter, &fusion));
  spec->start_operands = {start.attrs().parameter_number};
  return absl::OkStatus();
}

absl::StatusOr<KernelSpec> EmitFusionKernelWith(const Instruction& fusion, int only_output,
                                                 EmitTarget target, int64_t merged_levels,
                                                 bool* ran_loop) {
  KernelSpec spec;
  spec.program.name = fusion.name();
  if (fusion.opcode() != Opcode::kFusion || fusion.called_computations().size() != 1) {
    return Unsupported(fusion, "not a fusion");
  }
  if (fusion.attrs().fusion_kind != FusionKind::kLoop &&
      fusion.attrs().fusion_kind != FusionKind::kInput) {
    return Unsupported(fusion, "only loop and input (reduce) fusions have kernels");
  }
  const Computation& fused = *fusion.called_computations()[0];
  if (fused.root() == nullptr) return Unsupported(fusion, "empty fused computation");
  KernelAssembler assembler(&spec, fusion);
  XJIT_RETURN_IF_ERROR(AddFusionLeaves(fusion, fused, assembler));
  if (fused.root()->opcode() == Opcode::kScatter) {
    XJIT_RETURN_IF_ERROR(StartFromScatterOperand(fusion, *fused.root(), assembler, &spec));
  }
  XJIT_ASSIGN_OR_RETURN(std::vector<OutputPlan> outputs, PlanOutputs(fusion, *fused.root()));
  if (only_output >= 0) {
    if (only_output >= static_cast<int>(outputs.size())) {
      return Unsupported(fusion, "no such output");
    }
    outputs = {outputs[only_output]};
  }
  assembler.set_merged_levels(merged_levels);
  assembler.set_target(target);
  XJIT_RETURN_IF_ERROR(assembler.Run(outputs));
  *ran_loop = assembler.ran_loop();
  spec.output_count = spec.program.output_count;
  return spec;
}

}  // namespace

absl::StatusOr<KernelSpec> EmitInstructionKernel(const Instruction& instruction,
                                                 EmitTarget target) {
  return WithMergedLoops(target, [&](int64_t merged_levels, bool* ran_loop) {
    return EmitInstructionKernelWith(instruction, target, merged_levels, ran_loop);
  });
}

absl::StatusOr<KernelSpec> EmitFusionKernel(const Instruction& fusion, int only_output,
                                            EmitTarget target) {
  return WithMergedLoops(target, [&](int64_t merged_levels, bool* ran_loop) {
    return EmitFusionKernelWith(fusion, only_output, target, merged_levels, ran_loop);
  });
}

int ConcatenateParts(const Instruction& fusion) {
  if (fusion.opcode() != Opcode::kFusion || fusion.called_computations().size() != 1 ||
      fusion.attrs().fusion_kind != FusionKind::kLoop) {
    return 0;
  }
  const Instruction* root = fusion.called_computations()[0]->root();
  if (root == nullptr || root->opcode() != Opcode::kConcatenate || !root->shape().IsArray() ||
      !root->shape().has_layout() || root->attrs().dimensions.size() != 1 ||
      root->operand_count() < 2 || PackedBits(root->shape()) > 0) {
    return 0;
  }
  const std::vector<int64_t>& minor_to_major = root->shape().layout().minor_to_major;
  // Only along the minor-most dimension of size > 1, where one loop nest
  // selects between the operands inside its vector loop.
  for (int64_t d : minor_to_major) {
    if (root->shape().dimensions(d) <= 1) continue;
    return d == root->attrs().dimensions[0] ? root->operand_count() : 0;
  }
  return 0;
}

absl::StatusOr<KernelSpec> EmitConcatenatePart(const Instruction& fusion, int part) {
  KernelSpec spec;
  spec.program.name = fusion.name();
  if (ConcatenateParts(fusion) <= part || part < 0) {
    return Unsupported(fusion, "not a part of a concatenate along the minor dimension");
  }
  const Computation& fused = *fusion.called_computations()[0];
  KernelAssembler assembler(&spec, fusion);
  XJIT_RETURN_IF_ERROR(AddFusionLeaves(fusion, fused, assembler));
  if (fused.root()->opcode() == Opcode::kScatter) {
    XJIT_RETURN_IF_ERROR(StartFromScatterOperand(fusion, *fused.root(), assembler, &spec));
  }
  XJIT_ASSIGN_OR_RETURN(std::vector<OutputPlan> outputs, PlanOutputs(fusion, *fused.root()));
  if (outputs.size() != 1 || !IsKernelCompatibleShape(outputs[0].shape)) {
    return Unsupported(fusion, "unsupported concatenate result");
  }
  assembler.set_concatenate_part(part);
  XJIT_RETURN_IF_ERROR(assembler.Run(outputs));
  spec.output_count = spec.program.output_count;
  return spec;
}

absl::StatusOr<KernelSpec> EmitComputationKernel(const Computation& computation) {
  KernelSpec spec;
  spec.program.name = computation.name();
  if (computation.root() == nullptr) {
    return absl::UnimplementedError(absl::StrCat("no kernel for ", computation.name(),
                                                 ": empty computation"));
  }
  const Instruction& root = *computation.root();
  KernelAssembler assembler(&spec, root);
  for (int64_t k = 0; k < computation.parameter_count(); ++k) {
    const Instruction* parameter = computation.parameter(k);
    XJIT_RETURN_IF_ERROR(assembler.emitter().AddLeaf(*parameter, parameter));
  }
  for (const auto& instruction : computation.instructions()) {
    if (instruction->opcode() == Opcode::kConstant) {
      XJIT_RETURN_IF_ERROR(assembler.emitter().AddLeaf(*instruction, instruction.get()));
    }
  }
  XJIT_ASSIGN_OR_RETURN(std::vector<OutputPlan> outputs, PlanOutputs(root, root));
  XJIT_RETURN_IF_ERROR(assembler.Run(outputs));
  spec.output_count = spec.program.output_count;
  return spec;
}

}  // namespace xjit::jit
