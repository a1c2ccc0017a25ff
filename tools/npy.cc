// .npy reading and writing; see npy.h. The header is a Python dict literal,
// parsed here by a small recursive-descent reader that accepts exactly what
// numpy writes (and the spellings older numpy versions wrote) and rejects the
// rest with a message.
#include "tools/npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <complex>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <new>
#include <optional>
#include <stdexcept>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ir/status_macros.h"

namespace xjit::npy {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// numpy aligns the start of the data to 64 bytes so that it may be mapped.
constexpr size_t kHeaderAlignment = 64;
// The largest header read: numpy's are a few hundred bytes (a shape of many
// dimensions a few KiB), and a file that claims gigabytes of header is not
// read that far.
constexpr size_t kMaxHeaderBytes = size_t{1} << 20;

uint64_t LoadLittle(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

void StoreLittle(uint8_t* p, int n, uint64_t v) {
  for (int i = 0; i < n; ++i) {
    p[i] = static_cast<uint8_t>(v & 0xff);
    v >>= 8;
  }
}

// ---- Header dict ----

struct HeaderValue {
  enum Kind { kString, kBool, kTuple, kOther } kind = kOther;
  std::string string_value;
  bool bool_value = false;
  std::vector<int64_t> tuple_value;
};

class HeaderReader {
 public:
  explicit HeaderReader(absl::string_view text) : text_(text) {}

  absl::Status Read(std::string* descr, bool* fortran_order, std::vector<int64_t>* shape) {
    bool have_descr = false, have_order = false, have_shape = false;
    SkipSpace();
    if (!Consume('{')) return Error("expected '{'");
    while (true) {
      SkipSpace();
      if (Consume('}')) break;
      XJIT_ASSIGN_OR_RETURN(std::string key, ReadString());
      SkipSpace();
      if (!Consume(':')) return Error("expected ':' after a key");
      SkipSpace();
      XJIT_ASSIGN_OR_RETURN(HeaderValue value, ReadValue());
      if (key == "descr") {
        if (value.kind != HeaderValue::kString) {
          return absl::InvalidArgumentError(
              "malformed .npy header: structured dtypes (a list 'descr') are not supported");
        }
        *descr = value.string_value;
        have_descr = true;
      } else if (key == "fortran_order") {
        if (value.kind != HeaderValue::kBool) return Error("'fortran_order' must be True or False");
        *fortran_order = value.bool_value;
        have_order = true;
      } else if (key == "shape") {
        if (value.kind != HeaderValue::kTuple) return Error("'shape' must be a tuple of integers");
        *shape = value.tuple_value;
        have_shape = true;
      }
      // Other keys carry nothing xjit needs; numpy never writes them.
      SkipSpace();
      if (Consume(',')) continue;
      SkipSpace();
      if (Consume('}')) break;
      return Error("expected ',' or '}'");
    }
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the closing '}'");
    if (!have_descr) return Error("missing key 'descr'");
    if (!have_order) return Error("missing key 'fortran_order'");
    if (!have_shape) return Error("missing key 'shape'");
    return absl::OkStatus();
  }

 private:
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat("malformed .npy header: ", what, " at offset ",
                                                   pos_, " in \"",
                                                   absl::CHexEscape(text_.substr(0, 200)), "\""));
  }
  void SkipSpace() {
    while (pos_ < text_.size() && absl::ascii_isspace(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
  }
  bool Consume(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool ConsumeWord(absl::string_view word) {
    if (text_.substr(pos_, word.size()) == word) {
      pos_ += word.size();
      return true;
    }
    return false;
  }

  absl::StatusOr<std::string> ReadString() {
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
      return Error("expected a quoted string");
    }
    char quote = text_[pos_++];
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\') return Error("escapes in strings are not supported");
      out.push_back(text_[pos_++]);
    }
    if (!Consume(quote)) return Error("unterminated string");
    return out;
  }

  absl::StatusOr<int64_t> ReadInt() {
    size_t start = pos_;
    while (pos_ < text_.size() && absl::ascii_isdigit(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
    if (start == pos_) return Error("expected a non-negative integer");
    int64_t value = 0;
    if (!absl::SimpleAtoi(text_.substr(start, pos_ - start), &value)) {
      return Error("integer out of range");
    }
    Consume('L');  // Python 2 long literals, as old numpy wrote them.
    return value;
  }

  absl::StatusOr<HeaderValue> ReadValue() {
    HeaderValue value;
    if (pos_ >= text_.size()) return Error("expected a value");
    char c = text_[pos_];
    if (c == '\'' || c == '"') {
      value.kind = HeaderValue::kString;
      XJIT_ASSIGN_OR_RETURN(value.string_value, ReadString());
      return value;
    }
    if (ConsumeWord("True")) {
      value.kind = HeaderValue::kBool;
      value.bool_value = true;
      return value;
    }
    if (ConsumeWord("False")) {
      value.kind = HeaderValue::kBool;
      return value;
    }
    if (Consume('(')) {
      value.kind = HeaderValue::kTuple;
      SkipSpace();
      if (Consume(')')) return value;
      bool trailing_comma = false;
      while (true) {
        SkipSpace();
        XJIT_ASSIGN_OR_RETURN(int64_t n, ReadInt());
        value.tuple_value.push_back(n);
        SkipSpace();
        if (Consume(')')) break;
        if (!Consume(',')) return Error("expected ',' or ')' in the shape");
        SkipSpace();
        if (Consume(')')) {
          trailing_comma = true;
          break;
        }
      }
      if (value.tuple_value.size() == 1 && !trailing_comma) {
        // `(3)` is the integer 3 in Python, not a tuple; numpy writes `(3,)`.
        return Error("a one-element shape needs a trailing comma, as in (3,)");
      }
      return value;
    }
    if (c == '[' || c == '{') {
      // A structured dtype: skip the balanced value so that the caller can
      // report what it is.
      int depth = 0;
      bool in_string = false;
      char quote = 0;
      for (; pos_ < text_.size(); ++pos_) {
        char d = text_[pos_];
        if (in_string) {
          if (d == quote) in_string = false;
        } else if (d == '\'' || d == '"') {
          in_string = true;
          quote = d;
        } else if (d == '[' || d == '{' || d == '(') {
          ++depth;
        } else if (d == ']' || d == '}' || d == ')') {
          if (--depth == 0) {
            ++pos_;
            return value;  // kOther
          }
        }
      }
      return Error("unbalanced brackets");
    }
    return Error("expected a string, True, False or a tuple");
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

struct ParsedDescr {
  Dtype dtype;
  bool big_endian = false;
};

absl::StatusOr<ParsedDescr> ParseDescr(absl::string_view descr) {
  ParsedDescr out;
  absl::string_view rest = descr;
  if (!rest.empty() && (rest[0] == '<' || rest[0] == '>' || rest[0] == '|' || rest[0] == '=')) {
    out.big_endian = rest[0] == '>';
    rest.remove_prefix(1);
  }
  int size = 0;
  if (rest.size() >= 2 && absl::SimpleAtoi(rest.substr(1), &size)) {
    out.dtype = Dtype{rest[0], size};
    bool ok = false;
    switch (rest[0]) {
      case 'b':
        ok = size == 1;
        break;
      case 'i':
      case 'u':
        ok = size == 1 || size == 2 || size == 4 || size == 8;
        break;
      case 'f':
        ok = size == 2 || size == 4 || size == 8;
        break;
      case 'c':
        ok = size == 8 || size == 16;
        break;
      default:
        break;
    }
    if (ok) return out;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unsupported .npy dtype '", descr,
      "' (supported: bool, int8..int64, uint8..uint64, float16/32/64, complex64/128)"));
}

// The element count of a shape, saturating at `limit` + 1 so that a huge
// shape in a small file is a clear error rather than an overflow.
absl::StatusOr<int64_t> CountElements(const std::vector<int64_t>& shape, int64_t limit) {
  for (int64_t d : shape) {
    if (d < 0) return absl::InvalidArgumentError("negative dimension in .npy shape");
    if (d == 0) return 0;
  }
  int64_t count = 1;
  for (int64_t d : shape) {
    if (count > limit / d) return limit + 1;
    count *= d;
  }
  return count;
}

// Advances a row-major multi-index; false after the last one.
bool Next(absl::Span<const int64_t> dims, std::vector<int64_t>& index) {
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    if (++index[d] < dims[d]) return true;
    index[d] = 0;
  }
  return false;
}

std::string DescribeShape(const Shape& shape) { return shape.ToString(/*print_layout=*/false); }

}  // namespace

std::string Dtype::Name() const {
  switch (kind) {
    case 'b':
      return "bool";
    case 'i':
      return absl::StrCat("int", item_size * 8);
    case 'u':
      return absl::StrCat("uint", item_size * 8);
    case 'f':
      return absl::StrCat("float", item_size * 8);
    case 'c':
      return absl::StrCat("complex", item_size * 8);
    default:
      return absl::StrCat("?", std::string(1, kind), item_size);
  }
}

std::string Dtype::Descr() const {
  return absl::StrCat(item_size == 1 ? "|" : "<", std::string(1, kind), item_size);
}

int64_t Array::element_count() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  if (shape.size() == 1) return absl::StrCat("(", shape[0], ",)");
  return absl::StrCat("(", absl::StrJoin(shape, ", "), ")");
}

namespace {

// What a .npy file's prefix and header say.
struct Header {
  size_t size = 0;  // Bytes of the prefix and the header: the data starts there.
  ParsedDescr parsed;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// The size of the prefix and header, from the file's first kMagicSize + 2 +
// 4 bytes (fewer: as many as it has); checks the magic and the version.
absl::StatusOr<size_t> HeaderSize(absl::string_view bytes) {
  if (bytes.size() < kMagicSize + 2 ||
      bytes.substr(0, kMagicSize) != absl::string_view(kMagic, kMagicSize)) {
    return absl::InvalidArgumentError("not a .npy file (missing the \\x93NUMPY magic)");
  }
  const auto* u = reinterpret_cast<const uint8_t*>(bytes.data());
  int major = u[6], minor = u[7];
  size_t length_size;
  if (major == 1) {
    length_size = 2;
  } else if (major == 2 || major == 3) {
    length_size = 4;
  } else {
    return absl::InvalidArgumentError(absl::StrFormat(
        "unsupported .npy format version %d.%d (supported: 1.0, 2.0, 3.0)", major, minor));
  }
  const size_t prefix = kMagicSize + 2 + length_size;
  if (bytes.size() < prefix) return absl::InvalidArgumentError("truncated .npy header");
  return prefix + LoadLittle(u + kMagicSize + 2, static_cast<int>(length_size));
}

// Parses the prefix and header; `bytes` holds at least HeaderSize bytes.
absl::StatusOr<Header> ParseHeader(absl::string_view bytes) {
  Header result;
  XJIT_ASSIGN_OR_RETURN(result.size, HeaderSize(bytes));
  const size_t prefix = bytes[6] == 1 ? kMagicSize + 4 : kMagicSize + 6;
  if (result.size > bytes.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "truncated .npy header: it claims %d bytes, the file has %d after the prefix",
        result.size - prefix, bytes.size() - prefix));
  }
  std::string descr;
  XJIT_RETURN_IF_ERROR(HeaderReader(bytes.substr(prefix, result.size - prefix))
                           .Read(&descr, &result.fortran_order, &result.shape));
  XJIT_ASSIGN_OR_RETURN(result.parsed, ParseDescr(descr));
  return result;
}

// The element count of the header's shape, checked against the `available`
// bytes of data that follow the header (exactly those must be there).
absl::StatusOr<int64_t> CheckedCount(const Header& header, uint64_t available) {
  const Dtype& dtype = header.parsed.dtype;
  const int64_t item = dtype.item_size;
  const int64_t available_items = static_cast<int64_t>(
      std::min<uint64_t>(available, std::numeric_limits<int64_t>::max()) / item);
  XJIT_ASSIGN_OR_RETURN(int64_t count, CountElements(header.shape, available_items));
  if (count > available_items) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "truncated .npy data: shape %s of %s needs %s bytes, the file has %d",
        ShapeString(header.shape), dtype.Name(),
        count == available_items + 1 ? "more" : absl::StrCat(count * item), available));
  }
  const uint64_t expected_bytes = static_cast<uint64_t>(count) * item;
  if (available > expected_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        ".npy file has %d bytes after the data of shape %s of %s (%d bytes)",
        available - expected_bytes, ShapeString(header.shape), dtype.Name(), expected_bytes));
  }
  return count;
}

