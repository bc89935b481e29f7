//===- kite/kite.hpp - The kite kernel language and its reference mode ----===//
//
// This file implements the kite DSL: the types and functions a kernel is
// written with, and their CPU eager implementation ("reference mode"). The
// same header is read by two readers: the host compiler, for which calling a
// kernel runs it on the CPU (the test oracle and the debugger), and kite's
// Clang frontend, which captures `KITE_KERNEL` functions by matching the
// qualified names below. It depends on the C++ standard library only and is
// plain C++23 (no compiler extensions).
//
// API (all in namespace kite; "S" is any arithmetic C++ scalar, "Dims" is
// `std::initializer_list<Dim>` or `std::vector<int64_t>`, "Idx" is anything
// an `Index` converts from):
//
//   KITE_KERNEL                       [[clang::annotate("kite_kernel")]] under Clang
//   Error                             every user error (a std::runtime_error)
//   DType {f16,bf16,f32,f64,i8,i32,i64,boolean,e4m3,e5m2}; constants f16 ... e5m2
//   dtype_name element_size is_floating promote_types
//   bfloat16 half                     host 16-bit float storage types
//   float8_e4m3 float8_e5m2           host 8-bit float storage types
//   Device {Kind {cpu, cuda} kind; int index}; Storage
//   Tensor                            host tensors and in-loop values (tiles)
//     dtype dim size sizes stride strides numel is_contiguous device defined
//     data_ptr data<T> item<T> to_doubles storage storage_offset
//     reshape view to contiguous clone transpose permute unsqueeze squeeze
//     expand, operator[](Idx...) (load; `x[i, j] = v` stores),
//     operator= && (store) / & (rebind), += -= *= /= (&& load-modify-store)
//     static from_blob(data, sizes, strides, dtype, device, deleter)
//   Dim Dims, All all, NewAxis newaxis, Index
//   empty zeros ones full(Dims, [value,] DType = f32), empty_like zeros_like
//   ones_like full_like, arange(n) arange(b, e), from_vector<T>(values, sizes)
//   randn rand randint (deterministic, seeded host tensors; with (seed,
//   offsets): counter-based draws in kernels, kite/random.hpp)
//   Range range(b, e), BlockSize block(n), register_block_size(n)
//   register_block_size(lo, hi), specialize(v)
//   tile(dim [, BlockSize], ...) up to 3-D, tile(std::vector<int64_t>)
//   grid(dim, ...) up to 3-D (dim: an integer extent or a Range)
//   Tile {begin end block_size id count index}, Tiles<N>, TileList, GridIndex<N>
//   Loop<V> (what tile/grid return), ReferenceBlockSizes (RAII)
//   operators + - * / % unary- == != < <= > >= & | ^ ~ (Tensor or S on a side)
//   exp exp2 log log2 sqrt rsqrt abs sin cos tanh erf sigmoid relu silu gelu
//   floor ceil pow maximum minimum clamp where
//   sum mean amax amin prod argmax argmin (v, dim, keepdim = false)
//   cumsum cumprod cummax cummin (v, dim), associative_scan(v or std::tuple{v, ...},
//   dim, combine), sort(v, dim, descending) topk(v, k, dim, largest) (values and
//   i64 positions)
//   unsqueeze squeeze transpose permute reshape expand (free functions too)
//   dot matmul addmm bmm baddbmm
//   load(x, {idx...} [, mask]) store(x, {idx...}, v [, mask])
//   atomic_add atomic_max atomic_min(x, {idx...}, v [, mask])
//   to_string(Tensor), to_string(Device)
//
// For the frontend: tile()/grid() dimensions are `LoopDim` (implicit from any
// integer and from Range); tile() and register_block_size() end with a
// defaulted `std::source_location` (it keys reference block sizes); scalar
// operands are `template <Arithmetic S>` overloads; creation sizes are
// `std::initializer_list<Dim>` or `const std::vector<int64_t> &`; load/store/
// atomic indices are `std::initializer_list<Index>`.
//
// docs/language.md is the user-facing reference.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_KITE_HPP
#define KITE_KITE_HPP

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <source_location>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "random.hpp"

#if defined(__clang__)
#define KITE_KERNEL [[clang::annotate("kite_kernel")]]
#else
#define KITE_KERNEL
#endif

namespace kite {

//===----------------------------------------------------------------------===//
// Errors, dtypes, devices
//===----------------------------------------------------------------------===//

/// Every user error in reference mode (and in the runtime) is a kite::Error
/// whose message names the operation and the offending shapes, dtypes or index.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// e4m3 and e5m2 are the 8-bit floats of FP8 products (PyTorch's
/// float8_e4m3fn and float8_e5m2): storage types whose arithmetic runs in f32.
enum class DType : uint8_t { f16, bf16, f32, f64, i8, i32, i64, boolean, e4m3, e5m2 };
inline constexpr DType f16 = DType::f16;
inline constexpr DType bf16 = DType::bf16;
inline constexpr DType f32 = DType::f32;
inline constexpr DType f64 = DType::f64;
inline constexpr DType i8 = DType::i8;
inline constexpr DType i32 = DType::i32;
inline constexpr DType i64 = DType::i64;
inline constexpr DType boolean = DType::boolean;
inline constexpr DType e4m3 = DType::e4m3;
inline constexpr DType e5m2 = DType::e5m2;

const char *dtype_name(DType t);
/// The dtype named `name` ("bf16", "bool", ...: dtype_name's names); false
/// for anything else.
bool dtype_from_name(std::string_view name, DType &out);
int64_t element_size(DType t);
bool is_floating(DType t);
/// PyTorch's promotion table (torch.promote_types).
DType promote_types(DType a, DType b);

/// bfloat16 storage; conversions round to nearest even.
struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  bfloat16(float f);
  operator float() const;
  static bfloat16 from_bits(uint16_t b);
};

/// IEEE binary16 storage; conversions round to nearest even.
struct half {
  uint16_t bits = 0;
  half() = default;
  half(float f);
  operator float() const;
  static half from_bits(uint16_t b);
};

/// 8-bit float storage with `E` exponent bits and 7 - E mantissa bits.
/// `Ieee`: the top exponent holds infinities and NaNs (float8_e5m2, largest
/// 57344); otherwise only S.1111.111 is NaN and there is no infinity
/// (PyTorch's float8_e4m3fn, largest 448). Conversions from float round to
/// nearest even and do not saturate: past the largest value e4m3 gives NaN
/// and e5m2 infinity, as PyTorch's.
template <int E, bool Ieee> struct float8 {
  uint8_t bits = 0;
  float8() = default;
  float8(float f);
  operator float() const;
  static float8 from_bits(uint8_t b);
};
using float8_e4m3 = float8<4, false>;
using float8_e5m2 = float8<5, true>;

struct Device {
  enum class Kind { cpu, cuda };
  Kind kind = Kind::cpu;
  int index = 0;
  static Device cpu() { return Device{Kind::cpu, 0}; }
  static Device cuda(int index = 0) { return Device{Kind::cuda, index}; }
  bool is_cpu() const { return kind == Kind::cpu; }
  bool is_cuda() const { return kind == Kind::cuda; }
  friend bool operator==(const Device &, const Device &) = default;
};
std::string to_string(Device d);

/// The bytes behind one or more tensors: data in the dtype's layout on a
/// device, released by `deleter` (if any) when the last tensor goes.
struct Storage {
  void *data = nullptr;
  int64_t nbytes = 0;
  Device device;
  std::function<void(void *)> deleter;
  Storage() = default;
  Storage(const Storage &) = delete;
  Storage &operator=(const Storage &) = delete;
  ~Storage() {
    if (deleter)
      deleter(data);
  }
};

/// Arithmetic C++ scalars behave as PyTorch's Python scalars ("weak" types).
template <class T>
concept Arithmetic = std::is_arithmetic_v<T>;
/// Integer indices (bool is not an index).
template <class T>
concept IndexInt = std::integral<T> && !std::same_as<T, bool>;

class Tensor;
class Tile;
class BlockSize;
class TileList;
template <std::size_t N> struct Tiles;
template <std::size_t N> struct GridIndex;
struct Index;
namespace detail {
struct StoreTarget;
struct Access;
} // namespace detail

//===----------------------------------------------------------------------===//
// Block sizes, tiles and loops
//===----------------------------------------------------------------------===//

/// A block size: fixed (`block(64)`) or tunable (`register_block_size`, and
/// every `tile()` dimension given without one).
class BlockSize {
public:
  int64_t value() const { return value_; }
  bool is_fixed() const { return fixed_; }

private:
  BlockSize(int64_t v, bool fixed) : value_(v), fixed_(fixed) {}
  int64_t value_;
  bool fixed_;
  friend BlockSize block(int64_t n);
  friend BlockSize register_block_size(int64_t, std::source_location);
  friend BlockSize register_block_size(int64_t, int64_t, std::source_location);
};

/// A fixed block size, never overridden by the autotuner or
/// ReferenceBlockSizes.
BlockSize block(int64_t n);
/// A tunable block size for a dimension of extent n (reference mode clamps
/// it into [1, n]).
BlockSize register_block_size(int64_t n, std::source_location loc = std::source_location::current());
/// A tunable block size in [lo, hi].
BlockSize register_block_size(int64_t lo, int64_t hi,
                              std::source_location loc = std::source_location::current());

/// The half-open index range [begin, end) of a loop dimension.
struct Range {
  int64_t begin = 0;
  int64_t end = 0;
};
Range range(int64_t begin, int64_t end);

/// One dimension of a tile()/grid() loop: an integer extent n (= [0, n)) or a
/// Range.
struct LoopDim {
  int64_t begin = 0;
  int64_t end = 0;
  template <IndexInt I> LoopDim(I n) : begin(0), end(static_cast<int64_t>(n)) {}
  LoopDim(Range r) : begin(r.begin), end(r.end) {}
};

/// One tile of a loop dimension: indices [begin(), end()). In reference mode
/// the last tile of a dimension is truncated to the dimension's end.
class Tile {
public:
  Tile() = default;
  Tile(int64_t begin, int64_t end, int64_t block_size, int64_t id, int64_t count)
      : begin_(begin), end_(end), block_(block_size), id_(id), count_(count) {}
  int64_t begin() const { return begin_; }
  int64_t end() const { return end_; }
  int64_t block_size() const { return block_; }
  int64_t id() const { return id_; }
  int64_t count() const { return count_; }
  /// The indices [begin, end) as a 1-D i64 tensor.
  Tensor index() const;

private:
  int64_t begin_ = 0, end_ = 0, block_ = 1, id_ = 0, count_ = 0;
};

/// The loop variable of an N-D tile loop: `auto [tm, tn]` or `x[t]`.
template <std::size_t N> struct Tiles {
  std::array<Tile, N> tiles;
  template <std::size_t I> const Tile &get() const { return std::get<I>(tiles); }
  const Tile &operator[](std::size_t i) const { return tiles[i]; }
  static constexpr std::size_t size() { return N; }
};

/// The loop variable of `tile(std::vector<int64_t>)`: a rank known at run time.
class TileList {
public:
  TileList() = default;
  explicit TileList(std::vector<Tile> t) : tiles_(std::move(t)) {}
  std::size_t size() const { return tiles_.size(); }
  const Tile &operator[](std::size_t i) const { return tiles_.at(i); }
  auto begin() const { return tiles_.begin(); }
  auto end() const { return tiles_.end(); }

private:
  std::vector<Tile> tiles_;
};

/// The loop variable of an N-D grid loop: `auto [i, j]` or `x[g]`.
template <std::size_t N> struct GridIndex {
  std::array<int64_t, N> indices;
  template <std::size_t I> int64_t get() const { return std::get<I>(indices); }
  int64_t operator[](std::size_t i) const { return indices[i]; }
  static constexpr std::size_t size() { return N; }
};

namespace detail {
struct LoopAxis {
  int64_t begin, end, block;
  int64_t count() const { return end <= begin ? 0 : (end - begin + block - 1) / block; }
};
template <class V> V makeLoopValue(const std::vector<LoopAxis> &axes, const int64_t *ids);
/// The block size reference mode uses for dimension `dim` of the tunable
/// call site `loc`, clamped into [lo, hi].
int64_t tunableBlockSize(std::source_location loc, int dim, int64_t lo, int64_t hi);
} // namespace detail

/// What tile() and grid() return: iterates row-major over the tile grid (the
/// last dimension fastest), yielding V.
template <class V> class Loop {
public:
  explicit Loop(std::vector<detail::LoopAxis> axes);
  class iterator {
  public:
    V operator*() const;
    iterator &operator++() {
      ++pos_;
      return *this;
    }
    bool operator==(const iterator &o) const { return pos_ == o.pos_; }
    bool operator!=(const iterator &o) const { return pos_ != o.pos_; }

  private:
    friend class Loop;
    iterator(const Loop *l, int64_t p) : loop_(l), pos_(p) {}
    const Loop *loop_;
    int64_t pos_;
  };
  iterator begin() const { return iterator(this, 0); }
  iterator end() const { return iterator(this, total_); }
  /// Number of iterations.
  int64_t size() const { return total_; }

private:
  std::vector<detail::LoopAxis> axes_;
  int64_t total_ = 0;
};

using SrcLoc = std::source_location;

Loop<Tile> tile(LoopDim n, SrcLoc loc = SrcLoc::current());
Loop<Tile> tile(LoopDim n, BlockSize bn, SrcLoc loc = SrcLoc::current());
Loop<Tiles<2>> tile(LoopDim m, LoopDim n, SrcLoc loc = SrcLoc::current());
Loop<Tiles<2>> tile(LoopDim m, BlockSize bm, LoopDim n, SrcLoc loc = SrcLoc::current());
Loop<Tiles<2>> tile(LoopDim m, LoopDim n, BlockSize bn, SrcLoc loc = SrcLoc::current());
Loop<Tiles<2>> tile(LoopDim m, BlockSize bm, LoopDim n, BlockSize bn,
                    SrcLoc loc = SrcLoc::current());
Loop<Tiles<3>> tile(LoopDim m, LoopDim n, LoopDim k, SrcLoc loc = SrcLoc::current());
Loop<Tiles<3>> tile(LoopDim m, BlockSize bm, LoopDim n, LoopDim k,
                    SrcLoc loc = SrcLoc::current());
Loop<Tiles<3>> tile(LoopDim m, LoopDim n, BlockSize bn, LoopDim k,
                    SrcLoc loc = SrcLoc::current());
Loop<Tiles<3>> tile(LoopDim m, LoopDim n, LoopDim k, BlockSize bk,
                    SrcLoc loc = SrcLoc::current());
Loop<Tiles<3>> tile(LoopDim m, BlockSize bm, LoopDim n, BlockSize bn, LoopDim k,
                    SrcLoc loc = SrcLoc::current());
Loop<Tiles<3>> tile(LoopDim m, BlockSize bm, LoopDim n, LoopDim k, BlockSize bk,
                    SrcLoc loc = SrcLoc::current());
Loop<Tiles<3>> tile(LoopDim m, LoopDim n, BlockSize bn, LoopDim k, BlockSize bk,
                    SrcLoc loc = SrcLoc::current());
Loop<Tiles<3>> tile(LoopDim m, BlockSize bm, LoopDim n, BlockSize bn, LoopDim k,
                    BlockSize bk, SrcLoc loc = SrcLoc::current());
/// N-D tiles over [0, sizes[d]) for each d, e.g. `tile(x.sizes())`.
Loop<TileList> tile(const std::vector<int64_t> &sizes, SrcLoc loc = SrcLoc::current());

Loop<int64_t> grid(LoopDim n);
Loop<GridIndex<2>> grid(LoopDim m, LoopDim n);
Loop<GridIndex<3>> grid(LoopDim m, LoopDim n, LoopDim k);

/// Marks a size or scalar as a compile-time constant (part of the cache key);
/// returns v.
template <class T> T specialize(T v) { return v; }

/// Sets the tunable block sizes that reference mode uses while in scope
/// (thread-local, nestable). Each tunable dimension of each distinct call
/// site of tile()/register_block_size() takes, in order of first execution in
/// the scope, the next entry of `sizes`; the last entry repeats. Without a
/// scope every tunable block size is 64.
class ReferenceBlockSizes {
public:
  explicit ReferenceBlockSizes(std::vector<int64_t> sizes);
  ~ReferenceBlockSizes();
  ReferenceBlockSizes(const ReferenceBlockSizes &) = delete;
  ReferenceBlockSizes &operator=(const ReferenceBlockSizes &) = delete;

private:
  friend int64_t detail::tunableBlockSize(SrcLoc, int, int64_t, int64_t);
  struct Site {
    const char *file;
    uint32_t line, column;
    int dim;
    int64_t value;
  };
  std::vector<int64_t> sizes_;
  std::vector<Site> sites_;
  ReferenceBlockSizes *prev_;
};

//===----------------------------------------------------------------------===//
// Dimensions and indices
//===----------------------------------------------------------------------===//

/// A dimension of a created tensor: an integer, a tile (its extent in
/// reference mode: end - begin) or a BlockSize (its value).
struct Dim {
  int64_t value;
  template <IndexInt I> Dim(I v) : value(static_cast<int64_t>(v)) {}
  Dim(const Tile &t) : value(t.end() - t.begin()) {}
  Dim(const BlockSize &b) : value(b.value()) {}
};

/// The whole dimension (`x[t, all]`).
struct All {
  explicit constexpr All() = default;
};
inline constexpr All all{};
/// Inserts a dimension of size 1 (`x[t, newaxis]`).
struct NewAxis {
  explicit constexpr NewAxis() = default;
};
inline constexpr NewAxis newaxis{};

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

/// A strided view of a Storage: a host tensor, a device tensor (made by the
/// runtime through from_blob), or a value inside a loop (a tile). Copies share
/// the storage (a handle, as in PyTorch).
///
/// A subscript `x[...]` is a load: a contiguous copy that remembers where it
/// came from, so that `x[...] = v` (an rvalue assignment) stores through.
/// Copying a Tensor forgets that target, so `auto r = x[t]; r = r * 2;`
/// rebinds r and never writes to x.
class Tensor {
public:
  Tensor() = default;
  Tensor(const Tensor &o);
  Tensor(Tensor &&o) noexcept;
  ~Tensor() = default;

  /// Rebinds this handle (`acc = addmm(acc, a, b)`).
  Tensor &operator=(const Tensor &v) &;
  Tensor &operator=(Tensor &&v) & noexcept;
  /// `x[i, j] = v`: stores v, cast to x's dtype and broadcast to the indexed
  /// shape. On a temporary that is not a subscript, rebinds.
  Tensor &operator=(const Tensor &v) &&;
  Tensor &operator=(Tensor &&v) &&;
  template <Arithmetic S> Tensor &operator=(S v) &&;

  /// `acc += v`: acc = (acc + v) in acc's dtype and shape (PyTorch in-place
  /// rules); rebinds acc. On a subscript (`out[t] += v`), loads, computes and
  /// stores.
  Tensor &operator+=(const Tensor &v) &;
  Tensor &operator-=(const Tensor &v) &;
  Tensor &operator*=(const Tensor &v) &;
  Tensor &operator/=(const Tensor &v) &;
  Tensor &operator+=(const Tensor &v) &&;
  Tensor &operator-=(const Tensor &v) &&;
  Tensor &operator*=(const Tensor &v) &&;
  Tensor &operator/=(const Tensor &v) &&;
  template <Arithmetic S> Tensor &operator+=(S v) &;
  template <Arithmetic S> Tensor &operator-=(S v) &;
  template <Arithmetic S> Tensor &operator*=(S v) &;
  template <Arithmetic S> Tensor &operator/=(S v) &;
  template <Arithmetic S> Tensor &operator+=(S v) &&;
  template <Arithmetic S> Tensor &operator-=(S v) &&;
  template <Arithmetic S> Tensor &operator*=(S v) &&;
  template <Arithmetic S> Tensor &operator/=(S v) &&;

