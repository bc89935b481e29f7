//===- kite/runtime.hpp - GPU tensors, kernel plans and launches --*- C++ -*-===//
//
// This file declares the public API of kite's runtime library
// (`kite_runtime`): whether a GPU is there, device tensors and copies,
// DLPack exchange, and the execution of compiled kernels ("plans"). It needs
// no CUDA header (streams are opaque pointers) and the runtime library needs
// no compiler: a plan holds a cubin, so an application that ships its plans
// runs with no LLVM, no Clang and no NVRTC.
//
// API (namespace kite unless noted):
//
//   gpu_available() gpu_unavailable_reason()   "is there a usable CUDA GPU?"
//   Stream {void *handle}                      a CUstream; null = the default stream
//   DeviceProperties, device_count(), device_properties(ordinal)
//   cuda::empty zeros(sizes, dtype, stream, device)   caching, stream-ordered allocation
//   cuda::to_device(host) cuda::to_host(dev) cuda::clone(dev) cuda::synchronize
//   from_dlpack(DLManagedTensor *) to_dlpack(const Tensor &)
//   ArgSpec OutputSpec ParamSpec ResultSpec KernelPlan   what a compiled kernel needs
//   serialize(plan) deserialize(bytes)         the plan's byte form (versioned, checked)
//   KernelArg                                  one launch argument (tensor or scalar)
//   validate_args(plan, args)                  the launch-time argument check
//   specialization_hash(args)                  what a plan cache is keyed by
//   run_plan(plan, args, results, stream)      load (once), allocate outputs, launch
//   KernelSource register_kernel lookup_kernel the kernels captured at build time
//   Options                                    stream, config and tuning policy
//   load_bundle(path)                          plans shipped with an application
//   launch(kernel, [options,] args...)         run a captured kernel on the GPU
//
// Every failure is a kite::Error whose message says what to do; "no GPU" is
// one too: "no CUDA GPU: <reason>; reference mode and kite compile still
// work".
//
//===----------------------------------------------------------------------===//

#ifndef KITE_RUNTIME_HPP
#define KITE_RUNTIME_HPP

#include <kite/kite.hpp>
#include <kite/launch_expr.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

// DLPack's tensor (dlpack/dlpack.h); only pointers to it pass through here.
struct DLManagedTensor;

