# KiteSanitizers.cmake - sanitizer and fuzzing instrumentation for kite's code.
#
# KITE_SANITIZE is a comma-separated list for -fsanitize= ("address,undefined"
# for ASan + UBSan); empty (the default) instruments nothing. Undefined
# behaviour is made fatal (-fno-sanitize-recover=undefined) so that it fails
# a test instead of printing a line nobody reads.
#
# KITE_FUZZ=ON (clang only) adds libFuzzer's coverage instrumentation
# (-fsanitize=fuzzer-no-link) to every target and links the targets in
# test/fuzz/ with -fsanitize=fuzzer. Without it those targets are ordinary
# executables that replay their corpus (test/fuzz/FuzzMain.cpp).
#
# The flags go on kite's own code only: LLVM, MLIR and Clang are Debian's
# uninstrumented shared libraries, which ASan and UBSan accept (the
# shared-LLVM link mode; KITE_STATIC=ON links the same uninstrumented
# archives). tools/fuzz.sh and docs/testing.md show the builds that use this.

set(KITE_SANITIZE "" CACHE STRING
  "Sanitizers for kite's code, as for -fsanitize= (e.g. address,undefined); empty for none")
option(KITE_FUZZ "Build test/fuzz with libFuzzer (clang; implies coverage instrumentation)" OFF)

set(KITE_SANITIZE_FLAGS)
if(KITE_SANITIZE)
  list(APPEND KITE_SANITIZE_FLAGS -fsanitize=${KITE_SANITIZE} -fno-omit-frame-pointer)
  if(KITE_SANITIZE MATCHES "undefined")
    list(APPEND KITE_SANITIZE_FLAGS -fno-sanitize-recover=undefined)
    # GCC leaves float-to-integer overflow out of `undefined` (clang has it):
    # a double outside int64_t's range cast to int64_t is what the args
    # fuzzer found (test/fuzz/regressions/args).
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      list(APPEND KITE_SANITIZE_FLAGS -fsanitize=float-cast-overflow
                                      -fno-sanitize-recover=float-cast-overflow)
    endif()
  endif()
endif()
if(KITE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "KITE_FUZZ needs clang (libFuzzer); configure with "
      "-DCMAKE_CXX_COMPILER=clang++-19 -DCMAKE_C_COMPILER=clang-19")
  endif()
  list(APPEND KITE_SANITIZE_FLAGS -fsanitize=fuzzer-no-link)
  # Clang 19 cannot compile MLIR 19's headers in C++23 mode against GCC 12's
  # libstdc++ (std::pair's C++23 constructors get instantiated on the
  # incomplete mlir::Attribute), and every target that uses the runtime asks
  # for C++23 (kite_headers). Clang accepts the C++23 that kite uses
  # (multidimensional subscripts) in C++20 mode, so a fuzz build compiles
  # "C++23" as C++20; the default (g++) build is unchanged.
  set(CMAKE_CXX23_STANDARD_COMPILE_OPTION -std=c++20)
  set(CMAKE_CXX23_EXTENSION_COMPILE_OPTION -std=gnu++20)
endif()
if(KITE_SANITIZE_FLAGS)
  message(STATUS "kite: instrumenting with ${KITE_SANITIZE_FLAGS}")
  add_compile_options(${KITE_SANITIZE_FLAGS})
  add_link_options(${KITE_SANITIZE_FLAGS})
endif()
