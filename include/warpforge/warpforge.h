/* WarpForge C API: open a model package, query its tensors, run it on host buffers.
 *
 *   wf_session_options options;
 *   wf_session_options_init(&options);
 *   options.device = "cuda:0";                       (or "cpu", the default)
 *   wf_session* session = NULL;
 *   if (wf_session_open("out/resnet18", &options, &session) != WF_OK) {
 *     fprintf(stderr, "%s\n", wf_last_error_message());
 *     return 1;
 *   }
 *   wf_input x = {"x", 0, image, sizeof image, NULL, 0};   (NULL shape: the manifest's)
 *   wf_result* result = NULL;
 *   if (wf_session_run(session, &x, 1, &result) == WF_OK) {
 *     wf_tensor_view logits;
 *     wf_result_output(result, 0, &logits);            (logits.data, logits.shape, ...)
 *     wf_result_free(result);
 *   }
 *   wf_session_close(session);
 *
 * Errors: every function that returns wf_status returns WF_OK or an error code, and records a
 * message naming what failed (the tensor, file, op or option) for the calling thread, read with
 * wf_last_error_message() until the thread's next call into the library. No function throws or
 * aborts on bad input. Pointers the library hands out (names, shapes, output data) stay valid
 * as long as the object they came from (the session or the result).
 *
 * Threads: a session runs one call at a time; calls on different sessions may run in parallel.
 * Tensor data is row-major host memory in the manifest's element type (docs/model-package.md):
 * bf16/f16 as their 16-bit patterns, i1 as one byte per element (0 or 1).
 */
#ifndef WARPFORGE_WARPFORGE_H_
#define WARPFORGE_WARPFORGE_H_

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define WF_API __attribute__((visibility("default")))
#else
#define WF_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this interface; it grows when a function or a struct field changes. */
#define WF_API_VERSION 1

typedef enum wf_status {
  WF_OK = 0,
  WF_INVALID_ARGUMENT = 1,    /* bad input: a shape, dtype, size, name or option */
  WF_PARSE_ERROR = 2,         /* malformed model.mlir */
  WF_VERIFY_ERROR = 3,        /* the program violates an op's rules */
  WF_NOT_FOUND = 4,           /* a missing file, tensor or function */
  WF_UNIMPLEMENTED = 5,       /* valid, but not supported (yet) on this device */
  WF_OUT_OF_RANGE = 6,        /* an index beyond the end */
  WF_RESOURCE_EXHAUSTED = 7,  /* out of memory */
  WF_INTERNAL = 8,            /* a WarpForge bug */
  WF_UNAVAILABLE = 9,         /* a rank of a distributed job or its store stopped answering */
} wf_status;

typedef struct wf_session wf_session;
typedef struct wf_result wf_result;

typedef struct wf_session_options {
  const char* device;     /* "cpu" (also when NULL), "cuda" (= "cuda:0"), "cuda:1", ... */
  int allow_tf32;         /* nonzero: fp32 matrix products and convolutions may use TF32 tensor cores */
  int allow_cpu_fallback; /* nonzero: ops the device lacks run on the host (named in the report) */
  int threads;            /* worker threads for host kernels; 0: the backend chooses */
} wf_session_options;

/* A manifest tensor (input or output). Dynamic dimensions are -1 in `shape`, named in `dim_names`. */
typedef struct wf_tensor_info {
  const char* name;
  const char* dtype;             /* StableHLO element type: "f32", "bf16", "f16", "i64", "i32", "i1", ... */
  size_t element_size;           /* bytes per element in host buffers */
  size_t rank;
  const int64_t* shape;          /* rank entries; -1 for a dynamic dimension */
  const char* const* dim_names;  /* rank entries; NULL for a static dimension */
} wf_tensor_info;

/* An input for a run: by name, or by manifest position when `name` is NULL. */
typedef struct wf_input {
  const char* name;
  size_t index;
  const void* data;      /* row-major host bytes in the input's dtype; copied by the call */
  size_t size_bytes;     /* must equal the element count times element_size */
  const int64_t* shape;  /* NULL: the manifest's shape (inputs without dynamic dimensions only) */
  size_t rank;
} wf_input;

/* A caller buffer that receives an output: by name, or by manifest position when `name` is NULL. */
typedef struct wf_output_buffer {
  const char* name;
  size_t index;
  void* data;
  size_t capacity_bytes;
  size_t size_bytes;  /* set by the run: the bytes written */
} wf_output_buffer;

