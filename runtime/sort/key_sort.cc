// runtime/sort/key_sort: keys and the stable radix sort (see key_sort.h).
#include "runtime/sort/key_sort.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace xjit::runtime::sort {
namespace {

// The bits of a float format that ComputeKeys needs: the magnitude of
// +infinity (a magnitude above it is a NaN).
uint64_t InfinityBits(ElementType type) {
  switch (type) {
    case ElementType::kF16:
      return 0x7c00;
    case ElementType::kBF16:
      return 0x7f80;
    case ElementType::kF32:
      return 0x7f800000;
    case ElementType::kF64:
      return 0x7ff0000000000000;
    default:
      return 0;
  }
}

// Float keys: the replacements and the partial compare's checks as
// template flags, so that the loop has no test but on the data, and the
// key's fields are not reloaded after every store to `keys`.
template <typename Bits, bool kReplaceNan, bool kReplaceZero, bool kPartial>
bool FloatKeysOf(Bits infinity, Bits nan_to, Bits zero_to, Bits flip, const Bits* x, int64_t n,
                 uint64_t* keys) {
  constexpr Bits kSign = static_cast<Bits>(Bits{1} << (sizeof(Bits) * 8 - 1));
  constexpr Bits kMagnitude = static_cast<Bits>(~kSign);
  Bits any_nan = 0;
  for (int64_t i = 0; i < n; ++i) {
    Bits v = x[i];
    const Bits magnitude = static_cast<Bits>(v & kMagnitude);
    // NaN and zero exclude each other, so the order of the two replacements
    // (the comparator's nesting of its selects) does not matter.
    if constexpr (kReplaceNan) v = magnitude > infinity ? nan_to : v;
    if constexpr (kReplaceZero) v = magnitude == 0 ? zero_to : v;
    if constexpr (kPartial) {
      const Bits m = static_cast<Bits>(v & kMagnitude);
      any_nan |= static_cast<Bits>(m > infinity);
      v = m == 0 ? Bits{0} : v;  // -0 is equivalent to +0
    }
    // Total order: negative values reversed below the positive ones.
    const Bits k = (v & kSign) != 0 ? static_cast<Bits>(~v) : static_cast<Bits>(v | kSign);
    keys[i] = static_cast<Bits>(k ^ flip);
  }
  return any_nan == 0;
}

// Keys of elements of an unsigned integer type `Bits` of the key's width.
template <typename Bits>
bool KeysOf(const SortKey& key, const Bits* x, int64_t n, uint64_t* keys) {
  constexpr Bits kSign = static_cast<Bits>(Bits{1} << (sizeof(Bits) * 8 - 1));
  const Bits flip = key.descending ? static_cast<Bits>(~Bits{0}) : Bits{0};
  switch (key.order) {
    case SortKey::Order::kUnsigned:
      for (int64_t i = 0; i < n; ++i) keys[i] = static_cast<Bits>(x[i] ^ flip);
      return true;
    case SortKey::Order::kSigned:
      for (int64_t i = 0; i < n; ++i) keys[i] = static_cast<Bits>(x[i] ^ kSign ^ flip);
      return true;
    case SortKey::Order::kFloatTotal:
    case SortKey::Order::kFloatPartial:
      break;
  }
  const Bits infinity = static_cast<Bits>(InfinityBits(key.type));
  const Bits nan_to = static_cast<Bits>(key.nan_to);
  const Bits zero_to = static_cast<Bits>(key.zero_to);
  const int form = (key.replace_nan ? 4 : 0) | (key.replace_zero ? 2 : 0) |
                   (key.order == SortKey::Order::kFloatPartial ? 1 : 0);
  switch (form) {
#define XJIT_FLOAT_KEYS(F)                                                                        \
  case F:                                                                                         \
    return FloatKeysOf<Bits, (F & 4) != 0, (F & 2) != 0, (F & 1) != 0>(infinity, nan_to, zero_to, \
                                                                       flip, x, n, keys);
    XJIT_FLOAT_KEYS(0)
    XJIT_FLOAT_KEYS(1)
    XJIT_FLOAT_KEYS(2)
    XJIT_FLOAT_KEYS(3)
    XJIT_FLOAT_KEYS(4)
    XJIT_FLOAT_KEYS(5)
    XJIT_FLOAT_KEYS(6)
    XJIT_FLOAT_KEYS(7)
#undef XJIT_FLOAT_KEYS
  }
  return false;
}

template <typename Bits>
bool KeysOfBytes(const SortKey& key, const void* elements, int64_t n, uint64_t* keys) {
  // Elements are aligned to their width in the caller's scratch.
  return KeysOf<Bits>(key, static_cast<const Bits*>(elements), n, keys);
}

// A stable LSD radix sort of n items by kDigits digits of kDigitBits bits,
// Digit(item, d) the d-th from the least significant, or by the items
// themselves when they are few: items must be distinct and ordered by
// (key, position) so that both give the stable order. Returns the array
// holding the result (a or b).
template <int kDigitBits, int kDigits, typename Item, typename Digit, typename Less>
Item* RadixSort(Item* a, Item* b, int64_t n, Digit digit, Less less) {
  if (n <= 24) {
    // Insertion sort: the items are distinct, so this is the same order.
    for (int64_t i = 1; i < n; ++i) {
      const Item item = a[i];
      int64_t j = i;
      for (; j > 0 && less(item, a[j - 1]); --j) a[j] = a[j - 1];
      a[j] = item;
    }
    return a;
  }
  constexpr int kBuckets = 1 << kDigitBits;
  uint32_t counts[kDigits][kBuckets];
  std::memset(counts, 0, sizeof(counts));
  for (int64_t i = 0; i < n; ++i) {
    for (int d = 0; d < kDigits; ++d) ++counts[d][digit(a[i], d)];
  }
  for (int d = 0; d < kDigits; ++d) {
    uint32_t* count = counts[d];
    if (count[digit(a[0], d)] == static_cast<uint32_t>(n)) continue;  // one bucket: no-op pass
    uint32_t sum = 0;
    for (int v = 0; v < kBuckets; ++v) {
      const uint32_t c = count[v];
      count[v] = sum;
      sum += c;
    }
    for (int64_t i = 0; i < n; ++i) b[count[digit(a[i], d)]++] = a[i];
    std::swap(a, b);
  }
  return a;
}

// Packed items: a key of at most 32 bits above a 32-bit position, so that
// they compare as (key, position) and the radix passes read only the key.
template <int kDigitBits, int kDigits>
uint64_t* SortPacked(uint64_t* a, uint64_t* b, int64_t n) {
  return RadixSort<kDigitBits, kDigits>(
      a, b, n,
      [](uint64_t item, int d) {
        return (item >> (32 + kDigitBits * d)) & ((uint64_t{1} << kDigitBits) - 1);
      },
      [](uint64_t x, uint64_t y) { return x < y; });
}

struct WideItem {
  uint64_t key;
  uint64_t position;
};

}  // namespace

