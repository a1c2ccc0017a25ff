/* The C API's contract points that a library user meets (issue: xjit as a
 * library), compiled as C:
 *  - the JIT honours xjit_compile_options_set_max_while_iterations (an
 *    endless loop fails with XJIT_RESOURCE_EXHAUSTED, as on the interpreter);
 *  - compiling or running with `threads` leaves the process's OpenBLAS
 *    thread count as the host set it;
 *  - a result buffer may be an argument buffer (the result is as if they
 *    were distinct);
 *  - zero-byte values take NULL buffers; parameters may have NULL names.
 * A SIGALRM bounds the whole program, so a loop the JIT does not bound
 * fails the test instead of hanging it. */
#include <cblas.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xjit.h"

static int failures = 0;

#define CHECK(cond)                                                \
  do {                                                             \
    if (!(cond)) {                                                 \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                  \
    }                                                              \
  } while (0)

static int Ok(xjit_status* status, const char* what) {
  if (status == NULL) return 1;
  fprintf(stderr, "%s: %s: %s\n", what, xjit_code_name(xjit_status_code(status)),
          xjit_status_message(status));
  xjit_status_free(status);
  ++failures;
  return 0;
}

static xjit_executable* Compile(const char* text, xjit_backend backend, int threads,
                                int64_t max_while_iterations) {
  xjit_module* module = NULL;
  if (!Ok(xjit_module_parse(text, &module), "parse")) return NULL;
  xjit_compile_options* options = xjit_compile_options_create();
  Ok(xjit_compile_options_set_backend(options, backend), "backend");
  Ok(xjit_compile_options_set_threads(options, threads), "threads");
  Ok(xjit_compile_options_set_max_while_iterations(options, max_while_iterations), "max while");
  xjit_executable* exe = NULL;
  Ok(xjit_compile(module, options, &exe), "compile");
  xjit_compile_options_free(options);
  xjit_module_free(module);
  return exe;
}

static const char kEndless[] =
    "HloModule endless\n"
    "cond {\n  c = s32[] parameter(0)\n  ROOT t = pred[] constant(true)\n}\n"
    "body {\n  b = s32[] parameter(0)\n  one = s32[] constant(1)\n"
    "  ROOT n = s32[] add(b, one)\n}\n"
    "ENTRY e {\n  z = s32[] constant(0)\n"
    "  ROOT w = s32[] while(z), condition=cond, body=body\n}\n";

static void TestMaxWhileIterations(void) {
  const xjit_backend backends[2] = {XJIT_BACKEND_INTERPRETER, XJIT_BACKEND_JIT};
  for (int k = 0; k < 2; ++k) {
    xjit_executable* exe = Compile(kEndless, backends[k], 1, 1000);
    if (exe == NULL) continue;
    int32_t result = 0;
    void* results[1] = {&result};
    const size_t result_sizes[1] = {sizeof result};
    xjit_status* status = xjit_execute(exe, NULL, NULL, 0, results, result_sizes, 1);
    CHECK(xjit_status_code(status) == XJIT_RESOURCE_EXHAUSTED);
    CHECK(strstr(xjit_status_message(status), "1000 iterations") != NULL);
    xjit_status_free(status);
    xjit_executable_free(exe);
  }
}

static const char kDot[] =
    "HloModule dot\n"
    "ENTRY e {\n  a = f32[64,64] parameter(0)\n  b = f32[64,64] parameter(1)\n"
    "  ROOT d = f32[64,64] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";

static void TestBlasThreadsDoNotLeak(void) {
  openblas_set_num_threads(1);
  const int host = openblas_get_num_threads();
  static float a[64 * 64], b[64 * 64], out[64 * 64];
  for (int i = 0; i < 64 * 64; ++i) {
    a[i] = (float)(i % 7) - 3;
    b[i] = (float)(i % 5) - 2;
  }
  xjit_executable* exe = Compile(kDot, XJIT_BACKEND_JIT, 2, -1);
  if (exe == NULL) return;
  CHECK(openblas_get_num_threads() == host); /* compiling changed nothing */
  const void* args[2] = {a, b};
  const size_t arg_sizes[2] = {sizeof a, sizeof b};
  void* results[1] = {out};
  const size_t result_sizes[1] = {sizeof out};
  Ok(xjit_execute(exe, args, arg_sizes, 2, results, result_sizes, 1), "execute dot");
  CHECK(openblas_get_num_threads() == host); /* nor did running */
  /* And the result is the product. */
  int wrong = 0;
  for (int i = 0; i < 64; ++i) {
    for (int j = 0; j < 64; ++j) {
      float acc = 0;
      for (int k = 0; k < 64; ++k) acc += a[i * 64 + k] * b[k * 64 + j];
      wrong += out[i * 64 + j] != acc; /* small integers: exact in f32 */
    }
  }
  CHECK(wrong == 0);
  xjit_executable_free(exe);
}

