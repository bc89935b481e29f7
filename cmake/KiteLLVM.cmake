# KiteLLVM.cmake - find LLVM, MLIR and Clang 19 and choose the link mode.
#
# Shared mode (default) links libclang-cpp.so, libMLIR.so and libLLVM.so.
# Static mode (KITE_STATIC=ON) links the static archives; Debian's imported
# static targets name the shared `LLVM` in their interface, so that entry is
# replaced by the static LLVM components. Either way exactly one LLVM is in
# the process (TOOLCHAIN.md, traps 5 and 6).

set(KITE_LLVM_ROOT "/usr/lib/llvm-19" CACHE PATH "LLVM 19 installation prefix")

find_package(LLVM 19.1 REQUIRED CONFIG HINTS "${KITE_LLVM_ROOT}/lib/cmake/llvm")
find_package(MLIR 19.1 REQUIRED CONFIG HINTS "${KITE_LLVM_ROOT}/lib/cmake/mlir")
find_package(Clang REQUIRED CONFIG HINTS "${KITE_LLVM_ROOT}/lib/cmake/clang")
message(STATUS "kite: LLVM ${LLVM_PACKAGE_VERSION} at ${LLVM_INSTALL_PREFIX}")

list(APPEND CMAKE_MODULE_PATH "${MLIR_CMAKE_DIR}" "${LLVM_CMAKE_DIR}")
include(TableGen)
include(AddLLVM)
include(AddMLIR)
# HandleLLVMOptions is deliberately not included: it puts -fno-exceptions and
# LLVM's warning set on every target (TOOLCHAIN.md trap 4).

set(KITE_LLVM_INCLUDE_DIRS ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS} ${CLANG_INCLUDE_DIRS})
set(KITE_LLVM_BIN_DIR "${LLVM_TOOLS_BINARY_DIR}")
execute_process(COMMAND "${KITE_LLVM_ROOT}/bin/clang" -print-resource-dir
  OUTPUT_VARIABLE KITE_CLANG_RESOURCE_DIR OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT KITE_CLANG_RESOURCE_DIR)
  set(KITE_CLANG_RESOURCE_DIR "${KITE_LLVM_ROOT}/lib/clang/19")
endif()

# kite_llvm_libs(<out-var> <kind>): what to link for "mlir" or "clang" use.
if(KITE_STATIC)
  set(LLVM_LINK_LLVM_DYLIB OFF)
  set(_skip LLVM LLVMDebuginfod LLVMTableGen LLVMTableGenBasic LLVMTableGenCommon
      LLVMCFIVerify LLVMDiff LLVMOptDriver LLVMExtensions LLVMLTO LLVMLineEditor
      LibcTableGenUtil LTO Remarks Polly)
  set(_static_llvm)
  foreach(lib IN LISTS LLVM_AVAILABLE_LIBS)
    if(lib IN_LIST _skip OR lib MATCHES "^LLVM(Exegesis|BOLT)" OR NOT TARGET ${lib})
      continue()
    endif()
    list(APPEND _static_llvm ${lib})
  endforeach()
  find_library(KITE_ZSTD_LIB NAMES libzstd.a zstd REQUIRED)
  list(APPEND _static_llvm ${KITE_ZSTD_LIB})
  # Replace the shared LLVM in every imported static target's interface.
  get_property(_imported DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" PROPERTY IMPORTED_TARGETS)
  foreach(t IN LISTS MLIR_EXPORTED_TARGETS CLANG_EXPORTED_TARGETS LLVM_AVAILABLE_LIBS)
    if(NOT TARGET ${t})
      continue()
    endif()
    get_target_property(_type ${t} TYPE)
    if(NOT _type STREQUAL "STATIC_LIBRARY")
      continue()
    endif()
    get_target_property(_libs ${t} INTERFACE_LINK_LIBRARIES)
    if(_libs AND "LLVM" IN_LIST _libs)
      list(REMOVE_ITEM _libs LLVM)
      if(t MATCHES "^LLVM")
        # A component already lists the components it needs.
      else()
        list(APPEND _libs LLVMSupport)
      endif()
      set_target_properties(${t} PROPERTIES INTERFACE_LINK_LIBRARIES "${_libs}")
    endif()
  endforeach()
  add_library(kite_llvm_static INTERFACE)
  target_link_libraries(kite_llvm_static INTERFACE ${_static_llvm} z)
  set(KITE_MLIR_LINK kite_llvm_static)
  set(KITE_CLANG_LINK kite_llvm_static)
else()
  set(KITE_MLIR_LINK MLIR LLVM)
  set(KITE_CLANG_LINK clang-cpp MLIR LLVM)
endif()

# kite_link_mlir(<target> <PUBLIC|PRIVATE> components...): link MLIR components
# statically, or libMLIR.so in shared mode.
function(kite_link_mlir target scope)
  target_include_directories(${target} SYSTEM ${scope} ${KITE_LLVM_INCLUDE_DIRS})
  target_compile_definitions(${target} ${scope} ${LLVM_DEFINITIONS})
  if(KITE_STATIC)
    target_link_libraries(${target} ${scope} ${ARGN} kite_llvm_static)
  else()
    target_link_libraries(${target} ${scope} MLIR LLVM)
  endif()
endfunction()

# kite_link_clang(<target> <PUBLIC|PRIVATE> components...): likewise for Clang.
function(kite_link_clang target scope)
  target_include_directories(${target} SYSTEM ${scope} ${KITE_LLVM_INCLUDE_DIRS})
  if(KITE_STATIC)
    target_link_libraries(${target} ${scope} ${ARGN} kite_llvm_static)
  else()
    target_link_libraries(${target} ${scope} clang-cpp LLVM)
  endif()
endfunction()
