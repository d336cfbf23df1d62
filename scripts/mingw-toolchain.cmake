# CMake toolchain file: cross-compile for 64-bit Windows with Debian's
# mingw-w64 (gcc-mingw-w64-x86-64-win32, win32 thread model).
# Used by scripts/build-deps.sh; usable by hand:
#   MINGW_DEPS_PREFIX=$PWD/build/deps/win cmake -DCMAKE_TOOLCHAIN_FILE=scripts/mingw-toolchain.cmake ...
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

set(MINGW_TRIPLE x86_64-w64-mingw32)
set(CMAKE_C_COMPILER   ${MINGW_TRIPLE}-gcc)
# No g++ is installed (not needed); only projects that enable CXX would care.
set(CMAKE_CXX_COMPILER ${MINGW_TRIPLE}-g++)
set(CMAKE_RC_COMPILER  ${MINGW_TRIPLE}-windres)

# Search the mingw sysroot, plus our deps prefix when given in the environment
# (environment, not a cache variable, so try_compile projects see it too).
set(CMAKE_FIND_ROOT_PATH /usr/${MINGW_TRIPLE})
if(DEFINED ENV{MINGW_DEPS_PREFIX})
  list(APPEND CMAKE_FIND_ROOT_PATH $ENV{MINGW_DEPS_PREFIX})
endif()
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
