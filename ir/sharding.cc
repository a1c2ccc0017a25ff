// The sharding attribute's reader and the tiling it implies (see sharding.h).
#include "ir/sharding.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/instruction.h"
#include "ir/status_macros.h"

namespace xjit {
namespace {

// More devices than any run has threads for: a bound on the tables below.
constexpr int64_t kMaxDevices = int64_t{1} << 20;

// A cursor over the attribute's text.
class ShardingReader {
 public:
  explicit ShardingReader(absl::string_view text) : text_(text) {}

  absl::StatusOr<Sharding> ReadAll() {
    XJIT_ASSIGN_OR_RETURN(Sharding sharding, Read());
    SkipSpace();
    if (at_ != text_.size()) return Error("unexpected text after the sharding");
    return sharding;
  }

 private:
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat("sharding ", text_, ": ", what, " at offset ",
                                                   at_));
  }

  void SkipSpace() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  bool Eat(char c) {
    SkipSpace();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  char PeekChar() {
    SkipSpace();
    return at_ < text_.size() ? text_[at_] : '\0';
  }
  // A word of letters, digits and '_'.
  absl::string_view Word() {
    SkipSpace();
    const size_t begin = at_;
    while (at_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[at_])) || text_[at_] == '_')) {
      ++at_;
    }
    return text_.substr(begin, at_ - begin);
  }
  absl::StatusOr<int64_t> Integer() {
    SkipSpace();
    const size_t begin = at_;
    while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) ++at_;
    if (at_ == begin || at_ - begin > 15) return Error("expected a (small) non-negative integer");
    int64_t value = 0;
    for (size_t i = begin; i < at_; ++i) value = value * 10 + (text_[i] - '0');
    return value;
  }
  // '[' int (',' int)* ']' or, with `open`/`close`, the same between them.
  absl::StatusOr<std::vector<int64_t>> IntegerList(char open, char close) {
    if (!Eat(open)) return Error(absl::StrCat("expected '", std::string(1, open), "'"));
    std::vector<int64_t> values;
    if (Eat(close)) return values;
    do {
      XJIT_ASSIGN_OR_RETURN(int64_t value, Integer());
      values.push_back(value);
    } while (Eat(','));
    if (!Eat(close)) return Error(absl::StrCat("expected '", std::string(1, close), "'"));
    return values;
  }
  // Skips a balanced {...} (metadata), minding quoted strings.
  absl::Status SkipBraces() {
    if (!Eat('{')) return Error("expected '{'");
    int depth = 1;
    bool quoted = false;
    while (at_ < text_.size() && depth > 0) {
      const char c = text_[at_++];
      if (quoted) {
        if (c == '\\' && at_ < text_.size()) ++at_;
        else if (c == '"') quoted = false;
      } else if (c == '"') {
        quoted = true;
      } else if (c == '{') {
        ++depth;
      } else if (c == '}') {
        --depth;
      }
    }
    if (depth != 0) return Error("unbalanced '{'");
    return absl::OkStatus();
  }

  absl::StatusOr<Sharding> Read() {
    if (!Eat('{')) return Error("expected '{'");
    Sharding sharding;
    if (PeekChar() == '{' || PeekChar() == '}') {
      // A tuple's shardings (an empty tuple has none).
      sharding.kind = Sharding::Kind::kTuple;
      if (Eat('}')) return sharding;
      do {
        XJIT_ASSIGN_OR_RETURN(Sharding element, Read());
        sharding.elements.push_back(std::move(element));
      } while (Eat(','));
      if (!Eat('}')) return Error("expected '}' after a tuple's shardings");
      return sharding;
    }
    bool have_kind = false;
    bool have_device = false;
    bool replicate_last = false;
    std::vector<std::string> subgroups;
    auto set_kind = [&](Sharding::Kind kind) -> absl::Status {
      if (have_kind) return Error("two kinds of sharding");
      have_kind = true;
      sharding.kind = kind;
      return absl::OkStatus();
    };
    while (!Eat('}')) {
      if (at_ >= text_.size()) return Error("expected '}'");
      Eat(',');
      const absl::string_view word = Word();
      if (word.empty()) return Error("expected a sharding keyword");
      if (word == "replicated") {
        XJIT_RETURN_IF_ERROR(set_kind(Sharding::Kind::kReplicated));
      } else if (word == "manual") {
        XJIT_RETURN_IF_ERROR(set_kind(Sharding::Kind::kManual));
      } else if (word == "unknown") {
        XJIT_RETURN_IF_ERROR(set_kind(Sharding::Kind::kUnknown));
      } else if (word == "maximal") {
        XJIT_RETURN_IF_ERROR(set_kind(Sharding::Kind::kMaximal));
      } else if (word == "device") {
        if (!Eat('=')) return Error("expected '=' after device");
        XJIT_ASSIGN_OR_RETURN(sharding.maximal_device, Integer());
        have_device = true;
      } else if (word == "devices") {
        XJIT_RETURN_IF_ERROR(set_kind(Sharding::Kind::kTiled));
        if (!Eat('=')) return Error("expected '=' after devices");
        XJIT_ASSIGN_OR_RETURN(sharding.tile_dimensions, IntegerList('[', ']'));
        XJIT_RETURN_IF_ERROR(ReadDevices(&sharding));
      } else if (word == "last_tile_dim_replicate") {
        replicate_last = true;
      } else if (word == "last_tile_dims") {
        if (!Eat('=') || !Eat('{')) return Error("expected last_tile_dims={...}");
        if (!Eat('}')) {
          do {
            const absl::string_view type = Word();
            if (type != "manual" && type != "replicated") {
              return absl::UnimplementedError(absl::StrCat(
                  "sharding ", text_, ": subgroup type '", type,
                  "' (only manual and replicated subgroups are supported)"));
            }
            subgroups.emplace_back(type);
          } while (Eat(','));
          if (!Eat('}')) return Error("expected '}' after last_tile_dims");
        }
      } else if (word == "metadata") {
        if (!Eat('=')) return Error("expected '=' after metadata");
        XJIT_RETURN_IF_ERROR(SkipBraces());
      } else if (word == "shard_as" || word == "shard_like") {
        XJIT_RETURN_IF_ERROR(Integer().status());
      } else {
        return absl::UnimplementedError(
            absl::StrCat("sharding ", text_, ": '", word, "' is not a form xjit reads"));
      }
    }
    if (!have_kind) return Error("no sharding kind");
    if (have_device != (sharding.kind == Sharding::Kind::kMaximal)) {
      return Error("a maximal sharding has one device=, and only it");
    }
    if (replicate_last && !subgroups.empty()) {
      return Error("both last_tile_dim_replicate and last_tile_dims");
    }
    sharding.subgroup_dims = replicate_last ? 1 : static_cast<int64_t>(subgroups.size());
    if (sharding.kind == Sharding::Kind::kTiled) {
      if (sharding.subgroup_dims > static_cast<int64_t>(sharding.tile_dimensions.size())) {
        return Error("more subgroup dimensions than tile dimensions");
      }
    } else if (sharding.subgroup_dims > 0) {
      return Error("subgroup dimensions without devices=");
    }
    return sharding;
  }

  // The device list after devices=[...]: explicit ids or an iota form.
  absl::Status ReadDevices(Sharding* sharding) {
    int64_t count = 1;
    for (int64_t d : sharding->tile_dimensions) {
      if (d < 1) return Error("a tile dimension below 1");
      if (count > kMaxDevices / d) return Error("too many tiles");
      count *= d;
    }
    if (Eat('<')) {
      if (!Eat('=')) return Error("expected '<='");
      XJIT_ASSIGN_OR_RETURN(std::vector<int64_t> reshape, IntegerList('[', ']'));
      std::vector<int64_t> permutation(reshape.size());
      for (size_t i = 0; i < permutation.size(); ++i) permutation[i] = static_cast<int64_t>(i);
      SkipSpace();
      if (at_ < text_.size() && text_[at_] == 'T') {
        ++at_;
        XJIT_ASSIGN_OR_RETURN(permutation, IntegerList('(', ')'));
      }
      return IotaDevices(reshape, permutation, count, &sharding->devices);
    }
    do {
      XJIT_ASSIGN_OR_RETURN(int64_t device, Integer());
      sharding->devices.push_back(device);
    } while (Eat(','));
    if (static_cast<int64_t>(sharding->devices.size()) != count) {
      return Error(absl::StrCat(sharding->devices.size(), " devices for ", count, " tiles"));
    }
    return absl::OkStatus();
  }

  // iota(count) viewed as `reshape`, transposed by `permutation`, row-major.
  absl::Status IotaDevices(const std::vector<int64_t>& reshape,
                           const std::vector<int64_t>& permutation, int64_t count,
                           std::vector<int64_t>* devices) {
    int64_t total = 1;
    for (int64_t d : reshape) {
      if (d < 1 || total > kMaxDevices / d) return Error("a bad iota shape");
      total *= d;
    }
    if (total != count) {
      return Error(absl::StrCat("an iota of ", total, " devices for ", count, " tiles"));
    }
    const size_t rank = reshape.size();
    std::vector<int64_t> sorted = permutation;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < rank; ++i) {
      if (sorted.size() != rank || sorted[i] != static_cast<int64_t>(i)) {
        return Error("T(...) is not a permutation of the iota's dimensions");
      }
    }
    // Strides of the iota's own (untransposed) shape.
    std::vector<int64_t> strides(rank, 1);
    for (size_t i = rank; i-- > 1;) strides[i - 1] = strides[i] * reshape[i];
    std::vector<int64_t> index(rank, 0);  // Over the transposed shape.
    devices->clear();
    devices->reserve(count);
    for (int64_t n = 0; n < count; ++n) {
      int64_t device = 0;
      for (size_t i = 0; i < rank; ++i) device += index[i] * strides[permutation[i]];
      devices->push_back(device);
      for (size_t i = rank; i-- > 0;) {
        if (++index[i] < reshape[permutation[i]]) break;
        index[i] = 0;
      }
    }
    return absl::OkStatus();
  }

  absl::string_view text_;
  size_t at_ = 0;
};

}  // namespace

