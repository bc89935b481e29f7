//===- Passes.td - kite lowering passes -------------------*- tablegen -*-===//
//
// The passes between captured IR and CUDA. `buildKiteLoweringPipeline` in
// Pipeline.cpp lists them in order; each is defined in the file named after
// it.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_LOWERING_PASSES_TD
#define KITE_LOWERING_PASSES_TD

include "mlir/Pass/PassBase.td"

def KiteSpecialize : Pass<"kite-specialize", "::mlir::ModuleOp"> {
  let summary = "Specialize a kernel to its launch arguments";
  let description = [{
    Makes the kernel's tensor parameters concrete (dtype, sizes, strides,
    alignment), folds the host prologue's size and dtype queries to
    constants, replaces `kite.specialize`d scalars (given a value) by
    constants, and infers every value's type: PyTorch's dtype promotion and
    broadcasting, tile shapes from block sizes (static once the config is
    applied). Kernels other than `kernel` are erased.

    Assumes: captured IR (dynamically typed). Guarantees: every tensor type
    is static; every tile's element type and rank are known; dims are static
    except those sized by a symbolic `kite.block_size`.

    ```mlir
    // args="x=bf16[1024,4096]"
    %n = kite.size %x[0] : !kite.tensor<*x?>          // before
    %n = arith.constant 1024 : i64                     // after
    ```

    Test: test/lowering/kite-specialize.mlir
  }];
  let options = [
    Option<"kernel", "kernel", "std::string", /*default=*/"\"\"",
           "The kernel to keep (default: the only one)">,
    Option<"args", "args", "std::string", /*default=*/"\"\"",
           "Arguments, space-separated, as on the command line: "
           "x=bf16[1024,4096] eps=f32 n=i64:7">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def KiteApplyConfig : Pass<"kite-apply-config", "::mlir::ModuleOp"> {
  let summary = "Apply a config: block sizes and launch strategy";
  let description = [{
    Replaces each `kite.block_size` by the config's `block_sizes[id]` and
    re-infers tile shapes, which become static. Keys that steer later passes
    (`num_warps`, `pid_type`, `loop_orders`, `reduction_loops`, ...) are
    recorded as the `kite.config` attribute of the kernel. A config that
    does not fit the kernel (wrong number of block sizes, a non-power-of-two
    block size, too many threads) is an error naming the key.

    Assumes: specialized IR. Guarantees: no `kite.block_size` remains; every
    tile type is static.

    Test: test/lowering/kite-apply-config.mlir
  }];
  let options = [
    Option<"config", "config", "std::string", /*default=*/"\"\"",
           "The config as JSON (empty: the default config)">,
    Option<"arch", "arch", "std::string", /*default=*/"\"sm_90a\"",
           "The GPU target the default config is for">,
    Option<"speculative", "speculative", "bool", /*default=*/"true",
           "With an empty config, the default may hold choices emission can "
           "still turn down (see defaultConfig); false: the plain default">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def KiteCheckBounds : Pass<"kite-check-bounds", "::mlir::ModuleOp"> {
  let summary = "Prove every subscript inside its tensor, or mask it at run time";
  let description = [{
    A tile's lanes are masked by its loop's extent, not by the tensor it
    indexes. For each subscript of each `kite.load`, `kite.store` and
    `kite.atomic`, proves from the bounds of the loops and scalars it is
    built from (interval arithmetic, IndexRange.h) that it stays inside the
    indexed dimension. Where it cannot:

    - a subscript that leaves the dimension whenever its loop runs (a tile
      loop over [0, 128) indexing a dimension of 64, a constant index past
      the end) is an error at the access naming the kernel, the tensor,
      the dimension and the sizes, as reference mode reports it; a masked
      access (`load(x, {...}, mask)`) is never an error, as in reference
      mode;
    - a subscript that may (bounds from a run-time scalar, gathered
      indices) is listed in the access's `kite.checked` attribute, and
      CUDA emission masks it against the dimension at run time: its
      out-of-range lanes read 0 and are not written.

    Assumes: specialized IR (static tensor types). Guarantees: no access
    the IR describes reaches outside its tensor. Runs before
    kite-matmul-mainloop, whose main loops take only unchecked operands,
    and after kite-reduction-loops, whose chunk loops it proves.

    ```mlir
    // y: f32[64,192]; %tk runs over [0, 128)
    %b = kite.load %y[%tk, %tn] : ...   // error: the tiles of [0, 128) are out
                                        // of range for dimension 0 of size 64
    // %i runs over [0, %n), %n a run-time scalar
    %c = kite.load %z[%i, all] {kite.checked = array<i32: 0>} : ...
    ```

    Test: test/lowering/kite-check-bounds.mlir
  }];
}

def KiteReductionLoops : Pass<"kite-reduction-loops", "::mlir::ModuleOp"> {
  let summary = "Loop over chunks of the reduction dimensions the config asks for";
  let description = [{
    For each reduction dimension (a tensor dim read whole, `x[tn, all]`,
    numbered by `reductionDims` in Config.h) whose `reduction_loops` entry
    is a chunk size smaller than the dimension, rewrites the loop body so
    that no whole-row value remains: each reduction over the dimension
    becomes a `kite.tile_for` over chunks carrying a partial result
    (sum, mean, amax, amin, prod; half precision accumulates in f32), and
    each store of a whole-row value becomes a `kite.tile_for` that
    recomputes the value chunk by chunk from its loads. Values that do not
    depend on the dimension (the row max, say) are computed once.
    `amax(x)` and `sum(exp(x - amax(x)))` over the same row share one loop
    (online softmax): a running max per thread, a `local` `kite.reduce`,
    and sums rescaled as it grows; one cross-thread amax after the loop.

    Assumes: a configured kernel (`kite.config` set). Guarantees: no load of
    a looped dimension reads it whole. A use it cannot rewrite (argmax, a
    matmul operand, a value carried by a loop, a whole-row index) is an error
    naming the op, which tells the user to use null for that reduction.

    ```mlir
    // reduction_loops = [1024], x: 8x4096
    %m = kite.reduce amax %row {dim = 1 : i64} : ...        // before
    %m = kite.tile_for (%tc) = (%c0) to (%c4096) block (%c1024)
        iter_args(%a = %minus_inf) -> (...) { ... }          // after
    ```

    Test: test/lowering/kite-reduction-loops.mlir
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def KiteSplitMaskedLoops : Pass<"kite-split-masked-loops", "::mlir::ModuleOp"> {
  let summary = "Split nested tile loops where a mask is uniformly true";
  let description = [{
    For a nested 1-D `kite.tile_for` whose body selects with `kite.where`
    on a condition built from index tiles (`span_index` of the loop's own
    tile and of tiles or scalars defined outside it, shape ops, `add`,
    `sub`, multiplication by a constant, `and`, and one comparison
    `lt`/`le`/`gt`/`ge`), finds the iterations on which the condition
    holds for every element of the tile: the condition is affine in the
    iteration, so they form one interval, computed before the loop. The
    loop is split at its ends into up to three loops over consecutive key
    ranges, carrying the same values; in the middle one each `kite.where`
    on that condition is its true operand. A causal mask (`tq.index() >=
    tk.index()`) leaves the tiles below the diagonal unmasked and only the
    ones that straddle it pay for the comparison and select.

    The splits stop at the last full tile: the first two loops hold full
    tiles only and are marked `kite.full_tiles` (emission masks nothing
    past their tiles' ends); a partial last tile runs in the third. Where
    both bounds are multiples of the block size (IndexRanges::divisorOf:
    a loop over `[0, tq.end())` with a sequence length that both tile
    sizes divide) there is no partial tile: the third is marked too, or
    dropped where it is empty.

    A loop with no such where whose body reduces (`kite.reduce`, as an
    attention's row max and sum over its key tiles do), and whose bounds
    do not make every tile full (constants, or multiples of the block
    size, which then mark it), has its partial last tile peeled:
    a loop over its full tiles, marked `kite.full_tiles`, then the original
    over the rest (at most one tile). A product's K loop has no reduce and
    stays whole for kite-matmul-mainloop.

    Assumes: kite-apply-config ran (the loop's block size is a constant).
    Guarantees: the same results; a where is replaced only where its
    condition is true on every element the iteration computes.

    ```mlir
    %r = kite.tile_for (%tk) = (%c0) to (%split) ... { no where }
    %r2 = kite.tile_for (%tk) = (%split) to (%end) iter_args(... = %r) { where }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def KiteCacheHints : Pass<"kite-cache-hints", "::mlir::ModuleOp"> {
  let summary = "L2 eviction priorities for loads (config l2_hints)";
  let description = [{
    With `l2_hints` `"reuse"` in the config, sets `kite.cache` on
    `kite.load`s:

    - `"evict_last"` on a load whose data the same program reads again
      later (a looped reduction's earlier passes over a row), and
      `"evict_first"` on the last of those reads. Two loads read the same
      data when they read the same tensor with the same subscripts, where
      the variables of loops with the same bounds and block size count as
      the same;
    - `"evict_last"` on a load that depends on no top-level loop variable:
      every program reads the same data (a weight, a bias).

    Other loads keep the default priority (or `streaming`'s). With
    `"keep_loads"`, every load gets `"evict_last"`: a kernel's inputs stay in
    L2 ahead of what it writes. CUDA emission
    gives a marked load an L2 cache-hint policy (`createpolicy` with
    `ld.global.L2::cache_hint`), as Triton's `eviction_policy`. The hints
    change no result.

    Assumes: a configured kernel (`kite.config` set), after
    kite-reduction-loops. Guarantees: only attributes change.

    ```mlir
    kite.tile_for (%tc) = (%c0) to (%c8192) block (%c4096) ... {
      %a = kite.load %x[%tn, %tc] {kite.cache = "evict_last"} : ...
    }
    kite.tile_for (%tc) = (%c0) to (%c8192) block (%c4096) {
      %b = kite.load %x[%tn, %tc] {kite.cache = "evict_first"} : ...
      %w = kite.load %w[%tc] {kite.cache = "evict_last"} : ...
    }
    ```

    Test: test/lowering/kite-cache-hints.mlir
  }];
}

def KiteEarlyLoads : Pass<"kite-early-loads", "::mlir::ModuleOp"> {
  let summary = "Issue loads as early as their operands allow (config early_loads)";
  let description = [{
    With `early_loads` in the config, moves each `kite.load` up its block
    to just after the last op it must follow: one that defines an operand
    (cheap pure ops that compute its operands, index arithmetic, move up
    with it; reductions and matrix products do not), one that may write the
    tensor it reads (a store or atomic to it or to a
    view of it, an op with unknown effects, or a loop containing one), or the
    load before it (loads keep their order). CUDA emission follows op order,
    so a load that passes a reduction is issued before the reduction's
    barrier instead of after it: a norm's weight is read while the row's
    statistics are computed. The values of a moved load live across what it
    passed, in registers. Loops that kite-matmul-mainloop marked are left
    alone.

    Assumes: a configured kernel (`kite.config` set). Guarantees: only the
    order of ops within blocks changes; no result does.

    ```mlir
    %x = kite.load %arg0[%tn, all] : ...          %x = kite.load %arg0[%tn, all] : ...
    %r = kite.reduce mean %sq {dim = 1} : ...  -> %w = kite.load %arg1[all] : ...
    %w = kite.load %arg1[all] : ...               %r = kite.reduce mean %sq {dim = 1} : ...
    ```

    Test: test/lowering/kite-early-loads.mlir
  }];
}

def KiteAssignLayouts : Pass<"kite-assign-layouts", "::mlir::ModuleOp"> {
  let summary = "Give every tile its layout; convert where a user needs another";
  let description = [{
    The last pass before CUDA emission. Every tile value's type gets a
    `#kite.blocked` layout (which threads hold which elements, in which
    registers), every store and atomic a `kite.layout` attribute (the
    layout its elements are iterated in), and a `kite.convert_layout` goes
    before each user that cannot read an operand in the layout it has.
    Emission reads the layouts and decides none.

    A top-level loop's main context is the thread arrangement of its
    largest tile; fresh tiles (loads, constants, index ranges, products
    without an accumulator, reshapes, `if` results) lie in it when their
    padded shape fits (right-aligned, each dim equal or 1), else in a
    context of their own shape. Elementwise results take their largest
    same-shape operand's layout, reductions drop the reduced dim, shape ops
    move dims, products and loop-carried values keep their accumulator's
    and initializer's. With `tensor_cores`, a 16-bit product whose tiles
    allow it takes the tensor cores' layout (its left operand and result in
    registers) and a `kite.mma` mark naming the instruction: `wgmma` on
    sm_90a with `wgmma` in the config and whole warpgroups, else
    `mma_sync`. With `bulk_stores` on sm_90 and later, unmasked stores get
    `kite.bulk_store` (emission copies their tiles' rows by
    `cp.async.bulk` where they are whole tensor rows). lowering/AssignLayouts.cpp
    has the rules.

    Assumes: a configured kernel with static tile shapes (kite-apply-config
    and the passes before emission). Guarantees: every tile type has a
    layout that fits its shape; every operand's layout is readable by its
    user; only `kite.convert_layout` changes a value's layout.

    ```mlir
    %s = kite.reduce sum %x {dim = 1 : i64}            %s = kite.reduce sum %x {dim = 1 : i64}
        : !kite.tile<4x256xf32> -> !kite.tile<4xf32>   ->   : !kite.tile<4x256xf32, #kite.blocked<shape = [4, 256],
                                                                  vec = [1, 4], threads = [2, 64], dims = [0, 1]>>
                                                              -> !kite.tile<4xf32, #kite.blocked<..., dims = [0]>>
    ```

    Test: test/lowering/kite-assign-layouts.mlir
  }];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"sm_90a\"",
           "The GPU target: products on wgmma need sm_90a">
  ];
}

def KitePrefetchOperands : Pass<"kite-prefetch-operands", "::mlir::ModuleOp"> {
  let summary = "Mark product operand loads that are copied ahead of their loop's iteration";
  let description = [{
    With `num_stages` S in the config, marks `kite.prefetch = S`
    each `kite.load` in the body of a nested 1-D `kite.tile_for` (not a
    `kite.mainloop`) whose tile is used only as the right operand of a
    `kite.mma` product in the same block (directly or through one
    `kite.transpose`), that has no mask and no gathered subscript, whose
    other subscripts are the loop's span or values defined outside the
    loop, and that reads a kernel parameter nothing in the kernel writes.
    CUDA emission copies such a load's tiles with cp.async straight into a
    ring of S staging buffers of its product, S - 1 iterations ahead (the
    first ones before the loop; S = 1: one buffer, refilled right after its
    product), and the product reads the buffer of its
    iteration after the wait and barrier it already had. Attention's k and
    v tiles are the example.

    Assumes: kite-assign-layouts ran (products marked `kite.mma`).
    Guarantees: only the `kite.prefetch` attribute changes.

    ```mlir
    %kt = kite.load %k[%tb, %tk, all] {kite.prefetch = 2 : i64} : ...
    ```

    Test: test/lowering/kite-prefetch-operands.mlir
  }];
}

def KiteMatmulMainloop : Pass<"kite-matmul-mainloop", "::mlir::ModuleOp"> {
  let summary = "Mark K loops that run as a pipelined tensor-core main loop";
  let description = [{
    With `tensor_cores` in the config, marks each nested `kite.tile_for`
    that is exactly a matrix product's K loop,
    `acc = addmm(acc, x[tm, tk], y[tk, tn])` (or `baddbmm` with a batch tile
    of 1) on bf16 or f16 kernel parameters with an f32 accumulator, with a
    `kite.mainloop` plan that CUDA emission runs as one of
    runtime/device/kite_gemm.cuh's main loops. Its `kind`:

    - `mma`: `mma_mainloop` (cp.async ring, ldmatrix, mma.sync), with the
      warp grid `warps_m` x `warps_n` (the squarest split with warp tiles of
      at least 16 x 16);
    - `wgmma` (config `wgmma`, sm_90a): `wgmma_mainloop`, `warpgroups` of
      4 warps taking 64-row blocks, BN a multiple of 64 up to 256, BK 64;
    - `wgmma_ws` (and `warp_specialize`, 8 or 12 warps, not persistent):
      `wgmma_ws_mainloop`, the last of `warpgroups` copying with cp.async
      for one or two consumers of 64 or 128 rows each;
    - `wgmma_tma` (and `indexing` `tma`): `wgmma_tma_mainloop`, the copies
      by TMA; only where both operands can be TMA boxes (16-byte aligned
      rows, positive strides, loops over whole dimensions) or staged
      (contiguous rows: `copy_a`/`copy_b` `staged`, a padded copy made at
      launch), else `wgmma_ws`.

    With `generic_mainloop` in the config a loop whose operands TMA reads
    in place or from a staged copy (16-bit, the right one MN-major,
    contiguous rows: streamsAsKeyLoop) is not marked: the product stays an
    ordinary key-loop product (sums in registers, operands streamed by the
    producer's rings, the left one a box per 64-row block).

    With `split_k` > 1 in the config, the kernel's one main loop, directly
    in its only top-level loop with nothing stored before it, on flat
    program ids, also gets `split_k` (emission runs each tile as that many
    programs over shares of K); a kernel where that does not hold is
    rejected (the config does not fit).

    Every kind keeps a thread's f32 sums within 128 and within the
    registers a thread gets (65536 over the threads of `min_programs_per_sm`
    programs, at most 255) less 40; a kind whose sums would not fit is not
    chosen.

    All kinds carry the shared-memory `stages` (the config's `num_stages`,
    at least 2) and how each operand's tiles are copied (`copy_a`,
    `copy_b`): `async` (16-byte cp.async: contiguous rows, 16-byte aligned
    data and row strides), `shifted` (contiguous rows of another static
    stride of at least 32 bytes on 16-byte aligned data: aligned 16-byte
    loads shifted into place in registers) or `elements`. Kinds the target
    `arch` lacks are not chosen. Other products keep the per-step path.
    With `explain`, each loop with a product that is not marked gets a
    remark saying why.

    Assumes: a configured kernel (`kite.config` set), static tile types.
    Guarantees: only the attribute changes.

    ```mlir
    %r = kite.tile_for (%tk) = ... iter_args(%acc = %0) -> (!kite.tile<128x256xf32>) {
      ...
    } {kite.mainloop = {copy_a = "async", copy_b = "async", kind = "wgmma_tma",
                        stages = 4 : i64, warpgroups = 3 : i64}}
    ```

    Test: test/lowering/kite-matmul-mainloop.mlir
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Remark on each product loop that is not marked, with the reason">,
    Option<"arch", "arch", "std::string", /*default=*/"\"sm_90a\"",
           "The GPU target: wgmma, warp-specialized and TMA loops need sm_90a">
  ];
}

def KitePrintCuda : Pass<"kite-print-cuda", "::mlir::ModuleOp"> {
  let summary = "Print the CUDA C++ of a lowered kernel";
  let description = [{
    Runs CUDA emission (lowering/EmitCuda.h) on the kernel and prints the
    source to standard output, or the errors at the user's lines. The IR is
    left unchanged. Use after `kite-lower`:
    `kite-opt k.mlir --kite-lower="args='x=f32[8,8]'" --kite-print-cuda -o /dev/null`.

    Assumes: a specialized, configured kernel.

    Test: test/codegen/*.mlir
  }];
  let options = [
    Option<"lineDirectives", "line-directives", "bool", /*default=*/"false",
           "Emit #line directives pointing at the kernel's source">
  ];
}

def KiteOverlapProducts : Pass<"kite-overlap-products", "::mlir::ModuleOp"> {
  let summary = "Mark key loops whose last product runs one iteration late";
  let description = [{
    With `overlap_products` in the config, marks `kite.overlap` each nested
    1-D `kite.tile_for` (not a `kite.mainloop`) that splits into two stages,
    and `kite.late` the ops of its late stage. The late stage is every op
    that depends on a loop-carried tile whose yielded value is a wgmma
    product's result, plus the loads (with their transposes and layout
    changes) that only late ops read. The loop splits if: its late values
    reach only late ops and the product's carried slot; no late op has a
    region; nothing in the loop writes memory; the early stage (the rest)
    has a wgmma product; the right operands of the early stage's first
    wgmma product and of the late product are prefetched (`kite.prefetch`)
    and are the loop's only prefetched loads.

    CUDA emission then runs iteration i - 1's late stage in iteration i,
    issued just after the early stage's first product and waited for at the
    iteration's end, and keeps the early values the late stage reads in
    registers for one iteration. Attention's `acc = baddbmm(acc * alpha, p,
    v)` is a late stage; the first product and the softmax are early.

    Assumes: kite-prefetch-operands ran.
    Guarantees: only the `kite.overlap` and `kite.late` attributes change.

    ```mlir
    kite.tile_for ... {kite.overlap} {
      %s = kite.bmm %q, %kt {kite.mma = "wgmma"}        // early
      ...
      %acc2 = kite.baddbmm %a, %p, %v {kite.late, kite.mma = "wgmma"}
    }
    ```

    Test: test/lowering/kite-overlap-products.mlir
  }];
}

#endif // KITE_LOWERING_PASSES_TD
