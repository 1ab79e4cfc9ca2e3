/*===- strider.h - The Strider C API ------------------------------*- C -*-===*
 *
 * Load a model (an ONNX file, textual IR, or a strider-compile output
 * directory), create sessions on it, and run them on DLPack tensors in
 * caller-owned memory. C99; usable from C and C++. Link `libstrider`
 * (CMake: find_package(Strider CONFIG) and Strider::strider); nothing
 * else is needed.
 *
 * Conventions:
 * - Every function that can fail returns a strider_status; STRIDER_OK (0)
 *   is success. On failure strider_last_error() returns a one-line message
 *   for the calling thread, valid until its next failing call.
 * - Objects are freed by their *_free function; freeing NULL is a no-op.
 *   A model must outlive its sessions.
 * - Tensors are given and returned in the model's input and output order
 *   (strider_model_input_info / strider_model_output_info). A tensor's
 *   `strides` (in elements; NULL: compact row-major) say how the caller
 *   laid it out; any strides are accepted.
 * - Thread safety: a model is immutable once loaded; any number of
 *   threads may create sessions on it and read its info. Any number of
 *   threads may prepare and run one session at once (no lock is held
 *   through a run; on the cpu backend each run has an activation arena of
 *   its own, and runs of the cuda backend's programs take turns). A
 *   session's prepared state (strider_session_output_info) is per
 *   thread. Sessions of one model share its constant data and packed
 *   weights. Creating, freeing and running a session must not overlap
 *   its strider_session_free.
 *
 * See docs/Embedding.md for a complete example.
 *
 *===----------------------------------------------------------------------===*/

#ifndef STRIDER_STRIDER_H
#define STRIDER_STRIDER_H

#include <dlpack/dlpack.h>

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define STRIDER_API __attribute__((visibility("default")))
#else
#define STRIDER_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this header's API; strider_api_version() returns the one of
 * the library linked. */
#define STRIDER_API_VERSION 1

typedef int strider_status;

enum {
  STRIDER_OK = 0,
  /* A null pointer, an index out of range, a bad option value. */
  STRIDER_ERROR_INVALID_ARGUMENT = 1,
  /* The model file cannot be read, is malformed, or uses what Strider
   * does not support. */
  STRIDER_ERROR_MODEL = 2,
  /* A tensor given to a run: wrong count, element type, shape, device,
   * or no data. */
  STRIDER_ERROR_TENSOR = 3,
  /* The model could not be specialized, optimized, lowered or run for
   * the given inputs. */
  STRIDER_ERROR_RUN = 4,
  /* A backend or device this build or machine does not have. */
  STRIDER_ERROR_UNSUPPORTED = 5,
  /* Out of memory, or a bug (please report it). */
  STRIDER_ERROR_INTERNAL = 6
};

/* DLPack 0.6 has no boolean type code; Strider uses the one later DLPack
 * versions define (kDLBool = 6, 8 bits). */
#define STRIDER_DL_BOOL 6

typedef struct strider_model strider_model;
typedef struct strider_session strider_session;
typedef struct strider_session_options strider_session_options;

/* An input or output of a model or session. Pointers are owned by the
 * object queried and stay valid as long as it does (for a session: until
 * the calling thread's next prepare or run of it). */
typedef struct strider_tensor_info {
  const char *name;
  /* Element type; bits == 0 when the model does not say. */
  DLDataType dtype;
  /* Rank; -1 when the model does not say (shape and the arrays below are
   * then NULL). */
  int32_t ndim;
  /* Sizes; -1 for a symbolic dim. */
  const int64_t *shape;
  /* Per dim: the symbol of a symbolic dim (bind it with
   * strider_session_options_set_dim or through the shapes of the inputs
   * of a run; an anonymous dim of input x at axis 2 is "x:2"), NULL for
   * a static one. */
  const char *const *dim_names;
  /* The memory order the model reads or writes without converting:
   * logical dims from outermost to innermost (0..ndim-1 is row-major;
   * 0, 2, 3, 1 is NHWC for a 4-D tensor). */
  const int32_t *dim_order;
  /* The same as a name: "nchw", "nhwc", "[0, 2, 1]"; "" for rank < 3
   * row-major. */
  const char *layout;
} strider_tensor_info;

/* The library's version ("0.1.0") and API version. */
STRIDER_API const char *strider_version(void);
STRIDER_API int strider_api_version(void);

/* The message of this thread's last failure ("" if none). */
STRIDER_API const char *strider_last_error(void);

/* Models ------------------------------------------------------------------*/

