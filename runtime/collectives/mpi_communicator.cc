// MpiCommunicator over MPI (see mpi_communicator.h). Built only when meson
// finds MPI; mpi_unavailable.cc stands in otherwise.
#include "runtime/collectives/mpi_communicator.h"

#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <deque>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/computation.h"
#include "ir/opcode.h"
#include "ir/status_macros.h"

namespace xjit::collectives {
namespace {

absl::Status MpiStatus(int code, absl::string_view what) {
  if (code == MPI_SUCCESS) return absl::OkStatus();
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return absl::InternalError(absl::StrCat("MPI ", what, ": ", absl::string_view(text, length)));
}

#define XJIT_MPI(call, what) XJIT_RETURN_IF_ERROR(MpiStatus((call), (what)))

// FNV-1a: the same on every process (absl::Hash is seeded per process).
uint64_t Fingerprint(absl::string_view text, uint64_t seed) {
  uint64_t h = 0xcbf29ce484222325ull ^ seed;
  for (char c : text) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

// What identifies a collective across processes that run the same module:
// the computation and the instruction (names are unique within each), the
// opcode, the result shape (element types and dimensions), the groups and
// the transport primitive. Two all-reduces that share a name in different
// branches, one over f32 and one over s32, differ here (issue 30: the name
// and the byte count alone let them meet and exchange bytes).
// The instruction's part, computed once per site (SiteIdentity below);
// the primitive is mixed in per call.
uint64_t InstructionFingerprint(const Instruction& site) {
  std::string identity = absl::StrCat(
      site.parent() != nullptr ? site.parent()->name() : "", "/", site.name(), "|",
      OpcodeName(site.opcode()), "|", site.shape().ToString(/*print_layout=*/false), "|");
  for (const std::vector<int64_t>& group : site.attrs().replica_groups) {
    absl::StrAppend(&identity, "{", absl::StrJoin(group, ","), "}");
  }
  return Fingerprint(identity, 0);
}

// The site of the header a rank sends when it finishes a run (ProgramDone).
const uint64_t kProgramDoneSite = Fingerprint("the end of the program", 0);
// The site of the header every rank sends before a run (AgreeToRun).
const uint64_t kAgreeSite = Fingerprint("the start of a run", 0);
// The site of the header a rank sends when it runs nothing more (Leave).
const uint64_t kLeaveSite = Fingerprint("the rank leaves", 0);

// What every member of a collective states before its data moves.
struct CallHeader {
  uint64_t site = 0;        // InstructionFingerprint mixed with the primitive.
  uint64_t occurrence = 0;  // How often this replica reached it before.
  uint64_t bytes = 0;       // This member's contribution.
};

// Bytes a member folds per round of the float all-reduce of more than two
// members. Each round is one exchange between every pair, so rounds cost
// synchronisations (ranks descheduled on a loaded machine wait for each
// other once per round): few large ones beat many cache-sized ones.
constexpr int64_t kSegmentBytes = int64_t{8} << 20;

// Chunks of the two-member float all-reduce.
constexpr int64_t kPairChunkBytes = int64_t{2} << 20;

// Largest message of one MPI call (counts are int).
constexpr int64_t kMaxMessageBytes = int64_t{1} << 30;

// out[i] = ((m0[i] op m1[i]) op m2[i]) ... for sum and product: the order of
// FoldInGroupOrder, in tiles so that the compiler vectorises across i (the
// per-element order, hence the bits, is the same). `out` may be m0 or m1
// (each element of both is read before it is written).
template <typename T>
void FoldArithmetic(bool sum, absl::Span<const T* const> members, int64_t count, T* out) {
  constexpr int64_t kTile = 1024;
  for (int64_t begin = 0; begin < count; begin += kTile) {
    const int64_t n = std::min(kTile, count - begin);
    T* o = out + begin;
    const T* a = members[0] + begin;
    if (members.size() == 1) {
      if (o != a) std::memcpy(o, a, n * sizeof(T));
      continue;
    }
    const T* b = members[1] + begin;
    if (sum) {
      for (int64_t i = 0; i < n; ++i) o[i] = a[i] + b[i];
    } else {
      for (int64_t i = 0; i < n; ++i) o[i] = a[i] * b[i];
    }
    for (size_t m = 2; m < members.size(); ++m) {
      const T* v = members[m] + begin;
      if (sum) {
        for (int64_t i = 0; i < n; ++i) o[i] = o[i] + v[i];
      } else {
        for (int64_t i = 0; i < n; ++i) o[i] = o[i] * v[i];
      }
    }
  }
}

// The fold of `members` (count elements each, in group order) into `out`,
// which is one of the first two members or overlaps none.
void FoldMembers(ElementType type, ReductionKind kind, absl::Span<const void* const> members,
                 int64_t count, void* out, std::vector<uint8_t>& staging) {
  const bool arithmetic = kind == ReductionKind::kSum || kind == ReductionKind::kProduct;
  if (arithmetic && type == ElementType::kF32) {
    std::vector<const float*> typed;
    for (const void* m : members) typed.push_back(static_cast<const float*>(m));
    return FoldArithmetic<float>(kind == ReductionKind::kSum, typed, count,
                                 static_cast<float*>(out));
  }
  if (arithmetic && type == ElementType::kF64) {
    std::vector<const double*> typed;
    for (const void* m : members) typed.push_back(static_cast<const double*>(m));
    return FoldArithmetic<double>(kind == ReductionKind::kSum, typed, count,
                                  static_cast<double*>(out));
  }
  // max/min (NaN and signed-zero rules): the reference fold on a copy.
  const size_t bytes = static_cast<size_t>(count) * ByteWidth(type);
  staging.resize(bytes * members.size());
  for (size_t m = 0; m < members.size(); ++m) {
    if (bytes > 0) std::memcpy(staging.data() + m * bytes, members[m], bytes);
  }
  FoldInGroupOrder(type, kind, staging.data(), static_cast<int64_t>(members.size()), count, out);
}

// The MPI datatype and operation of an exact (integer or pred) all-reduce.
// Signed sums and products wrap: computed on the unsigned type of the same
// width (the same bits).
bool ExactReduction(ElementType type, ReductionKind kind, MPI_Datatype* datatype, MPI_Op* op) {
  const bool wrap = kind == ReductionKind::kSum || kind == ReductionKind::kProduct ||
                    kind == ReductionKind::kAnd || kind == ReductionKind::kOr;
  switch (type) {
    case ElementType::kPred:
      *datatype = MPI_UINT8_T;
      // The evaluator's pred rules: and/multiply/minimum are "and".
      *op = kind == ReductionKind::kAnd || kind == ReductionKind::kProduct ||
                    kind == ReductionKind::kMin
                ? MPI_LAND
                : MPI_LOR;
      return true;
    case ElementType::kS8: *datatype = wrap ? MPI_UINT8_T : MPI_INT8_T; break;
    case ElementType::kS16: *datatype = wrap ? MPI_UINT16_T : MPI_INT16_T; break;
    case ElementType::kS32: *datatype = wrap ? MPI_UINT32_T : MPI_INT32_T; break;
    case ElementType::kS64: *datatype = wrap ? MPI_UINT64_T : MPI_INT64_T; break;
    case ElementType::kU8: *datatype = MPI_UINT8_T; break;
    case ElementType::kU16: *datatype = MPI_UINT16_T; break;
    case ElementType::kU32: *datatype = MPI_UINT32_T; break;
    case ElementType::kU64: *datatype = MPI_UINT64_T; break;
    default: return false;
  }
  switch (kind) {
    case ReductionKind::kSum: *op = MPI_SUM; break;
    case ReductionKind::kProduct: *op = MPI_PROD; break;
    case ReductionKind::kMax: *op = MPI_MAX; break;
    case ReductionKind::kMin: *op = MPI_MIN; break;
    case ReductionKind::kAnd: *op = MPI_BAND; break;
    case ReductionKind::kOr: *op = MPI_BOR; break;
  }
  return true;
}

class MpiCommunicator : public Communicator {
 public:
  MpiCommunicator(MPI_Comm world, MPI_Comm point_to_point, MPI_Comm control, int rank, int size,
                  MpiOptions options)
      : world_(world), point_to_point_(point_to_point), control_(control), rank_(rank),
        size_(size), options_(options) {
    int* upper = nullptr;
    int found = 0;
    MPI_Comm_get_attr(point_to_point_, MPI_TAG_UB, &upper, &found);
    tag_upper_bound_ = found && upper != nullptr ? *upper : 32767;
  }

  ~MpiCommunicator() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    // Sends nobody received complete in the background (Open MPI cannot
    // cancel sends).
    for (PendingSend& send : sends_) {
      if (send.request != MPI_REQUEST_NULL) MPI_Request_free(&send.request);
    }
    for (auto& [group, comm] : groups_) MPI_Comm_free(&comm);
    for (MPI_Request& request : header_sends_) {
      if (request != MPI_REQUEST_NULL) MPI_Request_free(&request);
    }
    MPI_Comm_free(&control_);
    MPI_Comm_free(&point_to_point_);
    MPI_Comm_free(&world_);
  }

  int64_t replica_id() const override { return rank_; }
  int64_t replica_count() const override { return size_; }

  absl::Status AllGather(const Instruction& site, absl::Span<const int64_t> group,
                         absl::Span<const uint8_t> mine, absl::Span<uint8_t> all) override {
    if (all.size() != mine.size() * group.size()) {
      return absl::InternalError(absl::StrCat(site.name(), ": all-gather buffer of ", all.size(),
                                              " bytes for ", group.size(), " x ", mine.size()));
    }
    XJIT_ASSIGN_OR_RETURN(MPI_Comm comm, Begin(site, "all-gather", group, mine.size()));
    if (comm == MPI_COMM_NULL) {
      if (!mine.empty()) std::memcpy(all.data(), mine.data(), mine.size());
      return absl::OkStatus();
    }
    if (mine.size() > static_cast<size_t>(INT_MAX)) {
      return absl::UnimplementedError(absl::StrCat(
          site.name(), ": an MPI all-gather of more than 2 GiB per replica"));
    }
    const int bytes = static_cast<int>(mine.size());
    return Finish(site.name(), [&](MPI_Request* request) {
      return request == nullptr
                 ? MPI_Allgather(mine.data(), bytes, MPI_BYTE, all.data(), bytes, MPI_BYTE, comm)
                 : MPI_Iallgather(mine.data(), bytes, MPI_BYTE, all.data(), bytes, MPI_BYTE,
                                  comm, request);
    });
  }

  absl::Status AllReduce(const Instruction& site, absl::Span<const int64_t> group,
                         ElementType type, ReductionKind kind, const void* in, void* out,
                         int64_t count) override {
    const int64_t width = ByteWidth(type);
    const char* primitive = kind == ReductionKind::kSum       ? "all-reduce sum"
                            : kind == ReductionKind::kProduct ? "all-reduce product"
                            : kind == ReductionKind::kMax     ? "all-reduce max"
                            : kind == ReductionKind::kMin     ? "all-reduce min"
                            : kind == ReductionKind::kAnd     ? "all-reduce and"
                                                              : "all-reduce or";
    XJIT_ASSIGN_OR_RETURN(MPI_Comm comm, Begin(site, primitive, group, count * width));
    if (comm == MPI_COMM_NULL) {
      if (in != out && count > 0) std::memmove(out, in, count * width);
      return absl::OkStatus();
    }
    MPI_Datatype datatype = MPI_BYTE;
    MPI_Op op = MPI_SUM;
    if (ExactReduction(type, kind, &datatype, &op)) {
      // Chunks of at most 2^30 elements: MPI counts are int.
      constexpr int64_t kChunk = int64_t{1} << 30;
      for (int64_t begin = 0; begin < count; begin += kChunk) {
        const int n = static_cast<int>(std::min(kChunk, count - begin));
        const uint8_t* source = static_cast<const uint8_t*>(in) + begin * width;
        uint8_t* target = static_cast<uint8_t*>(out) + begin * width;
        const void* send = in == out ? MPI_IN_PLACE : source;
        XJIT_RETURN_IF_ERROR(Finish(site.name(), [&](MPI_Request* request) {
          return request == nullptr
                     ? MPI_Allreduce(send, target, n, datatype, op, comm)
                     : MPI_Iallreduce(send, target, n, datatype, op, comm, request);
        }));
      }
      return absl::OkStatus();
    }
    if (type != ElementType::kF32 && type != ElementType::kF64) {
      return Communicator::AllReduce(site, group, type, kind, in, out, count);
    }
    if (group.size() == 2) {
      return PairAllReduce(site, type, kind, static_cast<const uint8_t*>(in),
                           static_cast<uint8_t*>(out), count, comm);
    }
    return OrderedAllReduce(site, static_cast<int>(group.size()), type, kind,
                            static_cast<const uint8_t*>(in), static_cast<uint8_t*>(out), count,
                            comm);
  }

  // Point to point on a communicator of its own (the all-reduce's
  // messages on the group communicators never match these). A send copies
  // the bytes and returns; the copy lives until MPI has sent it.
  absl::Status Send(const Instruction& site, int64_t peer, int64_t tag,
                    absl::Span<const uint8_t> bytes) override {
    XJIT_RETURN_IF_ERROR(CheckPointToPoint(site, peer, tag, bytes.size()));
    ReapSends();
    sends_.emplace_back();
    PendingSend& send = sends_.back();
    send.bytes.assign(bytes.begin(), bytes.end());
    XJIT_MPI(MPI_Isend(send.bytes.data(), static_cast<int>(send.bytes.size()), MPI_BYTE,
                       static_cast<int>(peer), static_cast<int>(tag), point_to_point_,
                       &send.request),
             site.name());
    return absl::OkStatus();
  }

  absl::Status Recv(const Instruction& site, int64_t peer, int64_t tag,
                    absl::Span<uint8_t> bytes) override {
    XJIT_RETURN_IF_ERROR(CheckPointToPoint(site, peer, tag, bytes.size()));
    ReapSends();
    // Probe first: a message of another size is received (it is consumed,
    // as in process) and reported.
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Status status;
    const int source = static_cast<int>(peer), mpi_tag = static_cast<int>(tag);
    if (options_.timeout_seconds <= 0) {
      XJIT_MPI(MPI_Mprobe(source, mpi_tag, point_to_point_, &message, &status), site.name());
    } else {
      const auto deadline = std::chrono::steady_clock::now() +
                            std::chrono::duration<double>(options_.timeout_seconds);
      while (true) {
        int found = 0;
        XJIT_MPI(MPI_Improbe(source, mpi_tag, point_to_point_, &found, &message, &status),
                 site.name());
        if (found) break;
        if (std::chrono::steady_clock::now() > deadline) {
          // Nothing is pending: the communicator stays usable.
          return absl::DeadlineExceededError(absl::StrCat(
              site.name(), ": replica ", rank_, " waited more than ", options_.timeout_seconds,
              " s for a message from replica ", peer));
        }
        sched_yield();
      }
    }
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    if (static_cast<size_t>(count) != bytes.size()) {
      std::vector<uint8_t> discard(count);
      XJIT_MPI(MPI_Mrecv(discard.data(), count, MPI_BYTE, &message, MPI_STATUS_IGNORE),
               site.name());
      return absl::InvalidArgumentError(absl::StrCat(site.name(), ": replica ", peer, " sent ",
                                                     count, " bytes where ", bytes.size(),
                                                     " are expected"));
    }
    return MpiStatus(MPI_Mrecv(bytes.data(), count, MPI_BYTE, &message, MPI_STATUS_IGNORE),
                     site.name());
  }

 private:
  struct PendingSend {
    MPI_Request request = MPI_REQUEST_NULL;
    std::vector<uint8_t> bytes;
  };

  absl::Status CheckPointToPoint(const Instruction& site, int64_t peer, int64_t tag,
                                 size_t bytes) {
    if (!broken_.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("the MPI communicator failed before: ", broken_.message()));
    }
    if (peer < 0 || peer >= size_) {
      return absl::InvalidArgumentError(
          absl::StrCat(site.name(), ": replica ", peer, " of ", size_));
    }
    if (tag < 0 || tag > tag_upper_bound_) {
      return absl::UnimplementedError(absl::StrCat(site.name(), ": tag ", tag,
                                                   " outside the MPI library's [0, ",
                                                   tag_upper_bound_, "]"));
    }
    if (bytes > static_cast<size_t>(INT_MAX)) {
      return absl::UnimplementedError(
          absl::StrCat(site.name(), ": an MPI message of more than 2 GiB"));
    }
    return absl::OkStatus();
  }