// The array from the header and exactly its data, `data` (the file's bytes
// after the header), reordered to C order and little-endian.
Array Decode(const Header& header, int64_t count, std::vector<uint8_t> data) {
  const ParsedDescr& parsed = header.parsed;
  const std::vector<int64_t>& shape = header.shape;
  const int64_t item = parsed.dtype.item_size;
  Array array;
  array.dtype = parsed.dtype;
  array.shape = shape;
  if (header.fortran_order && shape.size() > 1 && count > 0) {
    // Element (i0, ..., in) sits at sum(i_k * stride_k) with the first
    // dimension fastest.
    array.data.resize(data.size());
    std::vector<int64_t> strides(shape.size());
    int64_t s = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
      strides[d] = s;
      s *= shape[d];
    }
    std::vector<int64_t> index(shape.size(), 0);
    int64_t c = 0;
    do {
      int64_t f = 0;
      for (size_t d = 0; d < shape.size(); ++d) f += index[d] * strides[d];
      std::memcpy(&array.data[c * item], &data[f * item], item);
      ++c;
    } while (Next(shape, index));
  } else {
    array.data = std::move(data);
  }
  if (parsed.big_endian && item > 1) {
    // Complex numbers are two floats, each in the file's byte order.
    int component = parsed.dtype.kind == 'c' ? item / 2 : item;
    for (size_t i = 0; i < array.data.size(); i += component) {
      std::reverse(array.data.begin() + i, array.data.begin() + i + component);
    }
  }
  return array;
}

}  // namespace

