# Run by the build for each source of ptb_transform_sources() (PtbToolsFunctions.cmake), not by users:
#   cmake -DPTB_FLAGS_FILE=<flags> -P PtbTransformRun.cmake -- <ptb-transform> <options...> <source> -o <out> ...
# Runs ptb-transform with the target's compile flags read from PTB_FLAGS_FILE (written at generate time by
# file(GENERATE), one flag a line; a line `SHELL:<words>` is split as a shell splits it: CMAKE_CUDA_FLAGS and
# CMake's own SHELL: options) after `--`.
cmake_minimum_required(VERSION 3.20)
if(NOT DEFINED PTB_FLAGS_FILE)
  message(FATAL_ERROR "PtbTransformRun.cmake: PTB_FLAGS_FILE is not set")
endif()
set(command)
set(after_dashes FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last})
  if(after_dashes)
    list(APPEND command "${CMAKE_ARGV${i}}")
  elseif(CMAKE_ARGV${i} STREQUAL "--")
    set(after_dashes TRUE)
  endif()
endforeach()
if(NOT command)
  message(FATAL_ERROR "PtbTransformRun.cmake: no command after --")
endif()

set(flags)
if(EXISTS "${PTB_FLAGS_FILE}")
  file(STRINGS "${PTB_FLAGS_FILE}" lines)
  foreach(line IN LISTS lines)
    if(line MATCHES "^SHELL:(.*)$")
      separate_arguments(words UNIX_COMMAND "${CMAKE_MATCH_1}")
      list(APPEND flags ${words})
    elseif(NOT line STREQUAL "")
      list(APPEND flags "${line}")
    endif()
  endforeach()
endif()

execute_process(COMMAND ${command} -- ${flags} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  # ptb-transform said why; nothing was written.
  message(FATAL_ERROR "ptb-transform failed (exit ${rc})")
endif()