static const char kReverse[] =
    "HloModule reverse\n"
    "ENTRY e {\n  a = f32[64] parameter(0)\n  ROOT r = f32[64] reverse(a), dimensions={0}\n}\n";

static const char kTuple[] =
    "HloModule pair\n"
    "ENTRY e {\n  a = f32[64] parameter(0)\n  r = f32[64] reverse(a), dimensions={0}\n"
    "  n = f32[64] negate(a)\n  ROOT t = (f32[64], f32[64]) tuple(r, n)\n}\n";

static void TestResultMayAliasArgument(void) {
  const xjit_backend backends[2] = {XJIT_BACKEND_JIT, XJIT_BACKEND_INTERPRETER};
  for (int k = 0; k < 2; ++k) {
    xjit_executable* exe = Compile(kReverse, backends[k], 1, -1);
    if (exe == NULL) continue;
    float values[64];
    for (int i = 0; i < 64; ++i) values[i] = (float)i;
    const void* args[1] = {values};
    const size_t sizes[1] = {sizeof values};
    void* results[1] = {values}; /* the same buffer */
    Ok(xjit_execute(exe, args, sizes, 1, results, sizes, 1), "execute in place");
    int wrong = 0;
    for (int i = 0; i < 64; ++i) wrong += values[i] != (float)(63 - i);
    CHECK(wrong == 0);
    xjit_executable_free(exe);

    exe = Compile(kTuple, backends[k], 1, -1);
    if (exe == NULL) continue;
    float a[64], other[64];
    for (int i = 0; i < 64; ++i) a[i] = (float)i;
    const void* tuple_args[1] = {a};
    void* tuple_results[2] = {other, a}; /* the second leaf over the argument */
    const size_t tuple_sizes[2] = {sizeof a, sizeof a};
    Ok(xjit_execute(exe, tuple_args, tuple_sizes, 1, tuple_results, tuple_sizes, 2),
       "execute tuple in place");
    wrong = 0;
    for (int i = 0; i < 64; ++i) wrong += other[i] != (float)(63 - i) || a[i] != -(float)i;
    CHECK(wrong == 0);
    xjit_executable_free(exe);
  }
}

static void TestNullBuffersAndNames(void) {
  /* A zero-element parameter and result: NULL buffers of size 0. */
  int64_t dims[1] = {0};
  xjit_shape* empty = NULL;
  if (!Ok(xjit_shape_create_array(XJIT_F32, dims, 1, NULL, &empty), "shape")) return;
  xjit_builder* b = xjit_builder_create("empty");
  xjit_op p = xjit_parameter(b, 0, empty, NULL); /* NULL name: "p0" */
  xjit_module* module = NULL;
  if (!Ok(xjit_builder_build(b, xjit_neg(b, p), &module), "build")) {
    xjit_builder_free(b);
    xjit_shape_free(empty);
    return;
  }
  char* text = NULL;
  Ok(xjit_module_to_string(module, &text), "to_string");
  CHECK(text != NULL && strstr(text, "p0 = f32[0]") != NULL);
  xjit_string_free(text);
  xjit_executable* exe = NULL;
  Ok(xjit_compile(module, NULL, &exe), "compile empty");
  if (exe != NULL) {
    const void* args[1] = {NULL};
    const size_t sizes[1] = {0};
    void* results[1] = {NULL};
    Ok(xjit_execute(exe, args, sizes, 1, results, sizes, 1), "execute with NULL buffers");
    xjit_executable_free(exe);
  }
  xjit_module_free(module);
  xjit_builder_free(b);
  xjit_shape_free(empty);
}

int main(void) {
  alarm(120); /* A hang (an unbounded loop) ends the test as a failure. */
  TestMaxWhileIterations();
  TestBlasThreadsDoNotLeak();
  TestResultMayAliasArgument();
  TestNullBuffersAndNames();
  if (failures != 0) {
    fprintf(stderr, "capi_library_test: %d failures\n", failures);
    return 1;
  }
  printf("capi_library_test: OK\n");
  return 0;
}