absl::StatusOr<Array> ParseNpy(absl::string_view bytes) {
  XJIT_ASSIGN_OR_RETURN(Header header, ParseHeader(bytes));
  const absl::string_view payload = bytes.substr(header.size);
  XJIT_ASSIGN_OR_RETURN(int64_t count, CheckedCount(header, payload.size()));
  return Decode(header, count, std::vector<uint8_t>(payload.begin(), payload.end()));
}

namespace {

// The prefix and header of a .npy file holding `array`.
std::string SerializeHeader(const Array& array) {
  std::string dict =
      absl::StrCat("{'descr': '", array.dtype.Descr(),
                   "', 'fortran_order': False, 'shape': ", ShapeString(array.shape), ", }");
  // Version 1.0 has a 16-bit header length; numpy moves to 2.0 past it.
  int version = 1;
  size_t prefix = kMagicSize + 2 + 2;
  size_t total = prefix + dict.size() + 1;
  total = (total + kHeaderAlignment - 1) / kHeaderAlignment * kHeaderAlignment;
  if (total - prefix > 65535) {
    version = 2;
    prefix = kMagicSize + 2 + 4;
    total = prefix + dict.size() + 1;
    total = (total + kHeaderAlignment - 1) / kHeaderAlignment * kHeaderAlignment;
  }
  size_t header_length = total - prefix;
  dict.append(header_length - dict.size() - 1, ' ');
  dict.push_back('\n');

  std::string out(kMagic, kMagicSize);
  out.push_back(static_cast<char>(version));
  out.push_back('\0');
  uint8_t length[4];
  StoreLittle(length, version == 1 ? 2 : 4, header_length);
  out.append(reinterpret_cast<const char*>(length), version == 1 ? 2 : 4);
  out += dict;
  return out;
}

}  // namespace

