#include "ir/attributes.h"

namespace xjit {

std::string ComparisonDirectionName(ComparisonDirection direction) {
  switch (direction) {
    case ComparisonDirection::kEq: return "EQ";
    case ComparisonDirection::kNe: return "NE";
    case ComparisonDirection::kGe: return "GE";
    case ComparisonDirection::kGt: return "GT";
    case ComparisonDirection::kLe: return "LE";
    case ComparisonDirection::kLt: return "LT";
  }
  return "EQ";
}

std::string ComparisonTypeName(ComparisonType type) {
  switch (type) {
    case ComparisonType::kDefault: return "";
    case ComparisonType::kFloat: return "FLOAT";
    case ComparisonType::kTotalOrder: return "TOTALORDER";
    case ComparisonType::kSigned: return "SIGNED";
    case ComparisonType::kUnsigned: return "UNSIGNED";
  }
  return "";
}

std::string FftTypeName(FftType type) {
  switch (type) {
    case FftType::kFft: return "FFT";
    case FftType::kIfft: return "IFFT";
    case FftType::kRfft: return "RFFT";
    case FftType::kIrfft: return "IRFFT";
  }
  return "FFT";
}

std::string TriangularSolveTransposeName(TriangularSolveTranspose transpose) {
  switch (transpose) {
    case TriangularSolveTranspose::kNoTranspose: return "NO_TRANSPOSE";
    case TriangularSolveTranspose::kTranspose: return "TRANSPOSE";
    case TriangularSolveTranspose::kAdjoint: return "ADJOINT";
  }
  return "NO_TRANSPOSE";
}

std::string RandomDistributionName(RandomDistribution distribution) {
  return distribution == RandomDistribution::kNormal ? "rng_normal" : "rng_uniform";
}

std::string RandomAlgorithmName(RandomAlgorithm algorithm) {
  switch (algorithm) {
    case RandomAlgorithm::kDefault: return "rng_default";
    case RandomAlgorithm::kThreeFry: return "rng_three_fry";
    case RandomAlgorithm::kPhilox: return "rng_philox";
  }
  return "rng_default";
}

std::string FusionKindName(FusionKind kind) {
  switch (kind) {
    case FusionKind::kLoop: return "kLoop";
    case FusionKind::kInput: return "kInput";
    case FusionKind::kOutput: return "kOutput";
    case FusionKind::kCustom: return "kCustom";
  }
  return "kLoop";
}

std::string PrecisionName(Precision precision) {
  switch (precision) {
    case Precision::kDefault: return "default";
    case Precision::kHigh: return "high";
    case Precision::kHighest: return "highest";
  }
  return "default";
}

}  // namespace xjit
