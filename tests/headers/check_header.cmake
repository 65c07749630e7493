# One header's self-containment test, sped up by a precompiled header of what <torch/types.h>
# includes (tests/CMakeLists.txt) where that cannot change the verdict: COMMAND
# ("@@"-separated: the compiler, its flags, the TU) runs with "-include PCH" and writes its
# dependency list; when that compile passes and the list shows that the TU's own includes
# reached <torch/types.h>, they read everything the precompiled header holds anyway, and the
# header passes. Otherwise the plain compile decides. Used by tests/headers.
#   cmake -DCOMMAND=<compiler>@@<flag>...@@<tu> -DPCH=<header whose .gch exists> -DDEPS=<file>
#         -P check_header.cmake
string(REPLACE "@@" ";" command "${COMMAND}")
file(REMOVE "${DEPS}")
execute_process(COMMAND ${command} -include ${PCH} -MD -MF ${DEPS} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
if(rc EQUAL 0 AND EXISTS "${DEPS}")
  file(READ "${DEPS}" depends)
  if(depends MATCHES "/torch/types\\.h[ \\\n]")
    message(STATUS "compiles on its own (what <torch/types.h>, which it includes, reads precompiled)")
    return()
  endif()
endif()
execute_process(COMMAND ${command} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  string(REPLACE "@@" " " ran "${COMMAND}")
  message(FATAL_ERROR "does not compile on its own (ran: ${ran})")
endif()
message(STATUS "compiles on its own")
