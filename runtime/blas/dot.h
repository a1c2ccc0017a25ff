// DotGeneral at run time: a plan computed once from shapes, layouts and
// dimension numbers, then RunDot over raw buffers with no allocation.
//
// The plan reduces every dot to a strided problem (DotProblem): batch, M (lhs
// free), N (rhs free) and K (contracting) dimensions, each with an element
// stride in the operands that index it. Within each group the dimensions are
// reordered and merged where memory allows, so that each operand becomes one
// strided matrix (or vector) per batch index:
//   - f32/f64/c64/c128 with equal operand and result types go to OpenBLAS:
//     gemm when M > 1 and N > 1, gemv when one of them is 1, dot (dotu for
//     complex) when both are; row/column-major order and the transpose flags
//     come from the strides, so no data moves;
//   - an operand (or the result) whose dimensions cannot be merged into a
//     BLAS matrix is copied once per run into scratch in a dense layout (the
//     result is computed there and copied out); DotPlan::copies lists them
//     and copy_bytes counts the bytes;
//   - batch dimensions are a loop of BLAS calls (no batched GEMM in OpenBLAS
//     0.3.21);
//   - a GEMM whose contracting dimensions do not merge into one strided
//     dimension of both operands (einsum('bhqd,bhkd->qk'): K is (b, h, d)
//     with the free dimension q between h and d) splits K instead of copying
//     the operands, where the result stays in cache: the outer part of K is
//     a loop of GEMMs over the inner part, accumulated into C (beta 1 after
//     the first call);
//   - bf16 and f16 (any mix of bf16, f16 and f32 operands and result, at
//     least one bf16 or f16) go to sgemm/sgemv/sdot on f32 images: every
//     narrow operand is widened (exactly) into a dense f32 image in scratch,
//     the product is computed in f32 and a narrow result is rounded once, to
//     nearest even, from the f32 sum: XLA:CPU's own method (it converts bf16
//     dot operands to f32, dots in f32, converts back; f16 dots likewise,
//     unless --xla_cpu_strict_dot_conv_math: ChangeOpDataType(F16, F32) in
//     its cpu_compiler.cc). The evaluator accumulates in double and rounds
//     once, so the two may differ by one ulp of the narrow type where the
//     f32 sum's error crosses a rounding boundary. Debian's OpenBLAS 0.3.21
//     is built without bf16 kernels (no cblas_sbgemm) and has no f16 GEMM,
//     so there is nothing faster to call;
//   - every other case (f8, integers, PRED, mixed operand types,
//     K = 0, sizes beyond BLAS's 32-bit ints, and any dot planned under an
//     address-space limit that leaves no room for OpenBLAS's buffer,
//     blas_threads.h) runs a plain strided loop:
//     integers wrap at the result width (PRED: any true product), narrow
//     floats accumulate in f32 and round once, f64 in f64, complex in
//     complex of the result's component type.
// Layouts must be plain (minor_to_major only: no tiles, no padded
// dimensions, no packed sub-byte elements); others are Unimplemented, so the
// caller can fall back to the evaluator.
#ifndef XJIT_RUNTIME_BLAS_DOT_H_
#define XJIT_RUNTIME_BLAS_DOT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/attributes.h"
#include "ir/element_type.h"
#include "ir/instruction.h"
#include "ir/shape.h"

