/* xjit.h: the public C API of xjit. Plain C (C99 and later, or C++), opaque
 * handles, no abort on bad input.
 *
 * Contract:
 *  - Every call that can fail returns an `xjit_status*` (NULL means success)
 *    or, for graph building, records the builder's first error (see below).
 *    A non-NULL status carries a code and a message and is freed with
 *    xjit_status_free(). Null handles, wrong counts, wrong buffer sizes,
 *    shape mismatches and invalid operations are reported, never fatal.
 *  - Graph building follows XlaBuilder: op functions return an `xjit_op` id
 *    local to their builder; a failed op returns XJIT_INVALID_OP and the
 *    builder keeps the first error (shared by a builder and its
 *    sub-builders); every later op of the tree is invalid too, and
 *    xjit_builder_build() / xjit_builder_build_sub() report that error.
 *    xjit_builder_first_error() reads it at any time.
 *  - Buffers passed to xjit_execute() and xjit_constant() hold the PHYSICAL
 *    bytes of a value in its shape's layout: for the default layout
 *    (minor_to_major = {rank-1, ..., 0}) that is the C (row-major) order.
 *    xjit_shape_byte_size() gives the size. A tuple value is its array leaves
 *    one after another, depth first, with no padding between them.
 *  - Builders, modules and shapes are not thread-safe; an executable may be
 *    run from any number of threads at once.
 *  - Handles own what they return: objects from *_create / *_parse / *_build /
 *    xjit_compile are freed by the matching *_free; strings returned as
 *    `char*` are freed with xjit_string_free(). Every *_free accepts NULL.
 */
#ifndef XJIT_JIT_CAPI_XJIT_H_
#define XJIT_JIT_CAPI_XJIT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header; xjit_version() gives the library's, which a
 * program loading libxjit.so at run time may compare with it. */
#define XJIT_VERSION_MAJOR 0
#define XJIT_VERSION_MINOR 1
#define XJIT_VERSION_PATCH 0
#define XJIT_VERSION_STRING "0.1.0"
/* "MAJOR.MINOR.PATCH" of the library (static storage). */
const char* xjit_version(void);

/* In C++ every enum of this header has the fixed underlying type int: an
 * out-of-range value a caller passes (say (xjit_element_type)77) is then a
 * valid value that the library rejects with a status, where for an enum
 * without one merely reading it is undefined behaviour. The enums are
 * int-sized in C as well, so both languages see the same ABI. */
#ifdef __cplusplus
#define XJIT_ENUM_INT : int
#else
#define XJIT_ENUM_INT
#endif


/* ------------------------------------------------------------------------ */
/* Status                                                                    */

/* The codes of absl::StatusCode, with the same values. */
typedef enum xjit_code XJIT_ENUM_INT {
  XJIT_OK = 0,
  XJIT_CANCELLED = 1,
  XJIT_UNKNOWN = 2,
  XJIT_INVALID_ARGUMENT = 3,
  XJIT_DEADLINE_EXCEEDED = 4,
  XJIT_NOT_FOUND = 5,
  XJIT_ALREADY_EXISTS = 6,
  XJIT_PERMISSION_DENIED = 7,
  XJIT_RESOURCE_EXHAUSTED = 8,
  XJIT_FAILED_PRECONDITION = 9,
  XJIT_ABORTED = 10,
  XJIT_OUT_OF_RANGE = 11,
  XJIT_UNIMPLEMENTED = 12,
  XJIT_INTERNAL = 13,
  XJIT_UNAVAILABLE = 14,
  XJIT_DATA_LOSS = 15,
  XJIT_UNAUTHENTICATED = 16
} xjit_code;

typedef struct xjit_status xjit_status;

/* XJIT_OK for NULL. */
xjit_code xjit_status_code(const xjit_status* status);
/* "" for NULL. Valid until the status is freed. */
const char* xjit_status_message(const xjit_status* status);
void xjit_status_free(xjit_status* status);
/* "INVALID_ARGUMENT", "NOT_FOUND", ... */
const char* xjit_code_name(xjit_code code);

/* Frees a string this API returned. */
void xjit_string_free(char* string);

/* ------------------------------------------------------------------------ */
/* Element types (every type of ir/element_type.h, in its order)            */

typedef enum xjit_element_type XJIT_ENUM_INT {
  XJIT_PRED = 0,
  XJIT_S1,
  XJIT_S2,
  XJIT_S4,
  XJIT_S8,
  XJIT_S16,
  XJIT_S32,
  XJIT_S64,
  XJIT_U1,
  XJIT_U2,
  XJIT_U4,
  XJIT_U8,
  XJIT_U16,
  XJIT_U32,
  XJIT_U64,
  XJIT_F16,
  XJIT_BF16,
  XJIT_F32,
  XJIT_F64,
  XJIT_C64,
  XJIT_C128,
  XJIT_F8E5M2,
  XJIT_F8E4M3,
  XJIT_F8E4M3FN,
  XJIT_F8E3M4,
  XJIT_F8E4M3FNUZ,
  XJIT_F8E5M2FNUZ,
  XJIT_F8E4M3B11FNUZ,
  XJIT_F8E8M0FNU,
  XJIT_F4E2M1FN,
  XJIT_TOKEN,
  XJIT_OPAQUE_TYPE,
  XJIT_TUPLE,
  XJIT_NUM_ELEMENT_TYPES
} xjit_element_type;

/* "f32", "pred", ...; "invalid element type" for a value out of range (as
 * xjit_code_name answers "UNKNOWN_CODE": never NULL). */
const char* xjit_element_type_name(xjit_element_type type);
/* The inverse; XJIT_INVALID_ARGUMENT for an unknown name. */
xjit_status* xjit_element_type_from_name(const char* name, xjit_element_type* out);
/* Bytes per element of an unpacked array (pred: 1, s4: 1, token: 0); -1 if
 * out of range. */
int64_t xjit_element_type_byte_width(xjit_element_type type);

/* ------------------------------------------------------------------------ */
/* Shapes                                                                    */

typedef struct xjit_shape xjit_shape;

