# wf_add_gtest_suites(TARGET [PREFIX p] [TIMEOUT s] [LABELS l...]): registers a googletest binary
# with CTest as one CTest test per test suite (`PREFIX` + the suite's name, running
# `--gtest_filter=Suite.*`), listed from `--gtest_list_tests` after each build of the binary.
#
# Why not gtest_discover_tests' one CTest test per test: each test was then a process of its own,
# and every process start maps the CUDA libraries the binaries link (cuBLASLt, cuDNN, NVRTC):
# about 0.2 s, two thirds of ctest's 290 s for 2,212 tests on two cores. A suite whose tests were
# all skipped (the GPU suites on a machine without a GPU) is reported skipped, never passed: the
# binaries' main (tests/gtest_main.cpp, the library wf_gtest_main) exits 77 then.
function(wf_add_gtest_suites target)
  cmake_parse_arguments(ARG "" "PREFIX;TIMEOUT" "LABELS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 1500)
  endif()
  set(list_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites.cmake")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -D "EXE=$<TARGET_FILE:${target}>" -D "OUT=${list_file}" -D "PREFIX=${ARG_PREFIX}"
            -D "TIMEOUT=${ARG_TIMEOUT}" -D "LABELS=${ARG_LABELS}" -D "WORKDIR=${CMAKE_CURRENT_BINARY_DIR}"
            -P "${PROJECT_SOURCE_DIR}/cmake/GTestSuitesList.cmake"
    BYPRODUCTS "${list_file}"
    VERBATIM)
  # Read by ctest; until the binary is built, one failing test says so.
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_include.cmake")
  file(WRITE "${include_file}"
       "if(EXISTS \"${list_file}\")\n  include(\"${list_file}\")\nelse()\n"
       "  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
endfunction()

# googletest's main with the exit code for a run whose every test was skipped.
if(NOT TARGET wf_gtest_main)
  find_package(GTest REQUIRED)
  add_library(wf_gtest_main STATIC "${PROJECT_SOURCE_DIR}/tests/gtest_main.cpp")
  target_link_libraries(wf_gtest_main PUBLIC GTest::gtest)
endif()
