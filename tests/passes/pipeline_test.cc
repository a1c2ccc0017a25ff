// Unit tests of the pass infrastructure: the pipeline runner's options
// (disable by name, only, dump, verify) and the rewrite utilities.
#include "passes/pipeline.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/hlo_text/parser.h"
#include "ir/hlo_text/printer.h"
#include "ir/verifier.h"
#include "passes/rewrite_util.h"

namespace xjit {
namespace {

constexpr const char* kModule = R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  z = f32[] constant(-0)
  bz = f32[4] broadcast(z), dimensions={}
  ROOT r = f32[4] add(x, bz)
}
)";

std::unique_ptr<Module> Parse(const char* text) {
  auto module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return std::move(*module);
}

TEST(PipelineTest, ListsPassesInOrder) {
  const std::vector<std::string> names = DefaultPipelinePassNames();
  ASSERT_GE(names.size(), 4u);
  EXPECT_EQ(names.front(), "canonicalize");
  auto position = [&](const std::string& name) {
    return std::find(names.begin(), names.end(), name) - names.begin();
  };
  EXPECT_LT(position("dce"), position("assign-layouts"));
  EXPECT_LT(position("assign-layouts"), position("fuse"));
  EXPECT_LT(position("fuse"), position("allocate-buffers"));
  EXPECT_LT(position("allocate-buffers"), static_cast<int64_t>(names.size()));
}

TEST(PipelineTest, SimplifiesByDefault) {
  auto module = Parse(kModule);
  std::vector<PassRecord> records;
  ASSERT_TRUE(RunDefaultPipeline(module.get(), {}, &records).ok());
  // x + (-0.0) is x: the root becomes the parameter.
  EXPECT_EQ(module->entry()->root()->opcode(), Opcode::kParameter);
  EXPECT_EQ(records.size(), DefaultPipelinePassNames().size());
}

TEST(PipelineTest, DisabledPassDoesNotRun) {
  auto module = Parse(kModule);
  PipelineOptions options;
  // Fusion would wrap the add into a fusion computation; keep it visible.
  options.disabled_passes = {"simplify-algebra", "fold-constants", "fuse"};
  std::vector<PassRecord> records;
  ASSERT_TRUE(RunDefaultPipeline(module.get(), options, &records).ok());
  EXPECT_EQ(module->entry()->root()->opcode(), Opcode::kAdd) << PrintModule(*module);
  for (const PassRecord& record : records) {
    if (record.name == "simplify-algebra") {
      EXPECT_FALSE(record.ran);
    }
    if (record.name == "dce") {
      EXPECT_TRUE(record.ran);
    }
  }
}

TEST(PipelineTest, OnlyPasses) {
  auto module = Parse(kModule);
  PipelineOptions options;
  options.only_passes = {"dce"};
  std::vector<PassRecord> records;
  ASSERT_TRUE(RunDefaultPipeline(module.get(), options, &records).ok());
  int ran = 0;
  for (const PassRecord& record : records) ran += record.ran;
  EXPECT_EQ(ran, 1);  // dce runs once in the default pipeline
  EXPECT_EQ(module->entry()->root()->opcode(), Opcode::kAdd);
}

TEST(PipelineTest, UnknownPassNameIsAnError) {
  auto module = Parse(kModule);
  PipelineOptions options;
  options.disabled_passes = {"simplify-algebr"};
  absl::Status status = RunDefaultPipeline(module.get(), options);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("simplify-algebr"), std::string::npos);
  EXPECT_FALSE(CreatePass("no-such-pass").ok());
}

