# hookforge_precompile_headers(<target> [HEADERS <header>...])
#
# Precompiles LibTorch's and hookforge's headers once for <target>, instead of parsing them
# again in each of its C++ translation units (docs/benchmarks.md, "Compile time"):
#
#   find_package(hookforge REQUIRED COMPONENTS hooks)      # or add_subdirectory(hookforge)
#   add_executable(train train.cpp my_hooks.cpp)
#   target_link_libraries(train PRIVATE hookforge::hooks)
#   hookforge_precompile_headers(train)                   # after target_link_libraries
#
# The header holds what the hookforge components <target> links name: <torch/torch.h> and
# <hookforge/torch.hpp> for any component on LibTorch, then the umbrella header of each
# component linked (<hookforge/hooks.hpp> for hookforge::hooks, ...), or
# <hookforge/hookforge.hpp> for the core alone; then HEADERS, as <name> or "name". Only C++
# sources use it (a target's CUDA or C sources are left alone). GCC and Clang. CMake builds
# it with the target's own flags; targets with the same flags may share one:
# target_precompile_headers(other REUSE_FROM <target>).
include_guard(GLOBAL)

function(hookforge_precompile_headers target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "HEADERS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "hookforge_precompile_headers(${target}): unexpected '${arg_UNPARSED_ARGUMENTS}'; "
                        "expected HEADERS <header>...")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "hookforge_precompile_headers: '${target}' is not a target of this project; "
                        "call it after add_executable or add_library")
  endif()
  get_target_property(libraries ${target} LINK_LIBRARIES)
  set(torch_headers)
  set(headers)
  foreach(library IN LISTS libraries)
    if(library MATCHES "^hookforge::(torch|torch_compiled)$")
      set(torch_headers <torch/torch.h> <hookforge/torch.hpp>)
    elseif(library MATCHES "^hookforge::(hooks|images|distributed|run)$")
      set(torch_headers <torch/torch.h> <hookforge/torch.hpp>)
      list(APPEND headers <hookforge/${CMAKE_MATCH_1}.hpp>)
    elseif(library MATCHES "^hookforge::config$")
      list(APPEND headers <hookforge/config.hpp>)
    elseif(library MATCHES "^hookforge::(core|hookforge)$")
      list(APPEND headers <hookforge/hookforge.hpp>)
    endif()
  endforeach()
  if(NOT torch_headers AND NOT headers)
    message(FATAL_ERROR "hookforge_precompile_headers(${target}): ${target} links no hookforge target; "
                        "call it after target_link_libraries(${target} PRIVATE hookforge::torch) (or another "
                        "hookforge:: component)")
  endif()
  list(REMOVE_DUPLICATES headers)
  foreach(header IN LISTS torch_headers headers arg_HEADERS)
    # A '>' closes a generator expression: <torch/torch.h> is spelled with $<ANGLE-R> inside one.
    string(REPLACE ">" "$<ANGLE-R>" header "${header}")
    target_precompile_headers(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:${header}>")
  endforeach()
endfunction()
