// ThreadPool (see thread_pool.h).
#include "runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace xjit::runtime {

// A worker holds its entry's shared_ptr, so a Job outlives every worker that
// still looks at it; `fn` (the caller's) is only called for chunks claimed
// before the caller returns, which it waits for.
struct ThreadPool::Job {
  explicit Job(int64_t n, absl::FunctionRef<void(int64_t)> f) : count(n), fn(f) {}
  const int64_t count;
  absl::FunctionRef<void(int64_t)> fn;
  std::atomic<int64_t> next{0};
  std::mutex mutex;
  std::condition_variable all_done;
  // Written under mutex (for all_done's waiters); read without it by a
  // caller that watches for the end before it blocks.
  std::atomic<int64_t> done{0};
};

namespace {

// A thread that runs out of work watches for more this long before it
// blocks: a blocked thread takes 25-45 us to wake (measured on the 2-vCPU
// KVM machine), paid at every parallel step of a program (kernels and
// convolutions come back to back), where a watching one starts at once.
// Short, so that an idle pool still gives its core away almost at once (to
// OpenBLAS's workers, say).
constexpr std::chrono::microseconds kWatch{50};

void Relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

// Calls ready() until it is true or kWatch has passed; returns its result.
template <typename Ready>
bool WatchFor(Ready ready) {
  const auto deadline = std::chrono::steady_clock::now() + kWatch;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
      Relax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return ready();
  }
}

}  // namespace

// Bounds the pool whatever a caller asks for.
constexpr int kMaxWorkers = 256;

ThreadPool& ThreadPool::Shared() {
  // Leaked on purpose: an executable run from another static destructor at
  // exit still finds it; its idle workers just stay blocked.
  static ThreadPool* const pool = new ThreadPool();
  return *pool;
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

int ThreadPool::worker_count() {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(workers_.size());
}

void ThreadPool::EnsureWorkers(int n) {
  n = std::min(n, kMaxWorkers);
  while (static_cast<int>(workers_.size()) < n) {
    workers_.emplace_back([this] { WorkerLoop(); });
  }
}

void ThreadPool::RunChunks(Job& job) {
  int64_t finished = 0;
  for (;;) {
    const int64_t k = job.next.fetch_add(1, std::memory_order_relaxed);
    if (k >= job.count) break;
    job.fn(k);
    ++finished;
  }
  if (finished == 0) return;
  std::lock_guard<std::mutex> lock(job.mutex);
  if (job.done.fetch_add(finished, std::memory_order_release) + finished == job.count) {
    job.all_done.notify_all();
  }
}

void ThreadPool::WorkerLoop() {
  bool just_worked = false;
  for (;;) {
    // After a job, watch briefly for the next one before blocking.
    if (just_worked) {
      watching_.fetch_add(1, std::memory_order_relaxed);
      WatchFor([this] { return queued_.load(std::memory_order_relaxed) > 0; });
      watching_.fetch_sub(1, std::memory_order_relaxed);
    }
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
      queued_.store(static_cast<int64_t>(queue_.size()), std::memory_order_relaxed);
    }
    RunChunks(*job);
    just_worked = true;
  }
}

void ThreadPool::ParallelFor(int64_t count, int helpers, absl::FunctionRef<void(int64_t)> fn) {
  if (count <= 0) return;
  const int64_t wanted = std::min<int64_t>(std::min(helpers, kMaxWorkers), count - 1);
  if (wanted <= 0) {
    for (int64_t k = 0; k < count; ++k) fn(k);
    return;
  }
  auto job = std::make_shared<Job>(count, fn);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    EnsureWorkers(static_cast<int>(wanted));
    for (int64_t h = 0; h < wanted; ++h) queue_.push_back(job);
    queued_.store(static_cast<int64_t>(queue_.size()), std::memory_order_relaxed);
  }
  if (wanted == 1) {
    work_ready_.notify_one();
  } else {
    work_ready_.notify_all();
  }
  RunChunks(*job);
  {
    // Entries no worker has taken yet would only wake one for nothing.
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.erase(std::remove(queue_.begin(), queue_.end(), job), queue_.end());
    queued_.store(static_cast<int64_t>(queue_.size()), std::memory_order_relaxed);
  }
  // The helpers' last chunks usually end within microseconds of ours.
  auto finished = [&] { return job->done.load(std::memory_order_acquire) == job->count; };
  if (WatchFor(finished)) return;
  std::unique_lock<std::mutex> lock(job->mutex);
  job->all_done.wait(lock, finished);
}

}  // namespace xjit::runtime
