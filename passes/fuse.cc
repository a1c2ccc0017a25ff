// Fusion: the design note.
//
// A fusion is legal when the fused instructions can run as one loop nest that
// reads the fusion's operands and writes its result once: every fused
// instruction is pure (no side effect, no control edge, static shape) and the
// fused computation is a DAG hanging off one root (or a tuple of roots).
// Whether a legal fusion pays is a question of memory traffic against
// recomputation, which the rules below answer.
//
// 1. Output (epilogue) fusion, first: a dot or convolution whose only user is
//    an epilogue op of the same dimensions (add, subtract, multiply, divide,
//    maximum, minimum, clamp, tanh, logistic, convert, negate, select) is
//    fused with it into kind=kOutput, and the fusion keeps growing down
//    single-user chains of such ops. The GEMM writes its result once and the
//    epilogue runs on it in cache. Later producers may join a kOutput fusion
//    only through parameters that feed the epilogue (a bias broadcast), never
//    the contraction's own operands, which BLAS must read from memory.
// 2. Producer-into-consumer fusion, one sweep over each computation from the
//    root backwards. A consumer is an elementwise or data-movement op, a
//    reduce (the fusion becomes kind=kInput: sum of squares is one pass), or a
//    fusion. A producer is an elementwise or data-movement op, a constant, or
//    a kLoop fusion. Fusing a producer with one user moves it (always pays).
//    A producer with several users is duplicated into this consumer when
//      - it is cheap (data movement, simple arithmetic, a small constant) and
//        has at most max_cheap_fanout users, unless it stays materialised
//        anyway (it is the root, a user this sweep has finished with still
//        reads it, or a user that can never fuse it does: a dot, a tuple)
//        and reads a computed value: a materialised producer
//        that only reads parameters, constants or iotas (a broadcast) is
//        still worth re-computing, but duplicating one that reads computed
//        values gives those values one more user each, so that in a chain
//        where every value has two users (x_i = x_{i-1} + x_{i-2}) each
//        fusion-size boundary started two overlapping fusions, and those
//        four, and so on: O(n^2 / max_fusion_size) kernels;
//      - it is expensive (exp, log, tanh, divide, power, ...) only if every
//        user can fuse it, so that it is never materialised, and it has at
//        most max_expensive_fanout users.
//    An expensive producer is never fused into a consumer that iterates over
//    more elements than the producer has (a broadcast would recompute it per
//    copy).
//    No producer joins where the kernel would then evaluate one computed
//    value (not a parameter, slice, pad ...: Computes) more than
//    max_index_evaluations times per element it writes (a value read
//    through several index maps is computed once per map, and maps multiply
//    down chains: IndexEvaluations below), nor a consumer already past that.
//    A body never computes one value twice: after each step (and each
//    sibling merge, rule 4), an instruction identical to an earlier one of
//    the body is replaced by it (MergeDuplicatesInBody). Duplicating a
//    producer into several consumers that later fuse into one would
//    otherwise leave one copy per path to it, and max_fusion_size would
//    count copies, not values (threefry's rounds split into seven kernels).
// 3. Elementwise, data-movement and reduce instructions still alone become
//    single-instruction fusions (option), so the JIT sees only fusions.
// 4. Multi-output (sibling) fusion: two kLoop/kInput fusions that read the
//    same operand of at least multi_output_min_bytes, iterate over the same
//    index space (a kLoop's result dimensions, a kInput's reduce input
//    dimensions, and the same reduced dimensions when both reduce) and do not
//    depend on each other are merged; the root becomes
//    a tuple of their results and their users read it through
//    get-tuple-element. The shared input is then read once. A kLoop fusion
//    never joins a kInput fusion whose reduce keeps its input's minor-most
//    dimension (a column reduction): the merged kernel would walk the
//    kLoop's elements in the reduction's order, a row apart per step.
// 5. Row fusion (FuseOptions::row_fusion, for targets that run row programs):
//    a reduce whose result is broadcast back along its reduced dimensions
//    (softmax's row maximum and row sum, layer norm's mean and variance)
//    joins the loop that reads it. Sweeping each computation from the root
//    backwards, a consumer (a kLoop fusion, or a row fusion, of dimensions D)
//    takes a producer that only it uses when the producer computes per row:
//    a kInput fusion whose root is one reduce of an input of dimensions D
//    over dimensions R (the same R as the consumer's reduces), or a kLoop
//    fusion of dimensions D minus R (mean = sum / n) that reads such a
//    producer used by it alone; and every use of it in the consumer reads it
//    per row (moved around without changing its element count, then
//    broadcast into D at positions that are not reduced). A producer of the
//    dimensions D used by the consumer alone (exp(x - max), which two
//    readers kept out of rule 2) joins too when one of the two has reduces,
//    if the consumer reads it at the element's own index. The result is a kInput
//    fusion whose root is not a reduce: the JIT emits it as one row program
//    (jit/kernel/kernel_program.h), one kernel that passes over each row as often
//    as its chain of reductions needs, the row staying in cache. Row
//    fusions are not merged as siblings. A reduce that keeps its input's
//    minor-most dimension (a column reduction) never joins: its row program
//    would be scalar, the separate column kernels are vectorised.
//    The reduce is never duplicated;
//    the row's values (x, exp(x - max)) are recomputed in each pass, from
//    cache.
// 6. Scatter fusion: a scatter (one operand, one update) is a consumer, for
//    the producers of its indices and updates only, by rule 2's tests: so
//    gathered and scaled updates (an embedding bag's or a graph network's
//    segment sum) are computed where they are added instead of written out
//    and read back. Never the producer of its operand, which stays
//    materialised (the output starts as those bytes, written over where the
//    buffer plan allows, allocate_buffers.cc); the
//    scatter fusion (kind=kLoop, root the scatter) iterates over the
//    updates, so an expensive index producer read once per window element
//    stays out, and so does a concatenate: the scatter's loop over updates
//    is scalar, where a concatenate picks its part for every update (a
//    compare, a select and two clamps: graph networks' edge lists with
//    self-loops appended), and its own kernel copies the parts with vectors
//    (jraph_gcn 0.90x at 1 and 2 threads). A scatter fusion is no producer,
//    sibling or row fusion, and a scatter nothing takes stays a lone
//    instruction.
// Fusions never cross computations: the entry and every while / conditional
// / call body are fused separately; reducers and comparators are untouched.
//
// Building. A fusion is first made by copying its instructions into a new
// computation (Rebuild); after that, a fusion this pass made grows in place
// (GrowConsumer, GrowProducer): only the joining producer or epilogue is
// copied, so a chain of n instructions costs n copies, not n^2. Growing in
// place gives exactly what rebuilding the body would: the same parameter
// numbering (operands numbered as a walk of the body in order first meets
// them), body order, names, and orders of the computation's instructions,
// of each instruction's users and of the module's computations. The rules
// above try producers and siblings in those orders, so the groups formed do
// not depend on how the fusions were built.
#include "passes/fuse.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ir/layout_util.h"
#include "ir/status_macros.h"
#include "passes/rewrite_util.h"

