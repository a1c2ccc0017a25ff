#include "ir/name_index.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"

namespace xjit {

namespace {

// `name` split as `stem.N` (N canonical: digits without a leading zero, at
// most 18 of them); false if it has no such suffix.
bool SplitNumericSuffix(absl::string_view name, absl::string_view* stem, int64_t* n) {
  const size_t dot = name.rfind('.');
  if (dot == absl::string_view::npos || dot == 0 || dot + 1 == name.size()) return false;
  const absl::string_view digits = name.substr(dot + 1);
  if (digits[0] == '0' || digits.size() > 18) return false;
  int64_t value = 0;
  for (char c : digits) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
    value = value * 10 + (c - '0');
  }
  *stem = name.substr(0, dot);
  *n = value;
  return true;
}

// `name` without a trailing `.N` (digits only, leading zeros included: the
// stem Free derives candidates from).
absl::string_view StripNumericSuffix(absl::string_view name) {
  const size_t dot = name.rfind('.');
  if (dot == absl::string_view::npos || dot + 1 == name.size() || dot == 0) return name;
  for (size_t i = dot + 1; i < name.size(); ++i) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(name[i]))) return name;
  }
  return name.substr(0, dot);
}

}  // namespace

void NameIndexBase::AddName(const std::string& name, const void* holder) {
  Entry& entry = entries_[name];
  if (entry.count++ == 0) entry.holder = holder;
}

void NameIndexBase::RemoveName(const std::string& name, const void* holder) {
  auto it = entries_.find(name);
  XJIT_CHECK(it != entries_.end());
  if (--it->second.count == 0) {
    entries_.erase(it);
    // The name is free again: Free must be able to return it.
    absl::string_view stem;
    int64_t n;
    if (SplitNumericSuffix(name, &stem, &n)) {
      auto s = stems_.find(stem);
      if (s != stems_.end() && n < s->second.frontier) s->second.freed.insert(n);
    }
  } else if (it->second.holder == holder) {
    it->second.holder = nullptr;  // Another holder keeps the name; which is unknown.
  }
}

const void* NameIndexBase::FindName(absl::string_view name) const {
  auto it = entries_.find(name);
  if (it == entries_.end() || it->second.count != 1) return nullptr;
  return it->second.holder;
}

std::string NameIndexBase::Free(absl::string_view base) const {
  if (!entries_.contains(base)) return std::string(base);
  const absl::string_view stem = StripNumericSuffix(base);
  StemState& state = stems_[stem];
  // A freed number may have been taken again since (a rename): drop those.
  while (!state.freed.empty()) {
    std::string name = absl::StrCat(stem, ".", *state.freed.begin());
    if (!entries_.contains(name)) return name;
    state.freed.erase(state.freed.begin());
  }
  for (;; ++state.frontier) {
    std::string name = absl::StrCat(stem, ".", state.frontier);
    if (!entries_.contains(name)) return name;
  }
}

}  // namespace xjit
