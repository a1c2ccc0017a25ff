// Unit tests of the HLO text printer: the canonical form of a hand-written
// module, and the fixed point print(parse(print(parse(m)))) == print(parse(m))
// on modules that exercise every attribute kind.
#include "ir/hlo_text/printer.h"

#include <string>

#include "gtest/gtest.h"
#include "ir/hlo_text/parser.h"

namespace xjit {
namespace {

std::string PrintParsed(absl::string_view text) {
  auto module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().message();
  if (!module.ok()) return "";
  return PrintModule(**module);
}

void ExpectFixedPoint(absl::string_view text) {
  std::string first = PrintParsed(text);
  ASSERT_FALSE(first.empty());
  std::string second = PrintParsed(first);
  EXPECT_EQ(first, second);
}

TEST(HloPrinterTest, CanonicalForm) {
  std::string printed = PrintParsed(R"(
HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY main {
  p0 = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(p0, z), dimensions={0}, to_apply=add, metadata={op_name="x"}
}
)");
  EXPECT_EQ(printed,
            "HloModule m, entry_computation_layout={(f32[2,3]{1,0})->f32[3]{0}}\n"
            "\n"
            "%add (a: f32[], b: f32[]) -> f32[] {\n"
            "  %a = f32[] parameter(0)\n"
            "  %b = f32[] parameter(1)\n"
            "  ROOT %s = f32[] add(f32[] %a, f32[] %b)\n"
            "}\n"
            "\n"
            "ENTRY %main (p0: f32[2,3]{1,0}) -> f32[3]{0} {\n"
            "  %p0 = f32[2,3]{1,0} parameter(0)\n"
            "  %z = f32[] constant(0)\n"
            "  ROOT %r = f32[3]{0} reduce(f32[2,3]{1,0} %p0, f32[] %z), dimensions={0}, "
            "to_apply=%add, metadata={op_name=\"x\"}\n"
            "}\n");
}

TEST(HloPrinterTest, AttributesPrintCanonically) {
  auto module = ParseHloModule(R"(
ENTRY e {
  x = f32[1,5,5,2] parameter(0)
  k = f32[3,3,2,4] parameter(1)
  c = f32[1,3,3,4] convolution(x, k), window={size=3x3 pad=0_0x0_0 stride=1x1}, dim_labels=b01f_01io->b01f
  s = f32[1,2,5,2] slice(x), slice={[0:1], [0:4:2], [0:5], [0:2]}
  ROOT p = f32[1,3,9,4] pad(c, f32[] constant(0)), padding=0_0x0_0x1_2_2x0_0
})");
  ASSERT_TRUE(module.ok()) << module.status().message();
  EXPECT_EQ(PrintInstruction(*(*module)->entry()->FindInstruction("c")),
            "%c = f32[1,3,3,4]{3,2,1,0} convolution(f32[1,5,5,2]{3,2,1,0} %x, "
            "f32[3,3,2,4]{3,2,1,0} %k), window={size=3x3}, dim_labels=b01f_01io->b01f");
  EXPECT_EQ(PrintInstruction(*(*module)->entry()->FindInstruction("s")),
            "%s = f32[1,2,5,2]{3,2,1,0} slice(f32[1,5,5,2]{3,2,1,0} %x), "
            "slice={[0:1], [0:4:2], [0:5], [0:2]}");
  EXPECT_EQ(PrintInstruction(*(*module)->entry()->root()),
            "%p = f32[1,3,9,4]{3,2,1,0} pad(f32[1,3,3,4]{3,2,1,0} %c, f32[] %constant.1), "
            "padding=0_0_0x0_0_0x1_2_2x0_0_0");
}

TEST(HloPrinterTest, FixedPointOnManyAttributeKinds) {
  ExpectFixedPoint(R"(
HloModule m, is_scheduled=true, replica_count=2, input_output_alias={ {0}: (0, {}, must-alias) }, frontend_attributes={k="v"}
cmp { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT lt = pred[] compare(a, b), direction=LT, type=TOTALORDER }
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
cond { t = (s32[]) parameter(0)  ROOT c = pred[] constant(false) }
body { t = (s32[]) parameter(0)  g = s32[] get-tuple-element(t), index=0  ROOT c = (s32[]) tuple(g) }
ENTRY e {
  p = f32[4,4]{0,1:T(2,2)S(1)} parameter(0)
  i = s32[3,1] parameter(1)
  u = f32[3,4] parameter(2)
  io = s32[4,4] iota(), iota_dimension=1
  b = f32[2,4,4] broadcast(p), dimensions={1,2}
  so = f32[4,4] sort(p), dimensions={1}, is_stable=true, to_apply=cmp
  tk = (f32[4,2], s32[4,2]) topk(p), k=2, largest=true
  ff = c64[4,4] fft(c64[4,4] convert(p)), fft_type=IFFT, fft_length={4}
  ts = f32[4,4] triangular-solve(p, p), left_side=true, lower=true, transpose_a=ADJOINT
  bn = f32[4,4] batch-norm-inference(p, f32[4] parameter(3), f32[4] parameter(4), f32[4] parameter(5), f32[4] parameter(6)), epsilon=0.001, feature_index=1
  rb = (u64[2], u32[4]) rng-bit-generator(u64[2] parameter(7)), algorithm=rng_philox
  w = (s32[]) while((s32[]) tuple(s32[] constant(0))), condition=cond, body=body
  cc = f32[4] custom-call(p), custom_call_target="foo\"bar", api_version=API_VERSION_TYPED_FFI, backend_config={"x": [1, {"y": 2}]}, literal=s32[2]{0} {1, 2}
  fu = f32[4,4] fusion(p), kind=kLoop, calls={ x = f32[4,4] parameter(0)  ROOT n = f32[4,4] negate(x) }
  g = f32[3,4] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
  sc = f32[4,4] scatter(p, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ar = f32[4,4] all-reduce(p), replica_groups=[1,2]<=[2], channel_id=1, to_apply=add
  rw = f32[2,2] reduce-window(p, f32[] constant(-inf)), window={size=2x2 stride=2x2}, to_apply=add
  d = f32[4,4] dot(p, p), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,default}
  c = f32[4] constant({1.5, nan, -inf, 1e-30})
  ROOT r = f32[4,4] copy(p), control-predecessors={fu, cc}, sharding={devices=[2,1]0,1}
}
)");
}

// In module text a dynamic dimension's size is its bound: a `literal=` with
// a bounded shape prints that shape as written, `<=` included.
TEST(HloPrinterTest, DynamicShapedLiteralAttributeKeepsItsBound) {
  const std::string printed = PrintParsed(R"(
ENTRY e {
  p = f32[4] parameter(0)
  ROOT cc = f32[4] custom-call(p), custom_call_target="t", literal=(f32[<=4]{0} {1, 2, 3, 4}, s32[] 5)
}
)");
  EXPECT_NE(printed.find("literal=(f32[<=4]{0} {1, 2, 3, 4}, s32[] 5)"), std::string::npos)
      << printed;
  ExpectFixedPoint(printed);
}

}  // namespace
}  // namespace xjit