namespace xjit {

namespace {

bool IsDataMovement(Opcode opcode) {
  switch (opcode) {
    case Opcode::kBroadcast: case Opcode::kReshape: case Opcode::kTranspose: case Opcode::kSlice:
    case Opcode::kPad: case Opcode::kConcatenate: case Opcode::kIota: case Opcode::kBitcast:
    case Opcode::kReverse: case Opcode::kDynamicSlice: case Opcode::kCopy: case Opcode::kGather:
      return true;
    default:
      return false;
  }
}

bool IsEpilogueOp(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAdd: case Opcode::kSubtract: case Opcode::kMultiply: case Opcode::kDivide:
    case Opcode::kMaximum: case Opcode::kMinimum: case Opcode::kClamp: case Opcode::kTanh:
    case Opcode::kLogistic: case Opcode::kConvert: case Opcode::kNegate: case Opcode::kSelect:
      return true;
    default:
      return false;
  }
}

bool IsContraction(Opcode opcode) {
  return opcode == Opcode::kDot || opcode == Opcode::kConvolution;
}

Computation* FusedComputation(const Instruction& fusion) {
  return fusion.called_computations().empty() ? nullptr : fusion.called_computations()[0];
}

bool HasTupleRoot(const Instruction& fusion) { return fusion.shape().IsTuple(); }

int64_t FusedSize(const Instruction& instruction) {
  if (instruction.opcode() != Opcode::kFusion) return 1;
  const Computation* body = FusedComputation(instruction);
  return body == nullptr ? 1 : body->instruction_count() - body->parameter_count();
}

// Whether `a` and `b` compute the same value: the same opcode, shape,
// operands, called computations and typed attributes (and, for constants,
// literal). Attributes that do not change semantics (metadata) are ignored.
bool SameComputation(const Instruction& a, const Instruction& b) {
  // Cheapest tests first: most pairs differ in opcode or operands.
  if (a.opcode() != b.opcode() || a.operands() != b.operands() || !(a.shape() == b.shape()) ||
      a.called_computations() != b.called_computations() ||
      ((a.has_attrs() || b.has_attrs()) && !(a.attrs() == b.attrs()))) {
    return false;
  }
  return a.opcode() != Opcode::kConstant || a.literal() == b.literal();
}

// Merges the instructions of a fused body that compute the same value as an
// earlier one: their users read the earlier one. Parameters are never merged
// (each stands for a distinct operand), so the fusion's operands and their
// numbering stay as they are; only the body shrinks.
//
// Why: a producer with several users is duplicated into each consumer, and
// a consumer that later takes two producers holding copies of one shared
// value holds both copies. In a chain where every value has two or three
// users (threefry's rounds: x0 += x1; x1 = rotl(x1, r) ^ x0, the rotate
// reading x1 twice) the copies double with each value, so the body grew as
// a tree, hit max_fusion_size after a round or two and split one round group
// into seven kernels that wrote their values out and read them back.
// Merged, the body is the DAG (its size counts distinct values) and the
// group is one or two kernels, as in XLA:CPU.
void MergeDuplicatesInBody(Computation* body) {
  // Most steps make no copy: a scan without allocation finds that first
  // (a duplicate is another user of the same first operand, or another
  // leaf), and only a body with copies pays for the ordered walk.
  bool any = false;
  std::vector<const Instruction*> leaf_list;
  for (const auto& owned : body->instructions()) {
    const Instruction& instruction = *owned;
    const Opcode opcode = instruction.opcode();
    if (opcode == Opcode::kParameter || opcode == Opcode::kTuple) continue;
    if (instruction.operand_count() == 0) {
      for (const Instruction* leaf : leaf_list) any = any || SameComputation(*leaf, instruction);
      leaf_list.push_back(&instruction);
    } else {
      for (const Instruction* other : instruction.operand(0)->users()) {
        any = any || (other != &instruction && SameComputation(*other, instruction));
      }
    }
    if (any) break;
  }
  if (!any) return;
  absl::flat_hash_set<const Instruction*> kept;
  kept.reserve(body->instruction_count());
  std::vector<Instruction*> leaves;  // Kept instructions without operands.
  std::vector<Instruction*> merged;
  for (Instruction* instruction : InstructionsOf(*body)) {
    const Opcode opcode = instruction->opcode();
    if (opcode == Opcode::kParameter || opcode == Opcode::kTuple) continue;
    Instruction* earlier = nullptr;
    if (instruction->operand_count() == 0) {
      for (Instruction* leaf : leaves) {
        if (SameComputation(*leaf, *instruction)) {
          earlier = leaf;
          break;
        }
      }
      if (earlier == nullptr) leaves.push_back(instruction);
    } else {
      for (Instruction* candidate : instruction->operand(0)->users()) {
        if (candidate != instruction && kept.contains(candidate) &&
            SameComputation(*candidate, *instruction)) {
          earlier = candidate;
          break;
        }
      }
    }
    if (earlier == nullptr) {
      kept.insert(instruction);
      continue;
    }
    instruction->ReplaceAllUsesWith(earlier);
    if (body->root() == instruction) body->set_root(earlier);
    merged.push_back(instruction);
  }
  for (auto it = merged.rbegin(); it != merged.rend(); ++it) body->RemoveInstruction(*it);
}

bool ContainsExpensive(const Instruction& instruction) {
  if (instruction.opcode() != Opcode::kFusion) return IsExpensiveElementwise(instruction.opcode());
  for (const auto& inner : FusedComputation(instruction)->instructions()) {
    if (IsExpensiveElementwise(inner->opcode())) return true;
  }
  return false;
}

// The reduce of a kInput fusion (the first one among the roots).
const Instruction* FusedReduce(const Computation& body) {
  const Instruction* root = body.root();
  if (root->opcode() == Opcode::kReduce) return root;
  if (root->opcode() == Opcode::kTuple) {
    for (const Instruction* element : root->operands()) {
      if (element->opcode() == Opcode::kReduce) return element;
    }
  }
  return nullptr;
}

bool IsScatterFusion(const Instruction& instruction) {
  return instruction.opcode() == Opcode::kFusion && ScatterOf(instruction) != nullptr;
}

// Whether `producer` is the operand a scatter consumer starts from (in a
// scatter fusion, the operand its root's operand-0 parameter stands for).
bool IsScatterStart(const Instruction& consumer, const Instruction& producer) {
  const Instruction* scatter = ScatterOf(consumer);
  if (scatter == &consumer) return consumer.operand(0) == &producer;
  const Instruction* start = scatter->operand(0);
  if (start->opcode() != Opcode::kParameter) return true;  // Never fused by this pass.
  const int64_t number = start->attrs().parameter_number;
  return number < 0 || number >= consumer.operand_count() || consumer.operand(number) == &producer;
}

// Whether `user` is a scatter consumer that starts from `producer` (and so
// never fuses it).
bool IsScatterStartOf(const Instruction& user, const Instruction& producer) {
  return ScatterOf(user) != nullptr && IsScatterStart(user, producer);
}

// Dimensions of the loop an instruction or fusion runs: a scatter's updates,
// a reduce's input, otherwise the (first) result.
std::vector<int64_t> IterationDimensions(const Instruction& instruction) {
  if (const Instruction* scatter = ScatterOf(instruction)) {
    const Shape& updates = scatter->operand(scatter->operand_count() - 1)->shape();
    return std::vector<int64_t>(updates.dimensions().begin(), updates.dimensions().end());
  }
  const Instruction* reduce = nullptr;
  const Instruction* first = &instruction;
  if (instruction.opcode() == Opcode::kFusion) {
    const Computation& body = *FusedComputation(instruction);
    reduce = FusedReduce(body);
    first = body.root()->opcode() == Opcode::kTuple ? body.root()->operand(0) : body.root();
  } else if (instruction.opcode() == Opcode::kReduce) {
    reduce = &instruction;
  }
  const Shape& shape = reduce != nullptr ? reduce->operand(0)->shape() : first->shape();
  if (!shape.IsArray()) return {};
  return std::vector<int64_t>(shape.dimensions().begin(), shape.dimensions().end());
}

// The reduced dimensions (sorted) of the reduces among a kInput fusion's
// roots, one list per reduce; empty for anything else. The kernel emitter runs
// all reduces of one fusion in one loop nest, so siblings may merge only when
// their reduces agree on these.
std::vector<std::vector<int64_t>> ReducedDimensions(const Instruction& instruction) {
  std::vector<std::vector<int64_t>> result;
  if (instruction.opcode() != Opcode::kFusion) return result;
  const Instruction* root = FusedComputation(instruction)->root();
  std::vector<const Instruction*> values;
  if (root->opcode() == Opcode::kTuple) {
    values.assign(root->operands().begin(), root->operands().end());
  } else {
    values.push_back(root);
  }
  for (const Instruction* value : values) {
    if (value->opcode() != Opcode::kReduce) continue;
    std::vector<int64_t> dims = value->attrs().dimensions;
    std::sort(dims.begin(), dims.end());
    if (std::find(result.begin(), result.end(), dims) == result.end()) result.push_back(dims);
  }
  return result;
}

int64_t IterationElements(const Instruction& instruction) {
  int64_t n = 1;
  for (int64_t d : IterationDimensions(instruction)) n *= d;
  return n;
}

// Whether evaluating `opcode` again costs arithmetic, not only an index
// and a load.
bool Computes(Opcode opcode) {
  switch (opcode) {
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kIota:
    case Opcode::kSlice: case Opcode::kPad: case Opcode::kConcatenate:
    case Opcode::kReshape: case Opcode::kBroadcast: case Opcode::kTranspose:
    case Opcode::kReverse: case Opcode::kBitcast: case Opcode::kCopy:
      return false;
    default:
      return true;
  }
}

// How many times a fused kernel evaluates its values, per element it
// writes. The emitter computes a value once per index expression it is read
// at: a reader of the same dimensions that reads it elementwise reads it at
// the reader's own index, so the value is evaluated wherever the reader is;
// any other reader (slice, pad, concatenate, transpose, broadcast, reduce,
// ...) maps the index, and each of its evaluations evaluates the value once
// more. So one value read through several maps is its code repeated per
// map, and chains of such reads multiply: lax.associative_scan's down-sweep
// interleaves each level's even and odd results (interior-padded pads and a
// concatenate), and sixteen fused levels evaluated the first level's values
// 2^16 times per element (a kernel program of 6,643 instructions, 5-7x
// XLA:CPU's time, compiled in a second; docs/zoo.md, session 19).
//
// Each value keeps its index sources: the readers that map the index (or
// null, the kernel's own index), inherited through elementwise readers, so a
// value two elementwise paths read at one index counts once. Its count is
// the sum of its sources' counts (null: 1), saturating.
class IndexEvaluations {
 public:
  static constexpr int64_t kSaturated = int64_t{1} << 40;
  using Sources = absl::InlinedVector<const Instruction*, 4>;

  // `outer`, if given, holds the counts of sources this one does not (a
  // producer's values are read by its consumer's).
  explicit IndexEvaluations(const IndexEvaluations* outer = nullptr) : outer_(outer) {}

  // Counts the values of a body whose root is read with `seed` (the
  // kernel's own index: {nullptr}), each after all its readers (reverse
  // post order: a body grown in place is not in definition order until the
  // pass finishes it). Returns the most of any value that Computes.
  int64_t Count(const Instruction* root, const Sources& seed) {
    values_.reserve(values_.size() + 64);
    values_[root].sources = seed;
    std::vector<const Instruction*> post_order;
    std::vector<std::pair<const Instruction*, int64_t>> stack = {{root, 0}};
    while (!stack.empty()) {
      auto& [value, next] = stack.back();
      if (next < value->operand_count()) {
        const Instruction* operand = value->operand(next++);
        if (values_.try_emplace(operand).second) stack.push_back({operand, 0});
        continue;
      }
      post_order.push_back(value);
      stack.pop_back();
    }
    int64_t most = 0;
    for (auto it = post_order.rbegin(); it != post_order.rend(); ++it) {
      const Instruction& value = **it;
      Value& counted = values_.at(&value);
      counted.count = Sum(counted.sources);
      if (Computes(value.opcode())) most = std::max(most, counted.count);
      for (const Instruction* operand : value.operands()) Propagate(value, counted, *operand);
    }
    return most;
  }

  // Where `value` is read from (nowhere if the root does not reach it: an
  // unused parameter): what a fused producer standing for it inherits.
  Sources SourcesOf(const Instruction& value) const {
    const auto it = values_.find(&value);
    return it != values_.end() ? it->second.sources : Sources();
  }

  // The count of a value read from `sources`.
  int64_t Sum(const Sources& sources) const {
    int64_t sum = 0;
    for (const Instruction* source : sources) sum = std::min(kSaturated, sum + CountOf(source));
    return sum;
  }

