#!/usr/bin/env python3
"""gen_kernels.py - random valid kite kernels for the differential tester.

This file implements the generator behind test/difftest (in the manner of
Csmith and YARPGen): from a seed it writes kernels of several families
(elementwise chains with mixed dtypes and broadcasting, reductions over any
dimension, gathers, atomics, nested and range loops, matrix products with
epilogues), split into a few .kite.cpp files, and for each file a C++ table
(<stem>_table.inc) that tells difftest.cpp how to call the kernel: its
problem dimensions and their size ranges, each parameter's dtype, shape and
value range (index tensors: the dimension they index), the reference-mode
call, and the tolerance.

Every kernel is valid by construction, and numerically tame: inputs are
bounded, values keep a tracked bound, transcendental functions see bounded
arguments, comparisons and floor/ceil see only exact loaded values (so a
rounding difference cannot flip them), integers stay far from overflow, and
prod runs over short dimensions only. So a mismatch is a compiler bug, or a
generator bug to be fixed here.

Usage: gen_kernels.py --seed S --kernels N --files F --out DIR
The output is deterministic for given arguments.
"""

import argparse
import math
import os
import random
import re

FLOAT = ("f32", "bf16", "f16")
INT = ("i32", "i64")

# Relative tolerance of one rounding to each dtype (about 2 ulps).
ROUND = {"f32": 2e-6, "bf16": 8e-3, "f16": 1e-3, "f64": 1e-12}


def category(dt):
    if dt == "bool":
        return 0
    if dt in INT:
        return 1
    return 2


def promote(a, b):
    """torch.result_type for two tiles (both of rank >= 1)."""
    if a == b:
        return a
    ca, cb = category(a), category(b)
    if ca != cb:
        return a if ca > cb else b
    if ca == 1:
        return "i64"
    # Floats: f16 with bf16 is f32; f32 wins over 16-bit.
    return "f32"


def promote_scalar(t, scalar_kind):
    """A tile op a C++ scalar: 'int' (i64 category) or 'float' (f32)."""
    if scalar_kind == "float" and category(t) < 2:
        return "f32"
    if scalar_kind == "int" and category(t) < 1:
        return "i64"
    return t


class E:
    """An expression: C++ text, dtype, a bound on |value|, whether the value
    is exact (a loaded input, not computed, so comparisons of it cannot
    flip), and a bound on its absolute error from 16-bit roundings that the
    GPU may place elsewhere than reference mode (it may keep a fused chain
    in f32)."""

    def __init__(self, code, dtype, bound, exact=False, err=0.0):
        self.code, self.dtype, self.bound, self.exact, self.err = code, dtype, bound, exact, err

    def is_float(self):
        return self.dtype in FLOAT


def rounding(dt):
    """The relative error of one rounding to `dt`, if it is a 16-bit float."""
    return ROUND.get(dt, 0.0) if dt in ("bf16", "f16") else 0.0


class Kernel:
    """One generated kernel: its source and the table entry."""

    def __init__(self, name, family):
        self.name, self.family = name, family
        self.dims = []      # (name, lo, hi)
        self.params = []    # dicts: kind, name, dtype, dims, lo, hi, index_dim
        self.body = []
        self.ret = []       # output variable names
        self.rtol = 0.0
        self.atol = 0.0
        self.max_elems = 1 << 17

    def dim(self, name, lo, hi, mult=1):
        """A problem dimension of sizes in [lo, hi], a multiple of `mult`."""
        self.dims.append((name, lo, hi, mult))
        return len(self.dims) - 1

    def tensor(self, name, dtype, dims, lo=-1.0, hi=1.0):
        self.params.append(dict(kind="tensor", name=name, dtype=dtype, dims=dims, lo=lo, hi=hi,
                                index_dim=-1))

    def index(self, name, dtype, dims, index_dim):
        self.params.append(dict(kind="index", name=name, dtype=dtype, dims=dims, lo=0, hi=0,
                                index_dim=index_dim))

    def scalar(self, name, ctype, lo, hi):
        self.params.append(dict(kind="scalar", name=name, dtype=ctype, dims=[], lo=lo, hi=hi,
                                index_dim=-1))

    def tolerance(self, out_dtype, bound, err=0.0, rtol=0.0):
        """Widens the kernel's tolerance for an output of `out_dtype` whose
        values are at most `bound`, with `err` absolute error from 16-bit
        roundings and `rtol` relative error of its own (f32 sums in another
        order). The table holds the widest over the kernel's outputs."""
        if out_dtype not in FLOAT:
            return
        base = {"f32": 1e-5, "bf16": 1e-2, "f16": 2e-3}[out_dtype] + rtol
        self.rtol = max(self.rtol, base)
        self.atol = max(self.atol, base * max(bound, 1.0) + 2.0 * err)

    def below(self, name, dim):
        """An int64_t parameter uniform in [0, size of `dim`]."""
        self.params.append(dict(kind="below", name=name, dtype="i64", dims=[], lo=0, hi=0,
                                index_dim=dim))

    def signature(self):
        out = []
        for p in self.params:
            if p["kind"] in ("scalar", "size", "below"):
                out.append({"i64": "int64_t", "i32": "int", "f64": "double", "f32": "float",
                            "bool": "bool"}[p["dtype"]] + " " + p["name"])
            else:
                out.append("Tensor " + p["name"])
        return ", ".join(out)

    def source(self):
        if len(self.ret) == 1:
            rtype, rexpr = "Tensor", self.ret[0]
        else:
            rtype = "std::tuple<" + ", ".join(["Tensor"] * len(self.ret)) + ">"
            rexpr = "{" + ", ".join(self.ret) + "}"
        lines = [f"// family: {self.family}",
                 f"KITE_KERNEL {rtype} {self.name}({self.signature()}) {{"]
        lines += ["  " + l for l in self.body]
        lines.append(f"  return {rexpr};")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def table(self, stem):
        dims = ", ".join(f'{{"{n}", {lo}, {hi}, {m}}}' for n, lo, hi, m in self.dims)
        ps = []
        for p in self.params:
            d = "{" + ", ".join(str(i) for i in p["dims"]) + "}"
            ps.append(f'{{Param::{p["kind"]}, "{p["name"]}", "{p["dtype"]}", {d}, '
                      f'{p["lo"]!r}, {p["hi"]!r}, {p["index_dim"]}}}')
        args = []
        for i, p in enumerate(self.params):
            if p["kind"] in ("scalar", "size", "below"):
                conv = {"i64": "int64_t", "i32": "int", "f64": "double", "f32": "float",
                        "bool": "bool"}[p["dtype"]]
                args.append(f"a[{i}].as<{conv}>()")
            else:
                args.append(f"a[{i}].tensor")
        call = f"{self.name}({', '.join(args)})"
        return (f'  {{"{stem}", "{self.name}", "{self.family}", {{{dims}}},\n'
                f'   {{{", ".join(ps)}}},\n'
                f'   {self.rtol!r}, {self.atol!r}, {self.max_elems},\n'
                f'   [](const std::vector<Value> &a) {{ return results({call}); }}}},\n')


