//===- EmitCuda.cpp - CUDA C++ emission -----------------------------------===//
//
// This file implements the translation of a specialized, configured kernel
// into CUDA C++.
//
// The execution model: one CUDA block is one program; the top-level loops'
// tiles are numbered into one program-id space (loop after loop), and each
// program runs the body of the loop it falls in. Inside a program every tile
// value lives in per-thread register arrays. How a tile's elements spread
// over the threads is its *layout*: a thread arrangement (a `Context`) over a
// padded, power-of-two shape, assigning threads to dims from the innermost
// out (coalesced loads), and for each of the tile's dims the context dim it
// runs along, or none (a unit dim, replicated across those threads).
//
// Each top-level loop body has a main context, the arrangement of its
// largest tile; tiles that fit it (right-aligned, each dim equal or 1) use
// it, so broadcasting and reductions need no data movement: a reduction
// combines a thread's own elements, then across the threads of that dim
// (warp shuffles, or shared memory across warps). Tiles that do not fit get
// a context of their own; values cross contexts through shared memory.
// Matrix products stage their operands in shared memory (the tensor-core
// path is separate).
//
// Masking: each tile dim knows its valid extent (a tile's valid count at the
// end of a dimension, or a tensor size below its power-of-two padding).
// Loads read 0 past it, stores skip it, reductions and the K loop of
// products stop at it.
//
//===----------------------------------------------------------------------===//

#include "lowering/EmitCuda.h"
#include "lowering/Config.h"
#include "lowering/LaunchArg.h"
#include "lowering/Passes.h"
#include "lowering/TypeInference.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <nlohmann/json.hpp>

#include <numeric>
#include <set>

using namespace mlir;
using namespace kite;

namespace {

//===----------------------------------------------------------------------===//
// Layouts
//===----------------------------------------------------------------------===//

/// A thread arrangement over a padded shape.
struct Context {
  int id = 0;
  SmallVector<int64_t> shape; // powers of two
  SmallVector<int64_t> tpd;   // threads along each dim
  SmallVector<int64_t> vec;   // contiguous elements a thread holds per chunk
  SmallVector<int64_t> tstride; // thread-index stride of each dim
  int64_t used = 1;             // threads that hold distinct elements

  int64_t rank() const { return shape.size(); }
  int64_t perThread(int64_t d) const { return shape[d] / tpd[d]; }
  std::string t(int64_t d) const { return llvm::formatv("c{0}_t{1}", id, d); }
};

/// One dim of a tile value.
struct Dim {
  int64_t padded = 1;  // power-of-two size (1: a unit dim)
  int64_t ctxDim = -1; // the context dim it runs along; -1 for a unit dim
  std::string extent;  // valid count when lanes past it are masked, or ""
  int64_t regExtent = 1;
  int64_t regStride = 0;
};

/// A tile value: a per-thread array `name[regCount]`.
struct Tile {
  std::string name;
  Type elem;
  Context *ctx = nullptr;
  SmallVector<Dim> dims;
  int64_t regCount = 1;
  int64_t rank() const { return dims.size(); }
};

/// A tensor in global memory: a pointer expression, static sizes, strides.
struct TensorRef {
  std::string ptr;
  Type elem;
  SmallVector<int64_t> sizes, strides;
  int64_t align = 16; // bytes the data pointer is aligned to
};

/// The scalars of a tile loop variable.
struct SpanVars {
  std::string begin, valid, id, count;
  int64_t blockSize = 1;
  bool exact = false;     // every tile is full: no mask needed
  int64_t alignElems = 1; // every begin is a multiple of this
  int64_t upperConst = -1; // the loop's end, where it is a constant
};

std::string cType(Type t) {
  if (t.isBF16())
    return "bf16";
  if (t.isF16())
    return "f16";
  if (t.isF32())
    return "float";
  if (t.isF64())
    return "double";
  if (t.isInteger(1))
    return "bool";
  if (t.isInteger(8))
    return "signed char";
  if (t.isInteger(32))
    return "int";
  if (t.isInteger(64))
    return "i64";
  return "<unsupported>";
}

/// The type elementwise math runs in: f32 for 16-bit floats.
std::string computeType(Type t) {
  if (t.isBF16() || t.isF16())
    return "float";
  return cType(t);
}

/// The type a reduction accumulates in (PyTorch: f32 for 16-bit floats,
/// i64 for integer sums).
std::string accType(Type t) { return computeType(t); }

/// Bytes of one element in global memory (0 if unknown).
int64_t elemBytes(Type t) {
  if (t.isInteger(1))
    return 1;
  if (t.isIntOrFloat())
    return t.getIntOrFloatBitWidth() / 8;
  return 0;
}

int64_t pow2(int64_t n) { return n <= 1 ? 1 : (int64_t)llvm::PowerOf2Ceil(n); }

std::string floatLiteral(double v) {
  if (std::isinf(v))
    return v > 0 ? "__int_as_float(0x7f800000)" : "(-__int_as_float(0x7f800000))";
  if (std::isnan(v))
    return "__int_as_float(0x7fc00000)";
  std::string s = llvm::formatv("{0:e9}", v).str();
  return s;
}

//===----------------------------------------------------------------------===//
// The emitter
//===----------------------------------------------------------------------===//

/// Dynamic shared memory a block may use on sm_90 (227 KB).
constexpr int64_t kMaxSharedBytes = 232448;

class Emitter {
public:
  Emitter(func::FuncOp kernel, const EmitOptions &options)
      : kernel(kernel), options(options) {}

  FailureOr<CudaKernel> run();

private:
  func::FuncOp kernel;
  EmitOptions options;
  CudaKernel result;
  int64_t numThreads = 128;
  /// Contiguous elements a thread holds along a context's innermost dim: 16
  /// bytes of the kernel's narrowest tensor element, so loads and stores of
  /// contiguous rows can be 16-byte vectors.
  int64_t vecElems = 4;
  /// The config's inner_threads: at most this many threads along a
  /// context's innermost dim (0: no limit).
  int64_t innerThreads = 0;
  /// The config's fast_math and tensor_cores.
  bool fastMath = false;
  /// The config's streaming: vector loads and stores evict first.
  bool streaming = false;
  bool tensorCores = false;
  /// The config's min_programs_per_sm (__launch_bounds__'s second value).
  int64_t minPrograms = 1;
  /// A K loop runs as one of kite_gemm.cuh's main loops.
  bool usesGemm = false;
  /// One of them is warp-specialized (the only code that may run with a
  /// thread count that is not a power of two: 12 warps).
  bool specializedLoop = false;
  std::string body;
  int indent = 1;
  int nextName = 0;
  int64_t sharedBytes = 0;
  std::vector<std::unique_ptr<Context>> contexts;
  Context *mainContext = nullptr;
  DenseMap<Value, Tile> tiles;
  DenseMap<Value, std::string> scalars;
  DenseMap<Value, TensorRef> tensors;
  DenseMap<Value, SpanVars> spans;
  std::string contextDecls;

  // Output ---------------------------------------------------------------

  void line(const Twine &text) {
    // Every line repeats the directive: a lone #line would number the
    // generated lines after it as the source lines that follow.
    if (!sourceLine.empty()) {
      body.append(indent * 2, ' ');
      body += sourceLine;
      body += '\n';
    }
    body.append(indent * 2, ' ');
    body += text.str();
    body += '\n';
  }
  std::string fresh(StringRef prefix) {
    return (prefix + Twine(nextName++)).str();
  }
  /// With line directives on, the lines emitted from here on are
  /// attributed to `op`'s source line.
  void lineDirective(Operation *op) {
    if (!options.lineDirectives)
      return;
    if (auto loc = dyn_cast<FileLineColLoc>(op->getLoc()))
      sourceLine =
          llvm::formatv("#line {0} \"{1}\"", loc.getLine(), loc.getFilename().str()).str();
  }
  std::string sourceLine; // the current #line directive, or ""

  // Contexts and layouts ---------------------------------------------------

  Context *newContext(ArrayRef<int64_t> shape) {
    auto ctx = std::make_unique<Context>();
    ctx->id = contexts.size();
    ctx->shape.assign(shape.begin(), shape.end());
    int64_t r = shape.size();
    ctx->tpd.assign(r, 1);
    ctx->vec.assign(r, 1);
    ctx->tstride.assign(r, 1);
    // The layout's threads: a power of two (with 12 warps the last 4 hold
    // replicas of the first 4's elements, and owner() keeps them quiet).
    int64_t remaining = (int64_t)llvm::bit_floor((uint64_t)numThreads), stride = 1;
    for (int64_t d = r - 1; d >= 0; --d) {
      int64_t v = d == r - 1 ? std::min<int64_t>(shape[d], vecElems) : 1;
      ctx->vec[d] = v;
      int64_t limit = remaining;
      if (d == r - 1 && innerThreads > 0)
        limit = std::min(limit, innerThreads);
      ctx->tpd[d] = std::max<int64_t>(1, std::min(shape[d] / v, limit));
      ctx->tstride[d] = stride;
      stride *= ctx->tpd[d];
      remaining /= ctx->tpd[d];
    }
    ctx->used = stride;
    for (int64_t d = 0; d < r; ++d) {
      std::string index = ctx->tpd[d] == 1 ? "0"
                          : ctx->tstride[d] == 1
                              ? llvm::formatv("threadIdx.x % {0}", ctx->tpd[d]).str()
                              : llvm::formatv("(threadIdx.x / {0}) % {1}", ctx->tstride[d],
                                              ctx->tpd[d]).str();
      contextDecls += llvm::formatv("  const int {0} = {1};\n", ctx->t(d), index);
    }
    contexts.push_back(std::move(ctx));
    return contexts.back().get();
  }

  /// The dims of a tile of `padded` shape laid out along `ctx`
  /// (right-aligned); failure if it does not fit.
  FailureOr<SmallVector<Dim>> fit(ArrayRef<int64_t> padded, Context *ctx) {
    int64_t off = ctx->rank() - (int64_t)padded.size();
    if (off < 0)
      return failure();
    SmallVector<Dim> dims(padded.size());
    for (size_t i = 0; i < padded.size(); ++i) {
      dims[i].padded = padded[i];
      if (padded[i] == 1)
        dims[i].ctxDim = -1;
      else if (padded[i] == ctx->shape[off + i])
        dims[i].ctxDim = off + i;
      else
        return failure();
    }
    return dims;
  }

  /// A layout for a fresh tile of `padded` shape: the main context if it
  /// fits, else a context of its own.
  std::pair<Context *, SmallVector<Dim>> layoutFor(ArrayRef<int64_t> padded) {
    if (mainContext)
      if (auto dims = fit(padded, mainContext); succeeded(dims))
        return {mainContext, *dims};
    for (auto &ctx : contexts)
      if (ctx->shape == SmallVector<int64_t>(padded))
        return {ctx.get(), *fit(padded, ctx.get())};
    Context *ctx = newContext(padded);
    return {ctx, *fit(padded, ctx)};
  }

  /// Fills in register extents and strides, names and declares the array.
  /// Most elements one thread may hold for one tile: beyond this the
  /// unrolled code is too big to compile in reasonable time, and spills.
  static constexpr int64_t kMaxRegistersPerTile = 128;
  std::string tooBig; // set when a tile exceeds kMaxRegistersPerTile
  /// The tensors (by pointer expression) this program stored to since its
  /// last barrier; a load of one needs a barrier first (emitAccess).
  std::set<std::string> storedSinceBarrier;

  Tile declare(Type elem, Context *ctx, SmallVector<Dim> dims,
               StringRef prefix = "v") {
    Tile t;
    t.name = fresh(prefix);
    t.elem = elem;
    t.ctx = ctx;
    t.dims = std::move(dims);
    int64_t stride = 1;
    for (int64_t i = t.rank() - 1; i >= 0; --i) {
      Dim &d = t.dims[i];
      d.regExtent = d.ctxDim < 0 ? 1 : ctx->perThread(d.ctxDim);
      d.regStride = stride;
      stride *= d.regExtent;
    }
    t.regCount = stride;
    std::string shape;
    for (const Dim &d : t.dims)
      shape += (shape.empty() ? "" : ", ") + std::to_string(d.padded);
    if (t.regCount > kMaxRegistersPerTile && tooBig.empty())
      tooBig = llvm::formatv("a ({0}) tile would need {1} registers per thread "
                             "with {2} threads (at most {3}); use smaller block "
                             "sizes, more warps, or a looped reduction",
                             shape, t.regCount, numThreads, kMaxRegistersPerTile);
    line(llvm::formatv("{0} {1}[{2}]; // ({3}) in context {4}", cType(elem),
                       t.name, t.regCount, shape, ctx->id));
    return t;
  }

  /// The value of an index expression that is an integer literal.
  static std::optional<int64_t> literal(StringRef e) {
    int64_t v;
    if (e.getAsInteger(10, v))
      return std::nullopt;
    return v;
  }

  /// True if `e` is one parenthesized expression, "(...)".
  static bool parenthesized(StringRef e) {
    if (!e.starts_with("("))
      return false;
    int depth = 0;
    for (size_t i = 0; i < e.size(); ++i) {
      depth += e[i] == '(' ? 1 : e[i] == ')' ? -1 : 0;
      if (depth == 0)
        return i + 1 == e.size();
    }
    return false;
  }

  /// `k + e` for a per-thread index `k`, folded when `k` is a literal.
  static std::string plus(StringRef k, int64_t e) {
    if (std::optional<int64_t> v = literal(k))
      return std::to_string(*v + e);
    return e == 0 ? k.str() : llvm::formatv("{0} + {1}", k, e).str();
  }

  /// Emits nested loops over a tile's per-thread elements; `emitBody`
  /// receives the per-dim index expressions. With `step` > 1 dim `stepDim`
  /// (default: the last) advances `step` elements at a time (a vector
  /// access).
  void forEach(const Tile &t,
               llvm::function_ref<void(ArrayRef<std::string>)> emitBody,
               int64_t step = 1, int64_t stepDim = -1) {
    SmallVector<std::string> k;
    int opened = 0;
    if (stepDim < 0)
      stepDim = t.rank() - 1;
    for (auto [i, d] : llvm::enumerate(t.dims)) {
      int64_t s = (int64_t)i == stepDim ? step : 1;
      if (d.regExtent == s) {
        k.push_back("0");
        continue;
      }
      std::string var = fresh("k");
      line("#pragma unroll");
      line(llvm::formatv("for (int {0} = 0; {0} < {1}; ++{0}) {{", var,
                         d.regExtent / s));
      ++indent;
      ++opened;
      k.push_back(s == 1 ? var : llvm::formatv("({0} * {1})", var, s).str());
    }
    emitBody(k);
    for (int i = 0; i < opened; ++i) {
      --indent;
      line("}");
    }
  }

  std::string flat(const Tile &t, ArrayRef<std::string> k) {
    std::string s;
    int64_t constant = 0; // literal indices, folded
    for (size_t i = 0; i < t.dims.size(); ++i) {
      if (t.dims[i].regExtent == 1)
        continue;
      if (std::optional<int64_t> v = literal(k[i])) {
        constant += *v * t.dims[i].regStride;
        continue;
      }
      if (!s.empty())
        s += " + ";
      s += t.dims[i].regStride == 1
               ? k[i]
               : llvm::formatv("{0} * {1}", k[i], t.dims[i].regStride).str();
    }
    if (s.empty())
      return std::to_string(constant);
    return constant ? s + " + " + std::to_string(constant) : s;
  }