  /// Wraps existing memory (used by the GPU runtime to make CUDA tensors).
  /// Empty strides mean contiguous; `deleter(data)` runs when the last
  /// tensor sharing the storage goes.
  static Tensor from_blob(void *data, std::vector<int64_t> sizes, std::vector<int64_t> strides,
                          DType dtype, Device device = Device::cpu(),
                          std::function<void(void *)> deleter = {});

  DType dtype() const { return dtype_; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  /// Size of dimension d (negative d counts from the end).
  int64_t size(int64_t d) const;
  std::vector<int64_t> sizes() const { return sizes_; }
  int64_t stride(int64_t d) const;
  std::vector<int64_t> strides() const { return strides_; }
  int64_t numel() const;
  bool is_contiguous() const;
  Device device() const;
  bool defined() const { return storage_ != nullptr; }
  /// Pointer to the first element (a device pointer for device tensors).
  void *data_ptr() const;
  /// Typed data_ptr; T must match the dtype (float, double, bfloat16, half,
  /// int8_t, int32_t, int64_t, bool).
  template <class T> T *data() const;
  /// The value of a one-element tensor.
  template <class T> T item() const;
  /// All elements in row-major logical order.
  std::vector<double> to_doubles() const;
  const std::shared_ptr<Storage> &storage() const { return storage_; }
  int64_t storage_offset() const { return offset_; }

  /// Views of contiguous tensors; one size may be -1.
  Tensor reshape(std::vector<int64_t> sizes) const;
  Tensor reshape(std::initializer_list<Dim> sizes) const;
  Tensor view(std::vector<int64_t> sizes) const;
  Tensor view(std::initializer_list<Dim> sizes) const;
  /// Converts to dtype (returns *this if it already has it).
  Tensor to(DType dtype) const;
  Tensor contiguous() const;
  Tensor clone() const;
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor permute(std::vector<int64_t> dims) const;
  Tensor unsqueeze(int64_t d) const;
  /// Removes dimension d if it has size 1 (else returns *this).
  Tensor squeeze(int64_t d) const;
  /// Removes every dimension of size 1.
  Tensor squeeze() const;
  /// Broadcasts size-1 dimensions (-1 keeps a size); a view with stride 0.
  Tensor expand(std::vector<int64_t> sizes) const;
  Tensor expand(std::initializer_list<Dim> sizes) const;

  /// A load: `x[tm, tn]`, `x[t]`, `x[i, all]`, `x[ids, all]`, ... (see Index).
  template <class... Idx>
    requires(std::is_convertible_v<const Idx &, Index> && ...)
  Tensor operator[](const Idx &...idx) const;

private:
  friend struct detail::StoreTarget;
  friend struct detail::Access;
  std::shared_ptr<Storage> storage_;
  std::vector<int64_t> sizes_, strides_;
  int64_t offset_ = 0;
  DType dtype_ = DType::f32;
  std::shared_ptr<const detail::StoreTarget> target_;

  void storeThrough(const Tensor &v) const;
  Tensor &storeOrRebind(Tensor r);
};

/// One subscript: a Tile (keeps the dimension, selects [begin, end)), an
/// integer (removes the dimension; negative wraps), `all`, `newaxis`, an
/// integer Tensor (a gather: its dims replace the indexed one; several tensor
/// indices must be adjacent and broadcast together), or an N-D loop variable
/// (Tiles<N>, TileList, GridIndex<N>: one index per dimension).
struct Index {
  enum class Kind { tile, scalar, whole, new_axis, tensor, tiles, scalars };
  Kind kind;
  Tile tile;
  int64_t scalar = 0;
  Tensor tensor;
  std::vector<Tile> tiles;
  std::vector<int64_t> scalars;

  Index(const Tile &t) : kind(Kind::tile), tile(t) {}
  template <IndexInt I> Index(I i) : kind(Kind::scalar), scalar(static_cast<int64_t>(i)) {}
  Index(All) : kind(Kind::whole) {}
  Index(NewAxis) : kind(Kind::new_axis) {}
  Index(const Tensor &t) : kind(Kind::tensor), tensor(t) {}
  template <std::size_t N>
  Index(const Tiles<N> &t) : kind(Kind::tiles), tiles(t.tiles.begin(), t.tiles.end()) {}
  Index(const TileList &t) : kind(Kind::tiles), tiles(t.begin(), t.end()) {}
  template <std::size_t N>
  Index(const GridIndex<N> &g)
      : kind(Kind::scalars), scalars(g.indices.begin(), g.indices.end()) {}
};

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

/// Uninitialized in the language; reference mode fills floats with NaN and
/// integers with a poison pattern so that unwritten outputs show up.
Tensor empty(std::initializer_list<Dim> sizes, DType dtype = f32);
Tensor empty(const std::vector<int64_t> &sizes, DType dtype = f32);
Tensor zeros(std::initializer_list<Dim> sizes, DType dtype = f32);
Tensor zeros(const std::vector<int64_t> &sizes, DType dtype = f32);
Tensor ones(std::initializer_list<Dim> sizes, DType dtype = f32);
Tensor ones(const std::vector<int64_t> &sizes, DType dtype = f32);
Tensor full(std::initializer_list<Dim> sizes, double value, DType dtype = f32);
Tensor full(const std::vector<int64_t> &sizes, double value, DType dtype = f32);
Tensor empty_like(const Tensor &x);
Tensor empty_like(const Tensor &x, DType dtype);
Tensor zeros_like(const Tensor &x);
Tensor zeros_like(const Tensor &x, DType dtype);
Tensor ones_like(const Tensor &x);
Tensor ones_like(const Tensor &x, DType dtype);
Tensor full_like(const Tensor &x, double value);
Tensor full_like(const Tensor &x, double value, DType dtype);
/// [0, n) and [begin, end) as i64.
Tensor arange(int64_t n);
Tensor arange(int64_t begin, int64_t end);
/// A tensor of T's dtype holding `values` (row-major) with shape `sizes`.
template <class T> Tensor from_vector(const std::vector<T> &values, std::vector<int64_t> sizes);
template <class T> Tensor from_vector(const std::vector<T> &values);
/// Deterministic random inputs: normal(0, 1), uniform [0, 1), uniform
/// integers in [low, high).
Tensor randn(std::vector<int64_t> sizes, DType dtype = f32, uint64_t seed = 0);
Tensor rand(std::vector<int64_t> sizes, DType dtype = f32, uint64_t seed = 0);
Tensor randint(int64_t low, int64_t high, std::vector<int64_t> sizes, DType dtype = i64,
               uint64_t seed = 0);
/// Counter-based random numbers, in kernels and in reference mode alike:
/// one value per element of the integer tensor `offsets`, depending only on
/// (seed, offset) (Philox 4x32-10, kite/random.hpp), so the same on the GPU,
/// in reference mode and under every config. rand: f32 uniform in [0, 1);
/// randn: f32 standard normal; randint: i64 uniform in [low, high).
Tensor rand(int64_t seed, const Tensor &offsets);
Tensor randn(int64_t seed, const Tensor &offsets);
Tensor randint(int64_t seed, const Tensor &offsets, int64_t low, int64_t high);

//===----------------------------------------------------------------------===//
// Element-wise operations (PyTorch broadcasting and type promotion)
//===----------------------------------------------------------------------===//

#define KITE_DECLARE_BINARY(OP)                                                                    \
  Tensor OP(const Tensor &a, const Tensor &b);                                                     \
  template <Arithmetic S> Tensor OP(const Tensor &a, S b);                                         \
  template <Arithmetic S> Tensor OP(S a, const Tensor &b);
KITE_DECLARE_BINARY(operator+)
KITE_DECLARE_BINARY(operator-)
KITE_DECLARE_BINARY(operator*)
KITE_DECLARE_BINARY(operator/)
KITE_DECLARE_BINARY(operator%)
KITE_DECLARE_BINARY(operator==)
KITE_DECLARE_BINARY(operator!=)
KITE_DECLARE_BINARY(operator<)
KITE_DECLARE_BINARY(operator<=)
KITE_DECLARE_BINARY(operator>)
KITE_DECLARE_BINARY(operator>=)
KITE_DECLARE_BINARY(operator&)
KITE_DECLARE_BINARY(operator|)
KITE_DECLARE_BINARY(operator^)
KITE_DECLARE_BINARY(pow)
KITE_DECLARE_BINARY(maximum)
KITE_DECLARE_BINARY(minimum)
#undef KITE_DECLARE_BINARY

Tensor operator-(const Tensor &a);
Tensor operator~(const Tensor &a);

Tensor exp(const Tensor &x);
Tensor exp2(const Tensor &x);
Tensor log(const Tensor &x);
Tensor log2(const Tensor &x);
Tensor sqrt(const Tensor &x);
Tensor rsqrt(const Tensor &x);
Tensor abs(const Tensor &x);
Tensor sin(const Tensor &x);
Tensor cos(const Tensor &x);
Tensor tanh(const Tensor &x);
Tensor erf(const Tensor &x);
Tensor sigmoid(const Tensor &x);
Tensor relu(const Tensor &x);
Tensor silu(const Tensor &x);
/// The exact (erf) form: x/2 * (1 + erf(x/sqrt(2))).
Tensor gelu(const Tensor &x);
Tensor floor(const Tensor &x);
Tensor ceil(const Tensor &x);

/// min(max(x, lo), hi).
Tensor clamp(const Tensor &x, const Tensor &lo, const Tensor &hi);
template <Arithmetic S1, Arithmetic S2> Tensor clamp(const Tensor &x, S1 lo, S2 hi);
/// cond (boolean) ? a : b.
Tensor where(const Tensor &cond, const Tensor &a, const Tensor &b);
template <Arithmetic S> Tensor where(const Tensor &cond, const Tensor &a, S b);
template <Arithmetic S> Tensor where(const Tensor &cond, S a, const Tensor &b);
template <Arithmetic S1, Arithmetic S2> Tensor where(const Tensor &cond, S1 a, S2 b);

//===----------------------------------------------------------------------===//
// Reductions, shapes, matmul
//===----------------------------------------------------------------------===//

Tensor sum(const Tensor &x, int64_t dim, bool keepdim = false);
Tensor mean(const Tensor &x, int64_t dim, bool keepdim = false);
Tensor amax(const Tensor &x, int64_t dim, bool keepdim = false);
Tensor amin(const Tensor &x, int64_t dim, bool keepdim = false);
Tensor prod(const Tensor &x, int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor &x, int64_t dim, bool keepdim = false);
Tensor argmin(const Tensor &x, int64_t dim, bool keepdim = false);
/// Inclusive scans along `dim` (torch.cumsum ...): sums and products of
/// integers and booleans give i64, everything else keeps the dtype. cummax
/// and cummin give the running extremes and their i64 positions, as
/// torch.cummax: NaN propagates, and a tie or a later NaN takes the later
/// position.
Tensor cumsum(const Tensor &x, int64_t dim);
Tensor cumprod(const Tensor &x, int64_t dim);
std::tuple<Tensor, Tensor> cummax(const Tensor &x, int64_t dim);
std::tuple<Tensor, Tensor> cummin(const Tensor &x, int64_t dim);
/// An inclusive scan along `dim` with your own combine function (as
/// Triton's and Helion's associative_scan): element i of the result is
/// combine(...combine(combine(x_0, x_1), x_2)..., x_i). `combine` takes two
/// rank-0 tensors (the earlier element, then the later one) and returns
/// one of the same dtype; it must be associative, since the GPU combines
/// in a tree, and compute only elementwise.
template <class F> Tensor associative_scan(const Tensor &x, int64_t dim, F &&combine);
/// The same over several tensors of one shape at once: `combine` takes the
/// earlier elements of each, then the later ones, (a0, a1, ..., b0, b1,
/// ...), and returns a std::tuple of one per tensor, each of its dtype.
///
///     // h_t = a_t * h_{t-1} + b_t
///     auto [ac, h] = associative_scan(std::tuple{a, b}, 1,
///         [](auto a0, auto b0, auto a1, auto b1) { return std::tuple{a0 * a1, b0 * a1 + b1}; });
template <class... Ts, class F>
std::tuple<Ts...> associative_scan(const std::tuple<Ts...> &xs, int64_t dim, F &&combine);
/// Sorts along `dim` (torch.sort(x, dim, descending, stable=True)): the
/// values and their i64 positions along `dim`. NaN is the largest value;
/// equal values keep their order.
std::tuple<Tensor, Tensor> sort(const Tensor &x, int64_t dim, bool descending = false);
/// The `k` largest (or smallest) along `dim`, sorted, with their positions
/// (torch.topk(x, k, dim, largest, sorted=True); ties: the lower position
/// first).
std::tuple<Tensor, Tensor> topk(const Tensor &x, int64_t k, int64_t dim, bool largest = true);

Tensor unsqueeze(const Tensor &x, int64_t d);
Tensor squeeze(const Tensor &x, int64_t d);
Tensor transpose(const Tensor &x, int64_t d0, int64_t d1);
Tensor permute(const Tensor &x, std::vector<int64_t> dims);
Tensor reshape(const Tensor &x, std::vector<int64_t> sizes);
Tensor reshape(const Tensor &x, std::initializer_list<Dim> sizes);
Tensor expand(const Tensor &x, std::vector<int64_t> sizes);
Tensor expand(const Tensor &x, std::initializer_list<Dim> sizes);

/// [M, K] @ [K, N]; f32 for 16-bit float inputs, else the promoted dtype.
Tensor dot(const Tensor &a, const Tensor &b);
/// torch.matmul (1-D, 2-D, batched with broadcasting); the promoted dtype.
Tensor matmul(const Tensor &a, const Tensor &b);
/// acc + a @ b (2-D), in acc's dtype.
Tensor addmm(const Tensor &acc, const Tensor &a, const Tensor &b);
/// [B, M, K] @ [B, K, N]; the promoted dtype.
Tensor bmm(const Tensor &a, const Tensor &b);
/// bmm with torch.bmm's out_dtype: f32 keeps the sums of 16-bit float
/// inputs unrounded (or the inputs' dtype, as bmm(a, b)).
Tensor bmm(const Tensor &a, const Tensor &b, DType out_dtype);
/// acc + bmm(a, b), in acc's dtype.
Tensor baddbmm(const Tensor &acc, const Tensor &a, const Tensor &b);

//===----------------------------------------------------------------------===//
// Explicit loads, stores and atomics
//===----------------------------------------------------------------------===//

/// x[idx...]; with a mask (broadcast to the indexed shape), masked-off lanes
/// read 0 and may index out of bounds.
Tensor load(const Tensor &x, std::initializer_list<Index> idx);
Tensor load(const Tensor &x, std::initializer_list<Index> idx, const Tensor &mask);
/// x[idx...] = v; with a mask, masked-off lanes are not written (and may index
/// out of bounds).
void store(const Tensor &x, std::initializer_list<Index> idx, const Tensor &v);
void store(const Tensor &x, std::initializer_list<Index> idx, const Tensor &v, const Tensor &mask);
template <Arithmetic S> void store(const Tensor &x, std::initializer_list<Index> idx, S v);
template <Arithmetic S>
void store(const Tensor &x, std::initializer_list<Index> idx, S v, const Tensor &mask);

/// x[idx...] op= v element by element (every duplicate index contributes).
#define KITE_DECLARE_ATOMIC(NAME)                                                                  \
  void NAME(const Tensor &x, std::initializer_list<Index> idx, const Tensor &v);                   \
  void NAME(const Tensor &x, std::initializer_list<Index> idx, const Tensor &v,                    \
            const Tensor &mask);                                                                   \
  template <Arithmetic S> void NAME(const Tensor &x, std::initializer_list<Index> idx, S v);       \
  template <Arithmetic S>                                                                          \
  void NAME(const Tensor &x, std::initializer_list<Index> idx, S v, const Tensor &mask);
KITE_DECLARE_ATOMIC(atomic_add)
KITE_DECLARE_ATOMIC(atomic_max)
KITE_DECLARE_ATOMIC(atomic_min)
#undef KITE_DECLARE_ATOMIC

/// "tensor([[1, 2], [3, 4]], i32)"-style rendering (for debugging and tests).
std::string to_string(const Tensor &x);

} // namespace kite

template <std::size_t N>
struct std::tuple_size<kite::Tiles<N>> : std::integral_constant<std::size_t, N> {};
template <std::size_t I, std::size_t N> struct std::tuple_element<I, kite::Tiles<N>> {
  using type = const kite::Tile;
};
template <std::size_t N>
struct std::tuple_size<kite::GridIndex<N>> : std::integral_constant<std::size_t, N> {};
template <std::size_t I, std::size_t N> struct std::tuple_element<I, kite::GridIndex<N>> {
  using type = int64_t;
};

//===----------------------------------------------------------------------===//
// Reference-mode implementation
//===----------------------------------------------------------------------===//

namespace kite {

//===----------------------------------------------------------------------===//
// DTypes and 16-bit floats
//===----------------------------------------------------------------------===//

inline const char *dtype_name(DType t) {
  switch (t) {
  case DType::f16: return "f16";
  case DType::bf16: return "bf16";
  case DType::f32: return "f32";
  case DType::f64: return "f64";
  case DType::i8: return "i8";
  case DType::i32: return "i32";
  case DType::i64: return "i64";
  case DType::boolean: return "bool";
  case DType::e4m3: return "e4m3";
  case DType::e5m2: return "e5m2";
  }
  return "?";
}

inline bool dtype_from_name(std::string_view name, DType &out) {
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64, DType::i8, DType::i32,
                  DType::i64, DType::boolean, DType::e4m3, DType::e5m2})
    if (name == dtype_name(t)) {
      out = t;
      return true;
    }
  return false;
}

inline int64_t element_size(DType t) {
  switch (t) {
  case DType::i8:
  case DType::boolean:
  case DType::e4m3:
  case DType::e5m2: return 1;
  case DType::f16:
  case DType::bf16: return 2;
  case DType::f32:
  case DType::i32: return 4;
  case DType::f64:
  case DType::i64: return 8;
  }
  return 0;
}

inline bool is_floating(DType t) {
  return t == DType::f16 || t == DType::bf16 || t == DType::f32 || t == DType::f64 ||
         t == DType::e4m3 || t == DType::e5m2;
}

inline DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::boolean) return b;
  if (b == DType::boolean) return a;
  bool fa = is_floating(a), fb = is_floating(b);
  if (fa != fb) return fa ? a : b;
  if (!fa) return element_size(a) >= element_size(b) ? a : b;
  // The wider float holds the narrower one's values; two of one width (f16
  // and bf16, e4m3 and e5m2) meet at f32. (PyTorch refuses to promote its
  // 8-bit floats; kite's rule is the one its 16-bit floats follow.)
  if (element_size(a) != element_size(b)) return element_size(a) > element_size(b) ? a : b;
  return DType::f32;
}

inline bfloat16::bfloat16(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    bits = 0x7fc0; // As PyTorch: NaN becomes the canonical quiet NaN.
    return;
  }
  u += 0x7fffu + ((u >> 16) & 1u);
  bits = static_cast<uint16_t>(u >> 16);
}
inline bfloat16::operator float() const { return std::bit_cast<float>(uint32_t(bits) << 16); }
inline bfloat16 bfloat16::from_bits(uint16_t b) {
  bfloat16 r;
  r.bits = b;
  return r;
}

