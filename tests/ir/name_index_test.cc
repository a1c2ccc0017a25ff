// NameIndex (ir/name_index.h) through its two users: the instruction names of
// a Computation and the computation names of a Module.
#include "ir/name_index.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "ir/computation.h"
#include "ir/module.h"

namespace xjit {
namespace {

struct Named {
  std::string name_;
  const std::string& name() const { return name_; }
};

TEST(NameIndexTest, FreeGivesTheSmallestFreeSuffix) {
  NameIndex<Named> index;
  Named a{"fusion"}, b{"fusion.1"}, c{"fusion.3"}, d{"fusion.01"};
  for (Named* n : {&a, &b, &c, &d}) index.Add(n);
  EXPECT_EQ(index.Free("fresh"), "fresh");
  EXPECT_EQ(index.Free("fusion"), "fusion.2");
  EXPECT_EQ(index.Free("fusion.3"), "fusion.2");  // The hint's own suffix is dropped.
  EXPECT_EQ(index.Free("fusion.5"), "fusion.5");  // Free as it is.
  Named e{"fusion.2"};
  index.Add(&e);
  EXPECT_EQ(index.Free("fusion"), "fusion.4");
  index.Remove(&b);  // fusion.1 is free again.
  EXPECT_EQ(index.Free("fusion"), "fusion.1");
}

TEST(NameIndexTest, FindGivesUpOnSharedNames) {
  NameIndex<Named> index;
  Named a{"x"}, b{"x"};
  index.Add(&a);
  EXPECT_EQ(index.Find("x"), &a);
  EXPECT_EQ(index.Find("y"), nullptr);
  EXPECT_FALSE(index.Contains("y"));
  index.Add(&b);
  EXPECT_EQ(index.Find("x"), nullptr);  // Two holders: the caller scans.
  EXPECT_TRUE(index.Contains("x"));
  index.Remove(&a);
  EXPECT_EQ(index.Find("x"), nullptr);  // One left, but which one is not known.
  EXPECT_TRUE(index.Contains("x"));
  index.Remove(&b);
  EXPECT_FALSE(index.Contains("x"));
}

TEST(NameIndexTest, ModuleFollowsAddsRenamesAndRemovals) {
  Module module("m");
  Computation* f = module.AddComputation(std::make_unique<Computation>("f"));
  Computation* g = module.AddComputation(std::make_unique<Computation>("g"));
  EXPECT_EQ(module.FindComputation("f"), f);
  EXPECT_EQ(module.FreeComputationName("f"), "f.1");
  f->set_name("f.1");
  EXPECT_EQ(module.FindComputation("f"), nullptr);
  EXPECT_EQ(module.FindComputation("f.1"), f);
  EXPECT_EQ(module.FreeComputationName("f"), "f");
  g->set_name("f.1");  // Shared for a while: the first in definition order.
  EXPECT_EQ(module.FindComputation("f.1"), f);
  module.RemoveComputation(f);
  EXPECT_EQ(module.FindComputation("f.1"), g);
  EXPECT_EQ(module.FindComputation("g"), nullptr);
  EXPECT_EQ(module.FreeComputationName("g"), "g");
}

}  // namespace
}  // namespace xjit
