// The verifier against the external corpora (../shared/corpus; skipped when
// absent):
//  - every StableHLO interpreter case verifies (they are all valid programs);
//  - robustness: every module of both corpora, with each of a set of
//    corruptions applied to all of its instructions (out-of-range attribute
//    indices, negative sizes, dropped computations, reordered operands...),
//    is verified without crashing; most corruptions must be reported.
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/hlo_text/parser.h"
#include "ir/verifier.h"

namespace xjit {
namespace {

namespace fs = std::filesystem;

fs::path CorpusDir(const std::string& name) {
  return fs::path(XJIT_SHARED_DIR) / "corpus" / name;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<fs::path> HloFiles(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".hlo") continue;
    if (name.size() > 9 && name.substr(name.size() - 9) == ".tmpl.hlo") continue;
    files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(VerifierCorpusTest, StablehloInterpreterCasesVerify) {
  const fs::path dir = CorpusDir("stablehlo-interpret");
  if (!fs::exists(dir)) GTEST_SKIP() << "no corpus at " << dir;
  int verified = 0;
  for (const fs::path& path : HloFiles(dir)) {
    auto module = ParseHloModule(ReadFile(path), path.filename().string());
    if (!module.ok()) continue;  // the parser's tests report these
    absl::Status status = VerifyModule(**module);
    EXPECT_TRUE(status.ok()) << path.filename() << ": " << status.message();
    if (status.ok()) ++verified;
  }
  EXPECT_GT(verified, 400);
}

using Corruption = std::function<void(Module*, Instruction*)>;

std::vector<std::pair<std::string, Corruption>> Corruptions() {
  return {
      {"dimension out of range",
       [](Module*, Instruction* i) { i->mutable_attrs()->dimensions.push_back(99); }},
      {"negative dimension", [](Module*, Instruction* i) { i->mutable_attrs()->dimensions = {-1}; }},
      {"tuple index", [](Module*, Instruction* i) { i->mutable_attrs()->tuple_index = 1000; }},
      {"attributes cleared",
       [](Module*, Instruction* i) {
         InstructionAttributes* a = i->mutable_attrs();
         const int64_t number = a->parameter_number;
         *a = InstructionAttributes();
         a->parameter_number = number;  // keep the parameter table consistent
       }},
      {"window and slices garbage",
       [](Module*, Instruction* i) {
         InstructionAttributes* a = i->mutable_attrs();
         for (auto& w : a->window) w.stride = 0;
         for (auto& s : a->slice) s.limit = INT64_MAX;
         for (auto& p : a->padding) p.low = INT64_MIN;
         a->slice_sizes.push_back(-5);
         a->fft_length.push_back(INT64_MAX);
       }},
      {"dimension numbers garbage",
       [](Module*, Instruction* i) {
         InstructionAttributes* a = i->mutable_attrs();
         a->dot_dimension_numbers.lhs_contracting_dimensions.push_back(77);
         a->gather_dimension_numbers.index_vector_dim = -1;
         a->scatter_dimension_numbers.update_window_dims.push_back(INT64_MIN);
         a->convolution_dimension_numbers.output_batch_dimension = 1000;
         a->feature_group_count = 0;
       }},
      {"negative size",
       [](Module*, Instruction* i) {
         if (i->shape().IsArray() && i->shape().rank() > 0) i->mutable_shape()->set_dimensions(0, -7);
       }},
      {"huge size",
       [](Module*, Instruction* i) {
         if (i->shape().IsArray() && i->shape().rank() > 0) {
           i->mutable_shape()->set_dimensions(0, INT64_MAX);
         }
       }},
      {"shape becomes a token", [](Module*, Instruction* i) { *i->mutable_shape() = Shape::Token(); }},
      {"called computations dropped",
       [](Module*, Instruction* i) { i->set_called_computations({}); }},
      {"called computation replaced by the entry",
       [](Module* m, Instruction* i) {
         std::vector<Computation*> called = i->called_computations();
         for (auto& c : called) c = m->entry();
         i->set_called_computations(called);
       }},
      {"operands reversed",
       [](Module*, Instruction* i) {
         const int64_t n = i->operand_count();
         std::vector<Instruction*> ops = i->operands();
         for (int64_t k = 0; k < n; ++k) i->ReplaceOperand(k, ops[n - 1 - k]);
       }},
      {"operand is the instruction itself",
       [](Module*, Instruction* i) {
         if (i->operand_count() > 0) i->ReplaceOperand(0, i);
       }},
      {"layout broken",
       [](Module*, Instruction* i) {
         if (i->shape().IsArray() && i->shape().has_layout()) {
           i->mutable_shape()->mutable_layout()->minor_to_major.push_back(5);
         }
       }},
  };
}

TEST(VerifierCorpusTest, CorruptedModulesNeverCrash) {
  std::vector<fs::path> files;
  for (const std::string corpus : {"xla-tests", "stablehlo-interpret"}) {
    const fs::path dir = CorpusDir(corpus);
    if (!fs::exists(dir)) continue;
    for (const fs::path& path : HloFiles(dir)) files.push_back(path);
  }
  if (files.empty()) GTEST_SKIP() << "no corpus under " << XJIT_SHARED_DIR;
  const auto corruptions = Corruptions();
  std::vector<int> rejected(corruptions.size(), 0), applied(corruptions.size(), 0);
  for (const fs::path& path : files) {
    const std::string text = ReadFile(path);
    for (size_t k = 0; k < corruptions.size(); ++k) {
      auto module = ParseHloModule(text, path.filename().string());
      if (!module.ok() || !VerifyModule(**module).ok()) break;
      for (const auto& computation : (*module)->computations()) {
        for (const auto& instruction : computation->instructions()) {
          corruptions[k].second(module->get(), instruction.get());
        }
      }
      ++applied[k];
      if (!VerifyModule(**module).ok()) ++rejected[k];
    }
  }
  for (size_t k = 0; k < corruptions.size(); ++k) {
    std::printf("%-45s rejected %d of %d\n", corruptions[k].first.c_str(), rejected[k], applied[k]);
  }
  // Corruptions that break every module (each has a root with a shape, and
  // every module has at least one array or operand) must always be caught.
  for (const std::string must : {"shape becomes a token", "negative size", "huge size"}) {
    for (size_t k = 0; k < corruptions.size(); ++k) {
      if (corruptions[k].first != must) continue;
      EXPECT_GT(rejected[k], applied[k] * 9 / 10) << must;
    }
  }
}

}  // namespace
}  // namespace xjit