std::string SerializeNpy(const Array& array) {
  std::string out = SerializeHeader(array);
  out.append(reinterpret_cast<const char*>(array.data.data()), array.data.size());
  return out;
}

namespace {

// Reads up to `size` bytes at `out` from `fd`; the bytes read, or an error.
absl::StatusOr<size_t> ReadUpTo(int fd, uint8_t* out, size_t size) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(fd, out + done, size - done);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::DataLossError(absl::StrCat("cannot read: ", std::strerror(errno)));
    }
    done += static_cast<size_t>(n);
  }
  return done;
}

// Closes a file descriptor when it goes out of scope.
struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

// Makes room for `bytes` in `data`; out of memory is an error, not an abort.
absl::Status Reserve(std::vector<uint8_t>* data, size_t bytes, const Header& header) {
  try {
    data->reserve(bytes);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "out of memory: the data of shape %s of %s needs %d bytes", ShapeString(header.shape),
        header.parsed.dtype.Name(), bytes));
  } catch (const std::length_error&) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "out of memory: the data of shape %s of %s needs %d bytes", ShapeString(header.shape),
        header.parsed.dtype.Name(), bytes));
  }
  return absl::OkStatus();
}

// Reads a .npy file from `fd`.
absl::StatusOr<Array> ReadNpyFd(int fd) {
  // The prefix first: a file that is not a .npy file (or a device that never
  // ends) is known by its first bytes.
  std::string head(kMagicSize + 6, '\0');
  XJIT_ASSIGN_OR_RETURN(size_t got,
                        ReadUpTo(fd, reinterpret_cast<uint8_t*>(head.data()), head.size()));
  head.resize(got);
  XJIT_ASSIGN_OR_RETURN(size_t header_size, HeaderSize(head));
  if (header_size > kMaxHeaderBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        ".npy header of %d bytes (at most %d MiB)", header_size, kMaxHeaderBytes >> 20));
  }
  if (header_size > head.size()) {
    const size_t had = head.size();
    head.resize(header_size);
    XJIT_ASSIGN_OR_RETURN(got, ReadUpTo(fd, reinterpret_cast<uint8_t*>(head.data()) + had,
                                        header_size - had));
    head.resize(had + got);
  }
  XJIT_ASSIGN_OR_RETURN(Header header, ParseHeader(head));
  const absl::string_view early = absl::string_view(head).substr(header.size);

  // Then exactly the data the header announces, and nothing after it. A
  // regular file's size says at once whether it is all there; from a pipe
  // the buffer grows with what arrives, never ahead of it.
  const Dtype& dtype = header.parsed.dtype;
  struct stat info;
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode)) {
    const uint64_t size = static_cast<uint64_t>(info.st_size);
    XJIT_ASSIGN_OR_RETURN(int64_t count,
                          CheckedCount(header, size > header.size ? size - header.size : 0));
    const size_t bytes = static_cast<size_t>(count) * dtype.item_size;
    std::vector<uint8_t> data;
    XJIT_RETURN_IF_ERROR(Reserve(&data, bytes, header));
    data.assign(early.begin(), early.begin() + std::min(early.size(), bytes));
    data.resize(bytes);
    XJIT_ASSIGN_OR_RETURN(got, ReadUpTo(fd, data.data() + std::min(early.size(), bytes),
                                        bytes - std::min(early.size(), bytes)));
    if (std::min(early.size(), bytes) + got < bytes) {
      return absl::DataLossError("cannot read: the file shrank while read");
    }
    return Decode(header, count, std::move(data));
  }
  XJIT_ASSIGN_OR_RETURN(
      const int64_t count,
      CountElements(header.shape, std::numeric_limits<int64_t>::max() / dtype.item_size));
  if (count > std::numeric_limits<int64_t>::max() / dtype.item_size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "shape %s of %s has more bytes than can be addressed", ShapeString(header.shape),
        dtype.Name()));
  }
  const size_t bytes = static_cast<size_t>(count) * dtype.item_size;
  std::vector<uint8_t> data(early.begin(), early.end());
  while (data.size() <= bytes) {  // One byte past the data: there must be none.
    const size_t had = data.size();
    const size_t step = std::max<size_t>(size_t{1} << 20, had);
    const size_t want = std::min(step, bytes + 1 - had);
    XJIT_RETURN_IF_ERROR(Reserve(&data, had + want, header));
    data.resize(had + want);
    XJIT_ASSIGN_OR_RETURN(got, ReadUpTo(fd, data.data() + had, want));
    data.resize(had + got);
    if (got < want) break;
  }
  if (data.size() != bytes) {
    // The same messages as for a file whose size is known (CheckedCount),
    // though past the data only the first byte was read.
    return CheckedCount(header, data.size()).status();
  }
  return Decode(header, count, std::move(data));
}

}  // namespace

