// Unit tests of what the fuse pass's in-place growth relies on: the
// Computation methods that reorder instructions and renumber parameters, the
// one-pass unique names (same answers as UniqueInstructionName and
// UniqueComputationName), the pass's `changed` result, and a long chain
// (where the pass used to copy the fused body at every step).
#include "passes/fuse.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/hlo_text/parser.h"
#include "ir/hlo_text/printer.h"
#include "ir/verifier.h"
#include "passes/rewrite_util.h"

namespace xjit {
namespace {

std::unique_ptr<Module> Parse(const std::string& text) {
  auto module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? std::move(*module) : nullptr;
}

std::vector<std::string> Names(const Computation& computation) {
  std::vector<std::string> names;
  for (const auto& instruction : computation.instructions()) names.push_back(instruction->name());
  return names;
}

Instruction* Named(const Computation& computation, const std::string& name) {
  Instruction* instruction = computation.FindInstruction(name);
  EXPECT_NE(instruction, nullptr) << name;
  return instruction;
}

constexpr char kThreeParameters[] = R"(
HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  c = f32[2] parameter(2)
  s = f32[2] add(a, b)
  ROOT t = f32[2] multiply(s, c)
}
)";

TEST(FuseSupportTest, MoveInstructionBefore) {
  auto module = Parse(kThreeParameters);
  ASSERT_NE(module, nullptr);
  Computation& entry = *module->entry();
  entry.MoveInstructionBefore(Named(entry, "c"), Named(entry, "a"));
  EXPECT_EQ(Names(entry), (std::vector<std::string>{"c", "a", "b", "s", "t"}));
  entry.MoveInstructionBefore(Named(entry, "c"), Named(entry, "t"));
  EXPECT_EQ(Names(entry), (std::vector<std::string>{"a", "b", "s", "c", "t"}));
  entry.MoveInstructionBefore(Named(entry, "a"), nullptr);
  EXPECT_EQ(Names(entry), (std::vector<std::string>{"b", "s", "c", "t", "a"}));
  entry.MoveInstructionBefore(Named(entry, "s"), Named(entry, "s"));
  EXPECT_EQ(Names(entry), (std::vector<std::string>{"b", "s", "c", "t", "a"}));
}

TEST(FuseSupportTest, SetParametersRenumbers) {
  auto module = Parse(kThreeParameters);
  ASSERT_NE(module, nullptr);
  Computation& entry = *module->entry();
  Instruction* a = Named(entry, "a");
  Instruction* b = Named(entry, "b");
  Instruction* c = Named(entry, "c");
  entry.SetParameters({c, a, b});
  ASSERT_EQ(entry.parameter_count(), 3);
  EXPECT_EQ(entry.parameter(0), c);
  EXPECT_EQ(entry.parameter(1), a);
  EXPECT_EQ(entry.parameter(2), b);
  EXPECT_EQ(c->attrs().parameter_number, 0);
  EXPECT_EQ(a->attrs().parameter_number, 1);
  EXPECT_EQ(b->attrs().parameter_number, 2);
  // A parameter added unnumbered is registered by SetParameters only.
  auto owned = std::make_unique<Instruction>(Opcode::kParameter, a->shape());
  owned->mutable_attrs()->parameter_number = -1;
  owned->set_name("d");
  Instruction* d = entry.AddInstruction(std::move(owned));
  EXPECT_EQ(entry.parameter_count(), 3);
  entry.SetParameters({a, b, c, d});
  EXPECT_EQ(entry.parameter_count(), 4);
  EXPECT_EQ(entry.parameter(3), d);
  EXPECT_EQ(d->attrs().parameter_number, 3);
}

