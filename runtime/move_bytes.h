// MoveBytes: memmove for the small sizes of loop state and branch operands.
//
// A bound loop (bound_steps.h) copies state leaves and conditional operands
// on every iteration, mostly scalars and a few floats; a call into libc's
// memmove per copy was 14-18% of a sampler's or a solver's run. Up to 128
// bytes are copied inline here, larger ranges by memmove. Every byte is
// loaded before any is stored, so overlapping ranges are moved correctly.
#ifndef XJIT_RUNTIME_MOVE_BYTES_H_
#define XJIT_RUNTIME_MOVE_BYTES_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace xjit::runtime {

inline void MoveBytes(uint8_t* destination, const uint8_t* source, size_t bytes) {
  // The first and the last word of the range, which overlap when the range
  // is shorter than two words.
  const auto move_words = [&](auto word) {
    decltype(word) head, tail;
    std::memcpy(&head, source, sizeof(head));
    std::memcpy(&tail, source + bytes - sizeof(tail), sizeof(tail));
    std::memcpy(destination, &head, sizeof(head));
    std::memcpy(destination + bytes - sizeof(tail), &tail, sizeof(tail));
  };
  if (bytes > 128) {
    std::memmove(destination, source, bytes);
  } else if (bytes > 16) {
    // Up to eight 16-byte pieces (the last one ending at the range's end,
    // overlapping its predecessor), all loaded before any is stored: state
    // arrays such as f32[32] (a sampler's position and momentum) move
    // without a call.
    struct Piece {
      uint64_t lo, hi;
    };
    Piece pieces[8];
    const size_t count = (bytes + 15) / 16;
    for (size_t k = 0; k < count; ++k) {
      std::memcpy(&pieces[k], source + std::min(16 * k, bytes - 16), 16);
    }
    for (size_t k = 0; k < count; ++k) {
      std::memcpy(destination + std::min(16 * k, bytes - 16), &pieces[k], 16);
    }
  } else if (bytes >= 8) {
    move_words(uint64_t{});
  } else if (bytes >= 4) {
    move_words(uint32_t{});
  } else if (bytes > 0) {
    const uint8_t first = source[0], middle = source[bytes / 2], last = source[bytes - 1];
    destination[0] = first;
    destination[bytes / 2] = middle;
    destination[bytes - 1] = last;
  }
}

}  // namespace xjit::runtime

#endif  // XJIT_RUNTIME_MOVE_BYTES_H_
