// A header found through `kite compile -I`, configured with `-D`.
#pragma once
#ifndef KITE_TEST_SCALE
#define KITE_TEST_SCALE 1
#endif
inline int kite_test_scale() { return KITE_TEST_SCALE; }