namespace kite {

//===----------------------------------------------------------------------===//
// Devices and streams
//===----------------------------------------------------------------------===//

/// True when the CUDA driver loads and reports at least one device. Never
/// throws; the first call loads the driver (dlopen of libcuda.so.1).
bool gpu_available();
/// Why gpu_available() is false ("libcuda.so.1 could not be loaded: ..."),
/// or "" when a GPU is available.
std::string gpu_unavailable_reason();

/// A CUDA stream (a CUstream); the null handle is the legacy default stream.
/// kite never creates or destroys a user's stream. Memory allocated on a
/// stream is freed on that stream, so the stream must outlive the tensors
/// allocated on it.
struct Stream {
  void *handle = nullptr;
};

/// What the driver reports about a device; never hard-coded.
struct DeviceProperties {
  int ordinal = 0;
  std::string name;
  int computeMajor = 0, computeMinor = 0;
  int smCount = 0;
  int maxThreadsPerBlock = 0;
  int warpSize = 0;
  int maxSharedMemoryPerBlock = 0;      // bytes, without opt-in
  int maxSharedMemoryPerBlockOptin = 0; // bytes, with cuFuncSetAttribute
  int maxSharedMemoryPerSm = 0;         // bytes
  int l2CacheBytes = 0;
  bool memoryPools = false;             // stream-ordered memory pools are supported
  int driverVersion = 0;                // e.g. 13000
  /// The NVRTC target for this device: "sm_90a" for compute capability 9.0
  /// (the "a" features, such as wgmma, exist only on 9.0 and 10.x), else
  /// "sm_<major><minor>".
  std::string arch() const;
};

/// The number of CUDA devices (0 without a GPU; never throws).
int device_count();
/// Properties of a device; throws kite::Error without a GPU or for a bad
/// ordinal.
const DeviceProperties &device_properties(int ordinal = 0);

namespace cuda {

/// A contiguous, uninitialized device tensor for use on `stream`: a block a
/// dropped tensor of the same size left on that stream, else a stream-ordered
/// allocation from the device's caching memory pool (cuMemAlloc where the
/// device has no memory pools). When the last handle drops, the block is
/// kept for the next allocation of its size on the stream (as PyTorch's
/// caching allocator does); work on other streams that uses the tensor must
/// be ordered before the drop. See empty_cache.
Tensor empty(const std::vector<int64_t> &sizes, DType dtype, Stream stream = {},
             Device device = Device::cuda(0));
/// Like empty, then zero-filled on the stream.
Tensor zeros(const std::vector<int64_t> &sizes, DType dtype, Stream stream = {},
             Device device = Device::cuda(0));
/// A contiguous device copy of a host tensor (a strided host tensor is made
/// contiguous first). The copy is ordered on `stream`; the host tensor may
/// be dropped as soon as this returns.
Tensor to_device(const Tensor &host, Stream stream = {}, Device device = Device::cuda(0));
/// A contiguous host copy of a device tensor (any strides with non-negative
/// values, including expanded dimensions). Waits for `stream`.
Tensor to_host(const Tensor &dev, Stream stream = {});
/// A contiguous device copy of a contiguous device tensor, on `stream`.
Tensor clone(const Tensor &dev, Stream stream = {});
/// Waits until all work queued on `stream` is done.
void synchronize(Stream stream = {});
/// Waits for the device, then returns the memory kite keeps for reuse
/// (dropped tensors' blocks, the pool's free memory) to the system, as
/// torch.cuda.empty_cache() does.
/// Live tensors are untouched.
void empty_cache(Device device = Device::cuda(0));

} // namespace cuda

//===----------------------------------------------------------------------===//
// DLPack
//===----------------------------------------------------------------------===//

/// Wraps a DLPack tensor (CPU, CUDA host, CUDA or CUDA managed memory) as a
/// kite Tensor, taking ownership: its deleter runs exactly once, when the
/// last kite handle drops. On error (a dtype or device kite has no
/// counterpart for, lanes != 1) nothing is taken: the caller still owns it.
Tensor from_dlpack(DLManagedTensor *managed);
/// Exports a CPU or CUDA tensor. The result shares the storage (kept alive
/// until the consumer calls its deleter) and carries sizes, strides and the
/// storage offset (as byte_offset). bool exports as kDLBool (DLPack >= 0.8).
DLManagedTensor *to_dlpack(const Tensor &tensor);

//===----------------------------------------------------------------------===//
// Kernel plans: what a compiled kernel needs to run, without a compiler
//===----------------------------------------------------------------------===//

/// The compiler refused a config for these arguments because it does not
/// fit the kernel (too many registers or too much shared memory a thread,
/// a thread count or chunk the kernel cannot use): a reason, not a compiler
/// failure. The autotuner skips such configs.
class ConfigRejected : public Error {
public:
  using Error::Error;
};

/// One kernel argument as a plan was specialized for it. The text form
/// (str()) is the command line's: `x=bf16[8192,8192]`,
/// `y=f32[4,8]:strides[1,4]`, `eps=f32`, `n=i64:7`.
struct ArgSpec {
  enum class Kind : uint8_t { tensor, scalar };
  Kind kind = Kind::tensor;
  std::string name;
  /// A tensor's element type, or a scalar's type (int64_t: i64, int: i32,
  /// double: f64, float: f32, bool: boolean).
  DType dtype = DType::f32;
  std::vector<int64_t> sizes;   // tensor only
  std::vector<int64_t> strides; // tensor only, in elements; empty = contiguous
  /// A tensor's data pointer is a multiple of this many bytes (0 or 1: no
  /// requirement).
  int64_t alignment = 0;
  /// A specialized scalar: the plan is valid for this value only.
  std::optional<double> value;
  /// A plan for dynamic shapes (Options::static_shapes = false) takes some
  /// sizes at launch: such a dim is -1 in `sizes`, and here its divisor, the
  /// power of two (1 to 16) that the size is a multiple of; 0 for a static
  /// dim. Empty: every size static. A tensor with a dynamic size is
  /// contiguous (`strides` empty). Text form: `x=bf16[?16,4096]` (`?` alone
  /// for divisor 1). -1 (`?*`): any size of at least 2, for a dim whose
  /// divisor class cannot change the plan's code (the outer dim of a
  /// tensor, say).
  std::vector<int64_t> divisors;
  /// A dynamic dim whose magnitude the plan depends on (a row it holds
  /// whole, a product's M and N) is also bucketed by range: here its
  /// bucket's upper end (size_bound: 128, 256, ... 16384, or -1 for longer
  /// sizes), 0 for an unbucketed dim. Empty: none. Its divisor is then
  /// bounded_divisor's. Text form: `?8<=8192` (a multiple of 8 from 4097 to
  /// 8192), `?<=128` (2 to 128), `?16>16384`.
  std::vector<int64_t> bounds;
  /// With dynamic sizes: whether the tensor's elements are few enough for
  /// 32-bit offsets (fits_index32 of its element count), which the plan's
  /// code then uses, as a static plan does for such a tensor. Text form:
  /// `:idx32`.
  bool index32 = false;

