// Modules of several partitions (num_partitions > 1) on both backends: R
// replicas x P partitions, device d = r * P + p. Each module below runs on
// the evaluator (RunModuleReplicated) and compiled (collectives::
// RunReplicated, no interpreted step), and every device's result is checked
// against values worked out by hand, on both. Covers XLA's four group modes,
// replica-id / partition-id, and the SPMD sharding calls with the sharding
// forms ir/sharding.h reads; and the corpus's shard_map module.
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "ir/hlo_text/parser.h"
#include "ir/literal.h"
#include "ir/sharding.h"
#include "ir/status_macros.h"
#include "jit/compile.h"
#include "runtime/collectives/in_process.h"
#include "runtime/collectives/replicated_run.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

namespace fs = std::filesystem;
using V = std::vector<int64_t>;

#define ASSERT_OK_AND_ASSIGN(lhs, expr)            \
  auto lhs##_or = (expr);                          \
  ASSERT_TRUE(lhs##_or.ok()) << lhs##_or.status(); \
  auto lhs = std::move(*lhs##_or)

// Every device's result on each backend.
struct Runs {
  std::vector<Literal> interpreter;
  std::vector<Literal> jit;
};

// Runs `module` on `replicas` x its num_partitions devices, device d on
// arguments[d]; both backends must succeed, the compile must interpret
// nothing, and the backends must agree bit for bit.
absl::StatusOr<Runs> RunBoth(const Module& module,
                             const std::vector<std::vector<Literal>>& arguments) {
  Runs runs;
  XJIT_ASSIGN_OR_RETURN(runs.interpreter, RunModuleReplicated(module, arguments));
  CompileReport report;
  XJIT_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Executable> executable,
                        Compile(module, CompileOptions(), &report));
  const std::vector<std::string> interpreted = UnexpectedInterpretedSteps(report);
  EXPECT_TRUE(interpreted.empty()) << interpreted[0];
  XJIT_ASSIGN_OR_RETURN(runs.jit, collectives::RunReplicated(*executable, arguments));
  EXPECT_EQ(runs.interpreter.size(), runs.jit.size());
  for (size_t d = 0; d < runs.jit.size() && d < runs.interpreter.size(); ++d) {
    EXPECT_EQ(Difference(runs.interpreter[d], runs.jit[d]), "") << "device " << d;
  }
  return runs;
}

absl::StatusOr<Runs> RunText(const std::string& hlo,
                             const std::vector<std::vector<Literal>>& arguments) {
  XJIT_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, ParseVerified(hlo));
  return RunBoth(*module, arguments);
}

// Both backends fail with `code`.
void ExpectBothFail(const std::string& hlo, const std::vector<std::vector<Literal>>& arguments,
                    absl::StatusCode code) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<std::vector<Literal>> interpreted = RunModuleReplicated(**module, arguments);
  EXPECT_EQ(interpreted.status().code(), code) << interpreted.status();
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      Compile(**module, CompileOptions());
  if (!executable.ok()) {
    EXPECT_EQ(executable.status().code(), code) << executable.status();
    return;
  }
  absl::StatusOr<std::vector<Literal>> compiled =
      collectives::RunReplicated(**executable, arguments);
  EXPECT_EQ(compiled.status().code(), code) << compiled.status();
}

// An s32 array (default layout) of `shape` with these values.
Literal S32(const std::string& shape, const V& values) {
  absl::StatusOr<Shape> parsed = ParseShape(shape);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return Literal::FromInts(*parsed, values);
}

// The s32 (or u32) values of an array in row-major order.
V Ints(const Literal& literal) {
  V values;
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    values.push_back(static_cast<int32_t>(literal.GetBitsLinear(i)));
  }
  return values;
}

// Device d's arguments: one s32 array of `shape` whose values are
// make(d, i) for element i.
std::vector<std::vector<Literal>> PerDevice(int devices, const std::string& shape,
                                            const std::function<int64_t(int, int)>& make) {
  std::vector<std::vector<Literal>> arguments(devices);
  absl::StatusOr<Shape> parsed = ParseShape(shape);
  EXPECT_TRUE(parsed.ok());
  for (int d = 0; d < devices; ++d) {
    V values;
    for (int64_t i = 0; i < parsed->element_count(); ++i) values.push_back(make(d, i));
    arguments[d].push_back(Literal::FromInts(*parsed, values));
  }
  return arguments;
}