/* An array. `dims` has `rank` entries (may be NULL when rank is 0).
 * `minor_to_major` is NULL for the default layout, else a permutation of
 * [0, rank). */
xjit_status* xjit_shape_create_array(xjit_element_type type, const int64_t* dims, int rank,
                                     const int64_t* minor_to_major, xjit_shape** out);
/* A tuple of copies of `elements` (n may be 0: the empty tuple). */
xjit_status* xjit_shape_create_tuple(const xjit_shape* const* elements, int n, xjit_shape** out);
xjit_status* xjit_shape_create_token(xjit_shape** out);
/* HLO text: "f32[2,3]{0,1}", "(s32[], f32[4])". */
xjit_status* xjit_shape_parse(const char* text, xjit_shape** out);
xjit_shape* xjit_shape_clone(const xjit_shape* shape); /* NULL for NULL */
void xjit_shape_free(xjit_shape* shape);

/* Queries. On a NULL shape: element type XJIT_TUPLE, rank -1, 0 / -1 below. */
xjit_element_type xjit_shape_element_type(const xjit_shape* shape);
int xjit_shape_is_array(const xjit_shape* shape);
int xjit_shape_is_tuple(const xjit_shape* shape);
/* -1 for a non-array. */
int xjit_shape_rank(const xjit_shape* shape);
/* -1 when i is out of range. */
int64_t xjit_shape_dimension(const xjit_shape* shape, int i);
/* Copies min(rank, capacity) entries of minor_to_major to `out`; returns the
 * rank (-1 for a non-array). */
int xjit_shape_minor_to_major(const xjit_shape* shape, int64_t* out, int capacity);
/* -1 for a non-tuple. */
int xjit_shape_tuple_size(const xjit_shape* shape);
/* A copy of element i of a tuple. */
xjit_status* xjit_shape_tuple_element(const xjit_shape* shape, int i, xjit_shape** out);
/* Bytes of a buffer holding a value of this shape in its layout (for a tuple,
 * the sum over its leaves; a token is 0). -1 for NULL. */
int64_t xjit_shape_byte_size(const xjit_shape* shape);
/* Number of logical elements of an array (1 for a scalar); -1 otherwise. */
int64_t xjit_shape_element_count(const xjit_shape* shape);
/* HLO text with layouts; free with xjit_string_free. NULL for NULL. */
char* xjit_shape_to_string(const xjit_shape* shape);
int xjit_shape_equal(const xjit_shape* a, const xjit_shape* b);

/* ------------------------------------------------------------------------ */
/* Modules                                                                   */

typedef struct xjit_module xjit_module;

/* Parses and verifies HLO text. Errors: "FILE:LINE:COL: error: ...". */
xjit_status* xjit_module_parse(const char* text, xjit_module** out);
/* Canonical HLO text; *out freed with xjit_string_free. */
xjit_status* xjit_module_to_string(const xjit_module* module, char** out);
void xjit_module_free(xjit_module* module);
/* -1 for NULL. */
int xjit_module_num_parameters(const xjit_module* module);
xjit_status* xjit_module_parameter_shape(const xjit_module* module, int i, xjit_shape** out);
xjit_status* xjit_module_result_shape(const xjit_module* module, xjit_shape** out);

/* ------------------------------------------------------------------------ */
/* Graph building                                                            */

typedef struct xjit_builder xjit_builder;
/* An instruction of one builder. Ids carry their builder's identity, so an
 * op of another builder is reported, not silently confused. */
typedef int64_t xjit_op;
/* A sub-computation of one builder tree (reducer, comparator, body...). */
typedef int64_t xjit_computation;
#define XJIT_INVALID_OP ((xjit_op)-1)
#define XJIT_INVALID_COMPUTATION ((xjit_computation)-1)

/* A builder for a module's entry computation. NULL only when out of memory. */
xjit_builder* xjit_builder_create(const char* name);
/* A builder for a sub-computation of the same module. NULL if parent is NULL. */
xjit_builder* xjit_builder_create_sub(xjit_builder* parent, const char* name);
/* Builders of a tree may be freed in any order. */
void xjit_builder_free(xjit_builder* builder);

/* Finishes the entry computation with `root` and returns the (verified)
 * module. Once per tree; afterwards every op of every builder of the tree
 * fails. */
xjit_status* xjit_builder_build(xjit_builder* builder, xjit_op root, xjit_module** out);
/* Finishes a sub-builder's computation; XJIT_INVALID_COMPUTATION on error
 * (recorded in the builder). */
xjit_computation xjit_builder_build_sub(xjit_builder* sub_builder, xjit_op root);
/* The tree's first error, NULL if none. */
xjit_status* xjit_builder_first_error(const xjit_builder* builder);
xjit_status* xjit_builder_get_shape(const xjit_builder* builder, xjit_op op, xjit_shape** out);
void xjit_builder_set_replica_count(xjit_builder* builder, int64_t n);
void xjit_builder_set_num_partitions(xjit_builder* builder, int64_t n);

/* Scalar (a, b) -> a OP b computations of `type`, for reducers. */
typedef enum xjit_scalar_computation XJIT_ENUM_INT {
  XJIT_SCALAR_ADD,
  XJIT_SCALAR_MUL,
  XJIT_SCALAR_MAX,
  XJIT_SCALAR_MIN,
  XJIT_SCALAR_AND,
  XJIT_SCALAR_OR
} xjit_scalar_computation;
xjit_computation xjit_scalar_computation_create(xjit_builder* builder, xjit_scalar_computation kind,
                                                xjit_element_type type);
/* A sort comparator over `n` operand types comparing operand 0 (LT, or GT
 * when descending != 0). */
xjit_computation xjit_sort_comparator_create(xjit_builder* builder, const xjit_element_type* types,
                                             int n, int descending);

/* ---- Parameters and constants ---- */
/* name may be NULL: the parameter is then named "p<number>". */
xjit_op xjit_parameter(xjit_builder* b, int64_t number, const xjit_shape* shape, const char* name);
/* `data` holds xjit_shape_byte_size(shape) bytes in shape's layout (size must
 * be exactly that). Arrays only. */
