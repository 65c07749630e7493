# One header's self-containment test, sped up by a precompiled <torch/types.h> where that
# cannot change the verdict: when the TU's own includes reach <torch/types.h> (the
# compiler's -M list says so), COMMAND ("@@"-separated: the compiler, its flags, the TU) runs
# with "-include PCH" -- pre-including a header the TU reads anyway adds nothing to what it
# sees. Otherwise, or when that compile fails, the plain compile decides. Used by
# tests/headers.
#   cmake -DCOMMAND=<compiler>@@<flag>...@@<tu> -DPCH=<header whose .gch exists> -P check_header.cmake
string(REPLACE "@@" ";" command "${COMMAND}")
execute_process(COMMAND ${command} -M RESULT_VARIABLE rc OUTPUT_VARIABLE depends ERROR_QUIET)
if(rc EQUAL 0 AND depends MATCHES "/torch/types\\.h[ \\\n]")
  execute_process(COMMAND ${command} -include ${PCH} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(rc EQUAL 0)
    message(STATUS "compiles on its own (<torch/types.h>, which it includes, precompiled)")
    return()
  endif()
endif()
execute_process(COMMAND ${command} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  string(REPLACE "@@" " " ran "${COMMAND}")
  message(FATAL_ERROR "does not compile on its own (ran: ${ran})")
endif()
message(STATUS "compiles on its own")