/* Loads a model: an ONNX file (compiled for this machine at each new set
 * of input shapes), a .lir file, or a strider-compile output directory. */
STRIDER_API strider_status strider_model_load(const char *path,
                                              strider_model **model);
STRIDER_API void strider_model_free(strider_model *model);

/* Inputs a run feeds (graph inputs without default data) and outputs. */
STRIDER_API size_t strider_model_num_inputs(const strider_model *model);
STRIDER_API size_t strider_model_num_outputs(const strider_model *model);
STRIDER_API strider_status strider_model_input_info(const strider_model *model,
                                                    size_t index,
                                                    strider_tensor_info *info);
STRIDER_API strider_status
strider_model_output_info(const strider_model *model, size_t index,
                          strider_tensor_info *info);

/* The sizes dim `axis` of input `index` may take: a static dim its size
 * (min == max); a dynamic dim of a strider-compile artifact compiled with a
 * shape range (--shape x=1x3x48x100..1000) that range, and runs with other
 * sizes fail with STRIDER_ERROR_TENSOR; any other dynamic dim 0..INT64_MAX. */
STRIDER_API strider_status
strider_model_input_dim_range(const strider_model *model, size_t index,
                              int32_t axis, int64_t *min, int64_t *max);

/* Session options ---------------------------------------------------------*/

STRIDER_API strider_status
strider_session_options_create(strider_session_options **options);
STRIDER_API void strider_session_options_free(strider_session_options *options);
/* Threads each kernel splits its work over (default 1). */
STRIDER_API strider_status
strider_session_options_set_threads(strider_session_options *options,
                                    int threads);
/* "cpu" (SIMD kernels; the default), "reference" (the interpreter),
 * "cuda" (an NVIDIA GPU; the build needs nvcc, the machine a GPU, cuDNN 9
 * and cuBLASLt: strider_session_create says STRIDER_ERROR_UNSUPPORTED
 * otherwise) or "cuda-emulated" (the cuda backend's program run on the
 * host, without a GPU: slow, for checking what it computes; the build
 * needs nvcc). */
STRIDER_API strider_status
strider_session_options_set_backend(strider_session_options *options,
                                    const char *backend);
/* Where the session runs: kDLCPU device 0 (the default), or {kDLCUDA, N}
 * for GPU N of the cuda backend. A run's tensors are in host memory
 * (kDLCPU, or kDLCUDAHost pinned memory) on every backend, or, on the
 * cuda backend, all in GPU N's memory ({kDLCUDA, N}: read and written in
 * place by copy kernels, no host copy). */
STRIDER_API strider_status
strider_session_options_set_device(strider_session_options *options,
                                   DLDevice device);
/* What the cuda backend's convolutions and matmuls compute in: "fp32"
 * (the default), "tf32", "fp16" or "bf16" (mixed precision: see
 * docs/CUDABackend.md). Other backends accept "fp32" only. */
STRIDER_API strider_status
strider_session_options_set_precision(strider_session_options *options,
                                      const char *precision);
/* Size of a symbolic dim of the inputs, beyond what fed shapes bind. */
STRIDER_API strider_status
strider_session_options_set_dim(strider_session_options *options,
                                const char *symbol, int64_t size);
/* A tuning table written by strider-compile --tune (read here; its errors
 * are STRIDER_ERROR_INVALID_ARGUMENT): an ONNX model's layouts are costed
 * by its measurements, and the cuda backend runs the cuDNN algorithms it
 * holds. Its target must be the session's (this machine's cpu-* target,
 * or with the cuda backend its GPU's: cuda-sm90 from sm_90 on, else
 * cuda-sm80) and a GPU table's precision the session's:
 * strider_session_create checks. NULL clears it. */
STRIDER_API strider_status
strider_session_options_set_tuning_file(strider_session_options *options,
                                        const char *path);
/* 0: run an ONNX model as imported (no canonicalization or layout
 * assignment); 1 (default): optimize it as strider-compile does. */
STRIDER_API strider_status
strider_session_options_set_optimize(strider_session_options *options,
                                     int optimize);
/* What the session's cache of programs (one per set of input shapes) may
 * keep: the least recently used is evicted while more than max_programs
 * (>= 1; default 64) are cached or the memory they hold of their own (the
 * constants their graphs made for their shapes; the weights are the
 * model's, and a CPU session's programs share one pool of activation
 * arenas) exceeds max_bytes (>= 0; default 1 GiB). The program just built
 * is kept whatever its size. */