def cxx_dtype(dt):
    """The kite constant for a dtype name."""
    return "boolean" if dt == "bool" else dt


def fmt(v):
    """A float literal."""
    s = repr(float(v))
    return s


class Gen:
    def __init__(self, seed, avoid=()):
        self.r = random.Random(seed)
        # Forms that hit known compiler bugs (see AVOIDABLE), left out.
        self.avoid = set(avoid)

    def pick(self, xs, weights=None):
        return self.r.choices(xs, weights=weights)[0] if weights else self.r.choice(xs)

    def chance(self, p):
        return self.r.random() < p

    # -- expressions --------------------------------------------------------

    def unary(self, a):
        if a.dtype == "bool":
            return E(f"(~{a.code})", "bool", 1, a.exact)
        if a.dtype in INT:
            op = self.pick(["neg", "abs", "mod", "div", "tof", "relu"])
            if op == "neg":
                return E(f"(-{a.code})", a.dtype, a.bound, a.exact)
            if op in ("abs", "relu"):
                return E(f"{op}({a.code})", a.dtype, a.bound, a.exact)
            if op == "mod":
                m = self.pick([3, 5, 7, 16])
                return E(f"({a.code} % {m})", a.dtype, m, a.exact)
            if op == "div":
                d = self.pick([2, 3, 4, 7])
                return E(f"({a.code} / {d})", "f32", a.bound / d + 1)
            return E(f"{a.code}.to(f32)", "f32", a.bound, a.exact)
        t, b = a.dtype, a.bound
        ops = ["sigmoid", "tanh", "sin", "cos", "relu", "abs", "silu", "gelu", "erf", "neg",
               "exp_tanh", "exp2_tanh", "log1p_abs", "log2_1p", "sqrt", "rsqrt", "sq", "pow15",
               "cast"]
        if a.exact:
            ops += ["floor", "ceil", "floor4"]
        op = self.pick(ops)

        def out(code, bound, lipschitz, roundings=1, exact=False, dtype=t):
            # The input's error through a function of slope <= lipschitz, plus
            # the roundings of this op's own 16-bit results.
            return E(code, dtype, bound, exact,
                     lipschitz * a.err + roundings * rounding(dtype) * bound)

        if op in ("sigmoid", "tanh", "sin", "cos", "erf"):
            return out(f"{op}({a.code})", 1.0, 1.13)
        if op in ("relu", "abs"):
            return out(f"{op}({a.code})", b, 1.0, 0, a.exact)
        if op == "neg":
            return out(f"(-{a.code})", b, 1.0, 0, a.exact)
        if op in ("silu", "gelu"):
            return out(f"{op}({a.code})", b + 0.5, 1.13)
        if op == "exp_tanh":
            return out(f"exp(tanh({a.code}))", 2.72, 2.72, 2)
        if op == "exp2_tanh":
            return out(f"exp2(tanh({a.code}))", 2.0, 1.4, 2)
        if op == "log2_1p":
            return out(f"log2(1.0f + abs({a.code}))", math.log2(1 + b) + 0.1, 1.45, 2)
        if op == "log1p_abs":
            return out(f"log(1.0f + abs({a.code}))", math.log1p(b) + 0.1, 1.0, 2)
        if op == "sqrt":
            return out(f"sqrt(abs({a.code}) + 0.25f)", math.sqrt(b + 0.25), 1.0, 2)
        if op == "rsqrt":
            return out(f"rsqrt(abs({a.code}) + 0.5f)", 1.5, 1.5, 2)
        if op == "sq" and b < 100:
            return out(f"pow({a.code}, 2.0)", b * b, 2 * b)
        if op == "pow15" and b < 100:
            return out(f"pow(abs({a.code}) + 0.5f, 1.5)", (b + 0.5) ** 1.5,
                       1.5 * math.sqrt(b + 0.5), 2)
        if op == "floor":
            return out(f"floor({a.code})", b + 1, 0.0, 0)
        if op == "ceil":
            return out(f"ceil({a.code})", b + 1, 0.0, 0)
        if op == "floor4":
            return out(f"floor({a.code} * 4.0f)", 4 * b + 1, 0.0, 0)
        if op == "cast":
            to = self.pick(["f32", "bf16", "f16"] if b < 1000 else ["f32", "bf16"])
            return out(f"{a.code}.to({to})", b, 1.0, 1, a.exact and to == "f32", to)
        return out(f"tanh({a.code})", 1.0, 1.0)

    def binary(self, a, b):
        op = self.pick(["+", "-", "*", "max", "min", "div", "where", "clamp"])
        if a.dtype == "bool" or b.dtype == "bool":
            if a.dtype == "bool" and b.dtype == "bool":
                op = self.pick(["&", "|", "^"])
                return E(f"({a.code} {op} {b.code})", "bool", 1)
            # A boolean meets a number: where() picks.
            c, v = (a, b) if a.dtype == "bool" else (b, a)
            other = self.leaf_number(v.dtype)
            t = promote(v.dtype, other.dtype)
            bound = max(v.bound, other.bound)
            return E(f"where({c.code}, {v.code}, {other.code})", t, bound, False,
                     max(v.err, other.err) + rounding(t) * bound)
        t = promote(a.dtype, b.dtype)
        if op == "*" and a.bound * b.bound > 1e4:
            op = "+"
        if t in INT and op in ("div", "clamp"):
            op = "+"
        if op in "+-*":
            if op == "*":
                bound, err = a.bound * b.bound, a.err * b.bound + b.err * a.bound
            else:
                bound, err = a.bound + b.bound, a.err + b.err
            if t in INT and bound > 1e6:
                return a
            return E(f"({a.code} {op} {b.code})", t, bound, False, err + rounding(t) * bound)
        if op in ("max", "min"):
            fn = "maximum" if op == "max" else "minimum"
            bound = max(a.bound, b.bound)
            return E(f"{fn}({a.code}, {b.code})", t, bound, False,
                     max(a.err, b.err) + rounding(t) * bound)
        if op == "div":
            # 1.0f + abs(b) keeps b's dtype, or is f32 for an integer b.
            t = promote(a.dtype, b.dtype if b.is_float() else "f32")
            return E(f"({a.code} / (1.0f + abs({b.code})))", t, a.bound, False,
                     a.err + a.bound * b.err + 2 * rounding(t) * a.bound)
        if op == "where":
            c = self.condition()
            bound = max(a.bound, b.bound)
            return E(f"where({c}, {a.code}, {b.code})", t, bound, False,
                     max(a.err, b.err) + rounding(t) * bound)
        if not a.is_float():
            return a
        lo = self.r.choice([-1.0, -0.5, 0.0])
        hi = self.r.choice([0.25, 0.5, 1.0])
        return E(f"clamp({a.code}, {fmt(lo)}, {fmt(hi)})", a.dtype, max(abs(lo), hi), False,
                 a.err + rounding(a.dtype))

    def with_scalar(self, a):
        """a op a scalar parameter or a literal."""
        if a.dtype == "bool":
            return a
        op = self.pick(["*", "+", "-"])
        if self.scalars_f and (a.is_float() or self.chance(0.3)):
            s, sb = self.r.choice(self.scalars_f)
            t = promote_scalar(a.dtype, "float")
        elif self.scalars_i:
            s, sb = self.r.choice(self.scalars_i)
            t = a.dtype
            if a.bound * sb >= 1e5:
                op = "+"
        else:
            c = self.r.choice([0.5, 2.0, 1.5, -0.75, 3.0])
            s, sb, op = f"{fmt(c)}f", abs(c), "*"
            t = promote_scalar(a.dtype, "float")
        bound = a.bound * sb if op == "*" else a.bound + sb
        err = a.err * sb if op == "*" else a.err
        return E(f"({a.code} {op} {s})", t, bound, False, err + rounding(t) * bound)

    def condition(self):
        """A boolean from exact values only (a comparison of a loaded input
        with a constant, or a loaded boolean), so that rounding cannot flip it."""
        exact = [l for l in self.leaves if l.exact and l.dtype != "bool"]
        bools = [l for l in self.leaves if l.dtype == "bool"]
        if bools and (not exact or self.chance(0.3)):
            return self.r.choice(bools).code
        l = self.r.choice(exact)
        op = self.pick([">", "<", ">=", "<=", "!="])
        c = self.r.choice([0, 1, -1, 3]) if l.dtype in INT else self.r.choice([0.0, 0.25, -0.5])
        return f"({l.code} {op} {c if l.dtype in INT else fmt(c) + 'f'})"

    def leaf_number(self, prefer):
        nums = [l for l in self.leaves if l.dtype != "bool"]
        same = [l for l in nums if category(l.dtype) == category(prefer)]
        return self.r.choice(same or nums)

    def expr(self, depth):
        if depth <= 0 or self.chance(0.2):
            l = self.r.choice(self.leaves)
            return E(l.code, l.dtype, l.bound, l.exact, l.err)
        k = self.pick(["un", "bin", "bin", "scalar"])
        if k == "un":
            return self.unary(self.expr(depth - 1))
        if k == "scalar":
            return self.with_scalar(self.expr(depth - 1))
        return self.binary(self.expr(depth - 1), self.expr(depth - 1))

    def float_expr(self, depth):
        e = self.expr(depth)
        if e.dtype == "bool":
            e = E(f"{e.code}.to(f32)", "f32", 1)
        elif e.dtype in INT:
            e = E(f"{e.code}.to(f32)", "f32", e.bound)
        return e

    # -- common pieces ------------------------------------------------------

    def input_dtype(self, allow_int=True, allow_bool=False):
        xs = ["f32", "bf16", "f16"] + (["i32", "i64"] if allow_int else []) + \
             (["bool"] if allow_bool else [])
        w = [4, 3, 2] + ([1, 1] if allow_int else []) + ([1] if allow_bool else [])
        return self.pick(xs, w)

    def add_input(self, k, name, dtype, dims, code):
        if dtype in INT:
            k.tensor(name, dtype, dims, -20, 20)
            bound = 20
        elif dtype == "bool":
            k.tensor(name, dtype, dims, 0, 1)
            bound = 1
        else:
            lo, hi = self.pick([(-1.0, 1.0), (-2.0, 2.0), (0.0, 1.0), (-4.0, 4.0)])
            k.tensor(name, dtype, dims, lo, hi)
            bound = max(abs(lo), abs(hi))
        self.leaves.append(E(code, dtype, bound, True))

    def add_scalars(self, k):
        self.scalars_f, self.scalars_i = [], []
        for _ in range(self.pick([0, 1, 2], [2, 3, 1])):
            name = f"s{len(k.params)}"
            if self.chance(0.5):
                ct = self.pick(["f64", "f32"])
                k.scalar(name, ct, -2.0, 2.0)
                self.scalars_f.append((name, 2.0))
            else:
                ct = self.pick(["i64", "i32"])
                k.scalar(name, ct, -5, 6)
                self.scalars_i.append((name, 5))

    def out_dtype(self, e):
        if e.dtype == "bool":
            return self.pick(["bool", "i32", "f32"])
        if e.dtype in INT:
            return self.pick(["i32", "i64", "f32"] if e.bound < 1e5 else ["i64"])
        if e.bound > 6e4:
            return self.pick(["f32", "bf16"])
        return self.pick(["f32", "bf16", "f16", e.dtype])

    def store_tolerance(self, k, out, e):
        k.tolerance(out, e.bound, e.err)

    # -- families -----------------------------------------------------------
    #
    # Each family fills in a Kernel: its dimensions, parameters, body and
    # outputs, and widens its tolerance for each output.

    def fam_elementwise(self, k):
        """A 1-, 2- or 3-D elementwise chain over inputs of mixed dtypes, with
        broadcast operands (a row vector, a column vector, a keepdim-style
        [M, 1] tensor) and scalar parameters; one or two outputs."""
        rank = self.pick([1, 2, 2, 3])
        names = ["M", "N", "P"][:rank]
        hi = {1: 5000, 2: 300, 3: 40}[rank]
        ds = [k.dim(n, 1, hi) for n in names]
        ts = ["tm", "tn", "tp"][:rank]
        idx = ", ".join(ts)
        for i in range(self.pick([1, 2, 3], [2, 3, 2])):
            self.add_input(k, f"x{i}", self.input_dtype(allow_bool=i > 0), ds, f"x{i}[{idx}]")
        if rank >= 2 and self.chance(0.6):
            self.add_input(k, "row", self.input_dtype(), [ds[-1]], f"row[{ts[-1]}]")
        if rank >= 2 and self.chance(0.4):
            if rank == 3:
                code = f"col[{ts[0]}].unsqueeze(1).unsqueeze(2)"
            else:
                code = self.pick([f"col[{ts[0]}].unsqueeze(1)", f"col[{ts[0]}, newaxis]"])
            self.add_input(k, "col", self.input_dtype(), [ds[0]], code)
        if rank == 2 and self.chance(0.3):
            self.add_input(k, "keep", self.input_dtype(allow_int=False), [ds[0], k.dim("ONE", 1, 1)],
                           f"keep[{ts[0]}, all]")
        self.add_scalars(k)
        shape = "{" + ", ".join(f"x0.size({i})" for i in range(rank)) + "}"
        loop = ", ".join(f"x0.size({i})" for i in range(rank))
        bind = ts[0] if rank == 1 else "[" + ", ".join(ts) + "]"
        outs = []
        transpose = rank == 2 and self.chance(0.15)
        for j in range(self.pick([1, 2], [3, 1])):
            e = self.expr(self.pick([2, 3, 4]))
            if transpose and "x0[" not in e.code:
                # Only a full-shape value can be transposed into the output.
                e = self.binary(self.leaves[0], e)
                if "x0[" not in e.code:
                    e = self.leaves[0]
            od = self.out_dtype(e)
            outs.append((f"out{j}", od, e))
        if transpose:
            shape, store_idx = "{x0.size(1), x0.size(0)}", "tn, tm"
        else:
            store_idx = idx
        for name, od, _ in outs:
            k.body.append(f"auto {name} = empty({shape}, {cxx_dtype(od)});")
        k.body.append(f"for (auto {bind} : tile({loop})) {{")
        for name, od, e in outs:
            code = f"({e.code}).transpose(0, 1)" if transpose else e.code
            k.body.append(f"  {name}[{store_idx}] = {code};")
            if od in FLOAT and e.is_float() and self.chance(0.2):
                # A compound assignment loads the output back.
                e2 = self.float_expr(2)
                op = self.pick(["+=", "-=", "*="])
                code2 = f"({e2.code}).transpose(0, 1)" if transpose else e2.code
                grown = e.bound * e2.bound if op == "*=" else e.bound + e2.bound
                # Transposed, only a full-shape value broadcasts right; f16
                # must not overflow.
                if (not transpose or ("x0[" in e2.code and "store-then-load" not in self.avoid)) \
                        and (od != "f16" or grown < 6e4):
                    k.body.append(f"  {name}[{store_idx}] {op} {code2};")
                    if op == "*=":
                        e = E("", od, e.bound * e2.bound, False,
                              e.err * e2.bound + e2.err * e.bound + rounding(od) * e.bound * e2.bound)
                    else:
                        e = E("", od, e.bound + e2.bound, False,
                              e.err + e2.err + rounding(od) * (e.bound + e2.bound))
            self.store_tolerance(k, od, e)
        k.body.append("}")
        k.ret = [n for n, _, _ in outs]
        k.max_elems = 1 << 17

    def fam_row_reduction(self, k):
        """A whole-dimension access (x[tn, all], x[all, tn] or x[tb, all, tn])
        reduced by sum, mean, amax, amin, prod, argmax or argmin, the result
        stored directly or broadcast back with keepdim into a whole-row store
        (and the softmax and normalization forms)."""
        form = self.pick(["row", "row", "col", "mid"])
        red = self.pick(["sum", "mean", "amax", "amin", "prod", "argmax", "argmin", "softmax",
                         "norm"], [4, 3, 3, 2, 1, 2, 2, 2, 2])
        short = red == "prod"
        rlen = (1, 8) if short else (1, self.pick([300, 1000, 3000]))
        if form == "row":
            n, m = k.dim("N", 1, 500), k.dim("M", *rlen)
            dims, loop, sub, rdim, bind = [n, m], "x.size(0)", "x[tn, all]", 1, "tn"
            out_idx, whole_idx, red_shape = "tn", "tn, all", "{x.size(0)}"
        elif form == "col":
            m, n = k.dim("M", *rlen), k.dim("N", 1, 500)
            dims, loop, sub, rdim, bind = [m, n], "x.size(1)", "x[all, tn]", 0, "tn"
            out_idx, whole_idx, red_shape = "tn", "all, tn", "{x.size(1)}"
        else:
            b, m, n = k.dim("B", 1, 16), k.dim("M", rlen[0], min(rlen[1], 300)), k.dim("N", 1, 64)
            dims, loop, sub, rdim = [b, m, n], "x.size(0), x.size(2)", "x[tb, all, tn]", 1
            bind, out_idx, whole_idx = "[tb, tn]", "tb, tn", "tb, all, tn"
            red_shape = "{x.size(0), x.size(2)}"
        rows = k.dims[dims[rdim]][2]
        if self.chance(0.3):
            rdim -= len(dims)  # the same dimension, counted from the end
        full_shape = "{" + ", ".join(f"x.size({i})" for i in range(len(dims))) + "}"
        k.max_elems = 1 << 18
        xt = self.input_dtype(allow_int=red in ("sum", "amax", "amin", "argmax", "argmin"))
        if xt in INT:
            lo, hi = -20, 20
        elif short:
            lo, hi = 0.5, 1.5
        else:
            lo, hi = self.pick([(-1.0, 1.0), (-2.0, 2.0), (0.0, 1.0)])
        k.tensor("x", xt, dims, lo, hi)
        weight = None
        if form == "row" and red not in ("argmax", "argmin") and self.chance(0.4):
            weight = self.input_dtype(allow_int=False)
            k.tensor("w", weight, [dims[1]], -1.0, 1.0)
        self.add_scalars(k)
        cast = xt in FLOAT and self.chance(0.5)
        v = E(f"{sub}.to(f32)" if cast else sub, "f32" if cast else xt,
              max(abs(lo), abs(hi)), True)
        body = [f"auto v = {v.code};"]
        v = E("v", v.dtype, v.bound, True)
        # An elementwise step before the reduction (not before argmax or
        # argmin, which need exact values, nor prod, which needs tame ones).
        if red not in ("argmax", "argmin", "prod") and v.is_float() and self.chance(0.5):
            self.leaves = [v]
            if weight:
                self.leaves.append(E("w[all]", weight, 1.0, True))
            e = self.expr(2)
            if not re.search(r"\bv\b", e.code):
                # The step must read the row, or the reduction sees a lower rank.
                e = self.binary(self.leaves[0], e)
            if e.is_float() and e.bound < 100 and re.search(r"\bv\b", e.code):
                body.append(f"auto u = {e.code};")
                v = E("u", e.dtype, e.bound, False, e.err)
        keep = self.chance(0.4)
        outs = []
        sum_rtol = 2e-4  # f32 sums in another order
        whole_dtype = xt if "empty-all-store" in self.avoid else None
        if red in ("argmax", "argmin"):
            body.append(f"out0[{out_idx}] = {red}({v.code}, {rdim});")
            outs.append(("out0", "i64", red_shape))
        elif red == "softmax":
            body.append(f"auto e = exp({v.code} - amax({v.code}, {rdim}, true));")
            body.append(f"out0[{whole_idx}] = e / sum(e, {rdim}, true);")
            od = whole_dtype or self.pick(["f32", xt])
            outs.append(("out0", od, full_shape))
            k.tolerance(od, 1.0, 2 * v.err + 4 * rounding(v.dtype), sum_rtol)
        elif red == "norm":
            body.append(f"auto mu = mean({v.code}, {rdim}, true);")
            body.append(f"auto d = {v.code} - mu;")
            body.append(f"auto rs = rsqrt(mean(d * d, {rdim}, true) + 0.5f);")
            tail = " * w[all]" if weight else ""
            body.append(f"out0[{whole_idx}] = d * rs{tail};")
            od = whole_dtype or self.pick(["f32", "bf16"])
            outs.append(("out0", od, full_shape))
            k.tolerance(od, 3 * v.bound, 6 * v.err + 12 * rounding(v.dtype) * v.bound, sum_rtol)
        else:
            if red == "sum":
                rbound, rerr = 2 * v.bound * math.sqrt(rows), 3 * v.err * math.sqrt(rows)
            elif red == "prod":
                rbound, rerr = 1.5 ** 8, 0.0
            else:
                rbound, rerr = v.bound, v.err
            # Reductions of 16-bit values round their result to 16 bits.
            rerr += rounding(v.dtype) * rbound
            ot = "i64" if red == "sum" and v.dtype in INT else v.dtype
            if keep and self.chance(0.6):
                # Broadcast back against the row.
                op = self.pick(["-", "*", "+"])
                body.append(f"auto r = {red}({v.code}, {rdim}, true);")
                body.append(f"out0[{whole_idx}] = {v.code} {op} r;")
                od = whole_dtype or ("f32" if ot in FLOAT else ot)
                outs.append(("out0", od, full_shape))
                if op == "*":
                    b, e = rbound * v.bound, rerr * v.bound + v.err * rbound
                else:
                    b, e = rbound + v.bound, rerr + v.err
                k.tolerance(od, b, e + rounding(promote(v.dtype, ot)) * b, sum_rtol)
            else:
                kd = ", true" if keep else ""
                # A keepdim result stored through a squeezing subscript would
                # need a reshape; store the plain reduction then.
                body.append(f"out0[{out_idx}] = {red}({v.code}, {rdim});")
                od = self.pick(["f32", ot]) if ot in FLOAT else ot
                outs.append(("out0", od, red_shape))
                k.tolerance(od, rbound, rerr, sum_rtol)
        for name, od, shape in outs:
            # empty_like(x, dtype) needs a rank the frontend can see; without
            # a dtype it does not.
            if shape == full_shape and od == xt and (whole_dtype or self.chance(0.7)):
                k.body.append(f"auto {name} = empty_like(x);")
            else:
                k.body.append(f"auto {name} = empty({shape}, {cxx_dtype(od)});")
        k.body.append(f"for (auto {bind} : tile({loop})) {{")
        k.body += ["  " + b for b in body]
        k.body.append("}")
        k.ret = [n for n, _, _ in outs]

    def fam_tile_reduction(self, k):
        """A reduction by a nested tile loop: an accumulator over tiles of the
        reduced dimension (sum, max or min), in 2-D or 3-D."""
        form = self.pick(["loop_sum", "loop_max", "loop3"])
        n, m = k.dim("N", 1, 400), k.dim("M", 1, 2000)
        xt = self.input_dtype(allow_int=form != "loop3")
        lo, hi = (-1.0, 1.0) if xt in FLOAT else (-20, 20)
        dims = [n, m] if form != "loop3" else [k.dim("B", 1, 8), n, m]
        k.tensor("x", xt, dims, lo, hi)
        k.max_elems = 1 << 18
        self.add_scalars(k)
        scale = f" * {self.scalars_f[0][0]}" if self.scalars_f else ""
        bound = hi * (2 if scale else 1)
        if form == "loop_sum":
            k.body += ["auto out = empty({x.size(0)}, f32);",
                       "for (auto tn : tile(x.size(0))) {",
                       "  auto acc = zeros({tn}, f32);",
                       "  for (auto tm : tile(x.size(1)))",
                       f"    acc = acc + sum(x[tn, tm].to(f32){scale}, 1);",
                       "  out[tn] = acc;", "}"]
            k.tolerance("f32", 2 * bound * math.sqrt(2000), 0.0, 2e-4)
        elif form == "loop_max":
            red, fn, init = self.pick([("amax", "maximum", "-INFINITY"),
                                       ("amax", "maximum", "-1e30f"),
                                       ("amin", "minimum", "INFINITY")])
            k.body += ["auto out = empty({x.size(0)}, f32);",
                       "for (auto tn : tile(x.size(0))) {",
                       f"  auto acc = full({{tn}}, {init}, f32);",
                       "  for (auto tm : tile(x.size(1)))",
                       f"    acc = {fn}(acc, {red}(x[tn, tm].to(f32), 1));",
                       "  out[tn] = acc;", "}"]
            k.tolerance("f32", bound, 0.0)
        else:
            k.body += ["auto out = empty({x.size(0), x.size(1)}, f32);",
                       "for (auto [tb, tn] : tile(x.size(0), x.size(1))) {",
                       "  auto acc = zeros({tb, tn}, f32);",
                       "  for (auto tm : tile(x.size(2)))",
                       f"    acc = acc + sum(x[tb, tn, tm].to(f32){scale}, 2);",
                       "  out[tb, tn] = acc;", "}"]
            k.tolerance("f32", 2 * bound * math.sqrt(2000), 0.0, 2e-4)
        k.ret = ["out"]

    def fam_gather(self, k):
        """Gathers through an index tensor: w[ids[tn], td] with an epilogue,
        whole rows w[ids[tn], all] reduced or normalized, and the
        cross-entropy form logits[tn.index(), target[tn]]."""
        form = self.pick(["tile", "rows", "pick"])
        it = self.pick(INT)
        wt = self.input_dtype(allow_int=False)
        if form == "tile":
            n, v, d = k.dim("N", 1, 3000), k.dim("V", 1, 500), k.dim("D", 1, 200)
            k.index("ids", it, [n], v)
            self.add_input(k, "w", wt, [v, d], "w[ids[tn], td]")
            if self.chance(0.5):
                self.add_input(k, "b", self.input_dtype(), [d], "b[td]")
            self.add_scalars(k)
            e = self.expr(self.pick([1, 2, 3]))
            od = self.out_dtype(e)
            self.store_tolerance(k, od, e)
            k.body += [f"auto out = empty({{ids.size(0), w.size(1)}}, {cxx_dtype(od)});",
                       "for (auto [tn, td] : tile(ids.size(0), w.size(1)))",
                       f"  out[tn, td] = {e.code};"]
        elif form == "rows":
            n, v, d = k.dim("N", 1, 2000), k.dim("V", 1, 500), k.dim("D", 1, 600)
            k.index("ids", it, [n], v)
            k.tensor("w", wt, [v, d], -1.0, 1.0)
            red = self.pick(["sum", "amax"] + ([] if "empty-all-store" in self.avoid else ["norm"]))
            if red == "norm":
                k.body += ["auto out = empty({ids.size(0), w.size(1)}, f32);",
                           "for (auto tn : tile(ids.size(0))) {",
                           "  auto rows = w[ids[tn], all].to(f32);",
                           "  out[tn, all] = rows * rsqrt(mean(rows * rows, 1, true) + 0.25f);",
                           "}"]
                k.tolerance("f32", 2.0, 0.0, 2e-4)
            else:
                k.body += ["auto out = empty({ids.size(0)}, f32);",
                           "for (auto tn : tile(ids.size(0)))",
                           f"  out[tn] = {red}(w[ids[tn], all].to(f32), 1);"]
                k.tolerance("f32", 2 * math.sqrt(600), 0.0, 2e-4)
        else:
            n, c = k.dim("N", 1, 1000), k.dim("C", 1, 1000)
            k.tensor("logits", wt, [n, c], -2.0, 2.0)
            k.index("target", it, [n], c)
            k.body += ["auto out = empty({logits.size(0)}, f32);",
                       "for (auto tn : tile(logits.size(0))) {",
                       "  auto row = logits[tn, all].to(f32);",
                       "  auto m = amax(row, 1);",
                       "  auto lse = m + log(sum(exp(row - m.unsqueeze(1)), 1));",
                       "  out[tn] = lse - logits[tn.index(), target[tn]].to(f32);",
                       "}"]
            k.tolerance("f32", 10.0, 0.0, 2e-4)
        k.max_elems = 1 << 18
        k.ret = ["out"]

    def fam_atomic(self, k):
        """Atomics into outputs made with zeros: a scatter-add by index
        (embedding backward), a column sum of 2-D tiles, a histogram of
        integer counts, an atomic_max."""
        form = self.pick(["scatter", "colsum", "hist", "max", "min"])
        if form == "scatter":
            n, v, d = k.dim("N", 1, 2000), k.dim("V", 1, 300), k.dim("D", 1, 128)
            k.index("ids", self.pick(INT), [n], v)
            xt = self.pick(["f32", "bf16", "i32"])
            k.tensor("x", xt, [n, d], -1.0 if xt != "i32" else -20, 1.0 if xt != "i32" else 20)
            self.add_scalars(k)
            s = f" * {self.scalars_f[0][0]}" if self.scalars_f and xt != "i32" else ""
            ot = "i32" if xt == "i32" else "f32"
            k.body += [f"auto out = zeros({{{self.size_of(k, 'V')}, x.size(1)}}, {ot});",
                       "for (auto [tn, td] : tile(ids.size(0), x.size(1)))",
                       f"  atomic_add(out, {{ids[tn], td}}, x[tn, td]{s});"]
            k.tolerance(ot, 4 * math.sqrt(2000), 0.0, 1e-4)
        elif form == "colsum":
            m, n = k.dim("M", 1, 2000), k.dim("N", 1, 300)
            xt = self.input_dtype(allow_int=False)
            k.tensor("x", xt, [m, n], -1.0, 1.0)
            k.body += ["auto out = zeros({x.size(1)}, f32);",
                       "for (auto [tm, tn] : tile(x.size(0), x.size(1)))",
                       "  atomic_add(out, {tn}, sum(x[tm, tn].to(f32), 0));"]
            k.tolerance("f32", 2 * math.sqrt(2000), 0.0, 1e-4)
        elif form == "hist":
            n, v = k.dim("N", 1, 5000), k.dim("V", 1, 100)
            k.index("ids", self.pick(INT), [n], v)
            one = self.pick(["1", "ones({t}, i32)"])
            k.body += [f"auto out = zeros({{{self.size_of(k, 'V')}}}, i32);",
                       "for (auto t : tile(ids.size(0)))",
                       f"  atomic_add(out, {{ids[t]}}, {one});"]
        else:
            n, v, d = k.dim("N", 1, 2000), k.dim("V", 1, 300), k.dim("D", 1, 64)
            k.index("ids", self.pick(INT), [n], v)
            k.tensor("x", "f32", [n, d], -1.0, 1.0)
            k.body += [f"auto out = zeros({{{self.size_of(k, 'V')}, x.size(1)}}, f32);",
                       "for (auto [tn, td] : tile(ids.size(0), x.size(1)))",
                       "  atomic_max(out, {ids[tn], td}, abs(x[tn, td]));"]
        if form == "min":
            k.body[-1] = "  atomic_min(out, {ids[tn], td}, x[tn, td] - 0.5f);"
        k.max_elems = 1 << 18
        k.ret = ["out"]

    def size_of(self, k, dim):
        """A host expression for the size of problem dimension `dim`: from a
        tensor parameter that has it, else from an int64_t parameter the
        table fills with the size (specialized, so the output's shape is
        static)."""
        di = [d[0] for d in k.dims].index(dim)
        for p in k.params:
            if p["kind"] == "tensor" and di in p["dims"]:
                return f"{p['name']}.size({p['dims'].index(di)})"
        name = dim.lower() + "_size"
        k.params.append(dict(kind="size", name=name, dtype="i64", dims=[], lo=0, hi=0,
                             index_dim=di))
        return f"specialize({name})"

    def fam_loops(self, k):
        """Loop forms: grid rows, tile(range(b, e)) with a gather stencil, a
        plain for over a column index, a counted loop on a scalar, a bool
        parameter's branch, and two top-level loops in one kernel."""
        forms = ["grid", "range", "range_scalar", "for_col", "counted", "branch", "two_loops",
                 "masked", "tuple"]
        if "range-end-vector" in self.avoid:
            forms.remove("range")
        form = self.pick(forms)
        k.max_elems = 1 << 18
        k.ret = ["out"]
        if form == "grid":
            n, m = k.dim("N", 1, 300), k.dim("M", 1, 1000)
            xt = self.input_dtype(allow_int=False)
            k.tensor("x", xt, [n, m], -1.0, 1.0)
            red = self.pick(["row", "sum", "amax"])
            if red == "row":
                self.leaves = [E("x[i, all]", xt, 1.0, True)]
                e = self.float_expr(2)
                if "empty-all-store" in self.avoid:
                    od, alloc = xt, "empty_like(x)"
                else:
                    od = self.pick(["f32", xt])
                    alloc = f"empty({{x.size(0), x.size(1)}}, {od})"
                k.body += [f"auto out = {alloc};",
                           "for (auto i : grid(x.size(0)))",
                           f"  out[i, all] = {e.code};"]
                self.store_tolerance(k, od, e)
            else:
                k.body += ["auto out = empty({x.size(0)}, f32);",
                           "for (auto i : grid(x.size(0)))",
                           f"  out[i] = {red}(x[i, all].to(f32), 0);"]
                k.tolerance("f32", 2 * math.sqrt(1000), 0.0, 2e-4)
        elif form == "range":
            a, b = self.pick([1, 2]), self.pick([1, 2])
            n = k.dim("N", a + b + 1, 5000)
            xt = self.input_dtype(allow_int=False)
            k.tensor("x", xt, [n], -1.0, 1.0)
            k.body += ["auto n = x.size(0);",
                       "auto out = zeros({n}, f32);",
                       f"for (auto t : tile(range({a}, n - {b}))) {{",
                       "  auto c = x[t].to(f32);",
                       f"  auto l = x[t.index() - {a}].to(f32);",
                       f"  auto r = x[t.index() + {b}].to(f32);",
                       "  out[t] = 0.25f * l + 0.5f * c + 0.25f * r;",
                       "}"]
            k.tolerance("f32", 1.0)
        elif form == "range_scalar":
            # A loop that starts at a scalar parameter (at the end: no tiles).
            n = k.dim("N", 1, 5000)
            xt = self.input_dtype()
            k.tensor("x", xt, [n], -1.0 if xt in FLOAT else -20, 1.0 if xt in FLOAT else 20)
            k.below("start", n)
            k.body += ["auto out = zeros({x.size(0)}, f32);",
                       # A top-level loop's bounds must be static: specialized.
                       "for (auto t : tile(range(specialize(start), x.size(0))))",
                       "  out[t] = x[t].to(f32) * 0.5f - 1.0f;"]
            k.tolerance("f32", 11.0)
        elif form == "masked":
            # Lanes at or past `limit` neither load nor store: the output keeps
            # its zeros there.
            n = k.dim("N", 1, 5000)
            xt = self.input_dtype()
            k.tensor("x", xt, [n], -1.0 if xt in FLOAT else -20, 1.0 if xt in FLOAT else 20)
            k.below("limit", n)
            k.body += ["auto out = zeros({x.size(0)}, f32);",
                       "for (auto t : tile(x.size(0))) {",
                       "  auto mask = t.index() < limit;",
                       "  auto v = load(x, {t}, mask).to(f32);",
                       "  store(out, {t}, v * 2.0f + 1.0f, mask);",
                       "}"]
            k.tolerance("f32", 41.0)
        elif form == "tuple":
            # An N-D tile used as one index, and the indices as values.
            n, m = k.dim("N", 1, 300), k.dim("M", 1, 300)
            xt = self.input_dtype(allow_int=False)
            k.tensor("x", xt, [n, m], -1.0, 1.0)
            k.body += ["auto out = empty({x.size(0), x.size(1)}, f32);",
                       "for (auto t : tile(x.size(0), x.size(1))) {",
                       "  auto i = t[0].index().unsqueeze(1) * x.size(1) + t[1].index();",
                       "  out[t] = x[t].to(f32) + (i % 7).to(f32) * 0.25f;",
                       "}"]
            k.tolerance("f32", 3.0)
        elif form == "for_col":
            n, c = k.dim("N", 1, 3000), k.dim("C", 1, 6)
            xt = self.input_dtype(allow_int=False)
            k.tensor("x", xt, [n, c], -1.0, 1.0)
            k.body += ["auto out = empty({x.size(0)}, f32);",
                       "for (auto tn : tile(x.size(0))) {",
                       "  auto acc = zeros({tn}, f32);",
                       "  for (int64_t j = 0; j < x.size(1); j++)",
                       "    acc = acc * 0.5f + x[tn, j].to(f32);",
                       "  out[tn] = acc;", "}"]
            k.tolerance("f32", 2.0)
        elif form == "counted":
            n = k.dim("N", 1, 5000)
            xt = self.input_dtype(allow_int=False)
            k.tensor("x", xt, [n], -1.0, 1.0)
            k.scalar("steps", "i64", 0, 6)
            k.scalar("s", "f64", -1.0, 1.0)
            k.body += ["auto out = empty({x.size(0)}, f32);",
                       "for (auto t : tile(x.size(0))) {",
                       "  auto v = x[t].to(f32);",
                       "  for (int64_t i = 0; i < steps; i++)",
                       "    v = v * 0.5f + s;",
                       "  out[t] = v;", "}"]
            k.tolerance("f32", 3.0)
        elif form == "branch":
            n, m = k.dim("N", 1, 300), k.dim("M", 1, 300)
            xt = self.input_dtype(allow_int=False)
            k.tensor("x", xt, [n, m], -1.0, 1.0)
            k.scalar("flag", "bool", 0, 1)
            od = self.pick(["f32", xt])
            act = self.pick(["relu", "sigmoid", "tanh", "abs"])
            k.body += [f"auto out = empty({{x.size(0), x.size(1)}}, {od});",
                       "for (auto [tm, tn] : tile(x.size(0), x.size(1))) {",
                       "  auto v = x[tm, tn].to(f32);",
                       "  if (flag)",
                       f"    v = {act}(v);",
                       "  out[tm, tn] = v * 2.0f;", "}"]
            k.tolerance(od, 2.0)
        else:
            n, m = k.dim("N", 1, 3000), k.dim("M", 1, 3000)
            at, bt = self.input_dtype(), self.input_dtype()
            k.tensor("a", at, [n], -1.0 if at in FLOAT else -20, 1.0 if at in FLOAT else 20)
            k.tensor("b", bt, [m], -1.0 if bt in FLOAT else -20, 1.0 if bt in FLOAT else 20)
            k.body += ["auto oa = empty({a.size(0)}, f32);",
                       "auto ob = empty({b.size(0)}, f32);",
                       "for (auto t : tile(a.size(0)))",
                       "  oa[t] = a[t].to(f32) * 3.0f;",
                       "for (auto t : tile(b.size(0)))",
                       "  ob[t] = b[t].to(f32) - 1.0f;"]
            k.tolerance("f32", 60.0)
            k.ret = ["oa", "ob"]

    def fam_product(self, k):
        """Matrix products: an addmm K loop (16-bit operands take the
        tensor-core paths) with bias, residual, scale, activation and cast
        epilogues, a transposed right operand, matmul() per K tile, dot over
        a whole K, and batched baddbmm/bmm loops."""
        form = self.pick(["addmm", "addmm", "addmm_t", "dot", "bmm", "matmul"])
        dt = self.pick(["bf16", "f16", "f32"], [4, 3, 1])
        # Rows a multiple of 8 elements: the 16-byte and TMA copies.
        mult = 8 if self.chance(0.4) else 1
        khi = 128 if form == "dot" else 320
        b = k.dim("B", 1, 6) if form == "bmm" else None
        m = k.dim("M", 1, 300)
        n = k.dim("N", mult, 300, mult)
        kk = k.dim("K", mult, khi, mult)
        if form == "bmm":
            k.tensor("x", dt, [b, m, kk], -1.0, 1.0)
            k.tensor("y", dt, [b, kk, n], -1.0, 1.0)
        elif form == "addmm_t":
            k.tensor("x", dt, [m, kk], -1.0, 1.0)
            k.tensor("y", dt, [n, kk], -1.0, 1.0)
        else:
            k.tensor("x", dt, [m, kk], -1.0, 1.0)
            k.tensor("y", dt, [kk, n], -1.0, 1.0)
        epi = []
        if self.chance(0.5):
            k.tensor("bias", self.pick([dt, "f32"]), [n], -1.0, 1.0)
            epi.append("bias")
        if self.chance(0.3) and form != "bmm":
            k.tensor("res", self.pick([dt, "f32"]), [m, n], -1.0, 1.0)
            epi.append("res")
        self.add_scalars(k)
        act = self.pick(["", "relu", "gelu", "silu", "sigmoid", "tanh"])
        od = self.pick([dt, "f32"])
        # f32 sums of exact products in another order; a 16-bit product
        # result (matmul() per K tile, bmm() of a whole K) is rounded to 16
        # bits where the two sides may round differently.
        kb = math.sqrt(khi)
        err = 0.0
        if form == "bmm":
            idx, bind = "tb, tm, tn", "[tb, tm, tn]"
            loop = "x.size(0), x.size(1), y.size(2)"
            if self.chance(0.3):
                acc = ["auto acc = bmm(x[tb, tm, all], y[tb, all, tn]).to(f32);"]
                k.dims[kk] = ("K", mult, 128, mult)
                err = 2 * rounding(dt) * kb
            else:
                acc = ["auto acc = zeros({tb, tm, tn}, f32);",
                       "for (auto tk : tile(x.size(2)))",
                       "  acc = baddbmm(acc, x[tb, tm, tk], y[tb, tk, tn]);"]
        else:
            idx, bind = "tm, tn", "[tm, tn]"
            loop = "x.size(0), y.size(" + ("0" if form == "addmm_t" else "1") + ")"
            if form == "addmm":
                acc = ["auto acc = zeros({tm, tn}, f32);",
                       "for (auto tk : tile(x.size(1)))",
                       "  acc = addmm(acc, x[tm, tk], y[tk, tn]);"]
            elif form == "addmm_t":
                acc = ["auto acc = zeros({tm, tn}, f32);",
                       "for (auto tk : tile(x.size(1)))",
                       "  acc = addmm(acc, x[tm, tk], y[tn, tk].transpose(0, 1));"]
            elif form == "matmul":
                acc = ["auto acc = zeros({tm, tn}, f32);",
                       "for (auto tk : tile(x.size(1)))",
                       "  acc = acc + matmul(x[tm, tk], y[tk, tn]).to(f32);"]
                err = 2 * rounding(dt) * kb * math.sqrt(khi)
            else:
                acc = ["auto acc = dot(x[tm, all], y[all, tn]);"]
        e, bound = "acc", kb
        if "bias" in epi:
            e, bound = f"({e} + bias[tn])", bound + 1
        if "res" in epi:
            e, bound = f"({e} + res[tm, tn])", bound + 1
        if self.scalars_f:
            e, bound, err = f"({e} * {self.scalars_f[0][0]})", bound * 2, err * 2
        if act:
            e = f"{act}({e})"
        k.body.append(f"auto out = empty({{{loop}}}, {od});")
        k.body.append(f"for (auto {bind} : tile({loop})) {{")
        k.body += ["  " + a for a in acc]
        k.body.append(f"  out[{idx}] = {e};")
        k.body.append("}")
        k.tolerance(od, bound, err, 1e-4)
        k.max_elems = 1 << 17
        k.ret = ["out"]

    FAMILIES = [("elementwise", 5), ("row_reduction", 4), ("tile_reduction", 2), ("gather", 2),
                ("atomic", 2), ("loops", 3), ("product", 3)]

    def kernel(self, i):
        fam = self.pick([f for f, _ in self.FAMILIES], [w for _, w in self.FAMILIES])
        k = Kernel(f"dt{i:04d}_{fam}", fam)
        self.scalars_f, self.scalars_i, self.leaves = [], [], []
        getattr(self, "fam_" + fam)(k)
        return k


