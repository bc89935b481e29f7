// `kite inspect --html`: one self-contained page with every section,
// rendered by headless Chromium without script errors.
// RUN: kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[64,1000]' --html %t.html | FileCheck %s
// CHECK: wrote {{.*}}.html
// RUN: FileCheck %s --check-prefix=PAGE < %t.html
// PAGE: <section id="summary">
// PAGE: softmax.kite.cpp
// PAGE: <section id="source">
// PAGE: <section id="stages">
// PAGE: kite-reduction-loops
// PAGE: <section id="cuda">
// PAGE: load_vec&lt;8&gt;
// PAGE: <section id="resources">
// PAGE: registers
// PAGE: <section id="config">
// PAGE: <section id="roofline">
// RUN: %kite_src/test/html/check_report.sh %t.html
