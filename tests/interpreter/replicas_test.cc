// RunModuleReplicated: collectives across in-process replicas. Expected
// values are the seeds' examples (003: AllReduce, AllGather, ReduceScatter,
// AllToAll, CollectivePermute) or worked by hand.
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "ir/hlo_text/parser.h"
#include "tests/interpreter/evaluator_test_util.h"

namespace xjit::testing {
namespace {

#define ASSERT_OK_AND_ASSIGN(lhs, expr)            \
  auto lhs##_or = (expr);                          \
  ASSERT_TRUE(lhs##_or.ok()) << lhs##_or.status(); \
  auto lhs = std::move(*lhs##_or)

using D = std::vector<double>;
using V = std::vector<int64_t>;

absl::StatusOr<std::vector<Literal>> Replicated(absl::string_view hlo,
                                                std::vector<std::vector<Literal>> arguments) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(hlo);
  if (!module.ok()) return module.status();
  return RunModuleReplicated(**module, arguments);
}

// `count` replicas with no arguments.
std::vector<std::vector<Literal>> NoArguments(int count) {
  return std::vector<std::vector<Literal>>(count);
}

std::vector<std::vector<Literal>> OneEach(std::vector<Literal> values) {
  std::vector<std::vector<Literal>> arguments;
  for (Literal& value : values) {
    arguments.emplace_back();
    arguments.back().push_back(std::move(value));
  }
  return arguments;
}

constexpr const char* kAdd = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

std::string WithAdd(absl::string_view entry) {
  return std::string("HloModule m\n") + kAdd + std::string(entry);
}

TEST(Replicas, SeedAllReduceSum) {
  // 003 AllReduce: [1.0, 2.5] and [3.0, 5.25] sum to [4.0, 7.75] on both.
  ASSERT_OK_AND_ASSIGN(r, Replicated(WithAdd(R"(
ENTRY e {
  x = f32[2] parameter(0)
  ROOT r = f32[2] all-reduce(x), replica_groups={}, to_apply=add
})"), OneEach({Doubles("f32[2]", {1.0, 2.5}), Doubles("f32[2]", {3.0, 5.25})})));
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(Doubles(r[0]), (D{4.0, 7.75}));
  EXPECT_EQ(Doubles(r[1]), (D{4.0, 7.75}));
}

TEST(Replicas, SeedAllGather) {
  // 003 AllGather: all_gather_dim 0 gives [1.0, 2.5, 3.0, 5.25] on both.
  ASSERT_OK_AND_ASSIGN(r, Replicated(R"(
HloModule m, replica_count=2
ENTRY e {
  x = f32[2] parameter(0)
  ROOT g = f32[4] all-gather(x), dimensions={0}, replica_groups={}
})", OneEach({Doubles("f32[2]", {1.0, 2.5}), Doubles("f32[2]", {3.0, 5.25})})));
  EXPECT_EQ(Doubles(r[0]), (D{1.0, 2.5, 3.0, 5.25}));
  EXPECT_EQ(Doubles(r[1]), (D{1.0, 2.5, 3.0, 5.25}));
}

TEST(Replicas, SeedReduceScatter) {
  // 003 ReduceScatter: [1.0, 2.25] and [3.0, 5.25], scatter_dim 0: [4.0] on
  // the first replica, [7.5] on the second.
  ASSERT_OK_AND_ASSIGN(r, Replicated(WithAdd(R"(
ENTRY e {
  x = f32[2] parameter(0)
  ROOT s = f32[1] reduce-scatter(x), dimensions={0}, replica_groups={}, to_apply=add
})"), OneEach({Doubles("f32[2]", {1.0, 2.25}), Doubles("f32[2]", {3.0, 5.25})})));
  EXPECT_EQ(Doubles(r[0]), (D{4.0}));
  EXPECT_EQ(Doubles(r[1]), (D{7.5}));
}

TEST(Replicas, SeedAllToAllSplitOneConcatZero) {
  // 003 AllToAll(x f32[4,16], split 1, concat 0, split_count 4) on 4 cores,
  // written as XlaBuilder lowers it: the split dimension becomes a leading
  // block dimension, exchanged with dimensions={0}. Core c receives block c
  // (columns 4c..4c+3) of every core s, stacked in core order: out[4s+i][k] =
  // x_s[i][4c+k]. Here x_s[i][j] = 100s + 16i + j.
  std::vector<Literal> inputs;
  for (int s = 0; s < 4; ++s) {
    D values;
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 16; ++j) values.push_back(100 * s + 16 * i + j);
    }
    inputs.push_back(Doubles("f32[4,16]", values));
  }
  ASSERT_OK_AND_ASSIGN(r, Replicated(R"(
HloModule m, replica_count=4
ENTRY e {
  x = f32[4,16] parameter(0)
  r = f32[4,4,4] reshape(x)
  t = f32[4,4,4] transpose(r), dimensions={1,0,2}
  a = f32[4,4,4] all-to-all(t), dimensions={0}
  ROOT o = f32[16,4] reshape(a)
})", OneEach(std::move(inputs))));
  ASSERT_EQ(r.size(), 4u);
  for (int c = 0; c < 4; ++c) {
    D expected;
    for (int s = 0; s < 4; ++s) {
      for (int i = 0; i < 4; ++i) {
        for (int k = 0; k < 4; ++k) expected.push_back(100 * s + 16 * i + 4 * c + k);
      }
    }
    EXPECT_EQ(Doubles(r[c]), expected) << "core " << c;
  }
}

TEST(Replicas, AllToAllInnerDimension) {
  // dimensions={1} on s32[1,4], 2 replicas: replica c keeps columns 2c, 2c+1
  // of each sender, in sender order.
  ASSERT_OK_AND_ASSIGN(r, Replicated(R"(
HloModule m
ENTRY e {
  x = s32[1,4] parameter(0)
  ROOT a = s32[1,4] all-to-all(x), dimensions={1}, replica_groups={{0,1}}
})", OneEach({Ints("s32[1,4]", {1, 2, 3, 4}), Ints("s32[1,4]", {5, 6, 7, 8})})));
  EXPECT_EQ(Ints(r[0]), (V{1, 2, 5, 6}));
  EXPECT_EQ(Ints(r[1]), (V{3, 4, 7, 8}));
}

TEST(Replicas, AllToAllTupleForm) {
  // Result j on replica r is replica j's operand r.
  ASSERT_OK_AND_ASSIGN(r, Replicated(R"(
HloModule m
ENTRY e {
  a = s32[1] parameter(0)
  b = s32[1] parameter(1)
  ROOT t = (s32[1], s32[1]) all-to-all(a, b), replica_groups={{0,1}}
})", [] {
    std::vector<std::vector<Literal>> args(2);
    args[0].push_back(Ints("s32[1]", {1}));
    args[0].push_back(Ints("s32[1]", {2}));
    args[1].push_back(Ints("s32[1]", {11}));
    args[1].push_back(Ints("s32[1]", {12}));
    return args;
  }()));
  EXPECT_EQ(Ints(r[0].element(0)), (V{1}));
  EXPECT_EQ(Ints(r[0].element(1)), (V{11}));
  EXPECT_EQ(Ints(r[1].element(0)), (V{2}));
  EXPECT_EQ(Ints(r[1].element(1)), (V{12}));
}

TEST(Replicas, CollectivePermuteNonTargetsGetZeros) {
  // 003: a replica that is no pair's target gets zeros.
  ASSERT_OK_AND_ASSIGN(r, Replicated(R"(
HloModule m
ENTRY e {
  x = s32[2] parameter(0)
  ROOT p = s32[2] collective-permute(x), source_target_pairs={{0,1},{1,2}}
})", OneEach({Ints("s32[2]", {1, 2}), Ints("s32[2]", {3, 4}), Ints("s32[2]", {5, 6})})));
  EXPECT_EQ(Ints(r[0]), (V{0, 0}));
  EXPECT_EQ(Ints(r[1]), (V{1, 2}));
  EXPECT_EQ(Ints(r[2]), (V{3, 4}));
}

TEST(Replicas, ReplicaIdGroupsAndOrder) {
  // Groups {0,2} and {1,3}: sums 0+2 and 1+3. The all-gather groups list
  // replica 3 before 1 and 2 before 0, which is the result order.
  ASSERT_OK_AND_ASSIGN(r, Replicated(WithAdd(R"(
ENTRY e {
  id = u32[] replica-id()
  pid = u32[] partition-id()
  f = f32[] convert(id)
  s = f32[] all-reduce(f), replica_groups={{0,2},{1,3}}, to_apply=add
  v = f32[1] reshape(f)
  g = f32[2] all-gather(v), dimensions={0}, replica_groups={{3,1},{2,0}}
  ROOT t = (u32[], u32[], f32[], f32[2]) tuple(id, pid, s, g)
})"), NoArguments(4)));
  ASSERT_EQ(r.size(), 4u);
  const D sums = {2, 4, 2, 4};
  const std::vector<D> gathers = {{2, 0}, {3, 1}, {2, 0}, {3, 1}};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(Ints(r[i].element(0)), (V{i}));
    EXPECT_EQ(Ints(r[i].element(1)), (V{0}));
    EXPECT_EQ(Doubles(r[i].element(2)), (D{sums[i]}));
    EXPECT_EQ(Doubles(r[i].element(3)), gathers[i]);
  }
}

TEST(Replicas, AllReduceOtherReducerAndTuple) {
  // maximum over 3 replicas, two operands at once.
  ASSERT_OK_AND_ASSIGN(r, Replicated(R"(
HloModule m
max {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(a, b)
}
ENTRY e {
  x = s32[2] parameter(0)
  y = s32[] parameter(1)
  ROOT r = (s32[2], s32[]) all-reduce(x, y), replica_groups={}, to_apply=max
})", [] {
    std::vector<std::vector<Literal>> args(3);
    const std::vector<V> xs = {{1, 9}, {7, -3}, {4, 4}};
    const V ys = {-5, -2, -8};
    for (int i = 0; i < 3; ++i) {
      args[i].push_back(Ints("s32[2]", xs[i]));
      args[i].push_back(Ints("s32[]", {ys[i]}));
    }
    return args;
  }()));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(Ints(r[i].element(0)), (V{7, 9}));
    EXPECT_EQ(Ints(r[i].element(1)), (V{-2}));
  }
}

TEST(Replicas, NonCommutativeReducerFoldsInGroupOrder) {
  // f(a, b) = 2a + b folded over groups {2,0,1}: values 1,2,3 for replicas
  // 0,1,2 arrive as 3,1,2: f(f(3,1),2) = 2*(2*3+1)+2 = 16.
  ASSERT_OK_AND_ASSIGN(r, Replicated(R"(
HloModule m
f {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  a2 = s32[] add(a, a)
  ROOT s = s32[] add(a2, b)
}
ENTRY e {
  x = s32[] parameter(0)
  ROOT r = s32[] all-reduce(x), replica_groups={{2,0,1}}, to_apply=f
})", OneEach({Ints("s32[]", {1}), Ints("s32[]", {2}), Ints("s32[]", {3})})));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(Ints(r[i]), (V{16}));
}

TEST(Replicas, CollectiveInWhileLoopMeetsPerIteration) {
  // state = all-reduce(state) three times: 1,2 -> 3 -> 6 -> 12.
  ASSERT_OK_AND_ASSIGN(r, Replicated(WithAdd(R"(
cond {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  v = f32[] get-tuple-element(p), index=1
  s = f32[] all-reduce(v), replica_groups={}, to_apply=add
  ROOT t = (s32[], f32[]) tuple(j, s)
}
ENTRY e {
  x = f32[] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[]) tuple(zero, x)
  w = (s32[], f32[]) while(init), condition=cond, body=body
  ROOT v = f32[] get-tuple-element(w), index=1
})"), OneEach({Doubles("f32[]", {1}), Doubles("f32[]", {2})})));
  EXPECT_EQ(Doubles(r[0]), (D{12}));
  EXPECT_EQ(Doubles(r[1]), (D{12}));
}

TEST(Replicas, AsyncStartDoneForms) {
  ASSERT_OK_AND_ASSIGN(r, Replicated(WithAdd(R"(
ENTRY e {
  x = f32[2] parameter(0)
  ars = f32[2] all-reduce-start(x), replica_groups={}, to_apply=add
  ar = f32[2] all-reduce-done(ars)
  ags = (f32[2], f32[4]) all-gather-start(x), dimensions={0}, replica_groups={}
  ag = f32[4] all-gather-done(ags)
  cps = (f32[2], f32[2], u32[], u32[]) collective-permute-start(x), source_target_pairs={{0,1},{1,0}}
  cp = f32[2] collective-permute-done(cps)
  ROOT t = (f32[2], f32[4], f32[2]) tuple(ar, ag, cp)
})"), OneEach({Doubles("f32[2]", {1, 2}), Doubles("f32[2]", {10, 20})})));
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(Doubles(r[i].element(0)), (D{11, 22}));
    EXPECT_EQ(Doubles(r[i].element(1)), (D{1, 2, 10, 20}));
  }
  EXPECT_EQ(Doubles(r[0].element(2)), (D{10, 20}));
  EXPECT_EQ(Doubles(r[1].element(2)), (D{1, 2}));
}

TEST(Replicas, CollectiveBroadcastFromFirstOfGroup) {
  ASSERT_OK_AND_ASSIGN(r, Replicated(R"(
HloModule m
ENTRY e {
  x = s32[1] parameter(0)
  ROOT b = s32[1] collective-broadcast(x), replica_groups={{1,0}}
})", OneEach({Ints("s32[1]", {5}), Ints("s32[1]", {7})})));
  EXPECT_EQ(Ints(r[0]), (V{7}));
  EXPECT_EQ(Ints(r[1]), (V{7}));
}

TEST(Replicas, ChannelIdModes) {
  // all-reduce with channel_id and use_global_device_ids: device ids are
  // replica ids (one partition). all-to-all with channel_id is
  // cross-partition: each replica alone, so it returns its operand.
  ASSERT_OK_AND_ASSIGN(r, Replicated(WithAdd(R"(
ENTRY e {
  x = f32[2] parameter(0)
  s = f32[2] all-reduce(x), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
  a = f32[2] all-to-all(x), channel_id=2, dimensions={0}
  ROOT t = (f32[2], f32[2]) tuple(s, a)
})"), OneEach({Doubles("f32[2]", {1, 2}), Doubles("f32[2]", {3, 4})})));
  EXPECT_EQ(Doubles(r[0].element(0)), (D{4, 6}));
  EXPECT_EQ(Doubles(r[1].element(0)), (D{4, 6}));
  EXPECT_EQ(Doubles(r[0].element(1)), (D{1, 2}));
  EXPECT_EQ(Doubles(r[1].element(1)), (D{3, 4}));
  // Cross-partition permute pairs name partitions; partition 1 does not exist.
  auto bad = Replicated(R"(
HloModule m
ENTRY e {
  x = f32[2] parameter(0)
  ROOT p = f32[2] collective-permute(x), channel_id=1, source_target_pairs={{0,1}}
})", OneEach({Doubles("f32[2]", {1, 2}), Doubles("f32[2]", {3, 4})}));
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
}

TEST(Replicas, MismatchedCollectivesFailInsteadOfHanging) {
  // Only replica 0 reaches the all-reduce.
  auto r = Replicated(WithAdd(R"(
with {
  p = f32[] parameter(0)
  ROOT s = f32[] all-reduce(p), replica_groups={}, to_apply=add
}
without {
  ROOT p = f32[] parameter(0)
}
ENTRY e {
  id = u32[] replica-id()
  zero = u32[] constant(0)
  first = pred[] compare(id, zero), direction=EQ
  x = f32[] constant(1)
  ROOT c = f32[] conditional(first, x, x), true_computation=with, false_computation=without
})"), NoArguments(2));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_NE(r.status().message().find("deadlock"), absl::string_view::npos) << r.status();
}

TEST(Replicas, OneReplicaFailingAbortsTheOthers) {
  // Replica 1 calls an unknown custom-call target; replica 0 waits at the
  // all-reduce and is released. The reported error is replica 1's.
  auto r = Replicated(WithAdd(R"(
good {
  ROOT p = f32[] parameter(0)
}
bad {
  p = f32[] parameter(0)
  ROOT c = f32[] custom-call(p), custom_call_target="no_such_target_xyz"
}
ENTRY e {
  id = u32[] replica-id()
  zero = u32[] constant(0)
  first = pred[] compare(id, zero), direction=EQ
  x = f32[] constant(1)
  v = f32[] conditional(first, x, x), true_computation=good, false_computation=bad
  ROOT s = f32[] all-reduce(v), replica_groups={}, to_apply=add
})"), NoArguments(2));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound) << r.status();
  EXPECT_NE(r.status().message().find("replica 1"), absl::string_view::npos) << r.status();
}

TEST(Replicas, ChecksCountsAndGroups) {
  const char* hlo = R"(
HloModule m, replica_count=2
ENTRY e {
  ROOT id = u32[] replica-id()
})";
  auto three = Replicated(hlo, NoArguments(3));
  EXPECT_EQ(three.status().code(), absl::StatusCode::kInvalidArgument) << three.status();
  ASSERT_OK_AND_ASSIGN(two, Replicated(hlo, NoArguments(2)));
  EXPECT_EQ(Ints(two[1]), (V{1}));
  // A replica in no group.
  auto missing = Replicated(WithAdd(R"(
ENTRY e {
  x = f32[] constant(1)
  ROOT s = f32[] all-reduce(x), replica_groups={{0,1}}, to_apply=add
})"), NoArguments(3));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument) << missing.status();
}

TEST(Replicas, OneReplicaRunsLikeAPlainRun) {
  ASSERT_OK_AND_ASSIGN(r, Replicated(WithAdd(R"(
ENTRY e {
  x = f32[2] parameter(0)
  s = f32[2] all-reduce(x), replica_groups={}, to_apply=add
  ROOT p = f32[2] collective-permute(s), source_target_pairs={{0,0}}
})"), OneEach({Doubles("f32[2]", {1, 2})})));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(Doubles(r[0]), (D{1, 2}));
}

}  // namespace
}  // namespace xjit::testing