absl::StatusOr<Sharding> ParseSharding(absl::string_view text) {
  return ShardingReader(text).ReadAll();
}

std::optional<std::string> ShardingAttribute(const Instruction& instruction) {
  for (const OpaqueAttribute& attribute : instruction.opaque_attributes()) {
    if (attribute.name == "sharding") return attribute.value;
  }
  return std::nullopt;
}

absl::StatusOr<ShardTiling> TileArray(const Sharding& sharding,
                                      absl::Span<const int64_t> dimensions,
                                      int64_t partition_count) {
  const int64_t rank = static_cast<int64_t>(dimensions.size());
  if (partition_count < 1 || partition_count > kMaxDevices) {
    return absl::InvalidArgumentError(
        absl::StrCat(partition_count, " partitions (at most ", kMaxDevices, ")"));
  }
  ShardTiling tiling;
  tiling.tiles.assign(rank, 1);
  tiling.tile_shape.assign(dimensions.begin(), dimensions.end());
  switch (sharding.kind) {
    case Sharding::Kind::kTuple:
      return absl::InvalidArgumentError("a tuple sharding for an array");
    case Sharding::Kind::kUnknown:
      return absl::UnimplementedError("the sharding {unknown} cuts no tiles");
    case Sharding::Kind::kReplicated: case Sharding::Kind::kManual:
    case Sharding::Kind::kMaximal: {
      int64_t owner = 0;
      if (sharding.kind == Sharding::Kind::kMaximal) {
        owner = sharding.maximal_device;
        if (owner >= partition_count) {
          return absl::InvalidArgumentError(absl::StrCat(
              "{maximal device=", owner, "} names a partition of ", partition_count));
        }
      }
      tiling.tile_of_partition.assign(partition_count, std::vector<int64_t>(rank, 0));
      tiling.owner = {owner};
      return tiling;
    }
    case Sharding::Kind::kTiled:
      break;
  }
  const int64_t tile_rank = static_cast<int64_t>(sharding.tile_dimensions.size());
  if (tile_rank - sharding.subgroup_dims != rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the sharding has ", tile_rank - sharding.subgroup_dims,
        " tiled dimensions for an array of rank ", rank));
  }
  if (static_cast<int64_t>(sharding.devices.size()) != partition_count) {
    return absl::InvalidArgumentError(absl::StrCat("the sharding names ", sharding.devices.size(),
                                                   " devices for ", partition_count,
                                                   " partitions"));
  }
  std::vector<bool> seen(partition_count, false);
  for (int64_t device : sharding.devices) {
    if (device < 0 || device >= partition_count || seen[device]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the sharding's devices {", absl::StrJoin(sharding.devices, ","),
          "} are not each partition of ", partition_count, " once"));
    }
    seen[device] = true;
  }
  int64_t tile_count = 1;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t n = sharding.tile_dimensions[d];
    tiling.tiles[d] = n;
    tiling.tile_shape[d] = (dimensions[d] + n - 1) / n;
    tile_count *= n;
  }
  int64_t copies = 1;  // Devices per tile: the product of the subgroup dimensions.
  for (int64_t d = rank; d < tile_rank; ++d) copies *= sharding.tile_dimensions[d];
  tiling.tile_of_partition.assign(partition_count, std::vector<int64_t>(rank, 0));
  tiling.owner.assign(tile_count, -1);
  for (int64_t i = 0; i < partition_count; ++i) {
    const int64_t device = sharding.devices[i];
    int64_t tile = i / copies;  // Row-major: the subgroup dimensions are innermost.
    if (tiling.owner[tile] < 0) tiling.owner[tile] = device;
    for (int64_t d = rank; d-- > 0;) {
      tiling.tile_of_partition[device][d] = tile % tiling.tiles[d];
      tile /= tiling.tiles[d];
    }
  }
  return tiling;
}

}  // namespace xjit
