# Warnings and sanitizers for the project's own targets (not for examples or plugins
# that must look like third-party code).
function(ompdbg_target_defaults target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
  if(OMPDBG_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${OMPDBG_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
    target_link_options(${target} PRIVATE -fsanitize=${OMPDBG_SANITIZE})
  endif()
  if(OMPDBG_FUZZ)
    # -Werror is the gcc build's: clang's own diagnostics (unused constants, libstdc++'s
    # deprecated get_temporary_buffer under std::stable_sort) must not stop `make fuzz`.
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link -Wno-error -Wno-deprecated-declarations)
  endif()
endfunction()

# Sources of a library are globbed so that adding a file needs no CMakeLists edit.
function(ompdbg_glob_sources out dir)
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${dir}/*.cpp)
  set(${out} ${srcs} PARENT_SCOPE)
endfunction()

# Programs that the debugger is tested on must be built with several compilers, which a
# single CMake project cannot select per target, so they are built with custom commands.
#
#   ompdbg_program(NAME SOURCES a.c [b.c] [LANG C|CXX] [COMPILERS gcc clang]
#                  [DWARF 4 5] [OPT 0 2] [FLAGS ...] [LIBS ...] [OUTDIR dir]
#                  [DEPENDS header...])
#
# builds NAME-<compiler>-dwarf<V>-O<N> for every combination into OUTDIR (default: the
# current binary dir; rebuilt when a source or a DEPENDS file changes), and an alias NAME (gcc, DWARF 5, -O0) for the demo and quick tests.
set(OMPDBG_GCC gcc)
set(OMPDBG_GXX g++)
find_program(OMPDBG_CLANG NAMES clang-19 REQUIRED)
find_program(OMPDBG_CLANGXX NAMES clang++-19 REQUIRED)
add_custom_target(ompdbg_programs ALL)

function(ompdbg_program name)
  cmake_parse_arguments(P "" "LANG;OUTDIR" "SOURCES;COMPILERS;DWARF;OPT;FLAGS;LIBS;DEPENDS" ${ARGN})
  if(NOT P_LANG)
    set(P_LANG C)
  endif()
  if(NOT P_COMPILERS)
    set(P_COMPILERS gcc clang)
  endif()
  if(NOT P_DWARF)
    set(P_DWARF 4 5)
  endif()
  if(NOT P_OPT)
    set(P_OPT 0)
  endif()
  if(NOT P_OUTDIR)
    set(P_OUTDIR ${CMAKE_CURRENT_BINARY_DIR})
  endif()
  set(srcs)
  foreach(s IN LISTS P_SOURCES)
    list(APPEND srcs ${CMAKE_CURRENT_SOURCE_DIR}/${s})
  endforeach()
  set(outputs)
  foreach(cc IN LISTS P_COMPILERS)
    if(cc STREQUAL "gcc")
      if(P_LANG STREQUAL "CXX")
        set(driver ${OMPDBG_GXX})
      else()
        set(driver ${OMPDBG_GCC})
      endif()
    else()
      if(P_LANG STREQUAL "CXX")
        set(driver ${OMPDBG_CLANGXX})
      else()
        set(driver ${OMPDBG_CLANG})
      endif()
    endif()
    foreach(dw IN LISTS P_DWARF)
      foreach(opt IN LISTS P_OPT)
        set(out ${P_OUTDIR}/${name}-${cc}-dwarf${dw}-O${opt})
        add_custom_command(OUTPUT ${out}
          COMMAND ${driver} -gdwarf-${dw} -O${opt} -fno-omit-frame-pointer ${P_FLAGS}
                  -o ${out} ${srcs} ${P_LIBS}
          DEPENDS ${srcs} ${P_DEPENDS}
          COMMENT "program ${name}-${cc}-dwarf${dw}-O${opt}"
          VERBATIM)
        list(APPEND outputs ${out})
      endforeach()
    endforeach()
  endforeach()
  # The plain name: gcc (or the first compiler), DWARF 5, first optimisation level.
  list(GET P_COMPILERS 0 first_cc)
  list(GET P_OPT 0 first_opt)
  list(GET P_DWARF -1 last_dw)
  set(alias_out ${P_OUTDIR}/${name})
  add_custom_command(OUTPUT ${alias_out}
    COMMAND ${CMAKE_COMMAND} -E copy ${P_OUTDIR}/${name}-${first_cc}-dwarf${last_dw}-O${first_opt} ${alias_out}
    DEPENDS ${P_OUTDIR}/${name}-${first_cc}-dwarf${last_dw}-O${first_opt}
    VERBATIM)
  list(APPEND outputs ${alias_out})
  add_custom_target(program_${name} DEPENDS ${outputs})
  add_dependencies(ompdbg_programs program_${name})
endfunction()
