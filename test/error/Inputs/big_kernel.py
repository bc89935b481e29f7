#!/usr/bin/env python3
# big_kernel.py KIND N - prints a kernel with one huge or deeply nested
# construct on line 8, for the frontend's limit tests (big_expressions.kite.cpp):
#   sum N    out[t] = v + v + ... + v        (N terms)
#   neg N    out[t] = - - ... - v            (N unary minuses)
#   sizeof N auto n = sizeof sizeof ... 1;  (N sizeofs: recursion in the
#            parser without an operator token)
#   elif N   an if with N else-if branches   (one per line from line 9)
import sys

kind, n = sys.argv[1], int(sys.argv[2])
head = ("#include <kite/kite.hpp>\n"
        "using namespace kite;\n"
        "\n"
        "KITE_KERNEL Tensor big(Tensor x) {\n"
        "  auto out = empty_like(x);\n"
        "  for (auto t : tile(x.size(0))) {\n"
        "    auto v = x[t];\n")
if kind == "sum":
    body = "    out[t] = " + " + ".join(["v"] * n) + ";\n"
elif kind == "neg":
    body = "    out[t] = " + "- " * n + "v;\n"
elif kind == "sizeof":
    body = "    auto n = " + "sizeof " * n + "1;\n"
elif kind == "elif":
    body = ("    if (t.begin() == 0) out[t] = v;\n" +
            "    else if (t.begin() == 1) out[t] = v;\n" * n)
else:
    sys.exit("unknown kind " + kind)
sys.stdout.write(head + body + "  }\n  return out;\n}\n")
