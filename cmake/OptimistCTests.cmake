# optimist_c_test(NAME SOURCES src... [LIBS lib...] [TSAN])
#
# Builds a C test against Optimist::optimist and registers it as CTest test c.NAME. With
# OPTIMIST_SANITIZERS it also builds and registers c.NAME.asan (AddressSanitizer +
# UndefinedBehaviorSanitizer, any UB report fatal) and, for TSAN tests, c.NAME.tsan
# (ThreadSanitizer). The Swift library itself stays uninstrumented: the sanitizers watch the C
# side of every call, which is where misuse of the ABI would show.

set(OPTIMIST_TEST_WARNINGS -Wall -Wextra -Werror)
set(OPTIMIST_ASAN_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined
                        -fno-omit-frame-pointer -g -O1)
set(OPTIMIST_TSAN_FLAGS -fsanitize=thread -fno-omit-frame-pointer -g -O1)
# Leak checking stays on: the Swift runtime's own allocations are reachable at exit and not
# reported; anything the tests leak is. Suppressions live beside the tests.
set(OPTIMIST_ASAN_ENV
    "ASAN_OPTIONS=abort_on_error=0:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1"
    "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/Tests/C/sanitizers/lsan.supp:print_suppressions=0"
    "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
set(OPTIMIST_TSAN_ENV
    "TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=${PROJECT_SOURCE_DIR}/Tests/C/sanitizers/tsan.supp")

# Adds one executable variant: flags are compile and link options.
function(_optimist_test_variant target sources libs flags)
  add_executable(${target} ${sources})
  target_link_libraries(${target} PRIVATE ${libs})
  target_compile_options(${target} PRIVATE ${OPTIMIST_TEST_WARNINGS} ${flags})
  target_link_options(${target} PRIVATE ${flags})
endfunction()

function(optimist_c_test name)
  cmake_parse_arguments(T "TSAN" "" "SOURCES;LIBS" ${ARGN})
  set(libs Optimist::optimist ${T_LIBS})
  _optimist_test_variant(${name} "${T_SOURCES}" "${libs}" "")
  add_test(NAME c.${name} COMMAND ${name})
  if(OPTIMIST_SANITIZERS)
    _optimist_test_variant(${name}_asan "${T_SOURCES}" "${libs}" "${OPTIMIST_ASAN_FLAGS}")
    add_test(NAME c.${name}.asan COMMAND ${name}_asan)
    set_tests_properties(c.${name}.asan PROPERTIES ENVIRONMENT "${OPTIMIST_ASAN_ENV}")
    if(T_TSAN)
      _optimist_test_variant(${name}_tsan "${T_SOURCES}" "${libs}" "${OPTIMIST_TSAN_FLAGS}")
      add_test(NAME c.${name}.tsan
               COMMAND bash "${PROJECT_SOURCE_DIR}/Tests/C/sanitizers/run-tsan.sh" $<TARGET_FILE:${name}_tsan>)
      set_tests_properties(c.${name}.tsan PROPERTIES ENVIRONMENT "${OPTIMIST_TSAN_ENV}")
    endif()
  endif()
endfunction()
