/* capi_replicas_test.c: the C API's typed custom calls
 * (xjit_register_ffi_custom_call) and replicated execution
 * (xjit_execute_replicated), from C, on both backends; each JIT result equals
 * the interpreter's (the oracle) and the values worked by hand.
 *
 * Exit status 0 when every check passed; failed checks are listed on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xjit.h"

static int g_checks = 0;
static int g_failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    ++g_checks;                                                                \
    if (!(cond)) {                                                             \
      ++g_failures;                                                            \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

/* Checks the code of `status` (and that its message contains `substring`
 * when not NULL); frees it. */
static void check_code(xjit_status* status, xjit_code code, const char* substring, int line) {
  ++g_checks;
  int ok = xjit_status_code(status) == code;
  if (ok && substring != NULL) ok = strstr(xjit_status_message(status), substring) != NULL;
  if (!ok) {
    ++g_failures;
    fprintf(stderr, "line %d: expected %s (%s), got %s: %s\n", line, xjit_code_name(code),
            substring ? substring : "", xjit_code_name(xjit_status_code(status)),
            xjit_status_message(status));
  }
  xjit_status_free(status);
}
#define CHECK_OK(expr) check_code((expr), XJIT_OK, NULL, __LINE__)
#define CHECK_CODE(expr, code, sub) check_code((expr), (code), (sub), __LINE__)

static xjit_module* parse(const char* text) {
  xjit_module* module = NULL;
  CHECK_OK(xjit_module_parse(text, &module));
  return module;
}

static xjit_executable* compile(const xjit_module* module, xjit_backend backend) {
  xjit_compile_options* options = xjit_compile_options_create();
  CHECK_OK(xjit_compile_options_set_backend(options, backend));
  xjit_executable* exe = NULL;
  CHECK_OK(xjit_compile(module, options, &exe));
  xjit_compile_options_free(options);
  return exe;
}

/* ---- Typed custom calls ---- */

typedef struct {
  float scale;
  int calls;
} axpy_state;

/* result = scale * x + y on f32 vectors of one length; anything else is an
 * INVALID_ARGUMENT the run reports. */
static xjit_status* axpy(void* user_data, const xjit_ffi_call_frame* frame) {
  axpy_state* state = (axpy_state*)user_data;
  __atomic_add_fetch(&state->calls, 1, __ATOMIC_SEQ_CST);
  if (frame->num_operands != 2 || frame->num_results != 1) {
    return xjit_status_create(XJIT_INVALID_ARGUMENT, "axpy takes two operands");
  }
  const xjit_ffi_buffer* x = &frame->operands[0];
  const xjit_ffi_buffer* y = &frame->operands[1];
  const xjit_ffi_buffer* out = &frame->results[0];
  if (x->type != XJIT_F32 || y->type != XJIT_F32 || out->type != XJIT_F32 || x->rank != 1 ||
      y->rank != 1 || out->rank != 1 || x->dims[0] != y->dims[0] || x->dims[0] != out->dims[0]) {
    return xjit_status_create(XJIT_INVALID_ARGUMENT, "axpy wants f32[n] operands");
  }
  if (strcmp(frame->backend_config, "scaled") != 0) {
    return xjit_status_create(XJIT_FAILED_PRECONDITION, "axpy wants backend_config=scaled");
  }
  const float* xs = (const float*)x->data;
  const float* ys = (const float*)y->data;
  float* os = (float*)out->data;
  for (int64_t i = 0; i < x->dims[0]; ++i) os[i] = state->scale * xs[i] + ys[i];
  return NULL;
}

static const char* kAxpyModule =
    "HloModule ffi\n"
    "ENTRY e {\n"
    "  x = f32[4] parameter(0)\n"
    "  y = f32[4] parameter(1)\n"
    "  c = f32[4] custom-call(x, y), custom_call_target=\"capi_axpy\", backend_config=\"scaled\"\n"
    "  ROOT n = f32[4] negate(c)\n"
    "}\n";

static const char* kAxpyWrongType =
    "HloModule ffi\n"
    "ENTRY e {\n"
    "  x = s32[4] parameter(0)\n"
    "  y = s32[4] parameter(1)\n"
    "  ROOT c = f32[4] custom-call(x, y), custom_call_target=\"capi_axpy\", backend_config=\"scaled\"\n"
    "}\n";

