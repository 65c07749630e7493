# Configure, build and run one consumer project in a fresh build directory.
#   cmake -DSOURCE=<dir> -DBINARY=<dir> -DARGS=<extra configure args, @@-separated> -P run_consumer.cmake
#   -DTORCH_PREFIX=<dir>: the LibTorch hookforge was built with, searched first (through the
#   environment, as a prefix path that is not a CMake list)
file(REMOVE_RECURSE "${BINARY}")
if(TORCH_PREFIX)
  set(ENV{CMAKE_PREFIX_PATH} "${TORCH_PREFIX}:$ENV{CMAKE_PREFIX_PATH}")
endif()
string(REPLACE "@@" ";" args "${ARGS}")
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE} -B ${BINARY} ${args} COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BINARY} COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${BINARY}/consumer COMMAND_ERROR_IS_FATAL ANY)
