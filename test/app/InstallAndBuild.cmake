# InstallAndBuild.cmake - run by the install.app test (cmake -P): install
# KITE_BUILD_DIR into WORK_DIR/prefix, build APP_SOURCE_DIR against it in a
# clean WORK_DIR/build, and run the application.
foreach(var KITE_BUILD_DIR APP_SOURCE_DIR WORK_DIR GENERATOR)
  if(NOT ${var})
    message(FATAL_ERROR "InstallAndBuild.cmake: ${var} is not set")
  endif()
endforeach()

set(prefix "${WORK_DIR}/prefix")
set(build "${WORK_DIR}/build")
file(REMOVE_RECURSE "${prefix}" "${build}")

message(STATUS "Installing ${KITE_BUILD_DIR} into ${prefix}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${KITE_BUILD_DIR}" --prefix "${prefix}"
  OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)

set(args -G "${GENERATOR}" -S "${APP_SOURCE_DIR}" -B "${build}"
  "-DCMAKE_PREFIX_PATH=${prefix}")
if(CXX_COMPILER)
  list(APPEND args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
if(C_COMPILER)
  list(APPEND args "-DCMAKE_C_COMPILER=${C_COMPILER}")
endif()
if(BUILD_TYPE)
  list(APPEND args "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}")
endif()
message(STATUS "Configuring ${APP_SOURCE_DIR} against the installed kite")
execute_process(COMMAND "${CMAKE_COMMAND}" ${args} COMMAND_ERROR_IS_FATAL ANY)
message(STATUS "Building it")
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${build}" -j2 COMMAND_ERROR_IS_FATAL ANY)

# The application must have used the installed kite tool, not this tree's.
file(GLOB_RECURSE registrations "${build}/*.registration.cpp")
if(NOT registrations)
  message(FATAL_ERROR "no registration source was generated in ${build}")
endif()

message(STATUS "Running it")
execute_process(COMMAND "${build}/kite_app" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "kite_app failed (exit status ${rc})")
endif()