absl::StatusOr<Array> ReadNpyFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is a directory, not a .npy file"));
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  FdCloser closer{fd};
  absl::StatusOr<Array> array = ReadNpyFd(fd);
  if (!array.ok()) {
    return absl::Status(array.status().code(), absl::StrCat(path, ": ", array.status().message()));
  }
  return array;
}

absl::Status WriteNpyFile(const std::string& path, const Array& array) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  // The header, then the data where it lies: no copy of a large array.
  const std::string header = SerializeHeader(array);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(array.data.data()),
            static_cast<std::streamsize>(array.data.size()));
  out.close();
  if (!out) {
    const int error = errno;
    std::error_code ignored;
    std::filesystem::remove(path, ignored);  // Never leave a partial file behind.
    return absl::DataLossError(absl::StrCat("cannot write ", path, ": ", std::strerror(error)));
  }
  return absl::OkStatus();
}

absl::StatusOr<Dtype> DtypeFor(ElementType type) {
  if (IsPred(type)) return Dtype{'b', 1};
  if (IsSignedInteger(type)) return Dtype{'i', static_cast<int>(ByteWidth(type))};
  if (IsUnsignedInteger(type)) return Dtype{'u', static_cast<int>(ByteWidth(type))};
  if (type == ElementType::kBF16) return Dtype{'u', 2};
  if (IsMiniFloat(type)) return Dtype{'u', 1};
  if (IsFloat(type)) return Dtype{'f', static_cast<int>(ByteWidth(type))};
  if (IsComplex(type)) return Dtype{'c', static_cast<int>(ByteWidth(type))};
  return absl::InvalidArgumentError(
      absl::StrCat("element type ", ElementTypeName(type), " has no .npy form"));
}

