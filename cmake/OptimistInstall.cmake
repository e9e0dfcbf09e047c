# install() rules for what outside programs rely on (docs/c-guide.md):
#   include/optimist.h
#   lib/liboptimist.so.X.Y.Z, lib/liboptimist.so.X, lib/liboptimist.so
#   lib/pkgconfig/optimist.pc
#   lib/cmake/Optimist/OptimistConfig.cmake, OptimistConfigVersion.cmake
#
# The library is an imported file, not a CMake-built target, so there is no install(EXPORT):
# OptimistConfig.cmake is hand-written and recreates the imported target relative to its own
# install location, which keeps the whole prefix relocatable.
include(CMakePackageConfigHelpers)

set(OPTIMIST_CMAKE_INSTALL_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/Optimist")

install(FILES "${PROJECT_SOURCE_DIR}/Include/optimist.h"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")

# The real file, then the symlinks (installed as symlinks, not copies).
install(FILES "${OPTIMIST_LIBRARY_PATH}"
        DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                    WORLD_READ WORLD_EXECUTE)
install(FILES "${CMAKE_BINARY_DIR}/${OPTIMIST_SONAME}" "${CMAKE_BINARY_DIR}/liboptimist.so"
        DESTINATION "${CMAKE_INSTALL_LIBDIR}")

# pkg-config: the prefix is only known at install time (`cmake --install --prefix P` may
# override it), so the file is configured twice: now for everything but the prefix, which is
# left as the placeholder @OPTIMIST_PC_PREFIX@, and again by the install step (into a directory
# per prefix, so two installs to different prefixes can run at once).
set(OPTIMIST_PC_PREFIX "@OPTIMIST_PC_PREFIX@")
configure_file("${PROJECT_SOURCE_DIR}/cmake/optimist.pc.in"
               "${CMAKE_BINARY_DIR}/optimist.pc.template" @ONLY)
install(CODE "
  string(MD5 _optimist_prefix_hash \"\${CMAKE_INSTALL_PREFIX}\")
  set(_optimist_pc_dir \"${CMAKE_BINARY_DIR}/pkgconfig-installed/\${_optimist_prefix_hash}\")
  set(OPTIMIST_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  configure_file(\"${CMAKE_BINARY_DIR}/optimist.pc.template\" \"\${_optimist_pc_dir}/optimist.pc\" @ONLY)
  file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig\"
       TYPE FILE FILES \"\${_optimist_pc_dir}/optimist.pc\")
")

set(OPTIMIST_INSTALL_LIBRARY "${CMAKE_INSTALL_LIBDIR}/${OPTIMIST_LIBRARY_FILE}")
configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/OptimistConfig.cmake.in"
  "${CMAKE_BINARY_DIR}/OptimistConfig.cmake"
  INSTALL_DESTINATION "${OPTIMIST_CMAKE_INSTALL_DIR}"
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR OPTIMIST_INSTALL_LIBRARY)
write_basic_package_version_file(
  "${CMAKE_BINARY_DIR}/OptimistConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY SameMajorVersion)
install(FILES "${CMAKE_BINARY_DIR}/OptimistConfig.cmake"
              "${CMAKE_BINARY_DIR}/OptimistConfigVersion.cmake"
        DESTINATION "${OPTIMIST_CMAKE_INSTALL_DIR}")
