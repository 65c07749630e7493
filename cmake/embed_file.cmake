# Writes OUTPUT, a C++ header defining `static constexpr char NAME[]` with the bytes of INPUT
# (no terminating NUL; sizeof NAME is the file's size), so a program carries the file as built.
#   cmake -DINPUT=configs/default.yaml -DOUTPUT=gen/default_config.hpp -DNAME=hookforge_run_default_config
#         -P cmake/embed_file.cmake
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_length)
if(hex_length EQUAL 0)
  message(FATAL_ERROR "embed_file: ${INPUT} is empty")
endif()
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${hex}")
string(REGEX REPLACE "(('\\\\x[0-9a-f][0-9a-f]',){16})" "\\1\n  " bytes "${bytes}")
file(WRITE "${OUTPUT}.tmp"
     "// Generated from ${INPUT} by cmake/embed_file.cmake; do not edit.\n"
     "#pragma once\n"
     "static constexpr char ${NAME}[] = {\n  ${bytes}\n};\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