  // Frees the copies of sends MPI has finished.
  void ReapSends() {
    while (!sends_.empty()) {
      int done = 0;
      MPI_Test(&sends_.front().request, &done, MPI_STATUS_IGNORE);
      if (!done) break;
      sends_.pop_front();
    }
  }

  // Runs an MPI operation blocking (request null) or, with a timeout, as a
  // non-blocking one polled until done or the deadline.
  template <typename Start>
  absl::Status Finish(absl::string_view what, Start start) {
    if (options_.timeout_seconds <= 0) return MpiStatus(start(nullptr), what);
    MPI_Request request = MPI_REQUEST_NULL;
    XJIT_RETURN_IF_ERROR(MpiStatus(start(&request), what));
    return Wait(what, absl::MakeSpan(&request, 1));
  }

  absl::Status Wait(absl::string_view what, absl::Span<MPI_Request> requests) {
    if (requests.empty()) return absl::OkStatus();
    if (options_.timeout_seconds <= 0) {
      return MpiStatus(MPI_Waitall(static_cast<int>(requests.size()), requests.data(),
                                   MPI_STATUSES_IGNORE),
                       what);
    }
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration<double>(options_.timeout_seconds);
    while (true) {
      int done = 0;
      XJIT_RETURN_IF_ERROR(MpiStatus(MPI_Testall(static_cast<int>(requests.size()),
                                                 requests.data(), &done, MPI_STATUSES_IGNORE),
                                     what));
      if (done) return absl::OkStatus();
      if (std::chrono::steady_clock::now() > deadline) {
        broken_ = absl::DeadlineExceededError(absl::StrCat(
            what, ": replica ", rank_, " waited more than ", options_.timeout_seconds,
            " s for the other replicas (one failed, hangs or reached another collective)"));
        return broken_;
      }
      sched_yield();
    }
  }

