// RUN: not kite compile %s --emit=ir 2>&1 | FileCheck %s
#include <kite/kite.hpp>
#include <string>
#include <vector>
using namespace kite;

// CHECK: [[@LINE+1]]:41: error: parameter 'sizes' has type 'std::vector<int>', which kite kernels do not support; use kite::Tensor or a scalar (int64_t, int, double, float, bool)
KITE_KERNEL void takes_vector(Tensor x, std::vector<int> sizes) {}

// CHECK: [[@LINE+1]]:31: error: parameter 'mode' has type 'std::string'
KITE_KERNEL void takes_string(std::string mode, Tensor x) {}

// CHECK: [[@LINE+1]]:30: error: parameter 'dt' has type 'DType'
KITE_KERNEL void takes_dtype(DType dt) {}
