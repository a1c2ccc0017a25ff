// Differential tests of runtime/blas: seeded random DotGeneral and
// convolution modules (random ranks, sizes including 0 and 1, dimension
// numbers, operand and result layouts, window settings, group counts and
// element types), each run through the kernels and the reference evaluator.
// The seed of a failing case is in the failure message.
#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "runtime/blas/blas_threads.h"
#include "runtime/blas/direct_convolution.h"
#include "tests/blas/blas_test_util.h"

namespace xjit::runtime::blas {
namespace {

using testing::ConvContraction;
using testing::ConvModuleText;
using testing::ConvSpec;
using testing::RunCase;

int64_t Pick(std::mt19937_64& rng, std::initializer_list<int64_t> values) {
  std::vector<int64_t> v(values);
  return v[rng() % v.size()];
}

std::vector<int64_t> RandomLayout(std::mt19937_64& rng, int64_t rank) {
  std::vector<int64_t> layout(rank);
  std::iota(layout.rbegin(), layout.rend(), 0);
  if (rng() % 3 != 0) std::shuffle(layout.begin(), layout.end(), rng);
  return layout;
}

std::string ShapeText(ElementType t, const std::vector<int64_t>& dims,
                      const std::vector<int64_t>& layout) {
  if (dims.empty()) return absl::StrCat(ElementTypeName(t), "[]");
  return absl::StrCat(ElementTypeName(t), "[", absl::StrJoin(dims, ","), "]{",
                      absl::StrJoin(layout, ","), "}");
}

ElementType RandomType(std::mt19937_64& rng) {
  static const ElementType kTypes[] = {
      ElementType::kF32, ElementType::kF32, ElementType::kF32, ElementType::kF32,
      ElementType::kF64, ElementType::kC64, ElementType::kC128, ElementType::kF16,
      ElementType::kBF16, ElementType::kS32, ElementType::kS8, ElementType::kU16};
  return kTypes[rng() % std::size(kTypes)];
}

int64_t RandomSize(std::mt19937_64& rng) {
  if (rng() % 25 == 0) return 0;
  return Pick(rng, {1, 1, 2, 3, 4, 5, 7, 8, 13, 16});
}

struct DotCase {
  std::string hlo;
  int64_t contraction = 1;
};

DotCase RandomDot(std::mt19937_64& rng) {
  const int nb = rng() % 3, nm = rng() % 3, nn = rng() % 3, nk = rng() % 4;
  const ElementType t = RandomType(rng);
  std::vector<int64_t> bs, ms, ns, ks;
  int64_t contraction = 1;
  for (int i = 0; i < nb; ++i) bs.push_back(RandomSize(rng));
  for (int i = 0; i < nm; ++i) ms.push_back(RandomSize(rng));
  for (int i = 0; i < nn; ++i) ns.push_back(RandomSize(rng));
  for (int i = 0; i < nk; ++i) {
    ks.push_back(RandomSize(rng));
    contraction *= ks.back();
  }
  // Operand dimension roles: ('b', i), ('m', i), ('k', i) shuffled.
  std::vector<std::pair<char, int>> lhs_roles, rhs_roles;
  for (int i = 0; i < nb; ++i) lhs_roles.push_back({'b', i}), rhs_roles.push_back({'b', i});
  for (int i = 0; i < nk; ++i) lhs_roles.push_back({'k', i}), rhs_roles.push_back({'k', i});
  for (int i = 0; i < nm; ++i) lhs_roles.push_back({'m', i});
  for (int i = 0; i < nn; ++i) rhs_roles.push_back({'n', i});
  std::shuffle(lhs_roles.begin(), lhs_roles.end(), rng);
  std::shuffle(rhs_roles.begin(), rhs_roles.end(), rng);
  // Free dimensions appear in the result in operand order.
  std::vector<int64_t> lhs_dims, rhs_dims, out_dims = bs;
  std::vector<int64_t> lb(nb), rb(nb), lc(nk), rc(nk);
  for (size_t d = 0; d < lhs_roles.size(); ++d) {
    auto [role, i] = lhs_roles[d];
    lhs_dims.push_back(role == 'b' ? bs[i] : role == 'k' ? ks[i] : ms[i]);
    if (role == 'b') lb[i] = d;
    if (role == 'k') lc[i] = d;
    if (role == 'm') out_dims.push_back(ms[i]);
  }
  for (size_t d = 0; d < rhs_roles.size(); ++d) {
    auto [role, i] = rhs_roles[d];
    rhs_dims.push_back(role == 'b' ? bs[i] : role == 'k' ? ks[i] : ns[i]);
    if (role == 'b') rb[i] = d;
    if (role == 'k') rc[i] = d;
    if (role == 'n') out_dims.push_back(ns[i]);
  }
  std::string dims;
  if (nb > 0) {
    absl::StrAppend(&dims, "lhs_batch_dims={", absl::StrJoin(lb, ","), "}, rhs_batch_dims={",
                    absl::StrJoin(rb, ","), "}, ");
  }
  absl::StrAppend(&dims, "lhs_contracting_dims={", absl::StrJoin(lc, ","),
                  "}, rhs_contracting_dims={", absl::StrJoin(rc, ","), "}");
  DotCase c;
  c.contraction = contraction;
  c.hlo = absl::StrCat(
      "HloModule dot\n\nENTRY e {\n  a = ",
      ShapeText(t, lhs_dims, RandomLayout(rng, lhs_dims.size())), " parameter(0)\n  b = ",
      ShapeText(t, rhs_dims, RandomLayout(rng, rhs_dims.size())), " parameter(1)\n  ROOT d = ",
      ShapeText(t, out_dims, RandomLayout(rng, out_dims.size())), " dot(a, b), ", dims, "\n}\n");
  return c;
}

ConvSpec RandomConv(std::mt19937_64& rng) {
  ConvSpec s;
  const int ns = Pick(rng, {0, 1, 2, 2, 2, 3});
  static const ElementType kTypes[] = {ElementType::kF32, ElementType::kF32, ElementType::kF32,
                                       ElementType::kF64, ElementType::kF16, ElementType::kS32};
  s.type = kTypes[rng() % std::size(kTypes)];
  const int64_t groups = Pick(rng, {1, 1, 1, 2, 3});
  const bool batch_groups = groups > 1 && rng() % 2 == 0;
  const int64_t cg = rng() % 17 == 0 ? 0 : Pick(rng, {1, 2, 3, 4});
  const int64_t og = Pick(rng, {1, 2, 3, 5});
  s.batch = (rng() % 20 == 0 ? 0 : Pick(rng, {1, 1, 2, 3})) * (batch_groups ? groups : 1);
  s.feature_group_count = batch_groups ? 1 : groups;
  s.batch_group_count = batch_groups ? groups : 1;
  s.input_features = cg * s.feature_group_count;
  s.output_features = og * groups;
  std::string spatial_labels;
  for (int i = 0; i < ns; ++i) {
    spatial_labels.push_back('0' + i);
    s.input_spatial.push_back(Pick(rng, {1, 2, 3, 5, 6, 8, 9}));
    s.kernel_spatial.push_back(Pick(rng, {1, 1, 2, 3, 4}));
    WindowDimension w;
    w.stride = Pick(rng, {1, 1, 2, 3});
    w.padding_low = Pick(rng, {0, 0, 1, 2, -1});
    w.padding_high = Pick(rng, {0, 0, 1, 2, -1});
    w.base_dilation = Pick(rng, {1, 1, 1, 2});
    w.window_dilation = Pick(rng, {1, 1, 1, 2});
    w.window_reversal = rng() % 5 == 0;
    const int64_t dilated = (s.input_spatial.back() - 1) * w.base_dilation + 1;
    if (dilated + w.padding_low + w.padding_high < 0) w.padding_low = w.padding_high = 0;
    s.window.push_back(w);
  }
  auto labels = [&](char a, char b) {
    std::string l = std::string(1, a) + std::string(1, b) + spatial_labels;
    std::shuffle(l.begin(), l.end(), rng);
    return l;
  };
  s.input_labels = labels('b', 'f');
  s.kernel_labels = labels('i', 'o');
  s.output_labels = labels('b', 'f');
  s.input_layout = RandomLayout(rng, ns + 2);
  s.kernel_layout = RandomLayout(rng, ns + 2);
  s.output_layout = RandomLayout(rng, ns + 2);
  return s;
}

TEST(BlasRandomTest, DotGeneral) {
  SetBlasThreads(1);
  int copies = 0, cases = 0;
  for (uint64_t seed = 1; seed <= 600; ++seed) {
    std::mt19937_64 rng(seed);
    DotCase c = RandomDot(rng);
    auto r = RunCase(c.hlo, seed, c.contraction);
    ASSERT_TRUE(r.ok) << "seed " << seed;
    copies += r.copies > 0;
    ++cases;
  }
  std::printf("%d random dots, %d with a copy\n", cases, copies);
}

// The same dots split over 2 or 3 threads (PlanDotThreads with no floor on a
// band's size: bands of one row, M or N smaller than the threads, batches
// that do not divide).
TEST(BlasRandomTest, DotGeneralSplitOverThreads) {
  int cases = 0, batch = 0, bands = 0;
  for (uint64_t seed = 1; seed <= 600; ++seed) {
    std::mt19937_64 rng(seed);
    DotCase c = RandomDot(rng);
    const int threads = 2 + static_cast<int>(seed % 2);
    auto r = RunCase(c.hlo, seed, c.contraction, threads);
    ASSERT_TRUE(r.ok) << "seed " << seed << " threads " << threads << " " << r.plan;
    batch += r.plan.find("split=batch") != std::string::npos;
    bands += r.plan.find("bands=") != std::string::npos;
    ++cases;
  }
  SetBlasThreads(1);
  std::printf("%d random dots on 2 or 3 threads: %d split over the batch, %d in bands\n", cases,
              batch, bands);
  EXPECT_GT(batch, 0);
  EXPECT_GT(bands, 0);
}

// Planned and run for 1, 2 or 3 threads in turn (the image on threads, the
// GEMM in bands of rows or columns on the pool where it is large enough).
TEST(BlasRandomTest, Convolution) {
  int direct = 0, cases = 0, empty = 0, banded = 0;
  for (uint64_t seed = 1; seed <= 800; ++seed) {
    std::mt19937_64 rng(seed * 7919);
    ConvSpec s = RandomConv(rng);
    const int threads = 1 + static_cast<int>(seed % 3);
    SetBlasThreads(threads);
    auto r = RunCase(ConvModuleText(s), seed, ConvContraction(s));
    ASSERT_TRUE(r.ok) << "seed " << seed << " threads " << threads;
    empty += r.kind == DotPlan::Kind::kNothing;
    direct += !r.uses_im2col && r.kind != DotPlan::Kind::kNothing;
    banded += r.plan.find("split=") != std::string::npos;
    ++cases;
  }
  SetBlasThreads(1);
  std::printf("%d random convolutions: %d with an empty result, %d without im2col, %d split\n",
              cases, empty, direct, banded);
}

// Convolutions the direct kernel (direct_convolution.h) covers: f32, no
// groups, features minor in the input and output, output features minor in
// the kernel and a multiple of 16; random spatial orders (so the tile runs
// along either spatial dimension), channel counts, strides, padding (high
// padding negative too) and window dilation. Each runs on the direct kernel
// with one thread and split over two.
ConvSpec RandomDirectConv(std::mt19937_64& rng) {
  ConvSpec s;
  const int ns = Pick(rng, {1, 2, 2, 2});
  s.batch = Pick(rng, {1, 1, 2, 3, 9, 17});  // 9, 17: tiles across the batch
  s.input_features = Pick(rng, {1, 2, 3, 5, 16, 17});
  s.output_features = Pick(rng, {16, 32, 48, 64, 80, 128, 192});
  std::string spatial_labels;
  for (int i = 0; i < ns; ++i) {
    spatial_labels.push_back('0' + i);
    s.input_spatial.push_back(Pick(rng, {1, 3, 5, 8, 9, 15, 16, 30}));
    s.kernel_spatial.push_back(Pick(rng, {1, 1, 2, 3, 5, 7}));
    WindowDimension w;
    w.stride = Pick(rng, {1, 1, 2, 3});
    w.padding_low = Pick(rng, {0, 0, 1, 2, 3});
    w.padding_high = Pick(rng, {0, 0, 1, 2, 3, -1});
    w.window_dilation = Pick(rng, {1, 1, 1, 2});
    const int64_t padded = s.input_spatial.back() + w.padding_low + w.padding_high;
    const int64_t extent = (s.kernel_spatial.back() - 1) * w.window_dilation + 1;
    if (padded < extent) {
      s.input_spatial.back() += extent - padded;
    }
    s.window.push_back(w);
  }
  auto labels = [&](char a, char b) {
    std::string l = std::string(1, a) + std::string(1, b) + spatial_labels;
    std::shuffle(l.begin(), l.end(), rng);
    return l;
  };
  s.input_labels = labels('b', 'f');
  s.kernel_labels = labels('i', 'o');
  s.output_labels = labels('b', 'f');
  // A layout whose most minor dimension is the one labelled `minor`.
  auto minor_layout = [&](const std::string& l, char minor) {
    std::vector<int64_t> layout = RandomLayout(rng, ns + 2);
    const int64_t dim = static_cast<int64_t>(l.find(minor));
    std::iter_swap(layout.begin(), std::find(layout.begin(), layout.end(), dim));
    return layout;
  };
  s.input_layout = minor_layout(s.input_labels, 'f');
  s.kernel_layout = minor_layout(s.kernel_labels, 'o');
  s.output_layout = minor_layout(s.output_labels, 'f');
  return s;
}

TEST(BlasRandomTest, DirectConvolution) {
  // Without AVX-512F, the portable tiles run the same plans and splits.
  const bool native = DirectConvolutionSupported();
  if (!native) UsePortableDirectConvolutionForTesting(true);
  int direct = 0, across = 0;
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    std::mt19937_64 rng(seed * 104729);
    ConvSpec s = RandomDirectConv(rng);
    for (int threads : {1, 2}) {
      SetBlasThreads(threads);
      auto r = RunCase(ConvModuleText(s), seed, ConvContraction(s));
      ASSERT_TRUE(r.ok) << "seed " << seed << " threads " << threads << " " << r.plan;
      direct += threads == 1 && r.plan.find("direct-kernel") != std::string::npos;
      across += threads == 1 && r.plan.find("across-batch") != std::string::npos;
      if (threads == 2) {
        EXPECT_NE(r.plan.find("direct-kernel"), std::string::npos) << r.plan;
      }
    }
  }
  SetBlasThreads(1);
  UsePortableDirectConvolutionForTesting(false);
  std::printf(
      "150 random channels-minor convolutions, %d with a direct plan (%s tiles), %d of "
      "them across the batch\n",
      direct, native ? "AVX-512F" : "portable", across);
  EXPECT_GT(across, 0);
  EXPECT_EQ(direct, 150);
}

}  // namespace
}  // namespace xjit::runtime::blas
