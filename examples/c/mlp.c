/* A classifier (2-layer MLP with softmax) built through the C API, compiled
 * with the JIT, run, and checked against a plain C computation.
 *
 * Build and run against an installed xjit (docs/library.md):
 *   cc examples/c/mlp.c $(pkg-config --cflags --libs xjit) -o mlp && ./mlp
 * It prints the probabilities and "mlp: OK", or the first error and exits 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <xjit/xjit.h>

enum { kBatch = 4, kIn = 8, kHidden = 16, kOut = 3 };

static int Fail(xjit_status* status, const char* what) {
  fprintf(stderr, "mlp: %s: %s: %s\n", what, xjit_code_name(xjit_status_code(status)),
          xjit_status_message(status));
  xjit_status_free(status);
  return 1;
}

/* Deterministic values in [-1, 1). */
static void Fill(float* values, int n, unsigned* state) {
  for (int i = 0; i < n; ++i) {
    *state = *state * 1103515245u + 12345u;
    values[i] = (float)((*state >> 8) & 0xffff) / 32768.0f - 1.0f;
  }
}

/* e^x for the plain C check, without libm (the example links with nothing
 * but pkg-config's flags): halve x until small, a Taylor series, square back. */
static double Exp(double x) {
  int halvings = 0;
  while (x > 0.01 || x < -0.01) {
    x /= 2;
    ++halvings;
  }
  double term = 1, sum = 1;
  for (int k = 1; k < 10; ++k) {
    term *= x / k;
    sum += term;
  }
  while (halvings-- > 0) sum *= sum;
  return sum;
}

static double Abs(double x) { return x < 0 ? -x : x; }

static xjit_op Constant(xjit_builder* b, const float* data, const int64_t* dims, int rank) {
  xjit_shape* shape = NULL;
  xjit_status* status = xjit_shape_create_array(XJIT_F32, dims, rank, NULL, &shape);
  if (status != NULL) {
    xjit_status_free(status);
    return XJIT_INVALID_OP; /* The builder reports the first error later. */
  }
  xjit_op op = xjit_constant(b, shape, data, (size_t)xjit_shape_byte_size(shape));
  xjit_shape_free(shape);
  return op;
}

/* dense(x) = x . w + bias, the bias broadcast along the rows. */
static xjit_op Dense(xjit_builder* b, xjit_op x, const float* w, const float* bias, int64_t in,
                     int64_t out) {
  const int64_t w_dims[2] = {in, out}, bias_dims[1] = {out}, row_dim[1] = {1};
  xjit_op product = xjit_dot(b, x, Constant(b, w, w_dims, 2));
  return xjit_add(b, product, Constant(b, bias, bias_dims, 1), row_dim, 1);
}

int main(void) {
  unsigned state = 1;
  static float x[kBatch * kIn], w1[kIn * kHidden], b1[kHidden], w2[kHidden * kOut], b2[kOut];
  Fill(x, kBatch * kIn, &state);
  Fill(w1, kIn * kHidden, &state);
  Fill(b1, kHidden, &state);
  Fill(w2, kHidden * kOut, &state);
  Fill(b2, kOut, &state);

  /* probs = softmax(relu(x . w1 + b1) . w2 + b2) over each row. */
  xjit_builder* b = xjit_builder_create("mlp");
  const int64_t x_dims[2] = {kBatch, kIn};
  xjit_shape* x_shape = NULL;
  xjit_status* status = xjit_shape_create_array(XJIT_F32, x_dims, 2, NULL, &x_shape);
  if (status != NULL) return Fail(status, "shape");
  xjit_op input = xjit_parameter(b, 0, x_shape, "x");
  xjit_shape_free(x_shape);
  xjit_op hidden = xjit_max(b, Dense(b, input, w1, b1, kIn, kHidden), xjit_zero(b, XJIT_F32),
                            NULL, 0);
  xjit_op logits = Dense(b, hidden, w2, b2, kHidden, kOut);
  const int64_t row_dims[1] = {1}, batch_dim[1] = {0};
  xjit_op lowest = xjit_min_value(b, XJIT_F32), zero = xjit_zero(b, XJIT_F32);
  xjit_op row_max = xjit_reduce(b, &logits, &lowest, 1,
                                xjit_scalar_computation_create(b, XJIT_SCALAR_MAX, XJIT_F32),
                                row_dims, 1);
  xjit_op e = xjit_exp(b, xjit_sub(b, logits, row_max, batch_dim, 1));
  xjit_op row_sum = xjit_reduce(b, &e, &zero, 1,
                                xjit_scalar_computation_create(b, XJIT_SCALAR_ADD, XJIT_F32),
                                row_dims, 1);
  xjit_op probs = xjit_div(b, e, row_sum, batch_dim, 1);
  xjit_module* module = NULL;
  status = xjit_builder_build(b, probs, &module);
  xjit_builder_free(b);
  if (status != NULL) return Fail(status, "build");

  xjit_executable* exe = NULL;
  status = xjit_compile(module, NULL, &exe); /* NULL options: JIT, best ISA, 1 thread. */
  xjit_module_free(module);
  if (status != NULL) return Fail(status, "compile");

  float result[kBatch * kOut];
  const void* args[1] = {x};
  const size_t arg_sizes[1] = {sizeof x};
  void* results[1] = {result};
  const size_t result_sizes[1] = {sizeof result};
  status = xjit_execute(exe, args, arg_sizes, 1, results, result_sizes, 1);
  xjit_executable_free(exe);
  if (status != NULL) return Fail(status, "execute");

  /* The same computation in plain C (double accumulation). */
  int mismatches = 0;
  for (int r = 0; r < kBatch; ++r) {
    double h[kHidden], l[kOut], top = -1e300, sum = 0;
    for (int j = 0; j < kHidden; ++j) {
      double acc = b1[j];
      for (int k = 0; k < kIn; ++k) acc += (double)x[r * kIn + k] * w1[k * kHidden + j];
      h[j] = acc > 0 ? acc : 0;
    }
    for (int j = 0; j < kOut; ++j) {
      double acc = b2[j];
      for (int k = 0; k < kHidden; ++k) acc += h[k] * w2[k * kOut + j];
      l[j] = acc;
      if (acc > top) top = acc;
    }
    for (int j = 0; j < kOut; ++j) sum += Exp(l[j] - top);
    for (int j = 0; j < kOut; ++j) {
      const double expected = Exp(l[j] - top) / sum;
      const float got = result[r * kOut + j];
      printf("%s%.6f", j == 0 ? "" : " ", got);
      if (!(Abs(got - expected) <= 1e-5 + 1e-4 * Abs(expected))) {
        fprintf(stderr, "mlp: row %d column %d: xjit %.9g, plain C %.9g\n", r, j, got, expected);
        ++mismatches;
      }
    }
    printf("\n");
  }
  if (mismatches != 0) {
    fprintf(stderr, "mlp: %d mismatches\n", mismatches);
    return 1;
  }
  printf("mlp: OK\n");
  return 0;
}
