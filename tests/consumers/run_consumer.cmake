# Configure, build and run one consumer project in a fresh build directory.
#   cmake -DSOURCE=<dir> -DBINARY=<dir> -DARGS=<extra configure args, @@-separated> -P run_consumer.cmake
file(REMOVE_RECURSE "${BINARY}")
string(REPLACE "@@" ";" args "${ARGS}")
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE} -B ${BINARY} ${args} COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BINARY} COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${BINARY}/consumer COMMAND_ERROR_IS_FATAL ANY)
