# Provides the imported target lance::arrow (Arrow C++ core + compute).
#
# A system Arrow (find_package(Arrow)) wins. Otherwise we use the C++ library and
# headers that ship inside the pinned pyarrow wheel: pyarrow.get_include() and
# get_library_dirs(). Those .so files carry only versioned names (libarrow.so.2600),
# so we link them by full path and bake their directory into the RPATH, which
# lets binaries run without LD_LIBRARY_PATH. The wheel is built with the new
# libstdc++ ABI (_GLIBCXX_USE_CXX11_ABI=1), the default of Debian's g++.
find_package(Arrow CONFIG QUIET)
if(Arrow_FOUND)
  message(STATUS "Arrow: system package ${Arrow_VERSION}")
  add_library(lance::arrow INTERFACE IMPORTED)
  find_package(ArrowCompute CONFIG QUIET)
  if(ArrowCompute_FOUND)
    target_link_libraries(lance::arrow INTERFACE Arrow::arrow_shared ArrowCompute::arrow_compute_shared)
  else()
    target_link_libraries(lance::arrow INTERFACE Arrow::arrow_shared)
  endif()
  # s3:// datasets (io/object_store.cc): Arrow built with ARROW_S3.
  find_package(ArrowS3 CONFIG QUIET)
  if(ArrowS3_FOUND)
    target_link_libraries(lance::arrow INTERFACE ArrowS3::arrow_s3_shared)
  endif()
  set(LANCE_ARROW_MODE system)  # the installed config finds it again (LanceInstall.cmake)
  return()
endif()

if(NOT LANCE_PYTHON)
  find_program(LANCE_PYTHON NAMES python3 REQUIRED)
endif()
execute_process(
  COMMAND ${LANCE_PYTHON} -c "import pyarrow as pa; print(pa.get_include()); print(pa.get_library_dirs()[0]); print(pa.cpp_version)"
  OUTPUT_VARIABLE _pa_out RESULT_VARIABLE _pa_rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _pa_rc EQUAL 0)
  message(FATAL_ERROR "No system Arrow C++ and no pyarrow in ${LANCE_PYTHON}; run `make` (it creates .venv)")
endif()
string(REPLACE "\n" ";" _pa_lines "${_pa_out}")
list(GET _pa_lines 0 PYARROW_INCLUDE_DIR)
list(GET _pa_lines 1 PYARROW_LIB_DIR)
list(GET _pa_lines 2 PYARROW_CPP_VERSION)
string(REGEX MATCH "^([0-9]+)\\.([0-9]+)" _m "${PYARROW_CPP_VERSION}")
math(EXPR _so_major "${CMAKE_MATCH_1} * 100 + ${CMAKE_MATCH_2}")
message(STATUS "Arrow: pyarrow wheel ${PYARROW_CPP_VERSION} in ${PYARROW_LIB_DIR}")

add_library(lance::arrow INTERFACE IMPORTED)
target_include_directories(lance::arrow SYSTEM INTERFACE ${PYARROW_INCLUDE_DIR})
# arrow_s3: Arrow's S3 filesystem, a module of its own in the wheel
# (the AWS SDK and its curl are inside it, static, with hidden symbols).
foreach(_lib arrow arrow_compute arrow_s3)
  set(_path ${PYARROW_LIB_DIR}/lib${_lib}.so.${_so_major})
  if(NOT EXISTS ${_path})
    message(FATAL_ERROR "Missing ${_path} in the pyarrow wheel")
  endif()
  target_link_libraries(lance::arrow INTERFACE ${_path})
endforeach()
target_compile_definitions(lance::arrow INTERFACE _GLIBCXX_USE_CXX11_ABI=1)
set(LANCE_ARROW_MODE pyarrow)  # the installed config records these paths (LanceInstall.cmake)
set(LANCE_ARROW_LIBRARIES ${PYARROW_LIB_DIR}/libarrow.so.${_so_major} ${PYARROW_LIB_DIR}/libarrow_compute.so.${_so_major}
    ${PYARROW_LIB_DIR}/libarrow_s3.so.${_so_major})
set(CMAKE_BUILD_RPATH ${PYARROW_LIB_DIR})
set(CMAKE_INSTALL_RPATH ${PYARROW_LIB_DIR})

# Parquet, for the CLI's `write --input x.parquet`: every pyarrow wheel ships it
# (pyarrow.parquet needs it), so its absence means a broken environment.
set(_parquet ${PYARROW_LIB_DIR}/libparquet.so.${_so_major})
if(NOT EXISTS ${_parquet} OR NOT EXISTS ${PYARROW_INCLUDE_DIR}/parquet/arrow/reader.h)
  message(FATAL_ERROR "Missing ${_parquet} or its headers in the pyarrow wheel")
endif()
set(LANCE_PARQUET_LIBRARY ${_parquet})