inline half::half(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) { // inf or NaN
    bits = sign | (x > 0x7f800000u ? 0x7e00 : 0x7c00);
    return;
  }
  if (x >= 0x47800000u) { // >= 65536: overflows to inf
    bits = sign | 0x7c00;
    return;
  }
  if (x < 0x38800000u) { // below the smallest normal half (2^-14): subnormal or zero
    int e = static_cast<int>(x >> 23);
    int shift = 126 - e; // value = m * 2^(e-150); half subnormal unit is 2^-24
    if (e == 0 || shift > 24) {
      bits = sign;
      return;
    }
    uint32_t m = (x & 0x7fffffu) | 0x800000u;
    uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (r & 1u))) ++r;
    bits = static_cast<uint16_t>(sign | r);
    return;
  }
  uint32_t h = ((((x >> 23) - 112u) << 10) | ((x & 0x7fffffu) >> 13));
  uint32_t rem = x & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h; // may carry into inf: correct
  bits = static_cast<uint16_t>(sign | h);
}
inline half::operator float() const {
  uint32_t sign = uint32_t(bits & 0x8000u) << 16;
  uint32_t e = (bits >> 10) & 0x1fu, m = bits & 0x3ffu;
  if (e == 0) {
    float v = static_cast<float>(m) * 5.9604644775390625e-8f; // m * 2^-24, exact
    return sign ? -v : v;
  }
  if (e == 31) return std::bit_cast<float>(sign | 0x7f800000u | (m << 13));
  return std::bit_cast<float>(sign | ((e + 112u) << 23) | (m << 13));
}
inline half half::from_bits(uint16_t b) {
  half r;
  r.bits = b;
  return r;
}

namespace detail {
/// The code of float f in the 8-bit float with `E` exponent bits (bias
/// 2^(E-1) - 1) and 7 - E mantissa bits (`ieee` as float8's `Ieee`),
/// rounded to nearest even; a magnitude past the largest finite value after
/// rounding (infinity included) becomes infinity (`ieee`) or NaN, keeping
/// f's sign, as NaN does.
inline uint8_t fp8Encode(float f, int E, bool ieee) {
  const int M = 7 - E, emin = 2 - (1 << (E - 1)); // the smallest normal exponent
  // The largest finite value: mantissa all ones below the top exponent
  // (ieee), or all ones but the last in the top exponent.
  const double maxFinite = std::ldexp(2.0 - std::ldexp(1.0, ieee ? -M : 1 - M),
                                      (1 << E) - (ieee ? 2 : 1) - 1 + emin);
  const uint8_t nan = 0x7f, overflow = ieee ? static_cast<uint8_t>(((1 << E) - 1) << M) : nan;
  uint8_t sign = std::signbit(f) ? 0x80 : 0;
  if (std::isnan(f)) return sign | nan;
  double a = std::fabs(static_cast<double>(f));
  if (a > maxFinite * 2) return sign | overflow;
  if (a == 0) return sign;
  int e = std::ilogb(a); // a in [2^e, 2^(e+1))
  double q = std::ldexp(1.0, std::max(e, emin) - M), r = a / q, n = std::floor(r);
  if (r - n > 0.5 || (r - n == 0.5 && std::fmod(n, 2.0) != 0)) n += 1;
  double v = n * q;
  if (v > maxFinite) return sign | overflow;
  if (v == 0) return sign;
  int ve = std::ilogb(v);
  if (ve < emin) return sign | static_cast<uint8_t>(v / std::ldexp(1.0, emin - M)); // subnormal
  double mant = (v / std::ldexp(1.0, ve) - 1.0) * (1 << M);
  return sign | static_cast<uint8_t>(((ve - emin + 1) << M) | static_cast<int>(mant));
}

/// The value of code `bits` of the 8-bit float with `E` exponent bits.
/// `ieee`: the top exponent is infinity and NaN (e5m2); otherwise only
/// S.1111.111 is NaN (e4m3's "fn" encoding).
inline float fp8Decode(uint8_t bits, int E, bool ieee) {
  const int M = 7 - E, emin = 2 - (1 << (E - 1)), top = (1 << E) - 1;
  int e = (bits >> M) & top, m = bits & ((1 << M) - 1);
  float sign = (bits & 0x80) ? -1.0f : 1.0f;
  if (ieee && e == top)
    return m ? std::numeric_limits<float>::quiet_NaN() : sign * std::numeric_limits<float>::infinity();
  if (!ieee && e == top && m == (1 << M) - 1) return std::numeric_limits<float>::quiet_NaN();
  if (e == 0) return sign * static_cast<float>(std::ldexp(static_cast<double>(m), emin - M));
  return sign * static_cast<float>(std::ldexp(1.0 + std::ldexp(static_cast<double>(m), -M),
                                              e - 1 + emin));
}
} // namespace detail

template <int E, bool Ieee>
float8<E, Ieee>::float8(float f) : bits(detail::fp8Encode(f, E, Ieee)) {}
template <int E, bool Ieee> float8<E, Ieee>::operator float() const {
  return detail::fp8Decode(bits, E, Ieee);
}
template <int E, bool Ieee> float8<E, Ieee> float8<E, Ieee>::from_bits(uint8_t b) {
  float8 r;
  r.bits = b;
  return r;
}

inline std::string to_string(Device d) {
  return d.kind == Device::Kind::cpu ? std::string("cpu") : "cuda:" + std::to_string(d.index);
}

//===----------------------------------------------------------------------===//
// Internals: shapes, storage, element conversion, iteration
//===----------------------------------------------------------------------===//

namespace detail {
using Shape = std::vector<int64_t>;

[[noreturn]] inline void fail(const std::string &op, const std::string &msg) {
  throw Error("kite: " + op + ": " + msg);
}

inline std::string shapeStr(const Shape &s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) r += ",";
    r += std::to_string(s[i]);
  }
  return r + "]";
}

inline int64_t numelOf(const Shape &s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}

inline Shape contiguousStrides(const Shape &s) {
  Shape st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= s[i] > 1 ? s[i] : 1;
  }
  return st;
}

inline int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }
inline int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }

/// Private access to Tensor for the implementation.
struct Access {
  static Tensor make(std::shared_ptr<Storage> st, Shape sizes, Shape strides, int64_t offset,
                     DType dt) {
    Tensor t;
    t.storage_ = std::move(st);
    t.sizes_ = std::move(sizes);
    t.strides_ = std::move(strides);
    t.offset_ = offset;
    t.dtype_ = dt;
    return t;
  }
  static const Shape &sizes(const Tensor &t) { return t.sizes_; }
  static const Shape &strides(const Tensor &t) { return t.strides_; }
  static const std::shared_ptr<const StoreTarget> &target(const Tensor &t) { return t.target_; }
  static void setTarget(Tensor &t, std::shared_ptr<const StoreTarget> tg) {
    t.target_ = std::move(tg);
  }
  template <class T> static T *base(const Tensor &t) { return static_cast<T *>(t.storage_->data); }
};

inline std::string describe(const Tensor &t) {
  if (!t.defined()) return "(undefined)";
  return shapeStr(Access::sizes(t)) + " " + dtype_name(t.dtype());
}

inline void checkDefined(const char *op, const Tensor &t) {
  if (!t.defined()) fail(op, "the tensor is undefined (a default-constructed kite::Tensor)");
}

/// Reference mode computes on host memory only.
inline void checkCpu(const char *op, const Tensor &t) {
  checkDefined(op, t);
  if (!t.device().is_cpu())
    fail(op, "reference mode runs on the CPU, but tensor " + describe(t) + " is on " +
                 to_string(t.device()) +
                 "; launch the kernel with kite::launch(kernel, args...) to run it on the GPU");
}

inline void alignedFree(void *p) { ::operator delete(p, std::align_val_t(64)); }

inline Tensor allocate(const char *op, const Shape &sizes, DType dt) {
  for (int64_t s : sizes)
    if (s < 0) fail(op, "negative dimension in size " + shapeStr(sizes));
  int64_t n = numelOf(sizes);
  auto st = std::make_shared<Storage>();
  st->nbytes = imax(n * element_size(dt), 1);
  st->data = ::operator new(static_cast<size_t>(st->nbytes), std::align_val_t(64));
  st->deleter = alignedFree;
  return Access::make(std::move(st), sizes, contiguousStrides(sizes), 0, dt);
}

inline int64_t wrapDim(const char *op, int64_t d, int64_t rank) {
  int64_t r = rank == 0 ? 1 : rank;
  if (d < -r || d >= r)
    fail(op, "dimension " + std::to_string(d) + " is out of range for a tensor of rank " +
                 std::to_string(rank) + " (valid: " + std::to_string(-r) + " to " +
                 std::to_string(r - 1) + ")");
  return d < 0 ? d + r : d;
}

/// Merges dimensions so that iteration runs over as few, long rows as possible.
inline void coalesce(Shape &sizes, Shape &strides) {
  Shape s2, st2;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    if (!s2.empty() && st2.back() == strides[d] * sizes[d]) {
      s2.back() *= sizes[d];
      st2.back() = strides[d];
    } else {
      s2.push_back(sizes[d]);
      st2.push_back(strides[d]);
    }
  }
  sizes = std::move(s2);
  strides = std::move(st2);
}

/// Calls f(k, offset) for the k-th element (row-major) of a strided view.
template <class F> void forEachOffset(Shape sizes, Shape strides, int64_t base, F &&f) {
  if (numelOf(sizes) == 0) return;
  coalesce(sizes, strides);
  size_t r = sizes.size();
  if (r == 0) {
    f(int64_t(0), base);
    return;
  }
  int64_t inner = sizes[r - 1], ist = strides[r - 1];
  Shape idx(r, 0);
  int64_t off = base, k = 0;
  for (;;) {
    for (int64_t j = 0; j < inner; ++j) f(k + j, off + j * ist);
    k += inner;
    int64_t d = static_cast<int64_t>(r) - 2;
    for (; d >= 0; --d) {
      off += strides[d];
      if (++idx[d] < sizes[d]) break;
      off -= strides[d] * sizes[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

/// Calls f(T{}) with T the C++ storage type of dt (bool is read as uint8_t).
template <class F> decltype(auto) visitDType(DType dt, F &&f) {
  switch (dt) {
  case DType::f16: return f(half{});
  case DType::bf16: return f(bfloat16{});
  case DType::f32: return f(float{});
  case DType::f64: return f(double{});
  case DType::i8: return f(int8_t{});
  case DType::i32: return f(int32_t{});
  case DType::i64: return f(int64_t{});
  case DType::boolean: return f(uint8_t{});
  case DType::e4m3: return f(float8_e4m3{});
  case DType::e5m2: return f(float8_e5m2{});
  }
  return f(float{});
}

/// The storage types narrower than float (converted through float).
template <class T> constexpr bool isLowFloat() {
  return std::is_same_v<T, half> || std::is_same_v<T, bfloat16> ||
         std::is_same_v<T, float8_e4m3> || std::is_same_v<T, float8_e5m2>;
}

template <class T> constexpr bool isFloatStorage() {
  return std::is_same_v<T, float> || std::is_same_v<T, double> || isLowFloat<T>();
}

template <class T> double toDouble(T v) {
  if constexpr (isLowFloat<T>())
    return static_cast<double>(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, uint8_t>)
    return v != 0 ? 1.0 : 0.0;
  else
    return static_cast<double>(v);
}

/// Float to integer as PyTorch on x86 does (truncation; NaN and out-of-range
/// values give the "integer indefinite" value; i8 goes through i32).
inline int64_t floatToInt(double v, DType as) {
  switch (as) {
  case DType::boolean: return v != 0.0 ? 1 : 0;
  case DType::i64:
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
      return std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(v);
  default: {
    int32_t r = (v > -2147483649.0 && v < 2147483648.0) ? static_cast<int32_t>(v)
                                                         : std::numeric_limits<int32_t>::min();
    return as == DType::i8 ? static_cast<int8_t>(r) : r;
  }
  }
}

inline int64_t wrapInt(int64_t v, DType as) {
  switch (as) {
  case DType::i8: return static_cast<int8_t>(v);
  case DType::i32: return static_cast<int32_t>(v);
  case DType::boolean: return v != 0 ? 1 : 0;
  default: return v;
  }
}

/// v rounded to dtype as (16-bit types go through float, as PyTorch does).
inline double roundTo(double v, DType as) {
  switch (as) {
  case DType::f64: return v;
  case DType::f32: return static_cast<double>(static_cast<float>(v));
  case DType::bf16: return static_cast<float>(bfloat16(static_cast<float>(v)));
  case DType::f16: return static_cast<float>(half(static_cast<float>(v)));
  case DType::e4m3: return static_cast<float>(float8_e4m3(static_cast<float>(v)));
  case DType::e5m2: return static_cast<float>(float8_e5m2(static_cast<float>(v)));
  default: return static_cast<double>(floatToInt(v, as));
  }
}

/// Whether converting src values to dtype as can change them.
inline bool needsRounding(DType src, DType as) {
  if (src == as || src == DType::boolean) return false;
  switch (as) {
  case DType::f64: return false;
  case DType::f32: return src == DType::f64 || src == DType::i32 || src == DType::i64;
  case DType::bf16:
  case DType::f16: return src != DType::i8 && src != DType::e4m3 && src != DType::e5m2;
  default: return true;
  }
}

template <class T> T fromDouble(double v, DType dt) {
  if constexpr (std::is_same_v<T, uint8_t>)
    return v != 0.0 ? 1 : 0;
  else if constexpr (isLowFloat<T>())
    return T(static_cast<float>(v));
  else if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(v);
  else
    return static_cast<T>(floatToInt(v, dt));
}

template <class T> T fromInt(int64_t v) {
  if constexpr (std::is_same_v<T, uint8_t>)
    return v != 0 ? 1 : 0;
  else if constexpr (isLowFloat<T>())
    return T(static_cast<float>(v));
  else
    return static_cast<T>(v);
}

/// x's strides for reading it broadcast to shape (0 on broadcast dimensions).
inline Shape broadcastStrides(const char *op, const Tensor &x, const Shape &shape) {
  const Shape &xs = Access::sizes(x), &xst = Access::strides(x);
  if (xs.size() > shape.size())
    fail(op, "cannot broadcast tensor " + describe(x) + " to shape " + shapeStr(shape));
  Shape st(shape.size(), 0);
  size_t off = shape.size() - xs.size();
  for (size_t i = 0; i < xs.size(); ++i) {
    if (xs[i] == shape[off + i])
      st[off + i] = xs[i] == 1 ? 0 : xst[i];
    else if (xs[i] == 1)
      st[off + i] = 0;
    else
      fail(op, "cannot broadcast tensor " + describe(x) + " to shape " + shapeStr(shape));
  }
  return st;
}

inline Shape broadcastShapes(const char *op, const Shape &a, const Shape &b) {
  size_t r = a.size() > b.size() ? a.size() : b.size();
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1)
      fail(op, "shapes " + shapeStr(a) + " and " + shapeStr(b) +
                   " are not broadcastable (dimension " +
                   std::to_string(static_cast<int64_t>(i) - static_cast<int64_t>(r)) + ": " +
                   std::to_string(da) + " vs " + std::to_string(db) + ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

/// x broadcast to shape, in row-major order, each value converted to the
/// floating dtype as (rounded as PyTorch's cast would).
inline std::vector<double> readF(const char *op, const Tensor &x, DType as, const Shape &shape) {
  checkCpu(op, x);
  Shape st = broadcastStrides(op, x, shape);
  std::vector<double> out(static_cast<size_t>(numelOf(shape)));
  visitDType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *p = Access::base<T>(x);
    double *o = out.data();
    forEachOffset(shape, st, x.storage_offset(), [&](int64_t k, int64_t off) { o[k] = toDouble(p[off]); });
  });
  if (needsRounding(x.dtype(), as))
    for (double &v : out) v = roundTo(v, as);
  return out;
}

/// x broadcast to shape as int64 values of the integer (or boolean) dtype as.
inline std::vector<int64_t> readI(const char *op, const Tensor &x, DType as, const Shape &shape) {
  checkCpu(op, x);
  Shape st = broadcastStrides(op, x, shape);
  std::vector<int64_t> out(static_cast<size_t>(numelOf(shape)));
  visitDType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *p = Access::base<T>(x);
    int64_t *o = out.data();
    if constexpr (isFloatStorage<T>())
      forEachOffset(shape, st, x.storage_offset(),
                    [&](int64_t k, int64_t off) { o[k] = floatToInt(toDouble(p[off]), as); });
    else if constexpr (std::is_same_v<T, uint8_t>)
      forEachOffset(shape, st, x.storage_offset(),
                    [&](int64_t k, int64_t off) { o[k] = p[off] != 0; });
    else
      forEachOffset(shape, st, x.storage_offset(),
                    [&](int64_t k, int64_t off) { o[k] = static_cast<int64_t>(p[off]); });
  });
  if (!is_floating(x.dtype()) && element_size(as) < element_size(x.dtype()))
    for (int64_t &v : out) v = wrapInt(v, as);
  else if (as == DType::boolean && x.dtype() != DType::boolean)
    for (int64_t &v : out) v = v != 0;
  return out;
}

inline Tensor writeF(const std::vector<double> &buf, const Shape &shape, DType dt) {
  Tensor t = allocate("create", shape, dt);
  visitDType(dt, [&](auto tag) {
    using T = decltype(tag);
    T *p = Access::base<T>(t);
    for (size_t k = 0; k < buf.size(); ++k) p[k] = fromDouble<T>(buf[k], dt);
  });
  return t;
}

inline Tensor writeI(const std::vector<int64_t> &buf, const Shape &shape, DType dt) {
  Tensor t = allocate("create", shape, dt);
  visitDType(dt, [&](auto tag) {
    using T = decltype(tag);
    T *p = Access::base<T>(t);
    for (size_t k = 0; k < buf.size(); ++k) p[k] = fromInt<T>(buf[k]);
  });
  return t;
}

/// Copies x (any strides, possibly broadcast to shape) into a new contiguous
/// tensor of the same dtype.
inline Tensor copyTo(const char *op, const Tensor &x, const Shape &shape) {
  checkCpu(op, x);
  Shape st = broadcastStrides(op, x, shape);
  Tensor r = allocate(op, shape, x.dtype());
  auto copy = [&](auto tag) {
    using U = decltype(tag);
    const U *s = Access::base<U>(x);
    U *d = Access::base<U>(r);
    forEachOffset(shape, st, x.storage_offset(), [&](int64_t k, int64_t off) { d[k] = s[off]; });
  };
  switch (element_size(x.dtype())) {
  case 1: copy(uint8_t{}); break;
  case 2: copy(uint16_t{}); break;
  case 4: copy(uint32_t{}); break;
  default: copy(uint64_t{}); break;
  }
  return r;
}

template <class T> constexpr DType dtypeOf() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, float>) return DType::f32;
  else if constexpr (std::is_same_v<U, double>) return DType::f64;
  else if constexpr (std::is_same_v<U, bfloat16>) return DType::bf16;
  else if constexpr (std::is_same_v<U, half>) return DType::f16;
  else if constexpr (std::is_same_v<U, float8_e4m3>) return DType::e4m3;
  else if constexpr (std::is_same_v<U, float8_e5m2>) return DType::e5m2;
  else if constexpr (std::is_same_v<U, bool>) return DType::boolean;
  else if constexpr (std::is_integral_v<U> && std::is_signed_v<U> && sizeof(U) == 1) return DType::i8;
  else if constexpr (std::is_integral_v<U> && std::is_signed_v<U> && sizeof(U) == 4) return DType::i32;
  else if constexpr (std::is_integral_v<U> && std::is_signed_v<U> && sizeof(U) == 8) return DType::i64;
  else static_assert(sizeof(U) == 0, "kite: no kite dtype for this C++ type");
}

inline Shape toShape(std::initializer_list<Dim> dims) {
  Shape s;
  s.reserve(dims.size());
  for (const Dim &d : dims) s.push_back(d.value);
  return s;
}

} // namespace detail

//===----------------------------------------------------------------------===//
// Internals: type promotion and element-wise engines
//===----------------------------------------------------------------------===//

