// MpiCommunicator (runtime/collectives/mpi_communicator.h) on its own, run
// under `mpirun -np N` (N = 2, 4): the primitives the collective steps call,
// against what the in-process transport gives (FoldInGroupOrder, the
// gathered bytes): all-gather in and out of rank order, the fixed-order f32
// and f64 all-reduce with `out` aliasing `in` and without, the exact
// integer all-reduce, point-to-point Send/Recv (order per tag, to itself,
// a size mismatch), ranks at different collectives (FailedPrecondition) and
// the timeout (DeadlineExceeded). Every rank runs every test; the process
// exits non-zero when any rank failed.
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include "gtest/gtest.h"
#include "ir/hlo_text/parser.h"
#include "ir/module.h"
#include "runtime/collectives/mpi_communicator.h"

namespace xjit::collectives {
namespace {

int Rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int Size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// Instructions to name as collective sites.
class Sites {
 public:
  Sites() {
    auto module = ParseHloModule(R"(HloModule sites
ENTRY e {
  a = f32[] parameter(0)
  b = f32[] negate(a)
  ROOT c = f32[] abs(b)
})", "sites");
    EXPECT_TRUE(module.ok()) << module.status();
    module_ = std::move(*module);
  }
  const Instruction& a() const { return *module_->entry()->parameter(0); }
  const Instruction& b() const { return *module_->entry()->root()->operand(0); }
  const Instruction& c() const { return *module_->entry()->root(); }