absl::StatusOr<Literal> LiteralFromArray(const Array& array, const Shape& shape) {
  if (!shape.IsArray()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a .npy file cannot hold a value of shape ", shape.ToString()));
  }
  const ElementType type = shape.element_type();
  XJIT_ASSIGN_OR_RETURN(Dtype want, DtypeFor(type));
  // A dynamic dimension (`<=N`, or `?`) takes any size up to its bound: the
  // literal then holds the runtime size, as the evaluator expects.
  Shape target = shape;
  bool fits = array.dtype == want && array.shape.size() == static_cast<size_t>(shape.rank());
  for (int64_t i = 0; fits && i < shape.rank(); ++i) {
    const int64_t bound = shape.dimensions(i), size = array.shape[i];
    if (shape.is_dynamic_dimension(i) || bound == Shape::kUnboundedSize) {
      fits = bound == Shape::kUnboundedSize || size <= bound;
      target.set_dimensions(i, size);
      target.set_dynamic_dimension(i, true);
    } else {
      fits = size == bound;
    }
  }
  if (!fits) {
    std::vector<std::string> expected;
    for (int64_t i = 0; i < shape.rank(); ++i) {
      const int64_t bound = shape.dimensions(i);
      expected.push_back(bound == Shape::kUnboundedSize  ? "?"
                         : shape.is_dynamic_dimension(i) ? absl::StrCat("<=", bound)
                                                         : absl::StrCat(bound));
    }
    std::string expected_shape = expected.size() == 1
                                     ? absl::StrCat("(", expected[0], ",)")
                                     : absl::StrCat("(", absl::StrJoin(expected, ", "), ")");
    return absl::InvalidArgumentError(
        absl::StrFormat("expected %s %s (for %s), found %s %s", want.Name(), expected_shape,
                        DescribeShape(shape), array.dtype.Name(), ShapeString(array.shape)));
  }
  std::vector<int64_t> dims(target.dimensions().begin(), target.dimensions().end());
  Literal literal(target);
  const int64_t count = array.element_count();
  const int item = want.item_size;
  const int bits = BitWidth(type);
  if (IsComplex(type)) {
    std::vector<int64_t> index(dims.size(), 0);
    const int half = item / 2;
    for (int64_t i = 0; i < count; ++i, Next(dims, index)) {
      const uint8_t* p = &array.data[i * item];
      uint64_t re = LoadLittle(p, half), im = LoadLittle(p + half, half);
      double r, m;
      if (half == 4) {
        float fr, fm;
        uint32_t r32 = static_cast<uint32_t>(re), m32 = static_cast<uint32_t>(im);
        std::memcpy(&fr, &r32, 4);
        std::memcpy(&fm, &m32, 4);
        r = fr;
        m = fm;
      } else {
        std::memcpy(&r, &re, 8);
        std::memcpy(&m, &im, 8);
      }
      literal.SetComplex(index, {r, m});
    }
    return literal;
  }
  for (int64_t i = 0; i < count; ++i) {
    uint64_t raw = LoadLittle(&array.data[i * item], item);
    uint64_t element_bits = raw;
    if (IsPred(type)) {
      element_bits = raw != 0 ? 1 : 0;
    } else if (bits < 8 * item) {
      // Sub-byte types, one element per byte: the value must fit the type.
      bool fits;
      if (IsSignedInteger(type)) {
        int64_t v = static_cast<int8_t>(raw);
        fits = v >= -(int64_t{1} << (bits - 1)) && v < (int64_t{1} << (bits - 1));
        element_bits = static_cast<uint64_t>(v) & ((uint64_t{1} << bits) - 1);
        if (!fits) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "element %d is %d, outside the range of %s", i, v, ElementTypeName(type)));
        }
      } else {
        fits = raw < (uint64_t{1} << bits);
        if (!fits) {
          return absl::InvalidArgumentError(
              absl::StrFormat("element %d is %d, outside the range of %s (%d-bit raw values)", i,
                              raw, ElementTypeName(type), bits));
        }
      }
    }
    literal.SetBitsLinear(i, element_bits);
  }
  return literal;
}

