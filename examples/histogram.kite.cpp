// histogram.kite.cpp: counts of integer values into `bins` bins, as
// torch.bincount(x, minlength=bins) (values outside [0, bins) are not
// counted). Written as plain atomic adds: on the GPU each program gathers
// its counts in shared memory and adds them to the output once
// (`privatize_atomics`), so the global atomics number bins per program,
// not one per value.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor histogram(Tensor x, int64_t bins) {
  auto counts = zeros({specialize(bins)}, i32);
  for (auto t : tile(x.size(0))) {
    auto v = x[t];
    atomic_add(counts, {v}, 1, (v >= 0) & (v < bins));
  }
  return counts;
}
