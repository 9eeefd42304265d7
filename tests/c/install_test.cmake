# ctest's lance_install_test (cmake -P): installs BUILD_DIR into a temporary
# prefix, builds the programs of SOURCE_DIR against it with
# find_package(LanceCpp) and with pkg-config, runs them, checks their output.
# Under the sanitizers the consumers are built with them too (liblance.so
# then needs their runtime).
cmake_minimum_required(VERSION 3.22)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(OUT "${out}" PARENT_SCOPE)
endfunction()

function(expect text regex what)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "${what}: output\n${text}\ndoes not match ${regex}")
  endif()
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

foreach(f include/lance/lance_c.h include/lance/dataset.h lib/liblance.so
          lib/cmake/LanceCpp/LanceCppConfig.cmake lib/cmake/LanceCpp/LanceCppConfigVersion.cmake
          lib/cmake/LanceCpp/LanceCppTargets.cmake lib/pkgconfig/lance-cpp.pc)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "cmake --install did not install ${f}")
  endif()
endforeach()

set(san_flags "")
if(SANITIZE)
  set(san_flags "-fsanitize=address,undefined -fno-omit-frame-pointer")
elseif(SANITIZE_THREAD)
  set(san_flags "-fsanitize=thread -fno-omit-frame-pointer")
endif()

# 1. find_package(LanceCpp)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/cmake-build -G Ninja
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    "-DCMAKE_C_FLAGS=${san_flags}" "-DCMAKE_CXX_FLAGS=${san_flags}"
    "-DCMAKE_EXE_LINKER_FLAGS=${san_flags}")
run(${CMAKE_COMMAND} --build ${WORK_DIR}/cmake-build)
run(${WORK_DIR}/cmake-build/consumer_cpp ${WORK_DIR}/a.lance)
expect("${OUT}" "^cpp: wrote 10 rows, version 1\n$" "find_package consumer_cpp")
run(${WORK_DIR}/cmake-build/consumer_c ${WORK_DIR}/a.lance)
expect("${OUT}" "^c: 5 of 10 rows at version 1; open\\(NULL\\): Invalid\n$" "find_package consumer_c")

# 2. pkg-config
find_program(PKG_CONFIG NAMES pkg-config pkgconf REQUIRED)
set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
run(${PKG_CONFIG} --cflags lance-cpp)
separate_arguments(cflags UNIX_COMMAND "${OUT}")
run(${PKG_CONFIG} --libs lance-cpp)
separate_arguments(libs UNIX_COMMAND "${OUT}")
separate_arguments(san UNIX_COMMAND "${san_flags}")
# The prefix is not a system directory: the consumer says where liblance is.
run(${C_COMPILER} -std=c99 ${san} ${cflags} ${SOURCE_DIR}/consumer.c -o ${WORK_DIR}/pc_c ${libs}
    -Wl,-rpath,${prefix}/lib)
run(${CXX_COMPILER} -std=c++20 ${san} ${cflags} ${SOURCE_DIR}/consumer.cc -o ${WORK_DIR}/pc_cpp ${libs}
    -Wl,-rpath,${prefix}/lib)
run(${WORK_DIR}/pc_cpp ${WORK_DIR}/b.lance)
expect("${OUT}" "^cpp: wrote 10 rows, version 1\n$" "pkg-config consumer_cpp")
run(${WORK_DIR}/pc_c ${WORK_DIR}/b.lance)
expect("${OUT}" "^c: 5 of 10 rows at version 1; open\\(NULL\\): Invalid\n$" "pkg-config consumer_c")
# Each reads what the other build wrote.
run(${WORK_DIR}/pc_c ${WORK_DIR}/a.lance)
expect("${OUT}" "^c: 5 of 10 rows" "pkg-config consumer_c on the find_package dataset")

file(REMOVE_RECURSE ${WORK_DIR})
message(STATUS "install test passed")