xjit_op xjit_constant(xjit_builder* b, const xjit_shape* shape, const void* data, size_t size);
xjit_op xjit_constant_f32(xjit_builder* b, float value);
xjit_op xjit_constant_f64(xjit_builder* b, double value);
xjit_op xjit_constant_s32(xjit_builder* b, int32_t value);
xjit_op xjit_constant_s64(xjit_builder* b, int64_t value);
xjit_op xjit_constant_u32(xjit_builder* b, uint32_t value);
xjit_op xjit_constant_pred(xjit_builder* b, int value);
xjit_op xjit_zero(xjit_builder* b, xjit_element_type type);
xjit_op xjit_one(xjit_builder* b, xjit_element_type type);
xjit_op xjit_min_value(xjit_builder* b, xjit_element_type type);
xjit_op xjit_max_value(xjit_builder* b, xjit_element_type type);
xjit_op xjit_iota(xjit_builder* b, const xjit_shape* shape, int64_t iota_dimension);

/* ---- Element-wise unary ---- */
xjit_op xjit_abs(xjit_builder* b, xjit_op x);
xjit_op xjit_acos(xjit_builder* b, xjit_op x);
xjit_op xjit_acosh(xjit_builder* b, xjit_op x);
xjit_op xjit_asin(xjit_builder* b, xjit_op x);
xjit_op xjit_asinh(xjit_builder* b, xjit_op x);
xjit_op xjit_atan(xjit_builder* b, xjit_op x);
xjit_op xjit_atanh(xjit_builder* b, xjit_op x);
xjit_op xjit_cbrt(xjit_builder* b, xjit_op x);
xjit_op xjit_ceil(xjit_builder* b, xjit_op x);
xjit_op xjit_clz(xjit_builder* b, xjit_op x);
xjit_op xjit_cos(xjit_builder* b, xjit_op x);
xjit_op xjit_cosh(xjit_builder* b, xjit_op x);
xjit_op xjit_erf(xjit_builder* b, xjit_op x);
xjit_op xjit_exp(xjit_builder* b, xjit_op x);
xjit_op xjit_expm1(xjit_builder* b, xjit_op x);
xjit_op xjit_floor(xjit_builder* b, xjit_op x);
xjit_op xjit_imag(xjit_builder* b, xjit_op x);
xjit_op xjit_is_finite(xjit_builder* b, xjit_op x);
xjit_op xjit_log(xjit_builder* b, xjit_op x);
xjit_op xjit_log1p(xjit_builder* b, xjit_op x);
xjit_op xjit_logistic(xjit_builder* b, xjit_op x);
xjit_op xjit_neg(xjit_builder* b, xjit_op x);
xjit_op xjit_not(xjit_builder* b, xjit_op x);
xjit_op xjit_population_count(xjit_builder* b, xjit_op x);
xjit_op xjit_real(xjit_builder* b, xjit_op x);
xjit_op xjit_round(xjit_builder* b, xjit_op x); /* halves away from zero */
xjit_op xjit_round_nearest_even(xjit_builder* b, xjit_op x);
xjit_op xjit_rsqrt(xjit_builder* b, xjit_op x);
xjit_op xjit_sign(xjit_builder* b, xjit_op x);
xjit_op xjit_sin(xjit_builder* b, xjit_op x);
xjit_op xjit_sinh(xjit_builder* b, xjit_op x);
xjit_op xjit_sqrt(xjit_builder* b, xjit_op x);
xjit_op xjit_tan(xjit_builder* b, xjit_op x);
xjit_op xjit_tanh(xjit_builder* b, xjit_op x);
xjit_op xjit_copy(xjit_builder* b, xjit_op x);
xjit_op xjit_optimization_barrier(xjit_builder* b, xjit_op x);

/* ---- Element-wise binary ----
 * broadcast_dims (n entries, may be NULL/0) maps the lower-rank operand's
 * dimensions to the higher-rank operand's, as in XlaBuilder. */
#define XJIT_BINARY_ARGS \
  xjit_builder *b, xjit_op lhs, xjit_op rhs, const int64_t *broadcast_dims, int n_broadcast_dims
xjit_op xjit_add(XJIT_BINARY_ARGS);
xjit_op xjit_sub(XJIT_BINARY_ARGS);
xjit_op xjit_mul(XJIT_BINARY_ARGS);
xjit_op xjit_div(XJIT_BINARY_ARGS);
xjit_op xjit_pow(XJIT_BINARY_ARGS);
xjit_op xjit_rem(XJIT_BINARY_ARGS);
xjit_op xjit_max(XJIT_BINARY_ARGS);
xjit_op xjit_min(XJIT_BINARY_ARGS);
xjit_op xjit_and(XJIT_BINARY_ARGS);
xjit_op xjit_or(XJIT_BINARY_ARGS);
xjit_op xjit_xor(XJIT_BINARY_ARGS);
xjit_op xjit_shift_left(XJIT_BINARY_ARGS);
xjit_op xjit_shift_right_arithmetic(XJIT_BINARY_ARGS);
xjit_op xjit_shift_right_logical(XJIT_BINARY_ARGS);
xjit_op xjit_atan2(XJIT_BINARY_ARGS);
xjit_op xjit_complex(XJIT_BINARY_ARGS);

/* ---- Comparisons ---- */
typedef enum xjit_comparison_direction XJIT_ENUM_INT {
  XJIT_CMP_EQ,
  XJIT_CMP_NE,
  XJIT_CMP_GE,
  XJIT_CMP_GT,
  XJIT_CMP_LE,
  XJIT_CMP_LT
} xjit_comparison_direction;
/* DEFAULT: FLOAT for floats, SIGNED / UNSIGNED for integers. */
typedef enum xjit_comparison_type XJIT_ENUM_INT {
  XJIT_CMP_TYPE_DEFAULT,
  XJIT_CMP_TYPE_FLOAT,
  XJIT_CMP_TYPE_TOTALORDER,
  XJIT_CMP_TYPE_SIGNED,
  XJIT_CMP_TYPE_UNSIGNED
} xjit_comparison_type;
xjit_op xjit_compare(XJIT_BINARY_ARGS, xjit_comparison_direction direction,
                     xjit_comparison_type type);