 private:
  std::unique_ptr<Module> module_;
};

std::unique_ptr<Communicator> World(double timeout = 0) {
  MpiOptions options;
  options.timeout_seconds = timeout;
  auto communicator = MakeMpiCommunicator(MPI_Comm_c2f(MPI_COMM_WORLD), options);
  EXPECT_TRUE(communicator.ok()) << communicator.status();
  return communicator.ok() ? std::move(*communicator) : nullptr;
}

// Replica r's float values: different per replica, with cancellation so
// that the order of a sum shows in its bits.
std::vector<float> FloatValues(int r, int64_t count) {
  std::vector<float> values(count);
  for (int64_t i = 0; i < count; ++i) {
    values[i] = ((i * 7919 + r * 104729) % 2001 - 1000) * (r % 2 == 0 ? 1e-3f : 1.37e4f);
  }
  return values;
}

std::vector<int64_t> Iota(int n) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

TEST(MpiCommunicator, AllGatherInAndOutOfRankOrder) {
  Sites sites;
  auto world = World();
  ASSERT_NE(world, nullptr);
  EXPECT_EQ(world->replica_id(), Rank());
  EXPECT_EQ(world->replica_count(), Size());
  std::vector<int64_t> group = Iota(Size());
  std::vector<int64_t> reversed(group.rbegin(), group.rend());
  for (const std::vector<int64_t>& g : {group, reversed}) {
    const std::vector<uint8_t> mine = {static_cast<uint8_t>(Rank()), 7, 9};
    std::vector<uint8_t> all(3 * g.size());
    ASSERT_TRUE(world->AllGather(sites.a(), g, mine, absl::MakeSpan(all)).ok());
    for (size_t m = 0; m < g.size(); ++m) {
      EXPECT_EQ(all[3 * m], g[m]) << "member " << m;
      EXPECT_EQ(all[3 * m + 2], 9);
    }
  }
}

// Every group shape the float all-reduce takes (a pair, more members, out
// of rank order), several lengths (unequal blocks, several segments), `out`
// aliasing `in` or not: the bits of FoldInGroupOrder over the same values.
TEST(MpiCommunicator, FloatAllReduceIsTheGroupOrderFold) {
  Sites sites;
  auto world = World();
  ASSERT_NE(world, nullptr);
  std::vector<std::vector<int64_t>> groups = {Iota(Size())};
  groups.push_back(std::vector<int64_t>(groups[0].rbegin(), groups[0].rend()));
  if (Size() == 4) groups.push_back({1, 3, 0, 2});
  for (const std::vector<int64_t>& group : groups) {
    for (int64_t count : {int64_t{1}, int64_t{1001}, int64_t{3} << 20 | 5}) {
      for (bool aliased : {false, true}) {
        std::vector<float> values;
        for (int64_t r : group) {
          std::vector<float> v = FloatValues(static_cast<int>(r), count);
          values.insert(values.end(), v.begin(), v.end());
        }
        std::vector<float> expected(count);
        FoldInGroupOrder(ElementType::kF32, ReductionKind::kSum, values.data(),
                         static_cast<int64_t>(group.size()), count, expected.data());
        std::vector<float> in = FloatValues(Rank(), count), out(count);
        float* target = aliased ? in.data() : out.data();
        ASSERT_TRUE(world->AllReduce(sites.b(), group, ElementType::kF32, ReductionKind::kSum,
                                     in.data(), target, count)
                        .ok());
        EXPECT_EQ(std::memcmp(target, expected.data(), count * sizeof(float)), 0)
            << "group of " << group.size() << ", " << count << " elements, aliased " << aliased;
      }
    }
  }
  // f64 product and f32 max (the reference fold's path).
  const int64_t count = 4099;
  std::vector<double> d(count), dall;
  for (int r = 0; r < Size(); ++r) {
    for (int64_t i = 0; i < count; ++i) dall.push_back(1.0 + 1e-3 * ((i + 3 * r) % 17) - 0.008);
  }
  std::copy(dall.begin() + Rank() * count, dall.begin() + (Rank() + 1) * count, d.begin());
  std::vector<double> dexpected(count), dout(count);
  FoldInGroupOrder(ElementType::kF64, ReductionKind::kProduct, dall.data(), Size(), count,
                   dexpected.data());
  ASSERT_TRUE(world->AllReduce(sites.c(), Iota(Size()), ElementType::kF64,
                               ReductionKind::kProduct, d.data(), dout.data(), count)
                  .ok());
  EXPECT_EQ(std::memcmp(dout.data(), dexpected.data(), count * sizeof(double)), 0);
}

TEST(MpiCommunicator, IntegerAllReduceWraps) {
  Sites sites;
  auto world = World();
  ASSERT_NE(world, nullptr);
  std::vector<int32_t> in = {INT32_MAX, -5 * Rank(), 1 << 30, Rank()};
  std::vector<int32_t> all;
  for (int r = 0; r < Size(); ++r) {
    all.insert(all.end(), {INT32_MAX, -5 * r, 1 << 30, r});
  }
  for (ReductionKind kind : {ReductionKind::kSum, ReductionKind::kProduct, ReductionKind::kMax,
                             ReductionKind::kMin, ReductionKind::kAnd, ReductionKind::kOr}) {
    std::vector<int32_t> expected(4), out(4);
    FoldInGroupOrder(ElementType::kS32, kind, all.data(), Size(), 4, expected.data());
    ASSERT_TRUE(world->AllReduce(sites.a(), Iota(Size()), ElementType::kS32, kind, in.data(),
                                 out.data(), 4)
                    .ok());
    EXPECT_EQ(out, expected) << static_cast<int>(kind);
  }
}

TEST(MpiCommunicator, SendRecvInOrderPerTag) {
  Sites sites;
  auto world = World();
  ASSERT_NE(world, nullptr);
  const int next = (Rank() + 1) % Size(), previous = (Rank() + Size() - 1) % Size();
  // Three messages under tag 5 and one under tag 6 to the next rank, one to
  // itself; received in another order of tags.
  for (uint8_t k = 0; k < 3; ++k) {
    const std::vector<uint8_t> message = {static_cast<uint8_t>(Rank()), k};
    ASSERT_TRUE(world->Send(sites.a(), next, 5, message).ok());
  }
  const std::vector<uint8_t> other = {static_cast<uint8_t>(Rank()), 99, 1};
  ASSERT_TRUE(world->Send(sites.a(), next, 6, other).ok());
  const std::vector<uint8_t> self = {42};
  ASSERT_TRUE(world->Send(sites.a(), Rank(), 5, self).ok());
  std::vector<uint8_t> got(3);
  ASSERT_TRUE(world->Recv(sites.b(), previous, 6, absl::MakeSpan(got)).ok());
  EXPECT_EQ(got, (std::vector<uint8_t>{static_cast<uint8_t>(previous), 99, 1}));
  if (Size() > 1) {
    for (uint8_t k = 0; k < 3; ++k) {
      std::vector<uint8_t> message(2);
      ASSERT_TRUE(world->Recv(sites.b(), previous, 5, absl::MakeSpan(message)).ok());
      EXPECT_EQ(message, (std::vector<uint8_t>{static_cast<uint8_t>(previous), k}));
    }
  }
  std::vector<uint8_t> mine(1);
  ASSERT_TRUE(world->Recv(sites.b(), Rank(), 5, absl::MakeSpan(mine)).ok());
  EXPECT_EQ(mine[0], 42);
  // A message of another size is consumed and reported.
  ASSERT_TRUE(world->Send(sites.a(), next, 7, self).ok());
  std::vector<uint8_t> two(2);
  absl::Status status = world->Recv(sites.b(), previous, 7, absl::MakeSpan(two));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_EQ(world->Send(sites.a(), next, -1, self).code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(world->Send(sites.a(), Size(), 1, self).code(), absl::StatusCode::kInvalidArgument);
}

TEST(MpiCommunicator, RanksAtDifferentCollectivesFail) {
  Sites sites;
  auto world = World();
  ASSERT_NE(world, nullptr);
  const std::vector<uint8_t> mine = {1};
  std::vector<uint8_t> all(Size());
  absl::Status status =
      world->AllGather(Rank() == 0 ? sites.a() : sites.b(), Iota(Size()), mine,
                       absl::MakeSpan(all));
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
}

TEST(MpiCommunicator, RecvTimesOut) {
  Sites sites;
  auto world = World(/*timeout=*/0.5);
  ASSERT_NE(world, nullptr);
  std::vector<uint8_t> byte(1);
  absl::Status status = world->Recv(sites.a(), (Rank() + 1) % Size(), 9, absl::MakeSpan(byte));
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  // Nothing was pending: the communicator still works.
  std::vector<uint8_t> all(Size());
  const std::vector<uint8_t> mine = {3};
  EXPECT_TRUE(world->AllGather(sites.c(), Iota(Size()), mine, absl::MakeSpan(all)).ok());
}

}  // namespace
}  // namespace xjit::collectives

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    // One rank's report is enough; failures on others still print.
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0, any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any && failed) std::fprintf(stderr, "rank %d: FAILED\n", rank);
  MPI_Finalize();
  return any;
}