namespace detail {

/// An operand of an element-wise op: a tensor or a C++ scalar. Scalars are
/// PyTorch "wrapped numbers": they take part in promotion by category only.
struct Operand {
  const Tensor *t = nullptr;
  DType category = DType::f32; // boolean, i64 or f32 (a scalar's kind)
  double f = 0;
  int64_t i = 0;
};

inline Operand tensorOp(const Tensor &t) {
  Operand o;
  o.t = &t;
  return o;
}

template <Arithmetic S> Operand scalarOp(S s) {
  Operand o;
  if constexpr (std::is_same_v<S, bool>) {
    o.category = DType::boolean;
    o.i = s ? 1 : 0;
    o.f = static_cast<double>(o.i);
  } else if constexpr (std::is_integral_v<S>) {
    o.category = DType::i64;
    o.i = static_cast<int64_t>(s);
    o.f = static_cast<double>(s);
  } else {
    o.category = DType::f32;
    o.f = static_cast<double>(s);
  }
  return o;
}

/// A weak operand converts at op-math precision: a scalar or a 0-d tensor.
inline bool isWeak(const Operand &o) { return !o.t || o.t->dim() == 0; }

/// The precision 16-bit operations compute in.
inline DType opmath(DType t) {
  return t == DType::f16 || t == DType::bf16 || t == DType::e4m3 || t == DType::e5m2 ? DType::f32
                                                                                     : t;
}

inline int combineCategories(int higher, int lower) {
  if (higher < 0) return lower;
  if (is_floating(DType(higher))) return higher;
  if (DType(higher) == DType::boolean || (lower >= 0 && is_floating(DType(lower))))
    return lower < 0 ? higher : int(promote_types(DType(higher), DType(lower)));
  return higher;
}

/// torch.result_type: tensors with dimensions, then 0-d tensors, then scalars,
/// each class only raising the category of the one above.
inline DType resultType(const char *op, std::initializer_list<const Operand *> ops) {
  int dimR = -1, zeroR = -1, wrapR = -1;
  auto up = [](int cur, DType t) { return cur < 0 ? int(t) : int(promote_types(DType(cur), t)); };
  for (const Operand *o : ops) {
    if (o->t) {
      checkCpu(op, *o->t);
      if (o->t->dim() > 0)
        dimR = up(dimR, o->t->dtype());
      else
        zeroR = up(zeroR, o->t->dtype());
    } else {
      wrapR = up(wrapR, o->category);
    }
  }
  return DType(combineCategories(dimR, combineCategories(zeroR, wrapR)));
}

inline Shape operandShape(const char *op, std::initializer_list<const Operand *> ops) {
  Shape s;
  for (const Operand *o : ops)
    if (o->t) s = broadcastShapes(op, s, Access::sizes(*o->t));
  return s;
}

/// The operand's values converted to `common` (weak operands: to op-math
/// precision). A scalar or 0-d tensor gives one value.
inline std::vector<double> operandF(const char *op, const Operand &o, DType common,
                                    const Shape &shape) {
  if (!o.t) return {roundTo(o.f, opmath(common))};
  if (o.t->dim() == 0) return readF(op, *o.t, opmath(common), {});
  return readF(op, *o.t, common, shape);
}

inline bool fitsInt(int64_t v, DType t) { return wrapInt(v, t) == v || t == DType::boolean; }

inline std::vector<int64_t> operandI(const char *op, const Operand &o, DType common,
                                     const Shape &shape) {
  if (!o.t) {
    if (common != DType::boolean && !fitsInt(o.i, common))
      fail(op, "value " + std::to_string(o.i) + " cannot be converted to " + dtype_name(common) +
                   " without overflow");
    return {o.i};
  }
  return readI(op, *o.t, common, o.t->dim() == 0 ? Shape{} : shape);
}

template <class T, class F>
void loop2(std::vector<T> &out, const std::vector<T> &a, const std::vector<T> &b, F f) {
  size_t n = out.size();
  if (n == 0) return;
  T *o = out.data();
  const T *pa = a.data(), *pb = b.data();
  if (a.size() == n && b.size() == n)
    for (size_t k = 0; k < n; ++k) o[k] = f(pa[k], pb[k]);
  else if (a.size() == n) {
    T y = pb[0];
    for (size_t k = 0; k < n; ++k) o[k] = f(pa[k], y);
  } else if (b.size() == n) {
    T x = pa[0];
    for (size_t k = 0; k < n; ++k) o[k] = f(x, pb[k]);
  } else {
    T v = f(pa[0], pb[0]);
    for (size_t k = 0; k < n; ++k) o[k] = v;
  }
}

/// out = f(a, b) computed in double (floating `common`) or wrapping int64.
template <class FF, class FI>
Tensor elementwise2(const char *op, const Operand &a, const Operand &b, DType common, DType result,
                    FF ff, FI fi) {
  Shape shape = operandShape(op, {&a, &b});
  size_t n = static_cast<size_t>(numelOf(shape));
  if (is_floating(common)) {
    std::vector<double> av = operandF(op, a, common, shape), bv = operandF(op, b, common, shape);
    std::vector<double> out(n);
    loop2(out, av, bv, ff);
    return writeF(out, shape, result);
  }
  std::vector<int64_t> av = operandI(op, a, common, shape), bv = operandI(op, b, common, shape);
  std::vector<int64_t> out(n);
  loop2(out, av, bv, fi);
  return writeI(out, shape, result);
}

inline int64_t wrapAdd(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
inline int64_t wrapSub(int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); }
inline int64_t wrapMul(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }

inline double nanMax(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  return a > b ? a : b;
}
inline double nanMin(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  return a < b ? a : b;
}
/// Python's (and torch.remainder's) modulo: the result has the divisor's sign.
inline double pyRemF(double a, double b) {
  double m = std::fmod(a, b);
  if (m != 0 && ((b < 0) != (m < 0))) m += b;
  return m;
}
inline int64_t pyRemI(int64_t a, int64_t b) {
  if (b == 0) fail("operator%", "integer division by zero");
  if (b == -1) return 0;
  int64_t m = a % b;
  if (m != 0 && ((b < 0) != (m < 0))) m += b;
  return m;
}
inline int64_t powI(int64_t a, int64_t b) {
  if (b < 0) fail("pow", "integers to negative integer powers are not allowed");
  uint64_t r = 1, x = uint64_t(a);
  for (uint64_t e = uint64_t(b); e; e >>= 1) {
    if (e & 1) r *= x;
    x *= x;
  }
  return int64_t(r);
}

enum class Bin { add, sub, mul, div, rem, eq, ne, lt, le, gt, ge, band, bor, bxor, pow, max, min };

inline const char *binName(Bin op) {
  switch (op) {
  case Bin::add: return "operator+";
  case Bin::sub: return "operator-";
  case Bin::mul: return "operator*";
  case Bin::div: return "operator/";
  case Bin::rem: return "operator%";
  case Bin::eq: return "operator==";
  case Bin::ne: return "operator!=";
  case Bin::lt: return "operator<";
  case Bin::le: return "operator<=";
  case Bin::gt: return "operator>";
  case Bin::ge: return "operator>=";
  case Bin::band: return "operator&";
  case Bin::bor: return "operator|";
  case Bin::bxor: return "operator^";
  case Bin::pow: return "pow";
  case Bin::max: return "maximum";
  case Bin::min: return "minimum";
  }
  return "?";
}

inline Tensor binary(Bin op, const Operand &a, const Operand &b) {
  const char *name = binName(op);
  DType common = resultType(name, {&a, &b});
  DType result = common;
  bool boolCommon = common == DType::boolean;
  switch (op) {
  case Bin::sub:
    if (boolCommon)
      fail(name, "subtracting booleans is not supported; use operator^ (xor) or where() instead");
    break;
  case Bin::div:
    if (!is_floating(common)) common = result = DType::f32; // true division
    break;
  case Bin::rem:
  case Bin::pow:
    if (boolCommon) fail(name, "not supported for boolean operands");
    break;
  case Bin::eq:
  case Bin::ne:
  case Bin::lt:
  case Bin::le:
  case Bin::gt:
  case Bin::ge: result = DType::boolean; break;
  case Bin::band:
  case Bin::bor:
  case Bin::bxor:
    if (is_floating(common))
      fail(name, std::string("needs boolean or integer operands, but the operands promote to ") +
                     dtype_name(common));
    break;
  default: break;
  }
  using I = int64_t;
  switch (op) {
  case Bin::add:
    return elementwise2(name, a, b, common, result, [](double x, double y) { return x + y; }, wrapAdd);
  case Bin::sub:
    return elementwise2(name, a, b, common, result, [](double x, double y) { return x - y; }, wrapSub);
  case Bin::mul:
    return elementwise2(name, a, b, common, result, [](double x, double y) { return x * y; }, wrapMul);
  case Bin::div:
    return elementwise2(name, a, b, common, result, [](double x, double y) { return x / y; }, wrapAdd);
  case Bin::rem: return elementwise2(name, a, b, common, result, pyRemF, pyRemI);
  case Bin::eq:
    return elementwise2(name, a, b, common, result, [](double x, double y) { return double(x == y); },
                        [](I x, I y) { return I(x == y); });
  case Bin::ne:
    return elementwise2(name, a, b, common, result, [](double x, double y) { return double(x != y); },
                        [](I x, I y) { return I(x != y); });
  case Bin::lt:
    return elementwise2(name, a, b, common, result, [](double x, double y) { return double(x < y); },
                        [](I x, I y) { return I(x < y); });
  case Bin::le:
    return elementwise2(name, a, b, common, result, [](double x, double y) { return double(x <= y); },
                        [](I x, I y) { return I(x <= y); });
  case Bin::gt:
    return elementwise2(name, a, b, common, result, [](double x, double y) { return double(x > y); },
                        [](I x, I y) { return I(x > y); });
  case Bin::ge:
    return elementwise2(name, a, b, common, result, [](double x, double y) { return double(x >= y); },
                        [](I x, I y) { return I(x >= y); });
  case Bin::band:
    return elementwise2(name, a, b, common, result, [](double, double) { return 0.0; },
                        [](I x, I y) { return I(x & y); });
  case Bin::bor:
    return elementwise2(name, a, b, common, result, [](double, double) { return 0.0; },
                        [](I x, I y) { return I(x | y); });
  case Bin::bxor:
    return elementwise2(name, a, b, common, result, [](double, double) { return 0.0; },
                        [](I x, I y) { return I(x ^ y); });
  case Bin::pow:
    return elementwise2(name, a, b, common, result, [](double x, double y) { return std::pow(x, y); },
                        powI);
  case Bin::max:
    return elementwise2(name, a, b, common, result, nanMax, [](I x, I y) { return x > y ? x : y; });
  case Bin::min:
    return elementwise2(name, a, b, common, result, nanMin, [](I x, I y) { return x < y ? x : y; });
  }
  fail(name, "unknown operation");
}

enum class Un {
  neg, bnot, exp, exp2, log, log2, sqrt, rsqrt, abs, sin, cos, tanh, erf, sigmoid, relu, silu,
  gelu, floor, ceil
};

inline const char *unName(Un op) {
  static const char *const names[] = {"operator-", "operator~", "exp",  "exp2",    "log",
                                      "log2",      "sqrt",      "rsqrt", "abs",    "sin",
                                      "cos",       "tanh",      "erf",  "sigmoid", "relu",
                                      "silu",      "gelu",      "floor", "ceil"};
  return names[static_cast<int>(op)];
}

template <class FF, class FI>
Tensor elementwise1(const char *op, const Tensor &x, DType common, DType result, FF ff, FI fi) {
  const Shape &shape = Access::sizes(x);
  if (is_floating(common)) {
    std::vector<double> v = readF(op, x, common, shape);
    for (double &e : v) e = ff(e);
    return writeF(v, shape, result);
  }
  std::vector<int64_t> v = readI(op, x, common, shape);
  for (int64_t &e : v) e = fi(e);
  return writeI(v, shape, result);
}

inline double sigmoidD(double x) { return 1.0 / (1.0 + std::exp(-x)); }

inline Tensor unary(Un op, const Tensor &x) {
  const char *name = unName(op);
  checkCpu(name, x);
  DType dt = x.dtype();
  using I = int64_t;
  auto ident = [](I v) { return v; };
  auto noInt = [](I v) { return v; };
  // Transcendental functions compute integer inputs as f32, as PyTorch does.
  DType fl = is_floating(dt) ? dt : DType::f32;
  switch (op) {
  case Un::neg:
    if (dt == DType::boolean)
      fail(name, "negating a boolean tensor is not supported; use operator~ instead");
    return elementwise1(name, x, dt, dt, [](double v) { return -v; },
                        [](I v) { return wrapSub(0, v); });
  case Un::bnot:
    if (is_floating(dt))
      fail(name, std::string("needs a boolean or integer operand, got ") + dtype_name(dt));
    if (dt == DType::boolean)
      return elementwise1(name, x, dt, dt, [](double v) { return v; }, [](I v) { return I(!v); });
    return elementwise1(name, x, dt, dt, [](double v) { return v; }, [](I v) { return ~v; });
  case Un::exp: return elementwise1(name, x, fl, fl, [](double v) { return std::exp(v); }, noInt);
  case Un::exp2: return elementwise1(name, x, fl, fl, [](double v) { return std::exp2(v); }, noInt);
  case Un::log: return elementwise1(name, x, fl, fl, [](double v) { return std::log(v); }, noInt);
  case Un::log2: return elementwise1(name, x, fl, fl, [](double v) { return std::log2(v); }, noInt);
  case Un::sqrt: return elementwise1(name, x, fl, fl, [](double v) { return std::sqrt(v); }, noInt);
  case Un::rsqrt:
    return elementwise1(name, x, fl, fl, [](double v) { return 1.0 / std::sqrt(v); }, noInt);
  case Un::sin: return elementwise1(name, x, fl, fl, [](double v) { return std::sin(v); }, noInt);
  case Un::cos: return elementwise1(name, x, fl, fl, [](double v) { return std::cos(v); }, noInt);
  case Un::tanh: return elementwise1(name, x, fl, fl, [](double v) { return std::tanh(v); }, noInt);
  case Un::erf: return elementwise1(name, x, fl, fl, [](double v) { return std::erf(v); }, noInt);
  case Un::sigmoid: return elementwise1(name, x, fl, fl, sigmoidD, noInt);
  case Un::silu:
  case Un::gelu:
    if (!is_floating(dt))
      fail(name, std::string("needs a floating-point operand, got ") + dtype_name(dt) +
                     "; convert with .to(f32) first");
    if (op == Un::silu)
      return elementwise1(name, x, dt, dt, [](double v) { return v * sigmoidD(v); }, noInt);
    return elementwise1(name, x, dt, dt,
                        [](double v) { return 0.5 * v * (1.0 + std::erf(v * 0.70710678118654752440)); },
                        noInt);
  case Un::abs:
    return elementwise1(name, x, dt, dt, [](double v) { return std::fabs(v); },
                        [](I v) { return v < 0 ? wrapSub(0, v) : v; });
  case Un::relu:
    return elementwise1(name, x, dt, dt, [](double v) { return std::isnan(v) ? v : (v > 0 ? v : 0.0); },
                        [](I v) { return v > 0 ? v : I(0); });
  case Un::floor: return elementwise1(name, x, dt, dt, [](double v) { return std::floor(v); }, ident);
  case Un::ceil: return elementwise1(name, x, dt, dt, [](double v) { return std::ceil(v); }, ident);
  }
  fail(name, "unknown operation");
}

inline Tensor whereImpl(const Tensor &cond, const Operand &a, const Operand &b) {
  const char *name = "where";
  checkCpu(name, cond);
  if (cond.dtype() != DType::boolean)
    fail(name, std::string("the condition must be boolean, got ") + describe(cond));
  DType common = resultType(name, {&a, &b});
  Shape shape = broadcastShapes(name, Access::sizes(cond), operandShape(name, {&a, &b}));
  std::vector<int64_t> c = readI(name, cond, DType::boolean, shape);
  size_t n = c.size();
  auto pick = [&](auto &av, auto &bv, auto &out) {
    for (size_t k = 0; k < n; ++k)
      out[k] = c[k] ? av[av.size() == 1 ? 0 : k] : bv[bv.size() == 1 ? 0 : k];
  };
  if (is_floating(common)) {
    std::vector<double> av = operandF(name, a, common, shape), bv = operandF(name, b, common, shape);
    std::vector<double> out(n);
    pick(av, bv, out);
    return writeF(out, shape, common);
  }
  std::vector<int64_t> av = operandI(name, a, common, shape), bv = operandI(name, b, common, shape);
  std::vector<int64_t> out(n);
  pick(av, bv, out);
  return writeI(out, shape, common);
}

/// PyTorch's rule for in-place results: no float -> integer, no -> bool.
inline bool canCast(DType from, DType to) {
  if (is_floating(from) && !is_floating(to)) return false;
  if (from != DType::boolean && to == DType::boolean) return false;
  return true;
}

/// The value of `cur op= v`: computed as cur op v, in cur's dtype and shape.
inline Tensor inplaceResult(Bin op, const Tensor &cur, const Operand &v) {
  const char *name = binName(op);
  checkDefined(name, cur);
  Tensor r = binary(op, tensorOp(cur), v);
  if (Access::sizes(r) != Access::sizes(cur))
    fail(std::string(name) + "=", "the result shape " + shapeStr(Access::sizes(r)) +
                                      " does not match the target shape " +
                                      shapeStr(Access::sizes(cur)));
  if (!canCast(r.dtype(), cur.dtype()))
    fail(std::string(name) + "=", std::string("the result type ") + dtype_name(r.dtype()) +
                                      " cannot be cast to the target type " +
                                      dtype_name(cur.dtype()));
  return r.to(cur.dtype());
}

template <Arithmetic S> Tensor scalarTensor(S v, DType dt) {
  if constexpr (std::is_integral_v<S>)
    return writeI({static_cast<int64_t>(v)}, {}, dt);
  else
    return writeF({static_cast<double>(v)}, {}, dt);
}

//===----------------------------------------------------------------------===//
// Internals: reductions and matmul
//===----------------------------------------------------------------------===//

/// `x` as lines along `dim` (checked, negative counted from the end): its
/// rank, the dim, its shape (a 0-d tensor as [1]), and `outer` lines
/// before `inner` ones of `R` elements each; element r of line (o, i) is
/// at (o * R + r) * inner + i.
struct LinesAlong {
  int64_t rank, d;
  Shape shape;
  int64_t outer, inner, R;
};
inline LinesAlong linesAlong(const char *name, const Tensor &x, int64_t dim) {
  checkCpu(name, x);
  int64_t rank = x.dim();
  int64_t d = wrapDim(name, dim, rank);
  Shape shape = rank == 0 ? Shape{1} : Access::sizes(x);
  int64_t outer = 1, inner = 1, R = shape[d];
  for (int64_t i = 0; i < d; ++i) outer *= shape[i];
  for (size_t i = d + 1; i < shape.size(); ++i) inner *= shape[i];
  return {rank, d, shape, outer, inner, R};
}

enum class Red { sum, mean, amax, amin, prod, argmax, argmin };

inline Tensor reduce(Red op, const Tensor &x, int64_t dim, bool keepdim) {
  static const char *const names[] = {"sum", "mean", "amax", "amin", "prod", "argmax", "argmin"};
  const char *name = names[static_cast<int>(op)];
  auto [rank, d, shape, outer, inner, R] = linesAlong(name, x, dim);
  Shape outShape = shape;
  if (keepdim)
    outShape[d] = 1;
  else
    outShape.erase(outShape.begin() + d);
  if (rank == 0) outShape = {};
  DType dt = x.dtype();
  bool fl = is_floating(dt);
  bool arg = op == Red::argmax || op == Red::argmin;
  if (R == 0 && (op == Red::amax || op == Red::amin || arg))
    fail(name, "cannot reduce over dimension " + std::to_string(d) + " of size 0 (tensor " +
                   describe(x) + ")");
  if (op == Red::mean && !fl)
    fail(name, std::string("needs a floating-point input, got ") + dtype_name(dt) +
                   "; convert with .to(f32) first");
  size_t nOut = static_cast<size_t>(outer * inner);
  if (arg) {
    std::vector<int64_t> best(nOut, 0);
    bool isMax = op == Red::argmax;
    if (fl) {
      std::vector<double> v = readF(name, x, dt, Access::sizes(x));
      std::vector<double> bv(nOut);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t r = 0; r < R; ++r)
          for (int64_t i = 0; i < inner; ++i) {
            double e = v[(o * R + r) * inner + i];
            size_t k = o * inner + i;
            double &b = bv[k];
            bool take = r == 0 || (!std::isnan(b) && (std::isnan(e) || (isMax ? e > b : e < b)));
            if (take) {
              b = e;
              best[k] = r;
            }
          }
    } else {
      std::vector<int64_t> v = readI(name, x, dt, Access::sizes(x));
      std::vector<int64_t> bv(nOut);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t r = 0; r < R; ++r)
          for (int64_t i = 0; i < inner; ++i) {
            int64_t e = v[(o * R + r) * inner + i];
            size_t k = o * inner + i;
            if (r == 0 || (isMax ? e > bv[k] : e < bv[k])) {
              bv[k] = e;
              best[k] = r;
            }
          }
    }
    return writeI(best, outShape, DType::i64);
  }
  if (fl) {
    std::vector<double> v = readF(name, x, dt, Access::sizes(x));
    double init = op == Red::prod ? 1.0 : 0.0;
    std::vector<double> acc(nOut, init);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t r = 0; r < R; ++r) {
        const double *row = v.data() + (o * R + r) * inner;
        double *a = acc.data() + o * inner;
        switch (op) {
        case Red::sum:
        case Red::mean:
          for (int64_t i = 0; i < inner; ++i) a[i] += row[i];
          break;
        case Red::prod:
          for (int64_t i = 0; i < inner; ++i) a[i] *= row[i];
          break;
        case Red::amax:
          for (int64_t i = 0; i < inner; ++i) a[i] = r == 0 ? row[i] : nanMax(a[i], row[i]);
          break;
        default:
          for (int64_t i = 0; i < inner; ++i) a[i] = r == 0 ? row[i] : nanMin(a[i], row[i]);
          break;
        }
      }
    if (op == Red::mean)
      for (double &a : acc) a /= static_cast<double>(R);
    return writeF(acc, outShape, dt);
  }
  std::vector<int64_t> v = readI(name, x, dt, Access::sizes(x));
  std::vector<int64_t> acc(nOut, op == Red::prod ? 1 : 0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t r = 0; r < R; ++r) {
      const int64_t *row = v.data() + (o * R + r) * inner;
      int64_t *a = acc.data() + o * inner;
      for (int64_t i = 0; i < inner; ++i) {
        switch (op) {
        case Red::sum: a[i] = wrapAdd(a[i], row[i]); break;
        case Red::prod: a[i] = wrapMul(a[i], row[i]); break;
        case Red::amax: a[i] = (r == 0 || row[i] > a[i]) ? row[i] : a[i]; break;
        default: a[i] = (r == 0 || row[i] < a[i]) ? row[i] : a[i]; break;
        }
      }
    }
  DType rt = (op == Red::sum || op == Red::prod) ? DType::i64 : dt;
  return writeI(acc, outShape, rt);
}

