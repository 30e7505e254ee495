# Run by the build for each source of ptb_transform_sources() (PtbToolsFunctions.cmake), not by users:
#   cmake -DPTB_FLAGS_FILE=<flags> -DPTB_DEPFILE=<out>.d -DPTB_OUTPUT=<out> -P PtbTransformRun.cmake --
#         <ptb-transform> <options...> <source> -o <out> --dependency-file <out>.deps
# Runs ptb-transform with the target's compile flags read from PTB_FLAGS_FILE (written at generate time by
# file(GENERATE), one flag a line; a line `SHELL:<words>` is split as a shell splits it: CMAKE_CUDA_FLAGS and
# CMake's own SHELL: options), then writes PTB_DEPFILE from the tool's dependency file with PTB_OUTPUT as its
# only target: the tool names every file it wrote there (the twins part, the copies of transformed headers),
# and Ninja stops with "depfile mentions '...' as an output, but no such output was declared" on the copies,
# which no build file can declare (which headers hold kernels is known only when the tool has run).
cmake_minimum_required(VERSION 3.20)
foreach(var PTB_FLAGS_FILE PTB_DEPFILE PTB_OUTPUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "PtbTransformRun.cmake: ${var} is not set")
  endif()
endforeach()
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
  message(FATAL_ERROR "ptb-transform failed (exit ${rc}) for ${PTB_OUTPUT}")
endif()

# ptb-transform's rule is "<output> <other files written>: <prerequisites...>" (its first line ends in ':'
# or ': \'); the escaping of the prerequisites is kept as written.
set(raw "${PTB_OUTPUT}.deps")
file(READ "${raw}" text)
string(FIND "${text}" "\n" eol)
if(eol EQUAL -1)
  set(first "${text}")
  set(rest "")
else()
  string(SUBSTRING "${text}" 0 ${eol} first)
  string(SUBSTRING "${text}" ${eol} -1 rest)
endif()
if(NOT first MATCHES ":( \\\\)?$")
  message(FATAL_ERROR "PtbTransformRun.cmake: unexpected first line in ${raw}: ${first}")
endif()
string(REGEX REPLACE "^.*:( \\\\)?$" "\\1" continuation "${first}")
string(REPLACE " " "\\ " target "${PTB_OUTPUT}")
string(REPLACE "#" "\\#" target "${target}")
string(REPLACE "$" "$$" target "${target}")
file(WRITE "${PTB_DEPFILE}" "${target}:${continuation}${rest}")
file(REMOVE "${raw}")