namespace xjit::runtime::blas {

// Loops are unrolled over at most this many dimensions after merging.
inline constexpr int kMaxLoopDims = 32;

// One dimension of a strided dot. Strides are in elements of the operand;
// a stride of an operand that the group does not index is ignored.
struct DotDim {
  int64_t size = 1;
  int64_t lhs_stride = 0;
  int64_t rhs_stride = 0;
  int64_t out_stride = 0;
};

// out[b, m, n] = sum_k lhs[b, m, k] * rhs[b, k, n] over strided memory, each
// operand starting at its offset (elements). Used directly by convolution.
struct DotProblem {
  ElementType lhs_type = ElementType::kF32;
  ElementType rhs_type = ElementType::kF32;
  ElementType out_type = ElementType::kF32;
  int64_t lhs_offset = 0;
  int64_t rhs_offset = 0;
  int64_t out_offset = 0;
  std::vector<DotDim> batch;  // lhs, rhs and out strides
  std::vector<DotDim> m;      // lhs and out strides
  std::vector<DotDim> n;      // rhs and out strides
  std::vector<DotDim> k;      // lhs and rhs strides
  // Whether the plan may loop over the outer contracting dimensions instead
  // of copying an operand (the K loop, above). PlanDot sets it for dots;
  // convolutions leave it off (their images are built dense already; their
  // GEMMs over strided kernel views were not measured with it).
  bool allow_k_loop = false;
};

// A strided N-d copy between an operand and its dense image in scratch.
struct StridedCopy {
  enum class Operand : uint8_t { kLhs, kRhs, kOut };
  Operand operand = Operand::kLhs;  // kOut copies scratch -> result after the GEMMs
  int64_t scratch_offset = 0;       // bytes
  int64_t element_bytes = 0;
  int64_t operand_offset = 0;       // elements
  std::vector<int64_t> sizes;
  std::vector<int64_t> operand_strides;  // elements
  std::vector<int64_t> scratch_strides;  // elements
  // Set (bf16 or f16) when the operand is of that type and its image f32
  // (element_bytes 4): copies into the image widen (exactly), copies out of
  // it round to nearest even. Unset: the image has the operand's type.
  std::optional<ElementType> widened_from;
  int64_t bytes() const;
};

struct DotPlan {
  enum class Kind : uint8_t {
    kNothing,  // the result has no elements
    kGemm,
    kGemv,
    kDot,
    kLoop,     // the plain strided loop
  };
  Kind kind = Kind::kNothing;
  ElementType lhs_type = ElementType::kF32;
  ElementType rhs_type = ElementType::kF32;
  ElementType out_type = ElementType::kF32;
  // The type the BLAS call computes in: out_type, or f32 for bf16 and f16
  // dots on f32 images.
  ElementType compute_type = ElementType::kF32;

  // Copies made on every run, in order (operands before, result after).
  std::vector<StridedCopy> copies;
  int64_t copy_bytes = 0;
  // Bytes of scratch RunDot needs (0 when no copy); any alignment works,
  // 64-byte aligned scratch is fastest.
  int64_t scratch_bytes = 0;

  // Batch loop (merged), outer first; offsets in elements of the operand
  // actually read (the scratch image where copied).
  std::vector<int64_t> batch_sizes;
  std::vector<int64_t> lhs_batch_strides;
  std::vector<int64_t> rhs_batch_strides;
  std::vector<int64_t> out_batch_strides;
  int64_t lhs_offset = 0;
  int64_t rhs_offset = 0;
  int64_t out_offset = 0;
  bool lhs_in_scratch = false;
  bool rhs_in_scratch = false;
  bool out_in_scratch = false;
  // The K loop (merged, outer first; empty when K is one BLAS dimension):
  // each index is one more call over the inner K (plan.k), accumulated into
  // C. kGemm only.
  std::vector<int64_t> k_loop_sizes;
  std::vector<int64_t> lhs_k_loop_strides;
  std::vector<int64_t> rhs_k_loop_strides;
  int64_t lhs_scratch_offset = 0;  // bytes; where the image starts
  int64_t rhs_scratch_offset = 0;
  int64_t out_scratch_offset = 0;

  // kGemm (CBLAS arguments): C = op(A) op(B) with A = lhs, B = rhs.
  // kGemv: y = op(A) x; gemv_lhs_is_matrix says whether A is lhs (x = rhs)
  // or rhs (x = lhs). kDot: one element = x . y.
  bool row_major = true;
  bool trans_a = false;
  bool trans_b = false;
  bool gemv_lhs_is_matrix = true;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
  int64_t incx = 1, incy = 1;  // gemv: x and y; dot: lhs and rhs

