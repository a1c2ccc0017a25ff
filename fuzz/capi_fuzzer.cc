// Fuzz target: the C API builder. The input is a program: each byte chooses
// an operation (create a shape, add a parameter, an elementwise, shape or
// reduction op on earlier ops), the following bytes its arguments, with
// sizes, indices and paddings drawn from a table that includes absurd ones
// (negative, 2^31, 2^62, INT64_MAX) and element types out of range. Every
// call must return an error or a result, never crash; a module that builds
// must compile, and, when its buffers are small, run on zeroed arguments.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz/fuzz_target.h"
#include "xjit.h"

namespace xjit::fuzz {
namespace {

constexpr int64_t kSizes[] = {0,
                              1,
                              2,
                              3,
                              4,
                              7,
                              8,
                              16,
                              -1,
                              2147483648LL,
                              4611686018427387904LL,
                              INT64_MAX,
                              3000000000LL,
                              1099511627776LL};
// Out-of-range values too: a C caller may pass any int (xjit.h gives the
// enums a fixed underlying type in C++, so these are valid values to reject).
constexpr xjit_element_type kTypes[] = {XJIT_F32,  XJIT_S32, XJIT_PRED, XJIT_F64, XJIT_U8,
                                        XJIT_BF16, XJIT_C64, XJIT_S4,   XJIT_F16, XJIT_S64,
                                        XJIT_TUPLE, XJIT_NUM_ELEMENT_TYPES,
                                        static_cast<xjit_element_type>(77),
                                        static_cast<xjit_element_type>(-1)};
// The most bytes of arguments and results a built module may need to run.
constexpr int64_t kMaxRunBytes = int64_t{1} << 22;

// Reads the program's bytes; zeros past the end.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool done() const { return pos_ >= size_; }
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  int64_t Size() { return kSizes[Byte() % std::size(kSizes)]; }
  xjit_element_type Type() { return kTypes[Byte() % std::size(kTypes)]; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

void Free(xjit_status* status) {
  if (status != nullptr) xjit_status_free(status);
}

// An array shape with sizes from the table, or null when creating it fails.
xjit_shape* ArrayShape(Reader& in) {
  const xjit_element_type type = in.Type();
  const int rank = in.Byte() % 4;
  int64_t dims[4];
  for (int i = 0; i < rank; ++i) dims[i] = in.Size();
  int64_t order[4];
  const bool permuted = in.Byte() % 2 == 1;
  for (int i = 0; i < rank; ++i) order[i] = permuted ? i : rank - 1 - i;
  xjit_shape* shape = nullptr;
  xjit_status* status =
      xjit_shape_create_array(type, rank > 0 ? dims : nullptr, rank, order, &shape);
  if (status != nullptr) {
    xjit_status_free(status);
    return nullptr;
  }
  return shape;
}

void RunProgram(Reader& in) {
  xjit_builder* b = xjit_builder_create("fuzz");
  if (b == nullptr) return;
  std::vector<xjit_op> ops;
  int64_t parameters = 0;
  bool small_values = true;
  const auto pick = [&]() -> xjit_op {
    return ops.empty() ? XJIT_INVALID_OP : ops[in.Byte() % ops.size()];
  };
  for (int step = 0; step < 48 && !in.done(); ++step) {
    xjit_op op = XJIT_INVALID_OP;
    switch (in.Byte() % 14) {
      case 0: {  // A shape alone: its queries must hold up.
        xjit_shape* shape = ArrayShape(in);
        if (shape != nullptr) {
          (void)xjit_shape_byte_size(shape);
          (void)xjit_shape_element_count(shape);
          xjit_string_free(xjit_shape_to_string(shape));
          xjit_shape_free(shape);
        }
        break;
      }
      case 1: {
        xjit_shape* shape = ArrayShape(in);
        if (shape != nullptr) {
          op = xjit_parameter(b, parameters++, shape, nullptr);
          xjit_shape_free(shape);
        }
        break;
      }
      case 2:
        op = xjit_zero(b, in.Type());
        break;
      case 3: {
        xjit_shape* shape = ArrayShape(in);
        if (shape != nullptr) {
          op = xjit_iota(b, shape, in.Byte() % 4);
          xjit_shape_free(shape);
        }
        break;
      }
      case 4: {
        const xjit_op x = pick();
        switch (in.Byte() % 6) {
          case 0:
            op = xjit_neg(b, x);
            break;
          case 1:
            op = xjit_exp(b, x);
            break;
          case 2:
            op = xjit_abs(b, x);
            break;
          case 3:
            op = xjit_copy(b, x);
            break;
          case 4:
            op = xjit_not(b, x);
            break;
          default:
            op = xjit_convert(b, x, in.Type());
            break;
        }
        break;
      }
      case 5: {
        const xjit_op x = pick(), y = pick();
        switch (in.Byte() % 4) {
          case 0:
            op = xjit_add(b, x, y, nullptr, 0);
            break;
          case 1:
            op = xjit_mul(b, x, y, nullptr, 0);
            break;
          case 2:
            op = xjit_div(b, x, y, nullptr, 0);
            break;
          default:
            op = xjit_max(b, x, y, nullptr, 0);
            break;
        }
        break;
      }
      case 6: {
        int64_t sizes[3];
        const int n = in.Byte() % 3;
        for (int i = 0; i < n; ++i) sizes[i] = in.Size();
        op = xjit_broadcast(b, pick(), sizes, n);
        break;
      }
      case 7: {
        int64_t sizes[3];
        const int n = in.Byte() % 3;
        for (int i = 0; i < n; ++i) sizes[i] = in.Size();
        op = xjit_reshape(b, pick(), sizes, n);
        break;
      }
      case 8: {
        const int64_t start = in.Size(), limit = in.Size(), stride = in.Size();
        op = xjit_slice_in_dim(b, pick(), start, limit, stride, in.Byte() % 3);
        break;
      }
      case 9: {
        const xjit_op parts[2] = {pick(), pick()};
        op = xjit_concatenate(b, parts, 2, in.Byte() % 3);
        break;
      }
      case 10: {
        const int64_t permutation[3] = {in.Byte() % 3, in.Byte() % 3, in.Byte() % 3};
        op = xjit_transpose(b, pick(), permutation, in.Byte() % 4);
        break;
      }
      case 11: {
        const xjit_op parts[2] = {pick(), pick()};
        const xjit_op tuple = xjit_tuple(b, parts, 1 + in.Byte() % 2);
        op = in.Byte() % 2 == 0 ? tuple : xjit_get_tuple_element(b, tuple, in.Size());
        break;
      }
      case 12: {
        xjit_padding_dimension config[3];
        const int n = in.Byte() % 3;
        for (int i = 0; i < n; ++i) config[i] = {in.Size(), in.Size(), in.Size() % 3};
        op = xjit_pad(b, pick(), pick(), config, n);
        break;
      }
      case 13: {
        const xjit_op x = pick();
        const xjit_computation add = xjit_scalar_computation_create(b, XJIT_SCALAR_ADD, in.Type());
        const xjit_op init = pick();
        const int64_t dims[2] = {in.Byte() % 3, in.Size()};
        op = xjit_reduce(b, &x, &init, 1, add, dims, 1 + in.Byte() % 2);
        break;
      }
    }
    if (op == XJIT_INVALID_OP) continue;
    ops.push_back(op);
    // Running is for small programs: any value over the limit (a broadcast
    // to 2^31 elements reduced to a scalar) would make the run slow, not
    // wrong.
    xjit_shape* shape = nullptr;
    if (xjit_status* status = xjit_builder_get_shape(b, op, &shape); status != nullptr) {
      xjit_status_free(status);
    } else {
      const int64_t bytes = xjit_shape_byte_size(shape);
      if (bytes < 0 || bytes > kMaxRunBytes) small_values = false;
      xjit_shape_free(shape);
    }
  }
  xjit_module* module = nullptr;
  xjit_status* built = xjit_builder_build(b, ops.empty() ? XJIT_INVALID_OP : ops.back(), &module);
  xjit_builder_free(b);
  if (built != nullptr) {
    xjit_status_free(built);
    return;
  }
  XjitFuzzKeep();
  xjit_executable* executable = nullptr;
  xjit_status* compiled = xjit_compile(module, nullptr, &executable);
  xjit_module_free(module);
  if (compiled != nullptr) {
    xjit_status_free(compiled);
    return;
  }
  std::vector<std::vector<uint8_t>> args, results;
  std::vector<const void*> arg_pointers;
  std::vector<void*> result_pointers;
  std::vector<size_t> arg_sizes, result_sizes;
  int64_t total = 0;
  bool small = small_values;
  const auto add = [&](xjit_shape* shape, bool is_arg) {
    const int64_t bytes = xjit_shape_byte_size(shape);
    xjit_shape_free(shape);
    if (bytes < 0 || (total += bytes) > kMaxRunBytes) {
      small = false;
      return;
    }
    (is_arg ? args : results).emplace_back(static_cast<size_t>(bytes), 0);
    (is_arg ? arg_sizes : result_sizes).push_back(static_cast<size_t>(bytes));
  };
  for (int i = 0; i < xjit_executable_num_parameters(executable) && small; ++i) {
    xjit_shape* shape = nullptr;
    xjit_status* status = xjit_executable_parameter_shape(executable, i, &shape);
    if (status != nullptr) {
      xjit_status_free(status);
      small = false;
    } else {
      add(shape, true);
    }
  }
  for (int i = 0; i < xjit_executable_num_results(executable) && small; ++i) {
    xjit_shape* shape = nullptr;
    xjit_status* status = xjit_executable_result_shape(executable, i, &shape);
    if (status != nullptr) {
      xjit_status_free(status);
      small = false;
    } else {
      add(shape, false);
    }
  }
  if (small) {
    for (auto& a : args) arg_pointers.push_back(a.data());
    for (auto& r : results) result_pointers.push_back(r.data());
    Free(xjit_execute(executable, arg_pointers.data(), arg_sizes.data(),
                      static_cast<int>(args.size()), result_pointers.data(), result_sizes.data(),
                      static_cast<int>(results.size())));
  }
  xjit_executable_free(executable);
}

}  // namespace

std::vector<std::string> XjitFuzzSeeds() {
  // parameter f32[2,3]; exp; add; reduce.
  return {
      std::string("\x01\x00\x02\x02\x03\x00\x04\x00\x01\x05\x00\x00\x00\x0d\x00\x00\x01\x00", 18),
      std::string("\x03\x00\x01\x04\x00\x00\x06\x00\x01\x02\x08\x00\x00\x01\x04\x00", 16)};
}

std::vector<std::string> XjitFuzzDictionary() { return {}; }

}  // namespace xjit::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  xjit::fuzz::Reader in(data, size);
  xjit::fuzz::RunProgram(in);
  return 0;
}
