# Runs one compile-fail case: the compile must fail, the first "error:" must come within
# the first HEAD lines of the compiler's output (default 10), and those lines must match
# every regular expression in EXPECT (separated by "@@"): what a user reads first must
# say what is wrong. ERRORS, when given, is the exact number of errors. Used by
# tests/compile_fail.
#   cmake -DCOMMAND=<compiler>@@<flag>@@<source> -DEXPECT=<re>@@<re> [-DHEAD=10] [-DERRORS=1]
#         -P check_compile_fail.cmake
if(NOT DEFINED HEAD)
  set(HEAD 10)
endif()
string(REPLACE "@@" ";" command "${COMMAND}")
execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(text "${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "compiled, but this case must not compile")
endif()

# Lines, with ";" (frequent in GCC's "[with A = x; B = y]") kept out of CMake's list syntax.
string(REPLACE ";" "<semicolon>" escaped "${text}")
string(REPLACE "\n" ";" lines "${escaped}")
set(number 0)
set(first_error 0)
set(errors 0)
set(head "")
foreach(line IN LISTS lines)
  math(EXPR number "${number} + 1")
  if(line MATCHES "error: ")
    math(EXPR errors "${errors} + 1")
    if(first_error EQUAL 0)
      set(first_error ${number})
    endif()
  endif()
  if(number LESS_EQUAL HEAD)
    string(APPEND head "${line}\n")
  endif()
endforeach()
string(REPLACE "<semicolon>" ";" head "${head}")

if(first_error EQUAL 0 OR first_error GREATER HEAD)
  message(FATAL_ERROR "the first error is at line ${first_error} of the compiler's output, not within "
                      "the first ${HEAD} (ran: ${COMMAND}):\n${text}")
endif()
if(DEFINED ERRORS AND NOT errors EQUAL ERRORS)
  message(FATAL_ERROR "expected exactly ${ERRORS} error(s), got ${errors} (ran: ${COMMAND}):\n${text}")
endif()
string(REPLACE "@@" ";" expected "${EXPECT}")
foreach(re IN LISTS expected)
  if(NOT head MATCHES "${re}")
    message(FATAL_ERROR "the first ${HEAD} lines of the compiler's output lack /${re}/ (exit ${rc}; "
                        "ran: ${COMMAND}):\n${text}")
  endif()
endforeach()
message(STATUS "failed to compile, as expected: first error at line ${first_error}, ${errors} error(s)")
