// runtime/select_and_scatter: HLO `select-and-scatter` over raw buffers,
// with the plan made at compile time.
//
// Semantics (the evaluator's, interpreter/reduce_window.cc, and XLA's): the
// result starts as init_value everywhere; for each source element (row-major
// order) the window's in-bounds operand elements are visited in row-major
// window order, the first is selected, and each later one replaces the
// selection when select(selected, candidate) is false (padding and base
// dilation holes are never selected); then
// result[selected] = scatter(result[selected], source[o]).
//
// The plan lists, per dimension and window position, the in-bounds window
// offsets (operand and result element offsets), so the run does no bounds
// arithmetic: a source element's candidates are the row-major product of
// its dimensions' lists. Two forms of select and scatter:
//   - recognised: select = compare(a, b) GE/GT/LE/LT and scatter = add on
//     f32/f64/s32/s64/u32/u64 (max-pool and min-pool gradients): a
//     templated loop compares and adds in registers;
//   - any other: the computations compiled as scalar kernels
//     (jit/calls/select_and_scatter_call.h) called per comparison and per update,
//     on the same pairs in the same order as the evaluator, so results are
//     the same bits.
// Elements move as raw bytes of their width, so the general form takes any
// element type its kernels take. Operand, source and result may have any
// plain layouts.
#ifndef XJIT_RUNTIME_SELECT_AND_SCATTER_SELECT_AND_SCATTER_H_
#define XJIT_RUNTIME_SELECT_AND_SCATTER_SELECT_AND_SCATTER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/attributes.h"
#include "ir/shape.h"
#include "runtime/executable.h"

namespace xjit::runtime::select_and_scatter {

// The recognised select and scatter computations.
enum class FastSelect : uint8_t { kNone, kGe, kGt, kLe, kLt };
enum class FastScatter : uint8_t { kNone, kAddCurrentFirst, kAddUpdateFirst };

struct SelectAndScatterPlan {
  ElementType type = ElementType::kF32;
  int64_t element_bytes = 0;
  int64_t rank = 0;
  int64_t result_elements = 0;  // Physical elements of the result (filled with init).
  // The source positions: sizes and source strides per dimension.
  std::vector<int64_t> source_sizes;
  std::vector<int64_t> source_strides;
  // Per dimension d and source index o_d: candidates_[d][starts_[d][o_d] ..
  // starts_[d][o_d + 1]) are that dimension's in-bounds window offsets (in
  // window order), as (operand element offset, result element offset).
  std::vector<std::vector<int64_t>> starts;
  std::vector<std::vector<int64_t>> operand_offsets;
  std::vector<std::vector<int64_t>> result_offsets;
  // Upper bound on one source element's candidates (the window's size).
  int64_t max_candidates = 0;
  // Rows: with a recognised select and scatter and a minor-most dimension
  // the window passes through (size 1, stride 1, no padding or dilation:
  // the channels of a pool), that dimension is left out of the lists above
  // (rank counts the others) and each visit handles a whole row of
  // row_length elements at once, vectorised over it.
  bool rows = false;
  int64_t row_length = 1;
  int64_t row_operand_stride = 0, row_result_stride = 0, row_source_stride = 0;

  FastSelect fast_select = FastSelect::kNone;
  FastScatter fast_scatter = FastScatter::kNone;
  // General form: select(a, b) -> pred and scatter(current, update) ->
  // value as scalar kernels whose buffers are the two parameters, then
  // `*_constants` (data they read), then the result.
  KernelFunction select = nullptr;
  KernelFunction scatter = nullptr;
  std::vector<std::vector<uint8_t>> select_constants;
  std::vector<std::vector<uint8_t>> scatter_constants;
  // Scratch (bytes): the candidates of one source element (operand and
  // result offsets), and the scatter's output element.
  int64_t scratch_bytes = 0;

  std::string ToString() const;
};

// The plan for select-and-scatter of `operand` (window `window`) with
// `source`, into `result` (plain layouts; the dimensions the evaluator
// checks). `fast_select`/`fast_scatter` name recognised computations (then
// the kernels may be null); Unimplemented for what it does not handle.
absl::StatusOr<SelectAndScatterPlan> PlanSelectAndScatter(
    const Shape& operand, const Shape& source, const Shape& result, const Window& window,
    FastSelect fast_select, FastScatter fast_scatter, KernelFunction select,
    std::vector<std::vector<uint8_t>> select_constants, KernelFunction scatter,
    std::vector<std::vector<uint8_t>> scatter_constants);

// Runs: buffers = {operand, source, init_value, result}; scratch holds
// plan.scratch_bytes (aligned to 64).
void RunSelectAndScatter(const SelectAndScatterPlan& plan, void* const* buffers, void* scratch);
// As a runtime::LibraryFunction (`plan` is a SelectAndScatterPlan).
void RunSelectAndScatterCall(const void* plan, void* const* buffers, void* scratch);

}  // namespace xjit::runtime::select_and_scatter

#endif  // XJIT_RUNTIME_SELECT_AND_SCATTER_SELECT_AND_SCATTER_H_
