# How hbmsim builds fast on a 2-core machine (issue 43; bench/README.md has the
# measurements behind each choice). Everything here changes how the tree is
# compiled, never what it computes.
#
#   Release is -O2      CMake's Release default is -O3, which cost 25% more
#                       compile time for no measured replay speed; the hot
#                       loops that gain from -O3 ask for it (trace/pickle).
#   ccache              when installed (HBMSIM_CCACHE): a rebuild after a
#                       branch switch or a clean costs the changed files only.
#   mold, then lld      link 60 test programs in seconds (HBMSIM_LINKER).
#   precompiled headers one for the libraries, one for the tests
#                       (HBMSIM_PCH): a translation unit is ~200,000 lines
#                       after preprocessing, 60% of them the standard library,
#                       and parsing them was half of each compile.
#   unity builds        (HBMSIM_UNITY) each target's sources compiled 16 at
#                       a time (HBMSIM_UNITY_BATCH), so nearly every library
#                       and test program is one translation unit: the
#                       templates they share (absl, fmt, json, gtest) are
#                       instantiated and optimised once a batch instead of once
#                       a file (16 instead of 8 took a fifth off the tree's
#                       compile CPU). A one-file edit rebuilds its batch:
#                       -DHBMSIM_UNITY=OFF for a tight edit loop. Names in
#                       anonymous namespaces must be unique within a target.
#   test code at -O0    the test programs' own sources (never the libraries
#                       they test, which do the work) are half of what the
#                       test command compiles and run little: -O0 in every
#                       build (HBMSIM_TEST_CODE_OPT; the tests' precompiled
#                       header follows, as it must match them), and without
#                       libFuzzer's coverage in the sanitizer build (only the
#                       code a fuzz target reaches needs it; the tests would
#                       pay for it at every comparison they make).
include_guard(GLOBAL)
include(CheckLinkerFlag)

option(HBMSIM_CCACHE "Compile through ccache when it is installed" ON)
option(HBMSIM_PCH "Precompile the standard, absl, fmt and json headers" ON)
option(HBMSIM_UNITY "Compile each target's sources in batches (unity build)" ON)
set(HBMSIM_UNITY_BATCH 16 CACHE STRING "Sources per unity batch (HBMSIM_UNITY)")
if(HBMSIM_UNITY)
  set(CMAKE_UNITY_BUILD ON)
  set(CMAKE_UNITY_BUILD_BATCH_SIZE ${HBMSIM_UNITY_BATCH})
endif()
set(HBMSIM_TEST_CODE_OPT "auto" CACHE STRING
    "Optimisation of the test programs' own sources: auto (-O0 in Release and RelWithDebInfo), none (the build type's), or a flag such as -O2")
# hbmsim_test_code_options(TARGET): TARGET is test code (a gtest program or the
# tests' precompiled header); compile it at HBMSIM_TEST_CODE_OPT.
function(hbmsim_test_code_options target)
  set(flag ${HBMSIM_TEST_CODE_OPT})
  if(flag STREQUAL "auto")
    if(CMAKE_BUILD_TYPE MATCHES "^(Release|RelWithDebInfo)$")
      set(flag -O0)
    else()
      set(flag none)
    endif()
  endif()
  if(NOT flag STREQUAL "none")
    # After the build type's own -O, so it is the one that counts.
    target_compile_options(${target} PRIVATE ${flag})
  endif()
  if(HBMSIM_FUZZ)
    target_compile_options(${target} PRIVATE -fno-sanitize=fuzzer-no-link)
  endif()
endfunction()
set(HBMSIM_LINKER "auto" CACHE STRING "Linker: auto (mold, then lld, then the default), mold, lld or default")

# -O2, not -O3, unless the user chose their own Release flags.
if(CMAKE_CXX_FLAGS_RELEASE STREQUAL "-O3 -DNDEBUG")
  set(CMAKE_CXX_FLAGS_RELEASE "-O2 -DNDEBUG" CACHE STRING "Flags used by the compiler in Release builds." FORCE)
