/* strider-embed-bench: time a model through the C API, as an embedding
 * program would run it.
 *
 *   strider-embed-bench MODEL [--threads N] [--runs N] [--warmup N]
 *
 * Every input must be f32 with a known rank; symbolic dims take 1. Prints
 * one JSON object: the time strider_model_load took, the time of the first
 * strider_session_prepare (specialization and lowering; for an artifact,
 * without repacking), the median and minimum run latency, and the peak
 * resident set size of the process. */
#define _POSIX_C_SOURCE 200809L
#include <strider/strider.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int fail(const char *what) {
  fprintf(stderr, "strider-embed-bench: %s: %s\n", what, strider_last_error());
  return 1;
}

int main(int argc, char **argv) {
  const char *path = NULL;
  int threads = 1, runs = 20, warmup = 3, i;
  for (i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc)
      threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
      warmup = atoi(argv[++i]);
    else if (argv[i][0] != '-' && !path)
      path = argv[i];
    else {
      fprintf(stderr, "usage: strider-embed-bench MODEL [--threads N] "
                      "[--runs N] [--warmup N]\n");
      return 2;
    }
  }
  if (!path || runs < 1) {
    fprintf(stderr, "usage: strider-embed-bench MODEL [--threads N] "
                    "[--runs N] [--warmup N]\n");
    return 2;
  }

  double t0 = now_ms();
  strider_model *model = NULL;
  if (strider_model_load(path, &model) != STRIDER_OK)
    return fail("load");
  double load_ms = now_ms() - t0;

  strider_session_options *opts = NULL;
  strider_session *session = NULL;
  if (strider_session_options_create(&opts) != STRIDER_OK ||
      strider_session_options_set_threads(opts, threads) != STRIDER_OK ||
      strider_session_create(model, opts, &session) != STRIDER_OK)
    return fail("session");

  size_t n_in = strider_model_num_inputs(model);
  size_t n_out = strider_model_num_outputs(model);
  DLTensor *in = calloc(n_in, sizeof(DLTensor));
  DLTensor *out = calloc(n_out, sizeof(DLTensor));
  int64_t (*in_shapes)[8] = calloc(n_in, sizeof *in_shapes);
  int64_t (*out_shapes)[8] = calloc(n_out, sizeof *out_shapes);
  if ((n_in && (!in || !in_shapes)) || (n_out && (!out || !out_shapes)))
    return 1;
  for (size_t k = 0; k < n_in; ++k) {
    strider_tensor_info info;
    if (strider_model_input_info(model, k, &info) != STRIDER_OK)
      return fail("input info");
    if (info.ndim < 0 || info.ndim > 8 || info.dtype.code != kDLFloat ||
        info.dtype.bits != 32) {
      fprintf(stderr, "strider-embed-bench: input '%s' is not f32 of rank "
                      "<= 8\n", info.name);
      return 1;
    }
    size_t count = 1;
    for (int d = 0; d < info.ndim; ++d) {
      in_shapes[k][d] = info.shape[d] >= 0 ? info.shape[d] : 1;
      count *= (size_t)in_shapes[k][d];
    }
    float *data = malloc(count * sizeof(float) + 1);
    if (!data)
      return 1;
    for (size_t e = 0; e < count; ++e)
      data[e] = (float)((e * 2654435761u) % 2001) / 1000.0f - 1.0f;
    in[k].data = data;
    in[k].device.device_type = kDLCPU;
    in[k].ndim = info.ndim;
    in[k].dtype = info.dtype;
    in[k].shape = in_shapes[k];
  }

  t0 = now_ms();
  if (strider_session_prepare(session, in, n_in) != STRIDER_OK)
    return fail("prepare");
  double prepare_ms = now_ms() - t0;
  for (size_t k = 0; k < n_out; ++k) {
    strider_tensor_info info;
    if (strider_session_output_info(session, k, &info) != STRIDER_OK)
      return fail("output info");
    size_t count = 1;
    for (int d = 0; d < info.ndim && d < 8; ++d) {
      out_shapes[k][d] = info.shape[d];
      count *= (size_t)info.shape[d];
    }
    out[k].data = malloc(count * (info.dtype.bits / 8) + 1);
    out[k].device.device_type = kDLCPU;
    out[k].ndim = info.ndim;
    out[k].dtype = info.dtype;
    out[k].shape = out_shapes[k];
  }

  double *times = malloc(sizeof(double) * (size_t)runs);
  if (!times)
    return 1;
  for (i = 0; i < warmup + runs; ++i) {
    t0 = now_ms();
    if (strider_session_run(session, in, n_in, out, n_out) != STRIDER_OK)
      return fail("run");
    if (i >= warmup)
      times[i - warmup] = now_ms() - t0;
  }
  qsort(times, (size_t)runs, sizeof(double), by_value);
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  printf("{\"load_ms\": %.3f, \"prepare_ms\": %.3f, \"median_ms\": %.3f, "
         "\"min_ms\": %.3f, \"rss_mb\": %.1f, \"programs\": %zu}\n",
         load_ms, prepare_ms, times[runs / 2], times[0],
         usage.ru_maxrss / 1024.0,
         strider_session_num_programs_built(session));
  for (size_t k = 0; k < n_in; ++k)
    free(in[k].data);
  for (size_t k = 0; k < n_out; ++k)
    free(out[k].data);
  free(in);
  free(out);
  free(in_shapes);
  free(out_shapes);
  free(times);
  strider_session_free(session);
  strider_session_options_free(opts);
  strider_model_free(model);
  return 0;
}