xjit_op xjit_eq(XJIT_BINARY_ARGS);
xjit_op xjit_ne(XJIT_BINARY_ARGS);
xjit_op xjit_ge(XJIT_BINARY_ARGS);
xjit_op xjit_gt(XJIT_BINARY_ARGS);
xjit_op xjit_le(XJIT_BINARY_ARGS);
xjit_op xjit_lt(XJIT_BINARY_ARGS);
xjit_op xjit_eq_total_order(XJIT_BINARY_ARGS);
xjit_op xjit_ne_total_order(XJIT_BINARY_ARGS);
xjit_op xjit_ge_total_order(XJIT_BINARY_ARGS);
xjit_op xjit_gt_total_order(XJIT_BINARY_ARGS);
xjit_op xjit_le_total_order(XJIT_BINARY_ARGS);
xjit_op xjit_lt_total_order(XJIT_BINARY_ARGS);
#undef XJIT_BINARY_ARGS

/* ---- Ternary (a scalar pred / min / max is broadcast) ---- */
xjit_op xjit_select(xjit_builder* b, xjit_op pred, xjit_op on_true, xjit_op on_false);
xjit_op xjit_clamp(xjit_builder* b, xjit_op min, xjit_op x, xjit_op max);

/* ---- Shape manipulation ---- */
/* Prepends dimensions `sizes`. */
xjit_op xjit_broadcast(xjit_builder* b, xjit_op x, const int64_t* sizes, int n);
xjit_op xjit_broadcast_in_dim(xjit_builder* b, xjit_op x, const int64_t* out_dims, int n_out_dims,
                              const int64_t* broadcast_dims, int n_broadcast_dims);
xjit_op xjit_reshape(xjit_builder* b, xjit_op x, const int64_t* new_sizes, int n);
/* Transposes by `dims` (a permutation, n_dims entries) first, then reshapes. */
xjit_op xjit_reshape_with_order(xjit_builder* b, xjit_op x, const int64_t* dims, int n_dims,
                                const int64_t* new_sizes, int n_sizes);
/* Merges consecutive dimensions `dims` into one. */
xjit_op xjit_collapse(xjit_builder* b, xjit_op x, const int64_t* dims, int n);
xjit_op xjit_transpose(xjit_builder* b, xjit_op x, const int64_t* permutation, int n);
xjit_op xjit_rev(xjit_builder* b, xjit_op x, const int64_t* dims, int n);
/* start, limit, strides: n entries each (strides NULL: all 1). */
xjit_op xjit_slice(xjit_builder* b, xjit_op x, const int64_t* start, const int64_t* limit,
                   const int64_t* strides, int n);
xjit_op xjit_slice_in_dim(xjit_builder* b, xjit_op x, int64_t start, int64_t limit, int64_t stride,
                          int64_t dimension);
/* Start indices are scalar ops (one per dimension); clamped at run time. */
xjit_op xjit_dynamic_slice(xjit_builder* b, xjit_op x, const xjit_op* start_indices,
                           int n_start_indices, const int64_t* slice_sizes, int n_slice_sizes);
xjit_op xjit_dynamic_update_slice(xjit_builder* b, xjit_op x, xjit_op update,
                                  const xjit_op* start_indices, int n_start_indices);
xjit_op xjit_concatenate(xjit_builder* b, const xjit_op* operands, int n, int64_t dimension);
/* One entry per dimension; low / high may be negative. */
typedef struct xjit_padding_dimension {
  int64_t low;
  int64_t high;
  int64_t interior;
} xjit_padding_dimension;
xjit_op xjit_pad(xjit_builder* b, xjit_op x, xjit_op padding_value,
                 const xjit_padding_dimension* config, int n);
xjit_op xjit_get_dimension_size(xjit_builder* b, xjit_op x, int64_t dimension);
xjit_op xjit_set_dimension_size(xjit_builder* b, xjit_op x, xjit_op size, int64_t dimension);

/* ---- Types ---- */
xjit_op xjit_convert(xjit_builder* b, xjit_op x, xjit_element_type new_type);
/* Equal widths element-wise; otherwise the minor dimension grows / shrinks. */
xjit_op xjit_bitcast_convert(xjit_builder* b, xjit_op x, xjit_element_type new_type);
xjit_op xjit_reduce_precision(xjit_builder* b, xjit_op x, int64_t exponent_bits,
                              int64_t mantissa_bits);

/* ---- Tuples ---- */
xjit_op xjit_tuple(xjit_builder* b, const xjit_op* elements, int n);
xjit_op xjit_get_tuple_element(xjit_builder* b, xjit_op tuple, int64_t index);

/* ---- Linear algebra ---- */
xjit_op xjit_dot(xjit_builder* b, xjit_op lhs, xjit_op rhs);
typedef struct xjit_dot_dimension_numbers {
  const int64_t* lhs_contracting_dims;
  int n_lhs_contracting_dims;
  const int64_t* rhs_contracting_dims;
  int n_rhs_contracting_dims;
  const int64_t* lhs_batch_dims;
  int n_lhs_batch_dims;
  const int64_t* rhs_batch_dims;
  int n_rhs_batch_dims;
} xjit_dot_dimension_numbers;
xjit_op xjit_dot_general(xjit_builder* b, xjit_op lhs, xjit_op rhs,
                         const xjit_dot_dimension_numbers* dnums);

typedef enum xjit_padding XJIT_ENUM_INT { XJIT_PADDING_SAME, XJIT_PADDING_VALID } xjit_padding;
/* Every spatial-dims array has n_spatial entries. */
typedef struct xjit_conv_dimension_numbers {
  int64_t input_batch_dimension;
  int64_t input_feature_dimension;
  const int64_t* input_spatial_dimensions;
  int64_t kernel_input_feature_dimension;
  int64_t kernel_output_feature_dimension;
  const int64_t* kernel_spatial_dimensions;
  int64_t output_batch_dimension;
  int64_t output_feature_dimension;
  const int64_t* output_spatial_dimensions;
  int n_spatial;
} xjit_conv_dimension_numbers;
/* Default numbering: lhs b,f,spatial...; rhs o,i,spatial...; output
 * b,f,spatial.... `strides` has one entry per spatial dimension. */