endif()

if(HBMSIM_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(HBMSIM_CCACHE_PROGRAM ccache)
  if(HBMSIM_CCACHE_PROGRAM)
    set(CMAKE_CXX_COMPILER_LAUNCHER ${HBMSIM_CCACHE_PROGRAM})
  endif()
endif()

function(hbmsim_choose_linker)
  set(candidates ${HBMSIM_LINKER})
  if(HBMSIM_LINKER STREQUAL "auto")
    set(candidates mold lld)
  elseif(HBMSIM_LINKER STREQUAL "default")
    return()
  endif()
  foreach(linker ${candidates})
    string(MAKE_C_IDENTIFIER "HBMSIM_HAS_LD_${linker}" flag_var)
    check_linker_flag(CXX "-fuse-ld=${linker}" ${flag_var})
    if(${flag_var})
      add_link_options(-fuse-ld=${linker})
      message(STATUS "hbmsim: linking with ${linker}")
      return()
    endif()
  endforeach()
  if(NOT HBMSIM_LINKER STREQUAL "auto")
    message(FATAL_ERROR "HBMSIM_LINKER=${HBMSIM_LINKER}: the compiler cannot link with it (-fuse-ld=${HBMSIM_LINKER})")
  endif()
endfunction()
hbmsim_choose_linker()

# One compiled header serves every library and one every test. gcc uses a
# precompiled header only when the code model and every macro it saw are the
# same as when it was made, so:
#  - every object is -fPIC (the Python module links the static libraries; an
#    executable's objects would otherwise be -fPIE and miss the header), and
#  - every library links hbm_common (fmt's FMT_SHARED), every test also gtest.
# CMake adds -Winvalid-pch, so gcc says so if a target ever misses its header.
add_compile_options(-fPIC)
# gcc 12 reports -Warray-bounds, -Wstringop-overflow and -overread inside libstdc++'s
# string operator+ once the standard headers come from a precompiled header
# (the inlined locations lose their system-header mark): the false positives
# of GCC bugs 105329 and 105651, 30 of them in this tree, none in our code.
# The sanitizer build (clang) checks bounds at run time.
if(HBMSIM_PCH AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  add_compile_options(-Wno-array-bounds -Wno-stringop-overflow -Wno-stringop-overread)
endif()
add_library(hbm_common INTERFACE)
target_link_libraries(hbm_common INTERFACE fmt::fmt)

set(hbmsim_pch_headers
  <algorithm> <array> <cstdint> <cstdio> <cstdlib> <cstring> <fstream> <functional> <limits> <map>
  <memory> <optional> <set> <sstream> <string> <string_view> <utility> <variant> <vector>
  <absl/status/status.h> <absl/status/statusor.h> <absl/container/flat_hash_map.h>
  <absl/container/btree_map.h> <fmt/format.h> <nlohmann/json.hpp>)

# hbmsim_pch_target(NAME HEADERS... [LIBS...]): the target that compiles one
# header set; the others reuse it.
function(hbmsim_pch_target name)
  cmake_parse_arguments(P "" "" "HEADERS;LIBS" ${ARGN})
  set(source ${CMAKE_BINARY_DIR}/${name}.cc)
  file(CONFIGURE OUTPUT ${source} CONTENT "// The translation unit that carries ${name}'s precompiled header.\n")
  add_library(${name} OBJECT ${source})
  target_link_libraries(${name} PUBLIC hbm_common ${P_LIBS})
  if(HBMSIM_PCH)
    target_precompile_headers(${name} PRIVATE ${hbmsim_pch_headers} ${P_HEADERS})
  endif()
endfunction()

# hbmsim_use_pch(TARGET PCH_TARGET): TARGET compiles with PCH_TARGET's header.
function(hbmsim_use_pch target pch)
  target_link_libraries(${target} PRIVATE hbm_common)
  if(HBMSIM_PCH)
    target_precompile_headers(${target} REUSE_FROM ${pch})
  endif()
endfunction()
