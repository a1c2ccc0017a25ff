#include "ir/instruction.h"

#include <algorithm>

#include "ir/computation.h"

namespace xjit {

void Instruction::set_name(std::string name) {
  if (parent_ == nullptr) {
    name_ = std::move(name);
    return;
  }
  parent_->names_.Remove(this);
  name_ = std::move(name);
  parent_->names_.Add(this);
}

const InstructionAttributes& Instruction::DefaultAttributes() {
  static const InstructionAttributes* const defaults = new InstructionAttributes();
  return *defaults;
}

const Literal& Instruction::EmptyLiteral() {
  static const Literal* const empty = new Literal();
  return *empty;
}

void Instruction::set_attrs(const InstructionAttributes& attrs) {
  if (attrs == DefaultAttributes()) {
    attrs_.reset();
  } else if (attrs_) {
    *attrs_ = attrs;
  } else {
    attrs_ = std::make_unique<InstructionAttributes>(attrs);
  }
}

void Instruction::CopyAttributesFrom(const Instruction& source) {
  if (source.attrs_) {
    attrs_ = std::make_unique<InstructionAttributes>(*source.attrs_);
  } else {
    attrs_.reset();
  }
  if (source.literal_) {
    literal_ = std::make_unique<Literal>(*source.literal_);
  } else {
    literal_.reset();
  }
  opaque_attributes_ = source.opaque_attributes_;
}

void Instruction::AddUser(Instruction* user) {
  // Called right after `user` took this instruction as an operand, so it is
  // listed already exactly when it reads this instruction through another
  // operand too. Either list answers that; the shorter is searched: scanning
  // users_ alone made a value with thousands of users (a parameter after a
  // chain's simplification) quadratic, and counting operands alone a tuple
  // with thousands of operands (a wide root tuple, rewritten operand by
  // operand).
  const bool listed =
      users_.size() < user->operands_.size()
          ? std::find(users_.begin(), users_.end(), user) != users_.end()
          : std::count(user->operands_.begin(), user->operands_.end(), this) > 1;
  if (!listed) users_.push_back(user);
}

void Instruction::RemoveUser(Instruction* user) {
  // Only forget the user once it no longer refers to this instruction at all.
  if (std::find(user->operands_.begin(), user->operands_.end(), this) != user->operands_.end()) {
    return;
  }
  users_.erase(std::remove(users_.begin(), users_.end(), user), users_.end());
}

void Instruction::AppendOperand(Instruction* operand) {
  operands_.push_back(operand);
  operand->AddUser(this);
}

void Instruction::ReplaceOperand(int64_t i, Instruction* new_operand) {
  Instruction* old = operands_[i];
  if (old == new_operand) return;
  operands_[i] = new_operand;
  old->RemoveUser(this);
  new_operand->AddUser(this);
}

void Instruction::ReplaceAllUsesWith(Instruction* replacement) {
  std::vector<Instruction*> users = users_;
  for (Instruction* user : users) {
    for (int64_t i = 0; i < user->operand_count(); ++i) {
      if (user->operands_[i] == this) user->ReplaceOperand(i, replacement);
    }
  }
  if (parent_ != nullptr && parent_->root() == this) parent_->set_root(replacement);
}

}  // namespace xjit