# Kernel forms that hit known compiler bugs, each with its reduced
# regression kernel in test/difftest/regressions/. --avoid leaves them out
# until the bug is fixed.
AVOIDABLE = {
    "empty-all-store": "an output from empty/zeros({sizes}) stored through an `all` "
                       "subscript (regressions/empty_sizes_whole_row_store.kite.cpp)",
    "range-end-vector": "tile(range(b, e)) with e short of the tensor's end "
                        "(regressions/range_end_vector_store.kite.cpp)",
    "store-then-load": "a compound assignment after a transposed store "
                       "(regressions/store_then_load_transposed.kite.cpp)",
}

PRELUDE = """// Generated by test/difftest/gen_kernels.py (seed {seed}); do not edit.
#include <kite/kite.hpp>
#include <tuple>
using namespace kite;

"""


TABLE = """// Generated by test/difftest/gen_kernels.py (seed {seed}); do not edit.
#include "difftest.h"

#include "{stem}.kite.cpp"

namespace kite_difftest {{
void add_{stem}(std::vector<KernelInfo> &v) {{
  using namespace kite;
  v.insert(v.end(), {{
{rows}  }});
}}
}} // namespace kite_difftest
"""

ALL = """// Generated by test/difftest/gen_kernels.py (seed {seed}); do not edit.
#include "difftest.h"

namespace kite_difftest {{
{decls}
std::vector<KernelInfo> allKernels() {{
  std::vector<KernelInfo> v;
{calls}  return v;
}}
}} // namespace kite_difftest
"""