enum class Scan { sum, prod };

/// Inclusive sums and products (cummax and cummin: scanWithIndices);
/// floats accumulate in double and each output rounds once.
inline Tensor scan(Scan op, const Tensor &x, int64_t dim) {
  static const char *const names[] = {"cumsum", "cumprod"};
  const char *name = names[static_cast<int>(op)];
  auto [rank, d, shape, outer, inner, R] = linesAlong(name, x, dim);
  Shape outShape = rank == 0 ? Shape{} : shape;
  DType dt = x.dtype();
  auto run = [&](auto &v, auto combine) {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t r = 1; r < R; ++r)
        for (int64_t i = 0; i < inner; ++i) {
          auto &e = v[(o * R + r) * inner + i];
          e = combine(v[(o * R + r - 1) * inner + i], e);
        }
  };
  if (is_floating(dt)) {
    std::vector<double> v = readF(name, x, dt, Access::sizes(x));
    if (op == Scan::sum)
      run(v, [](double a, double b) { return a + b; });
    else
      run(v, [](double a, double b) { return a * b; });
    return writeF(v, outShape, dt);
  }
  std::vector<int64_t> v = readI(name, x, dt, Access::sizes(x));
  if (op == Scan::sum)
    run(v, [](int64_t a, int64_t b) { return wrapAdd(a, b); });
  else
    run(v, [](int64_t a, int64_t b) { return wrapMul(a, b); });
  return writeI(v, outShape, DType::i64); // integer sums and products widen
}

/// cummax (`isMax`) or cummin: the running extremes and their positions.
inline std::tuple<Tensor, Tensor> scanWithIndices(bool isMax, const Tensor &x, int64_t dim) {
  const char *name = isMax ? "cummax" : "cummin";
  auto [rank, d, shape, outer, inner, R] = linesAlong(name, x, dim);
  Shape outShape = rank == 0 ? Shape{} : shape;
  DType dt = x.dtype();
  std::vector<int64_t> pos(outer * R * inner);
  auto run = [&](auto &v) {
    using V = std::decay_t<decltype(v[0])>;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        V best{};
        int64_t at = -1;
        for (int64_t r = 0; r < R; ++r) {
          size_t k = (o * R + r) * inner + i;
          V e = v[k];
          bool take = at < 0;
          if constexpr (std::is_floating_point_v<V>)
            take = take || std::isnan(e) ||
                   (!std::isnan(best) && (isMax ? e >= best : e <= best));
          else
            take = take || (isMax ? e >= best : e <= best);
          if (take) {
            best = e;
            at = r;
          }
          v[k] = best;
          pos[k] = at;
        }
      }
  };
  Tensor values;
  if (is_floating(dt)) {
    std::vector<double> v = readF(name, x, dt, Access::sizes(x));
    run(v);
    values = writeF(v, outShape, dt);
  } else {
    std::vector<int64_t> v = readI(name, x, dt, Access::sizes(x));
    run(v);
    values = writeI(v, outShape, dt);
  }
  return {values, writeI(pos, outShape, DType::i64)};
}

/// The combine function of associative_scan on rank-0 tensors: the
/// earlier elements, the later ones; one result per operand.
using ScanCombine =
    std::function<std::vector<Tensor>(const std::vector<Tensor> &, const std::vector<Tensor> &)>;

/// associative_scan over `xs` (one shape), left to right along each line.
inline std::vector<Tensor> associativeScan(const std::vector<Tensor> &xs, int64_t dim,
                                           const ScanCombine &combine) {
  const char *name = "associative_scan";
  auto [rank, d, shape, outer, inner, R] = linesAlong(name, xs[0], dim);
  Shape outShape = rank == 0 ? Shape{} : shape;
  size_t n = xs.size();
  // Each operand's elements as doubles (float dtypes) or int64s.
  std::vector<std::vector<double>> fv(n);
  std::vector<std::vector<int64_t>> iv(n);
  for (size_t j = 0; j < n; ++j) {
    if (Access::sizes(xs[j]) != Access::sizes(xs[0]))
      fail(name, "operand " + std::to_string(j) + " is " + describe(xs[j]) +
                     ", but operand 0 is " + describe(xs[0]) + "; all must have one shape");
    if (is_floating(xs[j].dtype()))
      fv[j] = readF(name, xs[j], xs[j].dtype(), Access::sizes(xs[j]));
    else
      iv[j] = readI(name, xs[j], xs[j].dtype(), Access::sizes(xs[j]));
  }
  auto element = [&](size_t j, size_t k) {
    DType dt = xs[j].dtype();
    return is_floating(dt) ? writeF({fv[j][k]}, Shape{}, dt) : writeI({iv[j][k]}, Shape{}, dt);
  };
  auto store = [&](size_t j, size_t k, const Tensor &t) {
    DType dt = xs[j].dtype();
    if (t.dim() != 0 || t.dtype() != dt)
      fail(name, "the combine function returned " + describe(t) + " for operand " +
                     std::to_string(j) + "; it must return a rank-0 " + dtype_name(dt) +
                     " (the operand's dtype)");
    if (is_floating(dt))
      fv[j][k] = readF(name, t, dt, Shape{})[0];
    else
      iv[j][k] = readI(name, t, dt, Shape{})[0];
  };
  std::vector<Tensor> acc(n), next(n);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (size_t j = 0; j < n; ++j)
        acc[j] = element(j, static_cast<size_t>(o * R * inner + i));
      for (int64_t r = 1; r < R; ++r) {
        size_t k = static_cast<size_t>((o * R + r) * inner + i);
        for (size_t j = 0; j < n; ++j)
          next[j] = element(j, k);
        std::vector<Tensor> out = combine(acc, next);
        if (out.size() != n)
          fail(name, "the combine function returned " + std::to_string(out.size()) +
                         " values for " + std::to_string(n) + " operands");
        for (size_t j = 0; j < n; ++j) {
          store(j, k, out[j]);
          acc[j] = std::move(out[j]);
        }
      }
    }
  std::vector<Tensor> results;
  for (size_t j = 0; j < n; ++j)
    results.push_back(is_floating(xs[j].dtype()) ? writeF(fv[j], outShape, xs[j].dtype())
                                                 : writeI(iv[j], outShape, xs[j].dtype()));
  return results;
}

/// The first `k` of each line along `dim` in sorted order (k = the
/// dim's size: a full sort), values and positions.
inline std::tuple<Tensor, Tensor> sortImpl(const char *name, const Tensor &x, int64_t dim,
                                           bool descending, std::optional<int64_t> topK) {
  auto [rank, d, shape, outer, inner, R] = linesAlong(name, x, dim);
  int64_t k = topK.value_or(R);
  if (k < 0 || k > R)
    fail(name, "k = " + std::to_string(k) + " is out of range for dimension " +
                   std::to_string(d) + " of size " + std::to_string(R) + " (tensor " +
                   describe(x) + ")");
  Shape outShape = shape;
  outShape[d] = k;
  if (rank == 0) outShape = {};
  DType dt = x.dtype();
  std::vector<int64_t> order(R), pos(outer * k * inner);
  auto run = [&](const auto &v, auto &out) {
    using V = std::decay_t<decltype(v[0])>;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        auto at = [&](int64_t r) { return v[(o * R + r) * inner + i]; };
        for (int64_t r = 0; r < R; ++r) order[r] = r;
        // NaN is the largest value; stable: equal values by position.
        auto before = [&](int64_t a, int64_t b) {
          V x = at(a), y = at(b);
          if constexpr (std::is_floating_point_v<V>) {
            bool nx = std::isnan(x), ny = std::isnan(y);
            if (nx || ny)
              return nx != ny ? (descending ? nx : ny) : a < b;
          }
          if (x != y)
            return descending ? x > y : x < y;
          return a < b;
        };
        std::sort(order.begin(), order.end(), before);
        for (int64_t r = 0; r < k; ++r) {
          size_t at_ = (o * k + r) * inner + i;
          out[at_] = at(order[r]);
          pos[at_] = order[r];
        }
      }
  };
  Tensor values;
  if (is_floating(dt)) {
    std::vector<double> v = readF(name, x, dt, Access::sizes(x)), out(pos.size());
    run(v, out);
    values = writeF(out, outShape, dt);
  } else {
    std::vector<int64_t> v = readI(name, x, dt, Access::sizes(x)), out(pos.size());
    run(v, out);
    values = writeI(out, outShape, dt);
  }
  return {values, writeI(pos, outShape, DType::i64)};
}

/// C[b] (+)= A[b] @ B[b] for row-major [batch, M, K] and [batch, K, N].
template <class T>
void mmBatched(const T *A, const T *B, T *C, int64_t batch, int64_t M, int64_t K, int64_t N) {
  for (int64_t bi = 0; bi < batch; ++bi) {
    const T *a = A + bi * M * K, *b = B + bi * K * N;
    T *c = C + bi * M * N;
    for (int64_t i = 0; i < M; ++i) {
      T *ci = c + i * N;
      for (int64_t k = 0; k < K; ++k) {
        T aik = a[i * K + k];
        const T *bk = b + k * N;
        if constexpr (std::is_integral_v<T>) // integers wrap
          for (int64_t j = 0; j < N; ++j) ci[j] = wrapAdd(ci[j], wrapMul(aik, bk[j]));
        else
          for (int64_t j = 0; j < N; ++j) ci[j] += aik * bk[j];
      }
    }
  }
}

/// acc + a @ b over batch dims: a is read broadcast to batch+[M,K], b to
/// batch+[K,N], acc (optional) to batch+[M,N]; the result is rounded once to
/// `result` and given shape outShape (same numel).
inline Tensor matmulImpl(const char *op, const Tensor *acc, const Tensor &a, const Tensor &b,
                         const Shape &batch, DType inAs, DType result, const Shape &outShape) {
  int64_t M = a.size(-2), K = a.size(-1), N = b.size(-1);
  Shape sa = batch, sb = batch, sc = batch;
  sa.push_back(M), sa.push_back(K);
  sb.push_back(K), sb.push_back(N);
  sc.push_back(M), sc.push_back(N);
  int64_t nb = numelOf(batch);
  bool fl = is_floating(inAs) || is_floating(result) || (acc && is_floating(acc->dtype()));
  if (fl) {
    std::vector<double> A = readF(op, a, is_floating(inAs) ? inAs : a.dtype(), sa);
    std::vector<double> B = readF(op, b, is_floating(inAs) ? inAs : b.dtype(), sb);
    std::vector<double> C = acc ? readF(op, *acc, acc->dtype(), sc)
                                : std::vector<double>(static_cast<size_t>(numelOf(sc)), 0.0);
    mmBatched(A.data(), B.data(), C.data(), nb, M, K, N);
    return writeF(C, outShape, result);
  }
  std::vector<int64_t> A = readI(op, a, inAs, sa), B = readI(op, b, inAs, sb);
  std::vector<int64_t> C = acc ? readI(op, *acc, acc->dtype(), sc)
                               : std::vector<int64_t>(static_cast<size_t>(numelOf(sc)), 0);
  mmBatched(A.data(), B.data(), C.data(), nb, M, K, N);
  return writeI(C, outShape, result);
}

inline void checkMatmulOperands(const char *op, const Tensor &a, const Tensor &b, int64_t rank) {
  checkCpu(op, a);
  checkCpu(op, b);
  if (a.dim() != rank || b.dim() != rank)
    fail(op, "expects " + std::to_string(rank) + "-D operands, got " + describe(a) + " and " +
                 describe(b));
  if (a.size(-1) != b.size(-2))
    fail(op, "inner dimensions do not match: " + describe(a) + " @ " + describe(b));
  if (rank == 3 && a.size(0) != b.size(0))
    fail(op, "batch sizes do not match: " + describe(a) + " @ " + describe(b));
}

} // namespace detail

//===----------------------------------------------------------------------===//
// Internals: subscripts, loads and stores
//===----------------------------------------------------------------------===//