  static bool ReadsAtOwnIndex(const Instruction& reader, const Instruction& value) {
    return IsElementwise(reader.opcode()) && reader.shape().IsArray() &&
           value.shape().IsArray() && reader.shape().SameDimensions(value.shape());
  }

  // Whether some value of `body` that is not a parameter is read through an
  // index map. Without one every value but the parameters is evaluated once
  // (its sources are all the kernel's own index), and counting is skipped:
  // most bodies (threefry's rounds, elementwise chains) have none.
  static bool MapsComputedValues(const Computation& body) {
    for (const auto& value : body.instructions()) {
      if (value->opcode() == Opcode::kParameter) continue;
      for (const Instruction* reader : value->users()) {
        if (!ReadsAtOwnIndex(*reader, *value)) return true;
      }
    }
    return false;
  }

  // Adds `source` to `sources` unless it is there.
  static void AddSource(Sources& sources, const Instruction* source) {
    if (std::find(sources.begin(), sources.end(), source) == sources.end()) {
      sources.push_back(source);
    }
  }

  // The sources of `value` read by `reader`, a lone kernel root.
  static Sources ReadBy(const Instruction& reader, const Instruction& value) {
    return ReadsAtOwnIndex(reader, value) ? Sources{nullptr} : Sources{&reader};
  }

 private:
  struct Value {
    Sources sources;
    int64_t count = 0;
  };

  void Propagate(const Instruction& reader, const Value& counted_reader,
                 const Instruction& value) {
    Sources& to = values_.at(&value).sources;
    if (ReadsAtOwnIndex(reader, value)) {
      for (const Instruction* source : counted_reader.sources) AddSource(to, source);
    } else {
      AddSource(to, &reader);
    }
  }

  int64_t CountOf(const Instruction* source) const {
    if (source == nullptr) return 1;
    const auto it = values_.find(source);
    if (it != values_.end()) return it->second.count;
    return outer_ != nullptr ? outer_->CountOf(source) : 1;  // A lone root.
  }

  const IndexEvaluations* outer_;
  // Count inserts only while it walks the body, before it holds references.
  absl::flat_hash_map<const Instruction*, Value> values_;
};

FusionKind KindOf(const Computation& body) {
  for (const auto& instruction : body.instructions()) {
    if (IsContraction(instruction->opcode())) return FusionKind::kOutput;
  }
  for (const auto& instruction : body.instructions()) {
    if (instruction->opcode() == Opcode::kReduce) return FusionKind::kInput;
  }
  return FusionKind::kLoop;
}

// A row fusion (rule 5): kind=kInput whose root is no reduce (its reduces
// are read back through broadcasts).
bool IsRowFusion(const Instruction& instruction) {
  return instruction.opcode() == Opcode::kFusion &&
         instruction.attrs().fusion_kind == FusionKind::kInput &&
         FusedComputation(instruction) != nullptr &&
         FusedReduce(*FusedComputation(instruction)) == nullptr;
}

// The reduce a row fusion consumer or producer is built around: the root
// of a kInput fusion whose root is one non-variadic reduce.
const Instruction* SingleReduceRoot(const Instruction& instruction) {
  if (instruction.opcode() != Opcode::kFusion ||
      instruction.attrs().fusion_kind != FusionKind::kInput || instruction.shape().IsTuple()) {
    return nullptr;
  }
  const Instruction* root = FusedComputation(instruction)->root();
  if (root->opcode() != Opcode::kReduce || root->operand_count() != 2) return nullptr;
  return root;
}

}  // namespace

bool IsLoopFusible(const Instruction& instruction) {
  const Opcode opcode = instruction.opcode();
  return IsElementwise(opcode) || IsDataMovement(opcode) || opcode == Opcode::kConstant;
}

const Instruction* ScatterOf(const Instruction& instruction) {
  const Instruction* scatter = &instruction;
  if (instruction.opcode() == Opcode::kFusion) {
    const Computation* body = FusedComputation(instruction);
    if (body == nullptr || body->root() == nullptr) return nullptr;
    scatter = body->root();
  }
  if (scatter->opcode() != Opcode::kScatter || scatter->operand_count() != 3 ||
      !scatter->shape().IsArray()) {
    return nullptr;
  }
  return scatter;
}

const Instruction* FusedContraction(const Computation& fused) {
  for (const auto& instruction : fused.instructions()) {
    if (IsContraction(instruction->opcode())) return instruction.get();
  }
  return nullptr;
}

namespace {

// The instruction names of the computation being fused, kept up to date by
// the fuser's few additions, renames and removals there, so that a fresh
// name ("fusion", then the smallest free "fusion.N", as
// UniqueInstructionNameOnePass gives) costs a few lookups. Scanning the
// computation for every fusion made was quadratic: a quarter of compiling a
// 100,000-instruction chain.
class NameIndex {
 public:
  // Forgets the computation (built again on the next Unique).
  void Reset() {
    computation_ = nullptr;
    count_.clear();
    first_free_.clear();
  }

  std::string Unique(const Computation& computation, absl::string_view base) {
    if (computation_ != &computation) Build(computation);
    if (!count_.contains(base)) return std::string(base);
    const absl::string_view stem = StripSuffix(base).first;
    int64_t& n = first_free_[stem];  // Every stem.m with m < n is taken.
    if (n == 0) n = 1;
    while (count_.contains(absl::StrCat(stem, ".", n))) ++n;
    return absl::StrCat(stem, ".", n);
  }

  // `instruction` was added to the computation (under its name).
  void Note(const Instruction& instruction) {
    if (instruction.parent() == computation_) ++count_[instruction.name()];
  }
  // `instruction` is about to leave the computation.
  void Forget(const Instruction& instruction) {
    if (instruction.parent() != computation_) return;
    auto it = count_.find(instruction.name());
    if (it == count_.end()) return;
    if (--it->second == 0) {
      count_.erase(it);
      // stem.N is free again: the search for that stem restarts there.
      const auto [stem, n] = StripSuffix(instruction.name());
      auto hint = first_free_.find(stem);
      if (n > 0 && hint != first_free_.end() && n < hint->second) hint->second = n;
    }
  }
  void Rename(Instruction* instruction, std::string name) {
    Forget(*instruction);
    instruction->set_name(std::move(name));
    Note(*instruction);
  }

 private:
  void Build(const Computation& computation) {
    Reset();
    computation_ = &computation;
    for (const auto& instruction : computation.instructions()) ++count_[instruction->name()];
  }

  // "stem.N" (N a canonical positive number) as {stem, N}; anything else as
  // {name, 0}.
  static std::pair<absl::string_view, int64_t> StripSuffix(absl::string_view name) {
    const size_t dot = name.rfind('.');
    if (dot == absl::string_view::npos || dot + 1 == name.size() || name[dot + 1] == '0' ||
        name.size() - dot - 1 > 18) {
      return {name, 0};
    }
    int64_t n = 0;
    for (char c : name.substr(dot + 1)) {
      if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return {name, 0};
      n = n * 10 + (c - '0');
    }
    return {name.substr(0, dot), n};
  }

  const Computation* computation_ = nullptr;
  absl::flat_hash_map<std::string, int64_t> count_;
  absl::flat_hash_map<std::string, int64_t> first_free_;
};

class Fuser {
 public:
  Fuser(Module* module, const FuseOptions& options) : module_(module), options_(options) {}

  absl::Status Run() {
    for (Computation* computation : SequentialComputations()) {
      // The pass adds no control edges, so a computation without any keeps
      // none, and HasControlEdges (a scan of the computation) can be skipped.
      control_free_ = computation;
      names_.Reset();
      for (const auto& instruction : computation->instructions()) {
        if (!instruction->control_predecessors().empty()) control_free_ = nullptr;
      }
      if (options_.output_fusion) XJIT_RETURN_IF_ERROR(FuseEpilogues(computation));
      XJIT_RETURN_IF_ERROR(FuseProducers(computation));
      if (options_.wrap_single_instructions) XJIT_RETURN_IF_ERROR(WrapSingles(computation));
      if (options_.row_fusion && options_.wrap_single_instructions) {
        XJIT_RETURN_IF_ERROR(FuseRows(computation));
      }
      if (options_.multi_output_min_bytes >= 0) XJIT_RETURN_IF_ERROR(FuseSiblings(computation));
      const std::vector<Instruction*> before = InstructionsOf(*computation);
      computation->SortTopologically();
      if (InstructionsOf(*computation) != before) changed_ = true;
    }
    for (Computation* body : grown_) Finish(body);
    return absl::OkStatus();
  }

  bool changed() const { return changed_; }

 private:
  // Growing in place keeps a body in definition order (the sort is a
  // safeguard and leaves it as it is); the parameters get the names a
  // rebuild gives them (NameInOrder).
  static void Finish(Computation* body) {
    body->SortTopologically();
    NameInOrder(body);
  }

  // The entry and, transitively, the computations control flow runs as
  // sequences of steps.
  std::vector<Computation*> SequentialComputations() {
    std::vector<Computation*> out;
    absl::flat_hash_set<Computation*> seen;
    std::vector<Computation*> work = {module_->entry()};
    seen.insert(module_->entry());
    while (!work.empty()) {
      Computation* computation = work.back();
      work.pop_back();
      out.push_back(computation);
      for (const auto& instruction : computation->instructions()) {
        const Opcode opcode = instruction->opcode();
        if (opcode != Opcode::kWhile && opcode != Opcode::kConditional && opcode != Opcode::kCall) {
          continue;
        }
        for (Computation* callee : instruction->called_computations()) {
          if (seen.insert(callee).second) work.push_back(callee);
        }
      }
    }
    return out;
  }

  bool HasControlEdgesFast(const Instruction& instruction) const {
    return instruction.parent() != control_free_ && HasControlEdges(instruction);
  }