  // Every member's header, in the order of `members` (world ranks, this one
  // among them), through point-to-point messages on control_: each member
  // sends its header to every other and receives one from each. Headers
  // travel on one communicator whatever the group, so a header that ends a
  // run (ProgramDone, Leave) reaches a rank that waits in a collective of
  // any replica group of which the finished rank is a member, and the two
  // fail at once instead of waiting on different communicators (issue 30:
  // a group's own communicator never carried the end of a run). Between two
  // ranks headers are consumed in the order sent (MPI's non-overtaking
  // rule), one per exchange both take part in, so the streams stay paired
  // as long as the ranks agree.
  absl::StatusOr<std::vector<CallHeader>> ExchangeHeaders(absl::string_view what,
                                                          const CallHeader& mine,
                                                          absl::Span<const int> members) {
    std::vector<CallHeader> headers(members.size());
    // The send buffer outlives this call if a timeout leaves a send pending.
    outgoing_ = mine;
    std::vector<MPI_Request> receives;
    header_sends_.clear();
    const int n = static_cast<int>(sizeof(CallHeader));
    for (size_t m = 0; m < members.size(); ++m) {
      if (members[m] == rank_) {
        headers[m] = mine;
        continue;
      }
      receives.emplace_back();
      XJIT_MPI(MPI_Irecv(&headers[m], n, MPI_BYTE, members[m], kHeaderTag, control_,
                         &receives.back()),
               what);
      header_sends_.emplace_back();
      XJIT_MPI(MPI_Isend(&outgoing_, n, MPI_BYTE, members[m], kHeaderTag, control_,
                         &header_sends_.back()),
               what);
    }
    XJIT_RETURN_IF_ERROR(Wait(what, absl::MakeSpan(receives)));
    // Every peer posted its receive from this rank (it sent its own header
    // in the same exchange), so the sends complete.
    XJIT_RETURN_IF_ERROR(Wait(what, absl::MakeSpan(header_sends_)));
    header_sends_.clear();
    return headers;
  }