namespace detail {

/// Where the elements of a subscript live in its tensor's storage: axis a
/// steps by strides[a], or (gathers, and out-of-bounds tiles of masked
/// accesses) by an explicit offset table. Offsets below 0 mark lanes that are
/// out of bounds (only in masked accesses).
struct Pattern {
  int64_t base = 0;
  bool invalid = false;
  Shape shape; // the value's shape
  Shape sizes, strides;
  std::vector<std::vector<int64_t>> tables;
};

inline constexpr int64_t kBadOffset = std::numeric_limits<int64_t>::min() / 16;

template <class F> void forEachPatternOffset(const Pattern &p, F &&f) {
  if (numelOf(p.sizes) == 0) return;
  int64_t base = p.invalid ? kBadOffset : p.base;
  bool anyTable = false;
  for (const auto &t : p.tables) anyTable |= !t.empty();
  if (!anyTable) {
    forEachOffset(p.sizes, p.strides, base, f);
    return;
  }
  size_t r = p.sizes.size();
  std::vector<std::vector<int64_t>> offs(r);
  for (size_t a = 0; a < r; ++a) {
    if (!p.tables[a].empty()) {
      offs[a] = p.tables[a];
      continue;
    }
    offs[a].resize(static_cast<size_t>(p.sizes[a]));
    for (int64_t i = 0; i < p.sizes[a]; ++i) offs[a][i] = i * p.strides[a];
  }
  Shape idx(r, 0);
  int64_t k = 0;
  for (;;) {
    int64_t outer = base;
    for (size_t a = 0; a + 1 < r; ++a) outer += offs[a][idx[a]];
    for (int64_t off : offs[r - 1]) f(k++, outer + off);
    int64_t a = static_cast<int64_t>(r) - 2;
    for (; a >= 0; --a) {
      if (++idx[a] < p.sizes[a]) break;
      idx[a] = 0;
    }
    if (a < 0) return;
  }
}

inline std::vector<Index> flattenIndices(const std::vector<Index> &idx) {
  std::vector<Index> out;
  out.reserve(idx.size());
  for (const Index &i : idx) {
    if (i.kind == Index::Kind::tiles)
      for (const Tile &t : i.tiles) out.emplace_back(t);
    else if (i.kind == Index::Kind::scalars)
      for (int64_t s : i.scalars) out.emplace_back(s);
    else
      out.push_back(i);
  }
  return out;
}

/// Resolves x[idx...]. In a masked (lenient) access, out-of-bounds indices
/// give invalid lanes instead of an error.
inline Pattern buildPattern(const char *op, const Tensor &x, const std::vector<Index> &rawIdx,
                            bool lenient) {
  checkCpu(op, x);
  std::vector<Index> idx = flattenIndices(rawIdx);
  const Shape &xs = Access::sizes(x), &xst = Access::strides(x);
  int64_t rank = x.dim(), consumed = 0;
  for (const Index &i : idx) consumed += i.kind != Index::Kind::new_axis;
  if (consumed > rank)
    fail(op, "too many indices for a tensor of rank " + std::to_string(rank) + ": got " +
                 std::to_string(consumed) + " (tensor " + describe(x) + ")");
  for (; consumed < rank; ++consumed) idx.emplace_back(all);
  int64_t first = -1, last = -1;
  for (size_t i = 0; i < idx.size(); ++i) {
    if (idx[i].kind != Index::Kind::tensor) continue;
    if (first >= 0 && last != static_cast<int64_t>(i) - 1)
      fail(op, "tensor indices must be adjacent (tensor indices at positions " +
                   std::to_string(last) + " and " + std::to_string(i) + " are not)");
    if (first < 0) first = static_cast<int64_t>(i);
    last = static_cast<int64_t>(i);
  }
  Pattern p;
  p.base = x.storage_offset();
  auto dimText = [&](int64_t d) {
    return " for dimension " + std::to_string(d) + " of size " + std::to_string(xs[d]) +
           " (tensor " + describe(x) + ")";
  };
  int64_t d = 0;
  for (size_t i = 0; i < idx.size(); ++i) {
    const Index &ix = idx[i];
    switch (ix.kind) {
    case Index::Kind::tile: {
      int64_t b = ix.tile.begin(), e = ix.tile.end(), n = e - b;
      bool ok = b >= 0 && e <= xs[d] && n >= 0;
      if (!ok && (!lenient || n < 0))
        fail(op, "tile [" + std::to_string(b) + ", " + std::to_string(e) + ") is out of range" +
                     dimText(d));
      p.shape.push_back(n);
      p.sizes.push_back(n);
      p.strides.push_back(xst[d]);
      if (ok) {
        p.base += b * xst[d];
        p.tables.emplace_back();
      } else {
        std::vector<int64_t> t(static_cast<size_t>(n));
        for (int64_t j = 0; j < n; ++j)
          t[j] = (b + j >= 0 && b + j < xs[d]) ? (b + j) * xst[d] : kBadOffset;
        p.tables.push_back(std::move(t));
      }
      ++d;
      break;
    }
    case Index::Kind::scalar: {
      int64_t v = ix.scalar < 0 ? ix.scalar + xs[d] : ix.scalar;
      if (v < 0 || v >= xs[d]) {
        if (!lenient)
          fail(op, "index " + std::to_string(ix.scalar) + " is out of range" + dimText(d));
        p.invalid = true;
      } else {
        p.base += v * xst[d];
      }
      ++d;
      break;
    }
    case Index::Kind::whole:
      p.shape.push_back(xs[d]);
      p.sizes.push_back(xs[d]);
      p.strides.push_back(xst[d]);
      p.tables.emplace_back();
      ++d;
      break;
    case Index::Kind::new_axis:
      p.shape.push_back(1);
      p.sizes.push_back(1);
      p.strides.push_back(0);
      p.tables.emplace_back();
      break;
    case Index::Kind::tensor: {
      // The whole group of adjacent tensor indices at once (a gather).
      int64_t g = last - first + 1;
      Shape bshape;
      for (int64_t j = 0; j < g; ++j) {
        const Tensor &t = idx[first + j].tensor;
        checkCpu(op, t);
        if (t.dtype() == DType::boolean)
          fail(op, "boolean mask indices are not supported (tensor " + describe(t) +
                       "); use where() or a masked load/store");
        if (t.dtype() != DType::i32 && t.dtype() != DType::i64)
          fail(op, "tensor indices must be i32 or i64, got " + describe(t));
        bshape = broadcastShapes(op, bshape, Access::sizes(t));
      }
      size_t n = static_cast<size_t>(numelOf(bshape));
      std::vector<int64_t> table(n, 0);
      for (int64_t j = 0; j < g; ++j) {
        std::vector<int64_t> v = readI(op, idx[first + j].tensor, DType::i64, bshape);
        int64_t dd = d + j, size = xs[dd], st = xst[dd];
        for (size_t e = 0; e < n; ++e) {
          if (table[e] < 0) continue;
          int64_t w = v[e] < 0 ? v[e] + size : v[e];
          if (w < 0 || w >= size) {
            if (!lenient)
              fail(op, "index " + std::to_string(v[e]) + " is out of range" + dimText(dd));
            table[e] = kBadOffset;
          } else {
            table[e] += w * st;
          }
        }
      }
      p.shape.insert(p.shape.end(), bshape.begin(), bshape.end());
      p.sizes.push_back(static_cast<int64_t>(n));
      p.strides.push_back(0);
      p.tables.push_back(std::move(table));
      d += g;
      i = static_cast<size_t>(last);
      break;
    }
    default: break;
    }
  }
  return p;
}

/// The mask broadcast to the indexed shape, one entry per lane.
inline std::vector<int64_t> readMask(const char *op, const Tensor &mask, const Shape &shape) {
  checkCpu(op, mask);
  if (mask.dtype() != DType::boolean)
    fail(op, "the mask must be boolean, got " + describe(mask));
  if (mask.dim() > static_cast<int64_t>(shape.size()))
    fail(op, "the mask " + describe(mask) + " cannot be broadcast to the indexed shape " +
                 shapeStr(shape));
  return readI(op, mask, DType::boolean, shape);
}

template <class F> void dispatchBytes(DType dt, F &&f) {
  switch (element_size(dt)) {
  case 1: f(uint8_t{}); break;
  case 2: f(uint16_t{}); break;
  case 4: f(uint32_t{}); break;
  default: f(uint64_t{}); break;
  }
}

inline Tensor loadPattern(const char *op, const Tensor &x, const Pattern &p,
                          const std::vector<int64_t> *mask) {
  Tensor r = allocate(op, p.shape, x.dtype());
  dispatchBytes(x.dtype(), [&](auto tag) {
    using U = decltype(tag);
    const U *s = Access::base<U>(x);
    U *d = Access::base<U>(r);
    forEachPatternOffset(p, [&](int64_t k, int64_t off) {
      if (mask && !(*mask)[k]) {
        d[k] = U(0); // masked-off lanes read 0 (0 is 0 in every dtype)
        return;
      }
      if (off < 0)
        fail(op, "lane " + std::to_string(k) + " indexes out of bounds of tensor " + describe(x) +
                     " but is not masked off");
      d[k] = s[off];
    });
  });
  return r;
}

/// Stores v (cast to x's dtype, broadcast to the indexed shape) through p.
inline void storePattern(const char *op, const Tensor &x, const Pattern &p, const Tensor &v,
                         const std::vector<int64_t> *mask) {
  checkCpu(op, v);
  Shape vs = Access::sizes(v);
  bool ok = vs.size() <= p.shape.size();
  for (size_t i = 0; ok && i < vs.size(); ++i) {
    int64_t want = p.shape[p.shape.size() - vs.size() + i];
    ok = vs[i] == want || vs[i] == 1;
  }
  if (!ok)
    fail(op, "cannot broadcast the value " + describe(v) + " to the indexed shape " +
                 shapeStr(p.shape) + " of tensor " + describe(x));
  Tensor src = v.to(x.dtype());
  // Copy first: the value may alias the destination (x[...] = x.transpose(...)).
  src = copyTo(op, src, p.shape);
  dispatchBytes(x.dtype(), [&](auto tag) {
    using U = decltype(tag);
    const U *s = Access::base<U>(src);
    U *d = Access::base<U>(x);
    forEachPatternOffset(p, [&](int64_t k, int64_t off) {
      if (mask && !(*mask)[k]) return;
      if (off < 0)
        fail(op, "lane " + std::to_string(k) + " indexes out of bounds of tensor " + describe(x) +
                     " but is not masked off");
      d[off] = s[k];
    });
  });
}

enum class Atomic { add, max, min };

inline void atomicPattern(const char *op, Atomic kind, const Tensor &x, const Pattern &p,
                          const Tensor &v, const std::vector<int64_t> *mask) {
  checkCpu(op, v);
  Tensor src = v.to(x.dtype()); // as the GPU does: convert, then combine in x's dtype
  if (src.dim() > static_cast<int64_t>(p.shape.size()))
    fail(op, "cannot broadcast the value " + describe(v) + " to the indexed shape " +
                 shapeStr(p.shape));
  src = copyTo(op, src, p.shape);
  visitDType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *s = Access::base<T>(src);
    T *d = Access::base<T>(x);
    DType dt = x.dtype();
    forEachPatternOffset(p, [&](int64_t k, int64_t off) {
      if (mask && !(*mask)[k]) return;
      if (off < 0)
        fail(op, "lane " + std::to_string(k) + " indexes out of bounds of tensor " + describe(x) +
                     " but is not masked off");
      if constexpr (isFloatStorage<T>()) {
        double a = toDouble(d[off]), b = toDouble(s[k]);
        double r = kind == Atomic::add ? a + b : kind == Atomic::max ? nanMax(a, b) : nanMin(a, b);
        d[off] = fromDouble<T>(r, dt);
      } else {
        int64_t a = static_cast<int64_t>(d[off]), b = static_cast<int64_t>(s[k]);
        int64_t r = kind == Atomic::add ? wrapAdd(a, b) : kind == Atomic::max ? (a > b ? a : b)
                                                                             : (a < b ? a : b);
        d[off] = fromInt<T>(wrapInt(r, dt));
      }
    });
  });
}

/// Where a subscript's value came from: `base[idx...]`. When base is itself
/// a subscript's value (`x[t][i] = v`), a store updates base and then stores
/// base back through its own target.
struct StoreTarget {
  std::shared_ptr<const StoreTarget> parent;
  Tensor base;
  std::vector<Index> idx;

  void store(const char *op, const Tensor &v) const {
    Pattern p = buildPattern(op, base, idx, false);
    storePattern(op, base, p, v, nullptr);
    if (parent) parent->store(op, base);
  }
};

inline Tensor subscript(const Tensor &x, std::vector<Index> idx) {
  const char *op = "subscript";
  Pattern p = buildPattern(op, x, idx, false);
  Tensor r = loadPattern(op, x, p, nullptr);
  auto t = std::make_shared<StoreTarget>();
  t->parent = Access::target(x);
  t->base = x;
  t->idx = std::move(idx);
  Access::setTarget(r, std::move(t));
  return r;
}

/// After a store/atomic into a subscript's value, write the value back.
inline void propagate(const char *op, const Tensor &x) {
  if (const auto &t = Access::target(x)) t->store(op, x);
}

} // namespace detail

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

inline Tensor::Tensor(const Tensor &o)
    : storage_(o.storage_), sizes_(o.sizes_), strides_(o.strides_), offset_(o.offset_),
      dtype_(o.dtype_) {}

inline Tensor::Tensor(Tensor &&o) noexcept
    : storage_(std::move(o.storage_)), sizes_(std::move(o.sizes_)),
      strides_(std::move(o.strides_)), offset_(o.offset_), dtype_(o.dtype_) {}

inline Tensor &Tensor::operator=(const Tensor &v) & {
  if (this != &v) {
    storage_ = v.storage_;
    sizes_ = v.sizes_;
    strides_ = v.strides_;
    offset_ = v.offset_;
    dtype_ = v.dtype_;
  }
  target_.reset();
  return *this;
}

inline Tensor &Tensor::operator=(Tensor &&v) & noexcept {
  if (this != &v) {
    storage_ = std::move(v.storage_);
    sizes_ = std::move(v.sizes_);
    strides_ = std::move(v.strides_);
    offset_ = v.offset_;
    dtype_ = v.dtype_;
  }
  target_.reset();
  return *this;
}

inline void Tensor::storeThrough(const Tensor &v) const { target_->store("store", v); }

inline Tensor &Tensor::operator=(const Tensor &v) && {
  if (target_)
    storeThrough(v);
  else
    static_cast<Tensor &>(*this) = v;
  return *this;
}

inline Tensor &Tensor::operator=(Tensor &&v) && {
  if (target_)
    storeThrough(v);
  else
    static_cast<Tensor &>(*this) = std::move(v);
  return *this;
}

template <Arithmetic S> Tensor &Tensor::operator=(S v) && {
  detail::checkDefined("store", *this);
  return std::move(*this) = detail::scalarTensor(v, dtype_);
}

inline Tensor &Tensor::storeOrRebind(Tensor r) {
  if (target_)
    storeThrough(r);
  else
    static_cast<Tensor &>(*this) = std::move(r);
  return *this;
}

#define KITE_DEFINE_COMPOUND(OP, BIN)                                                              \
  inline Tensor &Tensor::operator OP(const Tensor &v) & {                                          \
    return *this = detail::inplaceResult(detail::Bin::BIN, *this, detail::tensorOp(v));            \
  }                                                                                                \
  inline Tensor &Tensor::operator OP(const Tensor &v) && {                                         \
    return storeOrRebind(detail::inplaceResult(detail::Bin::BIN, *this, detail::tensorOp(v)));     \
  }                                                                                                \
  template <Arithmetic S> Tensor &Tensor::operator OP(S v) & {                                     \
    return *this = detail::inplaceResult(detail::Bin::BIN, *this, detail::scalarOp(v));            \
  }                                                                                                \
  template <Arithmetic S> Tensor &Tensor::operator OP(S v) && {                                    \
    return storeOrRebind(detail::inplaceResult(detail::Bin::BIN, *this, detail::scalarOp(v)));     \
  }
KITE_DEFINE_COMPOUND(+=, add)
KITE_DEFINE_COMPOUND(-=, sub)
KITE_DEFINE_COMPOUND(*=, mul)
KITE_DEFINE_COMPOUND(/=, div)
#undef KITE_DEFINE_COMPOUND

inline Tensor Tensor::from_blob(void *data, std::vector<int64_t> sizes,
                                std::vector<int64_t> strides, DType dtype, Device device,
                                std::function<void(void *)> deleter) {
  const char *op = "Tensor::from_blob";
  if (strides.empty()) strides = detail::contiguousStrides(sizes);
  if (strides.size() != sizes.size())
    detail::fail(op, "sizes " + detail::shapeStr(sizes) + " and strides " +
                         detail::shapeStr(strides) + " have different ranks");
  int64_t maxOff = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0) detail::fail(op, "negative size in " + detail::shapeStr(sizes));
    if (strides[i] < 0) detail::fail(op, "negative stride in " + detail::shapeStr(strides));
    if (sizes[i] > 0) maxOff += (sizes[i] - 1) * strides[i];
  }
  int64_t n = detail::numelOf(sizes);
  if (!data && n > 0) detail::fail(op, "null data for a tensor of " + std::to_string(n) + " elements");
  auto st = std::make_shared<Storage>();
  st->data = data;
  st->nbytes = n > 0 ? (maxOff + 1) * element_size(dtype) : 0;
  st->device = device;
  st->deleter = std::move(deleter);
  return detail::Access::make(std::move(st), std::move(sizes), std::move(strides), 0, dtype);
}

inline int64_t Tensor::size(int64_t d) const {
  if (dim() == 0)
    detail::fail("size", "a 0-d tensor has no dimension " + std::to_string(d));
  return sizes_[detail::wrapDim("size", d, dim())];
}

inline int64_t Tensor::stride(int64_t d) const {
  if (dim() == 0)
    detail::fail("stride", "a 0-d tensor has no dimension " + std::to_string(d));
  return strides_[detail::wrapDim("stride", d, dim())];
}

inline int64_t Tensor::numel() const { return detail::numelOf(sizes_); }

inline bool Tensor::is_contiguous() const {
  if (numel() == 0) return true;
  int64_t expected = 1;
  for (size_t i = sizes_.size(); i-- > 0;) {
    if (sizes_[i] == 1) continue;
    if (strides_[i] != expected) return false;
    expected *= sizes_[i];
  }
  return true;
}

inline Device Tensor::device() const { return storage_ ? storage_->device : Device::cpu(); }

inline void *Tensor::data_ptr() const {
  if (!storage_) return nullptr;
  return static_cast<char *>(storage_->data) + offset_ * element_size(dtype_);
}

template <class T> T *Tensor::data() const {
  constexpr DType want = detail::dtypeOf<T>();
  if (want != dtype_)
    detail::fail("Tensor::data<T>", std::string("tensor ") + detail::describe(*this) +
                                         " does not hold elements of T (" + dtype_name(want) + ")");
  return static_cast<T *>(data_ptr());
}

template <class T> T Tensor::item() const {
  const char *op = "Tensor::item";
  detail::checkCpu(op, *this);
  if (numel() != 1)
    detail::fail(op, "needs a tensor with one element, got " + detail::describe(*this));
  if (is_floating(dtype_)) {
    double v = detail::readF(op, *this, dtype_, sizes_)[0];
    if constexpr (std::is_same_v<T, bool>)
      return v != 0.0;
    else if constexpr (detail::isLowFloat<T>())
      return T(static_cast<float>(v));
    else
      return static_cast<T>(v);
  }
  int64_t v = detail::readI(op, *this, dtype_, sizes_)[0];
  if constexpr (std::is_same_v<T, bool>)
    return v != 0;
  else if constexpr (detail::isLowFloat<T>())
    return T(static_cast<float>(v));
  else
    return static_cast<T>(v);
}

inline std::vector<double> Tensor::to_doubles() const {
  return detail::readF("Tensor::to_doubles", *this, DType::f64, sizes_);
}

inline Tensor Tensor::reshape(std::vector<int64_t> sizes) const {
  const char *op = "reshape";
  detail::checkDefined(op, *this);
  if (!is_contiguous())
    detail::fail(op, "tensor " + detail::describe(*this) + " with strides " +
                         detail::shapeStr(strides_) +
                         " is not contiguous; call .contiguous() first");
  int64_t inferred = -1, known = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (inferred >= 0) detail::fail(op, "only one dimension can be -1 in " + detail::shapeStr(sizes));
      inferred = static_cast<int64_t>(i);
    } else if (sizes[i] < 0) {
      detail::fail(op, "invalid size " + detail::shapeStr(sizes));
    } else {
      known *= sizes[i];
    }
  }
  int64_t n = numel();
  if (inferred >= 0) {
    if (known == 0 || n % known != 0)
      detail::fail(op, "cannot reshape tensor " + detail::describe(*this) + " (" +
                           std::to_string(n) + " elements) to " + detail::shapeStr(sizes));
    sizes[inferred] = n / known;
  } else if (known != n) {
    detail::fail(op, "cannot reshape tensor " + detail::describe(*this) + " (" + std::to_string(n) +
                         " elements) to " + detail::shapeStr(sizes));
  }
  std::vector<int64_t> st = detail::contiguousStrides(sizes);
  return detail::Access::make(storage_, std::move(sizes), std::move(st), offset_, dtype_);
}
inline Tensor Tensor::reshape(std::initializer_list<Dim> sizes) const {
  return reshape(detail::toShape(sizes));
}
inline Tensor Tensor::view(std::vector<int64_t> sizes) const { return reshape(std::move(sizes)); }
inline Tensor Tensor::view(std::initializer_list<Dim> sizes) const {
  return reshape(detail::toShape(sizes));
}

inline Tensor Tensor::to(DType dt) const {
  const char *op = "Tensor::to";
  detail::checkCpu(op, *this);
  if (dt == dtype_) return *this;
  if (is_floating(dt)) return detail::writeF(detail::readF(op, *this, dt, sizes_), sizes_, dt);
  return detail::writeI(detail::readI(op, *this, dt, sizes_), sizes_, dt);
}

inline Tensor Tensor::contiguous() const {
  detail::checkDefined("contiguous", *this);
  return is_contiguous() ? Tensor(*this) : clone();
}

inline Tensor Tensor::clone() const { return detail::copyTo("clone", *this, sizes_); }

inline Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  const char *op = "transpose";
  detail::checkDefined(op, *this);
  int64_t a = detail::wrapDim(op, d0, dim()), b = detail::wrapDim(op, d1, dim());
  std::vector<int64_t> s = sizes_, st = strides_;
  if (dim() > 0) {
    std::swap(s[a], s[b]);
    std::swap(st[a], st[b]);
  }
  return detail::Access::make(storage_, std::move(s), std::move(st), offset_, dtype_);
}

inline Tensor Tensor::permute(std::vector<int64_t> dims) const {
  const char *op = "permute";
  detail::checkDefined(op, *this);
  if (static_cast<int64_t>(dims.size()) != dim())
    detail::fail(op, "needs " + std::to_string(dim()) + " dimensions for tensor " +
                         detail::describe(*this) + ", got " + detail::shapeStr(dims));
  std::vector<int64_t> s(dims.size()), st(dims.size());
  std::vector<int64_t> seen(dims.size(), 0);
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = detail::wrapDim(op, dims[i], dim());
    if (seen[d]) detail::fail(op, "repeated dimension in " + detail::shapeStr(dims));
    seen[d] = 1;
    s[i] = sizes_[d];
    st[i] = strides_[d];
  }
  return detail::Access::make(storage_, std::move(s), std::move(st), offset_, dtype_);
}

inline Tensor Tensor::unsqueeze(int64_t d) const {
  const char *op = "unsqueeze";
  detail::checkDefined(op, *this);
  int64_t r = dim() + 1;
  if (d < -r || d >= r)
    detail::fail(op, "dimension " + std::to_string(d) + " is out of range for a tensor of rank " +
                         std::to_string(dim()) + " (valid: " + std::to_string(-r) + " to " +
                         std::to_string(r - 1) + ")");
  if (d < 0) d += r;
  std::vector<int64_t> s = sizes_, st = strides_;
  int64_t stride = d < dim() ? sizes_[d] * strides_[d] : 1;
  s.insert(s.begin() + d, 1);
  st.insert(st.begin() + d, stride);
  return detail::Access::make(storage_, std::move(s), std::move(st), offset_, dtype_);
}

inline Tensor Tensor::squeeze(int64_t d) const {
  const char *op = "squeeze";
  detail::checkDefined(op, *this);
  int64_t w = detail::wrapDim(op, d, dim());
  if (dim() == 0 || sizes_[w] != 1) return *this;
  std::vector<int64_t> s = sizes_, st = strides_;
  s.erase(s.begin() + w);
  st.erase(st.begin() + w);
  return detail::Access::make(storage_, std::move(s), std::move(st), offset_, dtype_);
}