namespace {

// Elements [begin, end) of `literal` (an array of `dtype`), in logical C
// order, written to `out` as .npy stores them.
void ConvertElements(const Literal& literal, const Dtype& dtype, int64_t begin, int64_t end,
                     uint8_t* out) {
  if (begin >= end) return;  // Also keeps a zero dimension out of the divisions.
  const Shape& shape = literal.shape();
  const ElementType type = shape.element_type();
  const int item = dtype.item_size;
  if (IsComplex(type)) {
    // The multi-index of element `begin` in C order, then one step each.
    std::vector<int64_t> index(shape.rank(), 0);
    for (int64_t d = shape.rank() - 1, rest = begin; d >= 0; --d) {
      index[d] = rest % shape.dimensions(d);
      rest /= shape.dimensions(d);
    }
    const int half = item / 2;
    for (int64_t i = begin; i < end; ++i, Next(shape.dimensions(), index)) {
      std::complex<double> v = literal.GetComplex(index);
      uint8_t* p = out + (i - begin) * item;
      if (half == 4) {
        float r = static_cast<float>(v.real()), m = static_cast<float>(v.imag());
        uint32_t r32, m32;
        std::memcpy(&r32, &r, 4);
        std::memcpy(&m32, &m, 4);
        StoreLittle(p, 4, r32);
        StoreLittle(p + 4, 4, m32);
      } else {
        double r = v.real(), m = v.imag();
        uint64_t r64, m64;
        std::memcpy(&r64, &r, 8);
        std::memcpy(&m64, &m, 8);
        StoreLittle(p, 8, r64);
        StoreLittle(p + 8, 8, m64);
      }
    }
    return;
  }
  const int bits = BitWidth(type);
  for (int64_t i = begin; i < end; ++i) {
    uint64_t v = literal.GetBitsLinear(i);
    if (IsSignedInteger(type) && bits < 8 * item) {
      // Sign-extend s1/s2/s4 into the int8 byte.
      uint64_t sign = uint64_t{1} << (bits - 1);
      v &= (uint64_t{1} << bits) - 1;
      if (v & sign) v |= ~((uint64_t{1} << bits) - 1);
    }
    StoreLittle(out + (i - begin) * item, item, v);
  }
}

// The array's dtype and shape, without its data.
absl::StatusOr<Array> EmptyArrayFor(const Literal& literal) {
  const Shape& shape = literal.shape();
  if (!shape.IsArray()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a value of shape ", shape.ToString(), " cannot be written as .npy"));
  }
  Array array;
  XJIT_ASSIGN_OR_RETURN(array.dtype, DtypeFor(shape.element_type()));
  array.shape.assign(shape.dimensions().begin(), shape.dimensions().end());
  return array;
}

}  // namespace