/* An output of a run; `data` and `shape` belong to the result. */
typedef struct wf_tensor_view {
  const char* name;
  const char* dtype;
  size_t element_size;
  size_t rank;
  const int64_t* shape;
  const void* data;
  size_t size_bytes;
} wf_tensor_view;

typedef struct wf_run_report {
  double wall_ms;                /* the whole call on the host clock: input copies, run, output copies */
  double device_ms;              /* the program on the device (CUDA events, inputs resident); -1 on cpu */
  size_t num_host_fallback_ops;  /* ops that ran on the host instead of the device */
} wf_run_report;

/* ---- library -------------------------------------------------------------------------------- */
WF_API int wf_api_version(void);        /* WF_API_VERSION of the library */
WF_API const char* wf_version(void);    /* the project version, "0.1.0" */
WF_API const char* wf_status_name(wf_status status);  /* "ok", "invalid_argument", ... */
WF_API wf_status wf_last_error_code(void);           /* of the calling thread's last call; WF_OK if it succeeded */
WF_API const char* wf_last_error_message(void);      /* "" if it succeeded */
/* The device kinds this library was built with, comma-separated: "cpu" or "cpu,cuda". */
WF_API const char* wf_device_kinds(void);

/* ---- sessions ------------------------------------------------------------------------------- */
WF_API void wf_session_options_init(wf_session_options* options);
/* Loads and checks the package, compiles it for the device and binds its weights there.
 * `options` may be NULL (cpu, defaults). On error *session is NULL. */
WF_API wf_status wf_session_open(const char* package_dir, const wf_session_options* options, wf_session** session);
WF_API void wf_session_close(wf_session* session);  /* NULL is fine */

WF_API size_t wf_session_num_inputs(const wf_session* session);
WF_API size_t wf_session_num_outputs(const wf_session* session);
WF_API wf_status wf_session_input_info(const wf_session* session, size_t index, wf_tensor_info* info);
WF_API wf_status wf_session_output_info(const wf_session* session, size_t index, wf_tensor_info* info);
WF_API wf_status wf_session_find_input(const wf_session* session, const char* name, size_t* index);
WF_API wf_status wf_session_find_output(const wf_session* session, const char* name, size_t* index);
WF_API const char* wf_session_name(const wf_session* session);         /* the manifest's name */
WF_API const char* wf_session_device_name(const wf_session* session);  /* "cpu", "cuda:0 (NVIDIA H100 ...)" */
/* Device memory the session holds now (weights, workspaces, caches); on cpu, the bound weights. */
WF_API size_t wf_session_device_bytes_in_use(const wf_session* session);

/* ---- runs ----------------------------------------------------------------------------------- */
/* Runs with every input given once; the outputs come back in a result the caller frees. */
WF_API wf_status wf_session_run(wf_session* session, const wf_input* inputs, size_t num_inputs, wf_result** result);
/* Runs and copies outputs into caller buffers (outputs not listed are dropped); a buffer smaller
 * than its output is WF_INVALID_ARGUMENT and leaves every buffer untouched. `report` may be NULL. */
WF_API wf_status wf_session_run_into(wf_session* session, const wf_input* inputs, size_t num_inputs,
                                     wf_output_buffer* outputs, size_t num_outputs, wf_run_report* report);

WF_API size_t wf_result_num_outputs(const wf_result* result);  /* the manifest's outputs, in order */
WF_API wf_status wf_result_output(const wf_result* result, size_t index, wf_tensor_view* view);
WF_API wf_status wf_result_find_output(const wf_result* result, const char* name, size_t* index);
WF_API wf_status wf_result_copy_output(const wf_result* result, size_t index, void* data, size_t capacity_bytes);
WF_API wf_status wf_result_report(const wf_result* result, wf_run_report* report);
WF_API const char* wf_result_host_fallback_op(const wf_result* result, size_t index);  /* NULL past the end */
WF_API void wf_result_free(wf_result* result);  /* NULL is fine */

/* ---- benchmarking --------------------------------------------------------------------------- */
/* Runs the package's golden inputs `warmup` times, then `iters` timed times; inputs are checked
 * once. wall_ms[i] (host clock around each run) and device_ms[i] (RunReport device time, -1 on
 * cpu) receive the samples of timed run i; either array may be NULL, else holds `iters` doubles. */
WF_API wf_status wf_session_bench(wf_session* session, int warmup, int iters, double* wall_ms, double* device_ms);
/* The same on the given inputs. */
WF_API wf_status wf_session_bench_inputs(wf_session* session, const wf_input* inputs, size_t num_inputs, int warmup,
                                         int iters, double* wall_ms, double* device_ms);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* WARPFORGE_WARPFORGE_H_ */