  /// The smallest and largest held-row buckets (their upper ends).
  static constexpr int64_t kMinBound = 128, kMaxBound = 16384;

  bool is_tensor() const { return kind == Kind::tensor; }
  bool is_dynamic(size_t dim) const { return dim < divisors.size() && divisors[dim] != 0; }
  /// The bucket of dim `dim` (0 where not bucketed).
  int64_t bound(size_t dim) const { return dim < bounds.size() ? bounds[dim] : 0; }
  /// Whether a size fits dim `dim`: equal to its static size, or for a
  /// dynamic dim at least 2, a multiple of its divisor and in its bucket.
  bool size_fits(size_t dim, int64_t size) const {
    if (!is_dynamic(dim))
      return size == sizes[dim];
    return size >= 2 && size % divisors[dim] == 0 &&
           (bound(dim) == 0 || size_bound(size) == bound(dim));
  }
  /// Whether a size is exactly of dim `dim`'s class (the class a launch of
  /// that size gets: size_fits, and the divisor class too, not only a
  /// divisor of it). A held plan whose every dim admits the launch's sizes
  /// serves it as the plan compiled for them would.
  bool size_in_class(size_t dim, int64_t size) const {
    if (!size_fits(dim, size))
      return false;
    return !is_dynamic(dim) || divisors[dim] == -1 ||
           divisors[dim] == (bound(dim) > 0 ? bounded_divisor(size, dtype) : size_divisor(size));
  }
  /// Whether a tensor reaching `reach` elements (a contiguous one's element
  /// count) is addressed with 32-bit offsets, with room for tiles that run
  /// past its end.
  static bool fits_index32(int64_t reach) { return reach < (int64_t(1) << 29); }
  /// A size's divisor class: the largest power of two up to 16 dividing it.
  static int64_t size_divisor(int64_t size) {
    int64_t d = 16;
    while (d > 1 && size % d != 0)
      d /= 2;
    return d;
  }
  /// A size's bucket as a held row: the power of two at or above it, at
  /// least kMinBound; -1 past kMaxBound (such rows are reduced in chunks).
  static int64_t size_bound(int64_t size) {
    if (size > kMaxBound)
      return -1;
    int64_t b = kMinBound;
    while (b < size)
      b *= 2;
    return b;
  }
  /// The divisor class of a bucketed size: whether it is a multiple of a
  /// 16-byte vector of `dtype` (that many elements) or not (1). Classes
  /// between change the code little, and would multiply the plans.
  static int64_t bounded_divisor(int64_t size, DType dtype) {
    int64_t vector = std::max<int64_t>(1, 16 / element_size(dtype));
    return size % vector == 0 ? vector : 1;
  }
  /// The strides in effect (contiguous ones when `strides` is empty).
  std::vector<int64_t> effective_strides() const;
  /// Whether the strides are a contiguous tensor's (any stride in a dim of
  /// size 1); true for a spec with dynamic sizes, which is contiguous.
  bool is_contiguous() const;
  std::string str() const;
  /// A bucket's text in str(): `<=8192`, `>16384`, or "" for none.
  static std::string bound_text(int64_t bound) {
    if (bound == 0)
      return "";
    return bound < 0 ? ">" + std::to_string(kMaxBound) : "<=" + std::to_string(bound);
  }

  static ArgSpec tensor(std::string name, DType dtype, std::vector<int64_t> sizes,
                        std::vector<int64_t> strides = {}, int64_t alignment = 0);
  static ArgSpec scalar(std::string name, DType type, std::optional<double> value = {});
  /// The spec of a concrete tensor (its strides, and the largest power of two
  /// up to 16 that divides its address as alignment).
  static ArgSpec of(std::string name, const Tensor &t);