inline Tensor Tensor::squeeze() const {
  detail::checkDefined("squeeze", *this);
  std::vector<int64_t> s, st;
  for (size_t i = 0; i < sizes_.size(); ++i)
    if (sizes_[i] != 1) {
      s.push_back(sizes_[i]);
      st.push_back(strides_[i]);
    }
  return detail::Access::make(storage_, std::move(s), std::move(st), offset_, dtype_);
}

inline Tensor Tensor::expand(std::vector<int64_t> sizes) const {
  const char *op = "expand";
  detail::checkDefined(op, *this);
  size_t n = sizes.size(), r = sizes_.size();
  if (n < r)
    detail::fail(op, "cannot expand tensor " + detail::describe(*this) + " to fewer dimensions " +
                         detail::shapeStr(sizes));
  std::vector<int64_t> st(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (i < n - r) {
      if (sizes[i] < 0)
        detail::fail(op, "invalid size " + detail::shapeStr(sizes) + " for a new leading dimension");
      continue;
    }
    int64_t old = sizes_[i - (n - r)];
    if (sizes[i] == -1) sizes[i] = old;
    if (sizes[i] == old)
      st[i] = strides_[i - (n - r)];
    else if (old == 1 && sizes[i] >= 0)
      st[i] = 0;
    else
      detail::fail(op, "the expanded size " + std::to_string(sizes[i]) +
                           " must match the existing size " + std::to_string(old) +
                           " at dimension " + std::to_string(i) + " (tensor " +
                           detail::describe(*this) + " to " + detail::shapeStr(sizes) + ")");
  }
  return detail::Access::make(storage_, std::move(sizes), std::move(st), offset_, dtype_);
}
inline Tensor Tensor::expand(std::initializer_list<Dim> sizes) const {
  return expand(detail::toShape(sizes));
}

template <class... Idx>
  requires(std::is_convertible_v<const Idx &, Index> && ...)
Tensor Tensor::operator[](const Idx &...idx) const {
  return detail::subscript(*this, std::vector<Index>{Index(idx)...});
}

//===----------------------------------------------------------------------===//
// Block sizes, tiles and loops
//===----------------------------------------------------------------------===//

namespace detail {
inline ReferenceBlockSizes *&currentBlockSizes() {
  thread_local ReferenceBlockSizes *current = nullptr;
  return current;
}

inline LoopAxis loopAxis(const char *op, const LoopDim &d, int64_t block) {
  if (d.end < d.begin) {
    if (d.begin == 0)
      fail(op, "negative extent " + std::to_string(d.end));
    fail(op, "range [" + std::to_string(d.begin) + ", " + std::to_string(d.end) +
                 ") ends before it begins");
  }
  if (block < 1) fail(op, "block size must be >= 1, got " + std::to_string(block));
  return LoopAxis{d.begin, d.end, block};
}

inline LoopAxis autoAxis(const LoopDim &d, SrcLoc loc, int dim) {
  return loopAxis("tile", d, tunableBlockSize(loc, dim, 1, std::numeric_limits<int64_t>::max()));
}
inline LoopAxis fixedAxis(const LoopDim &d, BlockSize b) { return loopAxis("tile", d, b.value()); }

template <class T> struct IsTiles : std::false_type {};
template <std::size_t N> struct IsTiles<Tiles<N>> : std::true_type {};

template <class V> V makeLoopValue(const std::vector<LoopAxis> &axes, const int64_t *ids) {
  auto mk = [&](size_t d) {
    const LoopAxis &a = axes[d];
    int64_t b = a.begin + ids[d] * a.block;
    return Tile(b, imin(b + a.block, a.end), a.block, ids[d], a.count());
  };
  if constexpr (std::is_same_v<V, Tile>) {
    return mk(0);
  } else if constexpr (std::is_same_v<V, int64_t>) {
    return axes[0].begin + ids[0];
  } else if constexpr (std::is_same_v<V, TileList>) {
    std::vector<Tile> t;
    for (size_t d = 0; d < axes.size(); ++d) t.push_back(mk(d));
    return TileList(std::move(t));
  } else if constexpr (IsTiles<V>::value) {
    V v;
    for (size_t d = 0; d < V::size(); ++d) v.tiles[d] = mk(d);
    return v;
  } else {
    V v;
    for (size_t d = 0; d < V::size(); ++d) v.indices[d] = axes[d].begin + ids[d];
    return v;
  }
}

inline int64_t tunableBlockSize(std::source_location loc, int dim, int64_t lo, int64_t hi) {
  int64_t v = 64;
  if (ReferenceBlockSizes *s = currentBlockSizes()) {
    bool found = false;
    for (const auto &site : s->sites_)
      if (site.line == loc.line() && site.column == loc.column() && site.dim == dim &&
          std::strcmp(site.file, loc.file_name()) == 0) {
        v = site.value;
        found = true;
        break;
      }
    if (!found) {
      size_t i = s->sites_.size() < s->sizes_.size() ? s->sites_.size() : s->sizes_.size() - 1;
      v = s->sizes_[i];
      s->sites_.push_back({loc.file_name(), loc.line(), loc.column(), dim, v});
    }
  }
  return v < lo ? lo : v > hi ? hi : v;
}
} // namespace detail

template <class V> Loop<V>::Loop(std::vector<detail::LoopAxis> axes) : axes_(std::move(axes)) {
  total_ = 1;
  for (const auto &a : axes_) total_ *= a.count();
}

template <class V> V Loop<V>::iterator::operator*() const {
  const auto &ax = loop_->axes_;
  std::vector<int64_t> ids(ax.size());
  int64_t rem = pos_;
  for (size_t d = ax.size(); d-- > 0;) {
    int64_t c = ax[d].count();
    ids[d] = rem % c;
    rem /= c;
  }
  return detail::makeLoopValue<V>(ax, ids.data());
}

inline Tensor Tile::index() const { return arange(begin_, end_); }

inline BlockSize block(int64_t n) {
  if (n < 1) detail::fail("block", "block size must be >= 1, got " + std::to_string(n));
  return BlockSize(n, true);
}

inline BlockSize register_block_size(int64_t n, std::source_location loc) {
  if (n < 0) detail::fail("register_block_size", "negative extent " + std::to_string(n));
  return BlockSize(detail::tunableBlockSize(loc, 0, 1, n < 1 ? 1 : n), false);
}

inline BlockSize register_block_size(int64_t lo, int64_t hi, std::source_location loc) {
  if (lo < 1 || hi < lo)
    detail::fail("register_block_size", "needs 1 <= lo <= hi, got [" + std::to_string(lo) + ", " +
                                            std::to_string(hi) + "]");
  return BlockSize(detail::tunableBlockSize(loc, 0, lo, hi), false);
}

inline Range range(int64_t begin, int64_t end) { return Range{begin, end}; }

inline ReferenceBlockSizes::ReferenceBlockSizes(std::vector<int64_t> sizes)
    : sizes_(std::move(sizes)), prev_(detail::currentBlockSizes()) {
  if (sizes_.empty()) detail::fail("ReferenceBlockSizes", "needs at least one block size");
  for (int64_t s : sizes_)
    if (s < 1)
      detail::fail("ReferenceBlockSizes", "block sizes must be >= 1, got " + detail::shapeStr(sizes_));
  detail::currentBlockSizes() = this;
}

inline ReferenceBlockSizes::~ReferenceBlockSizes() { detail::currentBlockSizes() = prev_; }

inline Loop<Tile> tile(LoopDim n, SrcLoc loc) { return Loop<Tile>({detail::autoAxis(n, loc, 0)}); }
inline Loop<Tile> tile(LoopDim n, BlockSize bn, SrcLoc) {
  return Loop<Tile>({detail::fixedAxis(n, bn)});
}
inline Loop<Tiles<2>> tile(LoopDim m, LoopDim n, SrcLoc loc) {
  return Loop<Tiles<2>>({detail::autoAxis(m, loc, 0), detail::autoAxis(n, loc, 1)});
}
inline Loop<Tiles<2>> tile(LoopDim m, BlockSize bm, LoopDim n, SrcLoc loc) {
  return Loop<Tiles<2>>({detail::fixedAxis(m, bm), detail::autoAxis(n, loc, 1)});
}
inline Loop<Tiles<2>> tile(LoopDim m, LoopDim n, BlockSize bn, SrcLoc loc) {
  return Loop<Tiles<2>>({detail::autoAxis(m, loc, 0), detail::fixedAxis(n, bn)});
}
inline Loop<Tiles<2>> tile(LoopDim m, BlockSize bm, LoopDim n, BlockSize bn, SrcLoc) {
  return Loop<Tiles<2>>({detail::fixedAxis(m, bm), detail::fixedAxis(n, bn)});
}
inline Loop<Tiles<3>> tile(LoopDim m, LoopDim n, LoopDim k, SrcLoc loc) {
  return Loop<Tiles<3>>(
      {detail::autoAxis(m, loc, 0), detail::autoAxis(n, loc, 1), detail::autoAxis(k, loc, 2)});
}
inline Loop<Tiles<3>> tile(LoopDim m, BlockSize bm, LoopDim n, LoopDim k, SrcLoc loc) {
  return Loop<Tiles<3>>(
      {detail::fixedAxis(m, bm), detail::autoAxis(n, loc, 1), detail::autoAxis(k, loc, 2)});
}
inline Loop<Tiles<3>> tile(LoopDim m, LoopDim n, BlockSize bn, LoopDim k, SrcLoc loc) {
  return Loop<Tiles<3>>(
      {detail::autoAxis(m, loc, 0), detail::fixedAxis(n, bn), detail::autoAxis(k, loc, 2)});
}
inline Loop<Tiles<3>> tile(LoopDim m, LoopDim n, LoopDim k, BlockSize bk, SrcLoc loc) {
  return Loop<Tiles<3>>(
      {detail::autoAxis(m, loc, 0), detail::autoAxis(n, loc, 1), detail::fixedAxis(k, bk)});
}
inline Loop<Tiles<3>> tile(LoopDim m, BlockSize bm, LoopDim n, BlockSize bn, LoopDim k, SrcLoc loc) {
  return Loop<Tiles<3>>(
      {detail::fixedAxis(m, bm), detail::fixedAxis(n, bn), detail::autoAxis(k, loc, 2)});
}
inline Loop<Tiles<3>> tile(LoopDim m, BlockSize bm, LoopDim n, LoopDim k, BlockSize bk, SrcLoc loc) {
  return Loop<Tiles<3>>(
      {detail::fixedAxis(m, bm), detail::autoAxis(n, loc, 1), detail::fixedAxis(k, bk)});
}
inline Loop<Tiles<3>> tile(LoopDim m, LoopDim n, BlockSize bn, LoopDim k, BlockSize bk, SrcLoc loc) {
  return Loop<Tiles<3>>(
      {detail::autoAxis(m, loc, 0), detail::fixedAxis(n, bn), detail::fixedAxis(k, bk)});
}
inline Loop<Tiles<3>> tile(LoopDim m, BlockSize bm, LoopDim n, BlockSize bn, LoopDim k,
                           BlockSize bk, SrcLoc) {
  return Loop<Tiles<3>>(
      {detail::fixedAxis(m, bm), detail::fixedAxis(n, bn), detail::fixedAxis(k, bk)});
}
inline Loop<TileList> tile(const std::vector<int64_t> &sizes, SrcLoc loc) {
  std::vector<detail::LoopAxis> axes;
  for (size_t d = 0; d < sizes.size(); ++d)
    axes.push_back(detail::autoAxis(LoopDim(sizes[d]), loc, static_cast<int>(d)));
  return Loop<TileList>(std::move(axes));
}

inline Loop<int64_t> grid(LoopDim n) { return Loop<int64_t>({detail::loopAxis("grid", n, 1)}); }
inline Loop<GridIndex<2>> grid(LoopDim m, LoopDim n) {
  return Loop<GridIndex<2>>({detail::loopAxis("grid", m, 1), detail::loopAxis("grid", n, 1)});
}
inline Loop<GridIndex<3>> grid(LoopDim m, LoopDim n, LoopDim k) {
  return Loop<GridIndex<3>>({detail::loopAxis("grid", m, 1), detail::loopAxis("grid", n, 1),
                             detail::loopAxis("grid", k, 1)});
}

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

namespace detail {
inline Tensor filled(const char *op, const Shape &sizes, DType dt, double value) {
  Tensor t = allocate(op, sizes, dt);
  int64_t n = numelOf(sizes);
  visitDType(dt, [&](auto tag) {
    using T = decltype(tag);
    T v = fromDouble<T>(value, dt);
    T *p = Access::base<T>(t);
    for (int64_t k = 0; k < n; ++k) p[k] = v;
  });
  return t;
}

inline Tensor emptyImpl(const Shape &sizes, DType dt) {
  if (is_floating(dt)) return filled("empty", sizes, dt, std::numeric_limits<double>::quiet_NaN());
  Tensor t = allocate("empty", sizes, dt);
  std::memset(t.data_ptr(), 0xA5, static_cast<size_t>(numelOf(sizes) * element_size(dt)));
  return t;
}

inline Tensor likeCheck(const char *op, const Tensor &x) {
  checkCpu(op, x);
  return x;
}

/// splitmix64: small, fast, and the same everywhere.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1) with `bits` random bits.
  double uniform(int bits) {
    return static_cast<double>(next() >> (64 - bits)) * std::ldexp(1.0, -bits);
  }
};

inline int mantissaBits(DType dt) {
  switch (dt) {
  case DType::bf16: return 8;
  case DType::f16: return 11;
  case DType::e4m3: return 4;
  case DType::e5m2: return 3;
  case DType::f32: return 24;
  default: return 53;
  }
}
} // namespace detail

inline Tensor empty(std::initializer_list<Dim> sizes, DType dtype) {
  return detail::emptyImpl(detail::toShape(sizes), dtype);
}
inline Tensor empty(const std::vector<int64_t> &sizes, DType dtype) {
  return detail::emptyImpl(sizes, dtype);
}
inline Tensor zeros(std::initializer_list<Dim> sizes, DType dtype) {
  return detail::filled("zeros", detail::toShape(sizes), dtype, 0.0);
}
inline Tensor zeros(const std::vector<int64_t> &sizes, DType dtype) {
  return detail::filled("zeros", sizes, dtype, 0.0);
}
inline Tensor ones(std::initializer_list<Dim> sizes, DType dtype) {
  return detail::filled("ones", detail::toShape(sizes), dtype, 1.0);
}
inline Tensor ones(const std::vector<int64_t> &sizes, DType dtype) {
  return detail::filled("ones", sizes, dtype, 1.0);
}
inline Tensor full(std::initializer_list<Dim> sizes, double value, DType dtype) {
  return detail::filled("full", detail::toShape(sizes), dtype, value);
}
inline Tensor full(const std::vector<int64_t> &sizes, double value, DType dtype) {
  return detail::filled("full", sizes, dtype, value);
}
inline Tensor empty_like(const Tensor &x) { return empty_like(x, x.dtype()); }
inline Tensor empty_like(const Tensor &x, DType dtype) {
  return detail::emptyImpl(detail::likeCheck("empty_like", x).sizes(), dtype);
}
inline Tensor zeros_like(const Tensor &x) { return zeros_like(x, x.dtype()); }
inline Tensor zeros_like(const Tensor &x, DType dtype) {
  return detail::filled("zeros_like", detail::likeCheck("zeros_like", x).sizes(), dtype, 0.0);
}
inline Tensor ones_like(const Tensor &x) { return ones_like(x, x.dtype()); }
inline Tensor ones_like(const Tensor &x, DType dtype) {
  return detail::filled("ones_like", detail::likeCheck("ones_like", x).sizes(), dtype, 1.0);
}
inline Tensor full_like(const Tensor &x, double value) { return full_like(x, value, x.dtype()); }
inline Tensor full_like(const Tensor &x, double value, DType dtype) {
  return detail::filled("full_like", detail::likeCheck("full_like", x).sizes(), dtype, value);
}

inline Tensor arange(int64_t n) { return arange(0, n); }
inline Tensor arange(int64_t begin, int64_t end) {
  if (end < begin)
    detail::fail("arange", "end " + std::to_string(end) + " is before begin " + std::to_string(begin));
  Tensor t = detail::allocate("arange", {end - begin}, DType::i64);
  int64_t *p = t.data<int64_t>();
  for (int64_t i = begin; i < end; ++i) p[i - begin] = i;
  return t;
}

template <class T> Tensor from_vector(const std::vector<T> &values, std::vector<int64_t> sizes) {
  constexpr DType dt = detail::dtypeOf<T>();
  Tensor t = detail::allocate("from_vector", sizes, dt);
  if (static_cast<int64_t>(values.size()) != t.numel())
    detail::fail("from_vector", std::to_string(values.size()) + " values do not fill shape " +
                                    detail::shapeStr(sizes));
  if constexpr (std::is_same_v<T, bool>) {
    uint8_t *p = static_cast<uint8_t *>(t.data_ptr());
    for (size_t i = 0; i < values.size(); ++i) p[i] = values[i] ? 1 : 0;
  } else {
    T *p = static_cast<T *>(t.data_ptr());
    for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  }
  return t;
}
template <class T> Tensor from_vector(const std::vector<T> &values) {
  return from_vector(values, {static_cast<int64_t>(values.size())});
}

inline Tensor randn(std::vector<int64_t> sizes, DType dtype, uint64_t seed) {
  if (!is_floating(dtype))
    detail::fail("randn", std::string("needs a floating-point dtype, got ") + dtype_name(dtype));
  detail::SplitMix64 rng{seed};
  std::vector<double> v(static_cast<size_t>(detail::numelOf(sizes)));
  for (size_t i = 0; i < v.size(); i += 2) {
    double u1 = static_cast<double>((rng.next() >> 11) + 1) * 0x1.0p-53; // (0, 1]
    double u2 = rng.uniform(53);
    double r = std::sqrt(-2.0 * std::log(u1)), th = 6.283185307179586476925 * u2;
    v[i] = r * std::cos(th);
    if (i + 1 < v.size()) v[i + 1] = r * std::sin(th);
  }
  return detail::writeF(v, sizes, dtype);
}

inline Tensor rand(std::vector<int64_t> sizes, DType dtype, uint64_t seed) {
  if (!is_floating(dtype))
    detail::fail("rand", std::string("needs a floating-point dtype, got ") + dtype_name(dtype));
  detail::SplitMix64 rng{seed};
  std::vector<double> v(static_cast<size_t>(detail::numelOf(sizes)));
  int bits = detail::mantissaBits(dtype); // exact in dtype, so never rounds up to 1
  for (double &e : v) e = rng.uniform(bits);
  return detail::writeF(v, sizes, dtype);
}

inline Tensor randint(int64_t low, int64_t high, std::vector<int64_t> sizes, DType dtype,
                      uint64_t seed) {
  if (high <= low)
    detail::fail("randint", "needs low < high, got [" + std::to_string(low) + ", " +
                                std::to_string(high) + ")");
  detail::SplitMix64 rng{seed};
  uint64_t span = uint64_t(high) - uint64_t(low);
  std::vector<int64_t> v(static_cast<size_t>(detail::numelOf(sizes)));
  for (int64_t &e : v) e = int64_t(uint64_t(low) + rng.next() % span);
  return detail::writeI(v, sizes, dtype);
}

namespace detail {
/// The offsets of an in-kernel random draw, as uint64 counters.
inline std::vector<int64_t> randomOffsets(const char *op, const Tensor &offsets) {
  checkCpu(op, offsets);
  if (is_floating(offsets.dtype()) || offsets.dtype() == DType::boolean)
    fail(op, "the offsets must be an integer tensor, got " + describe(offsets));
  return readI(op, offsets, DType::i64, Access::sizes(offsets));
}
} // namespace detail

