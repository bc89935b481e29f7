//===- ConfigSpace.h - the configs a kernel can be tuned over ---*- C++ -*-===//
//
// This file declares the derivation of a kernel's config space from its
// specialized IR (DESIGN section 2.1): one parameter per tunable config
// entry, each an ordered list of values (neighbors in the list are
// neighbors for the search), with the default config's choice marked.
//
// The space crosses into the autotuner as JSON, so that autotune/ needs no
// MLIR:
//
//   {"default": {...the default config...},
//    "parameters": [
//      {"key": "block_sizes", "index": 0, "values": [1, 2, 4, ...],
//       "default": 3, "doc": "rows per program of the loop at softmax.kite.cpp:6"},
//      {"key": "num_warps", "values": [1, 2, 4, 8, 16, 32], "default": 2, ...},
//      ...]}
//
// `index` is present for list-valued keys (block_sizes[i], loop_orders[i],
// l2_groupings[i], reduction_loops[i]); a config sets every list in full.
// An optional "starts": [{...}, ...] lists whole configs far from the
// default (several keys apart) that win at some shapes; the search tries
// them beside the default and descends from the best.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_LOWERING_CONFIGSPACE_H
#define KITE_LOWERING_CONFIGSPACE_H

#include "ir/KiteDialect.h"

#include <nlohmann/json.hpp>

namespace kite {

/// The config space of a specialized kernel (kite-specialize has run; no
/// config applied yet). Values that cannot fit (a block size beyond its
/// dimension, a chunk as long as the row) are left out; values that may
/// still be rejected at emission (too many registers a thread) are in. Its
/// default is defaultConfig(kernel, arch, speculative): the compiler passes
/// speculative = false where emission turns the speculative one down
/// (speculativeDefaultFits).
nlohmann::json deriveConfigSpace(mlir::func::FuncOp kernel, llvm::StringRef arch = "sm_90a",
                                 bool speculative = true);

} // namespace kite

#endif // KITE_LOWERING_CONFIGSPACE_H
