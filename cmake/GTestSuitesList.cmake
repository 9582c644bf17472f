# Run by wf_add_gtest_suites (GTestSuites.cmake) after a build: lists EXE's test suites and writes
# the CTest file OUT that registers each as one test. Fails the build if the binary cannot list.
execute_process(COMMAND "${EXE}" --gtest_list_tests OUTPUT_VARIABLE listing ERROR_VARIABLE errors
                RESULT_VARIABLE rc TIMEOUT 60)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} --gtest_list_tests failed (${rc}): ${errors}")
endif()
string(REPLACE "\n" ";" lines "${listing}")
set(text "")
set(count 0)
foreach(line IN LISTS lines)
  # A suite's line starts in column 0 and ends with '.' (typed suites add "  # TypeParam = ...").
  if(line MATCHES "^([^ #][^ ]*)\\.( .*)?$")
    set(suite "${CMAKE_MATCH_1}")
    string(APPEND text "add_test([=[${PREFIX}${suite}]=] [=[${EXE}]=] [=[--gtest_filter=${suite}.*]=])\n"
           "set_tests_properties([=[${PREFIX}${suite}]=] PROPERTIES WORKING_DIRECTORY [=[${WORKDIR}]=] "
           "TIMEOUT ${TIMEOUT} SKIP_RETURN_CODE 77")
    if(LABELS)
      string(APPEND text " LABELS [=[${LABELS}]=]")
    endif()
    string(APPEND text ")\n")
    math(EXPR count "${count} + 1")
  endif()
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "${EXE} lists no test suites")
endif()
file(WRITE "${OUT}.tmp" "${text}")
file(RENAME "${OUT}.tmp" "${OUT}")