absl::StatusOr<Array> ArrayFromLiteral(const Literal& literal) {
  XJIT_ASSIGN_OR_RETURN(Array array, EmptyArrayFor(literal));
  const int64_t count = literal.shape().element_count();
  array.data.resize(static_cast<size_t>(count) * array.dtype.item_size);
  ConvertElements(literal, array.dtype, 0, count, array.data.data());
  return array;
}

absl::Status WriteNpyFile(const std::string& path, const Literal& literal) {
  XJIT_ASSIGN_OR_RETURN(const Array array, EmptyArrayFor(literal));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  const std::string header = SerializeHeader(array);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  // About 1 MiB at a time: the file is written as it is converted, never
  // held whole beside the literal (a 1 GiB result would need 2 GiB).
  const int64_t count = literal.shape().element_count();
  const int64_t chunk = std::max<int64_t>(1, (int64_t{1} << 20) / array.dtype.item_size);
  std::vector<uint8_t> buffer(static_cast<size_t>(std::min(count, chunk)) * array.dtype.item_size);
  for (int64_t begin = 0; begin < count && out; begin += chunk) {
    const int64_t end = std::min(count, begin + chunk);
    ConvertElements(literal, array.dtype, begin, end, buffer.data());
    out.write(reinterpret_cast<const char*>(buffer.data()),
              static_cast<std::streamsize>((end - begin) * array.dtype.item_size));
  }
  out.close();
  if (!out) {
    const int error = errno;
    std::error_code ignored;
    std::filesystem::remove(path, ignored);  // Never leave a partial file behind.
    return absl::DataLossError(absl::StrCat("cannot write ", path, ": ", std::strerror(error)));
  }
  return absl::OkStatus();
}

}  // namespace xjit::npy