  // 0, 1, ..., size_ - 1.
  std::vector<int> Everyone() const {
    std::vector<int> ranks(size_);
    for (int r = 0; r < size_; ++r) ranks[r] = r;
    return ranks;
  }

  // The end of a run: a header all-gather over every rank, which a rank
  // still waiting in a collective over every rank meets instead of its
  // peers' (it then fails, naming this rank), and which ranks that all
  // finished pass together.
  absl::Status ProgramDone() override {
    if (!broken_.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("the MPI communicator failed before: ", broken_.message()));
    }
    if (size_ == 1) return absl::OkStatus();
    CallHeader mine;
    mine.site = kProgramDoneSite;
    mine.occurrence = runs_done_++;
    XJIT_ASSIGN_OR_RETURN(std::vector<CallHeader> headers,
                          ExchangeHeaders("the end of the run", mine, Everyone()));
    for (int m = 0; m < size_; ++m) {
      if (headers[m].site == kLeaveSite) {
        return absl::FailedPreconditionError(absl::StrCat(
            "replica ", m, " left after ", headers[m].occurrence, " runs of the program while replica ",
            rank_, " finished run ", mine.occurrence + 1, " (a different --repeat?)"));
      }
      if (headers[m].site != kProgramDoneSite) {
        return absl::FailedPreconditionError(absl::StrCat(
            "replica ", m, " waits in a collective that replica ", rank_,
            " never reached before finishing its run: the replicas disagree on the number of "
            "collectives"));
      }
      if (headers[m].occurrence != mine.occurrence) {
        return absl::FailedPreconditionError(absl::StrCat(
            "replica ", m, " finished run ", headers[m].occurrence + 1, " where replica ", rank_,
            " finished run ", mine.occurrence + 1, " (a different --repeat?)"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status AgreeToRun(const absl::Status& mine) override {
    if (!broken_.ok()) return broken_;
    if (size_ == 1) return mine;
    CallHeader header;
    header.site = kAgreeSite;
    header.occurrence = runs_done_;
    header.bytes = mine.ok() ? 0 : static_cast<uint64_t>(mine.code());
    XJIT_ASSIGN_OR_RETURN(std::vector<CallHeader> headers,
                          ExchangeHeaders("the start of the run", header, Everyone()));
    if (!mine.ok()) return mine;
    for (int m = 0; m < size_; ++m) {
      if (headers[m].site != kAgreeSite) {
        return absl::FailedPreconditionError(absl::StrCat(
            "replica ", m, " is in a collective while replica ", rank_,
            " starts a run: the replicas disagree on the number of runs"));
      }
      if (headers[m].bytes != 0) {
        return absl::Status(static_cast<absl::StatusCode>(headers[m].bytes),
                            absl::StrCat("replica ", m, " cannot start the run (its own error "
                                         "says why), so replica ", rank_, " does not either"));
      }
    }
    return absl::OkStatus();
  }

  // The last call: every rank must leave after as many runs as this one.
  absl::Status Leave() override {
    if (!broken_.ok() || size_ == 1) return broken_;
    CallHeader mine;
    mine.site = kLeaveSite;
    mine.occurrence = runs_done_;
    XJIT_ASSIGN_OR_RETURN(std::vector<CallHeader> headers,
                          ExchangeHeaders("leaving", mine, Everyone()));
    for (int m = 0; m < size_; ++m) {
      if (headers[m].site != kLeaveSite || headers[m].occurrence != mine.occurrence) {
        return absl::FailedPreconditionError(absl::StrCat(
            "replica ", rank_, " leaves after ", mine.occurrence, " runs of the program while "
            "replica ", m, " ", headers[m].site == kLeaveSite
                                    ? absl::StrCat("leaves after ", headers[m].occurrence)
                                    : std::string("is still running (a different --repeat?)")));
      }
    }
    return absl::OkStatus();
  }

  // The communicator of `group` (MPI_COMM_NULL for a group of one) after
  // its members agreed that they are at the same collective.
  absl::StatusOr<MPI_Comm> Begin(const Instruction& site, absl::string_view primitive,
                                 absl::Span<const int64_t> group, uint64_t bytes) {
    if (!broken_.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("the MPI communicator failed before: ", broken_.message()));
    }
    const auto position = std::find(group.begin(), group.end(), rank_);
    if (position == group.end()) {
      return absl::InternalError(absl::StrCat(site.name(), ": replica ", rank_,
                                              " runs a collective outside its group"));
    }
    SiteState& state = sites_[&site];
    const uint64_t occurrence = state.occurrences++;
    if (state.fingerprint == 0) state.fingerprint = InstructionFingerprint(site);
    if (group.size() == 1) return MPI_COMM_NULL;
    CallHeader mine;
    mine.site = Fingerprint(primitive, state.fingerprint);
    mine.occurrence = occurrence;
    mine.bytes = bytes;
    std::vector<int> members;
    for (int64_t r : group) {
      if (r < 0 || r >= size_) {
        return absl::InvalidArgumentError(absl::StrCat(site.name(), ": replica group names replica ",
                                                       r, " of ", size_));
      }
      members.push_back(static_cast<int>(r));
    }
    XJIT_ASSIGN_OR_RETURN(std::vector<CallHeader> headers,
                          ExchangeHeaders(site.name(), mine, members));
    for (size_t m = 0; m < group.size(); ++m) {
      const CallHeader& theirs = headers[m];
      if (theirs.site == kAgreeSite) {
        return absl::FailedPreconditionError(absl::StrCat(
            site.name(), ": replica ", group[m], " starts run ", theirs.occurrence + 1,
            " while replica ", rank_, " waits for it here (", primitive, ", execution ",
            occurrence + 1, "): the replicas disagree on the number of collectives"));
      }
      if (theirs.site == kLeaveSite) {
        return absl::FailedPreconditionError(absl::StrCat(
            site.name(), ": replica ", group[m], " left after ", theirs.occurrence,
            " runs of the program while replica ", rank_, " waits for it here (", primitive,
            ", execution ", occurrence + 1, " in run ", runs_done_ + 1, ")"));
      }
      if (theirs.site == kProgramDoneSite) {
        return absl::FailedPreconditionError(absl::StrCat(
            site.name(), ": replica ", group[m], " finished its run of the program while replica ",
            rank_, " waits for it here (", primitive, ", execution ", occurrence + 1,
            "): the replicas disagree on the number of collectives"));
      }
      if (theirs.site != mine.site || theirs.occurrence != mine.occurrence) {
        return absl::FailedPreconditionError(absl::StrCat(
            site.name(), ": replicas disagree on their collectives: replica ", group[m],
            " is at another collective (or another execution of it) than replica ", rank_,
            " (", primitive, ", execution ", occurrence + 1, ")"));
      }
      if (theirs.bytes != mine.bytes) {
        return absl::InvalidArgumentError(absl::StrCat(
            site.name(), ": replica ", group[m], " contributes ", theirs.bytes,
            " bytes where replica ", rank_, " contributes ", mine.bytes));
      }
    }
    // Every member is at this collective, so creating the group's
    // communicator (collective over the members, at the group's first use)
    // cannot wait for a member that is elsewhere.
    return CommunicatorOf(group);
  }

  absl::StatusOr<MPI_Comm> CommunicatorOf(absl::Span<const int64_t> group) {
    std::vector<int> ranks(group.begin(), group.end());
    bool everyone = static_cast<int>(ranks.size()) == size_;
    for (size_t i = 0; everyone && i < ranks.size(); ++i) everyone = ranks[i] == static_cast<int>(i);
    if (everyone) return world_;
    auto found = groups_.find(ranks);
    if (found != groups_.end()) return found->second;
    for (int r : ranks) {
      if (r < 0 || r >= size_) {
        return absl::InvalidArgumentError(absl::StrCat("replica group names replica ", r,
                                                       " of ", size_));
      }
    }
    MPI_Group world_group, sub_group;
    XJIT_MPI(MPI_Comm_group(world_, &world_group), "comm group");
    XJIT_MPI(MPI_Group_incl(world_group, static_cast<int>(ranks.size()), ranks.data(), &sub_group),
             "group incl");
    MPI_Comm comm = MPI_COMM_NULL;
    const int code = MPI_Comm_create_group(world_, sub_group, /*tag=*/0x786a, &comm);
    MPI_Group_free(&sub_group);
    MPI_Group_free(&world_group);
    XJIT_RETURN_IF_ERROR(MpiStatus(code, "create a replica group's communicator"));
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    groups_.emplace(std::move(ranks), comm);
    return comm;
  }

  // Two members: each sends its whole array to the other and folds both in
  // group order, (v0 op v1). The same bytes move as in the reduce-scatter
  // form (each member receives one array) in one exchange instead of two,
  // and both fold the whole array at once.
  absl::Status PairAllReduce(const Instruction& site, ElementType type, ReductionKind kind,
                             const uint8_t* in, uint8_t* out, int64_t count, MPI_Comm comm) {
    const int64_t bytes = count * ByteWidth(type);
    int me = 0;
    XJIT_MPI(MPI_Comm_rank(comm, &me), "comm rank");
    const int peer = 1 - me;
    uint8_t* theirs = Scratch(bytes);
    // In chunks, all posted at once: chunk k is folded as soon as it has
    // arrived, while it is still in cache.
    const int64_t chunk = std::min(kPairChunkBytes, kMaxMessageBytes) / ByteWidth(type) *
                          ByteWidth(type);
    std::vector<MPI_Request> receives, sends;
    for (int64_t begin = 0; begin < bytes; begin += chunk) {
      const int n = static_cast<int>(std::min(chunk, bytes - begin));
      receives.emplace_back();
      XJIT_MPI(MPI_Irecv(theirs + begin, n, MPI_BYTE, peer, 0, comm, &receives.back()),
               site.name());
      sends.emplace_back();
      XJIT_MPI(MPI_Isend(in + begin, n, MPI_BYTE, peer, 0, comm, &sends.back()), site.name());
    }
    // `out` may alias `in`: the fold reads element i of both before writing
    // it, member 0 first; and `in` is sent before its chunk is overwritten.
    std::vector<uint8_t> staging;
    const int64_t width = ByteWidth(type);
    for (size_t k = 0; k < receives.size(); ++k) {
      XJIT_RETURN_IF_ERROR(Wait(site.name(), absl::MakeSpan(&receives[k], 1)));
      const int64_t begin = static_cast<int64_t>(k) * chunk;
      const int64_t n = std::min(chunk, bytes - begin);
      if (in == out) XJIT_RETURN_IF_ERROR(Wait(site.name(), absl::MakeSpan(&sends[k], 1)));
      const void* values[2] = {me == 0 ? in + begin : theirs + begin,
                               me == 0 ? theirs + begin : in + begin};
      FoldMembers(type, kind, values, n / width, out + begin, staging);
    }
    return Wait(site.name(), absl::MakeSpan(sends));
  }

  // The float all-reduce in a fixed order (mpi_communicator.h): member j
  // folds block j of the array from every member's contribution, in group
  // order, a segment at a time; then the blocks are all-gathered in place.
  absl::Status OrderedAllReduce(const Instruction& site, int members, ElementType type,
                                ReductionKind kind, const uint8_t* in, uint8_t* out,
                                int64_t count, MPI_Comm comm) {
    const int64_t width = ByteWidth(type);
    int me = 0;
    XJIT_MPI(MPI_Comm_rank(comm, &me), "comm rank");
    auto block_begin = [&](int64_t block) { return block * count / members; };
    const int64_t most = (count + members - 1) / members;
    if (most > INT_MAX) {
      return absl::UnimplementedError(absl::StrCat(
          site.name(), ": an MPI all-reduce of more than 2^31 elements per replica"));
    }
    const int64_t segment = std::max<int64_t>(1, kSegmentBytes / width);
    // One slot per member for the segment in flight.
    const int64_t slot = std::min(segment, most) * width;
    uint8_t* received = Scratch(slot * members);
    std::vector<uint8_t> staging;
    std::vector<MPI_Request> requests;
    std::vector<const void*> values(members);
    const int64_t my_begin = block_begin(me), my_end = block_begin(me + 1);
    const int segments = static_cast<int>((most + segment - 1) / segment);
    for (int s = 0; s < segments; ++s) {
      requests.clear();
      // Receive my block's segment s from every peer, send theirs.
      const int64_t my_offset = my_begin + s * segment;
      const int64_t my_n = std::clamp<int64_t>(my_end - my_offset, 0, segment);
      for (int peer = 0; peer < members; ++peer) {
        if (peer == me) continue;
        if (my_n > 0) {
          requests.emplace_back();
          XJIT_MPI(MPI_Irecv(received + peer * slot,
                             static_cast<int>(my_n * width), MPI_BYTE, peer, 0, comm,
                             &requests.back()),
                   site.name());
        }
        const int64_t peer_offset = block_begin(peer) + s * segment;
        const int64_t peer_n = std::clamp<int64_t>(block_begin(peer + 1) - peer_offset, 0, segment);
        if (peer_n > 0) {
          requests.emplace_back();
          XJIT_MPI(MPI_Isend(in + peer_offset * width, static_cast<int>(peer_n * width), MPI_BYTE,
                             peer, 0, comm, &requests.back()),
                   site.name());
        }
      }
      XJIT_RETURN_IF_ERROR(Wait(site.name(), absl::MakeSpan(requests)));
      if (my_n == 0) continue;
      // My own segment: from `in`, or a copy where `out` aliases it.
      const uint8_t* own = in + my_offset * width;
      if (in == out) {
        std::memcpy(received + me * slot, own, my_n * width);
        own = received + me * slot;
      }
      for (int m = 0; m < members; ++m) {
        values[m] = m == me ? own : received + m * slot;
      }
      FoldMembers(type, kind, values, my_n, out + my_offset * width, staging);
    }
    std::vector<int> counts(members), displacements(members);
    for (int m = 0; m < members; ++m) {
      counts[m] = static_cast<int>(block_begin(m + 1) - block_begin(m));
      displacements[m] = static_cast<int>(block_begin(m));
    }
    MPI_Datatype element = type == ElementType::kF32 ? MPI_FLOAT : MPI_DOUBLE;
    if (count > INT_MAX) {
      // Displacements past int: whole blocks as one datatype each is not
      // possible for unequal blocks; refuse instead.
      return absl::UnimplementedError(absl::StrCat(
          site.name(), ": an MPI all-reduce of more than 2^31 elements"));
    }
    return Finish(site.name(), [&](MPI_Request* request) {
      return request == nullptr
                 ? MPI_Allgatherv(MPI_IN_PLACE, 0, element, out, counts.data(),
                                  displacements.data(), element, comm)
                 : MPI_Iallgatherv(MPI_IN_PLACE, 0, element, out, counts.data(),
                                   displacements.data(), element, comm, request);
    });
  }

  // Memory for received arrays, kept across calls: a fresh allocation of
  // tens of MiB costs a page fault per page at every call.
  uint8_t* Scratch(int64_t bytes) {
    if (static_cast<int64_t>(scratch_size_) < bytes) {
      scratch_.reset(new uint8_t[bytes]);
      scratch_size_ = bytes;
    }
    return scratch_.get();
  }

  MPI_Comm world_;
  MPI_Comm point_to_point_;
  // Headers (ExchangeHeaders) only: a third duplicate, so they never match
  // a collective's data or an HLO send/recv.
  MPI_Comm control_;
  static constexpr int kHeaderTag = 0;
  CallHeader outgoing_;
  std::vector<MPI_Request> header_sends_;
  int tag_upper_bound_ = 32767;
  std::deque<PendingSend> sends_;  // In sending order.
  std::unique_ptr<uint8_t[]> scratch_;
  int64_t scratch_size_ = 0;
  const int rank_;
  const int size_;
  const MpiOptions options_;
  std::map<std::vector<int>, MPI_Comm> groups_;
  // Per collective site: how often this replica reached it, and its
  // InstructionFingerprint (computed on its first execution, not on every
  // one: a string of its names and shape).
  struct SiteState {
    uint64_t occurrences = 0;
    uint64_t fingerprint = 0;
  };
  absl::flat_hash_map<const Instruction*, SiteState> sites_;
  uint64_t runs_done_ = 0;  // ProgramDone calls so far.
  absl::Status broken_;
};

}  // namespace

bool MpiAvailable() { return true; }

absl::StatusOr<std::unique_ptr<Communicator>> MakeMpiCommunicator(int64_t fortran_handle,
                                                                  const MpiOptions& options) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) {
    return absl::FailedPreconditionError("MPI is not initialised (MPI_Init) or already finalised");
  }
  MPI_Comm given = MPI_Comm_f2c(static_cast<MPI_Fint>(fortran_handle));
  if (given == MPI_COMM_NULL) return absl::InvalidArgumentError("MPI communicator: null handle");
  MPI_Comm world = MPI_COMM_NULL, point_to_point = MPI_COMM_NULL, control = MPI_COMM_NULL;
  XJIT_MPI(MPI_Comm_dup(given, &world), "duplicate the communicator");
  XJIT_MPI(MPI_Comm_dup(given, &point_to_point), "duplicate the communicator");
  XJIT_MPI(MPI_Comm_dup(given, &control), "duplicate the communicator");
  MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(point_to_point, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(control, MPI_ERRORS_RETURN);
  int rank = 0, size = 0;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &size);
  return std::unique_ptr<Communicator>(
      new MpiCommunicator(world, point_to_point, control, rank, size, options));
}

}  // namespace xjit::collectives