TEST(PipelineTest, DumpsEveryPass) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("xjit_pipeline_dump_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  auto module = Parse(kModule);
  PipelineOptions options;
  options.dump_dir = dir.string();
  options.disabled_passes = {"cse"};
  ASSERT_TRUE(RunDefaultPipeline(module.get(), options).ok());
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    files.push_back(entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  // The input, then one file per pass that ran (all but cse).
  ASSERT_EQ(files.size(), DefaultPipelinePassNames().size());
  EXPECT_EQ(files[0], "00-input.hlo");
  EXPECT_EQ(files[1], "01-canonicalize.hlo");
  // Each dump parses back.
  for (const std::string& file : files) {
    std::ifstream in(dir / file);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_TRUE(ParseHloModule(text.str()).ok()) << file;
  }
  std::filesystem::remove_all(dir);
}

TEST(PipelineTest, VerifierCatchesABrokenPass) {
  auto module = Parse(kModule);
  PipelineOptions options;
  options.verify = true;
  PassRunner runner(module.get(), options);
  FunctionPass broken("break-shapes", [](Module* m) -> absl::StatusOr<bool> {
    *m->entry()->root()->mutable_shape() = Shape::Array(ElementType::kF32, {5});
    return true;
  });
  absl::StatusOr<bool> result = runner.Run(broken);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(result.status().message().find("break-shapes"), std::string::npos);
}

TEST(RewriteUtilTest, UniqueNames) {
  auto module = Parse(kModule);
  Computation* entry = module->entry();
  EXPECT_EQ(UniqueInstructionName(*entry, "y"), "y");
  EXPECT_EQ(UniqueInstructionName(*entry, "x"), "x.1");
  EXPECT_EQ(UniqueComputationName(*module, "e"), "e.1");
}

// The computation's name index and its per-stem memory (issue 26) follow
// additions, removals and renames: every answer is the smallest free name,
// the one-pass search's answer.
TEST(RewriteUtilTest, UniqueNamesFollowRemovalsAndRenames) {
  auto module = Parse(kModule);
  Computation* entry = module->entry();
  auto add = [&] {
    Instruction* c = AddConstant(entry, Literal::Scalar(ElementType::kF32, 1), "constant");
    EXPECT_EQ(entry->FindInstruction(c->name()), c);
    return c;
  };
  auto expect_next = [&](const char* want) {
    EXPECT_EQ(UniqueInstructionName(*entry, "constant"), want);
    EXPECT_EQ(UniqueInstructionNameOnePass(*entry, "constant"), want);
  };
  std::vector<Instruction*> c;
  for (int i = 0; i < 5; ++i) c.push_back(add());
  EXPECT_EQ(c[0]->name(), "constant");
  EXPECT_EQ(c[4]->name(), "constant.4");
  entry->RemoveInstruction(c[2]);  // constant.2 is free again
  EXPECT_EQ(entry->FindInstruction("constant.2"), nullptr);
  expect_next("constant.2");
  c[1]->set_name("renamed");  // so is constant.1
  EXPECT_EQ(entry->FindInstruction("constant.1"), nullptr);
  EXPECT_EQ(entry->FindInstruction("renamed"), c[1]);
  expect_next("constant.1");
  c[1]->set_name("constant.2");  // constant.2 taken again by a rename
  expect_next("constant.1");
  EXPECT_EQ(add()->name(), "constant.1");
  expect_next("constant.5");
  // Two instructions with one name (a rewrite in progress): found while
  // either has it.
  c[3]->set_name("constant.4");
  EXPECT_EQ(entry->FindInstruction("constant.4"), c[3]);
  EXPECT_EQ(entry->FindInstruction("constant.3"), nullptr);
  expect_next("constant.3");
  entry->RemoveInstruction(c[3]);
  EXPECT_EQ(entry->FindInstruction("constant.4"), c[4]);
  entry->RemoveInstruction(c[4]);
  EXPECT_EQ(entry->FindInstruction("constant.4"), nullptr);
  expect_next("constant.3");
}

TEST(RewriteUtilTest, ReplaceRequiresEqualShapes) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  x = f32[4]{0} parameter(0)
  y = f32[2,2]{1,0} parameter(1)
  ROOT r = f32[4]{0} negate(x)
}
)");
  Computation* entry = module->entry();
  Instruction* x = entry->parameter(0);
  Instruction* y = entry->parameter(1);
  EXPECT_FALSE(ReplaceInstruction(entry->root(), y));
  EXPECT_TRUE(ReplaceInstruction(entry->root(), x));
  EXPECT_EQ(entry->root(), x);
  EXPECT_EQ(entry->instruction_count(), 2);  // the negate is gone
}

TEST(RewriteUtilTest, DeadCodeKeepsSideEffects) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  n = f32[4] negate(x)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r = f32[4] rng(lo, hi), distribution=rng_uniform
  ROOT a = f32[4] abs(x)
}
)");
  EXPECT_EQ(RemoveDeadInstructions(module->entry()), 1);  // only the negate
  EXPECT_EQ(module->entry()->FindInstruction("n"), nullptr);
  EXPECT_NE(module->entry()->FindInstruction("r"), nullptr);
  EXPECT_TRUE(HasSideEffectDeep(*module->entry()->FindInstruction("r")));
}

TEST(RewriteUtilTest, AddInstructionInfersShapeAndRejectsBadOnes) {
  auto module = Parse(kModule);
  Computation* entry = module->entry();
  NewInstruction spec;
  spec.opcode = Opcode::kMultiply;
  spec.operands = {entry->parameter(0), entry->parameter(0)};
  auto product = AddInstruction(entry, spec);
  ASSERT_TRUE(product.ok()) << product.status();
  EXPECT_EQ((*product)->shape().ToString(), "f32[4]{0}");
  EXPECT_EQ((*product)->name(), "multiply");
  const int64_t count = entry->instruction_count();
  spec.operands = {entry->parameter(0), entry->FindInstruction("z")};
  EXPECT_FALSE(AddInstruction(entry, spec).ok());
  EXPECT_EQ(entry->instruction_count(), count);
}

TEST(RewriteUtilTest, InlineCall) {
  auto module = Parse(R"(
HloModule m
callee {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
}
ENTRY e {
  x = f32[4] parameter(0)
  ROOT c = f32[4] call(x), to_apply=callee
}
)");
  Instruction* call = module->entry()->root();
  ASSERT_TRUE(InlineCall(call).ok());
  module->entry()->SortTopologically();
  EXPECT_EQ(module->entry()->root()->opcode(), Opcode::kNegate);
  EXPECT_TRUE(VerifyModule(*module).ok()) << VerifyModule(*module);
}


// A callee whose parameter and root differ from the call's operand and
// result only in layout (JAX's linalg modules): inlined through copies.
TEST(RewriteUtilTest, InlineCallRelayout) {
  auto module = Parse(R"(
HloModule m
callee {
  a = f32[2,3]{1,0} parameter(0)
  ROOT n = f32[2,3]{1,0} negate(a)
}
ENTRY e {
  x = f32[2,3]{0,1} parameter(0)
  ROOT c = f32[2,3]{0,1} call(x), to_apply=callee
}
)");
  Instruction* call = module->entry()->root();
  ASSERT_TRUE(InlineCall(call).ok());
  module->entry()->SortTopologically();
  const Instruction* root = module->entry()->root();
  ASSERT_EQ(root->opcode(), Opcode::kCopy);
  EXPECT_EQ(root->shape().ToString(true), "f32[2,3]{0,1}");
  ASSERT_EQ(root->operand(0)->opcode(), Opcode::kNegate);
  ASSERT_EQ(root->operand(0)->operand(0)->opcode(), Opcode::kCopy);
  EXPECT_EQ(root->operand(0)->operand(0)->shape().ToString(true), "f32[2,3]{1,0}");
  EXPECT_TRUE(VerifyModule(*module).ok()) << VerifyModule(*module);
}
}  // namespace
}  // namespace xjit
