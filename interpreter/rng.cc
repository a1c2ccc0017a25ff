// Evaluation of rng-bit-generator and rng.
//
// rng-bit-generator reproduces XLA's expansion (RngBitGeneratorExpander and
// the bit generators of its prng library) bit for bit. The state is u64[]:
// state[0] is the key (k0 = its low 32 bits, k1 = its high 32 bits) and is
// returned unchanged; the rest is a counter.
//   ThreeFry-2x32 (20 rounds; state u64[2], counter c = state[1]):
//     64-bit outputs: element e (row-major position) = the two output words
//       (low, high) of ThreeFry(counter = c + e split into (low, high) words).
//       New counter: c + element count.
//     32-bit outputs: the shape is halved along its first even dimension (or
//       its largest one when none is even; a scalar counts as [1]); element
//       (.., j, ..) takes word j % 2 of the block for half-index (.., j / 2, ..),
//       whose counter is c + the row-major position of the half index. New
//       counter: c + element count of the half shape.
//     Narrower outputs: the 32-bit words' low bits.
//   Philox-4x32 (10 rounds): the counter is a u128, low word state[1], high
//     word state[2] (for a u64[2] state the high word is state[0], the key, and
//     only the low word is written back). Block j (counter + j with carry)
//     gives four 32-bit words, used in order: 32-bit outputs take element
//     4j + w from word w; 64-bit outputs take element 2j from words (0, 1) and
//     2j + 1 from words (2, 3) (low word first). New counter: counter + number
//     of blocks.
//   rng_default is Philox, the algorithm XLA's CPU compiler expands it to.
// Results are written as raw bits into the output's element type.
//
// rng (RngUniform / RngNormal) is not bit-compatible with XLA. It draws from
// SplitMix64 on *context.rng_state (a fixed seed of 0 when the context has no
// state), one 64-bit draw per uniform element and two per normal pair:
//   uniform floats: a + (b - a) * u, u = top 53 bits / 2^53 in [0, 1), redrawn
//     when rounding to the type lands on b;
//   uniform integers (and PRED): a + draw mod (b - a), or a when b <= a;
//   normal: mu + sigma * z, z from the Box-Muller transform of two uniforms.
#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/element_type.h"
#include "interpreter/ops.h"
#include "interpreter/ops_internal.h"
#include "interpreter/rng_draw.h"
#include "ir/status_macros.h"

namespace xjit::eval {

using internal::Index;

// The raw generators, exposed for known-answer tests.
namespace internal {

std::array<uint32_t, 2> ThreeFry2x32(std::array<uint32_t, 2> counter, std::array<uint32_t, 2> key) {
  static constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t ks[3] = {key[0], key[1], 0x1BD11BDAu ^ key[0] ^ key[1]};
  uint32_t x0 = counter[0] + ks[0];
  uint32_t x1 = counter[1] + ks[1];
  for (int group = 0; group < 5; ++group) {
    for (int r = 0; r < 4; ++r) {
      int rotation = kRotations[(group % 2) * 4 + r];
      x0 += x1;
      x1 = (x1 << rotation) | (x1 >> (32 - rotation));
      x1 ^= x0;
    }
    // Key injection number group + 1.
    const int s = group + 1;
    x0 += ks[s % 3];
    x1 += ks[(s + 1) % 3] + static_cast<uint32_t>(s);
  }
  return {x0, x1};
}

std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key) {
  uint32_t k0 = key[0], k1 = key[1];
  uint32_t x[4] = {counter[0], counter[1], counter[2], counter[3]};
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = static_cast<uint64_t>(x[0]) * 0xD2511F53u;
    uint64_t p1 = static_cast<uint64_t>(x[2]) * 0xCD9E8D57u;
    uint32_t y0 = static_cast<uint32_t>(p1 >> 32) ^ x[1] ^ k0;
    uint32_t y1 = static_cast<uint32_t>(p1);
    uint32_t y2 = static_cast<uint32_t>(p0 >> 32) ^ x[3] ^ k1;
    uint32_t y3 = static_cast<uint32_t>(p0);
    x[0] = y0;
    x[1] = y1;
    x[2] = y2;
    x[3] = y3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {x[0], x[1], x[2], x[3]};
}

}  // namespace internal

