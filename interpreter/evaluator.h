// The reference evaluator: runs a module, a computation or one instruction on
// host literals, slowly and obviously correctly. It is the oracle for the
// compiled path and the engine of constant folding.
//
// Values are Literals in the layout their instruction's shape states (tiles,
// padding and packed sub-byte elements included). A dynamically sized array
// (after set-dimension-size, or a parameter `f32[<=10]` given 5 elements) is
// a Literal whose shape holds the runtime size in that dimension with the
// dynamic flag set; elementwise operations, reduce and the pass-through
// operations honour it, others return Unimplemented for such operands.
//
// Semantics follow the operation semantics of seeds/003 and XLA where the
// seed is silent. The integer and floating-point edge cases:
//   - Integer arithmetic wraps (two's complement at the type's width).
//   - x / 0 is -1 for signed types and all ones (the maximum) for unsigned;
//     x % 0 is x; INT_MIN / -1 is INT_MIN and INT_MIN % -1 is 0. Division
//     truncates toward zero; the remainder has the dividend's sign (fmod for
//     floats).
//   - Shift amounts are read as unsigned; an amount >= the bit width gives 0
//     for shift-left and shift-right-logical and the sign fill (0 or -1) for
//     shift-right-arithmetic.
//   - abs(INT_MIN) = INT_MIN; negate wraps; sign is -1/0/1 (0/1 unsigned).
//   - power on integers: exact modular exponentiation for exponents >= 0
//     (0^0 = 1); for negative exponents 1 for base 1, +-1 for base -1 (by the
//     exponent's parity), 0 otherwise.
//   - mulhi: the high half of the double-width product (signed or unsigned).
//   - count-leading-zeros and popcnt count within the type's width.
//   - Floats narrower than f64 are computed in double and rounded to the
//     type once per operation (round to nearest even), which equals the
//     correctly rounded result for + - * / sqrt.
//   - maximum/minimum propagate NaN and order -0 below +0 (IEEE maximum /
//     minimum); clamp(lo, x, hi) = min(max(x, lo), hi) with the same rules.
//   - sign(-0) = -0, sign(NaN) = NaN; sign of a complex z is z/|z| (0 at 0).
//   - round-nearest-afz rounds halves away from zero, round-nearest-even to
//     even.
//   - compare FLOAT is IEEE (NaN unordered; NE true); TOTALORDER orders
//     -NaN < -inf < ... < -0 < +0 < ... < inf < NaN; SIGNED/UNSIGNED
//     reinterpret integers. The default is FLOAT for floats, SIGNED/UNSIGNED
//     by type. Complex compares support EQ and NE.
//   - convert: float to integer truncates toward zero, saturates to the
//     integer range and maps NaN to 0; integer to float and float to float
//     round to nearest even (one rounding); integer to narrower integer wraps;
//     x to pred is x != 0 (NaN is true); complex to real or pred takes the
//     real part; real to complex has a zero imaginary part.
//   - maximum/minimum of complex numbers compare lexicographically (real,
//     then imaginary part); atan2(y, x) of complex numbers is
//     -i log((x + iy) / sqrt(x^2 + y^2)).
//   - bitcast-convert between widths splits or joins the minor dimension,
//     least significant piece first (little-endian); pred counts as 8 bits,
//     or as 1 bit where only that reading fits the shapes (StableHLO's i1).
//   - reduce-precision follows XLA bit for bit: mantissa rounded to nearest
//     even, exponent overflow to +-inf, values below the reduced format's
//     smallest normal flush to +-0, NaN kept (or +inf when mantissa_bits is 0).
//   - dynamic-slice / dynamic-update-slice clamp start indices into
//     [0, dim - size]; indices of any integer type, unsigned read unsigned.
//   - conditional with a branch index outside [0, N) runs the last branch.
//   - Collectives in a plain (single-replica) run: all-reduce, all-gather,
//     all-to-all, reduce-scatter and collective-broadcast return their
//     operands; collective-permute returns the operand when the pairs contain
//     (0, 0) and zeros otherwise; replica-id and partition-id are 0. A
//     collective that needs more than one replica is Unimplemented there;
//     RunModuleReplicated runs such programs (see below).
//   - ragged-dot, scaled-dot, scan and shuffle follow XLA's expansions of
//     them, stated in interpreter/newer_ops.cc.
//
// Anything the evaluator cannot do yet returns absl::UnimplementedError naming
// the opcode; it never returns a wrong answer instead.
#ifndef XJIT_INTERPRETER_EVALUATOR_H_
#define XJIT_INTERPRETER_EVALUATOR_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/computation.h"
#include "runtime/host/custom_call_registry.h"
#include "runtime/host/host_queues.h"
#include "ir/instruction.h"
#include "ir/literal.h"
#include "ir/module.h"