  // Pure, static, array-shaped, free of control edges: the precondition of
  // every fusion decision. A body this pass made holds only instructions
  // that passed this test (or were inside a fusion that did), so its fusion
  // needs no walk for side effects (which growing fusions would repeat at
  // every step).
  bool IsPlainPure(const Instruction& instruction) const {
    if (!instruction.shape().IsArray() || instruction.shape().is_dynamic()) return false;
    for (const Instruction* operand : instruction.operands()) {
      if (operand->shape().is_dynamic()) return false;
    }
    const bool made_here = instruction.opcode() == Opcode::kFusion &&
                           created_.contains(FusedComputation(instruction));
    return (made_here || !effects_.HasSideEffectDeep(instruction)) && !HasControlEdgesFast(instruction);
  }

  // IsRemovable, with IsPlainPure's shortcuts.
  bool IsRemovableFast(const Instruction& instruction) const {
    if (instruction.opcode() == Opcode::kParameter || IsRoot(&instruction)) return false;
    const bool made_here = instruction.opcode() == Opcode::kFusion &&
                           created_.contains(FusedComputation(instruction));
    return (made_here || !effects_.HasSideEffectDeep(instruction)) && !HasControlEdgesFast(instruction);
  }

  bool IsRoot(const Instruction* instruction) const {
    return instruction->parent()->root() == instruction;
  }

  bool CanBeProducer(const Instruction& producer) const {
    if (!IsPlainPure(producer)) return false;
    if (producer.opcode() == Opcode::kFusion) {
      return producer.attrs().fusion_kind == FusionKind::kLoop && !HasTupleRoot(producer) &&
             FusedComputation(producer) != nullptr && !IsScatterFusion(producer);
    }
    return IsLoopFusible(producer);
  }

  bool CanBeConsumer(const Instruction& consumer) const {
    if (!IsPlainPure(consumer)) return false;
    const Opcode opcode = consumer.opcode();
    if (opcode == Opcode::kFusion) {
      return !HasTupleRoot(consumer) && FusedComputation(consumer) != nullptr &&
             consumer.attrs().fusion_kind != FusionKind::kCustom;
    }
    if (opcode == Opcode::kReduce) return consumer.operand_count() == 2;
    if (opcode == Opcode::kScatter) return ScatterOf(consumer) != nullptr;
    return IsLoopFusible(consumer) && opcode != Opcode::kConstant && opcode != Opcode::kIota;
  }

  bool IsCheap(const Instruction& producer) const {
    if (ContainsExpensive(producer)) return false;
    if (producer.opcode() == Opcode::kConstant) return ByteSize(producer.shape()) <= 1024;
    if (producer.opcode() == Opcode::kFusion) {
      for (const auto& inner : FusedComputation(producer)->instructions()) {
        if (inner->opcode() == Opcode::kConstant && ByteSize(inner->shape()) > 1024) return false;
      }
      return FusedSize(producer) <= 8;
    }
    return true;
  }

  // In a kOutput fusion, whether operand `i` feeds the contraction directly.
  static bool FeedsContraction(const Instruction& fusion, int64_t i) {
    if (fusion.opcode() != Opcode::kFusion || fusion.attrs().fusion_kind != FusionKind::kOutput) {
      return false;
    }
    const Instruction* parameter = FusedComputation(fusion)->parameter(i);
    for (const Instruction* user : parameter->users()) {
      if (IsContraction(user->opcode())) return true;
    }
    return false;
  }

  // The most times the kernel of `consumer` with `producer` fused in would
  // evaluate one of its values per element (IndexEvaluations): the
  // consumer's values as they are, the producer's as they would be. Not
  // exact: a body merges the producer's copies of values it already holds
  // (MergeDuplicatesInBody), and a merged value is then read along both
  // paths; so a consumer over the bound takes no more producers, which keeps
  // a kernel within about the bound plus one producer's share.
  int64_t FusedEvaluations(const Instruction& producer, const Instruction& consumer) {
    if (consumer.opcode() != Opcode::kFusion || FusedComputation(consumer) == nullptr) {
      // However many of its operands it is, a lone root reads the producer
      // at one index (its own, or the one its opcode maps to).
      return CountProducer(producer, IndexEvaluations::ReadBy(consumer, producer),
                           IndexEvaluations());
    }
    const Computation& body = *FusedComputation(consumer);
    const Computation* producer_body =
        producer.opcode() == Opcode::kFusion ? FusedComputation(producer) : nullptr;
    bool maps = IndexEvaluations::MapsComputedValues(body) ||
                (producer_body != nullptr && IndexEvaluations::MapsComputedValues(*producer_body));
    for (int64_t i = 0; i < consumer.operand_count() && !maps; ++i) {
      if (consumer.operand(i) != &producer) continue;
      for (const Instruction* reader : body.parameter(i)->users()) {
        maps = maps || !IndexEvaluations::ReadsAtOwnIndex(*reader, *body.parameter(i));
      }
    }
    if (!maps) return 1;
    if (counted_consumer_ != &consumer || counted_at_ != fusions_made_) {
      consumer_counts_ = IndexEvaluations();
      consumer_most_ = consumer_counts_.Count(body.root(), {nullptr});
      counted_consumer_ = &consumer;
      counted_at_ = fusions_made_;
    }
    IndexEvaluations::Sources seed;
    for (int64_t i = 0; i < consumer.operand_count(); ++i) {
      if (consumer.operand(i) != &producer) continue;
      for (const Instruction* source : consumer_counts_.SourcesOf(*body.parameter(i))) {
        IndexEvaluations::AddSource(seed, source);
      }
    }
    return std::max(consumer_most_, CountProducer(producer, seed, consumer_counts_));
  }

  static int64_t CountProducer(const Instruction& producer, const IndexEvaluations::Sources& seed,
                               const IndexEvaluations& consumer) {
    IndexEvaluations counts(&consumer);
    const Computation* body = producer.opcode() == Opcode::kFusion ? FusedComputation(producer)
                                                                   : nullptr;
    return body != nullptr ? counts.Count(body->root(), seed) : counts.Sum(seed);
  }

  bool ShouldFuse(const Instruction& producer, const Instruction& consumer) {
    if (!CanBeProducer(producer) || !CanBeConsumer(consumer)) return false;
    for (int64_t i = 0; i < consumer.operand_count(); ++i) {
      if (consumer.operand(i) == &producer && FeedsContraction(consumer, i)) return false;
    }
    if (FusedSize(producer) + FusedSize(consumer) > options_.max_fusion_size) return false;
    // A producer that only moves data (a constant, a slice ...) adds no
    // computed value to count: its operands become parameters.
    if ((producer.opcode() == Opcode::kFusion || Computes(producer.opcode())) &&
        FusedEvaluations(producer, consumer) > options_.max_index_evaluations) {
      return false;
    }
    const bool expensive = ContainsExpensive(producer);
    if (expensive && IterationElements(consumer) > producer.shape().element_count()) return false;
    const int64_t uses = static_cast<int64_t>(producer.users().size()) + (IsRoot(&producer) ? 1 : 0);
    if (ScatterOf(consumer) != nullptr && IsScatterStart(consumer, producer)) return false;
    if (ScatterOf(consumer) != nullptr && producer.opcode() == Opcode::kConcatenate) return false;
    if (uses == 1) return true;
    if (!expensive) {
      if (!IsCheap(producer) || uses > options_.max_cheap_fanout) return false;
      return !StaysMaterialised(producer, consumer) || ReadsOnlyLeaves(producer);
    }
    if (IsRoot(&producer) || uses > options_.max_expensive_fanout) return false;
    for (const Instruction* user : producer.users()) {
      if (!CanBeConsumer(*user) || IsScatterStartOf(*user, producer)) return false;
      for (int64_t i = 0; i < user->operand_count(); ++i) {
        if (user->operand(i) == &producer && FeedsContraction(*user, i)) return false;
      }
      if (IterationElements(*user) > producer.shape().element_count()) return false;
    }
    return true;
  }

  // Whether `producer` will be materialised whatever `consumer` does: it is
  // the root, or a user other than `consumer` that FuseProducers has
  // finished with still reads it, or (for a producer with no more elements
  // than its operands together, so that reading it costs no more than
  // recomputing it: not a broadcast) another user can never fuse it (a dot
  // or convolution reading it, directly or as its kOutput fusion's
  // contraction operand, a tuple, ...). The last holds whatever order the
  // sweep meets the users in: gpt_train's bias gradients (column sums of a
  // gradient two dots also read) came before the dots in that order, so each
  // recomputed the gradient from its inputs, in column order, instead of
  // reading it.
  bool StaysMaterialised(const Instruction& producer, const Instruction& consumer) const {
    if (IsRoot(&producer)) return true;
    const bool expands = Expands(producer);
    for (const Instruction* user : producer.users()) {
      if (user == &consumer) continue;
      if (finished_.contains(user)) return true;
      if (IsScatterStartOf(*user, producer)) return true;
      if (expands) continue;
      if (!CanBeConsumer(*user)) return true;
      for (int64_t i = 0; i < user->operand_count(); ++i) {
        if (user->operand(i) == &producer && FeedsContraction(*user, i)) return true;
      }
    }
    return false;
  }

  // Whether `producer` has more elements than its array operands together.
  static bool Expands(const Instruction& producer) {
    if (!producer.shape().IsArray()) return true;
    int64_t operand_elements = 0;
    for (const Instruction* operand : producer.operands()) {
      if (operand->shape().IsArray()) operand_elements += operand->shape().element_count();
    }
    return producer.shape().element_count() > operand_elements;
  }

  static bool ReadsOnlyLeaves(const Instruction& producer) {
    for (const Instruction* operand : producer.operands()) {
      const Opcode opcode = operand->opcode();
      if (opcode != Opcode::kParameter && opcode != Opcode::kConstant && opcode != Opcode::kIota) {
        return false;
      }
    }
    return true;
  }

  // A new parameter-to-operand mapping for a fused computation under
  // construction.
  class BodyBuilder {
   public:
    explicit BodyBuilder(std::unique_ptr<Computation> body) : body_(std::move(body)) {}