std::string SortKey::ToString() const {
  const char* names[] = {"unsigned", "signed", "totalorder", "float"};
  std::string text = absl::StrCat("p", operand, ":", ElementTypeName(type), ":",
                                  names[static_cast<int>(order)], descending ? ":desc" : ":asc");
  if (replace_nan) absl::StrAppend(&text, ":nan->0x", absl::Hex(nan_to));
  if (replace_zero) absl::StrAppend(&text, ":zero->0x", absl::Hex(zero_to));
  return text;
}

bool IsSortKeyType(ElementType type) {
  if (IsPred(type)) return true;
  if (IsInteger(type)) return BitWidth(type) >= 8;
  return InfinityBits(type) != 0;
}

bool ComputeKeys(const SortKey& key, const void* elements, int64_t n, uint64_t* keys) {
  switch (BitWidth(key.type)) {
    case 8:
      return KeysOfBytes<uint8_t>(key, elements, n, keys);
    case 16:
      return KeysOfBytes<uint16_t>(key, elements, n, keys);
    case 32:
      return KeysOfBytes<uint32_t>(key, elements, n, keys);
    default:
      return KeysOfBytes<uint64_t>(key, elements, n, keys);
  }
}

int64_t StableSortWorkBytes(int64_t n) {
  return n * (2 * static_cast<int64_t>(sizeof(WideItem)) + 8);
}

void StableSortByKey(const uint64_t* keys, int key_bits, int64_t* order, int64_t n, void* work,
                     bool identity_order) {
  if (n <= 1) return;
  if (key_bits <= 32) {
    uint64_t* a = static_cast<uint64_t*>(work);
    uint64_t* b = a + n;
    if (identity_order) {
      for (int64_t i = 0; i < n; ++i) a[i] = keys[i] << 32 | static_cast<uint64_t>(i);
    } else {
      for (int64_t i = 0; i < n; ++i) a[i] = keys[order[i]] << 32 | static_cast<uint64_t>(i);
    }
    // 32-bit keys in three 11-bit digits: one pass fewer than bytes, and
    // the three counts still fit the L1 cache.
    const uint64_t* sorted = key_bits <= 8    ? SortPacked<8, 1>(a, b, n)
                             : key_bits <= 16 ? SortPacked<8, 2>(a, b, n)
                                              : SortPacked<11, 3>(a, b, n);
    if (identity_order) {
      for (int64_t i = 0; i < n; ++i) order[i] = static_cast<int64_t>(sorted[i] & 0xffffffff);
      return;
    }
    int64_t* previous = reinterpret_cast<int64_t*>(b + n);
    std::copy(order, order + n, previous);
    for (int64_t i = 0; i < n; ++i) order[i] = previous[sorted[i] & 0xffffffff];
    return;
  }
  WideItem* a = static_cast<WideItem*>(work);
  WideItem* b = a + n;
  int64_t* previous = reinterpret_cast<int64_t*>(b + n);
  for (int64_t i = 0; i < n; ++i) a[i] = {keys[order[i]], static_cast<uint64_t>(i)};
  const WideItem* sorted = RadixSort<8, 8>(
      a, b, n, [](const WideItem& item, int d) { return (item.key >> (8 * d)) & 0xff; },
      [](const WideItem& x, const WideItem& y) {
        return x.key < y.key || (x.key == y.key && x.position < y.position);
      });
  std::copy(order, order + n, previous);
  for (int64_t i = 0; i < n; ++i) order[i] = previous[sorted[i].position];
}

}  // namespace xjit::runtime::sort