namespace {

uint32_t Low(uint64_t v) { return static_cast<uint32_t>(v); }
uint32_t High(uint64_t v) { return static_cast<uint32_t>(v >> 32); }
uint64_t Join(uint32_t low, uint32_t high) {
  return static_cast<uint64_t>(low) | (static_cast<uint64_t>(high) << 32);
}

uint64_t MaskBits(uint64_t bits, int width) {
  return width >= 64 ? bits : bits & ((uint64_t{1} << width) - 1);
}

// Writes the bits of ThreeFry output into `out` (row-major order); returns the
// new counter.
uint64_t ThreeFryFill(Literal& out, uint64_t key, uint64_t counter) {
  const std::array<uint32_t, 2> k = {Low(key), High(key)};
  const int width = BitWidth(out.shape().element_type());
  const std::vector<int64_t> dims(out.shape().dimensions().begin(), out.shape().dimensions().end());
  const int64_t count = internal::ElementCount(dims);
  if (width > 32) {
    for (int64_t e = 0; e < count; ++e) {
      uint64_t c = counter + static_cast<uint64_t>(e);
      auto r = internal::ThreeFry2x32({Low(c), High(c)}, k);
      out.SetBitsLinear(e, Join(r[0], r[1]));
    }
    return counter + static_cast<uint64_t>(count);
  }
  // Halve the shape along the split dimension.
  std::vector<int64_t> half = dims;
  int64_t split = 0;
  if (half.empty()) {
    half = {1};
  } else {
    split = -1;
    for (size_t d = 0; d < half.size(); ++d) {
      if (half[d] % 2 == 0) {
        split = static_cast<int64_t>(d);
        break;
      }
    }
    if (split < 0) {
      split = 0;
      for (size_t d = 1; d < half.size(); ++d) {
        if (half[d] > half[split]) split = static_cast<int64_t>(d);
      }
    }
    half[split] = (half[split] + 1) / 2;
  }
  const int64_t half_count = internal::ElementCount(half);
  if (count > 0) {
    Index index(dims.size(), 0);
    int64_t e = 0;
    do {
      int64_t position = 0;  // Row-major position of the half index.
      for (size_t d = 0; d < dims.size(); ++d) {
        int64_t i = static_cast<int64_t>(d) == split ? index[d] / 2 : index[d];
        position = position * half[d] + i;
      }
      int word = dims.empty() ? 0 : static_cast<int>(index[split] % 2);
      uint64_t c = counter + static_cast<uint64_t>(position);
      auto r = internal::ThreeFry2x32({Low(c), High(c)}, k);
      out.SetBitsLinear(e++, MaskBits(r[word], width));
    } while (internal::NextIndex(dims, index));
  }
  return counter + static_cast<uint64_t>(half_count);
}

// Philox: returns the new 128-bit counter (low, high).
std::array<uint64_t, 2> PhiloxFill(Literal& out, uint64_t key, uint64_t low, uint64_t high) {
  const std::array<uint32_t, 2> k = {Low(key), High(key)};
  const int width = BitWidth(out.shape().element_type());
  const int64_t count = out.element_count();
  const int64_t words_needed = width > 32 ? 2 * count : count;
  const int64_t blocks = (words_needed + 3) / 4;
  for (int64_t j = 0; j < blocks; ++j) {
    uint64_t lo = low + static_cast<uint64_t>(j);
    uint64_t hi = lo < low ? high + 1 : high;
    auto r = internal::Philox4x32({Low(lo), High(lo), Low(hi), High(hi)}, k);
    if (width > 32) {
      if (2 * j < count) out.SetBitsLinear(2 * j, Join(r[0], r[1]));
      if (2 * j + 1 < count) out.SetBitsLinear(2 * j + 1, Join(r[2], r[3]));
    } else {
      for (int w = 0; w < 4; ++w) {
        if (4 * j + w < count) out.SetBitsLinear(4 * j + w, MaskBits(r[w], width));
      }
    }
  }
  uint64_t new_low = low + static_cast<uint64_t>(blocks);
  uint64_t new_high = new_low < low ? high + 1 : high;
  return {new_low, new_high};
}

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double Uniform01(uint64_t& state) {
  return static_cast<double>(SplitMix64(state) >> 11) * 0x1.0p-53;
}

}  // namespace

absl::StatusOr<Literal> EvalRngBitGenerator(const Instruction& instruction, Operands operands,
                                            const Context& context) {
  if (operands.size() != 1) return internal::OperandError(instruction, "needs 1 operand");
  const Literal& state = *operands[0];
  const Shape& shape = instruction.shape();
  if (!shape.IsTuple() || shape.tuple_size() != 2 || !shape.tuple_shapes(1).IsArray()) {
    return internal::OperandError(instruction, "result must be a (state, bits) tuple");
  }
  if (!state.shape().IsArray() || state.shape().rank() != 1 ||
      BitWidth(state.shape().element_type()) != 64 || state.shape().dimensions(0) < 2) {
    return internal::OperandError(instruction, "state must be a 64-bit vector of size >= 2");
  }
  const ElementType type = shape.tuple_shapes(1).element_type();
  if (IsPred(type) || IsComplex(type)) {
    return absl::UnimplementedError(absl::StrCat("rng-bit-generator: element type ",
                                                 ElementTypeName(type), " is not supported"));
  }
  const int64_t state_size = state.shape().dimensions(0);
  std::vector<uint64_t> s(state_size);
  for (int64_t i = 0; i < state_size; ++i) s[i] = state.GetBits(Index{i});
  Literal bits(shape.tuple_shapes(1));
  RandomAlgorithm algorithm = instruction.attrs().rng_algorithm;
  if (algorithm == RandomAlgorithm::kDefault) algorithm = RandomAlgorithm::kPhilox;
  if (algorithm == RandomAlgorithm::kThreeFry) {
    s[1] = ThreeFryFill(bits, s[0], s[1]);
  } else {
    if (state_size >= 3) {
      auto next = PhiloxFill(bits, s[0], s[1], s[2]);
      s[1] = next[0];
      s[2] = next[1];
    } else {
      s[1] = PhiloxFill(bits, s[0], s[1], s[0])[0];
    }
  }
  Literal new_state(shape.tuple_shapes(0));
  if (new_state.shape().rank() != 1 || new_state.shape().dimensions(0) != state_size) {
    return internal::OperandError(instruction, "state result must have the state's shape");
  }
  for (int64_t i = 0; i < state_size; ++i) new_state.SetBits(Index{i}, s[i]);
  std::vector<Literal> elements;
  elements.push_back(std::move(new_state));
  elements.push_back(std::move(bits));
  return Literal::MakeTuple(std::move(elements));
}

