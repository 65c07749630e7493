# hookforge_warnings(<target>...): the warnings hookforge's own targets build with, as errors
# when HOOKFORGE_WERROR is on (off by default: a user's newer compiler may warn where ours does
# not; scripts/test.sh, and so CI, turns it on). The core and config tests make them errors
# always. LibTorch's, Catch's and fmt's headers are system headers here, so only hookforge's
# code is held to them.
function(hookforge_warnings)
  foreach(target IN LISTS ARGN)
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
    if(HOOKFORGE_WERROR)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
      # GCC 12's false positives in std::string code inlined deep into the runner loops and
      # the table writers: -Wstringop-overflow/-overread on short literals and csv_line's
      # joins, -Wrestrict and -Warray-bounds on operator+ and a moved string's memcpy
      # (GCC PRs 105651, 105329).
      target_compile_options(${target} PRIVATE -Wno-stringop-overflow -Wno-stringop-overread
                                                -Wno-restrict -Wno-array-bounds)
    endif()
  endforeach()
endfunction()
