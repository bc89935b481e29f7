/*===- kite/c_api.h - Running a compiled plan from C ----------*- C -*-===*
 *
 * A C interface to kite_runtime for programs that cannot link C++: load a
 * plan (kite::serialize's bytes, as the cache and `kite_bench --plans`
 * write them) and launch it on tensors the caller owns. Python's ctypes
 * uses it to time kite's kernels beside PyTorch's in one process
 * (bench/torch_baseline.py --kite-plans).
 *
 * Every function that can fail returns NULL or -1 and writes a one-line
 * message into `error` (truncated to `error_size` bytes, NUL-terminated).
 *
 *===------------------------------------------------------------------===*/

#ifndef KITE_C_API_H
#define KITE_C_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define KITE_C_EXPORT __attribute__((visibility("default")))
#else
#define KITE_C_EXPORT
#endif

typedef struct kite_plan kite_plan;
/* DLPack's tensor (dlpack/dlpack.h); only pointers to it pass through here. */
struct DLManagedTensor;

/* Reads and checks the plan in the file at `path`. */
KITE_C_EXPORT kite_plan *kite_plan_read(const char *path, char *error, size_t error_size);

KITE_C_EXPORT void kite_plan_free(kite_plan *plan);

/* The plan's arguments, in order, as JSON owned by the plan: an array of
 * {"name", "tensor": true, "dtype", "sizes"} and
 * {"name", "tensor": false, "dtype", "value"} (value null: given at launch). */
KITE_C_EXPORT const char *kite_plan_args_json(const kite_plan *plan);

/* The number of tensors the plan returns. */
KITE_C_EXPORT int kite_plan_num_results(const kite_plan *plan);

/* Launches the plan on CUDA device `device`, on `stream` (a CUstream; 0 is
 * the default stream), with `nargs` arguments in the plan's order: for a
 * tensor, tensors[i] is the device address of a contiguous tensor of the
 * spec's dtype and sizes; for a scalar, scalars[i] is its value. The
 * arguments are checked as kite::launch checks them. With `results`
 * (nresults == kite_plan_num_results), the returned tensors are exported
 * there as DLPack tensors the caller owns (it calls their deleters,
 * before it destroys `stream`: a result is freed on its stream);
 * without (NULL), they are released, stream-ordered, before the call
 * returns. 0 on success. */
KITE_C_EXPORT int kite_plan_run(kite_plan *plan, int device, uint64_t stream, int nargs,
                                const uint64_t *tensors, const double *scalars,
                                struct DLManagedTensor **results, int nresults, char *error,
                                size_t error_size);

#ifdef __cplusplus
}
#endif

#endif /* KITE_C_API_H */
