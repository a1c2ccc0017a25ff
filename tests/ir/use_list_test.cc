// The bookkeeping of uses and of a computation's instruction list
// (ir/instruction.h, ir/computation.h): operands and users stay in step
// through AppendOperand, ReplaceOperand, ReplaceAllUsesWith and
// RemoveInstruction, for narrow instructions and for wide ones (more than
// Instruction::kIndexedOperands operands, which keep an operand index), and
// removals keep the order of what remains. WideTupleRewritesAreLinear guards
// issue 30's quadratic compile of wide root tuples by comparing the work of
// two widths in the same run, not against a fixed time.
#include <chrono>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/computation.h"
#include "ir/instruction.h"

namespace xjit {
namespace {

class UseListTest : public ::testing::Test {
 protected:
  Instruction* Add(Opcode opcode, const std::string& name, std::vector<Instruction*> operands = {}) {
    auto owned = std::make_unique<Instruction>(opcode, Shape::Scalar(ElementType::kF32));
    if (opcode == Opcode::kParameter) owned->mutable_attrs()->parameter_number = parameters_++;
    owned->set_name(name);
    Instruction* instruction = computation_.AddInstruction(std::move(owned));
    for (Instruction* operand : operands) instruction->AppendOperand(operand);
    return instruction;
  }

  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& instruction : computation_.instructions()) names.push_back(instruction->name());
    return names;
  }

  Computation computation_{"c"};
  int64_t parameters_ = 0;
};

int64_t Count(const std::vector<Instruction*>& list, const Instruction* x) {
  return std::count(list.begin(), list.end(), x);
}

// Each user is listed once among an operand's users however often it reads
// it, before and after replacements; narrow and wide users alike.
TEST_F(UseListTest, UsersStayInStepWithOperands) {
  for (const int width : {3, 100}) {
    SCOPED_TRACE(width);
    Instruction* p = Add(Opcode::kParameter, absl::StrCat("p", width));
    Instruction* q = Add(Opcode::kParameter, absl::StrCat("q", width));
    std::vector<Instruction*> operands(width, p);
    operands[1] = q;
    Instruction* t = Add(Opcode::kTuple, absl::StrCat("t", width), operands);
    EXPECT_EQ(Count(p->users(), t), 1);
    EXPECT_EQ(Count(q->users(), t), 1);
    // Replace the one use of q: t leaves q's users, stays p's.
    t->ReplaceOperand(1, p);
    EXPECT_EQ(Count(q->users(), t), 0);
    EXPECT_EQ(Count(p->users(), t), 1);
    // Replace one of several uses of p: t stays listed under both.
    t->ReplaceOperand(0, q);
    EXPECT_EQ(Count(p->users(), t), 1);
    EXPECT_EQ(Count(q->users(), t), 1);
    // All uses of p move to q: t leaves p, is listed once under q.
    p->ReplaceAllUsesWith(q);
    EXPECT_TRUE(p->users().empty());
    EXPECT_EQ(Count(q->users(), t), 1);
    for (Instruction* operand : t->operands()) EXPECT_EQ(operand, q);
    // And back, operand by operand.
    for (int64_t i = 0; i < t->operand_count(); ++i) {
      t->ReplaceOperand(i, p);
      EXPECT_EQ(Count(p->users(), t), 1);
      EXPECT_EQ(Count(q->users(), t), i + 1 < t->operand_count() ? 1 : 0);
    }
    computation_.set_root(p);
    computation_.RemoveInstruction(t);
    EXPECT_TRUE(p->users().empty());
    EXPECT_TRUE(q->users().empty());
  }
}