    Computation* body() { return body_.get(); }
    std::unique_ptr<Computation> Release() { return std::move(body_); }
    const std::vector<Instruction*>& operands() const { return operands_; }

    Instruction* ParameterFor(Instruction* outer) {
      auto it = parameter_of_.find(outer);
      if (it != parameter_of_.end()) return it->second;
      const int64_t number = static_cast<int64_t>(operands_.size());
      auto owned = std::make_unique<Instruction>(Opcode::kParameter, outer->shape());
      owned->mutable_attrs()->parameter_number = number;
      owned->set_name(UniqueInstructionName(*body_, absl::StrCat("param_", number)));
      Instruction* parameter = body_->AddInstruction(std::move(owned));
      operands_.push_back(outer);
      parameter_of_[outer] = parameter;
      return parameter;
    }

    // Copies `source` (a fused computation called with `outer_operands`)
    // into the body; returns the copy of its root.
    Instruction* Inline(const Computation& source, absl::Span<Instruction* const> outer_operands) {
      absl::flat_hash_map<const Instruction*, Instruction*> map;
      for (const auto& instruction : source.instructions()) {
        if (instruction->opcode() == Opcode::kParameter) {
          map[instruction.get()] = ParameterFor(outer_operands[instruction->attrs().parameter_number]);
          continue;
        }
        std::vector<Instruction*> operands;
        for (const Instruction* operand : instruction->operands()) operands.push_back(map.at(operand));
        map[instruction.get()] = CloneInstruction(*instruction, body_.get(), operands);
      }
      return map.at(source.root());
    }

    // Copies `instruction` (an outer instruction, or a fusion, inlined) with
    // its operands mapped by `operand_for`.
    template <typename OperandFor>
    Instruction* Clone(Instruction* instruction, OperandFor operand_for) {
      if (instruction->opcode() == Opcode::kFusion) {
        return Inline(*FusedComputation(*instruction), instruction->operands());
      }
      std::vector<Instruction*> operands;
      for (Instruction* operand : instruction->operands()) operands.push_back(operand_for(operand));
      return CloneInstruction(*instruction, body_.get(), operands);
    }

   private:
    std::unique_ptr<Computation> body_;
    std::vector<Instruction*> operands_;
    absl::flat_hash_map<Instruction*, Instruction*> parameter_of_;
  };

  // Removes a fused computation that no instruction calls any more, if this
  // pass made it (input modules may share theirs).
  void DropComputation(Computation* body) {
    if (body == nullptr || !created_.contains(body)) return;
    created_.erase(body);
    grown_.erase(body);
    effects_.Forget(body);
    module_->RemoveComputation(body);
  }

  // Removes `instruction` and, if it is a fusion, its fused computation
  // unless that is `keep` (a body that another fusion took over).
  void Remove(Instruction* instruction, const Computation* keep = nullptr) {
    Computation* body =
        instruction->opcode() == Opcode::kFusion ? FusedComputation(*instruction) : nullptr;
    names_.Forget(*instruction);
    instruction->parent()->RemoveInstruction(instruction);
    removed_.insert(instruction);
    finished_.erase(instruction);
    if (body != keep) DropComputation(body);
  }

  // Adds the fusion instruction for a finished body to `parent` and points
  // `replaced`'s users at it. `name` and `body_name` are reused names (empty:
  // fresh ones).
  Instruction* Install(Computation* parent, BodyBuilder builder, Instruction* body_root,
                       const Shape& shape, std::string name, std::string body_name) {
    std::unique_ptr<Computation> body = builder.Release();
    body->set_root(body_root);
    body->SortTopologically();
    const FusionKind kind = KindOf(*body);
    body->set_name(body_name.empty() ? UniqueComputationName(*module_, "fused_computation")
                                     : std::move(body_name));
    Computation* installed = module_->AddComputation(std::move(body));
    created_.insert(installed);
    auto owned = std::make_unique<Instruction>(Opcode::kFusion, shape);
    owned->mutable_attrs()->fusion_kind = kind;
    owned->set_called_computations({installed});
    owned->set_name(name.empty() ? names_.Unique(*parent, "fusion") : std::move(name));
    Instruction* fusion = parent->AddInstruction(std::move(owned));
    names_.Note(*fusion);
    for (Instruction* operand : builder.operands()) fusion->AppendOperand(operand);
    return fusion;
  }

  // Makes `consumer` (a fusion or a plain instruction) into a fusion that
  // also computes `producer` (one of its operands; null: just wrap).
  // The body then has no two instructions computing the same value
  // (MergeDuplicatesInBody), whichever way it was made.
  // (Any step may make a copy: a producer with one user left may already
  // have a copy in the body, inside an earlier producer that took it.)
  Instruction* FuseInto(Instruction* consumer, Instruction* producer) {
    ++fusions_made_;  // Whatever grew, counted bodies are stale.
    Instruction* fusion = FuseIntoWithCopies(consumer, producer);
    if (producer != nullptr) MergeDuplicatesInBody(FusedComputation(*fusion));
    return fusion;
  }

  Instruction* FuseIntoWithCopies(Instruction* consumer, Instruction* producer) {
    changed_ = true;
    if (producer != nullptr) {
      if (consumer->opcode() == Opcode::kFusion && IsLatestBody(FusedComputation(*consumer))) {
        return GrowConsumer(consumer, producer);
      }
      if (consumer->opcode() != Opcode::kFusion && producer->opcode() == Opcode::kFusion &&
          IsLatestBody(FusedComputation(*producer)) && producer->users().size() == 1 &&
          !IsRoot(producer) && IsRemovableFast(*producer)) {
        return GrowProducer(consumer, producer);
      }
    }
    return Rebuild(consumer, producer);
  }

  // Whether `body` was made by this pass and is the module's last
  // computation. Only such a body grows in place: a rebuild appends the body
  // it makes to the module, and growing an earlier one in place would leave
  // the computations (and so the printed module) in another order. Bodies
  // grow one after the other, so this costs one rebuild only when a body
  // from an earlier phase grows again (a kOutput fusion taking a bias).
  bool IsLatestBody(const Computation* body) const {
    return created_.contains(body) && module_->computations().back().get() == body;
  }

  // Instructions copied into a body, with what they copy.
  using Copies = std::vector<std::pair<Instruction*, const Instruction*>>;

  // A rebuild names a body's instructions afresh, in order: each keeps its
  // name (a parameter gets param_<number>) unless an earlier one has it
  // (then the next free `.N` form).
  // (NameSet: a search of the names taken from `.1` up per collision made a
  // body whose names share a stem quadratic in its size. An unchanged name is
  // not set again: a rename updates the body's name index.)
  static void NameInOrder(Computation* body) {
    NameSet taken;
    for (const auto& instruction : body->instructions()) {
      std::string name = taken.Unique(
          instruction->opcode() == Opcode::kParameter
              ? absl::StrCat("param_", instruction->attrs().parameter_number)
              : instruction->name());
      if (name != instruction->name()) instruction->set_name(std::move(name));
    }
  }

  static bool LooksLikeParameter(absl::string_view name) {
    return absl::StartsWith(name, "param_");
  }

  // Growing in place leaves the names a rebuild would give, except when a
  // copy's name was taken or may meet a parameter's: then each copy takes
  // its source's name even where that repeats one, and Finish's NameInOrder
  // makes the body's names unique once, so that names do not depend on which
  // way the body was made. (Renaming the whole body at every step made a
  // body grown by n steps cost O(n^2): 29% of compiling a BFGS solve.)
  void NameCopies(const Copies& copies) {
    for (const auto& [copy, source] : copies) {
      if (copy->name() != source->name() || LooksLikeParameter(source->name())) {
        copy->set_name(source->name());
      }
    }
  }

  // A fresh parameter for `body`, numbered by the caller's SetParameters
  // (the name is temporary: NameInOrder, at the latest in Finish, gives the
  // final one).
  Instruction* NewParameter(Computation* body, const Shape& shape) {
    auto owned = std::make_unique<Instruction>(Opcode::kParameter, shape);
    owned->mutable_attrs()->parameter_number = -1;
    owned->set_name(absl::StrCat("param.new.", next_parameter_++));
    return body->AddInstruction(std::move(owned));
  }

  // A new fusion instruction calling the grown `body` with `operands` takes
  // over from `consumer` (and `producer`, if that is now unused): it is
  // appended, then the users move, then the old instructions go, the same
  // steps as Rebuild. Later decisions iterate the computation's instructions
  // and each instruction's users in order, so the orders must come out as a
  // rebuild would leave them. `named` lends its name.
  Instruction* Reinstall(Instruction* consumer, Instruction* producer, Instruction* named,
                         Computation* body, const std::vector<Instruction*>& operands) {
    Computation* parent = consumer->parent();
    std::string name = named->name();
    names_.Rename(named, absl::StrCat(name, ".replaced"));
    auto owned = std::make_unique<Instruction>(Opcode::kFusion, consumer->shape());
    owned->mutable_attrs()->fusion_kind = KindOf(*body);
    owned->set_called_computations({body});
    owned->set_name(std::move(name));
    Instruction* fusion = parent->AddInstruction(std::move(owned));
    names_.Note(*fusion);
    for (Instruction* operand : operands) fusion->AppendOperand(operand);
    consumer->ReplaceAllUsesWith(fusion);
    Remove(consumer, body);
    if (producer->users().empty() && IsRemovableFast(*producer)) Remove(producer, body);
    grown_.insert(body);
    return fusion;
  }