absl::Status DrawRng(RandomDistribution distribution, const Literal& a_value,
                     const Literal& b_value, ElementType type, int64_t count, uint64_t& state,
                     absl::FunctionRef<void(int64_t, uint64_t)> write) {
  const Index p0(a_value.shape().rank(), 0);
  const Index p1(b_value.shape().rank(), 0);
  Literal scalar(Shape::Scalar(type));
  if (distribution == RandomDistribution::kNormal) {
    if (!IsFloat(type)) {
      return absl::InvalidArgumentError("rng normal needs a floating-point type");
    }
    const double mu = internal::ReadDouble(a_value, p0);
    const double sigma = internal::ReadDouble(b_value, p1);
    for (int64_t e = 0; e < count; e += 2) {
      double u1 = Uniform01(state);
      double u2 = Uniform01(state);
      double radius = std::sqrt(-2.0 * std::log(1.0 - u1));  // 1 - u1 is in (0, 1].
      double angle = 2.0 * std::numbers::pi * u2;
      for (int64_t k = 0; k < 2 && e + k < count; ++k) {
        double z = radius * (k == 0 ? std::cos(angle) : std::sin(angle));
        scalar.SetDouble({}, mu + sigma * z);
        write(e + k, scalar.GetBits({}));
      }
    }
    return absl::OkStatus();
  }
  if (IsFloat(type)) {
    const double a = internal::ReadDouble(a_value, p0);
    const double b = internal::ReadDouble(b_value, p1);
    for (int64_t e = 0; e < count; ++e) {
      double value = a;
      for (int attempt = 0; attempt < 64; ++attempt) {
        scalar.SetDouble({}, a + (b - a) * Uniform01(state));
        double rounded = scalar.GetDouble({});
        if (!(b > a) || rounded < b) {
          value = rounded;
          break;
        }
        value = a;
      }
      scalar.SetDouble({}, value);
      write(e, scalar.GetBits({}));
    }
    return absl::OkStatus();
  }
  if (IsComplex(type)) return absl::UnimplementedError("rng: complex types are not supported");
  // Integers and PRED: a + draw mod (b - a) in 64-bit wrap-around arithmetic.
  const uint64_t a = internal::ReadIntBits(a_value, p0);
  const uint64_t b = internal::ReadIntBits(b_value, p1);
  const bool is_unsigned = IsUnsignedInteger(type);
  const bool ordered = is_unsigned ? a < b : static_cast<int64_t>(a) < static_cast<int64_t>(b);
  const uint64_t range = b - a;
  for (int64_t e = 0; e < count; ++e) {
    uint64_t value = ordered ? a + SplitMix64(state) % range : a;
    internal::WriteIntBits(scalar, {}, value);
    write(e, scalar.GetBits({}));
  }
  return absl::OkStatus();
}

absl::StatusOr<Literal> EvalRng(const Instruction& instruction, Operands operands,
                                const Context& context) {
  if (operands.size() != 2) return internal::OperandError(instruction, "needs 2 operands");
  const Shape& shape = instruction.shape();
  if (!shape.IsArray() || operands[0]->element_count() != 1 || operands[1]->element_count() != 1) {
    return internal::OperandError(instruction, "parameters must be scalars, the result an array");
  }
  uint64_t local_state = 0;
  uint64_t& state = context.rng_state != nullptr ? *context.rng_state : local_state;
  Literal result(shape);
  absl::Status status =
      DrawRng(instruction.attrs().distribution, *operands[0], *operands[1], shape.element_type(),
              result.element_count(), state,
              [&](int64_t e, uint64_t bits) { result.SetBitsLinear(e, bits); });
  if (absl::IsInvalidArgument(status)) {
    return internal::OperandError(instruction, std::string(status.message()));
  }
  XJIT_RETURN_IF_ERROR(status);
  return result;
}

}  // namespace xjit::eval