STRIDER_API strider_status strider_session_options_set_cache_limits(
    strider_session_options *options, size_t max_programs, int64_t max_bytes);

/* The most one run may allocate on the host, in bytes (a program's
 * activation arena; the reference backend's live tensors; the
 * cuda-emulated backend's device memory); 0 (default): the memory
 * available on the machine when a shape's program is built. A shape whose
 * program needs more fails (STRIDER_ERROR_RUN, from
 * strider_session_run or strider_session_prepare) with a message saying
 * how much it needs, before anything is allocated. */
STRIDER_API strider_status strider_session_options_set_max_memory(
    strider_session_options *options, uint64_t max_bytes);

/* The sizes dim `axis` of input `input` may take, min..max (1 <= min <=
 * max; setting a dim again replaces its range), as strider-compile --shape
 * x=1x3x48x100..1000 records them in an artifact: runs with other sizes
 * fail with STRIDER_ERROR_TENSOR. An ONNX model (optimized) is then
 * optimized once for every shape in the ranges, its layouts costed at
 * their upper ends (its other dynamic dims by size class:
 * strider_session_options_set_optimize_per_shape), so that a new shape
 * is only specialized and lowered. strider_session_create checks that
 * each range names a dynamic dim of an input. */
STRIDER_API strider_status strider_session_options_set_input_range(
    strider_session_options *options, const char *input, int32_t axis,
    int64_t min, int64_t max);

/* How an ONNX model (optimized, with dynamic input dims) is optimized for
 * the shapes it is fed. 0 (the default): once per size class, each
 * dynamic dim's size rounded up to a power of two (a dim with a range:
 * the range's upper end), its layouts costed at the class's sizes; a new
 * shape of a class already optimized is only specialized and lowered
 * (about half the build). 1: each new shape optimized for itself, as
 * strider-compile --shape at that shape does. Either way the program a
 * shape gets depends on that shape only, not on the shapes run before. */
STRIDER_API strider_status strider_session_options_set_optimize_per_shape(
    strider_session_options *options, int per_shape);

/* Sessions ----------------------------------------------------------------*/

/* options NULL: defaults (cpu backend, 1 thread). */
STRIDER_API strider_status
strider_session_create(const strider_model *model,
                       const strider_session_options *options,
                       strider_session **session);
STRIDER_API void strider_session_free(strider_session *session);

/* Specializes the session to the element types and shapes of inputs
 * (their data is not read): symbolic dims are bound, and the program for
 * these shapes is built, or taken from the session's cache (a thread that
 * wants a program another thread is building waits for that build).
 * Afterwards strider_session_output_info, called on the same thread,
 * gives the outputs' static shapes, to allocate them; each thread has
 * its own last prepare. strider_session_run does this itself. */
STRIDER_API strider_status strider_session_prepare(strider_session *session,
                                                   const DLTensor *inputs,
                                                   size_t num_inputs);
STRIDER_API strider_status
strider_session_output_info(const strider_session *session, size_t index,
                            strider_tensor_info *info);

/* Runs the model on inputs (one per model input, in order) and writes
 * outputs (one per model output, in order) into the caller's memory,
 * whose shapes and element types must be those of
 * strider_session_output_info for these inputs. Inputs and outputs are
 * all in host memory, or (cuda backend) all in the session's GPU memory;
 * any strides. The run has finished when this returns. */
STRIDER_API strider_status strider_session_run(strider_session *session,
                                               const DLTensor *inputs,
                                               size_t num_inputs,
                                               DLTensor *outputs,
                                               size_t num_outputs);

/* How many programs the session has built: one per distinct set of input
 * shapes it ran, again after an eviction from its cache (which keeps up
 * to 64 programs, holding at most 1 GiB of their own). */
STRIDER_API size_t strider_session_num_programs_built(
    const strider_session *session);

/* How many runs reused a program an earlier run of the session had run
 * (cache hits; a run of shapes never run before, or evicted since, is a
 * miss and builds a program: strider_session_num_programs_built). */
STRIDER_API size_t
strider_session_num_cache_hits(const strider_session *session);

/* Seconds the session has spent building programs (specializing,
 * optimizing and lowering the model for new input shapes), in all. */
STRIDER_API double
strider_session_build_seconds(const strider_session *session);

/* How many size classes the session has optimized the model for
 * (strider_session_options_set_optimize_per_shape; 0 when it optimizes
 * shape by shape). */
STRIDER_API size_t
strider_session_num_size_classes(const strider_session *session);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STRIDER_STRIDER_H */
