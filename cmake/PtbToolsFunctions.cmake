# CMake functions of the PtbTools package (docs/user-guide.md). Included by PtbToolsConfig.cmake, which
# sets PTB_TRANSFORM_EXECUTABLE, PTB_FUSE_KERNELS_EXECUTABLE and the target PtbTools::runtime.

# The script the build runs for each transformed source (installed beside this file).
set(_PTB_TRANSFORM_RUN_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/PtbTransformRun.cmake")

# ptb_transform_sources(<target> [STRICT] [TWINS_TOGETHER] [KERNELS <regex>] [HEADER_FILTER <regex>])
#
# Makes <target> compile the PTB-transformed copies of its .cu sources instead of the originals: each
# <source>.cu becomes <binary dir>/ptb/<target>/<path relative to the source dir>, written by
# ptb-transform at build time with the flags the target's CUDA compiles get: CMAKE_CUDA_FLAGS and
# CMAKE_CUDA_FLAGS_<CONFIG> (their values at the end of the calling directory), the target's compile
# options (add_compile_options, target_compile_options, generator expressions such as
# $<COMPILE_LANGUAGE:CUDA> evaluated for CUDA), include directories, compile definitions and CUDA
# standard, what linked targets bring included; nvcc's own options among them are translated or dropped by
# ptb-transform. The transformed copy is added to the target in place of the original. The transform runs
# again when the source, any file it includes, or those flags change (ptb-transform's --dependency-file as
# CMake's DEPFILE, naming the transformed source only). The target links PtbTools::runtime (the runtime
# headers). STRICT: kernels or launches that cannot be rewritten are build errors. KERNELS: only kernels
# whose name matches. HEADER_FILTER: which included files are transformed with the source (ptb-transform
# --header-filter; default: the files under the source's directory).
# Twins apart: a source whose own text holds `__global__` gets a twins part (<name>.twins.cu,
# ptb-transform --twins-apart), added to the target too: the twins of its kernels go to a module of their
# own, which a program whose launches run the original kernels never loads (docs/generated-code.md, "Twins
# apart"). Only kernels defined in the source itself can go apart, so a source whose kernels all sit in
# headers gets no part (an empty part would still cost an nvcc run); the text is read when CMake
# configures, and a source edited since only keeps its twins in its own module (correct, a slower first
# launch) until CMake runs again. TWINS_TOGETHER: no source gets a twins part.
# Multi-config generators (Ninja Multi-Config): the transformed sources go to ptb/<target>/<config>/, each
# configuration transformed with its own flags.
function(ptb_transform_sources target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "STRICT;TWINS_TOGETHER" "KERNELS;HEADER_FILTER" "")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "ptb_transform_sources: unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "ptb_transform_sources: '${target}' is not a target")
  endif()
  set(options)
  if(arg_STRICT)
    list(APPEND options --strict)
  endif()
  if(DEFINED arg_KERNELS)
    list(APPEND options "--kernels=${arg_KERNELS}")
  endif()
  if(DEFINED arg_HEADER_FILTER)
    list(APPEND options "--header-filter=${arg_HEADER_FILTER}")
  endif()
  # The target's own compile flags, as nvcc gets them, one a line, in a file per configuration written at
  # generate time (generator expressions evaluated for the CUDA language, with what linked targets bring);
  # CMAKE_CUDA_FLAGS(_<CONFIG>) as the calling directory ends (what CMake gives the compiles), as shell words.
  get_target_property(binary_dir ${target} BINARY_DIR)
  set(flags_file_cuda "${binary_dir}/ptb/${target}.flags/$<CONFIG>-CUDA.txt")
  # (A deferred call's arguments are evaluated when it runs: the values go in now, as bracket arguments.)
  cmake_language(EVAL CODE "cmake_language(DEFER CALL _ptb_transform_write_flags [==[${target}]==]
                 [==[${binary_dir}/ptb/${target}.flags/$<CONFIG>-$<COMPILE_LANGUAGE>.txt]==])")

  get_target_property(source_dir ${target} SOURCE_DIR)
  get_property(multi_config GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
  set(config_dir)
  if(multi_config)
    set(config_dir "/$<CONFIG>")
  endif()
  get_target_property(sources ${target} SOURCES)
  set(new_sources)
  set(transformed_any FALSE)
  foreach(source IN LISTS sources)
    get_filename_component(path "${source}" ABSOLUTE BASE_DIR "${source_dir}")
    if(NOT path MATCHES "\\.cu$" OR source MATCHES "\\$<")
      list(APPEND new_sources "${source}")
      continue()
    endif()
    file(RELATIVE_PATH relative "${source_dir}" "${path}")
    if(relative MATCHES "^\\.\\./")
      get_filename_component(relative "${path}" NAME)  # a source outside the target's directory
    endif()
    set(output "${binary_dir}/ptb/${target}${config_dir}/${relative}")
    get_filename_component(output_dir "${output}" DIRECTORY)
    set(twins_part)
    set(source_options ${options})
    if(NOT arg_TWINS_TOGETHER)
      file(STRINGS "${path}" kernel_lines REGEX "__global__" LIMIT_COUNT 1)
      if(kernel_lines)
        string(REGEX REPLACE "\\.cu$" ".twins.cu" twins_part "${output}")
        list(APPEND source_options --twins-apart)
      endif()
    endif()
    # PtbTransformRun.cmake adds the target's flags (known at generate time) to the command.
    add_custom_command(OUTPUT "${output}" ${twins_part}
      COMMAND "${CMAKE_COMMAND}" -E make_directory "${output_dir}"
      COMMAND "${CMAKE_COMMAND}" "-DPTB_FLAGS_FILE=${flags_file_cuda}" -P "${_PTB_TRANSFORM_RUN_SCRIPT}" --
              "${PTB_TRANSFORM_EXECUTABLE}" ${source_options} "${path}" -o "${output}" --dependency-file "${output}.d"
      DEPENDS "${path}" "${PTB_TRANSFORM_EXECUTABLE}" "${_PTB_TRANSFORM_RUN_SCRIPT}" "${flags_file_cuda}"
      DEPFILE "${output}.d"
      COMMENT "ptb-transform ${relative} (${target})"
      VERBATIM)
    list(APPEND new_sources "${output}" ${twins_part})
    set(transformed_any TRUE)
  endforeach()
  if(NOT transformed_any)
    message(WARNING "ptb_transform_sources: target '${target}' has no .cu source to transform")
  endif()
  set_property(TARGET ${target} PROPERTY SOURCES ${new_sources})
  target_link_libraries(${target} PRIVATE PtbTools::runtime)
endfunction()

# Deferred to the end of the directory that called ptb_transform_sources(): writes, at generate time, one
# file per configuration and language (the CUDA one is read) with the target's compile flags, one a line.
function(_ptb_transform_write_flags target file)
  set(content "SHELL:${CMAKE_CUDA_FLAGS}\n")
  set(configs ${CMAKE_CONFIGURATION_TYPES} ${CMAKE_BUILD_TYPE} Debug Release RelWithDebInfo MinSizeRel)
  list(REMOVE_DUPLICATES configs)
  foreach(config IN LISTS configs)
    string(TOUPPER "${config}" upper)
    set(value "${CMAKE_CUDA_FLAGS_${upper}}")
    foreach(c IN ITEMS ">;$<ANGLE-R>" ",;$<COMMA>")
      list(GET c 0 from)
      list(GET c 1 to)
      string(REPLACE "${from}" "${to}" value "${value}")
    endforeach()
    string(APPEND content "$<$<CONFIG:${config}>:SHELL:${value}>\n")
  endforeach()
  set(options "$<TARGET_PROPERTY:${target},COMPILE_OPTIONS>")
  set(includes "$<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>")
  set(definitions "$<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>")
  set(standard "$<TARGET_PROPERTY:${target},CUDA_STANDARD>")
  string(APPEND content "$<JOIN:${options},\n>\n"
                        "$<$<BOOL:${includes}>:-I$<JOIN:${includes},\n-I>>\n"
                        "$<$<BOOL:${definitions}>:-D$<JOIN:${definitions},\n-D>>\n"
                        "$<$<BOOL:${standard}>:-std=c++${standard}>\n")
  file(GENERATE OUTPUT "${file}" CONTENT "${content}" TARGET ${target})
endfunction()

# ptb_fuse_kernels(OUTPUT <file.cu> SOURCES <a.cu> <b.cu>... KERNELS <name=block>... [RATIO <a:b>]
#                  [NAME <fused kernel name>] [TARGET <target>] [OPTIONS <more fuse-kernels options>...])
#
# Writes <file.cu> with fuse-kernels at build time (the fused kernels of docs/fuse-kernels.md): each KERNELS
# entry is fuse-kernels' `--kernel name=block`. With TARGET, <file.cu> is added to that target's sources
# and the target links PtbTools::runtime; its include directories and definitions are passed to the tool.
# The fusion runs again when a source or a header it includes changes (fuse-kernels' --dependency-file as
# the command's DEPFILE).
function(ptb_fuse_kernels)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "OUTPUT;RATIO;NAME;TARGET" "SOURCES;KERNELS;OPTIONS")
  if(arg_UNPARSED_ARGUMENTS OR NOT arg_OUTPUT OR NOT arg_SOURCES OR NOT arg_KERNELS)
    message(FATAL_ERROR "ptb_fuse_kernels: OUTPUT, SOURCES and KERNELS are required")
  endif()
  get_filename_component(output "${arg_OUTPUT}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  set(inputs)
  foreach(source IN LISTS arg_SOURCES)
    get_filename_component(path "${source}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND inputs "${path}")
  endforeach()
  set(options)
  foreach(kernel IN LISTS arg_KERNELS)
    list(APPEND options --kernel "${kernel}")
  endforeach()
  if(arg_RATIO)
    list(APPEND options --ratio "${arg_RATIO}")
  endif()
  if(arg_NAME)
    list(APPEND options --name "${arg_NAME}")
  endif()
  list(APPEND options ${arg_OPTIONS})
  set(includes "")
  set(definitions "")
  if(arg_TARGET)
    set(includes "$<TARGET_PROPERTY:${arg_TARGET},INCLUDE_DIRECTORIES>")
    set(definitions "$<TARGET_PROPERTY:${arg_TARGET},COMPILE_DEFINITIONS>")
  endif()
  get_filename_component(output_dir "${output}" DIRECTORY)
  add_custom_command(OUTPUT "${output}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${output_dir}"
    COMMAND "${PTB_FUSE_KERNELS_EXECUTABLE}" ${inputs} ${options} -o "${output}" --dependency-file "${output}.d" --
            "$<$<BOOL:${includes}>:-I$<JOIN:${includes},;-I>>" "$<$<BOOL:${definitions}>:-D$<JOIN:${definitions},;-D>>"
    DEPENDS ${inputs} "${PTB_FUSE_KERNELS_EXECUTABLE}"
    DEPFILE "${output}.d"
    COMMENT "fuse-kernels -> ${arg_OUTPUT}"
    COMMAND_EXPAND_LISTS
    VERBATIM)
  if(arg_TARGET)
    target_sources(${arg_TARGET} PRIVATE "${output}")
    target_link_libraries(${arg_TARGET} PRIVATE PtbTools::runtime)
  endif()
endfunction()