  /// The coordinate, within the tile, of element `k` along dim `i`.
  std::string coord(const Tile &t, int64_t i, StringRef k) {
    const Dim &d = t.dims[i];
    if (d.ctxDim < 0)
      return "0";
    Context *c = t.ctx;
    int64_t T = c->tpd[d.ctxDim], V = c->vec[d.ctxDim];
    std::string tv = c->t(d.ctxDim);
    if (T == 1 && V == 1)
      return k.str();
    // The first element of this thread's chunks.
    std::string lane = V == 1 ? tv : llvm::formatv("{0} * {1}", tv, V).str();
    if (std::optional<int64_t> v = literal(k)) {
      // Element `v` of the thread's chunks: chunk v / V, lane v % V.
      int64_t base = (*v / V) * T * V + *v % V;
      return base ? llvm::formatv("({0} + {1})", lane, base).str() : "(" + lane + ")";
    }
    // A whole run, "(k12 * S)" with S a multiple of V: chunk k12 * S / V.
    if (StringRef inner = k; parenthesized(k)) {
      inner = inner.drop_front().drop_back();
      auto [name, factor] = inner.split(" * ");
      std::optional<int64_t> S = literal(factor);
      if (S && *S % V == 0 && !name.contains(' ') && !name.empty() && !literal(name))
        return llvm::formatv("({0} * {1} + {2})", name, *S * T, lane);
    }
    // `k` may be a sum ("k12 + 3", an element of a vector run).
    std::string kp = k.contains(' ') && !parenthesized(k) ? "(" + k.str() + ")" : k.str();
    if (V == 1)
      return llvm::formatv("({0} * {1} + {2})", kp, T, tv);
    return llvm::formatv("(({0} / {1}) * {2} + {3} * {1} + ({0} % {1}))", kp, V,
                         T * V, tv);
  }

  /// `name[...]` of operand `o` at the element `k` of a tile whose dim
  /// `j + offset` is the operand's dim `j` (broadcasting unit dims).
  std::string at(const Tile &o, ArrayRef<std::string> k, int64_t offset) {
    std::string s;
    for (size_t j = 0; j < o.dims.size(); ++j) {
      if (o.dims[j].regExtent == 1)
        continue;
      if (!s.empty())
        s += " + ";
      const std::string &kk = k[j + offset];
      s += o.dims[j].regStride == 1
               ? kk
               : llvm::formatv("{0} * {1}", kk, o.dims[j].regStride).str();
    }
    return o.name + "[" + (s.empty() ? "0" : s) + "]";
  }

  /// True if `o` can be read at the elements of `r` with `at`: each of its
  /// non-unit dims runs along the same context dim as `r`'s dim there.
  bool compatible(const Tile &o, const Tile &r, int64_t offset) {
    bool allUnit = llvm::all_of(o.dims, [](const Dim &d) { return d.ctxDim < 0; });
    if (allUnit)
      return true; // replicated on every thread
    if (o.ctx != r.ctx)
      return false;
    for (size_t j = 0; j < o.dims.size(); ++j) {
      if (o.dims[j].ctxDim < 0)
        continue;
      int64_t i = j + offset;
      if (i < 0 || i >= r.rank() || r.dims[i].ctxDim != o.dims[j].ctxDim)
        return false;
    }
    return true;
  }

  /// The condition under which this thread is the one that writes tile
  /// `t`'s elements (replicas stay quiet), or "" if every thread is.
  std::string owner(const Tile &t) {
    SmallVector<std::string> conds;
    if (t.ctx->used < numThreads)
      conds.push_back(llvm::formatv("threadIdx.x < {0}", t.ctx->used));
    for (int64_t cd = 0; cd < t.ctx->rank(); ++cd) {
      if (t.ctx->tpd[cd] == 1)
        continue;
      bool covered = llvm::any_of(t.dims, [&](const Dim &d) { return d.ctxDim == cd; });
      if (!covered)
        conds.push_back(t.ctx->t(cd) + " == 0");
    }
    return llvm::join(conds, " && ");
  }

  /// Bytes of dynamic shared memory at least `bytes` long.
  std::string smem(const std::string &type, int64_t count) {
    sharedBytes = std::max<int64_t>(sharedBytes, count * 8);
    return llvm::formatv("reinterpret_cast<{0}*>(kite_smem)", type);
  }

  /// Moves `src` into the layout `dims` of context `ctx` through shared
  /// memory (row-major over the padded shape).
  Tile convert(const Tile &src, Context *ctx, SmallVector<Dim> dims) {
    for (size_t i = 0; i < dims.size(); ++i)
      dims[i].extent = src.dims[i].extent;
    Tile dst = declare(src.elem, ctx, dims);
    std::string buf = fresh("s");
    line("{");
    ++indent;
    line(llvm::formatv("{0}* {1} = {2};", cType(src.elem), buf,
                       smem(cType(src.elem), paddedCount(src))));
    auto index = [&](const Tile &t, ArrayRef<std::string> k) {
      std::string s = "0";
      int64_t stride = 1;
      for (int64_t i = t.rank() - 1; i >= 0; --i) {
        s = llvm::formatv("{0} + {1} * {2}", s, coord(t, i, k[i]), stride);
        stride *= t.dims[i].padded;
      }
      return s;
    };
    line("__syncthreads();");
    std::string own = owner(src);
    forEach(src, [&](ArrayRef<std::string> k) {
      line(llvm::formatv("{0}{1}[{2}] = {3}[{4}];",
                         own.empty() ? "" : "if (" + own + ") ", buf,
                         index(src, k), src.name, flat(src, k)));
    });
    line("__syncthreads();");
    forEach(dst, [&](ArrayRef<std::string> k) {
      line(llvm::formatv("{0}[{1}] = {2}[{3}];", dst.name, flat(dst, k), buf,
                         index(dst, k)));
    });
    line("__syncthreads();");
    --indent;
    line("}");
    return dst;
  }

  int64_t paddedCount(const Tile &t) {
    int64_t n = 1;
    for (const Dim &d : t.dims)
      n *= d.padded;
    return n;
  }

  /// `o` in a layout readable at the elements of `r` (dims aligned at
  /// `offset`), converting through shared memory if needed.
  Tile readableAt(const Tile &o, const Tile &r, int64_t offset) {
    if (compatible(o, r, offset))
      return o;
    SmallVector<Dim> dims(o.dims);
    for (size_t j = 0; j < dims.size(); ++j) {
      int64_t i = j + offset;
      if (dims[j].padded == 1) {
        dims[j].ctxDim = -1;
        continue;
      }
      dims[j].ctxDim = r.dims[i].ctxDim;
    }
    return convert(o, r.ctx, dims);
  }

  // Values ------------------------------------------------------------------

  std::string scalar(Value v) {
    auto it = scalars.find(v);
    if (it != scalars.end())
      return it->second;
    if (std::optional<int64_t> c = getConstantIntValue(v))
      return std::to_string(*c) + (v.getType().isInteger(64) ? "LL" : "");
    return "<missing scalar>";
  }

  /// A tile, or a scalar broadcast as a unit tile of rank 0.
  FailureOr<Tile> tileOrScalar(Value v) {
    auto it = tiles.find(v);
    if (it != tiles.end())
      return it->second;
    if (v.getType().isIntOrFloat()) {
      Tile t;
      t.name = "(&" + scalarVar(v) + ")";
      t.elem = v.getType();
      t.ctx = mainContext ? mainContext : contexts.front().get();
      t.regCount = 1;
      return t;
    }
    return failure();
  }

  /// A named variable holding scalar `v` (so it can be addressed).
  std::string scalarVar(Value v) {
    std::string expr = scalar(v);
    std::string name = fresh("x");
    line(llvm::formatv("const {0} {1} = {2};", cType(v.getType()), name, expr));
    return name;
  }

  /// Strides of a contiguous tensor of `sizes`.
  static SmallVector<int64_t> contiguousStrides(ArrayRef<int64_t> sizes) {
    SmallVector<int64_t> strides(sizes.size());
    int64_t st = 1;
    for (int64_t d = sizes.size() - 1; d >= 0; --d) {
      strides[d] = st;
      st *= sizes[d];
    }
    return strides;
  }

  /// An output the host allocates before the launch, passed as a parameter.
  void addOutput(Value tensor, bool zeroed) {
    auto t = cast<kite::TensorType>(tensor.getType());
    CudaKernel::Output out;
    out.name = "o" + std::to_string(result.outputs.size());
    out.dtype = dtypeName(t.getElementType());
    out.sizes.assign(t.getShape().begin(), t.getShape().end());
    out.zeroed = zeroed;
    TensorRef ref;
    ref.ptr = out.name;
    ref.elem = t.getElementType();
    ref.sizes = out.sizes;
    ref.strides = contiguousStrides(ref.sizes);
    result.params.push_back(
        {CudaKernel::Param::Kind::OutputData, (unsigned)result.outputs.size()});
    result.outputs.push_back(out);
    tensors[tensor] = ref;
  }

  // Kernel structure ----------------------------------------------------------

  LogicalResult emitPrologue();
  LogicalResult emitTopLevelLoops();
  LogicalResult emitBlock(Block &block);
  LogicalResult emitOp(Operation *op);
  LogicalResult emitScalarOp(Operation *op);
  LogicalResult emitNestedTileFor(TileForOp loop);
  LogicalResult emitMainloop(TileForOp loop, DictionaryAttr plan);
  LogicalResult emitNestedGridFor(GridForOp loop);
  LogicalResult emitScfFor(scf::ForOp loop);
  LogicalResult emitScfIf(scf::IfOp op);
  SmallVector<Tile> declareCarried(ValueRange inits, Block::BlockArgListType args,
                                   Operation *op);
  LogicalResult yieldCarried(ArrayRef<Tile> carried, ValueRange values,
                             Block::BlockArgListType args);
  /// Emits a loop's body and yield, closes its `opened` C++ loops, and binds
  /// the loop's results to the carried variables.
  LogicalResult finishLoop(Block &body, ArrayRef<Tile> carried,
                           Block::BlockArgListType iterArgs, ResultRange results,
                           int opened);
  void defineSpan(Value span, StringRef begin, StringRef upper, int64_t bs,
                  int64_t lower, int64_t upperConst, StringRef id, StringRef count);

  // Tile ops --------------------------------------------------------------------

  FailureOr<Tile> subscriptShape(Operation *op, Value tensor,
                                 ArrayRef<Subscript> subs, Type resultElem,
                                 SmallVector<int64_t> &shape,
                                 SmallVector<std::string> &extents);
  int64_t vectorWidth(const TensorRef &ref, ArrayRef<Subscript> subs, const Tile &t,
                      const llvm::SmallDenseSet<int32_t> &checked);
  LogicalResult emitAccess(Operation *op, Value tensor, ArrayRef<Subscript> subs,
                           Value mask, Value value, Value result,
                           std::optional<AtomicKind> atomic);
  LogicalResult emitElementwise(Operation *op, ArrayRef<Value> operands,
                                llvm::function_ref<std::string(ArrayRef<std::string>)> expr,
                                Type resultElem);
  LogicalResult emitReduce(ReduceOp op);
  LogicalResult emitMatmul(Operation *op, Value acc, Value lhs, Value rhs,
                           int64_t rank);
  LogicalResult emitFull(FullOp op);
  LogicalResult emitShape(Operation *op);