xjit_op xjit_conv(xjit_builder* b, xjit_op lhs, xjit_op rhs, const int64_t* strides, int n_strides,
                  xjit_padding padding, int64_t feature_group_count, int64_t batch_group_count);
/* `padding` holds (low, high) pairs: 2 * n_strides entries. */
xjit_op xjit_conv_with_general_padding(xjit_builder* b, xjit_op lhs, xjit_op rhs,
                                       const int64_t* strides, int n_strides,
                                       const int64_t* padding, int64_t feature_group_count,
                                       int64_t batch_group_count);
/* The general form. `padding`: 2 * n_spatial entries; lhs_dilation,
 * rhs_dilation: n_spatial entries each or NULL (all 1); dnums NULL: the
 * default numbering. n_spatial is the number of spatial dimensions. */
xjit_op xjit_conv_general_dilated(xjit_builder* b, xjit_op lhs, xjit_op rhs, const int64_t* strides,
                                  const int64_t* padding, const int64_t* lhs_dilation,
                                  const int64_t* rhs_dilation, int n_spatial,
                                  const xjit_conv_dimension_numbers* dnums,
                                  int64_t feature_group_count, int64_t batch_group_count);

typedef enum xjit_fft_type XJIT_ENUM_INT { XJIT_FFT, XJIT_IFFT, XJIT_RFFT, XJIT_IRFFT } xjit_fft_type;
xjit_op xjit_fft(xjit_builder* b, xjit_op x, xjit_fft_type type, const int64_t* fft_length, int n);
xjit_op xjit_cholesky(xjit_builder* b, xjit_op a, int lower);
typedef enum xjit_transpose_kind XJIT_ENUM_INT {
  XJIT_NO_TRANSPOSE,
  XJIT_TRANSPOSE,
  XJIT_ADJOINT
} xjit_transpose_kind;
xjit_op xjit_triangular_solve(xjit_builder* b, xjit_op a, xjit_op rhs, int left_side, int lower,
                              int unit_diagonal, xjit_transpose_kind transpose_a);
/* Result: (output, batch_mean, batch_var). */
xjit_op xjit_batch_norm_training(xjit_builder* b, xjit_op x, xjit_op scale, xjit_op offset,
                                 float epsilon, int64_t feature_index);
xjit_op xjit_batch_norm_inference(xjit_builder* b, xjit_op x, xjit_op scale, xjit_op offset,
                                  xjit_op mean, xjit_op variance, float epsilon,
                                  int64_t feature_index);
/* Result: (grad_operand, grad_scale, grad_offset). */
xjit_op xjit_batch_norm_grad(xjit_builder* b, xjit_op x, xjit_op scale, xjit_op mean,
                             xjit_op variance, xjit_op grad_output, float epsilon,
                             int64_t feature_index);

/* ---- Reductions, windows, sorting, indexing ---- */
/* Variadic: n operands and n init values; the computation takes 2n scalars
 * and returns n (a tuple when n > 1). */
xjit_op xjit_reduce(xjit_builder* b, const xjit_op* operands, const xjit_op* init_values, int n,
                    xjit_computation computation, const int64_t* dims, int n_dims);
/* window_dimensions and strides: rank entries each. */
xjit_op xjit_reduce_window(xjit_builder* b, const xjit_op* operands, const xjit_op* init_values,
                           int n, xjit_computation computation, const int64_t* window_dimensions,
                           const int64_t* strides, int rank, xjit_padding padding);
/* base_dilations, window_dilations: rank entries or NULL (all 1); padding:
 * 2 * rank entries (low, high pairs) or NULL (none). */
xjit_op xjit_reduce_window_with_general_padding(
    xjit_builder* b, const xjit_op* operands, const xjit_op* init_values, int n,
    xjit_computation computation, const int64_t* window_dimensions, const int64_t* strides,
    const int64_t* base_dilations, const int64_t* window_dilations, const int64_t* padding,
    int rank);
xjit_op xjit_select_and_scatter(xjit_builder* b, xjit_op operand, xjit_computation select,
                                const int64_t* window_dimensions, const int64_t* strides, int rank,
                                xjit_padding padding, xjit_op source, xjit_op init_value,
                                xjit_computation scatter);
/* padding: 2 * rank entries. */
xjit_op xjit_select_and_scatter_with_general_padding(xjit_builder* b, xjit_op operand,
                                                     xjit_computation select,
                                                     const int64_t* window_dimensions,
                                                     const int64_t* strides, const int64_t* padding,
                                                     int rank, xjit_op source, xjit_op init_value,
                                                     xjit_computation scatter);
xjit_op xjit_map(xjit_builder* b, const xjit_op* operands, int n, xjit_computation computation,
                 const int64_t* dims, int n_dims);
/* dimension -1: the last. The comparator takes 2n scalars. */
xjit_op xjit_sort(xjit_builder* b, const xjit_op* operands, int n, xjit_computation comparator,
                  int64_t dimension, int is_stable);
/* Result: (values, s32 indices) of the k largest (or smallest) along the
 * last dimension. */
xjit_op xjit_top_k(xjit_builder* b, xjit_op x, int64_t k, int largest);

typedef struct xjit_gather_dimension_numbers {
  const int64_t* offset_dims;
  int n_offset_dims;
  const int64_t* collapsed_slice_dims;
  int n_collapsed_slice_dims;
  const int64_t* start_index_map;
  int n_start_index_map;
  int64_t index_vector_dim;
  const int64_t* operand_batching_dims; /* may be NULL */
  int n_operand_batching_dims;
  const int64_t* start_indices_batching_dims; /* may be NULL */
  int n_start_indices_batching_dims;
} xjit_gather_dimension_numbers;
xjit_op xjit_gather(xjit_builder* b, xjit_op operand, xjit_op start_indices,
                    const xjit_gather_dimension_numbers* dnums, const int64_t* slice_sizes,
                    int n_slice_sizes, int indices_are_sorted);

