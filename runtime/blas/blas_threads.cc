// Thin wrapper over openblas_set_num_threads / openblas_get_num_threads, and
// the scoped setting (see blas_threads.h).
#include "runtime/blas/blas_threads.h"

#include <cblas.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <condition_variable>
#include <cstdint>
#include <fstream>
#include <mutex>
#include <thread>

namespace xjit::runtime::blas {
namespace {

struct Scopes {
  std::mutex mutex;
  std::condition_variable ended;
  int active = 0;    // Scopes alive.
  int current = 0;   // Their count (when active > 0).
  int restore = 0;   // The setting before the first of them.
};

// At most one thread per core (or 8 on smaller machines, so that tests of
// a few threads mean the same everywhere): more only add contention, and
// OpenBLAS allocates a large buffer per thread (31 threads' worth exhausted a
// 4 GB address space and hung inside OpenBLAS). The core count is read
// once: hardware_concurrency() opens and parses a sysfs file on every call,
// which cost ~5 us per dot inside solver loops.
int Clamped(int threads) {
  static const int most =
      std::max(1, std::min(std::max(static_cast<int>(std::thread::hardware_concurrency()), 8),
                           BlasThreadsTheAddressSpaceAllows()));
  return std::clamp(threads, 1, most);
}

Scopes& GlobalScopes() {
  static Scopes* scopes = new Scopes();
  return *scopes;
}

}  // namespace

int BlasThreadsTheAddressSpaceAllows() {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return INT_MAX;
  int64_t pages = 0;
  std::ifstream("/proc/self/statm") >> pages;
  const int64_t in_use = pages * sysconf(_SC_PAGESIZE);
  const int64_t room = static_cast<int64_t>(limit.rlim_cur) - in_use;
  constexpr int64_t kPerThread = int64_t{192} << 20;  // Buffer and arena.
  return static_cast<int>(std::clamp<int64_t>(room / 2 / kPerThread, 0, INT_MAX));
}

void SetBlasThreads(int threads) { openblas_set_num_threads(Clamped(threads)); }

int BlasThreads() { return openblas_get_num_threads(); }

int BlasThreadsForWork(int threads, int64_t multiply_adds) {
  return multiply_adds < kBlasThreadedMinWork ? 1 : std::max(threads, 1);
}

ScopedBlasThreads::ScopedBlasThreads(int threads) {
  threads = Clamped(threads);
  Scopes& scopes = GlobalScopes();
  std::unique_lock<std::mutex> lock(scopes.mutex);
  scopes.ended.wait(lock, [&] { return scopes.active == 0 || scopes.current == threads; });
  if (scopes.active == 0) {
    scopes.restore = openblas_get_num_threads();
    if (scopes.restore != threads) openblas_set_num_threads(threads);
    scopes.current = threads;
  }
  ++scopes.active;
}

ScopedBlasThreads::~ScopedBlasThreads() {
  Scopes& scopes = GlobalScopes();
  std::lock_guard<std::mutex> lock(scopes.mutex);
  if (--scopes.active == 0) {
    if (scopes.restore != scopes.current) openblas_set_num_threads(scopes.restore);
    scopes.ended.notify_all();
  }
}

}  // namespace xjit::runtime::blas