  friend bool operator==(const ArgSpec &, const ArgSpec &) = default;
};

/// An output that the host prologue allocates before the launch: always
/// contiguous, on the launch's device and stream.
struct OutputSpec {
  std::string name;
  DType dtype = DType::f32;
  std::vector<int64_t> sizes; // -1: computed at launch, by the next of sizeExprs
  bool zeroed = false; // zeros()/zeros_like() in the prologue
  std::vector<LaunchExpr> sizeExprs; // one per -1 in sizes, in order
  friend bool operator==(const OutputSpec &, const OutputSpec &) = default;
};

/// One kernel parameter, in the kernel's parameter order.
struct ParamSpec {
  enum class Kind : uint8_t {
    argData,   // the data pointer of argument `index` (a tensor)
    outputData, // the data pointer of output `index`
    argScalar, // the value of argument `index` (a scalar), in its type
    argSize,   // int64_t: size `dim` of argument `index` (a tensor)
    argStride, // int64_t: stride `dim` (elements) of argument `index`
    constant,  // the bytes in `bytes` (a value folded at compile time)
    argTensorMap, // a CUtensorMap (128 bytes) over argument `index` (a tensor), for
                  // TMA copies of tiles; `bytes` holds its TensorMapSpec
    workspace,    // the pointer to `index` bytes of device memory per program
                  // launched, allocated per launch on its stream, zeroed where
                  // `dim` is 1 (a split K loop's partial sums and counters)
  };
  Kind kind = Kind::argData;
  uint32_t index = 0;
  uint32_t dim = 0;
  std::vector<uint8_t> bytes; // constant only
  friend bool operator==(const ParamSpec &, const ParamSpec &) = default;
};

/// How an argTensorMap parameter tiles its tensor: the copy box (elements
/// per dim, outermost first, as the tensor's dims) and the shared-memory
/// swizzle (0 none, 1 32-byte, 2 64-byte, 3 128-byte). A staged map covers
/// a copy of the tensor that each launch makes first (the module's
/// `kite_stage_rows`), its rows padded to 16-byte multiples: TMA takes only
/// 16-byte aligned addresses and strides, so a tensor whose rows are not
/// (4097 x 4095 bf16) is copied by TMA from there.
///
/// A map with row splits views the tensor's rows (every dim but the last,
/// folded into one: they must be contiguous, as a staged map's padded copy
/// always is) as blocks instead of as dims:
/// each split (count, stride in rows), innermost first, is a dim of the
/// map that a copy takes whole, and the last dim steps the block's first
/// row by `rowStep` rows, one block a copy. Its dims, innermost first: the
/// columns (box[rank - 1] a copy), the splits, the blocks; a copy's
/// coordinates: the column, 0 per split, the first row / rowStep. One copy
/// so gathers rows that are not consecutive (a product's left operand in
/// the order of its register fragments) in one box. The blocks dim covers
/// the first rows whose block lies inside the tensor.
///
/// Stored in the parameter's `bytes` as: rank (u8), swizzle (u8), staged
/// (u8, 0 or 1), the number of row splits (u8), `rank` box sizes (u32,
/// little-endian), then per split its count and stride (u32 each) and, with
/// splits, rowStep (u32).
struct TensorMapSpec {
  struct RowSplit {
    uint32_t count = 1, stride = 1;
    friend bool operator==(const RowSplit &, const RowSplit &) = default;
  };
  uint8_t rank = 0;
  uint8_t swizzle = 0;
  std::array<uint32_t, 5> box{};
  bool staged = false;
  std::vector<RowSplit> rowSplits; // at most 3 (a map has at most 5 dims)
  uint32_t rowStep = 0;
  std::vector<uint8_t> encode() const;
  /// Throws kite::Error on a malformed buffer.
  static TensorMapSpec decode(std::span<const uint8_t> bytes);
};

/// One value the kernel returns (a Tensor, or an element of a tuple).
struct ResultSpec {
  enum class Kind : uint8_t { arg, output };
  Kind kind = Kind::output;
  uint32_t index = 0;
  friend bool operator==(const ResultSpec &, const ResultSpec &) = default;
};

/// A kernel compiled for one specialization (argument specs + config): all
/// the runtime needs to launch it. Made by the compiler (or read back from a
/// cache with deserialize), executed by run_plan.
struct KernelPlan {
  enum class Binary : uint8_t { cubin, ptx };
  /// Identifies the plan in the loaded-module cache: the compiler's key
  /// (kernel IR hash, specialization, config, versions). Two plans with the
  /// same key must hold the same binary.
  std::string key;
  std::string name;       // the user's kernel name, for messages ("softmax")
  std::string kernelName; // the entry point's symbol in the binary
  std::string arch;       // the target the binary was built for ("sm_90a")
  Binary binaryKind = Binary::cubin;
  std::vector<uint8_t> binary;
  std::array<uint32_t, 3> grid = {1, 1, 1};
  std::array<uint32_t, 3> block = {1, 1, 1};
  uint32_t dynamicSharedBytes = 0;
  /// The kernel loops over grid[0] program ids by gridDim.x (a persistent
  /// pid_type): the launch runs min(grid[0], SMs x the programs an SM holds
  /// at once) programs, from the driver's occupancy of the loaded kernel.
  bool persistent = false;
  /// Programs per thread-block cluster, compiled into the kernel
  /// (__cluster_dims__): grid[0] is a multiple of it, and a persistent
  /// launch runs as many whole clusters as the device holds at once.
  uint32_t clusterSize = 1;
  std::vector<ArgSpec> args;       // the kernel's arguments, in order
  std::vector<OutputSpec> outputs; // allocated by the host prologue
  std::vector<ParamSpec> params;   // the kernel's parameters, in order
  std::vector<ResultSpec> results; // empty: void; one: Tensor; more: tuple
  /// The config's JSON text (informational; it is already in `key`).
  std::string config;
  /// Compiled for dynamic shapes (Options::static_shapes = false): its
  /// specs may hold dynamic sizes, and the cache finds it by shape class.
  bool dynamicShapes = false;
  /// The number of programs (grid x), computed at each launch; empty: `grid`.
  /// A persistent plan launches at most as many as the SMs hold.
  std::vector<LaunchExpr> gridExpr;
  /// What a launch checks of its sizes before it runs (validate_args).
  std::vector<LaunchCheck> checks;

