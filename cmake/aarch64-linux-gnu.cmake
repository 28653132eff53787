# CMake toolchain file: cross-build the edgemm core for aarch64 (Debian's g++-aarch64-linux-gnu) and
# run its tests under qemu-user. See docs/aarch64.md; scripts/test_aarch64.sh uses it.
#
# The arm64 libraries (protobuf, onnx, oneDNN, GoogleTest, ...) are unpacked by
# scripts/aarch64_sysroot.sh into EDGEMM_AARCH64_SYSROOT (default <source>/build-aarch64/sysroot), a
# Debian multiarch tree (usr/lib/aarch64-linux-gnu, usr/include). The compiler keeps its own libc and
# libstdc++ headers and link libraries (/usr/aarch64-linux-gnu, from libc6-dev-arm64-cross): Debian's
# cross g++ looks for its C++ headers under the --sysroot once one is given, so CMAKE_SYSROOT is not
# set; CMAKE_FIND_ROOT_PATH re-roots every find_package/find_library/find_path into the sysroot
# instead (the packages' CMake config files compute their prefix from their own location, so the
# imported targets point into the sysroot).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

if(NOT EDGEMM_AARCH64_SYSROOT)
  if(DEFINED ENV{EDGEMM_AARCH64_SYSROOT})
    set(EDGEMM_AARCH64_SYSROOT "$ENV{EDGEMM_AARCH64_SYSROOT}")
  else()
    get_filename_component(EDGEMM_AARCH64_SYSROOT "${CMAKE_CURRENT_LIST_DIR}/../build-aarch64/sysroot" ABSOLUTE)
  endif()
endif()
if(NOT EXISTS "${EDGEMM_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu")
  message(FATAL_ERROR "aarch64 sysroot not found at ${EDGEMM_AARCH64_SYSROOT}: run scripts/aarch64_sysroot.sh")
endif()
# Try-compiles (compiler checks, FindOpenMP) run in their own projects: pass the sysroot on.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES EDGEMM_AARCH64_SYSROOT EDGEMM_QEMU_CPU)

set(CMAKE_FIND_ROOT_PATH "${EDGEMM_AARCH64_SYSROOT}" /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)  # protoc, ccache, bash: the host's
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# The multiarch include folder (jconfig.h), which a native compiler searches
# by default.
set(CMAKE_C_STANDARD_INCLUDE_DIRECTORIES "${EDGEMM_AARCH64_SYSROOT}/usr/include/aarch64-linux-gnu")
set(CMAKE_CXX_STANDARD_INCLUDE_DIRECTORIES "${EDGEMM_AARCH64_SYSROOT}/usr/include/aarch64-linux-gnu")
# pkg-config (polyclipping, ICU): the sysroot's .pc files, their /usr paths prefixed with the sysroot.
set(ENV{PKG_CONFIG_LIBDIR}
    "${EDGEMM_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${EDGEMM_AARCH64_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${EDGEMM_AARCH64_SYSROOT}")
# protoc must be the host binary (the arm64 one needs qemu); the ONNX .pb.h files ship generated.
set(Protobuf_PROTOC_EXECUTABLE /usr/bin/protoc CACHE FILEPATH "host protoc")

# The sysroot's libraries need each other at link time (libprotobuf -> libz, libdnnl -> libgomp):
# let the linker resolve those DT_NEEDED entries inside the sysroot.
set(_edgemm_rpath_link
    "-Wl,-rpath-link,${EDGEMM_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu:${EDGEMM_AARCH64_SYSROOT}/lib/aarch64-linux-gnu:${EDGEMM_AARCH64_SYSROOT}/usr/lib")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${_edgemm_rpath_link}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "${_edgemm_rpath_link}")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "${_edgemm_rpath_link}")

# Tests (ctest, gtest_discover_tests) run through qemu-user (called explicitly: no binfmt_misc);
# -L makes the sysroot the guest's root for the ELF interpreter and the shared libraries
# (/lib/ld-linux-aarch64.so.1, usr/lib/aarch64-linux-gnu). -cpu: the emulated core, by default the
# RK3588's Cortex-A76 (ARMv8.2: asimd, fp16, dotprod; no SVE). qemu's default ("max") has SVE, which
# sends oneDNN down JIT paths that no RK3588 runs. EDGEMM_QEMU_CPU=max (or neoverse-n1, ...) overrides.
find_program(EDGEMM_QEMU_AARCH64 qemu-aarch64 REQUIRED)
if(NOT EDGEMM_QEMU_CPU)
  if(DEFINED ENV{EDGEMM_QEMU_CPU})
    set(EDGEMM_QEMU_CPU "$ENV{EDGEMM_QEMU_CPU}")
  else()
    set(EDGEMM_QEMU_CPU cortex-a76)
  endif()
endif()
set(CMAKE_CROSSCOMPILING_EMULATOR "${EDGEMM_QEMU_AARCH64};-cpu;${EDGEMM_QEMU_CPU};-L;${EDGEMM_AARCH64_SYSROOT}")

# No build RPATH: under `qemu-aarch64 -L <sysroot>` the loader finds the arm64 libraries in the
# sysroot's standard directories (an RPATH into the sysroot would only shadow the cross libgomp).
set(CMAKE_SKIP_BUILD_RPATH ON)
