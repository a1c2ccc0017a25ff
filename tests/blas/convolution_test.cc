// Unit tests of runtime/blas convolution: a hand-calculated case, then one
// test per form of 003 (dim_labels orders, strides, padding including
// negative, lhs and rhs dilation, reversal, feature and batch groups, 0 to 3
// spatial dimensions, several element types) against the evaluator.
#include <algorithm>
#include <array>
#include <random>
#include <optional>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/hlo_text/parser.h"
#include "runtime/blas/blas_threads.h"
#include "runtime/blas/convolution.h"
#include "runtime/blas/direct_convolution.h"
#include "runtime/blas/kernel_isa.h"
#include "tests/blas/blas_test_util.h"

namespace xjit::runtime::blas {
namespace {

using testing::ConvContraction;
using testing::ConvModuleText;
using testing::ConvSpec;
using testing::RunCase;

class ConvolutionTest : public ::testing::Test {
 protected:
  void SetUp() override { SetBlasThreads(1); }
  testing::CaseResult Run(const ConvSpec& spec, uint64_t seed = 1) {
    auto r = RunCase(ConvModuleText(spec), seed, ConvContraction(spec));
    EXPECT_TRUE(r.ok);
    return r;
  }
};

// Runs `body` with the direct kernel's tiles of each ISA: AVX-512F and
// AVX2+FMA where the CPU has them (an ISA it lacks is skipped, and the test
// log says so), then the portable C++ tiles, which run everywhere.
template <typename Body>
void ForEachTileIsa(Body body) {
  for (KernelIsa isa : {KernelIsa::kAvx512, KernelIsa::kAvx2, KernelIsa::kNone}) {
    if (!CpuHasKernelIsa(isa)) {
      std::printf("[ SKIPPED  ] %s tiles: this CPU lacks them\n", KernelIsaName(isa));
      continue;
    }
    SCOPED_TRACE(isa == KernelIsa::kNone ? "portable tiles"
                                         : absl::StrCat(KernelIsaName(isa), " tiles"));
    ScopedKernelIsaForTesting forced(isa);
    UsePortableDirectConvolutionForTesting(isa == KernelIsa::kNone);
    body();
    UsePortableDirectConvolutionForTesting(false);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

WindowDimension Win(int64_t stride, int64_t lo = 0, int64_t hi = 0, int64_t lhs_dilate = 1,
                    int64_t rhs_dilate = 1, bool reversal = false) {
  WindowDimension w;
  w.stride = stride;
  w.padding_low = lo;
  w.padding_high = hi;
  w.base_dilation = lhs_dilate;
  w.window_dilation = rhs_dilate;
  w.window_reversal = reversal;
  return w;
}

// [1,2,3,4] with kernel [1,0,-1] is [1-3, 2-4]; reversed it is [3-1, 4-2].
TEST_F(ConvolutionTest, HandCalculated1D) {
  const std::string module =
      "HloModule c\n\nENTRY e {\n  a = f32[1,4,1]{2,1,0} parameter(0)\n"
      "  b = f32[3,1,1]{2,1,0} parameter(1)\n"
      "  ROOT c = f32[1,2,1]{2,1,0} convolution(a, b), window={size=3%s}, "
      "dim_labels=b0f_0io->b0f\n}\n";
  auto in = *ParseLiteral("f32[1,4,1] {{{1},{2},{3},{4}}}");
  auto k = *ParseLiteral("f32[3,1,1] {{{1}},{{0}},{{-1}}}");
  std::string plain = module, reversed = module;
  plain.replace(plain.find("%s"), 2, "");
  reversed.replace(reversed.find("%s"), 2, " rhs_reversal=1");
  EXPECT_TRUE(testing::RunWithValues(plain, {in, k}, *ParseLiteral("f32[1,2,1] {{{-2},{-2}}}"), 3));
  EXPECT_TRUE(
      testing::RunWithValues(reversed, {in, k}, *ParseLiteral("f32[1,2,1] {{{2},{2}}}"), 3));
}

TEST_F(ConvolutionTest, NhwcSame3x3) {
  ConvSpec s;
  s.batch = 2;
  s.input_features = 5;
  s.output_features = 7;
  s.input_spatial = {6, 5};
  s.kernel_spatial = {3, 3};
  s.window = {Win(1, 1, 1), Win(1, 1, 1)};
  auto r = Run(s);
  EXPECT_TRUE(r.uses_im2col);
  EXPECT_EQ(r.copies, 0) << r.plan;
}

TEST_F(ConvolutionTest, NchwStrided) {
  ConvSpec s;
  s.batch = 3;
  s.input_features = 4;
  s.output_features = 6;
  s.input_spatial = {9, 7};
  s.kernel_spatial = {3, 2};
  s.window = {Win(2, 1, 0), Win(3, 0, 2)};
  s.input_labels = "bf01";
  s.kernel_labels = "oi01";
  s.output_labels = "bf01";
  auto r = Run(s);
  EXPECT_EQ(r.copies, 0) << r.plan;
}

// A 1x1 stride-1 unpadded convolution in NHWC is one GEMM on the input as it is.
TEST_F(ConvolutionTest, OneByOneChannelsMinorIsPlainGemm) {
  ConvSpec s;
  s.batch = 2;
  s.input_features = 8;
  s.output_features = 5;
  s.input_spatial = {4, 3};
  s.kernel_spatial = {1, 1};
  auto r = Run(s);
  EXPECT_FALSE(r.uses_im2col) << r.plan;
  EXPECT_EQ(r.copies, 0) << r.plan;
  EXPECT_EQ(r.kind, DotPlan::Kind::kGemm) << r.plan;
  EXPECT_NE(r.plan.find("batch=1"), std::string::npos) << r.plan;
  // NCHW: one GEMM per image, still no copy.
  s.input_labels = "bf01";
  s.kernel_labels = "oi01";
  s.output_labels = "bf01";
  r = Run(s, 2);
  EXPECT_FALSE(r.uses_im2col) << r.plan;
  EXPECT_EQ(r.copies, 0) << r.plan;
  // Strided 1x1 with negative padding: no im2col either.
  s.window = {Win(2, -1, 0), Win(2, 0, -1)};
  r = Run(s, 3);
  EXPECT_FALSE(r.uses_im2col) << r.plan;
}

TEST_F(ConvolutionTest, LabelsInAnyOrder) {
  const char* orders[][3] = {{"fb01", "io01", "01fb"}, {"0bf1", "0oi1", "f10b"},
                             {"01bf", "o01i", "b0f1"}};
  uint64_t seed = 10;
  for (auto& o : orders) {
    ConvSpec s;
    s.batch = 2;
    s.input_features = 3;
    s.output_features = 4;
    s.input_spatial = {5, 6};
    s.kernel_spatial = {2, 3};
    s.window = {Win(1, 1, 0), Win(2, 1, 1)};
    s.input_labels = o[0];
    s.kernel_labels = o[1];
    s.output_labels = o[2];
    Run(s, ++seed);
  }
}

TEST_F(ConvolutionTest, NonDefaultLayouts) {
  ConvSpec s;
  s.batch = 2;
  s.input_features = 3;
  s.output_features = 4;
  s.input_spatial = {5, 4};
  s.kernel_spatial = {2, 2};
  s.input_layout = {1, 3, 0, 2};
  s.kernel_layout = {0, 2, 3, 1};
  s.output_layout = {2, 0, 3, 1};
  Run(s);
}

TEST_F(ConvolutionTest, NegativePaddingAndDilations) {
  ConvSpec s;
  s.batch = 2;
  s.input_features = 3;
  s.output_features = 2;
  s.input_spatial = {9, 8};
  s.kernel_spatial = {3, 2};
  s.window = {Win(1, -2, 1, 1, 2), Win(2, 3, -1, 1, 3)};
  Run(s, 1);
  // lhs dilation (a transposed convolution) with padding and reversal.
  s.window = {Win(1, 2, 2, 2, 1, true), Win(1, 1, 2, 3, 1)};
  Run(s, 2);
  s.window = {Win(3, 1, 1, 2, 2, true), Win(2, -1, 4, 2, 2, true)};
  Run(s, 3);
}

TEST_F(ConvolutionTest, FeatureGroups) {
  ConvSpec s;
  s.batch = 2;
  s.input_features = 6;
  s.output_features = 9;
  s.feature_group_count = 3;
  s.input_spatial = {5, 5};
  s.kernel_spatial = {3, 3};
  s.window = {Win(1, 1, 1), Win(1, 1, 1)};
  Run(s, 1);
  // Depthwise with a channel multiplier of 2, NCHW.
  s.input_features = 4;
  s.output_features = 8;
  s.feature_group_count = 4;
  s.input_labels = "bf01";
  s.kernel_labels = "oi01";
  s.output_labels = "bf01";
  Run(s, 2);
}

// Depthwise convolutions (one input feature per group) run the grouped
// direct kernel with no scratch: NHWC with a multiplier of 1 (the
// vectorised loop), NCHW with a multiplier of 2 and reversal, f64 with lhs
// dilation and negative padding, a window dilated by 4 (im2col planned
// 54.7 GB for a dilated depthwise convolution of a few MB, issue 30), on 1
// to 3 threads.
TEST_F(ConvolutionTest, DepthwiseRunsTheGroupedKernel) {
  std::vector<ConvSpec> specs;
  ConvSpec nhwc;
  nhwc.batch = 2;
  nhwc.input_features = 37;  // Not a multiple of any vector width.
  nhwc.output_features = 37;
  nhwc.feature_group_count = 37;
  nhwc.input_spatial = {9, 7};
  nhwc.kernel_spatial = {3, 3};
  nhwc.window = {Win(1, 1, 1), Win(2, 1, 1)};
  specs.push_back(nhwc);
  ConvSpec nchw = nhwc;
  nchw.output_features = 74;
  nchw.input_labels = "bf01";
  nchw.kernel_labels = "oi01";
  nchw.output_labels = "bf01";
  nchw.window = {Win(1, 2, 0, 1, 2, true), Win(1, 0, 2, 1, 1, true)};
  specs.push_back(nchw);
  ConvSpec f64 = nhwc;
  f64.type = ElementType::kF64;
  f64.window = {Win(1, -1, 2, 2, 1), Win(3, 2, -1, 1, 2)};
  specs.push_back(f64);
  ConvSpec dilated = nhwc;
  dilated.input_features = dilated.output_features = dilated.feature_group_count = 16;
  dilated.input_spatial = {20, 20};
  dilated.kernel_spatial = {3, 3};
  dilated.window = {Win(1, 4, 4, 1, 4), Win(1, 4, 4, 1, 4)};
  specs.push_back(dilated);
  uint64_t seed = 70;
  for (const ConvSpec& s : specs) {
    ++seed;
    for (int threads : {1, 2, 3}) {
      SetBlasThreads(threads);
      auto r = Run(s, seed);
      EXPECT_NE(r.plan.find("grouped direct"), std::string::npos) << r.plan;
      EXPECT_NE(r.plan.find(absl::StrCat("threads=", threads)), std::string::npos) << r.plan;
    }
  }
  SetBlasThreads(1);
  // No image, whatever the window: scratch 0.
  const std::string hlo = ConvModuleText(dilated);
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(hlo);
  ASSERT_TRUE(module.ok()) << module.status();
  auto plan = PlanConvolution(*(*module)->entry()->root());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->use_grouped);
  EXPECT_EQ(plan->ChosenScratchBytes(), 0);
  EXPECT_EQ(plan->BlasThreads(), 1);
}

TEST_F(ConvolutionTest, BatchGroups) {
  ConvSpec s;
  s.batch = 6;
  s.input_features = 3;
  s.output_features = 4;
  s.batch_group_count = 2;
  s.input_spatial = {4, 5};
  s.kernel_spatial = {2, 3};
  Run(s, 1);
  s.input_labels = "f01b";
  s.kernel_labels = "i01o";
  s.output_labels = "01bf";
  s.window = {Win(2, 1, 0), Win(1, 0, 1, 1, 2)};
  Run(s, 2);
}

TEST_F(ConvolutionTest, SpatialRanks) {
  ConvSpec s0;
  s0.batch = 3;
  s0.input_features = 5;
  s0.output_features = 4;
  s0.input_labels = "bf";
  s0.kernel_labels = "io";
  s0.output_labels = "fb";
  Run(s0, 1);
  ConvSpec s1;
  s1.batch = 2;
  s1.input_features = 3;
  s1.output_features = 4;
  s1.input_spatial = {11};
  s1.kernel_spatial = {4};
  s1.window = {Win(2, 2, 1, 1, 2)};
  s1.input_labels = "b0f";
  s1.kernel_labels = "0io";
  s1.output_labels = "bf0";
  Run(s1, 2);
  ConvSpec s3;
  s3.batch = 2;
  s3.input_features = 2;
  s3.output_features = 3;
  s3.input_spatial = {4, 5, 3};
  s3.kernel_spatial = {2, 3, 2};
  s3.window = {Win(1, 1, 0), Win(2, 1, 1), Win(1, 0, 1, 2)};
  s3.input_labels = "b012f";
  s3.kernel_labels = "012io";
  s3.output_labels = "b012f";
  Run(s3, 3);
}

TEST_F(ConvolutionTest, ElementTypes) {
  // Every integer type of the plain loop's typed path (dot.cc's TypedInt),
  // whose products wrap: FillRandom covers each type's whole range.
  for (ElementType t : {ElementType::kF64, ElementType::kC64, ElementType::kC128,
                        ElementType::kF16, ElementType::kBF16, ElementType::kS8,
                        ElementType::kS16, ElementType::kS32, ElementType::kS64,
                        ElementType::kU8, ElementType::kU16, ElementType::kU32,
                        ElementType::kU64, ElementType::kS4}) {
    ConvSpec s;
    s.type = t;
    s.batch = 2;
    s.input_features = 4;
    s.output_features = 3;
    s.input_spatial = {5, 4};
    s.kernel_spatial = {3, 2};
    s.window = {Win(2, 1, 1), Win(1, 0, 1, 2)};
    Run(s, static_cast<uint64_t>(t));
  }
}

// Scaled-down ResNet layers in NHWC/HWIO run on the direct kernel on one
// thread (the fixture's setting) and split over two and three (the test
// utility plans with BLAS's thread count), with the tiles of every ISA the
// CPU has and the portable ones.
TEST_F(ConvolutionTest, DirectKernelResNetLayers) {
  ForEachTileIsa([&] {
  struct L {
    int64_t size, in_c, out_c, kernel, stride, pad, batch;
  };
  const L layers[] = {{30, 3, 64, 7, 2, 3, 2},  {14, 64, 64, 3, 1, 1, 1},
                      {9, 256, 64, 1, 1, 0, 2}, {15, 128, 128, 3, 2, 1, 1},
                      {11, 8, 16, 3, 1, 1, 3},  {10, 5, 96, 3, 2, 0, 1}};
  uint64_t seed = 20;
  for (const L& l : layers) {
    ConvSpec s;
    s.batch = l.batch;
    s.input_features = l.in_c;
    s.output_features = l.out_c;
    s.input_spatial = {l.size, l.size + 1};
    s.kernel_spatial = {l.kernel, l.kernel};
    s.window = {Win(l.stride, l.pad, l.pad), Win(l.stride, l.pad, l.pad)};
    auto r = Run(s, ++seed);
    EXPECT_NE(r.plan.find("direct-kernel"), std::string::npos) << r.plan;
    for (int threads : {2, 3}) {
      SetBlasThreads(threads);
      r = Run(s, seed);
      EXPECT_NE(r.plan.find(absl::StrCat("threads=", threads)), std::string::npos) << r.plan;
    }
    SetBlasThreads(1);
  }
  });
}

// The cnn_train model's convolutions (benchmarks/models), scaled down, with
// the layouts the pass pipeline gives them: forward, input gradient (the
// kernel's output features minor, `01oi`) and kernel gradients (the batch
// is the contracted "feature", the image is the window: tiles across the
// batch, windows clipped at the padding), odd sizes, on 1 to 3 threads.
// RunCase checks both the planner's path and the other one.
TEST_F(ConvolutionTest, ModelConvolutionsOnThreads) {
  std::vector<ConvSpec> specs;
  ConvSpec forward;
  forward.batch = 3;
  forward.input_features = 3;
  forward.output_features = 64;
  forward.input_spatial = {9, 11};
  forward.kernel_spatial = {3, 3};
  forward.window = {Win(1, 1, 1), Win(1, 1, 1)};
  specs.push_back(forward);
  forward.input_features = 17;
  forward.output_features = 32;
  specs.push_back(forward);
  ConvSpec input_grad = forward;
  input_grad.input_features = 16;
  input_grad.output_features = 48;
  input_grad.kernel_labels = "01oi";
  input_grad.kernel_layout = {2, 3, 1, 0};
  specs.push_back(input_grad);
  for (int64_t out : {16, 32, 64}) {
    for (int64_t channels : {1, 9, 17}) {
      ConvSpec kernel_grad;
      kernel_grad.batch = channels;    // the forward pass's input channels
      kernel_grad.input_features = 5;  // the forward pass's batch
      kernel_grad.output_features = out;
      kernel_grad.input_spatial = {10, 7};
      kernel_grad.kernel_spatial = {10, 7};  // the forward pass's output
      kernel_grad.window = {Win(1, 1, 1), Win(1, 2, 1)};
      kernel_grad.input_labels = "f01b";
      kernel_grad.kernel_labels = "i01o";
      kernel_grad.output_labels = "01bf";
      kernel_grad.input_layout = {0, 2, 1, 3};
      kernel_grad.kernel_layout = {3, 0, 2, 1};
      specs.push_back(kernel_grad);
    }
  }
  ForEachTileIsa([&] {
  uint64_t seed = 40;
  int across = 0;
  for (const ConvSpec& s : specs) {
    ++seed;
    for (int threads : {1, 2, 3}) {
      SetBlasThreads(threads);
      auto r = Run(s, seed);
      EXPECT_NE(r.plan.find("direct-kernel"), std::string::npos) << r.plan;
      EXPECT_TRUE(r.ran_both) << r.plan;
      across += threads == 1 && r.plan.find("across-batch") != std::string::npos;
    }
  }
  SetBlasThreads(1);
  EXPECT_EQ(across, 6);  // the kernel gradients with a batch of 9 or 17
  });
}

// On more than one thread, the GEMM runs in bands of rows (or of columns,
// when N > M), or over its batch, on the pool (OpenBLAS single-threaded):
// K-minor and M-minor images (NHWC, NCHW), a 1x1 convolution read in place,
// f32 and f64, sizes that do not divide evenly. (17 output features: an
// f32 GEMM of at most 16 columns is one SmallGemm call, which splits its own
// rows.)
TEST_F(ConvolutionTest, GemmBandsOnThreads) {
  std::vector<ConvSpec> specs;
  ConvSpec nchw;
  nchw.type = ElementType::kF32;
  nchw.batch = 2;
  nchw.input_features = 5;
  nchw.output_features = 17;
  nchw.input_spatial = {13, 11};
  nchw.kernel_spatial = {3, 2};
  nchw.window = {Win(1, 1, 0), Win(2, 0, 1)};
  nchw.input_labels = "bf01";
  nchw.kernel_labels = "oi01";
  nchw.output_labels = "bf01";
  specs.push_back(nchw);
  ConvSpec nhwc = nchw;
  nhwc.input_labels = "b01f";
  nhwc.kernel_labels = "01io";
  nhwc.output_labels = "b01f";
  specs.push_back(nhwc);
  nhwc.type = ElementType::kF64;
  specs.push_back(nhwc);
  ConvSpec one_by_one = nhwc;
  one_by_one.type = ElementType::kF32;
  one_by_one.kernel_spatial = {1, 1};
  one_by_one.window = {Win(1), Win(1)};
  specs.push_back(one_by_one);
  // More output features than output pixels: bands of columns.
  for (const char* layout : {"nhwc", "nchw"}) {
    ConvSpec wide = std::string(layout) == "nhwc" ? nhwc : nchw;
    wide.type = ElementType::kF32;
    wide.batch = 1;
    wide.input_features = 6;
    wide.output_features = 41;
    wide.input_spatial = {4, 5};
    wide.kernel_spatial = {3, 3};
    wide.window = {Win(1, 1, 1), Win(1, 1, 1)};
    specs.push_back(wide);
  }
  uint64_t seed = 60;
  for (const ConvSpec& s : specs) {
    ++seed;
    for (int threads : {2, 3}) {
      SetBlasThreads(threads);
      auto r = Run(s, seed);
      // Bands, or the batch of images (NCHW: one GEMM per image) over the
      // threads (PlanDotThreads).
      EXPECT_NE(r.plan.find("split="), std::string::npos) << r.plan;
    }
  }
  SetBlasThreads(1);
}

// A channels-major convolution whose batch is a loop of GEMMs and whose
// whole im2col image exceeds a core's cache runs image by image (each
// image's part built in a slab just before its GEMM): NCHW and NCW, f32 and
// f64, strides, padding and window dilation, an odd batch, against the
// evaluator on 1 to 3 threads, and the same bits on every thread count (the
// threads take whole images).
TEST_F(ConvolutionTest, ChannelsMajorImageByImage) {
  std::vector<ConvSpec> specs;
  ConvSpec nchw;
  nchw.batch = 5;
  nchw.input_features = 8;
  nchw.output_features = 6;
  nchw.input_spatial = {40, 37};
  nchw.kernel_spatial = {3, 3};
  nchw.window = {Win(1, 1, 1), Win(2, 1, 2)};
  nchw.input_labels = "bf01";
  nchw.kernel_labels = "oi01";
  nchw.output_labels = "bf01";
  specs.push_back(nchw);
  nchw.type = ElementType::kF64;
  specs.push_back(nchw);
  ConvSpec ncw;
  ncw.batch = 3;
  ncw.input_features = 64;
  ncw.output_features = 8;
  ncw.input_spatial = {1024};
  ncw.kernel_spatial = {3};
  ncw.window = {Win(1, 2, 2, 1, 2)};
  ncw.input_labels = "bf0";
  ncw.kernel_labels = "oi0";
  ncw.output_labels = "bf0";
  specs.push_back(ncw);
  uint64_t seed = 90;
  for (const ConvSpec& s : specs) {
    ++seed;
    for (int threads : {1, 2, 3}) {
      SetBlasThreads(threads);
      auto r = Run(s, seed);
      EXPECT_NE(r.plan.find(absl::StrCat("per-image=", s.batch)), std::string::npos) << r.plan;
    }
    SetBlasThreads(1);
    auto module = ParseHloModule(ConvModuleText(s));
    ASSERT_TRUE(module.ok()) << module.status();
    const Instruction& conv = *(*module)->entry()->root();
    std::vector<std::vector<uint8_t>> outputs;
    for (int threads : {1, 3}) {
      auto plan = PlanConvolution(conv, threads);
      ASSERT_TRUE(plan.ok()) << plan.status();
      const bool f64 = s.type == ElementType::kF64;
      const int64_t width = f64 ? 8 : 4;
      std::mt19937_64 rng(seed);
      std::uniform_real_distribution<double> d(-1, 1);
      auto random_array = [&](int64_t n) {
        std::vector<uint8_t> bytes(n * width);
        for (int64_t i = 0; i < n; ++i) {
          const double v = d(rng);
          const float f = static_cast<float>(v);
          std::memcpy(bytes.data() + i * width, f64 ? static_cast<const void*>(&v) : &f, width);
        }
        return bytes;
      };
      const std::vector<uint8_t> x = random_array(conv.operand(0)->shape().element_count());
      const std::vector<uint8_t> k = random_array(conv.operand(1)->shape().element_count());
      outputs.emplace_back(conv.shape().element_count() * width);
      std::vector<uint8_t> scratch(plan->ChosenScratchBytes() + 1);
      RunConvolution(*plan, x.data(), k.data(), outputs.back().data(), scratch.data());
    }
    EXPECT_TRUE(outputs[0] == outputs[1]) << ConvModuleText(s);
  }
}

// PlanDirectConvolution/RunDirectConvolution on NHWC/HWIO against a plain
// loop that sums in the tiles' order (kernel row, kernel column, input
// feature; padding as zero terms; one fused multiply-add each), so the bits
// must be equal: output rows 1 to 13 pixels wide (every tile width and
// tail of every ISA), a 1x1 image, one input feature, 16 and 48 output
// features (wide tiles) and 1, 3, 8 and 27 (narrow ones: 8-feature blocks,
// the last masked), and NaN and infinities in the input. The kernel and
// the output are exactly their size, so a masked block that read or wrote
// past them would show under ASan; the output's neighbours must stay 7.
TEST_F(ConvolutionTest, DirectKernelTailsAndSpecialValues) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  ForEachTileIsa([&] {
    uint64_t seed = 70;
    for (int64_t width : {1, 2, 5, 6, 7, 12, 13}) {
      for (int64_t in_c : {1, 3}) {
        for (int64_t out_c : {16, 48, 1, 3, 8, 27}) {
          const int64_t batch = 2, height = width == 1 ? 1 : 3, kh = 3, kw = 3, pad = 1;
          DirectConvolutionProblem p;
          p.batch = batch;
          p.input_features = in_c;
          p.output_features = out_c;
          p.input_batch_stride = height * width * in_c;
          p.output_batch_stride = height * width * out_c;
          p.kernel_feature_stride = out_c;
          const int64_t sizes[2] = {height, width};
          for (int d = 0; d < 2; ++d) {
            DirectSpatial& sp = p.spatial[d];
            sp.input_size = sizes[d];
            sp.output_size = sizes[d];
            sp.kernel_size = d == 0 ? kh : kw;
            sp.padding_low = pad;
            sp.input_stride = d == 0 ? width * in_c : in_c;
            sp.kernel_stride = d == 0 ? kw * in_c * out_c : in_c * out_c;
            sp.output_stride = d == 0 ? width * out_c : out_c;
          }
          for (int threads : {1, 2}) {
            std::optional<DirectConvolutionPlan> plan = PlanDirectConvolution(p, threads);
            ASSERT_TRUE(plan.has_value());
            EXPECT_EQ(plan->narrow, out_c % 16 != 0) << plan->ToString();
            std::mt19937_64 rng(++seed);
            std::uniform_real_distribution<float> d(-1, 1);
            std::vector<float> x(batch * p.input_batch_stride), k(kh * kw * in_c * out_c);
            for (float& v : x) v = d(rng);
            for (float& v : k) v = d(rng);
            x[x.size() / 3] = nan;
            x[x.size() / 2] = inf;
            x[x.size() - 1] = -inf;
            std::vector<float> y(batch * p.output_batch_stride + 8, 7.0f);
            std::vector<uint8_t> scratch(plan->scratch_bytes + 1);
            RunDirectConvolution(*plan, x.data(), k.data(), y.data(), scratch.data());
            for (int64_t b = 0; b < batch; ++b) {
              for (int64_t i = 0; i < height; ++i) {
                for (int64_t j = 0; j < width; ++j) {
                  for (int64_t o = 0; o < out_c; ++o) {
                    float acc = 0;
                    for (int64_t r = 0; r < kh; ++r) {
                      for (int64_t c = 0; c < kw; ++c) {
                        const int64_t yi = i + r - pad, xj = j + c - pad;
                        const bool inside = yi >= 0 && yi < height && xj >= 0 && xj < width;
                        for (int64_t e = 0; e < in_c; ++e) {
                          const float xv =
                              inside ? x[b * p.input_batch_stride + (yi * width + xj) * in_c + e]
                                     : 0.0f;
                          acc = std::fma(xv, k[((r * kw + c) * in_c + e) * out_c + o], acc);
                        }
                      }
                    }
                    const float got = y[b * p.output_batch_stride + (i * width + j) * out_c + o];
                    const bool same = std::isnan(acc) ? std::isnan(got) : got == acc;
                    ASSERT_TRUE(same) << "width " << width << " in " << in_c << " out " << out_c
                                      << " threads " << threads << " at " << b << "," << i << ","
                                      << j << "," << o << ": " << got << " vs " << acc << "; "
                                      << plan->ToString();
                  }
                }
              }
            }
            for (size_t t = y.size() - 8; t < y.size(); ++t) ASSERT_EQ(y[t], 7.0f) << t;
          }
        }
      }
    }
  });
}

// What the direct kernel does not cover keeps to im2col + GEMM.
TEST_F(ConvolutionTest, DirectKernelCoverage) {
  ConvSpec s;
  s.input_features = 4;
  s.output_features = 32;
  s.input_spatial = {6, 6};
  s.kernel_spatial = {3, 3};
  s.window = {Win(1, 1, 1), Win(1, 1, 1)};
  auto r = Run(s, 1);
  EXPECT_EQ(r.plan.find("direct-kernel") != std::string::npos, DirectConvolutionSupported())
      << r.plan;
  s.output_features = 24;  // not a multiple of 16: 8-feature blocks
  r = Run(s, 2);
  EXPECT_EQ(r.plan.find("direct-kernel tile=12x8") != std::string::npos,
            DirectConvolutionSupported())
      << r.plan;
  s.output_features = 32;
  // lhs dilation: the phases (ordinary convolutions) take the direct kernel.
  s.window = {Win(1, 1, 1, 2), Win(1, 1, 1)};
  const std::string phased = Run(s, 3).plan;
  EXPECT_NE(phased.find("phases=2:"), std::string::npos) << phased;
  EXPECT_EQ(phased.find("direct-kernel") != std::string::npos, DirectConvolutionSupported())
      << phased;
  s.window = {Win(1, -1, 1), Win(1, 1, 1)};  // negative low padding
  EXPECT_EQ(Run(s, 4).plan.find("direct-kernel"), std::string::npos);
  s.window = {Win(1, 1, 1), Win(1, 1, 1)};
  s.input_labels = "bf01";  // features not minor
  s.output_labels = "bf01";
  EXPECT_EQ(Run(s, 5).plan.find("direct-kernel"), std::string::npos);
}

// lhs-dilated (transposed) convolutions run as phases of ordinary
// convolutions (conv_phases.h). 1-D sweep: lhs dilation 2 and 3, strides 1
// to 3 (a stride sharing a factor with the dilation merges phases), window
// dilation 1 and 2 (sharing one thins the taps), reversal, padding that
// shrinks (negative) or grows the output, kernels larger than the input,
// input sizes 1, 2 and 5 (padded to one output at least); phases with no live tap (zeroed outputs) occur.
TEST_F(ConvolutionTest, TransposedConvolutionPhases1D) {
  ConvSpec s;
  s.batch = 2;
  s.input_features = 3;
  s.output_features = 2;
  s.input_labels = "b0f";
  s.kernel_labels = "0io";
  s.output_labels = "b0f";
  const int64_t pads[][2] = {{0, 0}, {-1, 2}, {2, -1}, {3, 4}};
  uint64_t seed = 100;
  int zeroed = 0, col2im = 0;
  for (int64_t d : {2, 3}) {
    // Fewer output features than input ones: GEMM + col2im; more: phases.
    s.output_features = d == 2 ? 2 : 5;
    for (int64_t stride : {1, 2, 3}) {
      for (int64_t rhs : {1, 2}) {
        for (bool reversed : {false, true}) {
          for (const auto& pad : pads) {
            ++seed;
            s.input_spatial = {std::array<int64_t, 3>{1, 2, 5}[seed % 3]};
            s.kernel_spatial = {seed % 2 == 0 ? 4 : 3};
            // High padding enough for one output at least (a kernel
            // larger than the input reads mostly padding).
            const int64_t dilated = (s.input_spatial[0] - 1) * d + 1;
            const int64_t extent = (s.kernel_spatial[0] - 1) * rhs + 1;
            const int64_t hi = std::max(pad[1], extent - dilated - pad[0]);
            s.window = {Win(stride, pad[0], hi, d, rhs, reversed)};
            const std::string plan = Run(s, seed).plan;
            EXPECT_TRUE(plan.rfind("phases=", 0) == 0 || plan.rfind("col2im", 0) == 0)
                << plan << " case " << seed;
            if (plan.find(" zeroed") != std::string::npos) ++zeroed;
            if (plan.rfind("col2im", 0) == 0) ++col2im;
          }
        }
      }
    }
  }
  EXPECT_GT(zeroed, 0);
  EXPECT_GT(col2im, 0);
  EXPECT_LT(col2im, 96);
}

// 2-D phases over every path a phase can take: NHWC f32 with 32 output
// features (the direct kernel where the CPU has it), NCHW (im2col, M minor),
// f64, feature groups, depthwise (the grouped kernel), batch groups, lhs
// dilation in one dimension only, odd sizes, few output features (GEMM +
// col2im, NHWC f32 and NCHW f64), on 1 and 2 threads.
TEST_F(ConvolutionTest, TransposedConvolutionPhases2D) {
  std::vector<ConvSpec> specs;
  ConvSpec nhwc;
  nhwc.batch = 2;
  nhwc.input_features = 5;
  nhwc.output_features = 32;
  nhwc.input_spatial = {5, 4};
  nhwc.kernel_spatial = {4, 3};
  nhwc.window = {Win(1, 2, 2, 2), Win(1, 1, 2, 2)};
  specs.push_back(nhwc);
  ConvSpec nchw = nhwc;
  nchw.output_features = 3;
  nchw.input_labels = "bf01";
  nchw.kernel_labels = "oi01";
  nchw.output_labels = "bf01";
  nchw.window = {Win(2, -1, 3, 3, 1, true), Win(1, 0, 0, 2, 2)};
  specs.push_back(nchw);
  ConvSpec f64 = nhwc;
  f64.type = ElementType::kF64;
  f64.output_features = 3;
  f64.window = {Win(1, 3, 3, 2), Win(3, 1, 1)};  // dilated along one dimension only
  specs.push_back(f64);
  ConvSpec groups = nhwc;
  groups.input_features = 4;
  groups.output_features = 6;
  groups.feature_group_count = 2;
  groups.window = {Win(2, 1, 0, 2, 1), Win(1, 2, 1, 3, 1, true)};
  specs.push_back(groups);
  ConvSpec depthwise = groups;
  depthwise.feature_group_count = 4;
  depthwise.output_features = 8;
  specs.push_back(depthwise);
  ConvSpec batch_groups = nchw;
  batch_groups.batch = 4;
  batch_groups.output_features = 4;
  batch_groups.batch_group_count = 2;
  specs.push_back(batch_groups);
  ConvSpec large_kernel = nhwc;  // the kernel wider than the (dilated) input
  large_kernel.input_spatial = {2, 1};
  large_kernel.kernel_spatial = {5, 4};
  large_kernel.window = {Win(1, 4, 4, 2), Win(2, 3, 3, 2)};
  specs.push_back(large_kernel);
  ConvSpec few_outputs = nhwc;  // GEMM + col2im
  few_outputs.batch = 3;
  few_outputs.output_features = 1;
  few_outputs.window = {Win(2, 2, 1, 2, 1, true), Win(1, -1, 2, 3, 2)};
  specs.push_back(few_outputs);
  ConvSpec few_outputs_nchw = few_outputs;
  few_outputs_nchw.type = ElementType::kF64;
  few_outputs_nchw.input_labels = "bf01";
  few_outputs_nchw.kernel_labels = "oi01";
  few_outputs_nchw.output_labels = "bf01";
  specs.push_back(few_outputs_nchw);
  uint64_t seed = 200;
  int col2im = 0;
  for (const ConvSpec& s : specs) {
    ++seed;
    for (int threads : {1, 2}) {
      SetBlasThreads(threads);
      const std::string plan = Run(s, seed).plan;
      EXPECT_TRUE(plan.rfind("phases=", 0) == 0 || plan.rfind("col2im", 0) == 0) << plan;
      if (plan.rfind("col2im", 0) == 0) ++col2im;
    }
  }
  SetBlasThreads(1);
  EXPECT_GE(col2im, 4);
}

// GEMM + col2im for every output feature count its scatter adds with the
// count known at compile time (1, 2, 3, 4, 8, 16, contiguous) and beside
// them (5, 17, and NCHW's strided features): the same result as the
// evaluator, f32 and f64, odd sizes, overlapping taps (stride 2, 3x3).
TEST_F(ConvolutionTest, TransposedCol2imEveryFeatureCount) {
  uint64_t seed = 300;
  for (int64_t features : {1, 2, 3, 4, 5, 8, 16, 17}) {
    for (bool nchw : {false, true}) {
      ConvSpec s;
      s.type = nchw ? ElementType::kF64 : ElementType::kF32;
      s.batch = 2;
      s.input_features = 24;
      s.output_features = features;
      s.input_spatial = {3, 5};
      s.kernel_spatial = {3, 3};
      s.window = {Win(1, 2, 2, 2), Win(1, 1, 2, 2)};
      if (nchw) {
        s.input_labels = "bf01";
        s.kernel_labels = "oi01";
        s.output_labels = "bf01";
      }
      const std::string plan = Run(s, ++seed).plan;
      // 16 contiguous features and more take the direct kernel's phases.
      if (features < 16 || nchw) {
        EXPECT_EQ(plan.rfind("col2im", 0), 0u) << plan << " features " << features;
      }
    }
  }
}

// The dilation's holes are not input: a tap on one multiplies nothing, as
// in the evaluator (im2col over the dilated input multiplied the holes'
// zeros, so an infinite weight made NaN there). Input [x0, x1] dilated by
// 2 is [x0, _, x1]; a 2-tap window gives [x0*w0, x1*w1]. One input
// feature runs as phases, four as GEMM + col2im.
TEST_F(ConvolutionTest, TransposedSkipsTheDilationHoles) {
  for (int features : {1, 4}) {
    const std::string hlo = absl::StrCat(
        "HloModule t\n\nENTRY e {\n  a = f32[1,2,", features, "]{2,1,0} parameter(0)\n",
        "  b = f32[2,", features, ",1]{2,1,0} parameter(1)\n",
        "  ROOT c = f32[1,2,1]{2,1,0} convolution(a, b), window={size=2 lhs_dilate=2}, "
        "dim_labels=b0f_0io->b0f\n}\n");
    absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(hlo);
    ASSERT_TRUE(module.ok()) << module.status();
    auto plan = PlanConvolution(*(*module)->entry()->root());
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->ToString().rfind(features == 1 ? "phases=" : "col2im", 0), 0u)
        << plan->ToString();
    std::vector<float> input(2 * features, 1.0f);
    std::vector<float> kernel(2 * features, 1.0f);
    kernel[features] = std::numeric_limits<float>::infinity();  // w1, first feature
    std::vector<float> output(2, -1.0f);
    std::vector<uint8_t> scratch(plan->ChosenScratchBytes() + 64);
    RunConvolution(*plan, input.data(), kernel.data(), output.data(), scratch.data());
    EXPECT_EQ(output[0], static_cast<float>(features));
    EXPECT_EQ(output[1], std::numeric_limits<float>::infinity());
  }
}

TEST_F(ConvolutionTest, ZeroSizes) {
  ConvSpec s;
  s.batch = 0;
  s.input_features = 3;
  s.output_features = 2;
  s.input_spatial = {4, 4};
  s.kernel_spatial = {3, 3};
  Run(s, 1);
  s.batch = 2;
  s.input_features = 0;
  Run(s, 3);
  s.input_features = 3;
  s.input_spatial = {0, 4};
  s.window = {Win(1, 2, 2), Win(1)};  // the input is all padding
  Run(s, 4);
}

TEST_F(ConvolutionTest, PlanRejectsMismatchedShapes) {
  Shape in = Shape::Array(ElementType::kF32, {1, 5, 5, 3});
  Shape k = Shape::Array(ElementType::kF32, {3, 3, 3, 4});
  Shape out = Shape::Array(ElementType::kF32, {1, 5, 5, 4});  // should be 3x3 unpadded
  ConvolutionDimensionNumbers dn;
  dn.input_batch_dimension = 0;
  dn.input_feature_dimension = 3;
  dn.input_spatial_dimensions = {1, 2};
  dn.kernel_spatial_dimensions = {0, 1};
  dn.kernel_input_feature_dimension = 2;
  dn.kernel_output_feature_dimension = 3;
  dn.output_batch_dimension = 0;
  dn.output_feature_dimension = 3;
  dn.output_spatial_dimensions = {1, 2};
  Window w(2);
  w[0].size = w[1].size = 3;
  EXPECT_FALSE(PlanConvolution(in, k, out, w, dn, 1, 1).ok());
  EXPECT_TRUE(PlanConvolution(in, k, Shape::Array(ElementType::kF32, {1, 3, 3, 4}), w, dn, 1, 1).ok());
  EXPECT_FALSE(PlanConvolution(in, k, out, w, dn, 2, 2).ok());
}

}  // namespace
}  // namespace xjit::runtime::blas