  // kGemm in f32: whether the few-row kernels (small_gemm.h) may run it
  // instead of cblas_sgemm where PreferSmallGemm says they are faster (the
  // compile driver sets it for dots). An unsplit call gives them `threads`
  // (they split columns themselves, with the same bits on any thread count);
  // one part of a split, one thread.
  bool small_gemm = false;
  // kGemv in the axpy form run by AxpyGemv (axpy_gemv.h), over a matrix of at
  // least kDotSplitLimits.min_gemv_products elements with at least as many
  // rows (the contracted dimension) as columns: rows [0, axpy_half_rows)
  // and the rest are summed separately, the rest into scratch at
  // axpy_scratch_offset (bytes), and y = first + rest. PlanDot sets it
  // whatever the threads, so the bits are the same on any thread count; a
  // split plan (kRows, 2 bands) sums the two halves on two threads. Column
  // bands of such a matrix (rows of 1 KB in two 512-byte halves) cost more
  // than the whole call on one thread. 0: one sum (column bands, if split).
  int64_t axpy_half_rows = 0;
  int64_t axpy_scratch_offset = 0;
  // kLoop: the merged problem (strides of the operands as given).
  DotProblem loop;

  // How RunDot spreads the BLAS calls over threads (PlanDotThreads; by
  // default one call after another on the calling thread):
  //   kBatch: the calls of the batch loop are handed out to the calling
  //     thread and ThreadPool's workers, one batch index at a time;
  //   kRows, kColumns: every call (every batch index) is cut into `bands`
  //     bands of result rows (columns of op(B) and C untouched) or columns,
  //     one per thread, each band a call of its own over the full K.
  // OpenBLAS's own workers spin for about 0.1 s after every multi-threaded
  // call, taking a core from the pool's next kernels; split plans call
  // single-threaded BLAS (blas_threads = 1), so the workers never wake.
  enum class Split : uint8_t { kNone, kBatch, kRows, kColumns };
  Split split = Split::kNone;
  int64_t bands = 1;     // kRows / kColumns: bands per call
  int threads = 1;       // the threads the split runs on (calling + pool helpers)
  int blas_threads = 1;  // OpenBLAS threads the calls want (callers set it: blas_threads.h)