// Removals leave the others in order, whatever is asked in between, and
// positions stay right for moves and further removals.
TEST_F(UseListTest, RemovalsKeepTheOrder) {
  Instruction* p = Add(Opcode::kParameter, "p");
  std::vector<Instruction*> adds;
  for (int i = 0; i < 6; ++i) adds.push_back(Add(Opcode::kNegate, absl::StrCat("n", i), {p}));
  computation_.set_root(p);
  computation_.RemoveInstruction(adds[1]);
  computation_.RemoveInstruction(adds[4]);
  EXPECT_EQ(computation_.instruction_count(), 5);
  EXPECT_EQ(Names(), (std::vector<std::string>{"p", "n0", "n2", "n3", "n5"}));
  computation_.RemoveInstruction(adds[0]);
  computation_.MoveInstructionBefore(adds[5], adds[2]);
  EXPECT_EQ(Names(), (std::vector<std::string>{"p", "n5", "n2", "n3"}));
  computation_.RemoveInstruction(adds[2]);
  Instruction* late = Add(Opcode::kNegate, "late", {p});
  computation_.RemoveInstruction(adds[3]);
  EXPECT_EQ(Names(), (std::vector<std::string>{"p", "n5", "late"}));
  EXPECT_EQ(computation_.FindInstruction("n2"), nullptr);
  EXPECT_EQ(computation_.FindInstruction("late"), late);
  EXPECT_EQ(p->users(), (std::vector<Instruction*>{adds[5], late}));
}

// CPU seconds of `body` on this thread.
template <typename F>
double CpuSeconds(F body) {
  timespec a{}, b{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
  body();
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
  return static_cast<double>(b.tv_sec - a.tv_sec) + 1e-9 * static_cast<double>(b.tv_nsec - a.tv_nsec);
}

// What the fusion pass does to a root tuple of n values, each x_i = neg(p):
// a replacement r_i is added, x_i's uses move to it (RAUW), x_i is removed.
// Linear in n; it was quadratic (each RAUW scanned the tuple's operands, each
// removal erased from the middle of the instruction list). The test compares
// n and 8n in one run: linear work grows about 8-fold, quadratic 64-fold, so
// the bound of 24 leaves room for a loaded machine without letting a
// quadratic step through.
TEST(UseListScale, WideTupleRewritesAreLinear) {
  auto rewrite = [](int n) {
    Computation c("wide");
    auto add = [&](Opcode opcode, std::string name, std::vector<Instruction*> operands) {
      auto owned = std::make_unique<Instruction>(opcode, Shape::Scalar(ElementType::kF32));
      owned->set_name(std::move(name));
      Instruction* instruction = c.AddInstruction(std::move(owned));
      for (Instruction* operand : operands) instruction->AppendOperand(operand);
      return instruction;
    };
    auto param = std::make_unique<Instruction>(Opcode::kParameter, Shape::Scalar(ElementType::kF32));
    param->set_name("p");
    Instruction* p = c.AddInstruction(std::move(param));
    std::vector<Instruction*> xs;
    for (int i = 0; i < n; ++i) xs.push_back(add(Opcode::kNegate, absl::StrCat("x", i), {p}));
    Instruction* t = add(Opcode::kTuple, "t", xs);
    c.set_root(t);
    return CpuSeconds([&] {
      for (int i = 0; i < n; ++i) {
        Instruction* r = add(Opcode::kNegate, absl::StrCat("r", i), {p});
        xs[i]->ReplaceAllUsesWith(r);
        c.RemoveInstruction(xs[i]);
        if (i % 1024 == 0) {
          EXPECT_EQ(c.instructions().back().get(), r);
        }
      }
      EXPECT_EQ(c.instruction_count(), n + 2);
      for (int i = 0; i < n; ++i) ASSERT_EQ(t->operand(i)->name(), absl::StrCat("r", i));
      ASSERT_EQ(p->users().size(), static_cast<size_t>(n));
    });
  };
  rewrite(1000);  // Warm up the allocator.
  // The better of two tries of each, against scheduling noise.
  const double small = std::min(rewrite(6000), rewrite(6000));
  const double large = std::min(rewrite(48000), rewrite(48000));
  EXPECT_LT(large, 24 * small + 0.05) << "6,000 wide: " << small << " s, 48,000 wide: " << large
                                      << " s";
}

}  // namespace
}  // namespace xjit
