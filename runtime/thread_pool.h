// ThreadPool: runs the chunks of one parallel loop on a few worker threads
// and the calling thread.
//
// Idle workers BLOCK on a condition variable; nothing spins for long. (A
// spinning pool steals the cores OpenBLAS's own pthread workers need when
// both live in one process.) A worker that finishes a job, and a caller
// whose helpers are still busy, watch for 50 us before blocking: waking a
// blocked thread takes 25-45 us, which every parallel step would pay. One pool is shared by the
// whole process and grows to the largest number of helpers ever asked for; any number of threads
// may call ParallelFor at once: each call has its own chunk and completion counters, so calls only
// share the workers.
#ifndef XJIT_RUNTIME_THREAD_POOL_H_
#define XJIT_RUNTIME_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"

namespace xjit::runtime {

class ThreadPool {
 public:
  // The process-wide pool (created on first use and never destroyed, so that
  // code running in static destructors at exit can still use it).
  static ThreadPool& Shared();

  ThreadPool() = default;
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Calls fn(k) once for every k in [0, count), on the calling thread and up
  // to `helpers` pool workers, and returns when every call has returned.
  // Chunks are taken in no particular order. count <= 1 or helpers <= 0 runs
  // everything on the calling thread.
  void ParallelFor(int64_t count, int helpers, absl::FunctionRef<void(int64_t)> fn);

  // Whether some worker is watching for work right now (it finished a job
  // under 50 us ago and has not blocked yet): a ParallelFor now would find
  // it awake, without the 25-45 us wake-up of a blocked worker. A hint
  // only; the worker may block the moment after.
  bool HasWatchingWorker() const { return watching_.load(std::memory_order_relaxed) > 0; }

  // Workers started so far (for tests).
  int worker_count();

 private:
  struct Job;
  void EnsureWorkers(int n);  // With mutex_ held.
  void WorkerLoop();
  static void RunChunks(Job& job);

  std::mutex mutex_;
  std::condition_variable work_ready_;
  // One entry per helper a call asked for; an entry whose job is already
  // finished is harmless (its chunk counter is exhausted).
  std::deque<std::shared_ptr<Job>> queue_;
  std::atomic<int64_t> queued_{0};  // queue_.size(), for watching without the mutex
  std::atomic<int> watching_{0};    // workers in their watch after a job
  std::vector<std::thread> workers_;
  bool stopping_ = false;
};

}  // namespace xjit::runtime

#endif  // XJIT_RUNTIME_THREAD_POOL_H_
