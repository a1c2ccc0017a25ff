// rng-bit-generator as a library call (see bit_generator.h).
#include "runtime/rng/bit_generator.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/layout_util.h"
#include "runtime/rng/bit_kernels.h"
#include "runtime/strided_copy.h"
#include "runtime/thread_pool.h"

namespace xjit::runtime::rng {
namespace {

// Outputs smaller than this run on the calling thread.
constexpr int64_t kParallelMinBytes = int64_t{256} << 10;

int KernelIndex(int word_bytes) { return word_bytes == 1 ? 0 : word_bytes == 2 ? 1 : 2; }

// The generation split into units, each a run of consecutive counters that
// one kernel call covers: unit u of `units` writes its part of `out`.
struct Work {
  int64_t units = 0;
  int64_t unit_bytes = 1;  // About, for the thread split.
};

// Flat word streams (Philox, ThreeFry of 64-bit elements or of outputs
// whose split dimension is even and minor-most) go in chunks of this many
// words (a multiple of both generators' words per block).
constexpr int64_t kChunkWords = 8192;

bool FlatThreeFry(const BitGeneratorPlan& plan) {
  return plan.word_bytes == 8 || (plan.inner == 1 && plan.split % 2 == 0) || plan.outer == 0;
}

int64_t Words(const BitGeneratorPlan& plan) {
  return plan.word_bytes == 8 ? 2 * plan.count : plan.count;
}

Work WorkOf(const BitGeneratorPlan& plan) {
  Work work;
  if (!plan.three_fry || FlatThreeFry(plan)) {
    work.units = (Words(plan) + kChunkWords - 1) / kChunkWords;
    work.unit_bytes = kChunkWords * std::min(plan.word_bytes, 4);
  } else if (plan.inner == 1) {
    work.units = plan.outer;  // One row of `split` words each.
    work.unit_bytes = plan.split * plan.word_bytes;
  } else {
    work.units = plan.outer * plan.half;  // Rows 2jh and 2jh + 1 of one o.
    work.unit_bytes = 2 * plan.inner * plan.word_bytes;
  }
  return work;
}

void RunUnit(const BitGeneratorPlan& plan, const BitKernels& kernels, uint32_t k0, uint32_t k1,
             uint64_t low, uint64_t high, uint8_t* out, int64_t unit) {
  const int index = KernelIndex(plan.word_bytes);
  const int64_t word = std::min(plan.word_bytes, 4);  // Bytes per kernel word.
  if (!plan.three_fry || FlatThreeFry(plan)) {
    const int64_t first = unit * kChunkWords;
    const int64_t words = std::min(kChunkWords, Words(plan) - first);
    if (plan.three_fry) {
      kernels.threefry_interleaved[index](k0, k1, low + static_cast<uint64_t>(first / 2), words,
                                          out + first * word);
    } else {
      const uint64_t lo = low + static_cast<uint64_t>(first / 4);
      const uint64_t hi = lo < low ? high + 1 : high;
      kernels.philox[index](k0, k1, lo, hi, words, out + first * word);
    }
    return;
  }
  if (plan.inner == 1) {
    const int64_t o = unit;
    kernels.threefry_interleaved[index](k0, k1, low + static_cast<uint64_t>(o * plan.half),
                                        plan.split, out + o * plan.split * word);
    return;
  }
  const int64_t o = unit / plan.half, jh = unit % plan.half;
  const uint64_t counter = low + static_cast<uint64_t>((o * plan.half + jh) * plan.inner);
  uint8_t* row = out + (o * plan.split + 2 * jh) * plan.inner * word;
  uint8_t* next = 2 * jh + 1 < plan.split ? row + plan.inner * word : nullptr;
  kernels.threefry_split[index](k0, k1, counter, plan.inner, row, next);
}

}  // namespace

std::string BitGeneratorPlan::ToString() const {
  std::string text = absl::StrCat(three_fry ? "threefry" : "philox", " ", count, " elements of ",
                                  8 * word_bytes, " bits, ", blocks, " blocks");
  if (three_fry && word_bytes < 8) {
    absl::StrAppend(&text, ", split [", outer, ", ", split, ", ", inner, "]");
  }
  if (!strides.empty()) absl::StrAppend(&text, ", relaid to strides ", absl::StrJoin(strides, ","));
  absl::StrAppend(&text, ", ", threads, threads == 1 ? " thread" : " threads");
  return text;
}

absl::StatusOr<BitGeneratorPlan> PlanBitGenerator(const Instruction& instruction, int threads) {
  const Shape& shape = instruction.shape();
  if (instruction.operand_count() != 1 || !shape.IsTuple() || shape.tuple_size() != 2 ||
      !shape.tuple_shapes(0).IsArray() || !shape.tuple_shapes(1).IsArray()) {
    return absl::InvalidArgumentError("rng-bit-generator: needs one state and a (state, bits) result");
  }
  const Shape& state = instruction.operand(0)->shape();
  const Shape& new_state = shape.tuple_shapes(0);
  const Shape& bits = shape.tuple_shapes(1);
  if (!state.IsArray() || state.rank() != 1 || BitWidth(state.element_type()) != 64 ||
      state.dimensions(0) < 2 || new_state.rank() != 1 ||
      new_state.dimensions(0) != state.dimensions(0) ||
      BitWidth(new_state.element_type()) != 64) {
    return absl::InvalidArgumentError(
        "rng-bit-generator: the state must be a 64-bit vector of size >= 2, returned as such");
  }
  if (!IsPlainLayout(state) || !IsPlainLayout(new_state) || !IsPlainLayout(bits)) {
    return absl::UnimplementedError("rng-bit-generator: tiled, padded or packed layouts");
  }
  const ElementType type = bits.element_type();
  const int width = BitWidth(type);
  if (IsPred(type) || IsComplex(type) ||
      (width != 8 && width != 16 && width != 32 && width != 64)) {
    return absl::UnimplementedError(absl::StrCat("rng-bit-generator: element type ",
                                                 ElementTypeName(type)));
  }
  BitGeneratorPlan plan;
  plan.three_fry = instruction.attrs().rng_algorithm == RandomAlgorithm::kThreeFry;
  plan.state_size = state.dimensions(0);
  plan.word_bytes = width / 8;
  plan.count = bits.element_count();
  const std::vector<int64_t> dims(bits.dimensions().begin(), bits.dimensions().end());
  if (plan.three_fry && width <= 32 && !dims.empty()) {
    // The split dimension: the first even one, else the largest.
    int64_t split = -1;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] % 2 == 0) {
        split = static_cast<int64_t>(d);
        break;
      }
    }
    if (split < 0) {
      split = 0;
      for (size_t d = 1; d < dims.size(); ++d) {
        if (dims[d] > dims[split]) split = static_cast<int64_t>(d);
      }
    }
    for (int64_t d = 0; d < split; ++d) plan.outer *= dims[d];
    for (size_t d = split + 1; d < dims.size(); ++d) plan.inner *= dims[d];
    plan.split = dims[split];
    plan.half = (plan.split + 1) / 2;
    plan.blocks = plan.outer * plan.half * plan.inner;
  } else if (plan.three_fry && width <= 32) {
    plan.split = 1;  // A scalar: one block, its word 0.
    plan.blocks = 1;
  } else if (plan.three_fry) {
    plan.blocks = plan.count;
  } else {
    plan.blocks = ((width > 32 ? 2 * plan.count : plan.count) + 3) / 4;
  }
  if (!IsDefaultLayout(bits)) {
    plan.dimensions = dims;
    plan.strides = PlainStrides(bits);
    plan.scratch_bytes = plan.count * plan.word_bytes;
  }
  const int64_t bytes = plan.count * plan.word_bytes;
  plan.threads = bytes >= kParallelMinBytes ? std::max(threads, 1) : 1;
  return plan;
}

