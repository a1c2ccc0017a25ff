// NameIndex: the names of a set of holders (the instructions of a
// computation, the computations of a module), for lookups by name and fresh
// names in time independent of the set's size: a scan per lookup or per
// fresh name made programs with many instructions or many fused computations
// compile in quadratic time (issues 26 and 30).
//
// Holders are added and removed under their current names; a holder that is
// renamed is removed under its old name and added under its new one. Several
// holders may share a name for a while (a rewrite in progress; verifiers
// reject it): the index counts them, and Find gives up on such a name.
#ifndef XJIT_IR_NAME_INDEX_H_
#define XJIT_IR_NAME_INDEX_H_

#include <cstdint>
#include <set>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace xjit {

class NameIndexBase {
 public:
  bool Contains(absl::string_view name) const { return entries_.contains(name); }

  // `base` if no holder has that name, otherwise `base.N` with the smallest
  // free N >= 1, a trailing `.N` of base dropped first (so hints may be
  // existing names). The name is not taken until a holder gets it.
  // Amortised constant time: per stem the index remembers up to where every
  // `stem.N` is taken and which of those were freed since.
  std::string Free(absl::string_view base) const;

 protected:
  // How many holders carry a name, and one of them (null once it is unknown
  // which: the callers then scan).
  struct Entry {
    const void* holder = nullptr;
    int64_t count = 0;
  };
  void AddName(const std::string& name, const void* holder);
  void RemoveName(const std::string& name, const void* holder);
  // The one holder of `name`; null when none or when unknown (see Entry).
  const void* FindName(absl::string_view name) const;

 private:
  // Free's memory for one stem: every `stem.N` with N < `frontier` is
  // taken, except possibly those in `freed` (names that left the index
  // since; checked when used).
  struct StemState {
    int64_t frontier = 1;
    std::set<int64_t> freed;
  };
  absl::flat_hash_map<std::string, Entry> entries_;
  mutable absl::flat_hash_map<std::string, StemState> stems_;
};

// The typed face: `Holder` has `const std::string& name() const`.
template <typename Holder>
class NameIndex : public NameIndexBase {
 public:
  void Add(Holder* holder) { AddName(holder->name(), holder); }
  void Remove(Holder* holder) { RemoveName(holder->name(), holder); }
  // The holder of `name` if exactly one is known to have it; null if none
  // has it or if the caller must scan (Contains tells which).
  Holder* Find(absl::string_view name) const {
    return static_cast<Holder*>(const_cast<void*>(FindName(name)));
  }
};

}  // namespace xjit

#endif  // XJIT_IR_NAME_INDEX_H_