  // FuseInto for a consumer fusion this pass made: the producer is copied
  // into the consumer's body where the parameter it fed was, instead of
  // copying the whole body again (which made a chain of n instructions cost
  // n^2 copies). Rebuild walks the old body in order and numbers parameters
  // as it first meets their operands; the body's order has the parameters in
  // number order, so the walk is reproduced by placing the producer's
  // parameters and copy before the replaced parameter: operands already met
  // (lower numbers) are reused, operands met later (higher numbers) move up,
  // new ones are added there. Fusion operands, and so the order later
  // producers are tried in, come out as a rebuild makes them.
  Instruction* GrowConsumer(Instruction* consumer, Instruction* producer) {
    Computation* body = FusedComputation(*consumer);
    const std::vector<Instruction*> outer = consumer->operands();
    const int64_t p = std::find(outer.begin(), outer.end(), producer) - outer.begin();
    XJIT_CHECK(p < static_cast<int64_t>(outer.size()));
    Instruction* replaced = body->parameter(p);
    // Parameters the producer's copy enters through, in the order met.
    std::vector<Instruction*> met_outer, met;
    std::vector<bool> moved(outer.size(), false);
    auto parameter_for = [&](Instruction* operand) -> Instruction* {
      for (size_t i = 0; i < met_outer.size(); ++i) {
        if (met_outer[i] == operand) return met[i];
      }
      const int64_t q = std::find(outer.begin(), outer.end(), operand) - outer.begin();
      if (q < p) return body->parameter(q);
      Instruction* parameter;
      if (q < static_cast<int64_t>(outer.size())) {
        parameter = body->parameter(q);
        moved[q] = true;
      } else {
        parameter = NewParameter(body, operand->shape());
      }
      body->MoveInstructionBefore(parameter, replaced);
      met_outer.push_back(operand);
      met.push_back(parameter);
      return parameter;
    };
    Instruction* copy;
    Copies copies;
    if (producer->opcode() == Opcode::kFusion) {
      const Computation& source = *FusedComputation(*producer);
      absl::flat_hash_map<const Instruction*, Instruction*> map;
      for (const auto& instruction : source.instructions()) {
        if (instruction->opcode() == Opcode::kParameter) {
          map[instruction.get()] =
              parameter_for(producer->operand(instruction->attrs().parameter_number));
          continue;
        }
        std::vector<Instruction*> operands;
        for (const Instruction* operand : instruction->operands()) operands.push_back(map.at(operand));
        Instruction* clone = CloneInstruction(*instruction, body, operands);
        body->MoveInstructionBefore(clone, replaced);
        map[instruction.get()] = clone;
        copies.push_back({clone, instruction.get()});
      }
      copy = map.at(source.root());
    } else {
      std::vector<Instruction*> operands;
      for (Instruction* operand : producer->operands()) operands.push_back(parameter_for(operand));
      copy = CloneInstruction(*producer, body, operands);
      body->MoveInstructionBefore(copy, replaced);
      copies.push_back({copy, producer});
    }
    replaced->ReplaceAllUsesWith(copy);
    std::vector<Instruction*> parameters, operands;
    for (int64_t q = 0; q < p; ++q) {
      parameters.push_back(body->parameter(q));
      operands.push_back(outer[q]);
    }
    parameters.insert(parameters.end(), met.begin(), met.end());
    operands.insert(operands.end(), met_outer.begin(), met_outer.end());
    for (int64_t q = p + 1; q < static_cast<int64_t>(outer.size()); ++q) {
      if (moved[q]) continue;
      parameters.push_back(body->parameter(q));
      operands.push_back(outer[q]);
    }
    body->RemoveInstruction(replaced);
    body->SetParameters(std::move(parameters));
    NameCopies(copies);
    return Reinstall(consumer, producer, consumer, body, operands);
  }

  // FuseInto for a plain consumer of a fusion this pass made whose only user
  // it is (an epilogue joining a kOutput fusion): the consumer's copy becomes
  // the body's new root. Rebuild would walk the consumer's operands, meeting
  // those before the producer first (their parameters go to the front), then
  // the producer's body in order, then the rest (new parameters at the end).
  Instruction* GrowProducer(Instruction* consumer, Instruction* producer) {
    Computation* body = FusedComputation(*producer);
    const std::vector<Instruction*> inner = producer->operands();
    std::vector<Instruction*> met_outer, met;
    auto parameter_for = [&](Instruction* operand) -> Instruction* {
      for (size_t i = 0; i < met_outer.size(); ++i) {
        if (met_outer[i] == operand) return met[i];
      }
      const size_t q = std::find(inner.begin(), inner.end(), operand) - inner.begin();
      Instruction* parameter =
          q < inner.size() ? body->parameter(q) : NewParameter(body, operand->shape());
      met_outer.push_back(operand);
      met.push_back(parameter);
      return parameter;
    };
    const std::vector<Instruction*>& consumer_operands = consumer->operands();
    const size_t first_use =
        std::find(consumer_operands.begin(), consumer_operands.end(), producer) -
        consumer_operands.begin();
    XJIT_CHECK(first_use < consumer_operands.size());
    std::vector<Instruction*> operands(consumer_operands.size(), nullptr);
    for (size_t i = 0; i < first_use; ++i) operands[i] = parameter_for(consumer_operands[i]);
    // What was met before the producer stands before the old body, in order.
    for (size_t i = met.size(); i-- > 0;) {
      body->MoveInstructionBefore(met[i], body->instructions().front().get());
    }
    // Only known operands are met here, so the instruction list stays put.
    for (const auto& instruction : body->instructions()) {
      const int64_t number = instruction->attrs().parameter_number;
      if (instruction->opcode() == Opcode::kParameter && number >= 0) {
        parameter_for(inner[number]);
      }
    }
    Instruction* old_root = body->root();
    for (size_t i = first_use; i < consumer_operands.size(); ++i) {
      operands[i] = consumer_operands[i] == producer ? old_root : parameter_for(consumer_operands[i]);
    }
    Instruction* root = CloneInstruction(*consumer, body, operands);
    body->set_root(root);
    body->SetParameters(met);
    NameCopies({{root, consumer}});
    return Reinstall(consumer, producer, producer, body, met_outer);
  }

  // FuseInto by building the fused computation anew: wrapping a plain
  // instruction, or a consumer fusion this pass did not make.
  Instruction* Rebuild(Instruction* consumer, Instruction* producer) {
    Computation* parent = consumer->parent();
    BodyBuilder builder(std::make_unique<Computation>("fused_computation.tmp"));
    Instruction* producer_copy = nullptr;
    auto operand_for = [&](Instruction* outer) -> Instruction* {
      if (outer != producer) return builder.ParameterFor(outer);
      if (producer_copy == nullptr) {
        producer_copy = builder.Clone(producer, [&](Instruction* o) { return builder.ParameterFor(o); });
      }
      return producer_copy;
    };
    Instruction* root;
    std::string name, body_name;
    if (consumer->opcode() == Opcode::kFusion) {
      const Computation& old_body = *FusedComputation(*consumer);
      absl::flat_hash_map<const Instruction*, Instruction*> map;
      for (const auto& instruction : old_body.instructions()) {
        if (instruction->opcode() == Opcode::kParameter) {
          map[instruction.get()] = operand_for(consumer->operand(instruction->attrs().parameter_number));
          continue;
        }
        std::vector<Instruction*> operands;
        for (const Instruction* operand : instruction->operands()) operands.push_back(map.at(operand));
        map[instruction.get()] = CloneInstruction(*instruction, builder.body(), operands);
      }
      root = map.at(old_body.root());
    } else {
      root = builder.Clone(consumer, operand_for);
    }
    // The fusion that disappears into this one lends it its names (they are
    // freed before the new fusion takes them).
    Instruction* named = consumer;
    if (consumer->opcode() != Opcode::kFusion && producer != nullptr &&
        producer->opcode() == Opcode::kFusion && producer->users().size() == 1 && !IsRoot(producer)) {
      named = producer;
    }
    if (named->opcode() == Opcode::kFusion) {
      name = named->name();
      Computation* old_body = FusedComputation(*named);
      body_name = created_.contains(old_body) ? old_body->name() : "";
      old_body->set_name(absl::StrCat(old_body->name(), ".old"));
    }
    const Shape shape = consumer->shape();
    names_.Rename(named, absl::StrCat(named->name(), ".replaced"));
    Instruction* fusion = Install(parent, std::move(builder), root, shape, name, body_name);
    consumer->ReplaceAllUsesWith(fusion);
    Remove(consumer);
    if (producer != nullptr && producer->users().empty() && IsRemovableFast(*producer)) Remove(producer);
    return fusion;
  }

  absl::Status FuseEpilogues(Computation* computation) {
    removed_.clear();
    for (Instruction* instruction : InstructionsOf(*computation)) {
      if (removed_.contains(instruction)) continue;
      if (!IsContraction(instruction->opcode()) || !IsPlainPure(*instruction)) continue;
      // `instruction` is gone once fused; keep what the loop compares.
      const Shape contraction_shape = instruction->shape();
      Instruction* current = instruction;
      while (current->users().size() == 1 && !IsRoot(current)) {
        Instruction* user = current->users()[0];
        if (!IsEpilogueOp(user->opcode()) || !IsPlainPure(*user) ||
            !user->shape().SameDimensions(contraction_shape)) {
          break;
        }
        current = FuseInto(user, current);
      }
    }
    return absl::OkStatus();
  }

  absl::Status FuseProducers(Computation* computation) {
    removed_.clear();
    finished_.clear();
    std::vector<Instruction*> order = InstructionsOf(*computation);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      if (removed_.contains(*it)) continue;
      Instruction* consumer = *it;
      if (consumer->users().empty() && !IsRoot(consumer)) continue;
      bool progress = true;
      while (progress && CanBeConsumer(*consumer)) {
        progress = false;
        for (Instruction* producer : consumer->operands()) {
          if (ShouldFuse(*producer, *consumer)) {
            consumer = FuseInto(consumer, producer);
            progress = true;
            break;
          }
        }
      }
      finished_.insert(consumer);
    }
    return absl::OkStatus();
  }

