// Whether this build runs under AddressSanitizer. Tests and fuzzers that
// limit the address space (RLIMIT_AS) skip or relax that part in such a
// build: the sanitizer reserves terabytes of shadow memory at start, so any
// limit a test could set refuses it.
#ifndef XJIT_RUNTIME_HOST_SANITIZERS_H_
#define XJIT_RUNTIME_HOST_SANITIZERS_H_

namespace xjit {

// GCC defines __SANITIZE_ADDRESS__; Clang answers __has_feature.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace xjit

#endif  // XJIT_RUNTIME_HOST_SANITIZERS_H_
