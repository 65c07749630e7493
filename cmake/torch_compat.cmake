# What differs between the LibTorches hookforge is built against (Debian's 1.13, the pip
# wheel's and pytorch.org's 2.x) at the CMake level; the C++ differences are in
# include/hookforge/torch/compat.hpp.
#
# After find_package(Torch): TORCH_INSTALL_PREFIX, TORCH_VERSION (2.x; 1.13's config sets
# Torch_VERSION), C10_LIBRARY. Sets HOOKFORGE_TORCH_PREFIX, HOOKFORGE_TORCH_VERSION and
# HOOKFORGE_TORCH_CUDA (whether this LibTorch is a CUDA build).

get_filename_component(HOOKFORGE_TORCH_PREFIX "${TORCH_INSTALL_PREFIX}" REALPATH)
set(HOOKFORGE_TORCH_VERSION "${Torch_VERSION}")

# TorchConfig.cmake looks for libc10 and libtorch in the system's folders before its own, so
# a prefix path naming share/cmake (what torch.utils.cmake_prefix_path gives) on a machine
# that also has a system LibTorch (Debian's libtorch-dev) links the system's libc10 under
# the other's headers: the program then fails at load time or crashes. Say so now.
foreach(_lib IN ITEMS C10_LIBRARY TORCH_LIBRARY C10_CUDA_LIBRARY)
  if(${_lib})
    get_filename_component(_real "${${_lib}}" REALPATH)
    string(FIND "${_real}" "${HOOKFORGE_TORCH_PREFIX}/" _at)
    if(NOT _at EQUAL 0)
      message(FATAL_ERROR
        "hookforge: LibTorch's config is in ${HOOKFORGE_TORCH_PREFIX}/share/cmake, but it found "
        "${${_lib}} (another LibTorch) for ${_lib}. Point CMAKE_PREFIX_PATH at the folder that "
        "holds lib/ and share/cmake/, not at share/cmake: for the pip wheel "
        "-DCMAKE_PREFIX_PATH=\"$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')\", "
        "for the pytorch.org archive -DCMAKE_PREFIX_PATH=/path/to/libtorch; then remove this "
        "build folder's CMakeCache.txt.")
    endif()
  endif()
endforeach()

# A CUDA build has libc10_cuda (2.x exports the target c10_cuda; 1.13's config lists the library).
set(HOOKFORGE_TORCH_CUDA OFF)
if(TARGET c10_cuda OR C10_CUDA_LIBRARY)
  set(HOOKFORGE_TORCH_CUDA ON)
endif()
message(STATUS "hookforge: LibTorch ${HOOKFORGE_TORCH_VERSION} in ${HOOKFORGE_TORCH_PREFIX}"
               " (CUDA: ${HOOKFORGE_TORCH_CUDA})")

# hookforge_torch_compat(target): the usage requirements that follow from this LibTorch.
function(hookforge_torch_compat target)
  # 2.x installs the {fmt} headers it was built with (fmt 12 in 2.11) into its include folder,
  # which comes before the system's in every TU that includes LibTorch: such TUs use that
  # {fmt}, header-only, and never the system's libfmt (another major version).
  # (Debian's LibTorch, in /usr, uses the system's {fmt}.)
  if(EXISTS "${HOOKFORGE_TORCH_PREFIX}/include/fmt/format.h" AND NOT HOOKFORGE_TORCH_PREFIX STREQUAL "/usr")
    target_compile_definitions(${target} INTERFACE FMT_HEADER_ONLY)
  endif()
  # The pip wheel's libtorch.so (2.x, built on manylinux) exports std::filesystem functions of
  # its own, some of which jump through a null pointer (std::filesystem::remove_all crashes).
  # Listed after libtorch.so, libstdc++ loses the lookup to them; so it goes first. Called
  # before LibTorch is linked to the target, so that it comes first on the link line.
  if(HOOKFORGE_TORCH_VERSION VERSION_GREATER_EQUAL 2)
    target_link_libraries(${target} INTERFACE
      "$<$<LINK_LANG_AND_ID:CXX,GNU,Clang>:-Wl,--push-state,--no-as-needed,-lstdc++,--pop-state>")
  endif()
endfunction()