  friend bool operator==(const KernelPlan &, const KernelPlan &) = default;
};

/// Checks that a plan is self-consistent (indices in range, parameters that
/// read tensors point at tensors, ...); throws kite::Error naming the field.
void validate_plan(const KernelPlan &plan);

/// The plan's byte form: a magic, a format version, the fields, and a
/// checksum. deserialize rejects a truncated, corrupt or other-version buffer
/// with a kite::Error that says which (never a crash, never a partial plan).
std::vector<uint8_t> serialize(const KernelPlan &plan);
KernelPlan deserialize(std::span<const uint8_t> bytes);
/// The version serialize writes and deserialize reads (2: tensor-map
/// parameters; 3: the persistent flag; 4: dynamic sizes and launch
/// expressions; 5: bucketed dims; 6: staged tensor maps and workspaces;
/// 7: the cluster size).
inline constexpr uint32_t kPlanFormatVersion = 7;

//===----------------------------------------------------------------------===//
// Launching
//===----------------------------------------------------------------------===//

/// One launch argument: a tensor (by reference: it must outlive the call)
/// or a scalar (by value). Implicit from Tensor and the language's scalar
/// types, so `KernelArg args[] = {x, y, int64_t(n)};` works.
struct KernelArg {
  ArgSpec::Kind kind = ArgSpec::Kind::tensor;
  DType type = DType::f32; // a scalar's type
  const Tensor *tensor = nullptr;
  union {
    int64_t i;
    double f;
  } value = {0};

