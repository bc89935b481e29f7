# EmbedHeaders.cmake - turn the device tile library into a C++ source.
#
# Run as a script: cmake -DDIR=<runtime/device> -DINCLUDE=<include>
#   -DSHARED=<kite/random.hpp;...> -DOUTPUT=<file.cpp> -P EmbedHeaders.cmake
# Each DIR/**/*.cuh becomes one raw string literal, named by its path under
# DIR, in kite::runtime::deviceHeaders() (EmbeddedHeaders.h); so does each
# INCLUDE/<path> of SHARED (headers reference mode and device code share),
# named by its path.

file(GLOB_RECURSE headers RELATIVE "${DIR}" "${DIR}/*.cuh")
list(SORT headers)
set(files)
foreach(rel IN LISTS headers)
  list(APPEND files "${DIR}/${rel}")
endforeach()
foreach(rel IN LISTS SHARED)
  list(APPEND headers "${rel}")
  list(APPEND files "${INCLUDE}/${rel}")
endforeach()
set(delim "kite_embed")
set(out "// Generated from runtime/device/ by runtime/EmbedHeaders.cmake; do not edit.\n")
string(APPEND out "#include \"runtime/EmbeddedHeaders.h\"\n\n")
string(APPEND out "namespace {\nconst kite::runtime::EmbeddedFile kFiles[] = {\n")
foreach(rel path IN ZIP_LISTS headers files)
  file(READ "${path}" text)
  string(FIND "${text}" ")${delim}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${path} contains ')${delim}\"', which ends the raw string it is embedded in")
  endif()
  string(APPEND out "    {\"${rel}\", R\"${delim}(${text})${delim}\"},\n")
endforeach()
string(APPEND out "    {nullptr, nullptr},\n};\n} // namespace\n\n")
list(LENGTH headers count)
string(APPEND out "std::span<const kite::runtime::EmbeddedFile> kite::runtime::deviceHeaders() {\n")
string(APPEND out "  return {kFiles, ${count}};\n}\n")
file(WRITE "${OUTPUT}" "${out}")
