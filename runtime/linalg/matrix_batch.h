// Batches of matrices in plain layouts, as runtime/linalg's routines see
// their operands: every dimension but the two minor ones is a batch
// dimension; each batch element is a matrix with a row and a column stride
// (in elements) that the layout gives, so any plain minor_to_major works.
// Routines copy a matrix between such a place and a "work" matrix that
// LAPACK/BLAS can read (column-major, or row-major read as the transpose).
#ifndef XJIT_RUNTIME_LINALG_MATRIX_BATCH_H_
#define XJIT_RUNTIME_LINALG_MATRIX_BATCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/shape.h"

namespace xjit::runtime::linalg {

// One array's batch of matrices.
struct MatrixBatch {
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t row_stride = 0;  // Elements between (i, j) and (i + 1, j).
  int64_t col_stride = 0;  // Elements between (i, j) and (i, j + 1).
  // Element offset of each batch element's (0, 0), in row-major order of the
  // batch dimensions (the same order for every array of one instruction).
  std::vector<int64_t> offsets;

  // Contiguous with leading dimension `rows` (column-major) or `cols`
  // (row-major): the two forms BLAS can read in place.
  bool IsColumnMajor() const { return row_stride == 1 && (cols <= 1 || col_stride == rows); }
  bool IsRowMajor() const { return col_stride == 1 && (rows <= 1 || row_stride == cols); }
  std::string ToString() const;
};

// One array's batch of vectors (the minor dimension; every other one a
// batch dimension), as MatrixBatch for matrices.
struct VectorBatch {
  int64_t length = 0;
  int64_t stride = 0;            // Elements between (i) and (i + 1).
  std::vector<int64_t> offsets;  // Element (0) of each, row-major batch order.
  std::string ToString() const;
};

// The batch of `shape` (rank >= 2, a plain layout); Unimplemented for other
// layouts (tiles, padding, packed elements), with `what` naming the array.
absl::StatusOr<MatrixBatch> DescribeMatrixBatch(const Shape& shape, absl::string_view what);
// The same for vectors: rank >= 1.
absl::StatusOr<VectorBatch> DescribeVectorBatch(const Shape& shape, absl::string_view what);

// The element types runtime/linalg computes in: f32, f64, c64, c128.
bool IsLinalgType(ElementType type);

}  // namespace xjit::runtime::linalg

#endif  // XJIT_RUNTIME_LINALG_MATRIX_BATCH_H_