void RunBitGeneratorCall(const void* plan_pointer, void* const* buffers, void* scratch) {
  const BitGeneratorPlan& plan = *static_cast<const BitGeneratorPlan*>(plan_pointer);
  const uint64_t* state = static_cast<const uint64_t*>(buffers[0]);
  uint64_t* new_state = static_cast<uint64_t*>(buffers[1]);
  const uint64_t key = state[0];
  const uint64_t low = state[1];
  // A two-word Philox state uses the key as the counter's high word and
  // writes back only the low one.
  const uint64_t high = plan.state_size >= 3 ? state[2] : state[0];
  if (new_state != state) {
    std::memmove(new_state, state, static_cast<size_t>(plan.state_size) * sizeof(uint64_t));
  }
  const uint64_t new_low = low + static_cast<uint64_t>(plan.blocks);
  new_state[1] = new_low;
  if (!plan.three_fry && plan.state_size >= 3 && new_low < low) new_state[2] = high + 1;

  uint8_t* out = plan.strides.empty() ? static_cast<uint8_t*>(buffers[2])
                                      : static_cast<uint8_t*>(scratch);
  const uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  const BitKernels& kernels = HostBitKernels();
  const Work work = WorkOf(plan);
  if (plan.threads <= 1 || work.units <= 1) {
    for (int64_t u = 0; u < work.units; ++u) RunUnit(plan, kernels, k0, k1, low, high, out, u);
  } else {
    // Tasks of at least ~64 KiB, a few per thread.
    const int64_t per_task =
        std::max<int64_t>({int64_t{1}, work.units / (4 * plan.threads),
                           (int64_t{64} << 10) / std::max<int64_t>(work.unit_bytes, 1)});
    const int64_t tasks = (work.units + per_task - 1) / per_task;
    ThreadPool::Shared().ParallelFor(tasks, plan.threads - 1, [&](int64_t task) {
      const int64_t end = std::min(work.units, (task + 1) * per_task);
      for (int64_t u = task * per_task; u < end; ++u) {
        RunUnit(plan, kernels, k0, k1, low, high, out, u);
      }
    });
  }
  if (!plan.strides.empty()) {
    CopyStrided(plan.dimensions, RowMajorStrides(plan.dimensions), plan.strides, plan.word_bytes,
                out, static_cast<uint8_t*>(buffers[2]));
  }
}

}  // namespace xjit::runtime::rng