// Every device gets the same arguments.
std::vector<std::vector<Literal>> Same(int devices, const std::vector<Literal>& arguments) {
  return std::vector<std::vector<Literal>>(devices, arguments);
}

// The expected values of every device, on both backends.
void ExpectInts(const Runs& runs, const std::vector<V>& expected, int element = -1) {
  ASSERT_EQ(runs.interpreter.size(), expected.size());
  ASSERT_EQ(runs.jit.size(), expected.size());
  for (size_t d = 0; d < expected.size(); ++d) {
    const Literal& i = element < 0 ? runs.interpreter[d] : runs.interpreter[d].element(element);
    const Literal& j = element < 0 ? runs.jit[d] : runs.jit[d].element(element);
    EXPECT_EQ(Ints(i), expected[d]) << "interpreter, device " << d;
    EXPECT_EQ(Ints(j), expected[d]) << "jit, device " << d;
  }
}

constexpr const char* kAdd = R"(
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
)";

std::string Hlo(const std::string& header, const std::string& entry) {
  return "HloModule m, " + header + "\n" + kAdd + entry;
}

// ---- Ids and group modes (2 replicas x 2 partitions unless said) ----

TEST(Partitions, ReplicaAndPartitionIds) {
  ASSERT_OK_AND_ASSIGN(runs, RunText(Hlo("num_partitions=3", R"(
ENTRY e {
  r = u32[] replica-id()
  p = u32[] partition-id()
  ROOT t = (u32[], u32[]) tuple(r, p)
})"), Same(6, {})));
  ExpectInts(runs, {{0}, {0}, {0}, {1}, {1}, {1}}, 0);
  ExpectInts(runs, {{0}, {1}, {2}, {0}, {1}, {2}}, 1);
}

// x on device d is d + 1.
std::vector<std::vector<Literal>> Scalars(int devices) {
  return PerDevice(devices, "s32[1]", [](int d, int) { return d + 1; });
}

TEST(Partitions, CrossReplicaWithoutChannelId) {
  // Groups of replicas at the device's own partition.
  ASSERT_OK_AND_ASSIGN(runs, RunText(Hlo("num_partitions=2", R"(
ENTRY e {
  x = s32[1] parameter(0)
  ROOT s = s32[1] all-reduce(x), replica_groups={}, to_apply=add
})"), Scalars(4)));
  ExpectInts(runs, {{1 + 3}, {2 + 4}, {1 + 3}, {2 + 4}});
  ASSERT_OK_AND_ASSIGN(gathered, RunText(Hlo("num_partitions=2", R"(
ENTRY e {
  x = s32[1] parameter(0)
  ROOT g = s32[2] all-gather(x), replica_groups={{1,0}}, dimensions={0}
})"), Scalars(4)));
  ExpectInts(gathered, {{3, 1}, {4, 2}, {3, 1}, {4, 2}});
}

TEST(Partitions, CrossReplicaAndPartition) {
  // channel_id, use_global_device_ids=false: the ids are replicas, each
  // with all its partitions, replica by replica.
  ASSERT_OK_AND_ASSIGN(own, RunText(Hlo("num_partitions=2", R"(
ENTRY e {
  x = s32[1] parameter(0)
  ROOT s = s32[1] all-reduce(x), channel_id=1, replica_groups={{0},{1}}, to_apply=add
})"), Scalars(4)));
  ExpectInts(own, {{3}, {3}, {7}, {7}});
  ASSERT_OK_AND_ASSIGN(all, RunText(Hlo("num_partitions=2", R"(
ENTRY e {
  x = s32[1] parameter(0)
  ROOT s = s32[1] all-reduce(x), channel_id=1, replica_groups={}, to_apply=add
})"), Scalars(4)));
  ExpectInts(all, {{10}, {10}, {10}, {10}});
  ASSERT_OK_AND_ASSIGN(order, RunText(Hlo("num_partitions=2", R"(
ENTRY e {
  x = s32[1] parameter(0)
  ROOT g = s32[4] all-gather(x), channel_id=1, replica_groups={{1,0}}, dimensions={0}
})"), Scalars(4)));
  ExpectInts(order, {{3, 4, 1, 2}, {3, 4, 1, 2}, {3, 4, 1, 2}, {3, 4, 1, 2}});
  // reduce-scatter in the same mode: per replica over its partitions;
  // x = {d, 10d}.
  ASSERT_OK_AND_ASSIGN(scatter, RunText(Hlo("num_partitions=2", R"(
ENTRY e {
  x = s32[2] parameter(0)
  ROOT s = s32[1] reduce-scatter(x), channel_id=1, replica_groups={{0},{1}}, dimensions={0}, to_apply=add
})"), PerDevice(4, "s32[2]", [](int d, int i) { return i == 0 ? d : 10 * d; })));
  ExpectInts(scatter, {{0 + 1}, {0 + 10}, {2 + 3}, {20 + 30}});
}

TEST(Partitions, FlattenedIds) {
  // use_global_device_ids=true: the ids are devices r * P + p.
  ASSERT_OK_AND_ASSIGN(runs, RunText(Hlo("num_partitions=2", R"(
ENTRY e {
  x = s32[1] parameter(0)
  ROOT g = s32[2] all-gather(x), channel_id=1, replica_groups={{0,3},{2,1}}, use_global_device_ids=true, dimensions={0}
})"), Scalars(4)));
  ExpectInts(runs, {{1, 4}, {3, 2}, {3, 2}, {1, 4}});
  ASSERT_OK_AND_ASSIGN(sum, RunText(Hlo("num_partitions=2", R"(
ENTRY e {
  x = s32[1] parameter(0)
  ROOT s = s32[1] all-reduce(x), channel_id=1, replica_groups={{0,2},{3,1}}, use_global_device_ids=true, to_apply=add
})"), Scalars(4)));
  ExpectInts(sum, {{1 + 3}, {4 + 2}, {1 + 3}, {4 + 2}});
  // XLA requires groups in this mode.
  ExpectBothFail(Hlo("num_partitions=2", R"(
ENTRY e {
  x = s32[1] parameter(0)
  ROOT s = s32[1] all-reduce(x), channel_id=1, replica_groups={}, use_global_device_ids=true, to_apply=add
})"), Scalars(4), absl::StatusCode::kInvalidArgument);
}

TEST(Partitions, CrossPartition) {
  // all-to-all with channel_id: the partitions of the device's replica;
  // x = {10d, 10d + 1}; partition p gets block p of each member.
  ASSERT_OK_AND_ASSIGN(a2a, RunText(Hlo("num_partitions=2", R"(
ENTRY e {
  x = s32[2] parameter(0)
  ROOT a = s32[2] all-to-all(x), channel_id=1, replica_groups={}, dimensions={0}
})"), PerDevice(4, "s32[2]", [](int d, int i) { return 10 * d + i; })));
  ExpectInts(a2a, {{0, 10}, {1, 11}, {20, 30}, {21, 31}});
  // collective-permute with channel_id: the pairs are partitions.
  ASSERT_OK_AND_ASSIGN(permute, RunText(Hlo("num_partitions=2", R"(
ENTRY e {
  x = s32[1] parameter(0)
  ROOT p = s32[1] collective-permute(x), channel_id=1, source_target_pairs={{0,1},{1,0}}
})"), Scalars(4)));
  ExpectInts(permute, {{2}, {1}, {4}, {3}});
  // Without channel_id they are replicas at the device's partition.
  ASSERT_OK_AND_ASSIGN(across, RunText(Hlo("num_partitions=2", R"(
ENTRY e {
  x = s32[1] parameter(0)
  ROOT p = s32[1] collective-permute(x), source_target_pairs={{0,1}}
})"), Scalars(4)));
  ExpectInts(across, {{0}, {0}, {1}, {2}});
  // collective-broadcast with channel_id from the group's first partition.
  ASSERT_OK_AND_ASSIGN(broadcast, RunText(Hlo("num_partitions=2", R"(
ENTRY e {
  x = s32[1] parameter(0)
  ROOT b = s32[1] collective-broadcast(x), channel_id=1, replica_groups={{1,0}}
})"), Scalars(4)));
  ExpectInts(broadcast, {{2}, {2}, {4}, {4}});
  // A partition id beyond the partitions.
  ExpectBothFail(Hlo("num_partitions=2", R"(
ENTRY e {
  x = s32[1] parameter(0)
  ROOT p = s32[1] collective-permute(x), channel_id=1, source_target_pairs={{0,2}}
})"), Scalars(4), absl::StatusCode::kInvalidArgument);
}

TEST(Partitions, PermuteInAWhileLoop) {
  // Two rounds of a ring over 3 partitions: partition p ends with x of
  // partition p - 2.
  ASSERT_OK_AND_ASSIGN(runs, RunText(Hlo("num_partitions=3", R"(
body {
  t = (s32[], s32[1]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  x = s32[1] get-tuple-element(t), index=1
  one = s32[] constant(1)
  n = s32[] add(i, one)
  y = s32[1] collective-permute(x), channel_id=1, source_target_pairs={{0,1},{1,2},{2,0}}
  ROOT r = (s32[], s32[1]) tuple(n, y)
}
cond {
  t = (s32[], s32[1]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  two = s32[] constant(2)
  ROOT lt = pred[] compare(i, two), direction=LT
}
ENTRY e {
  x = s32[1] parameter(0)
  zero = s32[] constant(0)
  t = (s32[], s32[1]) tuple(zero, x)
  w = (s32[], s32[1]) while(t), condition=cond, body=body
  ROOT y = s32[1] get-tuple-element(w), index=1
})"), Scalars(3)));
  ExpectInts(runs, {{2}, {3}, {1}});
}

// The default AllToAll (through AllGather, as a transport without its own
// gets it) next to the in-process one.
class GatherOnly : public collectives::Communicator {
 public:
  explicit GatherOnly(collectives::InProcessCommunicator* inner) : inner_(inner) {}
  int64_t replica_id() const override { return inner_->replica_id(); }
  int64_t replica_count() const override { return inner_->replica_count(); }
  int64_t partition_id() const override { return inner_->partition_id(); }
  int64_t partition_count() const override { return inner_->partition_count(); }
  absl::Status AllGather(const Instruction& site, absl::Span<const int64_t> group,
                         absl::Span<const uint8_t> mine, absl::Span<uint8_t> all) override {
    return inner_->AllGather(site, group, mine, all);
  }

 private:
  collectives::InProcessCommunicator* inner_;
};

TEST(Partitions, CommunicatorAllToAllMovesBlocks) {
  // 2 replicas x 2 partitions; the group is devices {3, 0, 2} (device 1
  // stays out); member i's block j (bytes 10 * device + j, 3 bytes each)
  // goes to member j's block i. Device 3 writes over its own input.
  ASSERT_OK_AND_ASSIGN(module, ParseVerified(R"(HloModule m, num_partitions=2
ENTRY e {
  x = s32[3] parameter(0)
  ROOT a = s32[3] all-to-all(x), channel_id=1, dimensions={0}
})"));
  const Instruction& site = *module->entry()->root();
  const std::vector<int64_t> group = {3, 0, 2};
  const int64_t block = 3;
  for (bool in_process : {true, false}) {
    eval::Rendezvous rendezvous(2, 2);
    std::vector<std::vector<uint8_t>> in(4), out(4, std::vector<uint8_t>(9, 0xff));
    for (int d = 0; d < 4; ++d) {
      for (int j = 0; j < 3; ++j) in[d].insert(in[d].end(), block, 10 * d + j);
    }
    std::vector<absl::Status> statuses(4);
    std::vector<std::thread> threads;
    for (int64_t d : group) {
      threads.emplace_back([&, d] {
        collectives::InProcessCommunicator communicator(&rendezvous, d / 2, d % 2);
        GatherOnly fallback(&communicator);
        collectives::Communicator& c =
            in_process ? static_cast<collectives::Communicator&>(communicator) : fallback;
        void* target = d == 3 ? static_cast<void*>(in[d].data()) : out[d].data();
        statuses[d] = c.AllToAll(site, group, in[d].data(), target, block);
        if (d == 3) out[d] = in[d];
      });
    }
    for (std::thread& t : threads) t.join();
    for (size_t j = 0; j < group.size(); ++j) {
      const int64_t d = group[j];
      EXPECT_TRUE(statuses[d].ok()) << statuses[d];
      std::vector<uint8_t> expected;
      for (int64_t sender : group) {
        expected.insert(expected.end(), block, static_cast<uint8_t>(10 * sender + j));
      }
      EXPECT_EQ(out[d], expected) << (in_process ? "in process" : "default") << ", device " << d;
    }
  }
}

// ---- Sharding calls ----

TEST(Sharding, ParsesXlaForms) {
  auto devices = [](const std::string& text) {
    absl::StatusOr<Sharding> s = ParseSharding(text);
    EXPECT_TRUE(s.ok()) << text << ": " << s.status();
    return s.ok() ? s->devices : V{};
  };
  EXPECT_EQ(devices("{devices=[4,1]<=[4]}"), (V{0, 1, 2, 3}));
  EXPECT_EQ(devices("{devices=[2,2]<=[2,2]T(1,0)}"), (V{0, 2, 1, 3}));
  EXPECT_EQ(devices("{devices=[2,3]<=[3,2]T(1,0)}"), (V{0, 2, 4, 1, 3, 5}));
  EXPECT_EQ(devices("{devices=[2,1,2]3,1,2,0 last_tile_dim_replicate}"), (V{3, 1, 2, 0}));
  absl::StatusOr<Sharding> subgroups =
      ParseSharding("{devices=[2,1,2]<=[4] last_tile_dims={manual} metadata={op_name=\"a}\"}}");
  ASSERT_TRUE(subgroups.ok()) << subgroups.status();
  EXPECT_EQ(subgroups->subgroup_dims, 1);
  absl::StatusOr<Sharding> maximal = ParseSharding("{maximal device=3}");
  ASSERT_TRUE(maximal.ok()) << maximal.status();
  EXPECT_EQ(maximal->kind, Sharding::Kind::kMaximal);
  EXPECT_EQ(maximal->maximal_device, 3);
  absl::StatusOr<Sharding> tuple = ParseSharding("{{replicated}, {manual}, {devices=[2]0,1}}");
  ASSERT_TRUE(tuple.ok()) << tuple.status();
  ASSERT_EQ(tuple->elements.size(), 3u);
  EXPECT_EQ(tuple->elements[1].kind, Sharding::Kind::kManual);
  EXPECT_EQ(ParseSharding("{devices=[2,2]0,1,2}").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseSharding("{devices=[2]<=[2]T(1)}").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseSharding("{devices=[2]0,1 last_tile_dims={unreduced}}").status().code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(ParseSharding("{devices=[2]0,1 future_thing}").status().code(),
            absl::StatusCode::kUnimplemented);
  // Tiling: each partition exactly once.
  absl::StatusOr<Sharding> twice = ParseSharding("{devices=[2]0,0}");
  ASSERT_TRUE(twice.ok());
  EXPECT_EQ(TileArray(*twice, {4}, 2).status().code(), absl::StatusCode::kInvalidArgument);
}

// x = s32[4,6], x[i][j] = 10i + j, the same on every device.
std::vector<Literal> Grid46() {
  V values;
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 6; ++j) values.push_back(10 * i + j);
  }
  return {S32("s32[4,6]", values)};
}

TEST(Sharding, TilesAndAssemblesByIotaShardings) {
  // Partition p gets tile (p / 2, p % 2) of [2,2]<=[4], adds 100p, and the
  // tiles go back by [2,2]<=[2,2]T(1,0), whose tile (i, j) is partition
  // 2j + i's: (0,1) from 2, (1,0) from 1.
  const std::string hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  x = s32[4,6] parameter(0), sharding={devices=[2,2]<=[4]}
  s = s32[4,6] custom-call(x), custom_call_target="Sharding", sharding={devices=[2,2]<=[4]}
  shard = s32[2,3] custom-call(s), custom_call_target="SPMDFullToShardShape", sharding={manual}
  p = u32[] partition-id()
  ps = s32[] convert(p)
  hundred = s32[] constant(100)
  k = s32[] multiply(ps, hundred)
  kb = s32[2,3] broadcast(k), dimensions={}
  y = s32[2,3] add(shard, kb)
  full = s32[4,6] custom-call(y), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,2]<=[2,2]T(1,0)}
  ROOT t = (s32[2,3], s32[4,6]) tuple(shard, full)
})";
  ASSERT_OK_AND_ASSIGN(runs, RunText(hlo, Same(4, Grid46())));
  ExpectInts(runs, {{0, 1, 2, 10, 11, 12},
                    {3, 4, 5, 13, 14, 15},
                    {20, 21, 22, 30, 31, 32},
                    {23, 24, 25, 33, 34, 35}}, 0);
  const V full = {0,   1,   2,   220, 221, 222,  //
                  10,  11,  12,  230, 231, 232,  //
                  103, 104, 105, 323, 324, 325,  //
                  113, 114, 115, 333, 334, 335};
  ExpectInts(runs, {full, full, full, full}, 1);
  // Two replicas: each assembles from its own partitions.
  ASSERT_OK_AND_ASSIGN(two, RunText(hlo, Same(8, Grid46())));
  ExpectInts(two, std::vector<V>(8, full), 1);
}

TEST(Sharding, UnevenTilesAndReplicatedSubgroups) {
  // [2,2] with the last dimension replicating: partitions 0 and 1 hold tile
  // 0 (x[0:3]), 2 and 3 tile 1 (x[3:5] and a zero of padding). Back by
  // devices 3,2,1,0: tile 0 is 3's (first of {3,2}), tile 1 is 1's.
  const std::string hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  x = s32[5] parameter(0)
  s = s32[5] custom-call(x), custom_call_target="Sharding", sharding={devices=[2,2]0,1,2,3 last_tile_dim_replicate}
  shard = s32[3] custom-call(s), custom_call_target="SPMDFullToShardShape", sharding={manual}
  p = u32[] partition-id()
  ps = s32[] convert(p)
  ten = s32[] constant(10)
  k = s32[] multiply(ps, ten)
  kb = s32[3] broadcast(k), dimensions={}
  y = s32[3] add(shard, kb)
  full = s32[5] custom-call(y), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,2]3,2,1,0 last_tile_dim_replicate}
  ROOT t = (s32[3], s32[5]) tuple(shard, full)
})";
  ASSERT_OK_AND_ASSIGN(runs, RunText(hlo, Same(4, {S32("s32[5]", {1, 2, 3, 4, 5})})));
  ExpectInts(runs, {{1, 2, 3}, {1, 2, 3}, {4, 5, 0}, {4, 5, 0}}, 0);
  const V full = {34, 35, 30, 11, 12};
  ExpectInts(runs, {full, full, full, full}, 1);
}

TEST(Sharding, OneTileKeepsTheOperand) {
  // Replicated, maximal and manual shardings cut one tile: FullToShard
  // passes the array, ShardToFull keeps each partition's own value.
  ASSERT_OK_AND_ASSIGN(runs, RunText(R"(HloModule m, num_partitions=2
ENTRY e {
  x = s32[2] parameter(0), sharding={replicated}
  shard = s32[2] custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={manual}
  p = u32[] partition-id()
  ps = s32[] convert(p)
  pb = s32[2] broadcast(ps), dimensions={}
  y = s32[2] add(shard, pb)
  a = s32[2] custom-call(y), custom_call_target="SPMDShardToFullShape", sharding={replicated}
  b = s32[2] custom-call(y), custom_call_target="SPMDShardToFullShape", sharding={maximal device=1}
  ROOT t = (s32[2], s32[2]) tuple(a, b)
})", Same(2, {S32("s32[2]", {5, 7})})));
  ExpectInts(runs, {{5, 7}, {6, 8}}, 0);
  ExpectInts(runs, {{5, 7}, {6, 8}}, 1);
}

TEST(Sharding, BadShardingsFailOnBothBackends) {
  const std::string tail = R"(
  shard = s32[2,6] custom-call(s), custom_call_target="SPMDFullToShardShape", sharding={manual}
  ROOT full = s32[4,6] custom-call(shard), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,1]<=[2]}
})";
  auto module = [&](const std::string& sharding) {
    return "HloModule m, num_partitions=2\nENTRY e {\n  x = s32[4,6] parameter(0)\n"
           "  s = s32[4,6] custom-call(x), custom_call_target=\"Sharding\", sharding=" +
           sharding + tail;
  };
  // Tiles of [4,3], not [2,6].
  ExpectBothFail(module("{devices=[1,2]<=[2]}"), Same(2, Grid46()),
                 absl::StatusCode::kInvalidArgument);
  // Partition 2 of 2.
  ExpectBothFail(module("{devices=[2,1]1,2}"), Same(2, Grid46()),
                 absl::StatusCode::kInvalidArgument);
  // A form xjit does not read.
  ExpectBothFail(module("{devices=[2,1]<=[2] last_tile_dims={unreduced}}"), Same(2, Grid46()),
                 absl::StatusCode::kUnimplemented);
  // No sharding to cut by.
  ExpectBothFail(R"(HloModule m, num_partitions=2
ENTRY e {
  x = s32[4,6] parameter(0)
  ROOT shard = s32[2,6] custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={manual}
})", Same(2, Grid46()), absl::StatusCode::kInvalidArgument);
}

TEST(Sharding, PlainRunOfSeveralPartitionsIsRefused) {
  // Outside a run of every partition a ShardToFull has no other shards.
  ASSERT_OK_AND_ASSIGN(module, ParseVerified(R"(HloModule m, num_partitions=2
ENTRY e {
  x = s32[2] parameter(0)
  ROOT full = s32[4] custom-call(x), custom_call_target="SPMDShardToFullShape", sharding={devices=[2]<=[2]}
})"));
  const std::vector<Literal> arguments = {S32("s32[2]", {1, 2})};
  EXPECT_EQ(EvaluateModule(*module, arguments).status().code(), absl::StatusCode::kUnimplemented);
  ASSERT_OK_AND_ASSIGN(executable, Compile(*module, CompileOptions()));
  EXPECT_EQ(executable->Run(arguments).status().code(), absl::StatusCode::kUnimplemented);
}

// ---- The corpus's shard_map module ----

uint16_t Bf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return static_cast<uint16_t>(bits >> 16);  // Exact for the values below.
}

TEST(Partitions, CorpusShardMapModule) {
  const fs::path path = fs::path(XJIT_SHARED_DIR) / "corpus" / "xla-tests" /
                        "xla__tests__collective_ops_e2e_test.cc__L3773.hlo";
  if (!fs::exists(path)) GTEST_SKIP() << "no corpus module " << path << " (../shared is absent)";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  ASSERT_OK_AND_ASSIGN(module, ParseVerified(text.str()));
  ASSERT_EQ(module->num_partitions(), 4);
  // x[i][j]: integers in [-100, 99], exact in bf16 (and twice them).
  ASSERT_OK_AND_ASSIGN(shape, ParseShape("bf16[128,96]"));
  Literal x(shape);
  auto value = [](int64_t i, int64_t j) {
    return static_cast<float>((i * 7 + j * 3) % 200 - 100);
  };
  for (int64_t i = 0; i < 128; ++i) {
    for (int64_t j = 0; j < 96; ++j) x.SetBitsLinear(i * 96 + j, Bf16(value(i, j)));
  }
  // Partition p's shard is rows 32p.. of x. Three rounds of the ring leave
  // the first result with partition p - 3 = p + 1's shard and the second
  // with twice partition p - 2's; ShardToFull puts partition p's at columns
  // 96p.. of [32, 384].
  for (int replicas : {1, 2}) {
    ASSERT_OK_AND_ASSIGN(runs, RunBoth(*module, Same(4 * replicas, {x})));
    for (const std::vector<Literal>* results : {&runs.interpreter, &runs.jit}) {
      for (const Literal& result : *results) {
        ASSERT_TRUE(result.shape().IsTuple());
        for (int64_t row = 0; row < 32; ++row) {
          for (int64_t column = 0; column < 384; ++column) {
            const int64_t p = column / 96, j = column % 96;
            const int64_t first = ((p + 1) % 4) * 32 + row;
            const int64_t second = ((p + 2) % 4) * 32 + row;
            ASSERT_EQ(result.element(0).GetBitsLinear(row * 384 + column),
                      Bf16(value(first, j)))
                << row << "," << column;
            ASSERT_EQ(result.element(1).GetBitsLinear(row * 384 + column),
                      Bf16(2 * value(second, j)))
                << row << "," << column;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace xjit::jit::testing