typedef struct xjit_scatter_dimension_numbers {
  const int64_t* update_window_dims;
  int n_update_window_dims;
  const int64_t* inserted_window_dims;
  int n_inserted_window_dims;
  const int64_t* scatter_dims_to_operand_dims;
  int n_scatter_dims_to_operand_dims;
  int64_t index_vector_dim;
  const int64_t* input_batching_dims; /* may be NULL */
  int n_input_batching_dims;
  const int64_t* scatter_indices_batching_dims; /* may be NULL */
  int n_scatter_indices_batching_dims;
} xjit_scatter_dimension_numbers;
/* Variadic: n operands and n updates. */
xjit_op xjit_scatter(xjit_builder* b, const xjit_op* operands, int n, xjit_op scatter_indices,
                     const xjit_op* updates, xjit_computation update_computation,
                     const xjit_scatter_dimension_numbers* dnums, int indices_are_sorted,
                     int unique_indices);

/* ---- Control flow and calls ---- */
xjit_op xjit_call(xjit_builder* b, xjit_computation computation, const xjit_op* operands, int n);
/* attributes may be NULL; version < 0: none. */
xjit_op xjit_composite_call(xjit_builder* b, xjit_computation computation, const xjit_op* operands,
                            int n, const char* name, const char* attributes, int64_t version);
xjit_op xjit_conditional(xjit_builder* b, xjit_op pred, xjit_op true_operand,
                         xjit_computation true_computation, xjit_op false_operand,
                         xjit_computation false_computation);
/* An s32 branch index selects one of n branches (out of range: the last). */
xjit_op xjit_conditional_indexed(xjit_builder* b, xjit_op branch_index,
                                 const xjit_computation* branches, const xjit_op* operands, int n);
xjit_op xjit_while(xjit_builder* b, xjit_computation condition, xjit_computation body,
                   xjit_op init);
/* The target is looked up by name when the program runs (see
 * xjit_register_custom_call). `opaque` may be NULL. */
xjit_op xjit_custom_call(xjit_builder* b, const char* target, const xjit_op* operands, int n,
                         const xjit_shape* shape, const char* opaque, int has_side_effect);

/* ---- Random numbers ---- */
xjit_op xjit_rng_normal(xjit_builder* b, xjit_op mu, xjit_op sigma, const xjit_shape* shape);
xjit_op xjit_rng_uniform(xjit_builder* b, xjit_op lo, xjit_op hi, const xjit_shape* shape);
typedef enum xjit_rng_algorithm XJIT_ENUM_INT {
  XJIT_RNG_DEFAULT,
  XJIT_RNG_THREE_FRY,
  XJIT_RNG_PHILOX
} xjit_rng_algorithm;
/* Result: (new state, random bits of `shape`). */
xjit_op xjit_rng_bit_generator(xjit_builder* b, xjit_rng_algorithm algorithm, xjit_op initial_state,
                               const xjit_shape* shape);

/* ---- Tokens, I/O, channels ---- */
xjit_op xjit_create_token(xjit_builder* b);
xjit_op xjit_after_all(xjit_builder* b, const xjit_op* tokens, int n);
/* config may be NULL. */
xjit_op xjit_infeed(xjit_builder* b, const xjit_shape* shape, const char* config);
/* Result: (data, token). */
xjit_op xjit_infeed_with_token(xjit_builder* b, xjit_op token, const xjit_shape* shape,
                               const char* config);
xjit_op xjit_outfeed_with_token(xjit_builder* b, xjit_op x, xjit_op token,
                                const xjit_shape* shape_with_layout, const char* config);
xjit_op xjit_send(xjit_builder* b, xjit_op x, int64_t channel_id);
xjit_op xjit_recv(xjit_builder* b, const xjit_shape* shape, int64_t channel_id);
xjit_op xjit_send_with_token(xjit_builder* b, xjit_op x, xjit_op token, int64_t channel_id);
/* Result: (data, token). */
xjit_op xjit_recv_with_token(xjit_builder* b, xjit_op token, const xjit_shape* shape,
                             int64_t channel_id);

/* ---- Collectives ----
 * Replica groups: num_groups groups of group_size replica ids, row by row
 * (replica_groups may be NULL with num_groups 0: all replicas). A channel id
 * < 0 means none. */
xjit_op xjit_replica_id(xjit_builder* b);
xjit_op xjit_partition_id(xjit_builder* b);
xjit_op xjit_all_gather(xjit_builder* b, xjit_op x, int64_t all_gather_dimension,
                        int64_t shard_count, const int64_t* replica_groups, int num_groups,
                        int group_size, int64_t channel_id);
xjit_op xjit_all_reduce(xjit_builder* b, xjit_op x, xjit_computation computation,
                        const int64_t* replica_groups, int num_groups, int group_size,
                        int64_t channel_id);
xjit_op xjit_all_to_all(xjit_builder* b, xjit_op x, int64_t split_dimension,
                        int64_t concat_dimension, int64_t split_count,
                        const int64_t* replica_groups, int num_groups, int group_size);
/* pairs: n (source, target) pairs, 2n entries. */
xjit_op xjit_collective_permute(xjit_builder* b, xjit_op x, const int64_t* pairs, int n);
xjit_op xjit_reduce_scatter(xjit_builder* b, xjit_op x, xjit_computation computation,
                            int64_t scatter_dimension, int64_t shard_count,
                            const int64_t* replica_groups, int num_groups, int group_size,
                            int64_t channel_id);
xjit_op xjit_cross_replica_sum(xjit_builder* b, xjit_op x, const int64_t* replica_groups,
                               int num_groups, int group_size);

/* ------------------------------------------------------------------------ */
/* Custom calls                                                              */

/* The signature of the operation semantics: `in[i]` points to operand i's
 * buffer, `out` to the result's, each in its layout's physical bytes; tuple
 * operands / results are arrays of pointers to their elements. The function
 * must be thread-safe when executables run from several threads. */
typedef void (*xjit_custom_call_fn)(void* out, void** in);
/* Registers process-wide (replaces an earlier function of the same name). */
xjit_status* xjit_register_custom_call(const char* name, xjit_custom_call_fn fn);
xjit_status* xjit_unregister_custom_call(const char* name);