namespace xjit {

namespace eval {
class ReplicaExchange;
}  // namespace eval

struct EvaluatorOptions {
  // Number of replicas the program runs on. An Evaluator runs replica 0 alone,
  // so its collectives need replica_count == 1; RunModuleReplicated sets it.
  int64_t replica_count = 1;
  // Partitions of each replica in RunModuleReplicated; 0: the module's
  // num_partitions.
  int64_t partition_count = 0;
  // Seed of the generator behind `rng` (RngUniform / RngNormal) and
  // rng-get-and-update-state. The same seed gives the same values.
  uint64_t rng_seed = 0x9E3779B97F4A7C15ull;
  // The generator's state kept outside the evaluator (rng_seed is then
  // unused): the JIT's runs share one state between their compiled rng steps
  // and the evaluators of their interpreted steps (runtime/run_context.h).
  // Null: the evaluator's own, starting at rng_seed.
  uint64_t* rng_state = nullptr;
  // Host side of infeed/outfeed and send/recv. Null: the evaluator uses
  // private empty queues (an infeed or recv then fails, outfeed values are
  // dropped).
  HostQueues* queues = nullptr;
  // Custom-call targets. Null: CustomCallRegistry::Global().
  const CustomCallRegistry* custom_calls = nullptr;
  // Upper bound on the iterations of one while loop; exceeding it is an
  // error (ResourceExhausted) rather than a hang. Negative: unbounded.
  int64_t max_while_iterations = -1;
};

// Runs `module` on arguments.size() in-process devices: R replicas of P
// partitions (P = options.partition_count, or the module's num_partitions),
// device d = r * P + p (XLA's default device assignment), one thread and one
// Evaluator each. Device d gets arguments[d], replica-id r and partition-id
// p; the results come back in device order. Collectives meet in lockstep:
// the k-th execution of a collective on one device meets the k-th execution
// on the other members of its group (loops and calls included). Semantics
// (XLA's group modes, interpreter/collectives.h):
//   - replica_groups={} is every id of the mode's kind in order; otherwise
//     each device's group is the one that lists it, in the listed order.
//     Without channel_id= the ids are replicas (at the device's partition);
//     with it, all-reduce, all-gather and reduce-scatter read them as
//     replicas with all their partitions (use_global_device_ids=false) or
//     as flattened device ids (true), and all-to-all, collective-permute
//     and collective-broadcast as partitions of the device's replica.
//   - all-reduce (any reducer, tuples element by element) folds the group's
//     values in group order; all-gather concatenates them along dimensions=;
//     reduce-scatter gives group member i block i of the reduction;
//     all-to-all (dimensions={d}) splits the operand along d into one block
//     per member, sends block i to member i and concatenates what it receives
//     along d in group order; the tuple form (no dimensions=) gives result j
//     = member j's operand at this device's position; collective-broadcast
//     gives everyone the group's first member's value; collective-permute
//     gives a device its source's operand, or zeros when no pair targets it.
//   - The -start forms compute at the start; -done passes the result on.
//   - SPMDFullToShardShape / SPMDShardToFullShape cut and assemble tiles by
//     their shardings (eval::ShardOf, eval::FullFromShards).
// Each device's evaluator has `options` with replica_count = R (same rng
// seed, shared `queues` when given). The module's replica_count must be 1 or
// R and its num_partitions 1 or P. An error on any device fails the run (the
// first failing device's error, prefixed "replica r: ", or "replica r
// partition p: " with partitions); devices that disagree on the collectives
// they reach fail with FailedPrecondition instead of hanging. Send/recv
// between replicas with P > 1 and collective-reduce are Unimplemented.
absl::StatusOr<std::vector<Literal>> RunModuleReplicated(
    const Module& module, absl::Span<const std::vector<Literal>> arguments,
    const EvaluatorOptions& options = {});

// Runs `module` as replica `replica_id` of exchange.replica_count() whose
// collectives meet the other replicas (other processes: MPI) through
// `exchange` (interpreter/collectives.h): RunModuleReplicated's semantics
// and checks for one replica. A failure elsewhere is the transport's to
// report.
absl::StatusOr<Literal> RunModuleAsReplica(const Module& module,
                                           absl::Span<const Literal> arguments,
                                           int64_t replica_id, eval::ReplicaExchange& exchange,
                                           const EvaluatorOptions& options = {});

// An evaluator keeps the state that persists across evaluations with the same
// options (the rng state). Not thread-safe; use one per thread.
class Evaluator {
 public:
  explicit Evaluator(EvaluatorOptions options = {});
  ~Evaluator();
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  // Runs the module's entry computation. `arguments` are the entry
  // parameters in order; their count, element types and dimensions must match
  // (InvalidArgument otherwise); any layout is accepted and converted to the
  // parameter's layout. The result is in the root instruction's layout.
  absl::StatusOr<Literal> EvaluateModule(const Module& module,
                                         absl::Span<const Literal> arguments);

  // Runs one computation on arguments already in the parameters' layouts.
  absl::StatusOr<Literal> EvaluateComputation(const Computation& computation,
                                              absl::Span<const Literal* const> arguments);

  // Evaluates one instruction on evaluated operand values (constant folding).
  // Parameters cannot be evaluated this way.
  absl::StatusOr<Literal> EvaluateInstruction(const Instruction& instruction,
                                              absl::Span<const Literal* const> operands);

  const EvaluatorOptions& options() const;

 private:
  friend absl::StatusOr<std::vector<Literal>> RunModuleReplicated(
      const Module& module, absl::Span<const std::vector<Literal>> arguments,
      const EvaluatorOptions& options);
  friend absl::StatusOr<Literal> RunModuleAsReplica(const Module& module,
                                                    absl::Span<const Literal> arguments,
                                                    int64_t replica_id,
                                                    eval::ReplicaExchange& exchange,
                                                    const EvaluatorOptions& options);

  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Runs `module` with a fresh Evaluator.
absl::StatusOr<Literal> EvaluateModule(const Module& module, absl::Span<const Literal> arguments,
                                       const EvaluatorOptions& options = {});

}  // namespace xjit

#endif  // XJIT_INTERPRETER_EVALUATOR_H_