  absl::Status WrapSingles(Computation* computation) {
    removed_.clear();
    for (Instruction* instruction : InstructionsOf(*computation)) {
      const Opcode opcode = instruction->opcode();
      if (opcode == Opcode::kFusion || opcode == Opcode::kConstant || opcode == Opcode::kBitcast ||
          opcode == Opcode::kParameter) {
        continue;
      }
      if (!CanBeConsumer(*instruction) && opcode != Opcode::kIota) continue;
      if (opcode == Opcode::kScatter) continue;  // Rule 6: a lone scatter stays.
      if (!IsPlainPure(*instruction)) continue;
      if (instruction->users().empty() && !IsRoot(instruction)) continue;
      FuseInto(instruction, nullptr);
    }
    return absl::OkStatus();
  }

  // Rule 5, row fusion. The row structure a consumer has or would get: the
  // dimensions D it iterates over and the reduced dimensions R of the
  // reduces in it (empty R: none yet).
  struct RowShape {
    std::vector<int64_t> dims;     // D
    std::vector<int64_t> reduced;  // R, sorted
  };

  static std::vector<int64_t> DimsOf(const Shape& shape) {
    return std::vector<int64_t>(shape.dimensions().begin(), shape.dimensions().end());
  }

  // D minus R, in order: the dimensions of a reduce's result.
  static std::vector<int64_t> KeptDims(const RowShape& row) {
    std::vector<int64_t> kept;
    for (int64_t d = 0; d < static_cast<int64_t>(row.dims.size()); ++d) {
      if (!std::binary_search(row.reduced.begin(), row.reduced.end(), d)) {
        kept.push_back(row.dims[d]);
      }
    }
    return kept;
  }

  // A kLoop fusion or a row fusion with an array root of rank >= 1 can take
  // row producers; a row fusion already has its R.
  bool RowConsumer(const Instruction& consumer, RowShape* row) const {
    if (consumer.opcode() != Opcode::kFusion || !IsPlainPure(consumer) ||
        consumer.shape().IsTuple() || consumer.shape().rank() < 1) {
      return false;
    }
    const FusionKind kind = consumer.attrs().fusion_kind;
    if (kind != FusionKind::kLoop && !IsRowFusion(consumer)) return false;
    if (IsScatterFusion(consumer)) return false;
    row->dims = DimsOf(consumer.shape());
    row->reduced.clear();
    for (const auto& inner : FusedComputation(consumer)->instructions()) {
      if (inner->opcode() != Opcode::kReduce) continue;
      row->reduced = inner->attrs().dimensions;
      std::sort(row->reduced.begin(), row->reduced.end());
      break;
    }
    return true;
  }

  // Whether `reduce` reduces the physically minor-most dimension of size > 1
  // of its input, or no dimension of size > 1 (rows of one element: no
  // reduction loop at all). A row program walks each row along
  // the innermost reduced dimension; it vectorises only when that walk is
  // contiguous. A reduce that keeps the minor dimension (batch norm's
  // statistics over N, H, W of NHWC data, reduced dimensions sorted in
  // `reduced`) would be a scalar row program reading each row with a stride,
  // where the separate kernels vectorise across the kept minor dimension
  // (the column strategy, 16 outputs per zmm): measured on cnn_forward's
  // batch norm, docs/models.md. Such reduces are left to rules 1-4.
  static bool ReducesMinorDimension(const Instruction& reduce,
                                    const std::vector<int64_t>& reduced) {
    const Shape& input = reduce.operand(0)->shape();
    if (!input.IsArray() || !input.has_layout()) return false;
    bool reduces_any = false;
    for (int64_t dimension : reduced) reduces_any |= input.dimensions()[dimension] > 1;
    if (!reduces_any) return true;
    for (int64_t dimension : input.layout().minor_to_major) {
      if (input.dimensions()[dimension] <= 1) continue;
      return std::binary_search(reduced.begin(), reduced.end(), dimension);
    }
    return true;
  }

  // Whether `producer` computes per row of `row` (completing row->reduced
  // when it is still empty): a kInput fusion whose root is one reduce of an
  // input of dimensions D (a reduce producer), or a kLoop fusion of the
  // dimensions D minus R one of whose operands is such a producer (directly
  // or through more of them) used by it alone (any shape with one element
  // per row: JAX keeps the row sums as [rows, 1]). Such values are computed
  // once per row in a row program; anything else would be computed per
  // element.
  bool RowValue(const Instruction& producer, RowShape* row, int depth) const {
    if (depth > 8 || !IsPlainPure(producer) || IsRoot(&producer)) return false;
    if (const Instruction* reduce = SingleReduceRoot(producer)) {
      if (DimsOf(reduce->operand(0)->shape()) != row->dims) return false;
      std::vector<int64_t> reduced = reduce->attrs().dimensions;
      std::sort(reduced.begin(), reduced.end());
      if (reduced.empty() || !ReducesMinorDimension(*reduce, reduced)) return false;
      if (row->reduced.empty()) row->reduced = reduced;
      return reduced == row->reduced;
    }
    if (producer.opcode() != Opcode::kFusion || producer.attrs().fusion_kind != FusionKind::kLoop ||
        producer.shape().IsTuple() || IsScatterFusion(producer)) {
      return false;
    }
    for (const Instruction* operand : producer.operands()) {
      if (operand->users().size() != 1) continue;
      RowShape probe = *row;
      if (!RowValue(*operand, &probe, depth + 1)) continue;
      if (!producer.shape().IsArray() || producer.shape().element_count() != RowCount(probe)) {
        continue;
      }
      *row = probe;
      return true;
    }
    return false;
  }

  // Whether every use of `value` (an instruction in a fused body holding
  // per-row values: as many elements as D has rows) reads it per row. Its
  // users may move the row values around (elementwise operations, reshapes,
  // bitcasts, copies, transposes, broadcasts that add no elements) and then
  // broadcast them into D at positions that are not reduced (of size > 1):
  // the index the row program reads them at then never moves along R, so
  // they are computed once per row (fusion_emitter.h checks the same).
  static bool ReadPerRow(const Instruction& value, const RowShape& row, int64_t rows, int depth) {
    if (depth > 64 || value.users().empty()) return false;
    for (const Instruction* user : value.users()) {
      if (!user->shape().IsArray()) return false;
      const Opcode opcode = user->opcode();
      const bool same_count = user->shape().element_count() == rows;
      if (opcode == Opcode::kBroadcast && DimsOf(user->shape()) == row.dims) {
        for (size_t i = 0; i < user->attrs().dimensions.size(); ++i) {
          const int64_t position = user->attrs().dimensions[i];
          if (std::binary_search(row.reduced.begin(), row.reduced.end(), position) &&
              row.dims[position] > 1) {
            return false;
          }
        }
        continue;
      }
      const bool moves_rows = IsElementwise(opcode) || opcode == Opcode::kReshape ||
                              opcode == Opcode::kBitcast || opcode == Opcode::kCopy ||
                              opcode == Opcode::kTranspose || opcode == Opcode::kBroadcast;
      if (!moves_rows || !same_count || !ReadPerRow(*user, row, rows, depth + 1)) return false;
    }
    return true;
  }

  static int64_t RowCount(const RowShape& row) {
    int64_t rows = 1;
    for (int64_t size : KeptDims(row)) rows *= size;
    return rows;
  }

  // Whether every use of `value` (of the dimensions D, in a fused body) reads
  // it at the index of the element being computed: through elementwise
  // operations of the dimensions D up to the root, or as the reduced operand
  // of a reduce over R (which reads row I's elements for row I).
  static bool ReadAtRowIndex(const Instruction& value, const RowShape& row, int depth) {
    if (depth > 256) return false;
    if (value.parent() != nullptr && value.parent()->root() == &value) return true;
    if (value.users().empty()) return false;
    for (const Instruction* user : value.users()) {
      if (user->opcode() == Opcode::kReduce) {
        std::vector<int64_t> reduced = user->attrs().dimensions;
        std::sort(reduced.begin(), reduced.end());
        if (user->operand_count() != 2 || user->operand(0) != &value || reduced != row.reduced) {
          return false;
        }
        continue;
      }
      if (!IsElementwise(user->opcode()) || !user->shape().IsArray() ||
          DimsOf(user->shape()) != row.dims || !ReadAtRowIndex(*user, row, depth + 1)) {
        return false;
      }
    }
    return true;
  }

  // A producer of the consumer's dimensions D that joins a row fusion as
  // rows of data (exp(x - max), read by the row sum and by the quotient):
  // a kLoop or row fusion used by the consumer alone, read at the element's
  // own index; at least one of the two has reduces (else rule 2 decided).
  // The row program recomputes it in each pass that reads it, from cache, or
  // carries it from the first (x86-64 PlanCarries) when it is expensive.
  bool RowData(const Instruction& producer, const Instruction& consumer, RowShape* row) const {
    if (producer.opcode() != Opcode::kFusion || !IsPlainPure(producer) || IsRoot(&producer) ||
        producer.shape().IsTuple() || DimsOf(producer.shape()) != row->dims) {
      return false;
    }
    const bool producer_rows = IsRowFusion(producer);
    if (producer.attrs().fusion_kind != FusionKind::kLoop && !producer_rows) return false;
    if (IsScatterFusion(producer)) return false;
    RowShape probe = *row;
    if (producer_rows) {
      RowShape own;
      if (!RowConsumer(producer, &own) || own.reduced.empty()) return false;
      if (!probe.reduced.empty() && probe.reduced != own.reduced) return false;
      probe.reduced = own.reduced;
    }
    if (probe.reduced.empty()) return false;
    const Computation& body = *FusedComputation(consumer);
    for (int64_t i = 0; i < consumer.operand_count(); ++i) {
      if (consumer.operand(i) != &producer) continue;
      if (!ReadAtRowIndex(*body.parameter(i), probe, 0)) return false;
    }
    *row = probe;
    return true;
  }

