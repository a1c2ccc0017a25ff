// select-and-scatter over raw buffers (see select_and_scatter.h).
#include "runtime/select_and_scatter/select_and_scatter.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/layout_util.h"

namespace xjit::runtime::select_and_scatter {
namespace {

constexpr int64_t kMaxRank = 32;
constexpr int64_t kMaxCandidates = int64_t{1} << 20;

int64_t AlignUp(int64_t n) { return (n + 63) / 64 * 64; }

// Scratch layout, derived from the plan.
struct ScratchLayout {
  int64_t prefix_bytes;  // One candidate list per prefix depth.
  int64_t select_args, scatter_args, output;
  int64_t candidates, best, which, end;
};

ScratchLayout Layout(const SelectAndScatterPlan& plan) {
  ScratchLayout layout;
  const int64_t depths = std::max<int64_t>(plan.rank - 1, 1);
  layout.prefix_bytes = AlignUp(depths * plan.max_candidates * 2 * sizeof(int64_t));
  layout.select_args = layout.prefix_bytes;
  layout.scatter_args =
      layout.select_args +
      AlignUp((3 + static_cast<int64_t>(plan.select_constants.size())) * sizeof(void*));
  layout.output =
      layout.scatter_args +
      AlignUp((3 + static_cast<int64_t>(plan.scatter_constants.size())) * sizeof(void*));
  // Rows: the candidates' offsets, then per row element the best value (at
  // most 8 bytes) and the candidate it came from.
  layout.candidates = layout.output + 64;
  layout.best = layout.candidates + AlignUp(plan.max_candidates * 2 * sizeof(int64_t));
  layout.which = layout.best + AlignUp(plan.row_length * 8);
  layout.end = plan.rows ? layout.which + AlignUp(plan.row_length * sizeof(int64_t))
                         : layout.candidates;
  return layout;
}

// Visits each source element with its candidates: calls
// visit(source_offset, prefix, prefix_count, last_operand, last_result,
// last_count), where the candidates are the row-major product of the
// prefix list ((operand, result) offset pairs of dimensions 0..r-2) and the
// last dimension's offsets.
template <typename Visit>
void ForEachSource(const SelectAndScatterPlan& plan, int64_t* prefix_memory, Visit&& visit) {
  const int64_t r = plan.rank;
  for (int64_t d = 0; d < r; ++d) {
    if (plan.source_sizes[d] == 0) return;
  }
  static const int64_t kZero[2] = {0, 0};
  static const int64_t kZeroOffset = 0;
  if (r == 0) {
    visit(int64_t{0}, kZero, int64_t{1}, &kZeroOffset, &kZeroOffset, int64_t{1});
    return;
  }
  int64_t o[kMaxRank] = {};
  int64_t counts[kMaxRank] = {};
  const int64_t stride = plan.max_candidates * 2;
  // prefix(d): dimensions 0..d combined, d in [0, r-2]; prefix(-1) = {(0,0)}.
  auto prefix = [&](int64_t d) -> int64_t* { return prefix_memory + d * stride; };
  int64_t source_offset = 0;
  int64_t dirty = 0;
  while (true) {
    for (int64_t d = dirty; d <= r - 2; ++d) {
      const int64_t* from = d == 0 ? kZero : prefix(d - 1);
      const int64_t from_count = d == 0 ? 1 : counts[d - 1];
      const int64_t begin = plan.starts[d][o[d]], end = plan.starts[d][o[d] + 1];
      int64_t* to = prefix(d);
      int64_t n = 0;
      for (int64_t i = 0; i < from_count; ++i) {
        for (int64_t k = begin; k < end; ++k) {
          to[2 * n] = from[2 * i] + plan.operand_offsets[d][k];
          to[2 * n + 1] = from[2 * i + 1] + plan.result_offsets[d][k];
          ++n;
        }
      }
      counts[d] = n;
    }
    const int64_t last = r - 1;
    const int64_t begin = plan.starts[last][o[last]];
    visit(source_offset, r >= 2 ? prefix(r - 2) : kZero, r >= 2 ? counts[r - 2] : 1,
          plan.operand_offsets[last].data() + begin, plan.result_offsets[last].data() + begin,
          plan.starts[last][o[last] + 1] - begin);
    int64_t d = last;
    for (; d >= 0; --d) {
      source_offset += plan.source_strides[d];
      if (++o[d] < plan.source_sizes[d]) break;
      source_offset -= plan.source_strides[d] * plan.source_sizes[d];
      o[d] = 0;
    }
    if (d < 0) return;
    dirty = d;
  }
}

// a + b, wrapping for integers (as the evaluator's add does).
template <typename T>
T Add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

template <typename T, FastSelect kSelect>
bool Keep(T selected, T candidate) {
  if constexpr (kSelect == FastSelect::kGe) return selected >= candidate;
  if constexpr (kSelect == FastSelect::kGt) return selected > candidate;
  if constexpr (kSelect == FastSelect::kLe) return selected <= candidate;
  return selected < candidate;
}

template <typename T, FastSelect kSelect>
void RunFast(const SelectAndScatterPlan& plan, const T* operand, const T* source, T* result,
             int64_t* prefix_memory) {
  const bool update_first = plan.fast_scatter == FastScatter::kAddUpdateFirst;
  ForEachSource(plan, prefix_memory,
                [&](int64_t source_offset, const int64_t* prefix, int64_t prefix_count,
                    const int64_t* last_operand, const int64_t* last_result,
                    int64_t last_count) {
                  if (last_count == 0 || prefix_count == 0) return;
                  T best{};
                  int64_t best_result = -1;
                  if (last_count == 1) {  // A window of 1 along the minor dimension.
                    const T* base = operand + last_operand[0];
                    best = base[prefix[0]];
                    int64_t best_i = 0;
                    for (int64_t i = 1; i < prefix_count; ++i) {
                      const T value = base[prefix[2 * i]];
                      if (!Keep<T, kSelect>(best, value)) {
                        best = value;
                        best_i = i;
                      }
                    }
                    best_result = prefix[2 * best_i + 1] + last_result[0];
                    prefix_count = 0;  // Done: skips the general loop below.
                  }
                  for (int64_t i = 0; i < prefix_count; ++i) {
                    const T* row = operand + prefix[2 * i];
                    for (int64_t k = 0; k < last_count; ++k) {
                      const T value = row[last_operand[k]];
                      if (best_result < 0 || !Keep<T, kSelect>(best, value)) {
                        best = value;
                        best_result = prefix[2 * i + 1] + last_result[k];
                      }
                    }
                  }
                  const T update = source[source_offset];
                  T& current = result[best_result];
                  current = update_first ? Add(update, current) : Add(current, update);
                });
}

// Rows (see SelectAndScatterPlan::rows): the candidates of a whole row of
// source elements share their offsets but for the row position, so the
// select runs as a loop over the row for each candidate (vectorisable: the
// same comparisons in the same order per element), then the scatter.
template <typename T, FastSelect kSelect, int64_t kUnit>
void RunRowsStrided(const SelectAndScatterPlan& plan, const T* operand, const T* source,
                    T* result, uint8_t* scratch, const ScratchLayout& layout) {
  int64_t* candidates = reinterpret_cast<int64_t*>(scratch + layout.candidates);
  // The candidate index as an integer of T's width, so that the select
  // loop's lanes match (it vectorises).
  using Which = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  T* best = reinterpret_cast<T*>(scratch + layout.best);
  Which* which = reinterpret_cast<Which*>(scratch + layout.which);
  const int64_t length = plan.row_length;
  const int64_t os = kUnit == 1 ? 1 : plan.row_operand_stride;
  const int64_t rs = plan.row_result_stride, ss = plan.row_source_stride;
  const bool update_first = plan.fast_scatter == FastScatter::kAddUpdateFirst;
  ForEachSource(plan, reinterpret_cast<int64_t*>(scratch),
                [&](int64_t source_offset, const int64_t* prefix, int64_t prefix_count,
                    const int64_t* last_operand, const int64_t* last_result,
                    int64_t last_count) {
                  int64_t n = 0;
                  for (int64_t i = 0; i < prefix_count; ++i) {
                    for (int64_t k = 0; k < last_count; ++k) {
                      candidates[2 * n] = prefix[2 * i] + last_operand[k];
                      candidates[2 * n + 1] = prefix[2 * i + 1] + last_result[k];
                      ++n;
                    }
                  }
                  if (n == 0) return;
                  const T* first = operand + candidates[0];
                  for (int64_t c = 0; c < length; ++c) {
                    best[c] = first[c * os];
                    which[c] = 0;
                  }
                  for (int64_t j = 1; j < n; ++j) {
                    const T* row = operand + candidates[2 * j];
                    for (int64_t c = 0; c < length; ++c) {
                      const T value = row[c * os];
                      const bool take = !Keep<T, kSelect>(best[c], value);
                      best[c] = take ? value : best[c];
                      which[c] = take ? static_cast<Which>(j) : which[c];
                    }
                  }
                  const T* update = source + source_offset;
                  for (int64_t c = 0; c < length; ++c) {
                    T& current = result[candidates[2 * which[c] + 1] + c * rs];
                    const T u = update[c * ss];
                    current = update_first ? Add(u, current) : Add(current, u);
                  }
                });
}

template <typename T, FastSelect kSelect>
void RunRows(const SelectAndScatterPlan& plan, void* const* buffers, uint8_t* scratch) {
  const T* operand = static_cast<const T*>(buffers[0]);
  const T* source = static_cast<const T*>(buffers[1]);
  T* result = static_cast<T*>(buffers[3]);
  const ScratchLayout layout = Layout(plan);
  if (plan.row_operand_stride == 1) {
    RunRowsStrided<T, kSelect, 1>(plan, operand, source, result, scratch, layout);
  } else {
    RunRowsStrided<T, kSelect, 0>(plan, operand, source, result, scratch, layout);
  }
}

template <typename T>
void RunFastTyped(const SelectAndScatterPlan& plan, void* const* buffers, int64_t* prefix) {
  const T* operand = static_cast<const T*>(buffers[0]);
  const T* source = static_cast<const T*>(buffers[1]);
  T* result = static_cast<T*>(buffers[3]);
  if (plan.rows) {
    uint8_t* scratch = reinterpret_cast<uint8_t*>(prefix);
    switch (plan.fast_select) {
      case FastSelect::kGe: return RunRows<T, FastSelect::kGe>(plan, buffers, scratch);
      case FastSelect::kGt: return RunRows<T, FastSelect::kGt>(plan, buffers, scratch);
      case FastSelect::kLe: return RunRows<T, FastSelect::kLe>(plan, buffers, scratch);
      default: return RunRows<T, FastSelect::kLt>(plan, buffers, scratch);
    }
  }
  switch (plan.fast_select) {
    case FastSelect::kGe: return RunFast<T, FastSelect::kGe>(plan, operand, source, result, prefix);
    case FastSelect::kGt: return RunFast<T, FastSelect::kGt>(plan, operand, source, result, prefix);
    case FastSelect::kLe: return RunFast<T, FastSelect::kLe>(plan, operand, source, result, prefix);
    default: return RunFast<T, FastSelect::kLt>(plan, operand, source, result, prefix);
  }
}

void RunGeneral(const SelectAndScatterPlan& plan, void* const* buffers, uint8_t* scratch,
                const ScratchLayout& layout) {
  const uint8_t* operand = static_cast<const uint8_t*>(buffers[0]);
  const uint8_t* source = static_cast<const uint8_t*>(buffers[1]);
  uint8_t* result = static_cast<uint8_t*>(buffers[3]);
  const int64_t bytes = plan.element_bytes;
  void** select_args = reinterpret_cast<void**>(scratch + layout.select_args);
  void** scatter_args = reinterpret_cast<void**>(scratch + layout.scatter_args);
  uint8_t* output = scratch + layout.output;
  const size_t select_n = plan.select_constants.size();
  const size_t scatter_n = plan.scatter_constants.size();
  for (size_t k = 0; k < select_n; ++k) {
    select_args[2 + k] = const_cast<uint8_t*>(plan.select_constants[k].data());
  }
  select_args[2 + select_n] = output;
  for (size_t k = 0; k < scatter_n; ++k) {
    scatter_args[2 + k] = const_cast<uint8_t*>(plan.scatter_constants[k].data());
  }
  scatter_args[2 + scatter_n] = output;
  ForEachSource(plan, reinterpret_cast<int64_t*>(scratch),
                [&](int64_t source_offset, const int64_t* prefix, int64_t prefix_count,
                    const int64_t* last_operand, const int64_t* last_result,
                    int64_t last_count) {
                  if (last_count == 0 || prefix_count == 0) return;
                  const uint8_t* selected = nullptr;
                  int64_t selected_result = -1;
                  for (int64_t i = 0; i < prefix_count; ++i) {
                    for (int64_t k = 0; k < last_count; ++k) {
                      const uint8_t* candidate =
                          operand + (prefix[2 * i] + last_operand[k]) * bytes;
                      const int64_t candidate_result = prefix[2 * i + 1] + last_result[k];
                      if (selected != nullptr) {
                        select_args[0] = const_cast<uint8_t*>(selected);
                        select_args[1] = const_cast<uint8_t*>(candidate);
                        plan.select(select_args, 0, 1);
                        if (output[0] != 0) continue;
                      }
                      selected = candidate;
                      selected_result = candidate_result;
                    }
                  }
                  uint8_t* current = result + selected_result * bytes;
                  scatter_args[0] = current;
                  scatter_args[1] = const_cast<uint8_t*>(source + source_offset * bytes);
                  plan.scatter(scatter_args, 0, 1);
                  std::memcpy(current, output, bytes);
                });
}

// `count` copies of the `bytes`-wide element at `init`, from `out` on.
// (Doubling copies: memcpy's speed for any element width.)
void Fill(uint8_t* out, const uint8_t* init, int64_t bytes, int64_t count) {
  if (count == 0) return;
  std::memcpy(out, init, bytes);
  const int64_t total = bytes * count;
  for (int64_t done = bytes; done < total;) {
    const int64_t step = std::min(done, total - done);
    std::memcpy(out + done, out, step);
    done += step;
  }
}

}  // namespace

std::string SelectAndScatterPlan::ToString() const {
  static const char* kSelects[] = {"kernel", "GE", "GT", "LE", "LT"};
  static const char* kScatters[] = {"kernel", "add", "add"};
  return absl::StrCat("select=", kSelects[static_cast<int>(fast_select)],
                      " scatter=", kScatters[static_cast<int>(fast_scatter)],
                      " window_elements<=", max_candidates, rows ? " rows=" : "",
                      rows ? absl::StrCat(row_length) : "", " scratch=", scratch_bytes);
}

absl::StatusOr<SelectAndScatterPlan> PlanSelectAndScatter(
    const Shape& operand, const Shape& source, const Shape& result, const Window& window,
    FastSelect fast_select, FastScatter fast_scatter, KernelFunction select,
    std::vector<std::vector<uint8_t>> select_constants, KernelFunction scatter,
    std::vector<std::vector<uint8_t>> scatter_constants) {
  for (const Shape* shape : {&operand, &source, &result}) {
    if (!shape->IsArray() || !IsPlainLayout(*shape)) {
      return absl::UnimplementedError(
          absl::StrCat("select-and-scatter: ", shape->ToString(), " is not a plain array"));
    }
  }
  const int64_t rank = operand.rank();
  if (source.rank() != rank || !result.SameDimensions(operand) ||
      source.element_type() != operand.element_type() ||
      result.element_type() != operand.element_type() ||
      static_cast<int64_t>(window.size()) != rank) {
    return absl::InvalidArgumentError("select-and-scatter: shapes do not fit");
  }
  if (rank > kMaxRank) return absl::UnimplementedError("select-and-scatter: rank above 32");
  if ((fast_select == FastSelect::kNone && select == nullptr) ||
      (fast_scatter == FastScatter::kNone && scatter == nullptr) ||
      ((fast_select == FastSelect::kNone) != (fast_scatter == FastScatter::kNone))) {
    return absl::InvalidArgumentError("select-and-scatter: computations missing");
  }
  SelectAndScatterPlan plan;
  plan.type = operand.element_type();
  plan.element_bytes = ByteWidth(plan.type);
  plan.rank = rank;
  plan.result_elements = PhysicalElementCount(result);
  plan.fast_select = fast_select;
  plan.fast_scatter = fast_scatter;
  plan.select = select;
  plan.scatter = scatter;
  plan.select_constants = std::move(select_constants);
  plan.scatter_constants = std::move(scatter_constants);
  const std::vector<int64_t> operand_strides = PlainStrides(operand);
  const std::vector<int64_t> result_strides = PlainStrides(result);
  plan.source_strides = PlainStrides(source);
  plan.max_candidates = 1;
  // Rows: the minor-most dimension (of all three layouts alike it need not
  // be) passes through the window.
  int64_t listed_rank = rank;
  if (rank >= 1 && fast_select != FastSelect::kNone) {
    const WindowDimension& w = window[rank - 1];
    if (w.size == 1 && w.stride == 1 && w.padding_low == 0 && w.padding_high == 0 &&
        w.base_dilation == 1 && w.window_dilation == 1) {
      plan.rows = true;
      plan.row_length = operand.dimensions(rank - 1);
      plan.row_operand_stride = operand_strides[rank - 1];
      plan.row_result_stride = result_strides[rank - 1];
      plan.row_source_stride = plan.source_strides[rank - 1];
      if (source.dimensions(rank - 1) != plan.row_length) {
        return absl::InvalidArgumentError(
            "select-and-scatter: source shape does not match the window positions");
      }
      listed_rank = rank - 1;
      plan.rank = listed_rank;
      plan.source_strides.pop_back();
    }
  }
  for (int64_t d = 0; d < listed_rank; ++d) {
    const WindowDimension& w = window[d];
    if (w.size < 0 || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1) {
      return absl::InvalidArgumentError("select-and-scatter: invalid window");
    }
    const int64_t base = operand.dimensions(d);
    const int64_t dilated = base == 0 ? 0 : (base - 1) * w.base_dilation + 1;
    const int64_t padded = dilated + w.padding_low + w.padding_high;
    const int64_t dilated_window = w.size == 0 ? 0 : (w.size - 1) * w.window_dilation + 1;
    const int64_t positions =
        padded < dilated_window ? 0 : (padded - dilated_window) / w.stride + 1;
    if (source.dimensions(d) != positions) {
      return absl::InvalidArgumentError(
          "select-and-scatter: source shape does not match the window positions");
    }
    plan.source_sizes.push_back(positions);
    std::vector<int64_t> starts = {0}, operand_offsets, result_offsets;
    for (int64_t o = 0; o < positions; ++o) {
      for (int64_t k = 0; k < w.size; ++k) {
        const int64_t kk = w.window_reversal ? w.size - 1 - k : k;
        const int64_t p = o * w.stride + kk * w.window_dilation - w.padding_low;
        if (p < 0 || p >= dilated || p % w.base_dilation != 0) continue;
        operand_offsets.push_back(p / w.base_dilation * operand_strides[d]);
        result_offsets.push_back(p / w.base_dilation * result_strides[d]);
      }
      starts.push_back(static_cast<int64_t>(operand_offsets.size()));
    }
    plan.starts.push_back(std::move(starts));
    plan.operand_offsets.push_back(std::move(operand_offsets));
    plan.result_offsets.push_back(std::move(result_offsets));
    plan.max_candidates *= std::max<int64_t>(std::min(w.size, base), 1);
    if (plan.max_candidates > kMaxCandidates) {
      return absl::UnimplementedError("select-and-scatter: window of more than 2^20 elements");
    }
  }
  const ScratchLayout layout = Layout(plan);
  plan.scratch_bytes = layout.end;
  return plan;
}

void RunSelectAndScatter(const SelectAndScatterPlan& plan, void* const* buffers, void* scratch) {
  // The result starts as init_value everywhere.
  uint8_t* result = static_cast<uint8_t*>(buffers[3]);
  const uint8_t* init = static_cast<const uint8_t*>(buffers[2]);
  const int64_t bytes = plan.element_bytes;
  Fill(result, init, bytes, plan.result_elements);
  uint8_t* s = static_cast<uint8_t*>(scratch);
  if (plan.fast_select == FastSelect::kNone) {
    RunGeneral(plan, buffers, s, Layout(plan));
    return;
  }
  int64_t* prefix = reinterpret_cast<int64_t*>(s);
  switch (plan.type) {
    case ElementType::kF32: return RunFastTyped<float>(plan, buffers, prefix);
    case ElementType::kF64: return RunFastTyped<double>(plan, buffers, prefix);
    case ElementType::kS32: return RunFastTyped<int32_t>(plan, buffers, prefix);
    case ElementType::kS64: return RunFastTyped<int64_t>(plan, buffers, prefix);
    case ElementType::kU32: return RunFastTyped<uint32_t>(plan, buffers, prefix);
    case ElementType::kU64: return RunFastTyped<uint64_t>(plan, buffers, prefix);
    default: return;  // PlanSelectAndScatter's caller recognises only these.
  }
}

void RunSelectAndScatterCall(const void* plan, void* const* buffers, void* scratch) {
  RunSelectAndScatter(*static_cast<const SelectAndScatterPlan*>(plan), buffers, scratch);
}

}  // namespace xjit::runtime::select_and_scatter
