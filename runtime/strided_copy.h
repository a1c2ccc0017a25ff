// Copying an array between two plain layouts (ir/layout_util.h: each
// logical dimension has a stride in elements): what library-call steps that
// work in one layout use to read or fill buffers of another (the rng steps
// generate in row-major order; custom calls get operands in the layouts
// their operand_layout_constraints name).
#ifndef XJIT_RUNTIME_STRIDED_COPY_H_
#define XJIT_RUNTIME_STRIDED_COPY_H_

#include <cstdint>
#include <cstring>
#include <vector>

namespace xjit::runtime {

// Every element (logical index over `dimensions`) from `from`, where it lies
// at `from_strides`, to `to`, at `to_strides`; elements of `bytes` bytes.
inline void CopyStrided(const std::vector<int64_t>& dimensions,
                        const std::vector<int64_t>& from_strides,
                        const std::vector<int64_t>& to_strides, int64_t bytes,
                        const uint8_t* from, uint8_t* to) {
  int64_t count = 1;
  for (int64_t d : dimensions) count *= d;
  const size_t rank = dimensions.size();
  std::vector<int64_t> index(rank, 0);
  int64_t source = 0, destination = 0;  // Offsets of `index`, in elements.
  for (int64_t e = 0; e < count; ++e) {
    std::memcpy(to + destination * bytes, from + source * bytes, static_cast<size_t>(bytes));
    for (size_t d = rank; d-- > 0;) {
      source += from_strides[d];
      destination += to_strides[d];
      if (++index[d] < dimensions[d]) break;
      source -= from_strides[d] * dimensions[d];
      destination -= to_strides[d] * dimensions[d];
      index[d] = 0;
    }
  }
}

// Row-major strides of `dimensions` (the last dimension has stride 1).
inline std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dimensions) {
  std::vector<int64_t> strides(dimensions.size(), 1);
  for (size_t d = dimensions.size(); d-- > 1;) strides[d - 1] = strides[d] * dimensions[d];
  return strides;
}

}  // namespace xjit::runtime

#endif  // XJIT_RUNTIME_STRIDED_COPY_H_
