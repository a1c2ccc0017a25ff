// Batches of matrices (see matrix_batch.h).
#include "runtime/linalg/matrix_batch.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/layout_util.h"

namespace xjit::runtime::linalg {

std::string MatrixBatch::ToString() const {
  return absl::StrCat(offsets.size(), "x[", rows, "x", cols, " strides ", row_stride, ",",
                      col_stride, "]");
}

namespace {

// Element offsets of the batch elements of `shape`, whose last `minor`
// dimensions are not batch dimensions, odometer style (row-major over the
// batch dimensions).
std::vector<int64_t> BatchOffsets(const Shape& shape, const std::vector<int64_t>& strides,
                                  int64_t minor) {
  const int64_t batch_rank = shape.rank() - minor;
  int64_t count = 1;
  for (int64_t d = 0; d < batch_rank; ++d) count *= shape.dimensions(d);
  std::vector<int64_t> offsets;
  offsets.reserve(count);
  std::vector<int64_t> index(batch_rank, 0);
  for (int64_t k = 0; k < count; ++k) {
    int64_t offset = 0;
    for (int64_t d = 0; d < batch_rank; ++d) offset += index[d] * strides[d];
    offsets.push_back(offset);
    for (int64_t d = batch_rank - 1; d >= 0; --d) {
      if (++index[d] < shape.dimensions(d)) break;
      index[d] = 0;
    }
  }
  return offsets;
}

}  // namespace

std::string VectorBatch::ToString() const {
  return absl::StrCat(offsets.size(), "x[", length, " stride ", stride, "]");
}

absl::StatusOr<MatrixBatch> DescribeMatrixBatch(const Shape& shape, absl::string_view what) {
  if (!shape.IsArray() || shape.rank() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be an array of rank >= 2"));
  }
  if (!IsPlainLayout(shape)) {
    return absl::UnimplementedError(
        absl::StrCat(what, ": tiled, padded or packed layouts are not supported"));
  }
  const std::vector<int64_t> strides = PlainStrides(shape);
  const int64_t rank = shape.rank();
  MatrixBatch batch;
  batch.rows = shape.dimensions(rank - 2);
  batch.cols = shape.dimensions(rank - 1);
  batch.row_stride = strides[rank - 2];
  batch.col_stride = strides[rank - 1];
  batch.offsets = BatchOffsets(shape, strides, 2);
  return batch;
}

absl::StatusOr<VectorBatch> DescribeVectorBatch(const Shape& shape, absl::string_view what) {
  if (!shape.IsArray() || shape.rank() < 1) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be an array of rank >= 1"));
  }
  if (!IsPlainLayout(shape)) {
    return absl::UnimplementedError(
        absl::StrCat(what, ": tiled, padded or packed layouts are not supported"));
  }
  const std::vector<int64_t> strides = PlainStrides(shape);
  VectorBatch batch;
  batch.length = shape.dimensions(shape.rank() - 1);
  batch.stride = strides[shape.rank() - 1];
  batch.offsets = BatchOffsets(shape, strides, 1);
  return batch;
}

bool IsLinalgType(ElementType type) {
  return type == ElementType::kF32 || type == ElementType::kF64 || type == ElementType::kC64 ||
         type == ElementType::kC128;
}

}  // namespace xjit::runtime::linalg