TEST(FuseSupportTest, OnePassNamesMatchUniqueInstructionName) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  fusion = f32[2] parameter(0)
  fusion.1 = f32[2] negate(fusion)
  fusion.3 = f32[2] negate(fusion.1)
  fusion.01 = f32[2] negate(fusion.3)
  fusion.x = f32[2] negate(fusion.01)
  fusionA = f32[2] negate(fusion.x)
  fusion.2.1 = f32[2] negate(fusionA)
  ROOT other.7 = f32[2] negate(fusion.2.1)
}
)");
  ASSERT_NE(module, nullptr);
  const Computation& entry = *module->entry();
  // Expected by hand: "fusion" is taken, and of fusion.N only 1 and 3 are
  // (fusion.01 and fusion.2.1 are other spellings).
  EXPECT_EQ(UniqueInstructionNameOnePass(entry, "fusion"), "fusion.2");
  EXPECT_EQ(UniqueInstructionNameOnePass(entry, "fusion.3"), "fusion.2");
  EXPECT_EQ(UniqueInstructionNameOnePass(entry, "fusion.5"), "fusion.5");
  EXPECT_EQ(UniqueInstructionNameOnePass(entry, "other.7"), "other.1");
  EXPECT_EQ(UniqueInstructionNameOnePass(entry, "fresh"), "fresh");
  for (const char* base : {"fusion", "fusion.3", "fusion.5", "other.7", "fresh", "fusion.2"}) {
    EXPECT_EQ(UniqueInstructionNameOnePass(entry, base), UniqueInstructionName(entry, base))
        << base;
  }
  EXPECT_EQ(UniqueComputationName(*module, "e"), "e.1");
  EXPECT_EQ(UniqueComputationName(*module, "f"), "f");
}

TEST(FuseSupportTest, UniqueNameAmong) {
  const absl::flat_hash_set<std::string> taken = {"x", "x.1", "y.2"};
  EXPECT_EQ(UniqueNameAmong("x", taken), "x.2");
  EXPECT_EQ(UniqueNameAmong("y.2", taken), "y.1");
  EXPECT_EQ(UniqueNameAmong("z", taken), "z");
}