static void test_ffi(void) {
  axpy_state state = {3.0f, 0};
  CHECK_CODE(xjit_register_ffi_custom_call(NULL, axpy, &state), XJIT_INVALID_ARGUMENT, NULL);
  CHECK_CODE(xjit_register_ffi_custom_call("x", NULL, &state), XJIT_INVALID_ARGUMENT, NULL);
  CHECK_OK(xjit_register_ffi_custom_call("capi_axpy", axpy, &state));
  xjit_module* module = parse(kAxpyModule);
  const float x[4] = {1, 2, 3, 4};
  const float y[4] = {0.5f, -1, 10, 0};
  const float expected[4] = {-3.5f, -5, -19, -12};
  for (int backend = 0; backend < 2; ++backend) {
    xjit_executable* exe = compile(module, (xjit_backend)backend);
    if (exe == NULL) continue;
    float out[4] = {0};
    const void* args[2] = {x, y};
    const size_t arg_sizes[2] = {sizeof x, sizeof y};
    void* results[1] = {out};
    const size_t result_sizes[1] = {sizeof out};
    const int before = state.calls;
    CHECK_OK(xjit_execute(exe, args, arg_sizes, 2, results, result_sizes, 1));
    CHECK(memcmp(out, expected, sizeof out) == 0);
    CHECK(state.calls == before + 1);
    xjit_executable_free(exe);
  }
  xjit_module_free(module);

  /* The handler's error fails the run with its code and message. */
  module = parse(kAxpyWrongType);
  for (int backend = 0; backend < 2; ++backend) {
    xjit_executable* exe = compile(module, (xjit_backend)backend);
    if (exe == NULL) continue;
    const int xi[4] = {1, 2, 3, 4};
    float out[4];
    const void* args[2] = {xi, xi};
    const size_t arg_sizes[2] = {sizeof xi, sizeof xi};
    void* results[1] = {out};
    const size_t result_sizes[1] = {sizeof out};
    CHECK_CODE(xjit_execute(exe, args, arg_sizes, 2, results, result_sizes, 1),
               XJIT_INVALID_ARGUMENT, "axpy wants f32[n] operands");
    xjit_executable_free(exe);
  }
  xjit_module_free(module);

  /* Unregistered: the JIT compiled before keeps its handler; a new compile
   * reports the unknown target when it runs. */
  module = parse(kAxpyModule);
  xjit_executable* kept = compile(module, XJIT_BACKEND_JIT);
  CHECK_OK(xjit_unregister_ffi_custom_call("capi_axpy"));
  CHECK_CODE(xjit_unregister_ffi_custom_call("capi_axpy"), XJIT_NOT_FOUND, NULL);
  xjit_executable* fresh = compile(module, XJIT_BACKEND_JIT);
  float out[4];
  const void* args[2] = {x, y};
  const size_t arg_sizes[2] = {sizeof x, sizeof y};
  void* results[1] = {out};
  const size_t result_sizes[1] = {sizeof out};
  if (kept != NULL) {
    CHECK_OK(xjit_execute(kept, args, arg_sizes, 2, results, result_sizes, 1));
    CHECK(memcmp(out, expected, sizeof out) == 0);
  }
  if (fresh != NULL) {
    CHECK_CODE(xjit_execute(fresh, args, arg_sizes, 2, results, result_sizes, 1),
               XJIT_NOT_FOUND, "not registered");
  }
  xjit_executable_free(kept);
  xjit_executable_free(fresh);
  xjit_module_free(module);
}

/* ---- Replicated execution ---- */

/* Each replica adds its id to x; the sum over replicas {0,2} and {1,3}, and
 * every replica's value gathered in replica order. */
static const char* kReplicated =
    "HloModule r, replica_count=4\n"
    "add {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(a, b)\n"
    "}\n"
    "ENTRY e {\n"
    "  x = f32[2] parameter(0)\n"
    "  id = u32[] replica-id()\n"
    "  f = f32[] convert(id)\n"
    "  b = f32[2] broadcast(f), dimensions={}\n"
    "  y = f32[2] add(x, b)\n"
    "  s = f32[2] all-reduce(y), replica_groups={{0,2},{1,3}}, to_apply=add\n"
    "  g = f32[8] all-gather(y), dimensions={0}, replica_groups={}\n"
    "  ROOT t = (f32[2], f32[8]) tuple(s, g)\n"
    "}\n";

/* xjit_register_ffi_custom_call_with_release: a JIT executable compiled
 * while the handler was registered keeps using its user_data after the
 * name is unregistered; the release callback runs once, when the
 * registration is gone and the last such executable is freed. */
static int released_states = 0;
static void release_state(void* user_data) {
  ++released_states;
  free(user_data);
}

