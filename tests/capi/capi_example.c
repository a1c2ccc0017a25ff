/* capi_example.c: the example of docs/c_api.md, kept compiling and correct
 * (the check of `out` is the only addition). Compiled as C. */
#include <stdio.h>

#include "xjit.h"

int main(void) {
  /* y = x * 2 + 1 over f32[4] */
  int64_t dims[1] = {4};
  xjit_shape* shape = NULL;
  xjit_status* st = xjit_shape_create_array(XJIT_F32, dims, 1, NULL, &shape);
  if (st) {
    fprintf(stderr, "%s\n", xjit_status_message(st));
    return 1;
  }

  xjit_builder* b = xjit_builder_create("example");
  xjit_op x = xjit_parameter(b, 0, shape, "x");
  xjit_op y = xjit_add(b, xjit_mul(b, x, xjit_constant_f32(b, 2), NULL, 0), xjit_constant_f32(b, 1),
                       NULL, 0);
  xjit_module* module = NULL;
  st = xjit_builder_build(b, y, &module); /* reports the first builder error */
  xjit_builder_free(b);
  if (st) {
    fprintf(stderr, "%s\n", xjit_status_message(st));
    return 1;
  }

  xjit_compile_options* options = xjit_compile_options_create();
  xjit_compile_options_set_isa(options, "auto");
  xjit_executable* exe = NULL;
  st = xjit_compile(module, options, &exe);
  xjit_compile_options_free(options);
  xjit_module_free(module);
  if (st) {
    fprintf(stderr, "%s\n", xjit_status_message(st));
    return 1;
  }

  float in[4] = {1, 2, 3, 4}, out[4];
  const void* args[1] = {in};
  size_t arg_sizes[1] = {sizeof in};
  void* results[1] = {out};
  size_t result_sizes[1] = {sizeof out};
  st = xjit_execute(exe, args, arg_sizes, 1, results, result_sizes, 1);
  if (st) {
    fprintf(stderr, "%s\n", xjit_status_message(st));
    return 1;
  }
  printf("%g %g %g %g\n", out[0], out[1], out[2], out[3]); /* 3 5 7 9 */
  if (out[0] != 3 || out[1] != 5 || out[2] != 7 || out[3] != 9) return 1;

  xjit_executable_free(exe);
  xjit_shape_free(shape);
  return 0;
}