TEST(FuseTest, ReportsChangeOnlyWhenItFuses) {
  auto module = Parse(kThreeParameters);
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = Fuse().Run(module.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  ASSERT_TRUE(VerifyModule(*module).ok());
  // Everything is fused: a second run finds nothing to do.
  const std::string once = PrintModule(*module);
  changed = Fuse().Run(module.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(PrintModule(*module), once);

  auto nothing = Parse(R"(
HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  ROOT t = (f32[2], f32[2]) tuple(a, b)
}
)");
  ASSERT_NE(nothing, nullptr);
  changed = Fuse().Run(nothing.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
}

// v(i) = op(v(i-1), v(i-2)) for i = 2..n+1 over two parameters: every value
// but the last has two users.
std::string Chain(int n) {
  std::string text = "HloModule chain\nENTRY e {\n  v0 = f32[16] parameter(0)\n"
                     "  v1 = f32[16] parameter(1)\n";
  const char* ops[] = {"add", "multiply", "subtract", "maximum"};
  for (int i = 2; i < n + 2; ++i) {
    absl::StrAppend(&text, i == n + 1 ? "  ROOT " : "  ", "v", i, " = f32[16] ", ops[i % 4], "(v",
                    i - 1, ", v", i - 2, ")\n");
  }
  return absl::StrCat(text, "}\n");
}

// Checks the fusion contract on every fusion of the entry; returns how many
// fusions there are and how many instructions they hold in all.
std::pair<int64_t, int64_t> CheckFusions(const Module& module, const FuseOptions& options) {
  int64_t fusions = 0, fused = 0;
  for (const auto& instruction : module.entry()->instructions()) {
    if (instruction->opcode() == Opcode::kParameter) continue;
    EXPECT_EQ(instruction->opcode(), Opcode::kFusion) << instruction->name();
    if (instruction->opcode() != Opcode::kFusion) continue;
    ++fusions;
    const Computation& body = *instruction->called_computations()[0];
    EXPECT_EQ(instruction->attrs().fusion_kind, FusionKind::kLoop);
    EXPECT_EQ(body.parameter_count(), instruction->operand_count());
    for (int64_t i = 0; i < body.parameter_count(); ++i) {
      EXPECT_EQ(body.parameter(i)->name(), absl::StrCat("param_", i));
      EXPECT_EQ(body.parameter(i)->attrs().parameter_number, i);
      EXPECT_EQ(body.parameter(i)->shape(), instruction->operand(i)->shape());
    }
    const int64_t size = body.instruction_count() - body.parameter_count();
    EXPECT_LE(size, options.max_fusion_size);
    fused += size;
  }
  return {fusions, fused};
}

TEST(FuseTest, ChainBecomesOneFusion) {
  auto module = Parse(Chain(100));
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = Fuse().Run(module.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  ASSERT_TRUE(VerifyModule(*module).ok()) << VerifyModule(*module);
  const auto [fusions, fused] = CheckFusions(*module, FuseOptions());
  EXPECT_EQ(fusions, 1);
  EXPECT_EQ(fused, 100);
  const Instruction* root = module->entry()->root();
  ASSERT_EQ(root->opcode(), Opcode::kFusion);
  ASSERT_EQ(root->operand_count(), 2);
  EXPECT_EQ(root->operand(0)->name(), "v1");
  EXPECT_EQ(root->operand(1)->name(), "v0");
}

// Past max_fusion_size the chain splits; the cheap values at the cuts are
// recomputed in the fusions on both sides, so more than n instructions are
// fused. Every fusion keeps the contract.
TEST(FuseTest, LongChainSplitsIntoFusions) {
  auto module = Parse(Chain(1000));
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = Fuse().Run(module.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  ASSERT_TRUE(VerifyModule(*module).ok()) << VerifyModule(*module);
  const auto [fusions, fused] = CheckFusions(*module, FuseOptions());
  EXPECT_GE(fusions, 8);
  EXPECT_GE(fused, 1000);
}

// An associative scan's up-sweep, `levels` levels over f32[2^levels, 4]:
// each level reads the one before at its even and its odd rows (two index
// maps), so fused whole, the kernel would evaluate the first level's values
// 2^levels times per element it writes.
std::string UpSweep(int levels) {
  int64_t rows = int64_t{1} << levels;
  std::string text = absl::StrCat("HloModule up_sweep\nENTRY e {\n  x0 = f32[", rows,
                                  ",4] parameter(0)\n");
  for (int k = 1; k <= levels; ++k) {
    const int64_t half = rows / 2;
    absl::StrAppend(&text, "  e", k, " = f32[", half, ",4] slice(x", k - 1, "), slice={[0:", rows,
                    ":2], [0:4]}\n", "  o", k, " = f32[", half, ",4] slice(x", k - 1,
                    "), slice={[1:", rows, ":2], [0:4]}\n", "  m", k, " = f32[", half,
                    ",4] multiply(e", k, ", o", k, ")\n", k == levels ? "  ROOT " : "  ", "x", k,
                    " = f32[", half, ",4] add(m", k, ", o", k, ")\n");
    rows = half;
  }
  return absl::StrCat(text, "}\n");
}

// Fusion stops where a kernel would evaluate a value more than
// max_index_evaluations times (fuse.cc, IndexEvaluations): the up-sweep of
// 10 levels (2^10 evaluations fused whole) splits into several fusions, and
// without the bound it is one.
TEST(FuseTest, UpSweepSplitsWhereValuesWouldBeEvaluatedTooOften) {
  for (const int64_t bound : {int64_t{32}, int64_t{1} << 40}) {
    SCOPED_TRACE(absl::StrCat("max_index_evaluations ", bound));
    auto module = Parse(UpSweep(10));
    ASSERT_NE(module, nullptr);
    FuseOptions options;
    options.max_index_evaluations = bound;
    absl::StatusOr<bool> changed = Fuse(options).Run(module.get());
    ASSERT_TRUE(changed.ok()) << changed.status();
    ASSERT_TRUE(VerifyModule(*module).ok()) << VerifyModule(*module);
    const auto [fusions, fused] = CheckFusions(*module, options);
    if (bound == 32) {
      EXPECT_GE(fusions, 2);  // About five levels per kernel (2^5).
    } else {
      EXPECT_EQ(fusions, 1);
    }
    EXPECT_GE(fused, 40);
  }
}

// A fusion given in the module whose body ignores a parameter: a producer of
// that operand is read nowhere in the body, so it is evaluated no times
// (the count once looked its sources up and threw).
TEST(FuseTest, ProducerOfAnUnusedFusionParameter) {
  auto module = Parse(R"(
HloModule unused
body {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  s = f32[4] slice(a), slice={[0:8:2]}
  ROOT n = f32[4] negate(s)
}
ENTRY e {
  x = f32[8] parameter(0)
  y = f32[8] exponential(x)
  z = f32[8] negate(x)
  ROOT f = f32[4] fusion(z, y), kind=kLoop, calls=body
}
)");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = Fuse().Run(module.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  ASSERT_TRUE(VerifyModule(*module).ok()) << VerifyModule(*module);
}

// A 3x3 stencil reads its padded input through nine maps. Data movement is
// not bounded: the stencil of a parameter is one fusion. A computed value
// read through the nine maps is evaluated nine times per element: past the
// default bound of 8 it is computed once in a kernel of its own, within a
// bound of 9 it stays in the stencil's.
TEST(FuseTest, NinePointStencilRecomputesOnlyWithinTheBound) {
  for (const bool computed : {false, true}) {
    std::string text = absl::StrCat(
        "HloModule stencil\nENTRY e {\n  x = f32[32,32] parameter(0)\n",
        "  z = f32[] constant(0)\n",
        computed ? "  t = f32[32,32] tanh(x)\n  p = f32[34,34] pad(t, z), padding=1_1x1_1\n"
                 : "  p = f32[34,34] pad(x, z), padding=1_1x1_1\n");
    std::string sum;
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) {
        absl::StrAppend(&text, "  s", i, j, " = f32[32,32] slice(p), slice={[", i, ":", i + 32,
                        "], [", j, ":", j + 32, "]}\n");
        const std::string name = absl::StrCat("s", i, j);
        if (sum.empty()) {
          sum = name;
        } else {
          const std::string next = absl::StrCat("a", i, j);
          absl::StrAppend(&text, i == 2 && j == 2 ? "  ROOT " : "  ", next,
                          " = f32[32,32] add(", sum, ", ", name, ")\n");
          sum = next;
        }
      }
    }
    absl::StrAppend(&text, "}\n");
    for (const int64_t bound : {int64_t{8}, int64_t{9}}) {
      SCOPED_TRACE(absl::StrCat(computed ? "tanh" : "parameter", ", bound ", bound));
      auto module = Parse(text);
      ASSERT_NE(module, nullptr);
      FuseOptions options;
      options.max_index_evaluations = bound;
      absl::StatusOr<bool> changed = Fuse(options).Run(module.get());
      ASSERT_TRUE(changed.ok()) << changed.status();
      const auto [fusions, fused] = CheckFusions(*module, options);
      EXPECT_EQ(fusions, computed && bound == 8 ? 2 : 1) << PrintModule(*module);
    }
  }
}

// Copies whose names collide in a grown body (sources named like the body's
// parameters, a cheap producer copied into the same body twice) keep their
// sources' names while the body grows; the pass ends with every name in
// every computation unique and the parameters named param_<i>.
TEST(FuseTest, CollidingCopyNamesEndUnique) {
  auto module = Parse(R"(
HloModule collide
ENTRY e {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  param_1 = f32[8] add(a, b)
  param_0 = f32[8] multiply(param_1, a)
  c = f32[] constant(2)
  k = f32[8] broadcast(c), dimensions={}
  x = f32[8] add(param_0, k)
  y = f32[8] multiply(x, k)
  param_2 = f32[8] subtract(y, param_1)
  ROOT z = f32[8] maximum(param_2, k)
}
)");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = Fuse().Run(module.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  ASSERT_TRUE(VerifyModule(*module).ok()) << VerifyModule(*module);
  const auto [fusions, fused] = CheckFusions(*module, FuseOptions());
  EXPECT_EQ(fusions, 1);
  EXPECT_GE(fused, 8);
  for (const auto& computation : module->computations()) {
    const std::vector<std::string> names = Names(*computation);
    const absl::flat_hash_set<std::string> distinct(names.begin(), names.end());
    EXPECT_EQ(distinct.size(), names.size()) << PrintModule(*module);
  }
}

// Rule 6: a scatter takes the producers of its indices and updates (a
// gather of embedding rows times per-row weights, the weights' broadcast
// also read by a second scatter), never the producer of the operand it
// starts from (that one would be recomputed where the output is updated in
// place); a scatter fusion is no producer.
TEST(FuseTest, ScatterTakesItsUpdatesNotItsStart) {
  auto module = Parse(R"(
HloModule segment_sums
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  table = f32[10,4] parameter(0)
  ids = s32[6,1] parameter(1)
  w = f32[6] parameter(2)
  seg = s32[6,1] parameter(3)
  rows = f32[6,4] gather(table, ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
  wb = f32[6,4] broadcast(w), dimensions={0}
  scaled = f32[6,4] multiply(rows, wb)
  zero = f32[] constant(0)
  start = f32[3,4] broadcast(zero), dimensions={}
  bags = f32[3,4] scatter(start, seg, scaled), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  back = f32[10,4] broadcast(zero), dimensions={}
  grad = f32[10,4] scatter(back, ids, wb), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  neg = f32[3,4] negate(bags)
  ROOT t = (f32[3,4], f32[10,4]) tuple(neg, grad)
}
)");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = Fuse().Run(module.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  ASSERT_TRUE(VerifyModule(*module).ok()) << VerifyModule(*module);
  int scatter_fusions = 0;
  for (const auto& instruction : module->entry()->instructions()) {
    if (instruction->opcode() != Opcode::kFusion) continue;
    const Computation& body = *instruction->called_computations()[0];
    absl::flat_hash_set<Opcode> opcodes;
    for (const auto& inner : body.instructions()) opcodes.insert(inner->opcode());
    if (body.root()->opcode() != Opcode::kScatter) {
      EXPECT_FALSE(opcodes.contains(Opcode::kScatter)) << PrintModule(*module);
      continue;
    }
    ++scatter_fusions;
    EXPECT_EQ(body.root()->operand(0)->opcode(), Opcode::kParameter) << PrintModule(*module);
    EXPECT_TRUE(opcodes.contains(Opcode::kBroadcast)) << PrintModule(*module);  // wb, twice
    if (body.root()->shape().dimensions(0) == 3) {
      EXPECT_TRUE(opcodes.contains(Opcode::kGather)) << PrintModule(*module);
      EXPECT_TRUE(opcodes.contains(Opcode::kMultiply)) << PrintModule(*module);
    }
    EXPECT_EQ(instruction->attrs().fusion_kind, FusionKind::kLoop);
  }
  EXPECT_EQ(scatter_fusions, 2) << PrintModule(*module);
}

// Rule 6: a concatenate stays out of scatter fusions: a graph network's
// edges with one self-loop per node (senders and receivers, each
// concatenated with an iota) index a histogram and a gather-scatter; the
// concatenates are computed once, vectorised, instead of choosing a part
// for every update in the scatters' scalar loops.
TEST(FuseTest, ScatterLeavesConcatenatesOut) {
  auto module = Parse(R"(
HloModule self_loops
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
add_s32 {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT s = s32[] add(x, y)
}
ENTRY e {
  nodes = f32[8,4] parameter(0)
  senders = s32[20] parameter(1)
  receivers = s32[20] parameter(2)
  self = s32[8] iota(), iota_dimension=0
  s = s32[28] concatenate(senders, self), dimensions={0}
  r = s32[28] concatenate(receivers, self), dimensions={0}
  s1 = s32[28,1] reshape(s)
  r1 = s32[28,1] reshape(r)
  rows = f32[28,4] gather(nodes, s1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
  zero = f32[] constant(0)
  start = f32[8,4] broadcast(zero), dimensions={}
  sums = f32[8,4] scatter(start, r1, rows), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  izero = s32[] constant(0)
  one = s32[] constant(1)
  counts0 = s32[8] broadcast(izero), dimensions={}
  ones = s32[28] broadcast(one), dimensions={}
  counts = s32[8] scatter(counts0, r1, ones), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_s32
  ROOT t = (f32[8,4], s32[8]) tuple(sums, counts)
}
)");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = Fuse().Run(module.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  ASSERT_TRUE(VerifyModule(*module).ok()) << VerifyModule(*module);
  int scatter_fusions = 0;
  int concatenates = 0;
  for (const auto& instruction : module->entry()->instructions()) {
    concatenates += instruction->opcode() == Opcode::kConcatenate ? 1 : 0;
    if (instruction->opcode() != Opcode::kFusion) continue;
    const Computation& body = *instruction->called_computations()[0];
    bool has_concatenate = false;
    for (const auto& inner : body.instructions()) {
      has_concatenate = has_concatenate || inner->opcode() == Opcode::kConcatenate;
    }
    concatenates += has_concatenate ? 1 : 0;
    if (body.root()->opcode() != Opcode::kScatter) continue;
    ++scatter_fusions;
    EXPECT_FALSE(has_concatenate) << PrintModule(*module);
  }
  EXPECT_EQ(scatter_fusions, 2) << PrintModule(*module);
  EXPECT_EQ(concatenates, 2) << PrintModule(*module);
}

}  // namespace
}  // namespace xjit