  // One line for dumps and tests: "gemm row_major N T m=.. n=.. k=.. batch=.. copies=..".
  std::string ToString() const;
};

// How the plain loop (DotPlan::Kind::kLoop) reads its operands and writes
// its result, chosen from the element types alone; RunDot dispatches on it and
// DotPlan::ToString names it, so tests can see which one a plan runs:
//   kComplex, kF64, kF32: floats (narrow ones accumulated in f32);
//   kTypedInt: one integer type for both operands and the result, loaded and
//     stored as that C++ type;
//   kDecodedInt: anything else (mixed integer types, PRED, packed sub-byte
//     types), each element's type decoded as it is loaded or stored, which
//     made s8 convolutions 25x slower than the evaluator (issue 30).
enum class DotLoopCodec : uint8_t { kComplex, kF64, kF32, kTypedInt, kDecodedInt };
DotLoopCodec ChooseDotLoopCodec(const DotProblem& problem);

// Plans the dot of the strided problem (sizes and strides need not be merged
// or ordered). InvalidArgument for negative sizes; Unimplemented beyond
// kMaxLoopDims dimensions or for mixed type families the loop cannot do.
// Whether each BLAS call of `plan` is a few dozen multiply-adds at most:
// OpenBLAS runs such a call on the calling thread whatever its thread
// setting (so the scoped setting of blas_threads.h can be skipped), and
// an f32/f64 GEMV that small runs as a plain loop instead.
bool IsTinyBlasCall(const DotPlan& plan);

absl::StatusOr<DotPlan> PlanDotProblem(const DotProblem& problem);

// Plans a DotGeneral with these operand and result shapes (with layouts).
// The result's dimensions are batch, lhs free, rhs free, in that order.
absl::StatusOr<DotPlan> PlanDot(const Shape& lhs, const Shape& rhs, const Shape& result,
                                const DotDimensionNumbers& dnums);
// The same for a `dot` instruction (shapes from its operands and itself).
absl::StatusOr<DotPlan> PlanDot(const Instruction& dot);

// What the split may cut: bands of at least `min_band_rows` rows (columns),
// each of more than `min_band_products` multiply-adds (m * n * k); a gemv
// (memory-bound: one multiply-add per matrix element read) of at least
// `min_gemv_products` elements in all, in bands of output elements.
struct DotSplitLimits {
  int64_t min_band_rows = 16;
  int64_t min_band_products = 0;
  int64_t min_gemv_products = 0;
};
// The limits for dots (PlanDotThreads' default). Bands of at most 10^6
// multiply-adds would take OpenBLAS 0.3.21's small-matrix kernels
// (SMALL_MATRIX_OPT: m * n * k <= 100^3) where the whole call does not, and
// those sum in another order; bands start at multiples of 16 rows
// (columns), where the whole call's tiles start (a partial tile is summed in
// another order too). So every result element is the same sum, in the same
// order, as from the single-threaded call (checked bit for bit in
// tests/blas/dot_test.cc and jit_blas_test.cc, f32, f64, c64, bf16, f16).
// A gemv is cut where its matrix is at least 2 MB of f32 (2^19 elements):
// a 4096x256 sgemv took 53 us on one thread and 32-35 us in two bands
// (Zen 4, from L3), so a band of 1 MB is worth a fork-join of a few us;
// smaller ones stay whole (and SmallGemv, up to 2^18 elements, never sees
// a band of a call it would not take whole).
inline constexpr DotSplitLimits kDotSplitLimits{16, 1000000, int64_t{1} << 19};

// Plans how RunDot uses `threads` threads (sets split, bands, threads and
// blas_threads): a GEMM whose batch is too small to pay for a split (below)
// is cut into bands along the larger of M and N (each band repacks the other
// operand whole) when the limits allow, as many as
// the machine has cores (2 to 8) and NOT depending on `threads`, so that one
// thread makes the same OpenBLAS calls as several and gets the same bits
// (the pool runs batch index x band); a batch with more than
// limits.min_band_products multiply-adds in all is split over the batch,
// its calls whole (a gemv or dot form first into bands of outputs when the
// batch has fewer indices than threads, or they do not divide evenly and
// number fewer than 4 x threads); what cannot be split runs whole on one
// thread. OpenBLAS
// runs every call single-threaded (blas_threads = 1), large gemv included
// (see dot.cc). threads <= 1: GEMM bands only.
void PlanDotThreads(DotPlan& plan, int threads, const DotSplitLimits& limits = kDotSplitLimits);

// XJIT_DOT_BANDS=0 in the environment (read once): the JIT plans dots as
// before the split existed (OpenBLAS's own threads, blas_threads = threads),
// for measuring the split against it.
bool DotSplitDisabledByEnvironment();

// Runs the plan. `lhs`, `rhs` and `out` hold the operands and result in the
// planned layouts; `scratch` holds plan.scratch_bytes bytes (may be null
// when that is 0). Never allocates. Buffers need no particular alignment
// beyond the element type's natural one. The copies into and out of scratch
// images (bf16/f16 widening and narrowing included) are split over up to
// `threads` threads (the calling one and runtime::ThreadPool's workers)
// when large enough; the BLAS calls run as plan.split says, on plan.threads
// threads, each with the OpenBLAS thread count in force (the caller's
// ScopedBlasThreads(plan.blas_threads)).
void RunDot(const DotPlan& plan, const void* lhs, const void* rhs, void* out, void* scratch,
            int threads = 1);


}  // namespace xjit::runtime::blas

#endif  // XJIT_RUNTIME_BLAS_DOT_H_