/* Typed custom calls (the convention of XLA's typed FFI, docs/custom_calls.md).
 * A handler gets every array leaf of the operands, operand after operand
 * (a tuple operand's leaves depth first; tokens contribute none), then those
 * of the result, each as a typed buffer; it fills the result buffers
 * completely and returns NULL, or a status (xjit_status_create) that fails
 * the run with its code and message. `dims` and `minor_to_major` (the
 * layout, fastest-varying dimension first; NULL for rank 0) and the frame
 * are valid during the call only. Operand buffers are only read. Handlers
 * run on the JIT as library-call steps (looked up when a module is
 * compiled) and in the interpreter, and may be called from several threads
 * at once (replicas, concurrent runs). A name registered here takes
 * precedence over xjit_register_custom_call's. */
typedef struct xjit_ffi_buffer {
  xjit_element_type type;
  int rank;
  const int64_t* dims;
  const int64_t* minor_to_major;
  void* data;
  int64_t byte_size;
} xjit_ffi_buffer;

typedef struct xjit_ffi_call_frame {
  const char* target;
  const char* backend_config; /* the custom call's backend_config= text, or "" */
  const xjit_ffi_buffer* operands;
  int num_operands;
  const xjit_ffi_buffer* results;
  int num_results;
} xjit_ffi_call_frame;

typedef xjit_status* (*xjit_ffi_handler)(void* user_data, const xjit_ffi_call_frame* frame);
/* Registers process-wide (replaces an earlier handler of the same name).
 * user_data is passed to every call. A JIT executable compiled while the
 * handler was registered keeps calling it, with this user_data, after the
 * handler is unregistered or replaced: user_data must outlive the
 * registration AND every such executable (the interpreter looks handlers
 * up at run time: after unregistration its executables fail with
 * "not registered"). To have xjit tell when nothing uses user_data any
 * more, register with xjit_register_ffi_custom_call_with_release. */
xjit_status* xjit_register_ffi_custom_call(const char* name, xjit_ffi_handler fn,
                                           void* user_data);
/* As xjit_register_ffi_custom_call; `release` (may be NULL) is called with
 * user_data once, when the registration has been unregistered or replaced
 * and every executable compiled while it was registered has been freed. It
 * may run on whichever thread drops the last use. */
xjit_status* xjit_register_ffi_custom_call_with_release(const char* name, xjit_ffi_handler fn,
                                                        void* user_data,
                                                        void (*release)(void* user_data));
xjit_status* xjit_unregister_ffi_custom_call(const char* name);
/* A new status for a handler to return (NULL for XJIT_OK); the runtime frees it. */
xjit_status* xjit_status_create(xjit_code code, const char* message);

/* ------------------------------------------------------------------------ */
/* Compilation and execution                                                 */

typedef enum xjit_backend XJIT_ENUM_INT {
  XJIT_BACKEND_JIT = 0,        /* native code (the default) */
  XJIT_BACKEND_INTERPRETER = 1 /* the reference evaluator */
} xjit_backend;

typedef struct xjit_compile_options xjit_compile_options;
/* Defaults: JIT backend, ISA "auto", 1 thread, passes on, no perf map, no
 * jitdump, no dump, while loops unbounded. */
xjit_compile_options* xjit_compile_options_create(void);
void xjit_compile_options_free(xjit_compile_options* options);
xjit_status* xjit_compile_options_set_backend(xjit_compile_options* options, xjit_backend backend);
/* "auto", "sse4", "avx2", "avx512" (x86-64) or "neon" (AArch64); an ISA the
 * host lacks is an error at xjit_compile. */
xjit_status* xjit_compile_options_set_isa(xjit_compile_options* options, const char* isa);
/* >= 1 (default 1). Large kernels are split over this many threads of a
 * process-wide pool, and OpenBLAS runs this executable's dot and convolution
 * calls with this many threads: the count is set around each such call and
 * the previous setting restored, so other executables and the application's
 * own OpenBLAS calls keep theirs. (OpenBLAS has one process-wide setting:
 * concurrent calls wanting different counts wait for each other, and an
 * application thread calling OpenBLAS during such a call uses its count.) */
xjit_status* xjit_compile_options_set_threads(xjit_compile_options* options, int threads);
/* Runs the pass pipeline (simplification, layout assignment, fusion) before
 * emitting code (JIT backend; default 1). 0 compiles the module as built. */
xjit_status* xjit_compile_options_set_passes(xjit_compile_options* options, int enabled);
/* Writes /tmp/perf-PID.map entries for emitted kernels (JIT backend), so
 * that `perf report` names them. The environment overrides this option:
 * XJIT_PERF_MAP=1 turns the map on and XJIT_PERF_MAP=0 off whatever the
 * option says (docs/profiling.md). */
xjit_status* xjit_compile_options_set_perf_map(xjit_compile_options* options, int enabled);
/* Writes perf's jitdump file (/tmp/jit-PID.dump, or under $XJIT_JITDUMP_DIR)
 * with each kernel's code and a line table into its program text, for
 * `perf inject --jit` and `perf annotate` (JIT backend; docs/profiling.md).
 * XJIT_JITDUMP=1 in the environment turns it on as well. */
xjit_status* xjit_compile_options_set_jitdump(xjit_compile_options* options, int enabled);
/* Writes each kernel's program and assembly under `dir` (JIT backend);
 * NULL or "" for none. */
xjit_status* xjit_compile_options_set_dump_dir(xjit_compile_options* options, const char* dir);
/* Bound on the iterations of one run of a while loop, on both backends: a
 * loop that needs more fails the run with XJIT_RESOURCE_EXHAUSTED instead of
 * hanging; < 0: unbounded (default). */
xjit_status* xjit_compile_options_set_max_while_iterations(xjit_compile_options* options,
                                                           int64_t max_iterations);

typedef struct xjit_executable xjit_executable;
/* Compiles a copy of `module` (the module may be freed afterwards). options
 * NULL: the defaults. */