def write_if_changed(path, text):
    """Rewrites only what changed, so that a rerun does not rebuild."""
    old = open(path).read() if os.path.exists(path) else None
    if old != text:
        with open(path, "w") as fh:
            fh.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kernels", type=int, default=400)
    ap.add_argument("--files", type=int, default=10)
    ap.add_argument("--out", required=True)
    ap.add_argument("--stem", default="gen")
    ap.add_argument("--avoid", default="",
                    help="comma-separated forms to leave out: " + ", ".join(
                        f"{k} ({v})" for k, v in AVOIDABLE.items()))
    args = ap.parse_args()
    avoid = [a for a in args.avoid.split(",") if a]
    for a in avoid:
        if a not in AVOIDABLE:
            ap.error(f"--avoid: unknown form '{a}'")
    os.makedirs(args.out, exist_ok=True)
    g = Gen(args.seed, avoid)
    kernels = [g.kernel(i) for i in range(args.kernels)]
    per = math.ceil(len(kernels) / args.files)
    stems = []
    for f in range(args.files):
        stem = f"{args.stem}{f}"
        stems.append(stem)
        part = kernels[f * per:(f + 1) * per]
        src = PRELUDE.format(seed=args.seed) + "\n".join(k.source() for k in part)
        rows = "".join(k.table(stem) for k in part)
        write_if_changed(os.path.join(args.out, f"{stem}.kite.cpp"), src)
        write_if_changed(os.path.join(args.out, f"{stem}_table.cpp"),
                         TABLE.format(seed=args.seed, stem=stem, rows=rows))
    decls = "".join(f"void add_{s}(std::vector<KernelInfo> &);\n" for s in stems)
    calls = "".join(f"  add_{s}(v);\n" for s in stems)
    write_if_changed(os.path.join(args.out, "gen_all.cpp"),
                     ALL.format(seed=args.seed, decls=decls, calls=calls))


if __name__ == "__main__":
    main()
