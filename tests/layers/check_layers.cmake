# tests/layers/check_layers.cmake — the include tree keeps its layers (docs/architecture.md).
#
#   cmake -DSOURCE_DIR=<repository> -P tests/layers/check_layers.cmake
#
# Reads every `#include "hookforge/..."` under include/ and src/ and fails, listing each
# offending line, where a file includes:
#   - a header of a layer its own layer may not use (the table below);
#   - another layer's `detail/` header (a layer's machinery is private to it);
#   - from an umbrella header (torch.hpp, distributed.hpp, ...), a header of another layer other
#     than that layer's umbrella (an umbrella gathers its own folder);
#   - a library's header that its layer's CMake target does not link (LibTorch in the core
#     or the config layer, OpenSSL outside the hooks, ...: the `libraries` table below).
# Each layer is a folder of include/hookforge/ and its umbrella header; src/torch.cpp is the
# torch layer's, src/run/ the run layer's.

cmake_minimum_required(VERSION 3.20)

# layer -> the layers it may include (itself included)
set(allowed_core core)
set(allowed_torch core torch)
set(allowed_hooks core torch hooks)
set(allowed_images core torch images)
set(allowed_config core config)
set(allowed_distributed core torch distributed)
set(allowed_run core torch hooks images config distributed run)

set(umbrella_core hookforge.hpp)
set(umbrella_torch torch.hpp)
set(umbrella_hooks hooks.hpp)
set(umbrella_images images.hpp)
set(umbrella_config config.hpp)
set(umbrella_distributed distributed.hpp)
set(umbrella_run run.hpp)
set(layers core torch hooks images config distributed run)

# Libraries by the start of their include path, and the layers whose targets link them.
set(libraries torch_csrc_distributed torch aten c10 caffe2 nlohmann openssl curl png turbojpeg yaml_cpp)
set(library_torch_csrc_distributed "torch/csrc/distributed/" distributed run)
set(library_torch "torch/" torch hooks images distributed run)
set(library_aten "ATen/" torch hooks images distributed run)
set(library_c10 "c10/" torch hooks images distributed run)
set(library_caffe2 "caffe2/" torch hooks images distributed run)
set(library_nlohmann "nlohmann/" torch hooks images distributed run)
set(library_openssl "openssl/" hooks run)
set(library_curl "curl/" hooks run)
set(library_png "png.h" hooks images run)
set(library_turbojpeg "turbojpeg.h" images run)
set(library_yaml_cpp "yaml-cpp/" config run)
# Included by umbrellas before anything else, so that a failed attach check is reported one
# "included from" line sooner (torch.hpp, hooks.hpp).
set(umbrella_extra core/checks.hpp)

# The layer of `path` (relative to include/hookforge), or "" for none.
function(layer_of path out)
  set(result "")
  foreach(layer IN LISTS layers)
    if(path MATCHES "^${layer}/" OR path STREQUAL "${umbrella_${layer}}")
      set(result ${layer})
    endif()
  endforeach()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

if(NOT SOURCE_DIR)
  message(FATAL_ERROR "check_layers.cmake: give -DSOURCE_DIR=<the repository>")
endif()
file(GLOB_RECURSE headers RELATIVE ${SOURCE_DIR}/include/hookforge ${SOURCE_DIR}/include/hookforge/*.hpp)
file(GLOB_RECURSE sources RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/src/*.cpp)

set(files "")
foreach(h IN LISTS headers)
  list(APPEND files "include/hookforge/${h}")
endforeach()
list(APPEND files ${sources})

set(problems "")
set(edges 0)
foreach(file IN LISTS files)
  if(file MATCHES "^include/hookforge/(.*)$")
    set(rel ${CMAKE_MATCH_1})
    layer_of(${rel} from)
  elseif(file STREQUAL "src/torch.cpp")
    set(rel "")
    set(from torch)
  elseif(file MATCHES "^src/run/")
    set(rel "")
    set(from run)
  else()
    list(APPEND problems "${file}: in no layer (add it to tests/layers/check_layers.cmake)")
    continue()
  endif()
  if(from STREQUAL "")
    list(APPEND problems "${file}: in no layer (add it to tests/layers/check_layers.cmake)")
    continue()
  endif()
  set(is_umbrella FALSE)
  if(rel STREQUAL "${umbrella_${from}}")
    set(is_umbrella TRUE)
  endif()
  file(STRINGS ${SOURCE_DIR}/${file} system_lines REGEX "^[ \t]*#[ \t]*include[ \t]+<")
  foreach(line IN LISTS system_lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+<([^>]+)>.*$" "\\1" target "${line}")
    foreach(library IN LISTS libraries)
      list(GET library_${library} 0 prefix)
      string(FIND "${target}" "${prefix}" at)
      if(at EQUAL 0)
        set(users ${library_${library}})
        list(REMOVE_AT users 0)
        if(NOT from IN_LIST users)
          list(JOIN users ", " may_use)
          list(APPEND problems
               "${file}: the ${from} layer includes <${target}>, which its target does not link (used by: ${may_use})")
        endif()
        break()  # the first, most specific prefix decides
      endif()
    endforeach()
  endforeach()
  file(STRINGS ${SOURCE_DIR}/${file} lines REGEX "^[ \t]*#[ \t]*include[ \t]+\"hookforge/")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"hookforge/([^\"]+)\".*$" "\\1" target "${line}")
    math(EXPR edges "${edges} + 1")
    layer_of(${target} to)
    if(to STREQUAL "")
      list(APPEND problems "${file}: includes hookforge/${target}, which is in no layer")
    elseif(NOT to IN_LIST allowed_${from})
      list(JOIN allowed_${from} ", " may_use)
      list(APPEND problems
           "${file}: the ${from} layer includes hookforge/${target} of the ${to} layer (${from} may use: ${may_use})")
    elseif(NOT to STREQUAL from AND target MATCHES "/detail/")
      list(APPEND problems
           "${file}: includes hookforge/${target}, the ${to} layer's private machinery (make what is needed public)")
    elseif(is_umbrella AND NOT to STREQUAL from AND NOT target STREQUAL "${umbrella_${to}}"
           AND NOT target IN_LIST umbrella_extra)
      list(APPEND problems
           "${file}: the umbrella of ${from} includes hookforge/${target}: an umbrella gathers its own folder (include ${umbrella_${to}} instead, or leave it to the user)")
    endif()
  endforeach()
endforeach()

list(LENGTH files count)
if(problems)
  list(LENGTH problems n)
  list(JOIN problems "\n  " text)
  message(FATAL_ERROR "hookforge: ${n} include(s) cross the layers (docs/architecture.md):\n  ${text}")
endif()
message(STATUS "hookforge: ${edges} includes in ${count} files keep to the layers")