xjit_status* xjit_compile(const xjit_module* module, const xjit_compile_options* options,
                          xjit_executable** out);
void xjit_executable_free(xjit_executable* executable);
/* XJIT_BACKEND_JIT or XJIT_BACKEND_INTERPRETER; -1 for NULL. */
int xjit_executable_backend(const xjit_executable* executable);
/* What the compile produced, as text (free with xjit_string_free): the
 * backend, then for the JIT a line per kernel ("kernel NAME: L lanes, B
 * bytes"), library call ("library call NAME: ROUTINE") and interpreted step
 * ("interpreted step NAME (OPCODE): why": each runs through the reference
 * evaluator, often 100x slower), then `xjit compile`'s summary lines
 * ("kernels: N", "interpreted steps: N", ...). */
xjit_status* xjit_executable_describe(const xjit_executable* executable, char** out);

/* Entry parameters: one buffer each, xjit_shape_byte_size(parameter shape)
 * bytes (a tuple parameter: its leaves one after another). */
int xjit_executable_num_parameters(const xjit_executable* executable);
xjit_status* xjit_executable_parameter_shape(const xjit_executable* executable, int i,
                                             xjit_shape** out);
/* Results: the leaves of the result shape (the root shape itself unless it is
 * a tuple; a tuple is flattened depth first, each leaf its own buffer; a
 * token leaf has 0 bytes and its buffer may be NULL). */
int xjit_executable_num_results(const xjit_executable* executable);
xjit_status* xjit_executable_result_shape(const xjit_executable* executable, int i,
                                          xjit_shape** out);
/* The whole (unflattened) result shape. */
xjit_status* xjit_executable_full_result_shape(const xjit_executable* executable, xjit_shape** out);

/* Runs the executable. args[i] holds parameter i (arg_sizes[i] bytes, which
 * must equal its byte size); results[i] receives result leaf i
 * (result_sizes[i] must equal its byte size). Buffers need no alignment,
 * are caller-owned and are only used during the call; argument buffers are
 * only read. A buffer for a zero-byte value (an empty array, a token) may
 * be NULL. A result buffer may be (or overlap) an argument buffer: the
 * result is then computed into scratch memory and copied over the argument
 * after the run, as if the buffers were distinct (result buffers must not
 * overlap each other). Safe to call from many threads at once on one
 * executable. */
xjit_status* xjit_execute(const xjit_executable* executable, const void* const* args,
                          const size_t* arg_sizes, int nargs, void* const* results,
                          const size_t* result_sizes, int nresults);

/* Runs num_replicas in-process replicas of the executable at once, one
 * thread each (replica-id r on replica r; collectives meet between them,
 * docs/replicas.md). args[r] and results[r] are replica r's buffer tables,
 * each as for xjit_execute (arg_sizes and result_sizes are the same for
 * every replica). The module's replica_count must be 1 or num_replicas and
 * num_partitions 1 (Unimplemented otherwise: `xjit run` runs partitions).
 * An error on any replica fails the call with the first
 * cause ("replica r: ..."); replicas that disagree on their collectives fail
 * instead of hanging. Both backends. */
xjit_status* xjit_execute_replicated(const xjit_executable* executable, int num_replicas,
                                     const void* const* const* args, const size_t* arg_sizes,
                                     int nargs, void* const* const* results,
                                     const size_t* result_sizes, int nresults);

/* ---- Replicas as MPI processes (docs/mpi.md) ----
 * An MPI application runs an executable compiled for N replicas with one
 * replica per rank of an N-rank communicator: rank r runs replica r, and
 * the collectives go over MPI. The application owns MPI_Init/MPI_Finalize;
 * xjit.h does not include mpi.h: the communicator is passed as its Fortran
 * handle, MPI_Comm_c2f(comm). */
typedef struct xjit_mpi_communicator xjit_mpi_communicator;

/* Wraps `fortran_comm` (MPI_Comm_c2f of an intra-communicator; MPI must be
 * initialised). Collective over that communicator: every rank calls it.
 * xjit duplicates it, so its messages never mix with the application's, and
 * caches one communicator per replica group across executions.
 * timeout_seconds > 0: a collective that waits longer for the other ranks
 * fails with DEADLINE_EXCEEDED, and the handle is unusable afterwards
 * (the application then typically calls MPI_Abort); <= 0: no limit.
 * UNIMPLEMENTED when xjit was built without MPI. libxjit.so itself needs
 * no MPI: its first call here loads the MPI transport, libxjit_mpi.so (from
 * libxjit.so's directory, else the loader's search path), and fails with
 * FAILED_PRECONDITION "cannot load libxjit_mpi.so: ..." when it cannot
 * (docs/library.md). Destroy the handle
 * (collective too) before MPI_Finalize. If the application's threads, or a
 * deeply nested module (run on a thread of its own), call xjit while MPI
 * has fewer than MPI_THREAD_SERIALIZED, initialise MPI with
 * MPI_Init_thread(..., MPI_THREAD_SERIALIZED, ...). */
xjit_status* xjit_mpi_communicator_create(int64_t fortran_comm, double timeout_seconds,
                                          xjit_mpi_communicator** out);
void xjit_mpi_communicator_destroy(xjit_mpi_communicator* communicator);
/* This rank's replica id and the replica count (the communicator's size). */
int xjit_mpi_communicator_rank(const xjit_mpi_communicator* communicator);
int xjit_mpi_communicator_size(const xjit_mpi_communicator* communicator);

/* Runs this rank's replica of the executable, as xjit_execute does with
 * this rank's own buffers; every rank of the communicator must call it
 * (with the same executable, compiled from the same module). Results equal
 * xjit_execute_replicated's bit for bit (docs/replicas.md). An error on this
 * rank returns here; the other ranks then fail at their next collective
 * only through the timeout, so an application without one should
 * MPI_Abort on error. Both backends. */
xjit_status* xjit_execute_mpi(const xjit_executable* executable,
                              xjit_mpi_communicator* communicator, const void* const* args,
                              const size_t* arg_sizes, int nargs, void* const* results,
                              const size_t* result_sizes, int nresults);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* XJIT_JIT_CAPI_XJIT_H_ */
