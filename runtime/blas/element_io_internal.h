// Reading and writing single elements of any array element type for the
// plain loops (dot and convolution of types BLAS does not take). Values are
// read exactly into an accumulator domain and written with one rounding (or
// wrap-around for integers). Private to runtime/blas.
#ifndef XJIT_RUNTIME_BLAS_ELEMENT_IO_INTERNAL_H_
#define XJIT_RUNTIME_BLAS_ELEMENT_IO_INTERNAL_H_

#include <complex>
#include <cstdint>
#include <cstring>

#include "ir/element_type.h"
#include "ir/float_format.h"

namespace xjit::runtime::blas::internal {

// The raw bits of one unpacked element (ByteWidth bytes, little-endian),
// masked to the type's width.
inline uint64_t LoadBits(ElementType type, const uint8_t* p) {
  const int64_t bytes = ByteWidth(type);
  uint64_t v = 0;
  std::memcpy(&v, p, bytes > 8 ? 8 : bytes);
  const int bits = BitWidth(type);
  if (bits < 64 && !IsPred(type)) v &= (uint64_t{1} << bits) - 1;
  return v;
}

inline void StoreBits(ElementType type, uint8_t* p, uint64_t v) {
  const int64_t bytes = ByteWidth(type);
  const int bits = BitWidth(type);
  if (bits < 64) v &= (uint64_t{1} << bits) - 1;
  std::memcpy(p, &v, bytes > 8 ? 8 : bytes);
}

// An integer or PRED element, sign- or zero-extended to 64 bits.
inline uint64_t LoadInt(ElementType type, const uint8_t* p) {
  uint64_t v = LoadBits(type, p);
  if (IsPred(type)) return v != 0 ? 1 : 0;
  const int bits = BitWidth(type);
  if (IsSignedInteger(type) && bits < 64 && (v >> (bits - 1)) & 1) v |= ~uint64_t{0} << bits;
  return v;
}

// Integer results wrap to the type's width; PRED is "any product was true".
inline void StoreInt(ElementType type, uint8_t* p, uint64_t v) {
  if (IsPred(type)) v = v != 0 ? 1 : 0;
  StoreBits(type, p, v);
}

// A real element as double (integers converted exactly where they fit).
inline double LoadReal(ElementType type, const uint8_t* p) {
  switch (type) {
    case ElementType::kF32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case ElementType::kF64: {
      double d;
      std::memcpy(&d, p, 8);
      return d;
    }
    default:
      break;
  }
  if (IsFloat(type)) return FloatBitsToDouble(type, LoadBits(type, p));
  if (IsUnsignedInteger(type) || IsPred(type)) return static_cast<double>(LoadInt(type, p));
  return static_cast<double>(static_cast<int64_t>(LoadInt(type, p)));
}

// Rounds once to the float type.
inline void StoreReal(ElementType type, uint8_t* p, double v) {
  switch (type) {
    case ElementType::kF32: {
      float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      return;
    }
    case ElementType::kF64:
      std::memcpy(p, &v, 8);
      return;
    default:
      StoreBits(type, p, DoubleToFloatBits(type, v));
  }
}

inline std::complex<double> LoadComplex(ElementType type, const uint8_t* p) {
  if (type == ElementType::kC64) {
    float f[2];
    std::memcpy(f, p, 8);
    return {f[0], f[1]};
  }
  if (type == ElementType::kC128) {
    double d[2];
    std::memcpy(d, p, 16);
    return {d[0], d[1]};
  }
  return {LoadReal(type, p), 0.0};
}

inline void StoreComplex(ElementType type, uint8_t* p, std::complex<double> v) {
  if (type == ElementType::kC64) {
    float f[2] = {static_cast<float>(v.real()), static_cast<float>(v.imag())};
    std::memcpy(p, f, 8);
  } else {
    double d[2] = {v.real(), v.imag()};
    std::memcpy(p, d, 16);
  }
}

}  // namespace xjit::runtime::blas::internal

#endif  // XJIT_RUNTIME_BLAS_ELEMENT_IO_INTERNAL_H_
