// The split cost model: how many chunks a kernel step runs in when an
// executable has more than one thread, from an estimate of the step's time
// made when it is compiled.
//
// Why a cost and not a size. A split costs the calling thread a fork-join
// on the shared ThreadPool (a queue entry, a futex wake of a blocked worker
// — 25-45 us before the worker runs, on the 2-vCPU KVM machine — and a
// wait for the worker's last chunk), so it pays only where a chunk's work
// is well above that. The old rule (split every kernel writing 64 KiB) split
// a 64 KiB add of 5 us as readily as a 64 KiB exp of 30 us, and programs
// with many such kernels ran slower at 2 threads than at 1 (docs/zoo.md,
// "Session 16: a second thread that never costs").
//
// The estimate (EstimateKernelNanoseconds) is a memory term plus an
// arithmetic term: bytes the kernel reads and writes, and vector
// iterations times the operations per iteration (a vector math call counts
// as the operations it expands to). Its two constants were fitted on this
// machine (AMD Zen 4 under KVM) to single-thread times of elementwise add,
// multiply-add and exp kernels of 16 Ki to 1 Mi f32 elements: within a
// factor of 1.5 of the measured time.
//
// Chunks: a kernel runs in chunks of at least kSplitMinChunkNs estimated
// nanoseconds, at most kSplitChunksPerThread per thread, taken by whichever
// thread is free (ThreadPool::ParallelFor). More chunks than threads means
// that a worker that wakes late, or is descheduled on a loaded machine,
// leaves the rest of the work to the caller instead of making it wait a
// whole half: the worst a late worker can cost is one chunk. Chunking never
// changes a result: a kernel's outer iterations are independent and each
// computes the same bits on any thread.
//
// A row group (several kernels interleaved over chunks of rows) is costed
// as the sum of its members and split at its row chunks by the same rules
// (RowGroupSplitParts, runtime/executable_internal.h).
#ifndef XJIT_RUNTIME_SPLIT_COST_H_
#define XJIT_RUNTIME_SPLIT_COST_H_

#include <algorithm>
#include <cstdint>

namespace xjit::runtime {

// Bytes moved per nanosecond by a streaming kernel whose operands are in
// L2 or L3 (measured: a 64 Ki-element f32 add, 768 KiB, in 10.5 us).
inline constexpr double kSplitBytesPerNs = 80.0;
// Nanoseconds per vector operation of a kernel program (measured: exp over
// 64 Ki f32 elements, 8 lanes, about 30 operations per vector, in 30 us).
inline constexpr double kSplitNsPerVectorOp = 0.12;
// Operations a vector math call (exp, log, tanh, ...) stands for.
inline constexpr int64_t kSplitOpsPerMathCall = 24;

// The smallest estimated chunk worth giving another thread: a kernel
// estimated under twice this runs on the calling thread alone. Measured
// with zoo programs at 2 threads (docs/zoo.md, Session 16): below about 15
// us a chunk costs more than it saves even with the worker watching.
inline constexpr int64_t kSplitMinChunkNs = 20000;
inline constexpr int64_t kSplitChunksPerThread = 4;
// A worker still watching for work after its last job (ThreadPool::
// HasWatchingWorker) starts a chunk at once: a split then costs the queue
// entry and the join, a few microseconds, not the futex wake-up that most of
// kSplitMinChunkNs is there to pay for. Such a kernel splits in chunks of at
// least kSplitMinChunkNs / kSplitWarmDivisor (5 us at the default bound) of
// its arithmetic alone (a loop's slice of a large buffer, costed by the
// whole buffer's bytes, ran slower split: flax_lstm):
// in a loop whose dots run in bands on the pool, the elementwise kernels
// between the dots (10-40 us each) then split too, where they ran on the
// calling thread while the worker watched (docs/zoo.md, Session 17).
inline constexpr int64_t kSplitWarmDivisor = 4;

// Estimated nanoseconds of one single-threaded run of a kernel that
// touches `bytes` (inputs and outputs) and runs `vector_iterations`
// iterations (elements over vector lanes) of `ops_per_iteration`
// operations.
inline int64_t EstimateKernelNanoseconds(int64_t bytes, int64_t vector_iterations,
                                         int64_t ops_per_iteration) {
  const double ns = static_cast<double>(bytes) / kSplitBytesPerNs +
                    static_cast<double>(vector_iterations) *
                        static_cast<double>(ops_per_iteration) * kSplitNsPerVectorOp;
  return ns >= 9e18 ? int64_t{9000000000000000000} : static_cast<int64_t>(ns);
}

// The chunks a kernel of `cost_ns` estimated nanoseconds over `units`
// splittable units runs in at `threads` threads: 1 (no split: the calling
// thread runs it as one call) when threads or units are fewer than 2 or the
// cost is under two chunks of `min_chunk_ns`; else at least 2 and at most
// min(units, cost_ns / min_chunk_ns, kSplitChunksPerThread * threads).
// min_chunk_ns <= 0 drops the cost bound (tests of split kernels).
inline int64_t SplitChunks(int64_t cost_ns, int64_t units, int threads, int64_t min_chunk_ns) {
  if (threads <= 1 || units <= 1) return 1;
  const int64_t by_cost = min_chunk_ns > 0 ? cost_ns / min_chunk_ns : units;
  const int64_t chunks =
      std::min({units, by_cost, kSplitChunksPerThread * static_cast<int64_t>(threads)});
  return chunks >= 2 ? chunks : 1;
}

// The chunks of a kernel of `arithmetic_ns` estimated nanoseconds of
// vector operations (EstimateKernelNanoseconds of no bytes) when a worker is
// known to be awake: as SplitChunks of that time with a min_chunk_ns of
// min_chunk_ns / kSplitWarmDivisor (as
// SplitChunks itself where that quotient is 0: min_chunk_ns <= 0 already
// splits all it can).
inline int64_t WarmSplitChunks(int64_t cost_ns, int64_t units, int threads, int64_t min_chunk_ns) {
  const int64_t warm = min_chunk_ns / kSplitWarmDivisor;
  if (warm <= 0) return SplitChunks(cost_ns, units, threads, min_chunk_ns);
  return SplitChunks(cost_ns, units, threads, warm);
}

}  // namespace xjit::runtime

#endif  // XJIT_RUNTIME_SPLIT_COST_H_