inline Tensor rand(int64_t seed, const Tensor &offsets) {
  std::vector<int64_t> off = detail::randomOffsets("rand", offsets);
  std::vector<double> v(off.size());
  for (size_t i = 0; i < off.size(); ++i)
    v[i] = random::uniform(uint64_t(seed), uint64_t(off[i]));
  return detail::writeF(v, detail::Access::sizes(offsets), DType::f32);
}

inline Tensor randn(int64_t seed, const Tensor &offsets) {
  std::vector<int64_t> off = detail::randomOffsets("randn", offsets);
  std::vector<double> v(off.size());
  for (size_t i = 0; i < off.size(); ++i)
    v[i] = random::normal(uint64_t(seed), uint64_t(off[i]));
  return detail::writeF(v, detail::Access::sizes(offsets), DType::f32);
}

inline Tensor randint(int64_t seed, const Tensor &offsets, int64_t low, int64_t high) {
  std::vector<int64_t> off = detail::randomOffsets("randint", offsets);
  if (high <= low)
    detail::fail("randint", "needs low < high, got [" + std::to_string(low) + ", " +
                                std::to_string(high) + ")");
  uint64_t span = uint64_t(high) - uint64_t(low);
  std::vector<int64_t> v(off.size());
  for (size_t i = 0; i < off.size(); ++i)
    v[i] = int64_t(uint64_t(low) +
                   uint64_t(random::bits63(uint64_t(seed), uint64_t(off[i]))) % span);
  return detail::writeI(v, detail::Access::sizes(offsets), DType::i64);
}

//===----------------------------------------------------------------------===//
// Element-wise operations
//===----------------------------------------------------------------------===//

#define KITE_DEFINE_BINARY(OP, BIN)                                                                \
  inline Tensor OP(const Tensor &a, const Tensor &b) {                                             \
    return detail::binary(detail::Bin::BIN, detail::tensorOp(a), detail::tensorOp(b));             \
  }                                                                                                \
  template <Arithmetic S> Tensor OP(const Tensor &a, S b) {                                        \
    return detail::binary(detail::Bin::BIN, detail::tensorOp(a), detail::scalarOp(b));             \
  }                                                                                                \
  template <Arithmetic S> Tensor OP(S a, const Tensor &b) {                                        \
    return detail::binary(detail::Bin::BIN, detail::scalarOp(a), detail::tensorOp(b));             \
  }
KITE_DEFINE_BINARY(operator+, add)
KITE_DEFINE_BINARY(operator-, sub)
KITE_DEFINE_BINARY(operator*, mul)
KITE_DEFINE_BINARY(operator/, div)
KITE_DEFINE_BINARY(operator%, rem)
KITE_DEFINE_BINARY(operator==, eq)
KITE_DEFINE_BINARY(operator!=, ne)
KITE_DEFINE_BINARY(operator<, lt)
KITE_DEFINE_BINARY(operator<=, le)
KITE_DEFINE_BINARY(operator>, gt)
KITE_DEFINE_BINARY(operator>=, ge)
KITE_DEFINE_BINARY(operator&, band)
KITE_DEFINE_BINARY(operator|, bor)
KITE_DEFINE_BINARY(operator^, bxor)
KITE_DEFINE_BINARY(pow, pow)
KITE_DEFINE_BINARY(maximum, max)
KITE_DEFINE_BINARY(minimum, min)
#undef KITE_DEFINE_BINARY

inline Tensor operator-(const Tensor &a) { return detail::unary(detail::Un::neg, a); }
inline Tensor operator~(const Tensor &a) { return detail::unary(detail::Un::bnot, a); }
inline Tensor exp(const Tensor &x) { return detail::unary(detail::Un::exp, x); }
inline Tensor exp2(const Tensor &x) { return detail::unary(detail::Un::exp2, x); }
inline Tensor log(const Tensor &x) { return detail::unary(detail::Un::log, x); }
inline Tensor log2(const Tensor &x) { return detail::unary(detail::Un::log2, x); }
inline Tensor sqrt(const Tensor &x) { return detail::unary(detail::Un::sqrt, x); }
inline Tensor rsqrt(const Tensor &x) { return detail::unary(detail::Un::rsqrt, x); }
inline Tensor abs(const Tensor &x) { return detail::unary(detail::Un::abs, x); }
inline Tensor sin(const Tensor &x) { return detail::unary(detail::Un::sin, x); }
inline Tensor cos(const Tensor &x) { return detail::unary(detail::Un::cos, x); }
inline Tensor tanh(const Tensor &x) { return detail::unary(detail::Un::tanh, x); }
inline Tensor erf(const Tensor &x) { return detail::unary(detail::Un::erf, x); }
inline Tensor sigmoid(const Tensor &x) { return detail::unary(detail::Un::sigmoid, x); }
inline Tensor relu(const Tensor &x) { return detail::unary(detail::Un::relu, x); }
inline Tensor silu(const Tensor &x) { return detail::unary(detail::Un::silu, x); }
inline Tensor gelu(const Tensor &x) { return detail::unary(detail::Un::gelu, x); }
inline Tensor floor(const Tensor &x) { return detail::unary(detail::Un::floor, x); }
inline Tensor ceil(const Tensor &x) { return detail::unary(detail::Un::ceil, x); }

inline Tensor clamp(const Tensor &x, const Tensor &lo, const Tensor &hi) {
  return minimum(maximum(x, lo), hi);
}
template <Arithmetic S1, Arithmetic S2> Tensor clamp(const Tensor &x, S1 lo, S2 hi) {
  return minimum(maximum(x, lo), hi);
}

inline Tensor where(const Tensor &cond, const Tensor &a, const Tensor &b) {
  return detail::whereImpl(cond, detail::tensorOp(a), detail::tensorOp(b));
}
template <Arithmetic S> Tensor where(const Tensor &cond, const Tensor &a, S b) {
  return detail::whereImpl(cond, detail::tensorOp(a), detail::scalarOp(b));
}
template <Arithmetic S> Tensor where(const Tensor &cond, S a, const Tensor &b) {
  return detail::whereImpl(cond, detail::scalarOp(a), detail::tensorOp(b));
}
template <Arithmetic S1, Arithmetic S2> Tensor where(const Tensor &cond, S1 a, S2 b) {
  return detail::whereImpl(cond, detail::scalarOp(a), detail::scalarOp(b));
}

//===----------------------------------------------------------------------===//
// Reductions, shapes, matmul
//===----------------------------------------------------------------------===//

inline Tensor sum(const Tensor &x, int64_t dim, bool keepdim) {
  return detail::reduce(detail::Red::sum, x, dim, keepdim);
}
inline Tensor mean(const Tensor &x, int64_t dim, bool keepdim) {
  return detail::reduce(detail::Red::mean, x, dim, keepdim);
}
inline Tensor amax(const Tensor &x, int64_t dim, bool keepdim) {
  return detail::reduce(detail::Red::amax, x, dim, keepdim);
}
inline Tensor amin(const Tensor &x, int64_t dim, bool keepdim) {
  return detail::reduce(detail::Red::amin, x, dim, keepdim);
}
inline Tensor prod(const Tensor &x, int64_t dim, bool keepdim) {
  return detail::reduce(detail::Red::prod, x, dim, keepdim);
}
inline Tensor argmax(const Tensor &x, int64_t dim, bool keepdim) {
  return detail::reduce(detail::Red::argmax, x, dim, keepdim);
}
inline Tensor argmin(const Tensor &x, int64_t dim, bool keepdim) {
  return detail::reduce(detail::Red::argmin, x, dim, keepdim);
}
inline Tensor cumsum(const Tensor &x, int64_t dim) { return detail::scan(detail::Scan::sum, x, dim); }
inline Tensor cumprod(const Tensor &x, int64_t dim) { return detail::scan(detail::Scan::prod, x, dim); }
inline std::tuple<Tensor, Tensor> cummax(const Tensor &x, int64_t dim) {
  return detail::scanWithIndices(true, x, dim);
}
inline std::tuple<Tensor, Tensor> cummin(const Tensor &x, int64_t dim) {
  return detail::scanWithIndices(false, x, dim);
}
template <class F> Tensor associative_scan(const Tensor &x, int64_t dim, F &&combine) {
  return detail::associativeScan(
      {x}, dim, [&](const std::vector<Tensor> &a, const std::vector<Tensor> &b) {
        return std::vector<Tensor>{Tensor(combine(a[0], b[0]))};
      })[0];
}
template <class... Ts, class F>
std::tuple<Ts...> associative_scan(const std::tuple<Ts...> &xs, int64_t dim, F &&combine) {
  static_assert(sizeof...(Ts) > 0 && (std::is_same_v<Ts, Tensor> && ...),
                "associative_scan takes a std::tuple of Tensors");
  constexpr size_t N = sizeof...(Ts);
  auto seq = std::make_index_sequence<N>();
  std::vector<Tensor> operands = std::apply(
      [](const auto &...t) { return std::vector<Tensor>{t...}; }, xs);
  std::vector<Tensor> out = detail::associativeScan(
      operands, dim, [&](const std::vector<Tensor> &a, const std::vector<Tensor> &b) {
        return [&]<size_t... I>(std::index_sequence<I...>) {
          std::tuple<Ts...> r = combine(a[I]..., b[I]...);
          return std::vector<Tensor>{std::get<I>(r)...};
        }(seq);
      });
  return [&]<size_t... I>(std::index_sequence<I...>) {
    return std::tuple<Ts...>{out[I]...};
  }(seq);
}
inline std::tuple<Tensor, Tensor> sort(const Tensor &x, int64_t dim, bool descending) {
  return detail::sortImpl("sort", x, dim, descending, std::nullopt);
}
inline std::tuple<Tensor, Tensor> topk(const Tensor &x, int64_t k, int64_t dim, bool largest) {
  return detail::sortImpl("topk", x, dim, largest, k);
}

inline Tensor unsqueeze(const Tensor &x, int64_t d) { return x.unsqueeze(d); }
inline Tensor squeeze(const Tensor &x, int64_t d) { return x.squeeze(d); }
inline Tensor transpose(const Tensor &x, int64_t d0, int64_t d1) { return x.transpose(d0, d1); }
inline Tensor permute(const Tensor &x, std::vector<int64_t> dims) {
  return x.permute(std::move(dims));
}
inline Tensor reshape(const Tensor &x, std::vector<int64_t> sizes) {
  return x.reshape(std::move(sizes));
}
inline Tensor reshape(const Tensor &x, std::initializer_list<Dim> sizes) { return x.reshape(sizes); }
inline Tensor expand(const Tensor &x, std::vector<int64_t> sizes) {
  return x.expand(std::move(sizes));
}
inline Tensor expand(const Tensor &x, std::initializer_list<Dim> sizes) { return x.expand(sizes); }

inline Tensor dot(const Tensor &a, const Tensor &b) {
  detail::checkMatmulOperands("dot", a, b, 2);
  DType in = promote_types(a.dtype(), b.dtype());
  DType res = detail::opmath(in); // 16-bit inputs accumulate and return f32
  return detail::matmulImpl("dot", nullptr, a, b, {}, in, res, {a.size(0), b.size(1)});
}

inline Tensor addmm(const Tensor &acc, const Tensor &a, const Tensor &b) {
  detail::checkMatmulOperands("addmm", a, b, 2);
  detail::checkCpu("addmm", acc);
  DType in = promote_types(a.dtype(), b.dtype());
  return detail::matmulImpl("addmm", &acc, a, b, {}, in, acc.dtype(), {a.size(0), b.size(1)});
}

inline Tensor bmm(const Tensor &a, const Tensor &b) {
  detail::checkMatmulOperands("bmm", a, b, 3);
  DType in = promote_types(a.dtype(), b.dtype());
  return detail::matmulImpl("bmm", nullptr, a, b, {a.size(0)}, in, in,
                            {a.size(0), a.size(1), b.size(2)});
}

inline Tensor bmm(const Tensor &a, const Tensor &b, DType out_dtype) {
  detail::checkMatmulOperands("bmm", a, b, 3);
  DType in = promote_types(a.dtype(), b.dtype());
  // As torch.bmm's out_dtype on CUDA: the inputs' dtype, or f32 for 16-bit
  // float inputs (the f32 sums, not rounded to 16 bits).
  if (out_dtype != in && !(out_dtype == DType::f32 && detail::opmath(in) == DType::f32))
    detail::fail("bmm", std::string("out_dtype ") + dtype_name(out_dtype) +
                            " is not supported for " + dtype_name(in) +
                            " inputs; it can be f32 for 16- or 8-bit float inputs, or the inputs' dtype");
  return detail::matmulImpl("bmm", nullptr, a, b, {a.size(0)}, in, out_dtype,
                            {a.size(0), a.size(1), b.size(2)});
}

inline Tensor baddbmm(const Tensor &acc, const Tensor &a, const Tensor &b) {
  detail::checkMatmulOperands("baddbmm", a, b, 3);
  detail::checkCpu("baddbmm", acc);
  DType in = promote_types(a.dtype(), b.dtype());
  return detail::matmulImpl("baddbmm", &acc, a, b, {a.size(0)}, in, acc.dtype(),
                            {a.size(0), a.size(1), b.size(2)});
}

inline Tensor matmul(const Tensor &a, const Tensor &b) {
  const char *op = "matmul";
  detail::checkCpu(op, a);
  detail::checkCpu(op, b);
  if (a.dim() == 0 || b.dim() == 0)
    detail::fail(op, "both operands need at least one dimension, got " + detail::describe(a) +
                         " and " + detail::describe(b));
  Tensor A = a.dim() == 1 ? a.unsqueeze(0) : a;
  Tensor B = b.dim() == 1 ? b.unsqueeze(1) : b;
  if (A.size(-1) != B.size(-2))
    detail::fail(op, "inner dimensions do not match: " + detail::describe(a) + " @ " +
                         detail::describe(b));
  std::vector<int64_t> sa = A.sizes(), sb = B.sizes();
  std::vector<int64_t> batch = detail::broadcastShapes(
      op, std::vector<int64_t>(sa.begin(), sa.end() - 2), std::vector<int64_t>(sb.begin(), sb.end() - 2));
  std::vector<int64_t> out = batch;
  if (a.dim() > 1) out.push_back(A.size(-2));
  if (b.dim() > 1) out.push_back(B.size(-1));
  DType in = promote_types(a.dtype(), b.dtype());
  return detail::matmulImpl(op, nullptr, A, B, batch, in, in, out);
}

//===----------------------------------------------------------------------===//
// Explicit loads, stores and atomics
//===----------------------------------------------------------------------===//

inline Tensor load(const Tensor &x, std::initializer_list<Index> idx) {
  detail::Pattern p = detail::buildPattern("load", x, std::vector<Index>(idx), false);
  return detail::loadPattern("load", x, p, nullptr);
}
inline Tensor load(const Tensor &x, std::initializer_list<Index> idx, const Tensor &mask) {
  detail::Pattern p = detail::buildPattern("load", x, std::vector<Index>(idx), true);
  std::vector<int64_t> m = detail::readMask("load", mask, p.shape);
  return detail::loadPattern("load", x, p, &m);
}

inline void store(const Tensor &x, std::initializer_list<Index> idx, const Tensor &v) {
  detail::Pattern p = detail::buildPattern("store", x, std::vector<Index>(idx), false);
  detail::storePattern("store", x, p, v, nullptr);
  detail::propagate("store", x);
}
inline void store(const Tensor &x, std::initializer_list<Index> idx, const Tensor &v,
                  const Tensor &mask) {
  detail::Pattern p = detail::buildPattern("store", x, std::vector<Index>(idx), true);
  std::vector<int64_t> m = detail::readMask("store", mask, p.shape);
  detail::storePattern("store", x, p, v, &m);
  detail::propagate("store", x);
}
template <Arithmetic S> void store(const Tensor &x, std::initializer_list<Index> idx, S v) {
  detail::checkDefined("store", x);
  store(x, idx, detail::scalarTensor(v, x.dtype()));
}
template <Arithmetic S>
void store(const Tensor &x, std::initializer_list<Index> idx, S v, const Tensor &mask) {
  detail::checkDefined("store", x);
  store(x, idx, detail::scalarTensor(v, x.dtype()), mask);
}

namespace detail {
inline void atomicImpl(const char *op, Atomic kind, const Tensor &x, std::initializer_list<Index> idx,
                       const Tensor &v, const Tensor *mask) {
  Pattern p = buildPattern(op, x, std::vector<Index>(idx), mask != nullptr);
  std::vector<int64_t> m;
  if (mask) m = readMask(op, *mask, p.shape);
  atomicPattern(op, kind, x, p, v, mask ? &m : nullptr);
  propagate(op, x);
}
} // namespace detail

#define KITE_DEFINE_ATOMIC(NAME, KIND)                                                             \
  inline void NAME(const Tensor &x, std::initializer_list<Index> idx, const Tensor &v) {           \
    detail::atomicImpl(#NAME, detail::Atomic::KIND, x, idx, v, nullptr);                           \
  }                                                                                                \
  inline void NAME(const Tensor &x, std::initializer_list<Index> idx, const Tensor &v,             \
                   const Tensor &mask) {                                                           \
    detail::atomicImpl(#NAME, detail::Atomic::KIND, x, idx, v, &mask);                             \
  }                                                                                                \
  template <Arithmetic S> void NAME(const Tensor &x, std::initializer_list<Index> idx, S v) {      \
    detail::checkDefined(#NAME, x);                                                                \
    detail::atomicImpl(#NAME, detail::Atomic::KIND, x, idx, detail::scalarTensor(v, x.dtype()),    \
                       nullptr);                                                                   \
  }                                                                                                \
  template <Arithmetic S>                                                                          \
  void NAME(const Tensor &x, std::initializer_list<Index> idx, S v, const Tensor &mask) {          \
    detail::checkDefined(#NAME, x);                                                                \
    detail::atomicImpl(#NAME, detail::Atomic::KIND, x, idx, detail::scalarTensor(v, x.dtype()),    \
                       &mask);                                                                     \
  }
KITE_DEFINE_ATOMIC(atomic_add, add)
KITE_DEFINE_ATOMIC(atomic_max, max)
KITE_DEFINE_ATOMIC(atomic_min, min)
#undef KITE_DEFINE_ATOMIC

namespace detail {
inline std::string nestedBrackets(const std::vector<std::string> &items, const Shape &s) {
  // Innermost rows first, then group them dimension by dimension.
  std::vector<std::string> level = items;
  for (size_t d = s.size(); d-- > 0;) {
    std::vector<std::string> up;
    size_t n = static_cast<size_t>(s[d]);
    size_t groups = static_cast<size_t>(numelOf(Shape(s.begin(), s.begin() + d)));
    for (size_t g = 0; g < groups; ++g) {
      std::string r = "[";
      for (size_t i = 0; i < n; ++i) r += (i ? ", " : "") + level[g * n + i];
      up.push_back(r + "]");
    }
    level = std::move(up);
  }
  return level.empty() ? "[]" : level[0];
}
} // namespace detail

inline std::string to_string(const Tensor &x) {
  if (!x.defined()) return "tensor(undefined)";
  std::string tail = ", " + detail::shapeStr(x.sizes()) + " " + dtype_name(x.dtype());
  if (!x.device().is_cpu()) return "tensor(<" + to_string(x.device()) + ">" + tail + ")";
  std::vector<double> v = x.to_doubles();
  std::vector<int64_t> s = x.sizes();
  bool fl = is_floating(x.dtype());
  std::string out = "tensor(";
  auto elem = [&](double e) {
    if (x.dtype() == DType::boolean) return std::string(e != 0 ? "true" : "false");
    if (!fl) return std::to_string(static_cast<int64_t>(e));
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", e);
    return std::string(buf);
  };
  if (s.empty()) return out + elem(v[0]) + tail + ")";
  // Nested brackets, row-major.
  std::vector<std::string> items;
  for (double e : v) items.push_back(elem(e));
  return out + detail::nestedBrackets(items, s) + tail + ")";
}

} // namespace kite

#endif // KITE_KITE_HPP