  bool ShouldFuseRow(const Instruction& producer, const Instruction& consumer,
                     const RowShape& consumer_row) const {
    if (producer.users().size() != 1 || producer.users()[0] != &consumer) return false;
    if (FusedSize(producer) + FusedSize(consumer) > options_.max_fusion_size) return false;
    RowShape data_row = consumer_row;
    if (RowData(producer, consumer, &data_row)) return true;
    RowShape row = consumer_row;
    if (!RowValue(producer, &row, 0)) return false;
    const Computation& body = *FusedComputation(consumer);
    for (int64_t i = 0; i < consumer.operand_count(); ++i) {
      if (consumer.operand(i) != &producer) continue;
      if (!ReadPerRow(*body.parameter(i), row, RowCount(row), 0)) return false;
    }
    return true;
  }

  absl::Status FuseRows(Computation* computation) {
    removed_.clear();
    std::vector<Instruction*> order = InstructionsOf(*computation);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      if (removed_.contains(*it)) continue;
      Instruction* consumer = *it;
      RowShape row;
      bool progress = true;
      while (progress && RowConsumer(*consumer, &row)) {
        progress = false;
        for (Instruction* producer : consumer->operands()) {
          if (ShouldFuseRow(*producer, *consumer, row)) {
            consumer = FuseInto(consumer, producer);
            progress = true;
            break;
          }
        }
      }
    }
    return absl::OkStatus();
  }

  // Whether `to` is among the transitive operands of `from`.
  static bool Reaches(const Instruction* from, const Instruction* to) {
    absl::flat_hash_set<const Instruction*> seen;
    std::vector<const Instruction*> work = {from};
    while (!work.empty()) {
      const Instruction* current = work.back();
      work.pop_back();
      for (const Instruction* operand : current->operands()) {
        if (operand == to) return true;
        if (seen.insert(operand).second) work.push_back(operand);
      }
      for (const Instruction* predecessor : current->control_predecessors()) {
        if (predecessor == to) return true;
        if (seen.insert(predecessor).second) work.push_back(predecessor);
      }
    }
    return false;
  }

  bool CanBeSibling(const Instruction& instruction) const {
    if (instruction.opcode() != Opcode::kFusion || FusedComputation(instruction) == nullptr) {
      return false;
    }
    const FusionKind kind = instruction.attrs().fusion_kind;
    if (kind != FusionKind::kLoop && kind != FusionKind::kInput) return false;
    if (IsRowFusion(instruction) || IsScatterFusion(instruction)) return false;
    if (effects_.HasSideEffectDeep(instruction) || HasControlEdgesFast(instruction)) return false;
    if (instruction.shape().IsTuple()) {
      for (const Instruction* user : instruction.users()) {
        if (user->opcode() != Opcode::kGetTupleElement) return false;
      }
      if (IsRoot(&instruction)) return false;
    }
    return true;
  }

  bool CanMergeSiblings(const Instruction& a, const Instruction& b) const {
    // Cheapest test first: FuseSiblings tries every pair of users of a
    // shared operand, and CanBeSibling walks both bodies (a parameter read by
    // 800 full fusions made the pair loop a quarter of a 30,000-instruction
    // compile).
    if (&a == &b) return false;
    if (a.opcode() != Opcode::kFusion || b.opcode() != Opcode::kFusion) return false;
    if (FusedSize(a) + FusedSize(b) > options_.max_fusion_size) return false;
    if (!CanBeSibling(a) || !CanBeSibling(b)) return false;
    if (IterationDimensions(a) != IterationDimensions(b)) return false;
    // Same input dimensions but different reduced dimensions (a sum over
    // rows beside a sum over columns of one gradient) is two loop nests.
    const std::vector<std::vector<int64_t>> reduced_a = ReducedDimensions(a);
    const std::vector<std::vector<int64_t>> reduced_b = ReducedDimensions(b);
    if (!reduced_a.empty() && !reduced_b.empty() && reduced_a != reduced_b) return false;
    // A loop fusion beside a column reduction: the merged loop nest would be
    // the reduction's (kept dimensions outside, reduced ones inside), so the
    // loop fusion's elements, contiguous along the kept minor dimension,
    // would be read and written a whole row apart per step (gpt_train's bias
    // gradients next to the gradient they sum: 3-6x slower than the two
    // kernels, docs/performance.md).
    if (reduced_a.empty() != reduced_b.empty() &&
        HasColumnReduce(reduced_a.empty() ? b : a)) {
      return false;
    }
    return !Reaches(&a, &b) && !Reaches(&b, &a);
  }

  // Whether a fusion's root values include a reduce that keeps its input's
  // minor-most dimension of size > 1 (ReducesMinorDimension is false).
  static bool HasColumnReduce(const Instruction& fusion) {
    for (const Instruction* value : RootValues(FusedComputation(fusion)->root())) {
      if (value->opcode() != Opcode::kReduce) continue;
      std::vector<int64_t> reduced = value->attrs().dimensions;
      std::sort(reduced.begin(), reduced.end());
      if (!ReducesMinorDimension(*value, reduced)) return true;
    }
    return false;
  }

  // The root values of a fusion's body: the tuple's elements or the root.
  static std::vector<Instruction*> RootValues(Instruction* root) {
    if (root->opcode() == Opcode::kTuple) return root->operands();
    return {root};
  }

  Instruction* MergeSiblings(Instruction* a, Instruction* b) {
    Computation* parent = a->parent();
    BodyBuilder builder(std::make_unique<Computation>("fused_computation.tmp"));
    std::vector<Instruction*> values;
    std::vector<int64_t> offsets;
    for (Instruction* sibling : {a, b}) {
      offsets.push_back(static_cast<int64_t>(values.size()));
      Instruction* root = builder.Inline(*FusedComputation(*sibling), sibling->operands());
      for (Instruction* value : RootValues(root)) values.push_back(value);
    }
    std::vector<Shape> shapes;
    for (Instruction* value : values) shapes.push_back(value->shape());
    Shape shape = Shape::Tuple(shapes);
    auto tuple = std::make_unique<Instruction>(Opcode::kTuple, shape);
    tuple->set_name(UniqueInstructionName(*builder.body(), "tuple"));
    Instruction* root = builder.body()->AddInstruction(std::move(tuple));
    for (Instruction* value : values) root->AppendOperand(value);
    changed_ = true;
    Instruction* fusion = Install(parent, std::move(builder), root, shape, "", "");
    // Siblings often compute shared values (threefry's two words from one
    // round chain): computed once.
    MergeDuplicatesInBody(FusedComputation(*fusion));
    const Instruction* siblings[2] = {a, b};
    for (int s = 0; s < 2; ++s) {
      Instruction* sibling = const_cast<Instruction*>(siblings[s]);
      if (sibling->shape().IsTuple()) {
        for (Instruction* user : std::vector<Instruction*>(sibling->users())) {
          user->mutable_attrs()->tuple_index += offsets[s];
          for (int64_t i = 0; i < user->operand_count(); ++i) {
            if (user->operand(i) == sibling) user->ReplaceOperand(i, fusion);
          }
        }
      } else {
        auto gte = std::make_unique<Instruction>(Opcode::kGetTupleElement, sibling->shape());
        gte->mutable_attrs()->tuple_index = offsets[s];
        gte->set_name(names_.Unique(*parent, "get-tuple-element"));
        Instruction* element = parent->AddInstruction(std::move(gte));
        names_.Note(*element);
        element->AppendOperand(fusion);
        sibling->ReplaceAllUsesWith(element);
      }
      Remove(sibling);
    }
    return fusion;
  }

  absl::Status FuseSiblings(Computation* computation) {
    removed_.clear();
    for (Instruction* shared : InstructionsOf(*computation)) {
      if (removed_.contains(shared)) continue;
      if (!shared->shape().IsArray() || ByteSize(shared->shape()) < options_.multi_output_min_bytes) {
        continue;
      }
      bool merged = true;
      while (merged) {
        merged = false;
        std::vector<Instruction*> users = shared->users();
        for (size_t i = 0; i < users.size() && !merged; ++i) {
          for (size_t j = i + 1; j < users.size() && !merged; ++j) {
            if (CanMergeSiblings(*users[i], *users[j])) {
              MergeSiblings(users[i], users[j]);
              merged = true;
            }
          }
        }
      }
    }
    return absl::OkStatus();
  }

  Module* module_;
  FuseOptions options_;
  // Instructions deleted during the current sweep (compared, never read).
  absl::flat_hash_set<const Instruction*> removed_;
  // Names of the computation being fused (fresh fusion names).
  NameIndex names_;
  // Consumers FuseProducers is done with (StaysMaterialised).
  absl::flat_hash_set<const Instruction*> finished_;
  // FusedEvaluations' counts of a consumer's body, kept while nothing is
  // fused (a consumer tries each of its operands in turn, and again after
  // each one it takes).
  int64_t fusions_made_ = 0;
  const Instruction* counted_consumer_ = nullptr;
  int64_t counted_at_ = -1;
  IndexEvaluations consumer_counts_;
  int64_t consumer_most_ = 0;
  absl::flat_hash_set<const Computation*> created_;
  // Side effects, each computation looked into once for the whole pass (the
  // pass fuses only instructions without one, so no answer changes).
  mutable SideEffectCache effects_;
  // Bodies grown in place (GrowConsumer, GrowProducer): Finish renames their
  // parameters.
  absl::flat_hash_set<Computation*> grown_;
  // Numbers the temporary names of new parameters (NewParameter).
  int64_t next_parameter_ = 0;
  // The computation being fused if it has no control edges, else null.
  const Computation* control_free_ = nullptr;
  // Whether the module changed (a fusion made, grown or merged, or an
  // instruction list reordered).
  bool changed_ = false;
};

}  // namespace

absl::StatusOr<bool> Fuse::Run(Module* module) {
  if (module->entry() == nullptr || module->entry()->root() == nullptr) {
    return absl::InvalidArgumentError("fuse: the module has no entry computation");
  }
  Fuser fuser(module, options_);
  XJIT_RETURN_IF_ERROR(fuser.Run());
  return fuser.changed();
}

}  // namespace xjit
