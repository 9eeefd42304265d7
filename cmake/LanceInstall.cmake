# `cmake --install build --prefix P`: the public headers, liblance.so (the C++
# API and the C ABI of lance_c.h), the CLI, a CMake package
# (find_package(LanceCpp) -> LanceCpp::lance) and a pkg-config file
# (lance-cpp.pc). Both find Arrow as the build did: a system Arrow through its
# own CMake package / pkg-config file, else the pyarrow wheel's libraries at
# the paths this build used (recorded; the consumer needs that wheel there).
include(CMakePackageConfigHelpers)

set(LANCE_CMAKE_DIR lib/cmake/LanceCpp)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/lance DESTINATION include FILES_MATCHING PATTERN "*.h")
install(TARGETS lance_shared EXPORT LanceCppTargets
  LIBRARY DESTINATION lib ARCHIVE DESTINATION lib RUNTIME DESTINATION bin)
install(TARGETS lance-cpp RUNTIME DESTINATION bin)
install(EXPORT LanceCppTargets NAMESPACE LanceCpp:: DESTINATION ${LANCE_CMAKE_DIR})

if(LANCE_ARROW_MODE STREQUAL "pyarrow")
  set(LANCE_PC_REQUIRES "")
  set(LANCE_PC_ARROW_CFLAGS "-I${PYARROW_INCLUDE_DIR} -D_GLIBCXX_USE_CXX11_ABI=1")
  list(JOIN LANCE_ARROW_LIBRARIES " " _libs)
  set(LANCE_PC_ARROW_LIBS "${_libs} -Wl,-rpath,${PYARROW_LIB_DIR}")
else()
  set(LANCE_PC_REQUIRES "arrow arrow-compute")
  set(LANCE_PC_ARROW_CFLAGS "")
  set(LANCE_PC_ARROW_LIBS "")
endif()
configure_file(${CMAKE_SOURCE_DIR}/cmake/install/LanceCppConfig.cmake.in
               ${CMAKE_BINARY_DIR}/install/LanceCppConfig.cmake @ONLY)
configure_file(${CMAKE_SOURCE_DIR}/cmake/install/lance-cpp.pc.in
               ${CMAKE_BINARY_DIR}/install/lance-cpp.pc @ONLY)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/install/LanceCppConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/install/LanceCppConfig.cmake
              ${CMAKE_BINARY_DIR}/install/LanceCppConfigVersion.cmake
        DESTINATION ${LANCE_CMAKE_DIR})
install(FILES ${CMAKE_BINARY_DIR}/install/lance-cpp.pc DESTINATION lib/pkgconfig)
