# Builds liboptimist.so with SwiftPM and exposes it as the imported target `optimist`
# (alias `Optimist::optimist`).
#
# SwiftPM stays the one source of truth for how the Swift code is compiled: CMake only runs
# `swift build` for the `optimist` product, with a scratch path inside the CMake build tree, and
# copies the result to liboptimist.so.<version> beside its two symlinks. The Swift runtime is
# linked statically (-static-stdlib), so the library loads with no toolchain on the library path.

find_program(SWIFT_EXECUTABLE swift REQUIRED DOC "The swift driver used to build liboptimist.so")

set(OPTIMIST_SONAME "liboptimist.so.${PROJECT_VERSION_MAJOR}")
set(OPTIMIST_LIBRARY_FILE "liboptimist.so.${PROJECT_VERSION}")
set(OPTIMIST_SWIFT_SCRATCH "${CMAKE_BINARY_DIR}/swiftpm" CACHE PATH
    "SwiftPM scratch directory used for liboptimist.so")
set(OPTIMIST_SWIFT_EXTRA_FLAGS "" CACHE STRING
    "Extra arguments appended to `swift build` (a ;-list)")

# Release and RelWithDebInfo (and an unset or multi-config type) build the optimized library.
if(CMAKE_BUILD_TYPE STREQUAL "Debug")
  set(_optimist_swift_config debug)
  set(_optimist_swift_config_flags)
elseif(CMAKE_BUILD_TYPE STREQUAL "RelWithDebInfo")
  set(_optimist_swift_config release)
  set(_optimist_swift_config_flags -Xswiftc -g)
else()
  set(_optimist_swift_config release)
  set(_optimist_swift_config_flags)
endif()
# The C library's optimized builds leave out the runtime's exclusivity bookkeeping: the engine's
# state lives in classes behind the store's locks. Given here, on the command line, not in
# Package.swift: SwiftPM refuses unsafe flags in a package an app adds by URL. The hot classes'
# stored properties opt out in code too (`@exclusivity(unchecked)`, see Engine), so the Swift
# package an app builds costs a tap the same instructions (BENCHMARKS.md, "Exclusivity checks").
# OPTIMIST_EXCLUSIVITY_CHECKS=ON keeps them, to measure what the Swift package's builds pay
# (Benchmarks/callgrind.sh on both libraries).
if(_optimist_swift_config STREQUAL "release" AND NOT OPTIMIST_EXCLUSIVITY_CHECKS)
  list(APPEND _optimist_swift_config_flags -Xswiftc -enforce-exclusivity=unchecked)
endif()
# SwiftPM's full LTO (its option is still named experimental; the compiler side is LLVM's
# ordinary LTO): the modules are compiled to bitcode and optimized together at the link.
if(OPTIMIST_LTO AND _optimist_swift_config STREQUAL "release")
  list(APPEND _optimist_swift_config_flags --experimental-lto-mode=full)
endif()

# Any change to Swift sources, C shims SwiftPM compiles, module maps, the header or the manifest
# rebuilds.
file(GLOB_RECURSE _optimist_swift_inputs CONFIGURE_DEPENDS
     "${PROJECT_SOURCE_DIR}/Sources/*.swift"
     "${PROJECT_SOURCE_DIR}/Sources/*.h"
     "${PROJECT_SOURCE_DIR}/Sources/*.c"
     "${PROJECT_SOURCE_DIR}/Sources/*.modulemap")
# The header is compiled into the Swift code too (the COptimist module).
list(APPEND _optimist_swift_inputs "${PROJECT_SOURCE_DIR}/Package.swift" "${PROJECT_SOURCE_DIR}/Include/optimist.h")

# The linker version script of the C-ABI target keeps every symbol but optimist_* local, so the
# statically linked Swift runtime does not leak into (or clash inside) programs that load us.
set(_optimist_exports_map "${PROJECT_SOURCE_DIR}/Sources/OptimistC/exports.map")
set(_optimist_exports_flags)
if(EXISTS "${_optimist_exports_map}")
  set(_optimist_exports_flags -Xlinker "--version-script=${_optimist_exports_map}")
  list(APPEND _optimist_swift_inputs "${_optimist_exports_map}")
endif()

set(_optimist_swift_product "${OPTIMIST_SWIFT_SCRATCH}/${_optimist_swift_config}/liboptimist.so")
set(OPTIMIST_LIBRARY_PATH "${CMAKE_BINARY_DIR}/${OPTIMIST_LIBRARY_FILE}")

add_custom_command(
  OUTPUT "${OPTIMIST_LIBRARY_PATH}"
  BYPRODUCTS "${CMAKE_BINARY_DIR}/${OPTIMIST_SONAME}" "${CMAKE_BINARY_DIR}/liboptimist.so"
  COMMAND "${SWIFT_EXECUTABLE}" build
          --package-path "${PROJECT_SOURCE_DIR}"
          --scratch-path "${OPTIMIST_SWIFT_SCRATCH}"
          -c ${_optimist_swift_config}
          --product optimist
          -Xswiftc -static-stdlib
          "-Xlinker" "-soname=${OPTIMIST_SONAME}"
          ${_optimist_exports_flags}
          ${_optimist_swift_config_flags}
          ${OPTIMIST_SWIFT_EXTRA_FLAGS}
  COMMAND "${CMAKE_COMMAND}" -E copy "${_optimist_swift_product}" "${OPTIMIST_LIBRARY_PATH}"
  COMMAND "${CMAKE_COMMAND}" -E create_symlink "${OPTIMIST_LIBRARY_FILE}" "${CMAKE_BINARY_DIR}/${OPTIMIST_SONAME}"
  COMMAND "${CMAKE_COMMAND}" -E create_symlink "${OPTIMIST_SONAME}" "${CMAKE_BINARY_DIR}/liboptimist.so"
  DEPENDS ${_optimist_swift_inputs}
  WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
  COMMENT "Building liboptimist.so with SwiftPM (${_optimist_swift_config})"
  USES_TERMINAL
  VERBATIM)
add_custom_target(optimist_swift ALL DEPENDS "${OPTIMIST_LIBRARY_PATH}")

add_library(optimist SHARED IMPORTED GLOBAL)
set_target_properties(optimist PROPERTIES
  IMPORTED_LOCATION "${OPTIMIST_LIBRARY_PATH}"
  IMPORTED_SONAME "${OPTIMIST_SONAME}"
  INTERFACE_INCLUDE_DIRECTORIES "${PROJECT_SOURCE_DIR}/Include")
add_dependencies(optimist optimist_swift)
add_library(Optimist::optimist ALIAS optimist)

# The `optimist` command-line tool, built from the same scratch directory.
include(OptimistCLI)
