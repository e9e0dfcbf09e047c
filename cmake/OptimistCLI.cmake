# Builds the `optimist` command-line tool (SwiftPM executable target `optimist-cli`, sources in
# Sources/OptimistCLI) and installs it as PREFIX/bin/optimist, beside the library.
#
# Included by OptimistSwiftLibrary.cmake, whose SwiftPM scratch directory, configuration and
# inputs it shares: the tool's modules (OptimistCore) are compiled once for both. SwiftPM runs
# one build at a time in a scratch directory, so this step waits for the library's.
# Like the library, the tool links the Swift runtime statically: it runs with no toolchain
# installed (it needs only the system's libsqlite3).

set(OPTIMIST_CLI_PATH "${CMAKE_BINARY_DIR}/bin/optimist")
set(_optimist_cli_product "${OPTIMIST_SWIFT_SCRATCH}/${_optimist_swift_config}/optimist-cli")

add_custom_command(
  OUTPUT "${OPTIMIST_CLI_PATH}"
  COMMAND "${SWIFT_EXECUTABLE}" build
          --package-path "${PROJECT_SOURCE_DIR}"
          --scratch-path "${OPTIMIST_SWIFT_SCRATCH}"
          -c ${_optimist_swift_config}
          --product optimist-cli
          -Xswiftc -static-stdlib
          ${_optimist_swift_config_flags}
          ${OPTIMIST_SWIFT_EXTRA_FLAGS}
  COMMAND "${CMAKE_COMMAND}" -E make_directory "${CMAKE_BINARY_DIR}/bin"
  COMMAND "${CMAKE_COMMAND}" -E copy "${_optimist_cli_product}" "${OPTIMIST_CLI_PATH}"
  DEPENDS ${_optimist_swift_inputs} "${OPTIMIST_LIBRARY_PATH}"
  WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
  COMMENT "Building the optimist tool with SwiftPM (${_optimist_swift_config})"
  USES_TERMINAL
  VERBATIM)
add_custom_target(optimist_cli ALL DEPENDS "${OPTIMIST_CLI_PATH}")

install(PROGRAMS "${OPTIMIST_CLI_PATH}" DESTINATION "${CMAKE_INSTALL_BINDIR}")
