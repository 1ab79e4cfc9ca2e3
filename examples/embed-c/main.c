/* classify: run an image classifier through Strider's C API.
 *
 *   classify MODEL IMAGE.ppm [TOP]
 *
 * MODEL is an ONNX file or a strider-compile output directory whose one
 * input is an f32 image batch (N x 3 x H x W, N symbolic or 1). IMAGE is a
 * binary PPM (P6, 8-bit) of H x W pixels. Pixels are scaled to [0, 1] and
 * fed in place as the interleaved (NHWC) buffer they are: the strides say
 * so, and Strider reads them in whatever order the model wants. Prints the
 * TOP (5) classes with their softmax probabilities. */
#include <strider/strider.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what) {
  fprintf(stderr, "classify: %s: %s\n", what, strider_last_error());
  return 1;
}

/* Reads a P6 PPM with maxval 255 into *pixels (RGB interleaved). */
static int read_ppm(const char *path, int *width, int *height,
                    unsigned char **pixels) {
  FILE *f = fopen(path, "rb");
  int maxval = 0;
  size_t bytes;
  if (!f) {
    fprintf(stderr, "classify: %s: cannot open\n", path);
    return 0;
  }
  if (fscanf(f, "P6 %d %d %d", width, height, &maxval) != 3 ||
      maxval != 255 || *width <= 0 || *height <= 0 || fgetc(f) == EOF) {
    fprintf(stderr, "classify: %s: not a binary 8-bit PPM (P6)\n", path);
    fclose(f);
    return 0;
  }
  bytes = (size_t)*width * (size_t)*height * 3;
  *pixels = malloc(bytes);
  if (!*pixels || fread(*pixels, 1, bytes, f) != bytes) {
    fprintf(stderr, "classify: %s: truncated\n", path);
    fclose(f);
    return 0;
  }
  fclose(f);
  return 1;
}

int main(int argc, char **argv) {
  strider_model *model = NULL;
  strider_session *session = NULL;
  strider_tensor_info in, out;
  DLTensor input, output;
  int64_t in_shape[4], in_strides[4], out_shape[8];
  int width, height, top, i, k, status = 1;
  unsigned char *pixels = NULL;
  float *image = NULL, *scores = NULL;
  int64_t classes = 1;

  if (argc < 3) {
    fprintf(stderr, "usage: classify MODEL IMAGE.ppm [TOP]\n");
    return 2;
  }
  top = argc > 3 ? atoi(argv[3]) : 5;
  if (!read_ppm(argv[2], &width, &height, &pixels))
    return 1;
  printf("strider %s\n", strider_version());

  if (strider_model_load(argv[1], &model) != STRIDER_OK) {
    status = fail(argv[1]);
    goto done;
  }
  if (strider_model_num_inputs(model) != 1 ||
      strider_model_num_outputs(model) != 1 ||
      strider_model_input_info(model, 0, &in) != STRIDER_OK ||
      in.ndim != 4 || in.dtype.code != kDLFloat || in.dtype.bits != 32) {
    fprintf(stderr, "classify: %s: expected one f32 input of rank 4 and "
                    "one output\n", argv[1]);
    goto done;
  }
  if ((in.shape[2] >= 0 && in.shape[2] != height) ||
      (in.shape[3] >= 0 && in.shape[3] != width) ||
      (in.shape[1] >= 0 && in.shape[1] != 3)) {
    fprintf(stderr, "classify: the model takes %lld x %lld images with 3 "
                    "channels, %s is %d x %d\n", (long long)in.shape[2],
            (long long)in.shape[3], argv[2], height, width);
    goto done;
  }
  if (strider_session_create(model, NULL, &session) != STRIDER_OK) {
    status = fail("session");
    goto done;
  }

  /* The image as the PPM stores it: logical N x C x H x W, laid out
   * H x W x C (strides in elements). */
  image = malloc(sizeof(float) * (size_t)width * (size_t)height * 3);
  if (!image)
    goto done;
  for (i = 0; i < width * height * 3; ++i)
    image[i] = pixels[i] / 255.0f;
  in_shape[0] = 1;
  in_shape[1] = 3;
  in_shape[2] = height;
  in_shape[3] = width;
  in_strides[0] = (int64_t)height * width * 3;
  in_strides[1] = 1;
  in_strides[2] = (int64_t)width * 3;
  in_strides[3] = 3;
  memset(&input, 0, sizeof input);
  input.data = image;
  input.device.device_type = kDLCPU;
  input.ndim = 4;
  input.dtype = in.dtype;
  input.shape = in_shape;
  input.strides = in_strides;

  /* Output shapes depend on the input's: prepare, then ask. */
  if (strider_session_prepare(session, &input, 1) != STRIDER_OK ||
      strider_session_output_info(session, 0, &out) != STRIDER_OK) {
    status = fail("prepare");
    goto done;
  }
  if (out.ndim < 1 || out.ndim > 8 || out.dtype.code != kDLFloat ||
      out.dtype.bits != 32) {
    fprintf(stderr, "classify: expected an f32 output\n");
    goto done;
  }
  for (i = 0; i < out.ndim; ++i) {
    out_shape[i] = out.shape[i];
    classes *= out.shape[i];
  }
  scores = malloc(sizeof(float) * (size_t)classes);
  if (!scores)
    goto done;
  memset(&output, 0, sizeof output);
  output.data = scores;
  output.device.device_type = kDLCPU;
  output.ndim = out.ndim;
  output.dtype = out.dtype;
  output.shape = out_shape;
  if (strider_session_run(session, &input, 1, &output, 1) != STRIDER_OK) {
    status = fail("run");
    goto done;
  }

  {
    /* Softmax over all scores, then the TOP largest. */
    double max = scores[0], sum = 0;
    for (i = 1; i < classes; ++i)
      if (scores[i] > max)
        max = scores[i];
    for (i = 0; i < classes; ++i)
      sum += exp(scores[i] - max);
    printf("output '%s': %lld scores\n", out.name, (long long)classes);
    for (k = 0; k < top && k < classes; ++k) {
      int best = -1;
      for (i = 0; i < classes; ++i)
        if (!isnan(scores[i]) && (best < 0 || scores[i] > scores[best]))
          best = i;
      if (best < 0)
        break;
      printf("class %d: %.4f\n", best, exp(scores[best] - max) / sum);
      scores[best] = NAN;
    }
  }
  status = 0;

done:
  free(scores);
  free(image);
  free(pixels);
  strider_session_free(session);
  strider_model_free(model);
  return status;
}
