// main.cpp - launch softmax (examples/softmax.kite.cpp) with kite::launch
// and check it against reference mode (the same source, run on the CPU).
// Without a GPU it runs reference mode only, says why, and exits 0.
#include <kite/runtime.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

// The kernel, defined in softmax.kite.cpp (compiled into this program by
// kite_add_kernels, which also registers its captured IR).
kite::Tensor softmax(kite::Tensor x);

int main() {
  kite::Tensor x = kite::randn({1000, 4097}, kite::bf16, /*seed=*/0);
  kite::Tensor expected = softmax(x); // reference mode, on the CPU
  std::printf("softmax of [1000, 4097] bf16 in reference mode: ok\n");

  if (!kite::gpu_available()) {
    std::printf("no CUDA GPU: %s; ran reference mode only\n",
                kite::gpu_unavailable_reason().c_str());
    return 0;
  }
  try {
    kite::Tensor y = kite::launch(softmax, kite::cuda::to_device(x)); // GPU mode
    std::vector<double> got = kite::cuda::to_host(y).to_doubles();
    std::vector<double> want = expected.to_doubles();
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      double err = std::abs(got[i] - want[i]) - 1e-2 * std::abs(want[i]);
      if (!(err <= 1e-3)) { // NaN fails too
        std::printf("mismatch at element %zu: GPU %g, reference %g\n", i, got[i], want[i]);
        return 1;
      }
      worst = std::max(worst, std::abs(got[i] - want[i]));
    }
    std::printf("softmax on the GPU matches reference mode (max abs error %g)\n", worst);
  } catch (const kite::Error &e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
  return 0;
}
