#include "ir/instruction.h"

#include <algorithm>
#include <mutex>

#include "ir/computation.h"
#include "ir/status_macros.h"

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

Instruction::OperandIndex* Instruction::OperandPositions() {
  if (operand_index_ == nullptr) {
    if (operand_count() <= kIndexedOperands) return nullptr;
    operand_index_ = std::make_unique<OperandIndex>();
    for (int64_t i = 0; i < operand_count(); ++i) (*operand_index_)[operands_[i]].push_back(i);
  }
  return operand_index_.get();
}

int64_t Instruction::UsesOf(const Instruction* operand) {
  if (OperandIndex* index = OperandPositions()) {
    auto it = index->find(operand);
    return it == index->end() ? 0 : static_cast<int64_t>(it->second.size());
  }
  return std::count(operands_.begin(), operands_.end(), operand);
}

void Instruction::IndexOperand(const Instruction* operand, int64_t position) {
  if (operand_index_ != nullptr) {
    (*operand_index_)[operand].push_back(position);
  } else if (operand_count() > kIndexedOperands) {
    OperandPositions();  // Built from operands_, which already hold it.
  }
}

void Instruction::UnindexOperand(const Instruction* operand, int64_t position) {
  if (operand_index_ == nullptr) return;
  auto it = operand_index_->find(operand);
  XJIT_CHECK(it != operand_index_->end());
  Positions& positions = it->second;
  positions.erase(std::find(positions.begin(), positions.end(), position));
  if (positions.empty()) operand_index_->erase(it);
}

void Instruction::ClearOperands() {
  operands_.clear();
  operand_index_.reset();
}

void Instruction::PushUser(Instruction* user) {
  if (user_index_ != nullptr) (*user_index_)[user] = static_cast<int64_t>(users_.size());
  users_.push_back(user);
}

bool Instruction::HasUser(const Instruction* user) {
  if (user_index_ == nullptr && static_cast<int64_t>(users_.size()) > kIndexedOperands) {
    CloseUserHoles();
    user_index_ = std::make_unique<absl::flat_hash_map<const Instruction*, int64_t>>();
    for (size_t i = 0; i < users_.size(); ++i) (*user_index_)[users_[i]] = static_cast<int64_t>(i);
  }
  if (user_index_ != nullptr) return user_index_->contains(user);
  return std::find(users_.begin(), users_.end(), user) != users_.end();
}

void Instruction::EraseUser(const Instruction* user) {
  if (!HasUser(user)) return;
  if (user_index_ != nullptr) {
    auto it = user_index_->find(user);
    users_[it->second] = nullptr;
    user_index_->erase(it);
  } else {
    // From the back: a user being replaced or removed was often added last.
    *std::find(users_.rbegin(), users_.rend(), user) = nullptr;
  }
  user_holes_.fetch_add(1, std::memory_order_release);
}

void Instruction::CloseUserHoles() const {
  // One lock for all instructions: holes are closed once per batch of
  // removals, by readers of a module that is not being changed.
  static std::mutex* const mutex = new std::mutex;
  std::lock_guard<std::mutex> lock(*mutex);
  if (user_holes_.load(std::memory_order_relaxed) == 0) return;
  users_.erase(std::remove(users_.begin(), users_.end(), nullptr), users_.end());
  if (user_index_ != nullptr) {
    for (size_t i = 0; i < users_.size(); ++i) (*user_index_)[users_[i]] = static_cast<int64_t>(i);
  }
  user_holes_.store(0, std::memory_order_release);
}

void Instruction::AddUser(Instruction* user) {
  // Called right after `user` took this instruction as an operand, so it is
  // listed already exactly when it reads this instruction through another
  // operand too. Either list answers that; the cheaper is asked: scanning
  // users_ alone made a value with thousands of users (a parameter after a
  // chain's simplification) quadratic, and counting operands alone a tuple
  // with thousands of operands (a wide root tuple, rewritten operand by
  // operand).
  const bool listed =
      user->operand_index_ == nullptr && user->operand_count() <= kIndexedOperands
          ? user->UsesOf(this) > 1
          : HasUser(user);
  if (!listed) PushUser(user);
}

void Instruction::RemoveUser(Instruction* user) {
  // Only forget the user once it no longer refers to this instruction at all.
  if (user->UsesOf(this) > 0) return;
  EraseUser(user);
}

void Instruction::AppendOperand(Instruction* operand) {
  operands_.push_back(operand);
  IndexOperand(operand, operand_count() - 1);
  operand->AddUser(this);
}

void Instruction::ReplaceOperand(int64_t i, Instruction* new_operand) {
  Instruction* old = operands_[i];
  if (old == new_operand) return;
  operands_[i] = new_operand;
  UnindexOperand(old, i);
  IndexOperand(new_operand, i);
  old->RemoveUser(this);
  new_operand->AddUser(this);
}

void Instruction::ReplaceAllUsesWith(Instruction* replacement) {
  if (replacement == this) return;
  CloseUserHoles();
  std::vector<Instruction*> users = std::move(users_);
  users_.clear();
  user_index_.reset();
  for (Instruction* user : users) {
    // Every position of this instruction among the user's operands: from
    // the user's index when it has one (a wide tuple), else by a scan.
    Positions positions;
    if (OperandIndex* index = user->OperandPositions()) {
      auto it = index->find(this);
      if (it != index->end()) positions = it->second;
    } else {
      for (int64_t i = 0; i < user->operand_count(); ++i) {
        if (user->operands_[i] == this) positions.push_back(i);
      }
    }
    if (positions.empty()) continue;
    // Listed among the replacement's users already exactly when it read the
    // replacement before.
    const bool listed = user->UsesOf(replacement) > 0;
    for (int64_t i : positions) {
      user->operands_[i] = replacement;
      user->UnindexOperand(this, i);
      user->IndexOperand(replacement, i);
    }
    if (!listed) replacement->PushUser(user);
  }
  if (parent_ != nullptr && parent_->root() == this) parent_->set_root(replacement);
}

}  // namespace xjit
