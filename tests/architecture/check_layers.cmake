# The layer rules of docs/architecture.md, checked on the sources (run by ctest as
# `architecture: include arrows point down`): a layer includes the public headers of the
# layers below it only, and no front end (apps/) includes a plugin API header or any header of
# the plugin host (ompdbg/plugins/...): the front ends see plugins through the model
# (libdebugger) only (issue 19). libdebugger's public headers (libdebugger/include) include
# none of those either, so that no front end reaches a plugin type through them: what only
# the model's own files need lives in libdebugger/src.
#
#   cmake -DSOURCE_DIR=<repository> -P check_layers.cmake
cmake_minimum_required(VERSION 3.25)

# Each layer: its folder and the ompdbg/<lib>/ headers it may include (itself and below).
set(layers base libdwarfview libtracer plugins-host libdebugger apps)
set(allowed_base base)
set(allowed_libdwarfview base dwarf)
set(allowed_libtracer base dwarf tracer)
set(allowed_plugins-host base dwarf tracer plugins)
set(allowed_libdebugger base dwarf tracer plugins debugger)
set(allowed_apps base dwarf tracer debugger)
# ompdbg/agent/agent_abi.h: the layout of the in-target agent's control block and bytecode
# (agent/, issue 21), plain C declarations without code: every layer may include it.
foreach(layer IN LISTS layers)
  list(APPEND allowed_${layer} agent)
endforeach()

# Plugin API headers (OMPD's omp-tools.h, DMPL, MPI2DD): below the model only.
set(plugin_api_headers "omp-tools.h" "ompdbg/plugins/dmpl.h" "ompdbg/tracer/mpi2dd.h")

set(problems "")
foreach(layer IN LISTS layers)
  file(GLOB_RECURSE files RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/${layer}/*.hpp ${SOURCE_DIR}/${layer}/*.cpp
       ${SOURCE_DIR}/${layer}/*.h ${SOURCE_DIR}/${layer}/*.c)
  foreach(file IN LISTS files)
    file(STRINGS ${SOURCE_DIR}/${file} includes REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]*)[>\"].*" "\\1" header "${line}")
      if(header MATCHES "^ompdbg/([a-z_]+)/")
        set(lib ${CMAKE_MATCH_1})
        if(layer STREQUAL "apps" AND lib STREQUAL "plugins")
          string(APPEND problems "${file}: includes ${header}, the plugin host; go through ompdbg::debugger\n")
        elseif(NOT lib IN_LIST allowed_${layer})
          string(APPEND problems "${file}: includes ${header}, a layer above ${layer}\n")
        endif()
      endif()
      if(file MATCHES "^libdebugger/include/" AND (header MATCHES "^ompdbg/plugins/" OR header IN_LIST plugin_api_headers))
        string(APPEND problems "${file}: a public header of the model includes ${header}, of the plugin host; "
                               "move what needs it to libdebugger/src\n")
      endif()
      if(layer STREQUAL "apps" AND header IN_LIST plugin_api_headers)
        string(APPEND problems "${file}: includes the plugin API header ${header}; go through ompdbg::debugger\n")
      endif()
    endforeach()
  endforeach()
endforeach()

if(problems)
  message(FATAL_ERROR "include arrows that point up:\n${problems}")
endif()