  KernelArg(const Tensor &t) : kind(ArgSpec::Kind::tensor), tensor(&t) {}
  KernelArg(int64_t v) : kind(ArgSpec::Kind::scalar), type(DType::i64) { value.i = v; }
  KernelArg(int v) : kind(ArgSpec::Kind::scalar), type(DType::i32) { value.i = v; }
  KernelArg(double v) : kind(ArgSpec::Kind::scalar), type(DType::f64) { value.f = v; }
  KernelArg(float v) : kind(ArgSpec::Kind::scalar), type(DType::f32) { value.f = v; }
  KernelArg(bool v) : kind(ArgSpec::Kind::scalar), type(DType::boolean) { value.i = v; }
  /// Pointers are not arguments (they would silently become bools).
  template <class T> KernelArg(T *) = delete;
  /// The scalar as a double (for messages and specialized-value checks).
  double scalar_as_double() const;
  /// A scalar of `type` from a double, its inverse: f64, f32, i32 and bool
  /// as those types, any other type as i64.
  static KernelArg scalar(DType type, double v);
};

/// The launch-time argument check: count, kind, device (all tensors on one
/// CUDA device), dtype, rank, sizes, strides, alignment, scalar types and
/// specialized values must match the plan's specs exactly. Throws a
/// kite::Error naming the kernel and the argument, e.g.
/// "kite::launch(softmax): argument 'x' must be a CUDA tensor, got a CPU
/// tensor [8, 8] bf16". Returns the CUDA device ordinal of the tensors (0 if
/// there are none).
int validate_args(const KernelPlan &plan, std::span<const KernelArg> args);

/// Evaluates a launch expression on a launch's arguments (which
/// validate_args has checked). Throws kite::Error for a division by a
/// non-positive number or a malformed program.
int64_t evaluate(const LaunchExpr &expr, std::span<const KernelArg> args);
/// The same on concrete specs (the sizes and scalar values of a launch, as
/// the autotuner has them); throws for a size or scalar they lack.
int64_t evaluate(const LaunchExpr &expr, std::span<const ArgSpec> specs);

/// An allocation-free hash of what plans are specialized on: each
/// argument's kind, dtype (or scalar type), sizes, strides (ignoring size-1
/// dimensions), alignment class (the largest power of two up to 16 dividing
/// the address) and device, and the value of bool scalars (always
/// specialized). For the front door's plan lookup; equal hashes do not prove
/// equal specs (validate_args does), and other specialized scalars are
/// checked by validate_args against each candidate plan.
uint64_t specialization_hash(std::span<const KernelArg> args);
/// With `dynamic_shapes`, the hash of the shape class: a contiguous
/// tensor's sizes count only as 0, 1 or their divisor class and bucket
/// (ArgSpec::size_divisor, ArgSpec::size_bound), the finest classes a
/// dynamic-shapes plan distinguishes; a plan that does not bucket a dim
/// serves the keys of several buckets.
uint64_t specialization_hash(std::span<const KernelArg> args, bool dynamic_shapes);

/// Runs a plan: validates the arguments, loads the binary on first use (a
/// module cache keyed by the CUDA context and plan.key), allocates the
/// outputs on `stream`, launches, and writes plan.results into `results`
/// (whose size must be plan.results.size()). The steady state is one cache
/// lookup, the checks, the outputs' allocations, parameter packing and
/// cuLaunchKernel; nothing else allocates. The launch is asynchronous.
void run_plan(const KernelPlan &plan, std::span<const KernelArg> args, std::span<Tensor> results,
              Stream stream = {});
/// As above, returning the results (allocates the vector).
std::vector<Tensor> run_plan(const KernelPlan &plan, std::span<const KernelArg> args,
                             Stream stream = {});
inline std::vector<Tensor> run_plan(const KernelPlan &plan, std::initializer_list<KernelArg> args,
                                    Stream stream = {}) {
  return run_plan(plan, std::span<const KernelArg>(args.begin(), args.size()), stream);
}

/// Loads a plan's binary into the module cache now (the first run_plan does
/// it otherwise), checking that the device can run it: the target, the
/// threads per block and the dynamic shared memory. Throws kite::Error.
void preload_plan(const KernelPlan &plan, int device = 0);

//===----------------------------------------------------------------------===//
// Captured kernels and launch options
//===----------------------------------------------------------------------===//

/// A kernel captured at build time (kite_add_kernels): its name and the
/// captured IR, registered at static-initialization time by generated code
/// and found by the kernel function's address.
struct KernelSource {
  const void *function = nullptr; // the KITE_KERNEL function
  std::string_view name;          // its qualified name ("softmax", "ns::softmax")
  std::string_view ir;            // the captured kite dialect (MLIR text)
  std::string_view irHash;        // a hash of `ir`, for cache keys
  std::string_view file;          // the source file it came from
  /// The parameter names, comma-separated ("x,y,eps"), for messages before a
  /// plan exists. Empty: read from the `kite.name` attributes of `ir`.
  std::string_view argNames;
};

/// Registers a captured kernel (the strings must outlive the program:
/// generated code passes literals). A second registration of one function
/// replaces the first.
void register_kernel(const KernelSource &source);
/// The captured kernel behind a function address, or null.
const KernelSource *lookup_kernel(const void *function);
template <class F> const KernelSource *lookup_kernel(F *function) {
  return lookup_kernel(reinterpret_cast<const void *>(function));
}
/// Generated code's registration: `static const kite::KernelRegistration r{...};`.
struct KernelRegistration {
  explicit KernelRegistration(const KernelSource &source) { register_kernel(source); }
};

/// How kite::launch runs a kernel. A new specialization's plan comes from,
/// in order: the plans this process already has, the loaded bundles
/// (load_bundle), the cache directory (kite/cache.hpp), and else the
/// compiler, whose plan is then stored in the cache directory.
struct Options {
  Stream stream;
  /// A config to use (JSON, Helion's key names); keys given here pin those
  /// of the tuned or default config. Empty: the cached or default config.
  /// A plan compiled with a config is cached as a "pinned" entry, found
  /// again only by launches that give the same config text.
  std::string config;
  enum class Tuning : uint8_t {
    cached,   // the cache's best config (tuned over default), else compile the
              // default config and cache it (no tuning)
    tune,     // a tuned entry, else autotune (when an autotuner is linked in)
              // and cache the winner; with `config` set, as `cached`
    never,    // compile the default config (or `config`); no cache read or write
  };
  Tuning tuning = Tuning::cached;
  /// true: a plan per set of sizes (the fastest code for each, a compile for
  /// each new size). false: a plan per shape class, taking sizes at launch:
  /// every size of a contiguous tensor that is at least 2 is dynamic, but
  /// for its divisor class (the largest power of two up to 16 dividing it),
  /// except where the kernel says `specialize(x.size(d))` or uses the size
  /// in a way the compiler needs it constant (then that dim stays static).
  /// As Helion's static_shapes.
  bool static_shapes = true;
};

/// Loads a bundle of cached plans (`kite cache export -o FILE`) for the rest
/// of the process: launches find its plans before the cache directory and
/// the compiler, so an application that ships a bundle for its GPUs needs no
/// compiler at all. A bundle entry answers a launch of the same kernel (IR
/// hash), argument specs and GPU architecture. Returns the number of
/// entries; throws kite::Error naming the file and what is wrong (missing,
/// truncated, corrupt, other format version).
size_t load_bundle(const std::string &path);

//===----------------------------------------------------------------------===//
// New plans: what made a launch compile
//===----------------------------------------------------------------------===//

/// A launch that found no plan in memory for its arguments and got one: from
/// a bundle or the cache directory (a load), or from the compiler or the
/// autotuner (a compile). Reported once per new specialization.
struct PlanEvent {
  enum class Source : uint8_t { bundle, cache_directory, autotuner, compiler };
  std::string_view kernel;
  std::span<const ArgSpec> args; // the launch's specs
  Source source = Source::compiler;
  /// What no plan already held matched, against the nearest held plan:
  /// "first launch of softmax in this process", or e.g.
  /// "x: sizes [4096,8192] (nearest held plan: [8192,8192])".
  std::string_view reason;
  double milliseconds = 0; // getting the plan (lookup, compile or tuning)
  bool compiled() const { return source == Source::autotuner || source == Source::compiler; }
};

/// Called for every PlanEvent of this process, on the launching thread
/// (while the kernel's plans are locked: it must not launch that kernel).
/// Replaces the observer before; an empty function removes it. Setting
/// KITE_LOG=compile prints each compile to stderr, KITE_LOG=plans every
/// event; an observer sees them either way.
using PlanObserver = std::function<void(const PlanEvent &)>;
void set_plan_observer(PlanObserver observer);
/// How many plans kite::launch has compiled or tuned in this process. An
/// application warmed up on its shapes, or running from a bundle that holds
/// them, sees it stay put: a test can assert that a launch compiles nothing.
uint64_t compile_count();

//===----------------------------------------------------------------------===//
// kite::launch
//===----------------------------------------------------------------------===//

namespace detail {

/// The untyped front door behind kite::launch: finds the captured kernel of
/// `function`, a plan for these arguments (held in memory, else from a
/// loaded bundle, the cache directory or the runtime's compiler hook; see
/// Options), and runs it, writing the kernel's results into `results`
/// (whose size is the number of values the kernel returns).
void launch(const void *function, const Options &options, std::span<const KernelArg> args,
            std::span<Tensor> results);

template <class T> struct launch_result_count : std::integral_constant<size_t, 1> {};
template <> struct launch_result_count<void> : std::integral_constant<size_t, 0> {};
template <class... T>
struct launch_result_count<std::tuple<T...>> : std::integral_constant<size_t, sizeof...(T)> {};

template <class T> struct is_tensor_tuple : std::false_type {};
template <class... T>
struct is_tensor_tuple<std::tuple<T...>> : std::bool_constant<(std::is_same_v<T, Tensor> && ...)> {};

template <class P>
inline constexpr bool is_launch_param_v =
    std::is_same_v<std::remove_cvref_t<P>, Tensor> || std::is_same_v<std::remove_cvref_t<P>, int64_t> ||
    std::is_same_v<std::remove_cvref_t<P>, int> || std::is_same_v<std::remove_cvref_t<P>, double> ||
    std::is_same_v<std::remove_cvref_t<P>, float> || std::is_same_v<std::remove_cvref_t<P>, bool>;

/// How one argument is held during a launch: a Tensor argument by reference
/// (no copy), anything else converted to the parameter's type by value.
template <class P, class A>
using launch_hold_t = std::conditional_t<
    std::is_same_v<std::remove_cvref_t<A>, std::remove_cvref_t<P>> &&
        std::is_same_v<std::remove_cvref_t<P>, Tensor>,
    const Tensor &, std::remove_cvref_t<P>>;

template <class... A> struct first_is_options : std::false_type {};
template <class A0, class... A>
struct first_is_options<A0, A...> : std::is_same<std::remove_cvref_t<A0>, Options> {};

template <class R> R launch_failed(); // never defined

template <class R, size_t N, size_t... I>
R make_launch_result(std::array<Tensor, N> &results, std::index_sequence<I...>) {
  if constexpr (std::is_void_v<R>)
    return;
  else if constexpr (std::is_same_v<R, Tensor>)
    return std::move(results[0]);
  else
    return R(std::move(results[I])...);
}

} // namespace detail

/// Runs a captured kernel (kite_add_kernels) on the GPU: `kernel` is the
/// KITE_KERNEL function itself, and the arguments are checked against its
/// signature by the C++ compiler. The first launch for a specialization
/// (dtypes, shapes, strides, alignment, specialized scalars) finds a plan in
/// a loaded bundle or the cache directory, or compiles one through the
/// linked compiler (and caches it); later launches reuse it. Tensors must be
/// CUDA tensors; every failure is a kite::Error naming the kernel and the
/// argument. Asynchronous on `options.stream`.
template <class R, class... P, class... A>
R launch(R (*kernel)(P...), const Options &options, A &&...args) {
  constexpr bool kCount = sizeof...(A) == sizeof...(P);
  static_assert(kCount, "kite::launch: wrong number of arguments for this kernel (the arguments "
                        "must match the KITE_KERNEL function's parameters)");
  constexpr bool kTypes = kCount && std::is_invocable_v<R (*)(P...), A...>;
  static_assert(!kCount || kTypes,
                "kite::launch: the arguments do not match the kernel's parameter types");
  constexpr bool kParams = (detail::is_launch_param_v<P> && ...);
  static_assert(kParams, "kite::launch: kernel parameters must be kite::Tensor, int64_t, int, "
                         "double, float or bool");
  constexpr bool kResult =
      std::is_void_v<R> || std::is_same_v<R, Tensor> || detail::is_tensor_tuple<R>::value;
  static_assert(kResult, "kite::launch: a kernel returns void, kite::Tensor or "
                         "std::tuple<kite::Tensor...>");
  if constexpr (kCount && kTypes && kParams && kResult) {
    constexpr size_t kResults = detail::launch_result_count<R>::value;
    std::tuple<detail::launch_hold_t<P, A>...> held{std::forward<A>(args)...};
    std::array<Tensor, kResults> results;
    std::apply(
        [&](const auto &...held) {
          constexpr size_t kArgs = sizeof...(P);
          if constexpr (kArgs == 0) {
            detail::launch(reinterpret_cast<const void *>(kernel), options, {}, results);
          } else {
            const KernelArg argv[] = {KernelArg(held)...};
            detail::launch(reinterpret_cast<const void *>(kernel), options,
                           std::span<const KernelArg>(argv, kArgs), results);
          }
        },
        held);
    return detail::make_launch_result<R>(results, std::make_index_sequence<kResults>{});
  } else {
    return detail::launch_failed<R>(); // not instantiated: a static_assert has fired
  }
}

/// kite::launch with the default Options (the default stream, the cached or
/// default config).
template <class R, class... P, class... A>
  requires(!detail::first_is_options<A...>::value)
R launch(R (*kernel)(P...), A &&...args) {
  return launch(kernel, Options{}, std::forward<A>(args)...);
}

} // namespace kite

#endif // KITE_RUNTIME_HPP
