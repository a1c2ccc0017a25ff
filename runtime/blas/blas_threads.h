// The number of threads OpenBLAS may use inside one BLAS call. xjit's own
// thread pool and OpenBLAS's workers share the cores: each executable runs
// its library calls with its own count (CompileOptions::threads) inside a
// ScopedBlasThreads, so that compiling or running one executable never
// changes the setting of another or of the host application.
#ifndef XJIT_RUNTIME_BLAS_BLAS_THREADS_H_
#define XJIT_RUNTIME_BLAS_BLAS_THREADS_H_

#include <cstdint>

namespace xjit::runtime::blas {

// Sets OpenBLAS's thread count for the whole process, clamped to
// [1, max(8, the number of hardware threads)] and to
// BlasThreadsTheAddressSpaceAllows().
void SetBlasThreads(int threads);

// The most threads that may call OpenBLAS under the process's address-space
// limit (RLIMIT_AS) now: half the room left, at 192 MiB a thread; a large
// number without a limit; 0 when not even one fits. Each thread maps a 128
// MiB buffer on its first call (and gets a 64 MiB malloc arena), and one
// whose buffer the limit refuses retries forever (OpenBLAS 0.3.21): a thread
// too many hangs the process, at its exit at the latest (exit joins the
// threads); with none, the first BLAS call hangs. Reads /proc/self/statm.
int BlasThreadsTheAddressSpaceAllows();
// The current OpenBLAS thread count.
int BlasThreads();

// The OpenBLAS thread count for one library call (a LAPACK routine) of
// about `multiply_adds` multiply-adds per matrix, in an executable compiled
// for `threads`: 1 below kBlasThreadedMinWork, `threads` from there.
// OpenBLAS forks small calls too, and its workers then spin in sched_yield
// for a while, taking the core the pool's next kernel needs: a
// least-squares solver's 4100x4 QR calls (65,600 multiply-adds each) put a
// quarter of its 2-thread profile in those workers' sched_yield.
// The bound was that of the dot split (10^6 multiply-adds); on the 2-vCPU
// development machine every LAPACK call measured there ran slower with 2
// OpenBLAS threads than with 1, in `xjit bench` alone (21:40 UTC, 2026-12-05,
// other engineers' builds running, 1 / 2 threads): potrf 256x256 0.15 /
// 0.27 ms, potrf 1024x1024 14.5-14.9 / 15.3-35.5 ms, getrf 512x512 6.0 /
// 24.0, getrf 1024x1024 25 / 48, geqrf 1024x512 22.6-23.0 / 36.3-36.9 (and
// lineax_lu_qr's whole run 13.4 / 17.9 ms on the quiet machine of session
// 15): OpenBLAS's parallel getrf and its threaded level-3 calls inside
// LAPACK synchronise often, in spin-waits that a descheduled thread
// stretches. So LAPACK keeps one thread up to 2^32 multiply-adds per
// matrix (a 2048x2048 getrf); above it, untested here, `threads`.
inline constexpr int64_t kBlasThreadedMinWork = int64_t{1} << 32;
int BlasThreadsForWork(int threads, int64_t multiply_adds);

// While it lives, OpenBLAS calls run with `threads` threads; the setting in
// force before is restored afterwards. OpenBLAS (0.3.21, Debian 12) has one
// process-wide setting and no per-call one, so overlapping scopes share it:
// a scope that wants another count than the one in force waits until the
// scopes using that one have ended; the setting from before the first of a
// run of overlapping scopes is restored when the last one ends. (A host
// thread calling OpenBLAS while a scope is active uses the scope's count.)
class ScopedBlasThreads {
 public:
  explicit ScopedBlasThreads(int threads);
  ~ScopedBlasThreads();
  ScopedBlasThreads(const ScopedBlasThreads&) = delete;
  ScopedBlasThreads& operator=(const ScopedBlasThreads&) = delete;
};

}  // namespace xjit::runtime::blas

#endif  // XJIT_RUNTIME_BLAS_BLAS_THREADS_H_
