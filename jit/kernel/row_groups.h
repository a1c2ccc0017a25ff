// Row groups: row-wise fusion of kernels that a reduction separates.
//
// Softmax over the rows of x compiles to four kernels (the row maxima; x
// minus its row's maximum, exponentiated; the row sums; the quotient) and
// layer norm to five: a reduction whose result is broadcast back along the
// reduced dimension cannot fuse with its consumers into one loop nest, so
// each kernel streams whole arrays through memory and the temporaries of
// x's size travel to DRAM and back. But every one of these kernels has the
// rows as its outermost loop and iteration i of it touches only row i of each
// array it writes or reads back. Such kernels may run interleaved: all of
// them on a chunk of rows, then all of them on the next chunk. The chunk
// (about 128 KB of rows over all buffers) stays in cache between them, and a
// temporary that is made and consumed inside the group lives in a scratch
// area the size of one chunk (each thread its own), so it never reaches
// memory: x is read from memory once and the result written once.
//
// RowElements (at kernel emission) describes a kernel program's row
// structure; FormRowGroups (after all steps exist) turns each maximal run of
// consecutive compatible kernel steps into one runtime::Step::kRowGroup
// (runtime/executable.h). Every member computes exactly what it computed
// alone (the same code on the same rows), so results are unchanged bit for
// bit, with any chunking and any thread count.
//
// Rules (each guards a way the interleaving could change a result):
//   - members: consecutive kKernel steps with row_elements (RowElements
//     found the structure) and the same outer extent E >= 2;
//   - every byte range written by a member is accessed by all members as
//     rows (iteration i touches elements [i*n, (i+1)*n), the same n), so
//     running member B on rows [a, b) after member A on rows [a, b) sees
//     exactly A's rows [a, b), and later chunks touch other rows;
//   - ranges used in the group either coincide or are disjoint when one of
//     them is written (buffer reuse at another offset would shift rows);
//   - a group has at least two members, one range written by a member and
//     read by a later one (otherwise there is nothing to keep in cache), and
//     its members write at least 512 KB (smaller arrays stay in cache
//     between kernels anyway);
//   - a range is private (moved to scratch) when it is a temporary written in
//     the group and no step outside the group uses any range overlapping it.
#ifndef XJIT_JIT_ROW_GROUPS_H_
#define XJIT_JIT_ROW_GROUPS_H_

#include <cstdint>
#include <vector>

#include "jit/kernel/kernel_program.h"
#include "runtime/executable.h"

namespace xjit::jit {

// For each buffer of `program` (inputs then outputs): n when iteration i of
// the outermost loop reads and writes exactly within elements [i*n, (i+1)*n)
// of it (every access position affine in that loop index with step n, and
// n * extent the buffer's size), -1 otherwise. Empty for a program without
// loops or whose outermost loop has fewer than 2 iterations.
std::vector<int64_t> RowElements(const KernelProgram& program);

// Rewrites `spec->steps`: each run of kernel steps that the rules above allow
// becomes one kRowGroup step, with scratch for `spec->threads` threads added
// to the arena (spec->plan.temp_bytes). Returns the number of groups.
int FormRowGroups(runtime::ExecutableSpec* spec);

}  // namespace xjit::jit

#endif  // XJIT_JIT_ROW_GROUPS_H_