static void test_ffi_release(void) {
  axpy_state* state = (axpy_state*)malloc(sizeof(axpy_state));
  CHECK(state != NULL);
  state->scale = 3.0f;
  state->calls = 0;
  CHECK_OK(xjit_register_ffi_custom_call_with_release("capi_axpy_owned", axpy, state,
                                                      release_state));
  xjit_module* module = parse(
      "HloModule ffi_owned\n"
      "ENTRY e {\n"
      "  x = f32[4] parameter(0)\n"
      "  y = f32[4] parameter(1)\n"
      "  ROOT c = f32[4] custom-call(x, y), custom_call_target=\"capi_axpy_owned\", "
      "backend_config=\"scaled\"\n"
      "}\n");
  xjit_executable* exe = compile(module, XJIT_BACKEND_JIT);
  CHECK(exe != NULL);
  CHECK_OK(xjit_unregister_ffi_custom_call("capi_axpy_owned"));
  CHECK(released_states == 0); /* the executable still holds it */
  const float x[4] = {1, 2, 3, 4};
  const float y[4] = {0.5f, -1, 10, 0};
  const float expected[4] = {3.5f, 5, 19, 12};
  float out[4] = {0};
  const void* args[2] = {x, y};
  const size_t arg_sizes[2] = {sizeof x, sizeof y};
  void* results[1] = {out};
  const size_t result_sizes[1] = {sizeof out};
  CHECK_OK(xjit_execute(exe, args, arg_sizes, 2, results, result_sizes, 1));
  CHECK(memcmp(out, expected, sizeof out) == 0);
  CHECK(released_states == 0);
  xjit_executable_free(exe);
  CHECK(released_states == 1);
  xjit_module_free(module);

  /* Replacing a registration nothing compiled against releases it at once;
   * a NULL release is allowed. */
  axpy_state* second = (axpy_state*)malloc(sizeof(axpy_state));
  CHECK(second != NULL);
  CHECK_OK(xjit_register_ffi_custom_call_with_release("capi_axpy_owned", axpy, second,
                                                      release_state));
  axpy_state unowned = {1.0f, 0};
  CHECK_OK(xjit_register_ffi_custom_call_with_release("capi_axpy_owned", axpy, &unowned, NULL));
  CHECK(released_states == 2);
  CHECK_OK(xjit_unregister_ffi_custom_call("capi_axpy_owned"));
  CHECK(released_states == 2);
}

static void test_replicated(void) {
  xjit_module* module = parse(kReplicated);
  float x[4][2] = {{1, 2}, {10, 20}, {100, 200}, {1000, 2000}};
  float sums[2][4][2], gathers[2][4][8];
  for (int backend = 0; backend < 2; ++backend) {
    xjit_executable* exe = compile(module, (xjit_backend)backend);
    if (exe == NULL) continue;
    const void* replica_args[4][1];
    void* replica_results[4][2];
    const void* const* args[4];
    void* const* results[4];
    for (int r = 0; r < 4; ++r) {
      replica_args[r][0] = x[r];
      replica_results[r][0] = sums[backend][r];
      replica_results[r][1] = gathers[backend][r];
      args[r] = replica_args[r];
      results[r] = replica_results[r];
    }
    const size_t arg_sizes[1] = {sizeof x[0]};
    const size_t result_sizes[2] = {sizeof sums[0][0], sizeof gathers[0][0]};
    CHECK_OK(xjit_execute_replicated(exe, 4, args, arg_sizes, 1, results, result_sizes, 2));
    /* Replica 0: (1+0) + (100+2) = 103, (2+0) + (200+2) = 204. */
    CHECK(sums[backend][0][0] == 103 && sums[backend][0][1] == 204);
    CHECK(sums[backend][2][0] == 103 && sums[backend][2][1] == 204);
    /* Replica 1: (10+1) + (1000+3) = 1014, (20+1) + (2000+3) = 2024. */
    CHECK(sums[backend][1][0] == 1014 && sums[backend][3][1] == 2024);
    const float gathered[8] = {1, 2, 11, 21, 102, 202, 1003, 2003};
    for (int r = 0; r < 4; ++r) CHECK(memcmp(gathers[backend][r], gathered, sizeof gathered) == 0);
    /* A replica count the module does not declare. */
    CHECK_CODE(xjit_execute_replicated(exe, 2, args, arg_sizes, 1, results, result_sizes, 2),
               XJIT_INVALID_ARGUMENT, "replica_count=4");
    CHECK_CODE(xjit_execute_replicated(exe, 0, args, arg_sizes, 1, results, result_sizes, 2),
               XJIT_INVALID_ARGUMENT, NULL);
    CHECK_CODE(xjit_execute_replicated(NULL, 4, args, arg_sizes, 1, results, result_sizes, 2),
               XJIT_INVALID_ARGUMENT, NULL);
    xjit_executable_free(exe);
  }
  CHECK(memcmp(sums[0], sums[1], sizeof sums[0]) == 0);
  CHECK(memcmp(gathers[0], gathers[1], sizeof gathers[0]) == 0);
  xjit_module_free(module);
}

int main(void) {
  test_ffi();
  test_ffi_release();
  test_replicated();
  fprintf(stderr, "%d checks, %d failed\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
