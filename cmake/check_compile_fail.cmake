# Runs one compile-fail case: the compile must fail, and its output must match every
# regular expression in EXPECT (separated by "@@"). Used by tests/compile_fail.
#   cmake -DCOMMAND=<compiler>@@<flag>@@<source> -DEXPECT=<re>@@<re> -P check_compile_fail.cmake
string(REPLACE "@@" ";" command "${COMMAND}")
execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(text "${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "compiled, but this case must not compile")
endif()
string(REPLACE "@@" ";" expected "${EXPECT}")
foreach(re IN LISTS expected)
  if(NOT text MATCHES "${re}")
    message(FATAL_ERROR "the compiler's output lacks /${re}/ (exit ${rc}; ran: ${COMMAND}):\n${text}")
  endif()
endforeach()
message(STATUS "failed to compile, as expected, with the expected message")
