# Writes a C++ source holding the text of a header as a string constant, so that the CUDA
# backend hands the header to NVRTC from the binary itself (nothing is read from the source tree
# at run time). Run as a build step: cmake -DINPUT=<header> -DOUTPUT=<.cpp> -DSYMBOL=<name> -P ...
file(READ "${INPUT}" text)
string(FIND "${text}" ")wf_embed\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter )wf_embed\"")
endif()
set(content "// Generated from ${INPUT} by cmake/embed_header.cmake; do not edit.\n")
string(APPEND content "namespace wf::cuda {\nextern const char* const ${SYMBOL};\n")
string(APPEND content "const char* const ${SYMBOL} = R\"wf_embed(${text})wf_embed\";\n}  // namespace wf::cuda\n")
# Rewrite only on change, so an unchanged header recompiles nothing.
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
  if(old STREQUAL content)
    return()
  endif()
endif()
file(WRITE "${OUTPUT}" "${content}")