  SmallVector<int64_t> staticShape(Type t) {
    auto tile = cast<TileType>(t);
    return SmallVector<int64_t>(tile.getShape());
  }
};

//===----------------------------------------------------------------------===//
// Kernel structure
//===----------------------------------------------------------------------===//

FailureOr<CudaKernel> Emitter::run() {
  result.name = kernel.getSymName().str();
  result.symbol = "kite_" + result.name;
  auto configAttr = kernel->getAttrOfType<StringAttr>("kite.config");
  if (!configAttr)
    return kernel.emitError() << "kernel has no config (run kite-apply-config first)",
           failure();
  nlohmann::json config = nlohmann::json::parse(configAttr.getValue().str(),
                                                nullptr, false);
  numThreads = 32 * config.value("num_warps", 4);
  result.numThreads = numThreads;
  if (auto it = config.find("inner_threads"); it != config.end() && it->is_number_integer())
    innerThreads = it->get<int64_t>();
  fastMath = config.value("fast_math", false);
  streaming = config.value("streaming", false);
  tensorCores = config.value("tensor_cores", false);
  minPrograms = config.value("min_programs_per_sm", 1);
  int64_t narrowest = 0;
  kernel.walk([&](Operation *op) {
    auto visit = [&](Type t) {
      if (auto tt = dyn_cast<kite::TensorType>(t))
        if (int64_t b = elemBytes(tt.getElementType()))
          narrowest = narrowest ? std::min(narrowest, b) : b;
    };
    for (Type t : op->getResultTypes())
      visit(t);
    for (Region &r : op->getRegions())
      for (Block &b : r)
        for (BlockArgument a : b.getArguments())
          visit(a.getType());
  });
  if (narrowest)
    vecElems = std::clamp<int64_t>(16 / narrowest, 1, 8);

  // Every type must be static by now.
  WalkResult walk = kernel.walk([&](Operation *op) {
    for (Type t : op->getResultTypes()) {
      if (auto tile = dyn_cast<TileType>(t);
          tile && (!tile.hasStaticShape() || !tile.hasElementType())) {
        op->emitError() << "tile type " << t
                        << " is not static; the kernel must be specialized "
                           "and configured before CUDA emission";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  if (failed(emitPrologue()) || failed(emitTopLevelLoops()))
    return failure();
  if (!tooBig.empty())
    return kernel.emitError() << "the config does not fit: " << tooBig, failure();
  if (!llvm::isPowerOf2_64(numThreads) && !specializedLoop)
    return kernel.emitError() << "the config does not fit: num_warps = " << numThreads / 32
                              << " is only for a warp-specialized matrix-product K loop, "
                                 "and the kernel has none that kite-matmul-mainloop took",
           failure();
  if (sharedBytes > kMaxSharedBytes)
    return kernel.emitError() << "the config does not fit: it needs " << sharedBytes
                              << " bytes of shared memory (at most " << kMaxSharedBytes
                              << " on sm_90); use smaller block sizes",
           failure();

  // Kernel signature.
  std::string params;
  for (const CudaKernel::Param &p : result.params) {
    if (!params.empty())
      params += ", ";
    switch (p.kind) {
    case CudaKernel::Param::Kind::ArgData: {
      BlockArgument arg = kernel.getArgument(p.index);
      params += cType(getElementTypeOrNull(arg.getType())) + "* __restrict__ a" +
                std::to_string(p.index);
      break;
    }
    case CudaKernel::Param::Kind::OutputData:
      params += cType(parseDType(kernel.getContext(), result.outputs[p.index].dtype)) +
                "* __restrict__ o" +
                std::to_string(p.index);
      break;
    case CudaKernel::Param::Kind::ArgScalar: {
      BlockArgument arg = kernel.getArgument(p.index);
      params += cType(arg.getType()) + " a" + std::to_string(p.index);
      break;
    }
    case CudaKernel::Param::Kind::ArgTensorMap:
      params += "const __grid_constant__ KiteTensorMap " + p.name;
      break;
    }
  }
  result.sharedBytes = sharedBytes;
  std::string src;
  llvm::raw_string_ostream os(src);
  os << "// Generated by kite from kernel '" << result.name << "'.\n";
  os << "// config: " << configAttr.getValue() << "\n";
  os << "#include \"kite_device.cuh\"\n";
  if (usesGemm)
    os << "#include \"kite_gemm.cuh\"\n";
  os << "using namespace kite_device;\n\n";
  os << "extern \"C\" __global__ void __launch_bounds__(" << numThreads;
  if (minPrograms > 1)
    os << ", " << minPrograms;
  os << ") "
     << result.symbol << "(" << params << ") {\n";
  if (sharedBytes)
    os << "  extern __shared__ __align__(16) unsigned char kite_smem[];\n";
  os << contextDecls;
  os << body;
  os << "}\n";
  result.source = os.str();
  return result;
}

LogicalResult Emitter::emitPrologue() {
  Block &entry = kernel.getBody().front();
  // Parameters: tensors by data pointer, scalars by value.
  for (BlockArgument arg : entry.getArguments()) {
    unsigned i = arg.getArgNumber();
    if (auto t = dyn_cast<kite::TensorType>(arg.getType())) {
      TensorRef ref;
      ref.ptr = "a" + std::to_string(i);
      ref.elem = t.getElementType();
      ref.sizes.assign(t.getShape().begin(), t.getShape().end());
      if (auto s = kernel.getArgAttrOfType<DenseI64ArrayAttr>(i, "kite.strides"))
        ref.strides.assign(s.asArrayRef().begin(), s.asArrayRef().end());
      if (auto a = kernel.getArgAttrOfType<IntegerAttr>(i, "kite.align"))
        ref.align = a.getInt();
      tensors[arg] = ref;
      result.params.push_back({CudaKernel::Param::Kind::ArgData, i});
    } else {
      scalars[arg] = "a" + std::to_string(i);
      result.params.push_back({CudaKernel::Param::Kind::ArgScalar, i});
    }
  }
  // The main context is chosen per top-level loop; prologue scalars need
  // none.
  for (Operation &op : entry) {
    if (isa<TileForOp, GridForOp>(op))
      continue;
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (Value v : ret.getOperands()) {
        Operation *def = v.getDefiningOp();
        if (auto arg = dyn_cast<BlockArgument>(v)) {
          result.results.push_back({CudaKernel::Result::Kind::Arg, arg.getArgNumber()});
          continue;
        }
        auto it = llvm::find_if(result.outputs, [&](const CudaKernel::Output &o) {
          return o.name == tensors[v].ptr;
        });
        if (it == result.outputs.end())
          return ret.emitError() << "kite can only return parameters and tensors "
                                    "allocated with empty/zeros (a reshaped "
                                    "tensor cannot be returned yet)";
        (void)def;
        result.results.push_back(
            {CudaKernel::Result::Kind::Output, (unsigned)(it - result.outputs.begin())});
      }
      continue;
    }
    if (failed(emitOp(&op)))
      return failure();
  }
  return success();
}

void Emitter::defineSpan(Value span, StringRef begin, StringRef upper, int64_t bs,
                         int64_t lower, int64_t upperConst, StringRef id,
                         StringRef count) {
  SpanVars v;
  v.begin = fresh("b");
  v.valid = fresh("n");
  v.id = id.str();
  v.count = count.str();
  v.blockSize = bs;
  v.exact = upperConst >= 0 && lower >= 0 && (upperConst - lower) % bs == 0;
  v.alignElems = lower >= 0 ? (int64_t)std::gcd(lower, bs) : 1;
  v.upperConst = upperConst;
  line(llvm::formatv("const i64 {0} = {1};", v.begin, begin));
  line(llvm::formatv("const i64 {0} = min((i64){1}, (i64)({2}) - {3});", v.valid,
                     bs, upper, v.begin));
  spans[span] = v;
}

LogicalResult Emitter::emitTopLevelLoops() {
  Block &entry = kernel.getBody().front();
  SmallVector<Operation *> loops;
  for (Operation &op : entry)
    if (isa<TileForOp, GridForOp>(op))
      loops.push_back(&op);
  if (loops.empty())
    return kernel.emitError() << "kernel has no top-level tile() or grid() loop "
                                 "to map onto the GPU";
  auto configAttr = kernel->getAttrOfType<StringAttr>("kite.config");
  nlohmann::json config = nlohmann::json::parse(configAttr.getValue().str(),
                                                nullptr, false);
  std::vector<std::vector<int64_t>> loopOrders =
      config.value("loop_orders", std::vector<std::vector<int64_t>>{});

  std::vector<int64_t> l2Groupings =
      config.value("l2_groupings", std::vector<int64_t>{});
  std::string pidType = config.value("pid_type", std::string("flat"));

  // Programs per top-level loop, to lay out the program-id space first.
  int64_t totalPrograms = 0;
  SmallVector<SmallVector<int64_t>> allCounts;
  for (Operation *loopOp : loops) {
    SmallVector<int64_t> counts;
    int64_t n = 1;
    auto add = [&](ValueRange lbs, ValueRange ubs, SmallVector<int64_t> bss) {
      for (size_t d = 0; d < lbs.size(); ++d) {
        int64_t lb = getConstantIntValue(lbs[d]).value_or(0);
        int64_t ub = getConstantIntValue(ubs[d]).value_or(0);
        counts.push_back(std::max<int64_t>(0, llvm::divideCeil(ub - lb, std::max<int64_t>(bss[d], 1))));
        n *= counts.back();
      }
    };
    if (auto t = dyn_cast<TileForOp>(loopOp)) {
      SmallVector<int64_t> bss;
      for (Value b : t.getBlockSizes())
        bss.push_back(getConstantIntValue(b).value_or(1));
      add(t.getLowerBounds(), t.getUpperBounds(), bss);
    } else {
      auto g = cast<GridForOp>(loopOp);
      add(g.getLowerBounds(), g.getUpperBounds(),
          SmallVector<int64_t>(g.getNumDims(), 1));
    }
    allCounts.push_back(counts);
    totalPrograms += n;
  }
  bool xyz = pidType == "xyz";
  if (xyz && (loops.size() != 1 || allCounts[0].size() > 3))
    return kernel.emitError() << "pid_type 'xyz' needs a single top-level loop of "
                                 "at most 3 dims; use 'flat'";
  result.grid = {std::max<int64_t>(totalPrograms, 1), 1, 1};
  int closeLoops = 0;
  if (pidType == "persistent_interleaved" || pidType == "persistent_blocked") {
    // Each program loops over the program ids; the plan launches as many
    // programs as the SMs hold at once.
    result.persistent = true;
    if (pidType == "persistent_interleaved") {
      line(llvm::formatv("for (i64 kite_pid = blockIdx.x; kite_pid < {0}; "
                         "kite_pid += gridDim.x) {{",
                         totalPrograms));
    } else {
      line(llvm::formatv("const i64 kite_chunk = ({0} + gridDim.x - 1) / gridDim.x;",
                         totalPrograms));
      line(llvm::formatv("for (i64 kite_pid = blockIdx.x * kite_chunk; kite_pid < "
                         "min((i64){0}, (i64)(blockIdx.x + 1) * kite_chunk); ++kite_pid) {{",
                         totalPrograms));
    }
    ++indent;
    closeLoops = 1;
  } else if (xyz) {
    // The last dim on x, then y, then z.
    const SmallVector<int64_t> &c = allCounts[0];
    int64_t r = c.size();
    result.grid = {c[r - 1], r > 1 ? c[r - 2] : 1, r > 2 ? c[r - 3] : 1};
    if (result.grid[1] > 65535 || result.grid[2] > 65535)
      return kernel.emitError() << "pid_type 'xyz' needs at most 65535 tiles along "
                                   "the y and z dims; use 'flat'";
    line("const i64 kite_pid = 0;");
  } else {
    line("const i64 kite_pid = blockIdx.x;");
  }
  int64_t offset = 0;
  for (auto [li, loopOp] : llvm::enumerate(loops)) {
    ValueRange lbs, ubs;
    SmallVector<int64_t> bss;
    Block *bodyBlock;
    if (auto t = dyn_cast<TileForOp>(loopOp)) {
      lbs = t.getLowerBounds();
      ubs = t.getUpperBounds();
      for (Value b : t.getBlockSizes())
        bss.push_back(getConstantIntValue(b).value_or(-1));
      bodyBlock = t.getBodyBlock();
    } else {
      auto g = cast<GridForOp>(loopOp);
      lbs = g.getLowerBounds();
      ubs = g.getUpperBounds();
      bss.assign(lbs.size(), 1);
      bodyBlock = g.getBodyBlock();
    }
    int64_t rank = lbs.size();
    SmallVector<int64_t> counts(rank), lows(rank), highs(rank);
    int64_t total = 1;
    for (int64_t d = 0; d < rank; ++d) {
      std::optional<int64_t> lb = getConstantIntValue(lbs[d]);
      std::optional<int64_t> ub = getConstantIntValue(ubs[d]);
      if (!lb || !ub || bss[d] < 1)
        return loopOp->emitError()
               << "the bounds of a top-level loop must be known when the kernel "
                  "is specialized (they depend on a run-time scalar; wrap it in "
                  "kite::specialize())";
      lows[d] = *lb;
      highs[d] = *ub;
      counts[d] = std::max<int64_t>(0, llvm::divideCeil(*ub - *lb, bss[d]));
      total *= counts[d];
    }
    // Choose the main context: the largest tile of the body.
    mainContext = nullptr;
    SmallVector<int64_t> biggest;
    int64_t biggestCount = 0;
    loopOp->walk([&](Operation *op) {
      for (Type t : op->getResultTypes())
        if (auto tile = dyn_cast<TileType>(t)) {
          SmallVector<int64_t> padded;
          int64_t n = 1;
          for (int64_t d : tile.getShape()) {
            padded.push_back(pow2(d));
            n *= pow2(d);
          }
          if (n > biggestCount) {
            biggestCount = n;
            biggest = padded;
          }
        }
    });
    if (biggest.empty())
      biggest.push_back(1);
    mainContext = newContext(biggest);

    lineDirective(loopOp);
    line(llvm::formatv("if (kite_pid >= {0} && kite_pid < {1}) {{", offset,
                       offset + total));
    ++indent;
    line(llvm::formatv("i64 kite_rest = kite_pid - {0};", offset));
    // Decompose: by default the last dim varies fastest.
    SmallVector<int64_t> order;
    if (li < loopOrders.size() && (int64_t)loopOrders[li].size() == rank)
      order.assign(loopOrders[li].begin(), loopOrders[li].end());
    else
      for (int64_t d = rank - 1; d >= 0; --d)
        order.push_back(d);
    SmallVector<std::string> ids(rank);
    int64_t group = li < l2Groupings.size() ? l2Groupings[li] : 1;
    if (xyz) {
      static const char *axes[] = {"blockIdx.x", "blockIdx.y", "blockIdx.z"};
      for (int64_t d = 0; d < rank; ++d) {
        ids[d] = fresh("i");
        line(llvm::formatv("const i64 {0} = {1};", ids[d], axes[rank - 1 - d]));
      }
    } else if (rank == 2 && group > 1) {
      // L2 grouping: `group` rows of tiles walk the columns together, so
      // neighbouring programs share operand tiles in L2.
      std::string g = fresh("grp"), first = fresh("first"), size = fresh("gsz"),
                  in = fresh("in");
      ids[0] = fresh("i");
      ids[1] = fresh("i");
      line(llvm::formatv("const i64 {0} = kite_rest / {1};", g, group * counts[1]));
      line(llvm::formatv("const i64 {0} = {1} * {2};", first, g, group));
      line(llvm::formatv("const i64 {0} = min((i64){1}, (i64){2} - {3});", size, group,
                         counts[0], first));
      line(llvm::formatv("const i64 {0} = kite_rest % {1};", in, group * counts[1]));
      line(llvm::formatv("const i64 {0} = {1} + {2} % {3};", ids[0], first, in, size));
      line(llvm::formatv("const i64 {0} = {1} / {2};", ids[1], in, size));
    } else {
      for (int64_t d : order) {
        if (d < 0 || d >= rank)
          return loopOp->emitError() << "loop_orders has an invalid dim " << d;
        ids[d] = fresh("i");
        line(llvm::formatv("const i64 {0} = kite_rest % {1};", ids[d], counts[d]));
        line(llvm::formatv("kite_rest /= {0};", counts[d]));
      }
    }
    for (int64_t d = 0; d < rank; ++d) {
      Value var = bodyBlock->getArgument(d);
      std::string begin = llvm::formatv("{0} + {1} * {2}", lows[d], ids[d], bss[d]);
      if (isa<SpanType>(var.getType())) {
        defineSpan(var, begin, std::to_string(highs[d]), bss[d], lows[d], highs[d],
                   ids[d], std::to_string(counts[d]));
      } else {
        std::string name = fresh("g");
        line(llvm::formatv("const i64 {0} = {1};", name, begin));
        scalars[var] = name;
      }
    }
    if (failed(emitBlock(*bodyBlock)))
      return failure();
    --indent;
    line("}");
    offset += total;
  }
  for (int i = 0; i < closeLoops; ++i) {
    --indent;
    line("}");
  }
  result.numPrograms = result.grid[0] * result.grid[1] * result.grid[2];
  return success();
}

LogicalResult Emitter::emitBlock(Block &block) {
  // Tensors written since the last barrier (storedSinceBarrier): a program
  // starts with none; a loop body's first read of a tensor the body writes
  // follows the previous iteration's writes; what a branch of an `if`
  // writes is kept, and what it clears by a barrier is not (the other
  // branch may not have one).
  Operation *parent = block.getParentOp();
  std::set<std::string> before = storedSinceBarrier;
  auto isLoop = [](Operation *op) { return isa<TileForOp, GridForOp, scf::ForOp>(op); };
  if (isLoop(parent) && isa<func::FuncOp>(parent->getParentOp())) {
    storedSinceBarrier.clear();
  } else if (isLoop(parent)) {
    parent->walk([&](Operation *op) {
      Value t;
      if (auto s = dyn_cast<StoreOp>(op))
        t = s.getTensor();
      else if (auto a = dyn_cast<AtomicOp>(op))
        t = a.getTensor();
      if (t && tensors.count(t))
        storedSinceBarrier.insert(tensors[t].ptr);
    });
  }
  for (Operation &op : block) {
    if (isa<YieldOp, scf::YieldOp>(op))
      continue;
    if (failed(emitOp(&op)))
      return failure();
  }
  if (isa<scf::IfOp>(parent))
    storedSinceBarrier.insert(before.begin(), before.end());
  return success();
}

SmallVector<Tile> Emitter::declareCarried(ValueRange inits,
                                          Block::BlockArgListType args,
                                          Operation *op) {
  SmallVector<Tile> carried;
  for (auto [init, arg] : llvm::zip(inits, args)) {
    if (auto it = tiles.find(init); it != tiles.end()) {
      Tile c = declare(it->second.elem, it->second.ctx, it->second.dims, "acc");
      forEach(c, [&](ArrayRef<std::string> k) {
        line(llvm::formatv("{0}[{1}] = {2}[{1}];", c.name, flat(c, k), it->second.name));
      });
      tiles[arg] = c;
      carried.push_back(c);
    } else {
      std::string name = fresh("acc");
      line(llvm::formatv("{0} {1} = {2};", cType(init.getType()), name, scalar(init)));
      scalars[arg] = name;
      Tile marker;
      marker.name = name;
      marker.regCount = 0; // a scalar
      carried.push_back(marker);
    }
  }
  return carried;
}

LogicalResult Emitter::yieldCarried(ArrayRef<Tile> carried, ValueRange values,
                                    Block::BlockArgListType args) {
  // Read every yielded value before writing any carried one (a yield may
  // swap them).
  SmallVector<std::string> temps;
  for (auto [c, v] : llvm::zip(carried, values)) {
    if (c.regCount == 0) {
      std::string t = fresh("y");
      line(llvm::formatv("const auto {0} = {1};", t, scalar(v)));
      temps.push_back(t);
      continue;
    }
    Tile src = tiles[v];
    if (!compatible(src, c, 0) || src.rank() != c.rank())
      src = convert(src, c.ctx, c.dims);
    Tile t = declare(c.elem, c.ctx, c.dims, "y");
    forEach(t, [&](ArrayRef<std::string> k) {
      line(llvm::formatv("{0}[{1}] = {2};", t.name, flat(t, k), at(src, k, 0)));
    });
    temps.push_back(t.name);
  }
  for (auto [c, t] : llvm::zip(carried, temps)) {
    if (c.regCount == 0) {
      line(llvm::formatv("{0} = {1};", c.name, t));
      continue;
    }
    line("#pragma unroll");
    line(llvm::formatv("for (int q = 0; q < {0}; ++q) {1}[q] = {2}[q];", c.regCount,
                       c.name, t));
  }
  return success();
}

LogicalResult Emitter::finishLoop(Block &body, ArrayRef<Tile> carried,
                                  Block::BlockArgListType iterArgs,
                                  ResultRange results, int opened) {
  if (failed(emitBlock(body)))
    return failure();
  if (failed(yieldCarried(carried, body.getTerminator()->getOperands(), iterArgs)))
    return failure();
  for (int i = 0; i < opened; ++i) {
    --indent;
    line("}");
  }
  for (auto [res, c, arg] : llvm::zip(results, carried, iterArgs)) {
    if (c.regCount == 0)
      scalars[res] = c.name;
    else
      tiles[res] = tiles[arg];
  }
  return success();
}

LogicalResult Emitter::emitNestedTileFor(TileForOp loop) {
  if (auto plan = loop->getAttrOfType<DictionaryAttr>("kite.mainloop"))
    return emitMainloop(loop, plan);
  SmallVector<Tile> carried =
      declareCarried(loop.getInitArgs(), loop.getRegionIterArgs(), loop);
  int opened = 0;
  for (unsigned d = 0; d < loop.getNumDims(); ++d) {
    std::optional<int64_t> bs = getConstantIntValue(loop.getBlockSizes()[d]);
    if (!bs || *bs < 1)
      return loop.emitError() << "block size is not a constant after config application";
    std::string lb = scalar(loop.getLowerBounds()[d]);
    std::string ub = scalar(loop.getUpperBounds()[d]);
    std::string it = fresh("t");
    std::string count = fresh("c");
    line(llvm::formatv("const i64 {0} = ((i64)({1}) - (i64)({2}) + {3}) / {4};", count,
                       ub, lb, *bs - 1, *bs));
    line(llvm::formatv("for (i64 {0} = 0; {0} < {1}; ++{0}) {{", it, count));
    ++indent;
    ++opened;
    int64_t lowC = getConstantIntValue(loop.getLowerBounds()[d]).value_or(-1);
    int64_t upC = getConstantIntValue(loop.getUpperBounds()[d]).value_or(-1);
    defineSpan(loop.getSpans()[d],
               llvm::formatv("(i64)({0}) + {1} * {2}", lb, it, *bs).str(), ub, *bs,
               lowC, upC, it, count);
  }
  return finishLoop(*loop.getBodyBlock(), carried, loop.getRegionIterArgs(),
                    loop.getResults(), opened);
}

/// A K loop that kite-matmul-mainloop marked: one call of a kite_gemm.cuh
/// main loop leaves the tile's f32 sums in shared memory; the loop's result
/// is the initial accumulator plus them, in the accumulator's layout.
LogicalResult Emitter::emitMainloop(TileForOp loop, DictionaryAttr plan) {
  Block *body = loop.getBodyBlock();
  Operation *product = body->getTerminator()->getOperand(0).getDefiningOp();
  // kite-matmul-mainloop marked the loop: both operands are loads of
  // (specialized, so strided) kernel parameters by spans.
  ProductOperand a = *productOperand(product->getOperand(1));
  ProductOperand b = *productOperand(product->getOperand(2));
  auto aType = cast<TileType>(a.load.getType()), bType = cast<TileType>(b.load.getType());
  int64_t rank = aType.getRank();
  int64_t BM = aType.getShape()[rank - 2], BK = aType.getShape()[rank - 1];
  int64_t BN = bType.getShape()[rank - 1];
  auto get = [&](StringRef key) { return cast<IntegerAttr>(plan.get(key)).getInt(); };
  auto flag = [&](StringRef key) { return cast<BoolAttr>(plan.get(key)).getValue(); };
  StringRef kind = cast<StringAttr>(plan.get("kind")).getValue();
  bool tma = kind == "wgmma_tma";
  bool specialized = kind == "wgmma_ws" || tma;
  bool wgmma = kind == "wgmma" || specialized;
  int64_t stages = get("stages");
  int64_t warps = wgmma ? 4 * get("warpgroups") : get("warps_m") * get("warps_n");
  if (warps * 32 != numThreads)
    return loop.emitError() << "kite.mainloop's warps do not match num_warps";
  if (specialized)
    specializedLoop = true;
  ArrayRef<Value> sa = a.spans, sb = b.spans;
  TensorRef A = tensors[a.tensor], B = tensors[b.tensor];
  std::string lo = scalar(loop.getLowerBounds()[0]), hi = scalar(loop.getUpperBounds()[0]);
  const SpanVars &m = spans[sa[rank - 2]], &n = spans[sb[rank - 1]];
  int64_t ldc = BN + 8; // kGemmPad in kite_gemm.cuh
  // wgmma's swizzled buffers start at a 1024-byte boundary.
  int64_t align = wgmma ? 1024 : 0;
  // The warp-specialized loops keep 2 mbarriers per stage after the buffers.
  int64_t barriers = specialized ? 16 * stages : 0;
  sharedBytes = std::max<int64_t>(
      {sharedBytes, align + stages * (BM * BK + BK * BN) * 2 + barriers, align + BM * ldc * 4});
  usesGemm = true;

  Tile init = tiles[loop.getInitArgs()[0]];
  Tile r = declare(init.elem, init.ctx, init.dims, "acc");
  lineDirective(loop);
  std::string smem = "kite_smem";
  if (wgmma) {
    smem = fresh("sg");
    line(llvm::formatv("unsigned char* {0} = kite_smem + ((1024 - (smem_addr(kite_smem) & "
                       "1023)) & 1023);",
                       smem));
  }
  std::string elem = cType(aType.getElementType());
  if (tma) {
    // A tensor-map parameter per operand, which the runtime encodes at
    // launch: boxes of BM x 64 (A) and 64 x 64 (B), 128-byte swizzled.
    std::string mapA = fresh("tma"), mapB = fresh("tma");
    CudaKernel::Param pa{CudaKernel::Param::Kind::ArgTensorMap, a.tensor.getArgNumber(), mapA,
                         {}, 3};
    CudaKernel::Param pb{CudaKernel::Param::Kind::ArgTensorMap, b.tensor.getArgNumber(), mapB,
                         {}, 3};
    if (rank == 3) {
      pa.box.push_back(1);
      pb.box.push_back(1);
    }
    pa.box.insert(pa.box.end(), {BM, 64});
    pb.box.insert(pb.box.end(), {64, 64});
    result.params.push_back(pa);
    result.params.push_back(pb);
    std::string batch = rank == 3 ? "(int)(" + spans[sa[0]].begin + ")" : "0";
    line(llvm::formatv("wgmma_tma_mainloop<{0}, {1}, {2}, {3}, {4}, {5}>({6}, &{7}, &{8}, "
                       "(int)({9}), (int)({10}), (int)({11}), {12}, (int)((i64)({13}) - "
                       "(i64)({11})));",
                       BM, BN, get("warpgroups") - 1, stages, rank, elem, smem, mapA, mapB,
                       m.begin, n.begin, lo, batch, hi));
  } else {
    std::string offA = llvm::formatv("(i64)({0}) * {1}LL + (i64)({2}) * {3}LL", m.begin,
                                     A.strides[rank - 2], lo, A.strides[rank - 1]);
    std::string offB = llvm::formatv("(i64)({0}) * {1}LL + (i64)({2}) * {3}LL", lo,
                                     B.strides[rank - 2], n.begin, B.strides[rank - 1]);
    if (rank == 3) {
      const SpanVars &batch = spans[sa[0]];
      offA += llvm::formatv(" + (i64)({0}) * {1}LL", batch.begin, A.strides[0]).str();
      offB += llvm::formatv(" + (i64)({0}) * {1}LL", batch.begin, B.strides[0]).str();
    }
    std::string shape =
        specialized
            ? llvm::formatv("wgmma_ws_mainloop<{0}, {1}, {2}", BM, BN, get("warpgroups") - 1)
                  .str()
        : wgmma ? llvm::formatv("wgmma_mainloop<{0}, {1}, {2}", BM, BN, get("warpgroups")).str()
                : llvm::formatv("mma_mainloop<{0}, {1}, {2}, {3}, {4}", BM, BN, BK,
                                get("warps_m"), get("warps_n"))
                      .str();
    line(llvm::formatv("{0}, {1}, {2}, {3}, {4}>({5}, {6} + {7}, {8}LL, {9}LL, {10} + {11}, "
                       "{12}LL, {13}LL, (int)({14}), (int)({15}), (int)((i64)({16}) - "
                       "(i64)({17})));",
                       shape, stages, flag("vec_a") ? "true" : "false",
                       flag("vec_b") ? "true" : "false", elem, smem, A.ptr, offA,
                       A.strides[rank - 2], A.strides[rank - 1], B.ptr, offB,
                       B.strides[rank - 2], B.strides[rank - 1], m.valid, n.valid, hi, lo));
  }
  // The sums, at gemm_sum_index's swizzled places: 16 bytes at a time
  // where this thread's columns come in runs of 4 or more.
  std::string cs = fresh("sc");
  line(llvm::formatv("const float* {0} = reinterpret_cast<const float*>({1});", cs, smem));
  const Dim &col = r.dims[rank - 1];
  int64_t step = col.ctxDim >= 0 && r.ctx->vec[col.ctxDim] % 4 == 0 && col.regExtent % 4 == 0
                     ? 4
                     : 1;
  forEach(
      r,
      [&](ArrayRef<std::string> k) {
        std::string at = llvm::formatv("{0} + gemm_sum_index<{1}>({2}, {3})", cs, ldc,
                                       coord(r, rank - 2, k[rank - 2]),
                                       coord(r, rank - 1, k[rank - 1]));
        std::string i = flat(r, k);
        if (step == 1) {
          line(llvm::formatv("{0}[{1}] = {2}[{1}] + *({3});", r.name, i, init.name, at));
          return;
        }
        std::string s = fresh("s");
        line(llvm::formatv("const float4 {0} = *reinterpret_cast<const float4*>({1});", s, at));
        const char *lanes[] = {"x", "y", "z", "w"};
        for (int j = 0; j < 4; ++j)
          line(llvm::formatv("{0}[{1} + {2}] = {3}[{1} + {2}] + {4}.{5};", r.name, i, j,
                             init.name, s, lanes[j]));
      },
      step);
  line("__syncthreads();");
  tiles[loop.getResult(0)] = r;
  return success();
}

LogicalResult Emitter::emitNestedGridFor(GridForOp loop) {
  SmallVector<Tile> carried =
      declareCarried(loop.getInitArgs(), loop.getRegionIterArgs(), loop);
  int opened = 0;
  for (unsigned d = 0; d < loop.getNumDims(); ++d) {
    std::string it = fresh("g");
    line(llvm::formatv("for (i64 {0} = {1}; {0} < (i64)({2}); ++{0}) {{", it,
                       scalar(loop.getLowerBounds()[d]),
                       scalar(loop.getUpperBounds()[d])));
    ++indent;
    ++opened;
    scalars[loop.getIndices()[d]] = it;
  }
  return finishLoop(*loop.getBodyBlock(), carried, loop.getRegionIterArgs(),
                    loop.getResults(), opened);
}

LogicalResult Emitter::emitScfFor(scf::ForOp loop) {
  SmallVector<Tile> carried =
      declareCarried(loop.getInitArgs(), loop.getRegionIterArgs(), loop);
  std::string it = fresh("j");
  Type ivType = loop.getInductionVar().getType();
  line(llvm::formatv("for ({0} {1} = {2}; {1} < {3}; {1} += {4}) {{",
                     cType(ivType), it, scalar(loop.getLowerBound()),
                     scalar(loop.getUpperBound()), scalar(loop.getStep())));
  ++indent;
  scalars[loop.getInductionVar()] = it;
  return finishLoop(*loop.getBody(), carried, loop.getRegionIterArgs(),
                    loop.getResults(), /*opened=*/1);
}

LogicalResult Emitter::emitScfIf(scf::IfOp op) {
  // Results are declared before the branches and assigned in each.
  SmallVector<Tile> results;
  SmallVector<Value> placeholders;
  auto emitBranch = [&](Block *block, bool first) -> LogicalResult {
    if (failed(emitBlock(*block)))
      return failure();
    auto yield = cast<scf::YieldOp>(block->getTerminator());
    for (auto [i, v] : llvm::enumerate(yield.getOperands())) {
      Tile &r = results[i];
      if (r.regCount == 0) {
        line(llvm::formatv("{0} = {1};", r.name, scalar(v)));
        continue;
      }
      Tile src = tiles[v];
      if (!compatible(src, r, 0))
        src = convert(src, r.ctx, r.dims);
      forEach(r, [&](ArrayRef<std::string> k) {
        line(llvm::formatv("{0}[{1}] = {2};", r.name, flat(r, k), at(src, k, 0)));
      });
    }
    return success();
  };
  for (Value res : op.getResults()) {
    if (auto tile = dyn_cast<TileType>(res.getType())) {
      // Lay results out like the then-branch's value would be laid out fresh.
      SmallVector<int64_t> padded;
      for (int64_t d : tile.getShape())
        padded.push_back(pow2(d));
      auto [ctx, dims] = layoutFor(padded);
      results.push_back(declare(tile.getElementType(), ctx, dims, "r"));
      tiles[res] = results.back();
    } else {
      std::string name = fresh("r");
      line(llvm::formatv("{0} {1};", cType(res.getType()), name));
      Tile marker;
      marker.name = name;
      marker.regCount = 0;
      results.push_back(marker);
      scalars[res] = name;
    }
  }
  line(llvm::formatv("if ({0}) {{", scalar(op.getCondition())));
  ++indent;
  if (failed(emitBranch(op.thenBlock(), true)))
    return failure();
  --indent;
  if (op.elseBlock() &&
      (!op.elseBlock()->without_terminator().empty() || op.getNumResults())) {
    line("} else {");
    ++indent;
    if (failed(emitBranch(op.elseBlock(), false)))
      return failure();
    --indent;
  }
  line("}");
  return success();
}

//===----------------------------------------------------------------------===//
// Scalars and the host prologue
//===----------------------------------------------------------------------===//

LogicalResult Emitter::emitScalarOp(Operation *op) {
  auto bin = [&](StringRef sym) -> LogicalResult {
    std::string name = fresh("x");
    line(llvm::formatv("const {0} {1} = {2} {3} {4};", cType(op->getResult(0).getType()),
                       name, scalar(op->getOperand(0)), sym, scalar(op->getOperand(1))));
    scalars[op->getResult(0)] = name;
    return success();
  };
  auto call = [&](StringRef fn) -> LogicalResult {
    std::string name = fresh("x");
    std::string args;
    for (Value v : op->getOperands())
      args += (args.empty() ? "" : ", ") + scalar(v);
    line(llvm::formatv("const {0} {1} = {2}({3});", cType(op->getResult(0).getType()),
                       name, fn, args));
    scalars[op->getResult(0)] = name;
    return success();
  };
  auto cast = [&]() -> LogicalResult {
    std::string name = fresh("x");
    Type to = op->getResult(0).getType();
    line(llvm::formatv("const {0} {1} = cvt<{0}>({2});", cType(to), name,
                       scalar(op->getOperand(0))));
    scalars[op->getResult(0)] = name;
    return success();
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](arith::ConstantOp c) -> LogicalResult {
        Attribute v = c.getValue();
        std::string text;
        if (auto i = dyn_cast<IntegerAttr>(v)) {
          if (c.getType().isInteger(1))
            text = i.getValue().isZero() ? "false" : "true";
          else
            text = std::to_string(i.getValue().getSExtValue()) +
                   (c.getType().isInteger(64) ? "LL" : "");
        } else if (auto f = dyn_cast<FloatAttr>(v)) {
          text = floatLiteral(f.getValueAsDouble());
          if (c.getType().isF32())
            text = "(float)" + text;
        } else {
          return c.emitError() << "unsupported constant " << v;
        }
        scalars[c.getResult()] = text;
        return success();
      })
      .Case<arith::AddIOp, arith::AddFOp>([&](auto) { return bin("+"); })
      .Case<arith::SubIOp, arith::SubFOp>([&](auto) { return bin("-"); })
      .Case<arith::MulIOp, arith::MulFOp>([&](auto) { return bin("*"); })
      .Case<arith::DivSIOp, arith::DivFOp>([&](auto) { return bin("/"); })
      .Case<arith::RemSIOp>([&](auto) { return bin("%"); })
      .Case<arith::AndIOp>([&](auto) { return bin("&"); })
      .Case<arith::OrIOp>([&](auto) { return bin("|"); })
      .Case<arith::XOrIOp>([&](auto) { return bin("^"); })
      .Case<arith::ShLIOp>([&](auto) { return bin("<<"); })
      .Case<arith::ShRSIOp>([&](auto) { return bin(">>"); })
      .Case<arith::RemFOp>([&](auto) { return call("fmod"); })
      .Case<arith::MaxSIOp, arith::MaximumFOp, arith::MaxNumFOp>(
          [&](auto) { return call("k_maximum"); })
      .Case<arith::MinSIOp, arith::MinimumFOp, arith::MinNumFOp>(
          [&](auto) { return call("k_minimum"); })
      .Case<arith::CeilDivSIOp>([&](auto) {
        std::string name = fresh("x");
        line(llvm::formatv("const i64 {0} = ({1} + {2} - 1) / {2};", name,
                           scalar(op->getOperand(0)), scalar(op->getOperand(1))));
        scalars[op->getResult(0)] = name;
        return success();
      })
      .Case<arith::FloorDivSIOp>([&](auto) {
        std::string name = fresh("x");
        std::string a = scalar(op->getOperand(0)), b = scalar(op->getOperand(1));
        line(llvm::formatv("const {0} {1} = ({2} / {3}) - ((({2} % {3}) != 0) && "
                           "(({2} < 0) != ({3} < 0)));",
                           cType(op->getResult(0).getType()), name, a, b));
        scalars[op->getResult(0)] = name;
        return success();
      })
      .Case<arith::NegFOp>([&](auto) {
        std::string name = fresh("x");
        line(llvm::formatv("const {0} {1} = -{2};", cType(op->getResult(0).getType()),
                           name, scalar(op->getOperand(0))));
        scalars[op->getResult(0)] = name;
        return success();
      })
      .Case([&](arith::CmpIOp c) {
        static const char *syms[] = {"==", "!=", "<", "<=", ">", ">=", "<", "<=", ">", ">="};
        return bin(syms[(int)c.getPredicate()]);
      })
      .Case([&](arith::CmpFOp c) -> LogicalResult {
        StringRef sym;
        switch (c.getPredicate()) {
        case arith::CmpFPredicate::OEQ: case arith::CmpFPredicate::UEQ: sym = "=="; break;
        case arith::CmpFPredicate::ONE: case arith::CmpFPredicate::UNE: sym = "!="; break;
        case arith::CmpFPredicate::OLT: case arith::CmpFPredicate::ULT: sym = "<"; break;
        case arith::CmpFPredicate::OLE: case arith::CmpFPredicate::ULE: sym = "<="; break;
        case arith::CmpFPredicate::OGT: case arith::CmpFPredicate::UGT: sym = ">"; break;
        case arith::CmpFPredicate::OGE: case arith::CmpFPredicate::UGE: sym = ">="; break;
        default:
          return c.emitError() << "unsupported float comparison";
        }
        return bin(sym);
      })
      .Case([&](arith::SelectOp s) {
        std::string name = fresh("x");
        line(llvm::formatv("const {0} {1} = {2} ? {3} : {4};",
                           cType(s.getType()), name, scalar(s.getCondition()),
                           scalar(s.getTrueValue()), scalar(s.getFalseValue())));
        scalars[s.getResult()] = name;
        return success();
      })
      .Case<arith::SIToFPOp, arith::FPToSIOp, arith::ExtFOp, arith::TruncFOp,
            arith::ExtSIOp, arith::ExtUIOp, arith::TruncIOp, arith::IndexCastOp,
            arith::UIToFPOp>([&](auto) { return cast(); })
      .Case<math::SqrtOp>([&](auto) { return call("k_sqrt"); })
      .Case<math::RsqrtOp>([&](auto) { return call("k_rsqrt"); })
      .Case<math::ExpOp>([&](auto) { return call("k_exp"); })
      .Case<math::Exp2Op>([&](auto) { return call("k_exp2"); })
      .Case<math::LogOp>([&](auto) { return call("k_log"); })
      .Case<math::Log2Op>([&](auto) { return call("k_log2"); })
      .Case<math::SinOp>([&](auto) { return call("k_sin"); })
      .Case<math::CosOp>([&](auto) { return call("k_cos"); })
      .Case<math::TanhOp>([&](auto) { return call("k_tanh"); })
      .Case<math::ErfOp>([&](auto) { return call("k_erf"); })
      .Case<math::AbsFOp, math::AbsIOp>([&](auto) { return call("k_abs"); })
      .Case<math::FloorOp>([&](auto) { return call("k_floor"); })
      .Case<math::CeilOp>([&](auto) { return call("k_ceil"); })
      .Case<math::PowFOp, math::IPowIOp, math::FPowIOp>([&](auto) { return call("k_pow"); })
      .Default([&](Operation *other) {
        return other->emitError() << "kite cannot generate CUDA for '"
                                  << other->getName() << "' yet";
      });
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

LogicalResult Emitter::emitOp(Operation *op) {
  if (isa<DTypeConstOp, DTypeOfOp, BlockSizeOp>(op))
    return success(); // compile-time only
  lineDirective(op);
  if (op->getDialect() && (isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))) {
    bool allScalar = llvm::all_of(op->getResultTypes(),
                                  [](Type t) { return t.isIntOrFloat(); });
    if (allScalar)
      return emitScalarOp(op);
  }
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](SizeOp s) -> LogicalResult {
        auto t = cast<kite::TensorType>(s.getTensor().getType());
        int64_t d = s.getDim() < 0 ? s.getDim() + t.getRank() : s.getDim();
        scalars[s.getResult()] = std::to_string(t.getShape()[d]) + "LL";
        return success();
      })
      .Case([&](SpecializeOp s) {
        scalars[s.getResult()] = scalar(s.getValue());
        return success();
      })
      .Case([&](EmptyOp e) -> LogicalResult {
        auto t = cast<kite::TensorType>(e.getType());
        if (!t.hasStaticShape() || !t.hasElementType())
          return e.emitError() << "the output's shape or dtype is not known at "
                                  "specialization (it depends on a run-time scalar; "
                                  "wrap it in kite::specialize())";
        addOutput(e.getResult(), e.getZeroed());
        return success();
      })
      .Case([&](EmptyLikeOp e) {
        addOutput(e.getResult(), e.getZeroed());
        return success();
      })
      .Case([&](TensorReshapeOp r) -> LogicalResult {
        TensorRef src = tensors[r.getSource()];
        int64_t expected = 1;
        for (int64_t d = src.sizes.size() - 1; d >= 0; --d) {
          if (src.sizes[d] != 1 && src.strides[d] != expected)
            return r.emitError() << "reshape/view needs a contiguous tensor";
          expected *= src.sizes[d];
        }
        auto t = cast<kite::TensorType>(r.getType());
        TensorRef ref = src;
        ref.sizes.assign(t.getShape().begin(), t.getShape().end());
        ref.strides = contiguousStrides(ref.sizes);
        tensors[r.getResult()] = ref;
        return success();
      })
      .Case([&](TileForOp loop) { return emitNestedTileFor(loop); })
      .Case([&](GridForOp loop) { return emitNestedGridFor(loop); })
      .Case([&](scf::ForOp loop) { return emitScfFor(loop); })
      .Case([&](scf::IfOp i) { return emitScfIf(i); })
      .Case([&](SpanQueryOp q) -> LogicalResult {
        const SpanVars &s = spans[q.getSpan()];
        switch (q.getField()) {
        case SpanField::begin:
          scalars[q.getResult()] = s.begin;
          break;
        case SpanField::end:
          scalars[q.getResult()] = "(" + s.begin + " + " + s.valid + ")";
          break;
        case SpanField::block_size:
          scalars[q.getResult()] = std::to_string(s.blockSize) + "LL";
          break;
        case SpanField::id:
          scalars[q.getResult()] = s.id;
          break;
        case SpanField::count:
          scalars[q.getResult()] = s.count;
          break;
        }
        return success();
      })
      .Case([&](SpanIndexOp s) -> LogicalResult {
        const SpanVars &sv = spans[s.getSpan()];
        auto [ctx, dims] = layoutFor({sv.blockSize});
        if (!sv.exact)
          dims[0].extent = sv.valid;
        Tile t = declare(IntegerType::get(op->getContext(), 64), ctx, dims);
        forEach(t, [&](ArrayRef<std::string> k) {
          line(llvm::formatv("{0}[{1}] = {2} + {3};", t.name, flat(t, k), sv.begin,
                             coord(t, 0, k[0])));
        });
        tiles[s.getResult()] = t;
        return success();
      })
      .Case([&](LoadOp l) {
        return emitAccess(l, l.getTensor(), l.getSubscripts(), l.getMask(), {},
                          l.getResult(), std::nullopt);
      })
      .Case([&](StoreOp s) {
        return emitAccess(s, s.getTensor(), s.getSubscripts(), s.getMask(),
                          s.getValue(), {}, std::nullopt);
      })
      .Case([&](AtomicOp a) {
        return emitAccess(a, a.getTensor(), a.getSubscripts(), a.getMask(),
                          a.getValue(), {}, a.getKind());
      })
      .Case([&](UnaryOp u) {
        Type out = getElementTypeOrNull(u.getType());
        std::string ct = computeType(out);
        std::string fn;
        switch (u.getKind()) {
        case UnaryKind::neg: fn = "-"; break;
        case UnaryKind::exp: fn = fastMath && ct == "float" ? "__expf" : "k_exp"; break;
        case UnaryKind::exp2: fn = "k_exp2"; break;
        case UnaryKind::log: fn = "k_log"; break;
        case UnaryKind::log2: fn = "k_log2"; break;
        case UnaryKind::sqrt: fn = "k_sqrt"; break;
        case UnaryKind::rsqrt: fn = "k_rsqrt"; break;
        case UnaryKind::abs: fn = "k_abs"; break;
        case UnaryKind::sin: fn = "k_sin"; break;
        case UnaryKind::cos: fn = "k_cos"; break;
        case UnaryKind::tanh: fn = "k_tanh"; break;
        case UnaryKind::erf: fn = "k_erf"; break;
        case UnaryKind::sigmoid: fn = "k_sigmoid"; break;
        case UnaryKind::relu: fn = "k_relu"; break;
        case UnaryKind::silu: fn = "k_silu"; break;
        case UnaryKind::gelu: fn = "k_gelu"; break;
        case UnaryKind::floor: fn = "k_floor"; break;
        case UnaryKind::ceil: fn = "k_ceil"; break;
        case UnaryKind::not_: fn = out.isInteger(1) ? "!" : "~"; break;
        }
        return emitElementwise(
            u, {u.getOperand()},
            [&](ArrayRef<std::string> a) {
              return llvm::formatv("{0}(cvt<{1}>({2}))", fn, ct, a[0]).str();
            },
            out);
      })
      .Case([&](BinaryOp b) {
        Type out = getElementTypeOrNull(b.getType());
        // Operands compute in the result's compute type (for comparisons
        // and bitwise ops on booleans this is bool/int).
        std::string ct = computeType(out);
        auto infix = [&](StringRef sym) {
          return [=](ArrayRef<std::string> a) {
            return llvm::formatv("cvt<{0}>({1}) {2} cvt<{0}>({3})", ct, a[0], sym, a[1])
                .str();
          };
        };
        auto fn = [&](StringRef name) {
          return [=](ArrayRef<std::string> a) {
            return llvm::formatv("{2}(cvt<{0}>({1}), cvt<{0}>({3}))", ct, a[0], name, a[1])
                .str();
          };
        };
        std::function<std::string(ArrayRef<std::string>)> expr;
        switch (b.getKind()) {
        case BinaryKind::add: expr = infix("+"); break;
        case BinaryKind::sub: expr = infix("-"); break;
        case BinaryKind::mul: expr = infix("*"); break;
        case BinaryKind::div: expr = infix("/"); break;
        case BinaryKind::mod: expr = fn("k_mod"); break;
        case BinaryKind::pow: expr = fn("k_pow"); break;
        case BinaryKind::maximum: expr = fn("k_maximum"); break;
        case BinaryKind::minimum: expr = fn("k_minimum"); break;
        case BinaryKind::and_: expr = infix("&"); break;
        case BinaryKind::or_: expr = infix("|"); break;
        case BinaryKind::xor_: expr = infix("^"); break;
        }
        // Division by a value broadcast along the result (softmax's `e /
        // sum`): one reciprocal per divisor element, then multiplies, as
        // Triton's default division does (within 1.5 ulp in f32).
        auto lhsTile = tiles.find(b.getLhs()), rhsTile = tiles.find(b.getRhs());
        if (b.getKind() == BinaryKind::div && ct == "float" && lhsTile != tiles.end() &&
            rhsTile != tiles.end() && rhsTile->second.regCount < lhsTile->second.regCount) {
          Tile divisor = rhsTile->second;
          Tile rcp = declare(Float32Type::get(op->getContext()), divisor.ctx, divisor.dims);
          forEach(rcp, [&](ArrayRef<std::string> k) {
            line(llvm::formatv("{0}[{1}] = 1.0f / cvt<float>({2}[{1}]);", rcp.name, flat(rcp, k),
                               divisor.name));
          });
          tiles[b.getRhs()] = rcp;
          LogicalResult r = emitElementwise(b, {b.getLhs(), b.getRhs()}, infix("*"), out);
          tiles[b.getRhs()] = divisor;
          return r;
        }
        return emitElementwise(b, {b.getLhs(), b.getRhs()}, expr, out);
      })
      .Case([&](CompareOp c) {
        Type lhs = getElementTypeOrNull(c.getLhs().getType());
        Type rhs = getElementTypeOrNull(c.getRhs().getType());
        Type common = promoteOperands(c.getLhs().getType(), c.getRhs().getType());
        if (!common)
          common = lhs ? lhs : rhs;
        std::string ct = computeType(common);
        static const char *syms[] = {"==", "!=", "<", "<=", ">", ">="};
        std::string sym = syms[(int)c.getKind()];
        return emitElementwise(
            c, {c.getLhs(), c.getRhs()},
            [&](ArrayRef<std::string> a) {
              return llvm::formatv("cvt<{0}>({1}) {2} cvt<{0}>({3})", ct, a[0], sym,
                                   a[1])
                  .str();
            },
            IntegerType::get(op->getContext(), 1));
      })
      .Case([&](WhereOp w) {
        Type out = getElementTypeOrNull(w.getType());
        std::string ct = cType(out);
        return emitElementwise(
            w, {w.getCondition(), w.getTrueValue(), w.getFalseValue()},
            [&](ArrayRef<std::string> a) {
              return llvm::formatv("cvt<bool>({0}) ? cvt<{1}>({2}) : cvt<{1}>({3})", a[0],
                                   ct, a[1], a[2])
                  .str();
            },
            out);
      })
      .Case([&](CastOp c) {
        return emitElementwise(
            c, {c.getSource()}, [&](ArrayRef<std::string> a) { return a[0]; },
            getElementTypeOrNull(c.getType()));
      })
      .Case([&](ReduceOp r) { return emitReduce(r); })
      .Case([&](DotOp d) { return emitMatmul(d, {}, d.getLhs(), d.getRhs(), 2); })
      .Case([&](AddmmOp d) { return emitMatmul(d, d.getAcc(), d.getLhs(), d.getRhs(), 2); })
      .Case([&](BmmOp d) { return emitMatmul(d, {}, d.getLhs(), d.getRhs(), 3); })
      .Case([&](BaddbmmOp d) {
        return emitMatmul(d, d.getAcc(), d.getLhs(), d.getRhs(), 3);
      })
      .Case([&](MatmulOp m) -> LogicalResult {
        auto l = cast<TileType>(m.getLhs().getType());
        auto r = cast<TileType>(m.getRhs().getType());
        if (l.getRank() == 2 && r.getRank() == 2)
          return emitMatmul(m, {}, m.getLhs(), m.getRhs(), 2);
        if (l.getRank() == 3 && r.getRank() == 3)
          return emitMatmul(m, {}, m.getLhs(), m.getRhs(), 3);
        return m.emitError() << "matmul of ranks " << l.getRank() << " and "
                             << r.getRank() << " is not supported on the GPU yet; "
                                               "use dot/bmm";
      })
      .Case([&](FullOp f) { return emitFull(f); })
      .Case([&](ArangeOp a) -> LogicalResult {
        auto type = cast<TileType>(a.getType());
        auto [ctx, dims] = layoutFor({pow2(type.getShape()[0])});
        if (pow2(type.getShape()[0]) != type.getShape()[0])
          dims[0].extent = std::to_string(type.getShape()[0]);
        Tile t = declare(type.getElementType(), ctx, dims);
        forEach(t, [&](ArrayRef<std::string> k) {
          line(llvm::formatv("{0}[{1}] = {2} + {3};", t.name, flat(t, k),
                             scalar(a.getBegin()), coord(t, 0, k[0])));
        });
        tiles[a.getResult()] = t;
        return success();
      })
      .Case<UnsqueezeOp, SqueezeOp, TransposeOp, PermuteOp, ReshapeOp, ExpandOp>(
          [&](Operation *s) { return emitShape(s); })
      .Default([&](Operation *other) {
        return other->emitError() << "kite cannot generate CUDA for '"
                                  << other->getName() << "' yet";
      });
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

namespace {
/// What a subscript selects, dim by dim.
struct SubscriptDim {
  Subscript::Kind kind;
  int64_t size = 1;    // logical size of the selected dim
  std::string extent; // valid count, or ""
};
} // namespace

FailureOr<Tile> Emitter::subscriptShape(Operation *op, Value tensor,
                                        ArrayRef<Subscript> subs, Type resultElem,
                                        SmallVector<int64_t> &shape,
                                        SmallVector<std::string> &extents) {
  const TensorRef &ref = tensors[tensor];
  size_t td = 0;
  auto addAll = [&](int64_t size) {
    shape.push_back(size);
    extents.push_back(pow2(size) != size ? std::to_string(size) : "");
  };
  for (const Subscript &s : subs) {
    switch (s.kind) {
    case Subscript::Kind::NewAxis:
      shape.push_back(1);
      extents.push_back("");
      continue;
    case Subscript::Kind::All:
      addAll(ref.sizes[td]);
      break;
    case Subscript::Kind::Span: {
      const SpanVars &sv = spans[s.value];
      shape.push_back(sv.blockSize);
      extents.push_back(sv.exact ? "" : sv.valid);
      break;
    }
    case Subscript::Kind::Scalar:
      break;
    case Subscript::Kind::Gather: {
      // A group of adjacent gathers broadcasts together; the group's shape
      // is emitted once, at its first member.
      if (&s != subs.data() && (&s - 1)->kind == Subscript::Kind::Gather)
        break;
      SmallVector<int64_t> group;
      SmallVector<std::string> groupExtents;
      for (const Subscript *q = &s; q != subs.end() && q->kind == Subscript::Kind::Gather; ++q) {
        auto type = cast<TileType>(q->value.getType());
        const Tile &g = tiles[q->value];
        int64_t r = type.getRank();
        if ((int64_t)group.size() < r) {
          group.insert(group.begin(), r - group.size(), 1);
          groupExtents.insert(groupExtents.begin(), r - groupExtents.size(), "");
        }
        int64_t off = group.size() - r;
        for (int64_t i = 0; i < r; ++i) {
          if (type.getShape()[i] != 1) {
            group[off + i] = type.getShape()[i];
            if (groupExtents[off + i].empty())
              groupExtents[off + i] = g.dims[i].extent;
          }
        }
      }
      shape.append(group);
      extents.append(groupExtents);
      break;
    }
    }
    ++td;
  }
  for (; td < ref.sizes.size(); ++td)
    addAll(ref.sizes[td]);
  return Tile();
}

/// How many consecutive elements of tile `t`'s last dim an access of `ref`
/// at `subs` can move as one vector (1: element by element). A vector needs
/// the dim to run along the tensor's contiguous last dim, the thread's run
/// of elements there (its context's `vec`), a start that is a multiple of
/// the width in elements (pointer alignment, span begins, the other dims'
/// strides), and a valid extent that is a multiple of it, so that a mask is
/// the same for the whole vector.
int64_t Emitter::vectorWidth(const TensorRef &ref, ArrayRef<Subscript> subs,
                             const Tile &t, const llvm::SmallDenseSet<int32_t> &checked) {
  int64_t bytes = elemBytes(ref.elem);
  if (t.rank() == 0 || !bytes)
    return 1;
  int64_t last = t.rank() - 1;
  const Dim &d = t.dims[last];
  if (d.ctxDim < 0)
    return 1;
  int64_t w = std::min(t.ctx->vec[d.ctxDim], std::max<int64_t>(1, 16 / bytes));
  auto divides = [&](int64_t m) {
    while (w > 1 && m % w != 0)
      w /= 2;
  };
  divides(std::max<int64_t>(1, ref.align / bytes));
  int64_t rank = ref.sizes.size();
  int64_t rd = 0, tdim = 0;
  bool found = false;
  // A tile dim indexing tensor dim `tdim` (an `all` or a span starting at
  // multiples of `begin`); any other dim only offsets by its stride.
  auto indexed = [&](int64_t begin, int64_t block) {
    if (rd == last) {
      if (tdim != rank - 1 || ref.strides[tdim] != 1)
        return false;
      found = true;
      divides(begin);
      divides(block);
      divides(ref.sizes[tdim]);
    } else {
      divides(ref.strides[tdim]);
    }
    ++rd;
    ++tdim;
    return true;
  };
  for (size_t p = 0; p < subs.size(); ++p) {
    const Subscript &s = subs[p];
    switch (s.kind) {
    case Subscript::Kind::NewAxis:
      if (rd == last)
        return 1;
      ++rd;
      break;
    case Subscript::Kind::All:
      if (!indexed(0, ref.sizes[tdim]))
        return 1;
      break;
    case Subscript::Kind::Span: {
      const SpanVars &sv = spans[s.value];
      // A masked tile's valid extent, min(block, end - begin), is a
      // multiple of the width only if the loop's end is (the begins are);
      // a span masked against its tensor (kite.checked) has a mask per
      // element.
      if (rd == last && ((!sv.exact && sv.upperConst < 0) || checked.contains((int32_t)p)))
        return 1;
      if (rd == last && !sv.exact)
        divides(sv.upperConst);
      if (!indexed(sv.alignElems, sv.blockSize))
        return 1;
      break;
    }
    case Subscript::Kind::Scalar:
      divides(ref.strides[tdim]);
      ++tdim;
      break;
    case Subscript::Kind::Gather: {
      size_t q = p;
      int64_t groupRank = 0;
      for (; q < subs.size() && subs[q].kind == Subscript::Kind::Gather; ++q) {
        groupRank = std::max<int64_t>(
            groupRank, cast<TileType>(subs[q].value.getType()).getRank());
        divides(ref.strides[tdim]);
        ++tdim;
      }
      if (last >= rd && last < rd + groupRank)
        return 1;
      rd += groupRank;
      p = q - 1;
      break;
    }
    }
  }
  for (; tdim < rank;)
    if (!indexed(0, ref.sizes[tdim]))
      return 1;
  return found ? w : 1;
}

LogicalResult Emitter::emitAccess(Operation *op, Value tensor,
                                  ArrayRef<Subscript> subs, Value mask, Value value,
                                  Value resultValue,
                                  std::optional<AtomicKind> atomic) {
  const TensorRef &ref = tensors[tensor];
  SmallVector<int64_t> shape;
  SmallVector<std::string> extents;
  if (failed(subscriptShape(op, tensor, subs, ref.elem, shape, extents)))
    return failure();
  // A read of what this program wrote since the last barrier: other
  // threads may have written the elements this thread reads (a transposed
  // store, another layout), and __syncthreads() makes their global writes
  // visible to the block.
  if (resultValue && storedSinceBarrier.count(ref.ptr)) {
    line("__syncthreads(); // this program wrote " + ref.ptr + " above");
    storedSinceBarrier.clear();
  }
  if (!resultValue)
    storedSinceBarrier.insert(ref.ptr);
  SmallVector<int64_t> padded;
  for (int64_t d : shape)
    padded.push_back(pow2(d));

  // The layout the access iterates in.
  Tile t;
  bool isLoad = static_cast<bool>(resultValue);
  // A load's cache policy: kite-cache-hints' L2 priority, else streaming's.
  std::string hint;
  if (auto cache = op->getAttrOfType<StringAttr>("kite.cache"); cache && isLoad)
    hint = cache.getValue() == "evict_last" ? "CacheEvictLast" : "CacheEvictFirst";
  std::optional<Tile> stored;
  if (!isLoad) {
    if (auto it = tiles.find(value); it != tiles.end())
      stored = it->second;
  }
  if (stored && stored->rank() == (int64_t)padded.size() &&
      llvm::all_of(llvm::seq<size_t>(0, padded.size()), [&](size_t i) {
        return stored->dims[i].padded == padded[i];
      })) {
    t.ctx = stored->ctx;
    t.dims = stored->dims;
  } else {
    auto [ctx, dims] = layoutFor(padded);
    t.ctx = ctx;
    t.dims = dims;
  }
  for (size_t i = 0; i < t.dims.size(); ++i)
    t.dims[i].extent = extents[i];
  if (isLoad) {
    t = declare(ref.elem, t.ctx, t.dims);
  } else {
    // Iterate without an array of our own.
    int64_t stride = 1;
    for (int64_t i = t.rank() - 1; i >= 0; --i) {
      Dim &d = t.dims[i];
      d.regExtent = d.ctxDim < 0 ? 1 : t.ctx->perThread(d.ctxDim);
      d.regStride = stride;
      stride *= d.regExtent;
    }
    t.regCount = stride;
  }

  // Operands read at the access's elements.
  // Gathers are read where their group's dims are; `groupRank` per member.
  DenseMap<Value, Tile> gathers;
  DenseMap<Value, int64_t> groupRanks;
  {
    int64_t rd = 0;
    for (size_t p = 0; p < subs.size(); ++p) {
      const Subscript &s = subs[p];
      if (s.kind == Subscript::Kind::Gather) {
        size_t q = p;
        int64_t groupRank = 0;
        for (; q < subs.size() && subs[q].kind == Subscript::Kind::Gather; ++q)
          groupRank = std::max<int64_t>(
              groupRank, cast<TileType>(subs[q].value.getType()).getRank());
        for (size_t m = p; m < q; ++m) {
          Value g = subs[m].value;
          int64_t r = cast<TileType>(g.getType()).getRank();
          gathers[g] = readableAt(tiles[g], t, rd + groupRank - r);
          groupRanks[g] = groupRank;
        }
        rd += groupRank;
        p = q - 1;
      } else if (s.kind != Subscript::Kind::Scalar) {
        ++rd;
      }
    }
  }
  std::optional<Tile> maskTile;
  if (mask) {
    if (auto it = tiles.find(mask); it != tiles.end())
      maskTile = readableAt(it->second, t, t.rank() - it->second.rank());
  }
  std::optional<Tile> valueTile;
  if (stored)
    valueTile = readableAt(*stored, t, t.rank() - stored->rank());

  // Subscripts kite-check-bounds could not prove inside the tensor: masked
  // against their dimension at run time (lanes outside read 0, are not
  // written).
  llvm::SmallDenseSet<int32_t> checked;
  if (auto c = op->getAttrOfType<DenseI32ArrayAttr>(kCheckedAttrName))
    checked.insert(c.asArrayRef().begin(), c.asArrayRef().end());
  std::string own = isLoad ? "" : owner(t);
  int64_t width = (maskTile || atomic) ? 1 : vectorWidth(ref, subs, t, checked);
  // Offsets in 32-bit arithmetic where none can overflow it: the tensor's
  // reach, with a tile running past its end (masked lanes), stays far
  // below 2^31 elements.
  int64_t reach = 0;
  for (auto [size, stride] : llvm::zip(ref.sizes, ref.strides))
    reach += size * std::abs(stride);
  bool narrow = 4 * reach < std::numeric_limits<int32_t>::max();
  forEach(t, [&](ArrayRef<std::string> k) {
    // The element's offset in the tensor.
    std::string offset = "0";
    SmallVector<std::string> bounds; // the checked subscripts' conditions
    int64_t rd = 0, tdim = 0;
    auto checkIndex = [&](size_t pos, const std::string &idx) {
      if (checked.contains(pos))
        bounds.push_back(llvm::formatv("(unsigned long long)({0}) < {1}ULL", idx,
                                       ref.sizes[tdim]));
    };
    auto addIndex = [&](const std::string &idx) {
      int64_t stride = ref.strides[tdim++];
      if (idx == "0")
        return;
      std::string term =
          narrow ? llvm::formatv("(int)({0})", idx).str() : llvm::formatv("(i64)({0})", idx).str();
      if (stride != 1)
        term += narrow ? llvm::formatv(" * {0}", stride).str()
                       : llvm::formatv(" * {0}LL", stride).str();
      offset = offset == "0" ? term : offset + " + " + term;
    };
    for (auto [pos, s] : llvm::enumerate(subs)) {
      switch (s.kind) {
      case Subscript::Kind::NewAxis:
        ++rd;
        break;
      case Subscript::Kind::All:
        addIndex(coord(t, rd, k[rd]));
        ++rd;
        break;
      case Subscript::Kind::Span: {
        std::string c = coord(t, rd, k[rd]);
        std::string idx = c == "0" ? spans[s.value].begin : spans[s.value].begin + " + " + c;
        checkIndex(pos, idx);
        addIndex(idx);
        ++rd;
        break;
      }
      case Subscript::Kind::Scalar: {
        std::optional<int64_t> c = getConstantIntValue(s.value);
        int64_t size = ref.sizes[tdim];
        std::string idx =
            c ? std::to_string(*c < 0 ? *c + size : *c)
              : llvm::formatv("({0} < 0 ? {0} + {1} : {0})", scalar(s.value), size).str();
        checkIndex(pos, idx);
        addIndex(idx);
        break;
      }
      case Subscript::Kind::Gather: {
        const Tile &g = gathers[s.value];
        int64_t groupRank = groupRanks[s.value];
        // Negative indices count from the end, as in reference mode.
        std::string v = "cvt<i64>(" + at(g, k, rd + groupRank - g.rank()) + ")";
        std::string idx = llvm::formatv("({0} < 0 ? {0} + {1} : {0})", v, ref.sizes[tdim]);
        checkIndex(pos, idx);
        addIndex(idx);
        // The group's dims follow its last member.
        if (&s + 1 == subs.end() || (&s + 1)->kind != Subscript::Kind::Gather)
          rd += groupRank;
        break;
      }
      }
    }
    for (; tdim < (int64_t)ref.sizes.size();) {
      addIndex(coord(t, rd, k[rd]));
      ++rd;
    }
    SmallVector<std::string> conds;
    for (int64_t i = 0; i < t.rank(); ++i)
      if (!t.dims[i].extent.empty())
        conds.push_back(llvm::formatv("{0} < {1}", coord(t, i, k[i]), t.dims[i].extent));
    if (maskTile)
      conds.push_back("cvt<bool>(" + at(*maskTile, k, t.rank() - maskTile->rank()) + ")");
    conds.append(bounds);
    std::string cond = llvm::join(conds, " && ");
    std::string ptr = llvm::formatv("{0}[{1}]", ref.ptr, offset);
    if (width > 1) {
      // One vector: the mask is the same for all its elements.
      if (isLoad) {
        std::string dst = llvm::formatv("&{0}[{1}]", t.name, flat(t, k));
        std::string policy = !hint.empty() ? ", " + hint : streaming ? ", CacheStream" : "";
        std::string load = llvm::formatv("load_vec<{0}{1}>({2}, &{3});", width, policy, dst, ptr);
        line(cond.empty() ? load
                          : llvm::formatv("if ({0}) {1} else zero_vec<{2}>({3});", cond,
                                          load, width, dst)
                                .str());
        return;
      }
      if (!own.empty())
        cond = cond.empty() ? own : own + " && " + cond;
      SmallVector<std::string> elems;
      SmallVector<std::string> ki(k.begin(), k.end());
      for (int64_t e = 0; e < width; ++e) {
        ki.back() = plus(k.back(), e);
        elems.push_back(llvm::formatv(
            "cvt<{0}>({1})", cType(ref.elem),
            valueTile ? at(*valueTile, ki, t.rank() - valueTile->rank()) : scalar(value)));
      }
      std::string store =
          llvm::formatv("store_vec<{0}{4}>(&{1}, Vec<{2}, {0}>{{{{{3}}});", width, ptr,
                        cType(ref.elem), llvm::join(elems, ", "), streaming ? ", true" : "");
      line(cond.empty() ? store : llvm::formatv("if ({0}) {1}", cond, store).str());
      return;
    }
    if (isLoad) {
      if (!hint.empty())
        ptr = llvm::formatv("load_one<{0}>(&{1})", hint, ptr);
      if (cond.empty())
        line(llvm::formatv("{0}[{1}] = {2};", t.name, flat(t, k), ptr));
      else
        line(llvm::formatv("{0}[{1}] = ({2}) ? {3} : cvt<{4}>(0);", t.name, flat(t, k),
                           cond, ptr, cType(ref.elem)));
      return;
    }
    if (!own.empty())
      cond = cond.empty() ? own : own + " && " + cond;
    std::string v = valueTile
                         ? at(*valueTile, k, t.rank() - valueTile->rank())
                         : scalar(value);
    std::string stmt;
    if (!atomic)
      stmt = llvm::formatv("{0} = cvt<{1}>({2});", ptr, cType(ref.elem), v);
    else {
      StringRef fn = *atomic == AtomicKind::add   ? "atomic_add"
                     : *atomic == AtomicKind::max ? "atomic_max"
                                                  : "atomic_min";
      stmt = llvm::formatv("{0}(&{1}, cvt<{2}>({3}));", fn, ptr, cType(ref.elem), v);
    }
    line(cond.empty() ? stmt : llvm::formatv("if ({0}) {1}", cond, stmt).str());
  }, width);
  if (isLoad)
    tiles[resultValue] = t;
  return success();
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

LogicalResult Emitter::emitElementwise(
    Operation *op, ArrayRef<Value> operands,
    llvm::function_ref<std::string(ArrayRef<std::string>)> expr, Type resultElem) {
  auto type = cast<TileType>(op->getResult(0).getType());
  SmallVector<int64_t> padded;
  for (int64_t d : type.getShape())
    padded.push_back(pow2(d));
  // Lay the result out like its largest operand of the same shape, if any.
  const Tile *base = nullptr;
  for (Value v : operands)
    if (auto it = tiles.find(v); it != tiles.end()) {
      const Tile &o = it->second;
      bool same = o.rank() == (int64_t)padded.size() &&
                  llvm::all_of(llvm::seq<size_t>(0, padded.size()),
                               [&](size_t i) { return o.dims[i].padded == padded[i]; });
      if (same && (!base || o.regCount > base->regCount))
        base = &o;
    }
  Context *ctx;
  SmallVector<Dim> dims;
  if (base) {
    ctx = base->ctx;
    dims = base->dims;
  } else {
    auto layout = layoutFor(padded);
    ctx = layout.first;
    dims = layout.second;
  }
  // Extents: from whichever operand has that dim.
  for (size_t i = 0; i < dims.size(); ++i) {
    dims[i].extent = "";
    for (Value v : operands) {
      auto it = tiles.find(v);
      if (it == tiles.end())
        continue;
      int64_t j = (int64_t)i - ((int64_t)dims.size() - it->second.rank());
      if (j >= 0 && it->second.dims[j].padded == dims[i].padded &&
          !it->second.dims[j].extent.empty()) {
        dims[i].extent = it->second.dims[j].extent;
        break;
      }
    }
  }
  Tile r = declare(resultElem, ctx, dims);
  SmallVector<std::optional<Tile>> ins;
  for (Value v : operands) {
    if (auto it = tiles.find(v); it != tiles.end())
      ins.push_back(readableAt(it->second, r, r.rank() - it->second.rank()));
    else
      ins.push_back(std::nullopt);
  }
  forEach(r, [&](ArrayRef<std::string> k) {
    SmallVector<std::string> args;
    for (auto [v, in] : llvm::zip(operands, ins))
      args.push_back(in ? at(*in, k, r.rank() - in->rank()) : scalar(v));
    line(llvm::formatv("{0}[{1}] = cvt<{2}>({3});", r.name, flat(r, k),
                       cType(resultElem), expr(args)));
  });
  tiles[op->getResult(0)] = r;
  return success();
}

LogicalResult Emitter::emitReduce(ReduceOp op) {
  Tile src = tiles[op.getOperand()];
  int64_t rank = src.rank();
  int64_t dim = op.getDim() < 0 ? op.getDim() + rank : op.getDim();
  bool keep = op.getKeepdim();
  Type outElem = getElementTypeOrNull(op.getType());
  Type inElem = src.elem;
  SmallVector<Dim> dims;
  for (int64_t i = 0; i < rank; ++i) {
    if (i != dim) {
      dims.push_back(src.dims[i]);
    } else if (keep) {
      Dim unit;
      dims.push_back(unit);
    }
  }
  Tile r = declare(outElem, src.ctx, dims);
  ReduceKind kind = op.getKind();
  bool isArg = kind == ReduceKind::argmax || kind == ReduceKind::argmin;
  std::string acc = (kind == ReduceKind::sum || kind == ReduceKind::prod)
                        ? accType(outElem)
                        : computeType(inElem);
  std::string opName;
  switch (kind) {
  case ReduceKind::sum:
  case ReduceKind::mean: opName = "SumOp"; break;
  case ReduceKind::prod: opName = "ProdOp"; break;
  case ReduceKind::amax: opName = "MaxOp"; break;
  case ReduceKind::amin: opName = "MinOp"; break;
  case ReduceKind::argmax: opName = "ArgOp<true>"; break;
  case ReduceKind::argmin: opName = "ArgOp<false>"; break;
  }
  std::string accT = isArg ? "ArgPair<" + acc + ">" : acc;
  const Dim &rd = src.dims[dim];
  std::string scratch;
  int64_t cd = rd.ctxDim;
  // A local reduction stops at each thread's own elements.
  bool crossThread = cd >= 0 && src.ctx->tpd[cd] > 1 && !op.getLocal();
  bool inWarp = crossThread && src.ctx->tstride[cd] * src.ctx->tpd[cd] <= 32;
  if (crossThread && !inWarp) {
    scratch = fresh("s");
    line(llvm::formatv("{0}* {1} = {2};", accT, scratch, smem(accT, numThreads * 2)));
  }
  std::string count = rd.extent.empty() ? std::to_string(rd.padded) : rd.extent;
  forEach(r, [&](ArrayRef<std::string> k) {
    std::string a = fresh("a");
    line(llvm::formatv("{0} {1} = {2}::identity<{0}>();", accT, a, opName));
    std::string rv = fresh("r");
    SmallVector<std::string> sk;
    for (int64_t i = 0, j = 0; i < rank; ++i) {
      if (i == dim) {
        sk.push_back(rv);
        if (keep)
          ++j;
      } else {
        sk.push_back(k[j++]);
      }
    }
    line("#pragma unroll");
    line(llvm::formatv("for (int {0} = 0; {0} < {1}; ++{0}) {{", rv, rd.regExtent));
    ++indent;
    std::string c = coord(src, dim, rv);
    std::string elem = llvm::formatv("cvt<{0}>({1})", acc, at(src, sk, 0));
    std::string guard = rd.extent.empty() ? "" : llvm::formatv("if ({0} < {1}) ", c, rd.extent).str();
    if (isArg)
      line(llvm::formatv("{0}{{ {1} e; e.value = {2}; e.index = {3}; {4} = {5}::combine({4}, e); }",
                         guard, accT, elem, c, a, opName));
    else
      line(llvm::formatv("{0}{1} = {2}::combine({1}, {3});", guard, a, opName, elem));
    --indent;
    line("}");
    if (crossThread) {
      int64_t S = src.ctx->tstride[cd], T = src.ctx->tpd[cd];
      if (inWarp)
        line(llvm::formatv("{0} = warp_reduce<{1}, {2}, {3}>({0});", a, opName, S, T));
      else
        line(llvm::formatv("{0} = block_reduce<{1}, {2}, {3}>({0}, {4});", a, opName, S,
                           T, scratch));
    }
    std::string out = isArg ? a + ".index" : a;
    if (kind == ReduceKind::mean)
      out = llvm::formatv("{0} / ({1})({2})", a, acc, count);
    line(llvm::formatv("{0}[{1}] = cvt<{2}>({3});", r.name, flat(r, k), cType(outElem),
                       out));
  });
  if (crossThread && !inWarp)
    line("__syncthreads();");
  tiles[op.getResult()] = r;
  return success();
}

LogicalResult Emitter::emitMatmul(Operation *op, Value accValue, Value lhs, Value rhs,
                                  int64_t rank) {
  auto type = cast<TileType>(op->getResult(0).getType());
  Type outElem = type.getElementType();
  Tile a = tiles[lhs], b = tiles[rhs];
  if (a.rank() != rank || b.rank() != rank)
    return op->emitError() << "matrix product operands must have rank " << rank;
  Context *ctx;
  SmallVector<Dim> dims;
  std::optional<Tile> acc;
  if (accValue) {
    acc = tiles[accValue];
    ctx = acc->ctx;
    dims = acc->dims;
  } else {
    SmallVector<int64_t> padded;
    for (int64_t d : type.getShape())
      padded.push_back(pow2(d));
    auto layout = layoutFor(padded);
    ctx = layout.first;
    dims = layout.second;
    dims[rank - 2].extent = a.dims[rank - 2].extent;
    dims[rank - 1].extent = b.dims[rank - 1].extent;
  }
  Tile r = declare(outElem, ctx, dims);
  // Stage both operands in shared memory, row-major over their padded shapes.
  auto count = [](const Tile &t) {
    int64_t n = 1;
    for (const Dim &d : t.dims)
      n *= d.padded;
    return n;
  };
  int64_t PM = a.dims[rank - 2].padded, PK = a.dims[rank - 1].padded;
  int64_t PN = b.dims[rank - 1].padded;
  std::string kCount = a.dims[rank - 1].extent.empty()
                           ? std::to_string(PK)
                           : a.dims[rank - 1].extent;
  // Tensor cores (mma.sync m16n8k16): 16-bit operands of the same type in
  // 16x8x16 steps, one matrix per product (batched operands with a batch
  // tile of 1 stage as plain matrices). K lanes past the valid extent are
  // staged as zeros (the steps run over all of PK).
  bool oneMatrix = rank == 2 || (a.dims[0].padded == 1 && b.dims[0].padded == 1);
  bool mma = tensorCores && oneMatrix && a.elem == b.elem &&
             (a.elem.isBF16() || a.elem.isF16()) && PM % 16 == 0 && PN % 8 == 0 &&
             PK % 16 == 0;
  // Staged elements take 8 bytes (any dtype) on CUDA cores, their own size
  // on tensor cores, where rows are 8 elements longer than the tile's (and
  // the f32 sums' rows too) so that mma_tile's ldmatrix reads and its
  // fragment writes are free of bank conflicts. A right operand whose
  // threads hold runs along K (a transposed tile, as attention's k^T) is
  // staged transposed, N rows of K, so that its runs stay whole.
  int64_t stagedBytes = mma ? 2 : 8;
  auto runOf = [](const Tile &t, int64_t i) {
    const Dim &d = t.dims[i];
    return d.ctxDim < 0 ? 1 : t.ctx->vec[d.ctxDim];
  };
  bool bT = mma && runOf(b, rank - 2) >= 8 && runOf(b, rank - 1) == 1;
  int64_t ldA = PK + 8, ldB = bT ? PK + 8 : PN + 8, ldC = PN + 8;
  int64_t bytesA = llvm::alignTo(mma ? PM * ldA * 2 : count(a) * stagedBytes, 16);
  int64_t bytesB = llvm::alignTo(mma ? (bT ? PN : PK) * ldB * 2 : count(b) * stagedBytes, 16);
  sharedBytes = std::max(sharedBytes, bytesA + bytesB);
  std::string as = fresh("sa"), bs = fresh("sb");
  line("{");
  ++indent;
  line(llvm::formatv("{0}* {1} = reinterpret_cast<{0}*>(kite_smem);", cType(a.elem), as));
  line(llvm::formatv("{0}* {1} = reinterpret_cast<{0}*>(kite_smem + {2});", cType(b.elem),
                     bs, bytesA));
  line("__syncthreads();");
  // Stages `t` into `buf`: on tensor cores as rows of dim `rowDim`, `ld`
  // elements apart, each thread's run along `colDim` as one vector of up
  // to 16 bytes (rows start 16-byte aligned; a run starts at a multiple of
  // its length), K lanes (dim `kDim`) past the valid extent as zeros.
  auto stage = [&](const Tile &t, const std::string &buf, int64_t kDim, int64_t rowDim,
                   int64_t colDim, int64_t ld) {
    std::string own = owner(t);
    int64_t width = 1;
    if (mma) {
      width = std::min<int64_t>(runOf(t, colDim), 8);
      while (width > 1 && t.dims[colDim].regExtent % width != 0)
        width /= 2;
    }
    auto element = [&](ArrayRef<std::string> k) {
      std::string v = llvm::formatv("{0}[{1}]", t.name, flat(t, k));
      if (mma && !t.dims[kDim].extent.empty())
        v = llvm::formatv("({0} < {1}) ? {2} : cvt<{3}>(0)", coord(t, kDim, k[kDim]),
                          t.dims[kDim].extent, v, cType(t.elem));
      return v;
    };
    if (mma) {
      forEach(
          t,
          [&](ArrayRef<std::string> k) {
            std::string idx = llvm::formatv("({0}) * {1} + {2}", coord(t, rowDim, k[rowDim]),
                                            ld, coord(t, colDim, k[colDim]));
            if (width == 1) {
              line(llvm::formatv("{0}{1}[{2}] = {3};", own.empty() ? "" : "if (" + own + ") ",
                                 buf, idx, element(k)));
              return;
            }
            SmallVector<std::string> ki(k.begin(), k.end()), elems;
            for (int64_t e = 0; e < width; ++e) {
              ki[colDim] = plus(k[colDim], e);
              elems.push_back(element(ki));
            }
            line(llvm::formatv("{0}store_vec<{1}>(&{2}[{3}], Vec<{4}, {1}>{{{{{5}}});",
                               own.empty() ? "" : "if (" + own + ") ", width, buf, idx,
                               cType(t.elem), llvm::join(elems, ", ")));
          },
          width, colDim);
      return;
    }
    forEach(t, [&](ArrayRef<std::string> k) {
      std::string idx = "0";
      int64_t stride = 1;
      for (int64_t i = t.rank() - 1; i >= 0; --i) {
        idx = llvm::formatv("{0} + {1} * {2}", idx, coord(t, i, k[i]), stride);
        stride *= t.dims[i].padded;
      }
      line(llvm::formatv("{0}{1}[{2}] = {3};", own.empty() ? "" : "if (" + own + ") ", buf,
                         idx, element(k)));
    });
  };
  stage(a, as, rank - 1, rank - 2, rank - 1, ldA);
  if (bT)
    stage(b, bs, rank - 2, rank - 1, rank - 2, ldB);
  else
    stage(b, bs, rank - 2, rank - 2, rank - 1, ldB);
  line("__syncthreads();");
  // Each element of the result: the product's sum (from the tensor cores'
  // f32 tile in shared memory, or a loop over K here), plus the accumulator.
  std::string cs;
  if (mma) {
    cs = fresh("sc");
    sharedBytes = std::max(sharedBytes, bytesA + bytesB + PM * ldC * 4);
    line(llvm::formatv("float* {0} = reinterpret_cast<float*>(kite_smem + {1});", cs,
                       bytesA + bytesB));
    line(llvm::formatv("mma_tile<{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}>({9}, {10}, {11});",
                       PM, PN, PK, numThreads / 32, cType(a.elem), ldA, ldB, ldC,
                       bT ? "true" : "false", as, bs, cs));
    line("__syncthreads();");
  }
  std::string sumT = outElem.isF64() ? "double"
                     : outElem.isIntOrIndex() && !outElem.isInteger(1) ? "i64"
                                                                         : "float";
  std::optional<Tile> accIn;
  if (acc)
    accIn = readableAt(*acc, r, 0);
  // The tensor cores' sums come back as float4 where a thread's run along
  // the last dim holds 4 (rows of LDC floats start 16-byte aligned).
  const Dim &last = r.dims[rank - 1];
  int64_t width = mma && last.ctxDim >= 0 && r.ctx->vec[last.ctxDim] % 4 == 0 &&
                          last.regExtent % 4 == 0
                      ? 4
                      : 1;
  forEach(
      r,
      [&](ArrayRef<std::string> k) {
        std::string m = coord(r, rank - 2, k[rank - 2]);
        std::string n = coord(r, rank - 1, k[rank - 1]);
        SmallVector<std::string> sums; // element e of the run starting at k
        if (width == 4) {
          std::string f = fresh("f");
          line(llvm::formatv("const float4 {0} = *reinterpret_cast<const float4*>(&{1}[({2}) * "
                             "{3} + {4}]);",
                             f, cs, m, ldC, n));
          for (char c : StringRef("xyzw"))
            sums.push_back(f + "." + c);
        } else if (mma) {
          sums.push_back(llvm::formatv("{0}[({1}) * {2} + {3}]", cs, m, ldC, n));
        } else {
          std::string aBase = llvm::formatv("({0}) * {1}", m, PK);
          std::string bBase = n;
          if (rank == 3) {
            std::string batch = coord(r, 0, k[0]);
            std::string ba = a.dims[0].padded == 1 ? "0" : batch;
            std::string bb = b.dims[0].padded == 1 ? "0" : batch;
            aBase = llvm::formatv("(({0}) * {1} + {2}) * {3}", ba, PM, m, PK);
            bBase = llvm::formatv("({0}) * {1} + {2}", bb, PK * PN, n);
          }
          std::string sum = fresh("m");
          line(llvm::formatv("{0} {1} = 0;", sumT, sum));
          std::string kk = fresh("kk");
          line(llvm::formatv("for (int {0} = 0; {0} < {1}; ++{0})", kk, kCount));
          line(llvm::formatv("  {0} += cvt<{1}>({2}[{3} + {4}]) * cvt<{1}>({5}[{6} + {4} * {7}]);",
                             sum, sumT, as, aBase, kk, bs, bBase, PN));
          sums.push_back(sum);
        }
        SmallVector<std::string> ki(k.begin(), k.end());
        for (auto [e, sum] : llvm::enumerate(sums)) {
          ki.back() = plus(k.back(), e);
          std::string total =
              accIn ? llvm::formatv("cvt<{0}>({1}) + {2}", sumT, at(*accIn, ki, 0), sum).str()
                    : sum;
          line(llvm::formatv("{0}[{1}] = cvt<{2}>({3});", r.name, flat(r, ki), cType(outElem),
                             total));
        }
      },
      width);
  line("__syncthreads();");
  --indent;
  line("}");
  tiles[op->getResult(0)] = r;
  return success();
}

LogicalResult Emitter::emitFull(FullOp op) {
  auto type = cast<TileType>(op.getType());
  SmallVector<int64_t> padded;
  SmallVector<std::string> extents;
  for (auto [d, size] : llvm::zip(op.getDims(), type.getShape())) {
    padded.push_back(pow2(size));
    if (isa<SpanType>(d.getType())) {
      const SpanVars &sv = spans[d];
      extents.push_back(sv.exact ? "" : sv.valid);
    } else {
      extents.push_back(pow2(size) != size ? std::to_string(size) : "");
    }
  }
  auto [ctx, dims] = layoutFor(padded);
  for (size_t i = 0; i < dims.size(); ++i)
    dims[i].extent = extents[i];
  Tile t = declare(type.getElementType(), ctx, dims);
  line("#pragma unroll");
  line(llvm::formatv("for (int q = 0; q < {0}; ++q) {1}[q] = cvt<{2}>({3});", t.regCount,
                     t.name, cType(t.elem), scalar(op.getValue())));
  tiles[op.getResult()] = t;
  return success();
}

LogicalResult Emitter::emitShape(Operation *op) {
  Value in = op->getOperand(0);
  Tile src = tiles[in];
  auto type = cast<TileType>(op->getResult(0).getType());
  if (auto u = dyn_cast<UnsqueezeOp>(op)) {
    int64_t d = u.getDim() < 0 ? u.getDim() + src.rank() + 1 : u.getDim();
    Tile t = src;
    t.dims.insert(t.dims.begin() + d, Dim());
    tiles[u.getResult()] = t;
    return success();
  }
  if (auto s = dyn_cast<SqueezeOp>(op)) {
    int64_t d = s.getDim() < 0 ? s.getDim() + src.rank() : s.getDim();
    Tile t = src;
    if (t.dims[d].padded == 1)
      t.dims.erase(t.dims.begin() + d);
    tiles[s.getResult()] = t;
    return success();
  }
  if (auto tr = dyn_cast<TransposeOp>(op)) {
    int64_t a = tr.getDim0() < 0 ? tr.getDim0() + src.rank() : tr.getDim0();
    int64_t b = tr.getDim1() < 0 ? tr.getDim1() + src.rank() : tr.getDim1();
    Tile t = src;
    std::swap(t.dims[a], t.dims[b]);
    tiles[tr.getResult()] = t;
    return success();
  }
  if (auto p = dyn_cast<PermuteOp>(op)) {
    Tile t = src;
    for (auto [i, d] : llvm::enumerate(p.getDims()))
      t.dims[i] = src.dims[d < 0 ? d + src.rank() : d];
    tiles[p.getResult()] = t;
    return success();
  }
  if (auto e = dyn_cast<ExpandOp>(op))
    return emitElementwise(
        e, {e.getOperand()}, [](ArrayRef<std::string> a) { return a[0]; }, src.elem);
  // Reshape: through shared memory in logical row-major order.
  auto srcType = cast<TileType>(in.getType());
  SmallVector<int64_t> padded;
  for (int64_t d : type.getShape())
    padded.push_back(pow2(d));
  auto [ctx, dims] = layoutFor(padded);
  for (size_t i = 0; i < dims.size(); ++i)
    if (padded[i] != type.getShape()[i])
      dims[i].extent = std::to_string(type.getShape()[i]);
  Tile dst = declare(src.elem, ctx, dims);
  int64_t numel = 1;
  for (int64_t d : type.getShape())
    numel *= d;
  std::string buf = fresh("s");
  line("{");
  ++indent;
  line(llvm::formatv("{0}* {1} = {2};", cType(src.elem), buf, smem(cType(src.elem), numel)));
  auto logical = [&](const Tile &t, ArrayRef<int64_t> sizes, ArrayRef<std::string> k,
                     std::string &cond) {
    std::string idx = "0";
    int64_t stride = 1;
    SmallVector<std::string> conds;
    for (int64_t i = t.rank() - 1; i >= 0; --i) {
      std::string c = coord(t, i, k[i]);
      idx = llvm::formatv("{0} + {1} * {2}", idx, c, stride);
      if (pow2(sizes[i]) != sizes[i])
        conds.push_back(llvm::formatv("{0} < {1}", c, sizes[i]));
      stride *= sizes[i];
    }
    cond = llvm::join(conds, " && ");
    return idx;
  };
  line("__syncthreads();");
  std::string own = owner(src);
  forEach(src, [&](ArrayRef<std::string> k) {
    std::string cond;
    std::string idx = logical(src, srcType.getShape(), k, cond);
    if (!own.empty())
      cond = cond.empty() ? own : own + " && " + cond;
    line(llvm::formatv("{0}{1}[{2}] = {3}[{4}];", cond.empty() ? "" : "if (" + cond + ") ",
                       buf, idx, src.name, flat(src, k)));
  });
  line("__syncthreads();");
  forEach(dst, [&](ArrayRef<std::string> k) {
    std::string cond;
    std::string idx = logical(dst, type.getShape(), k, cond);
    line(llvm::formatv("{0}[{1}] = {2}{3}[{4}]{5};", dst.name, flat(dst, k),
                       cond.empty() ? "" : "(" + cond + ") ? ", buf, idx,
                       cond.empty() ? "" : " : cvt<" + cType(src.elem) + ">(0)"));
  });
  line("__syncthreads();");
  --indent;
  line("}");
  tiles[op->getResult(0)] = dst;
  return success();
}

} // namespace

FailureOr<CudaKernel> kite::emitCuda(func::FuncOp kernel, const EmitOptions &options) {
  Emitter emitter(kernel, options);
  return emitter.run();
}
