# recq_add_gtests(target [SHARDS n] [PREFIX prefix] [FILTER filter]
#                 [TIMEOUT seconds] [RUN_SERIAL] [FIXTURES_SETUP name]
#                 [ENVIRONMENT VAR=value ...]
#                 [ENVIRONMENT_MODIFICATION VAR=op:value ...])
#
# Registers the GoogleTest binary `target` with ctest as `n` entries (1 by
# default), each running every n-th case of the binary in one process
# (GoogleTest's GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX), instead of one
# process per case as gtest_discover_tests does. Every case still runs once
# and reports: on the entry's output ("[ RUN ]", "[ OK ]", "[ FAILED ]",
# "[ SKIPPED ]"), which ctest --output-on-failure prints for a failed entry,
# and in a JUnit XML file per entry under <build>/test-results/.
#
# The entries are named "<prefix><target>" (one shard) or
# "<prefix><target>.<i>of<n>" (i from 1). To run a few cases, run the binary
# itself with --gtest_filter (docs/testing.md).
#
# FILTER is a --gtest_filter expression the entries run (default: all).
# ENVIRONMENT, ENVIRONMENT_MODIFICATION, RUN_SERIAL and FIXTURES_SETUP
# become the entries' test properties of those names (the shard variables
# are added to ENVIRONMENT). TIMEOUT defaults to 1500 s, ctest's own
# default: an entry holds many cases, and the per-test default of
# scripts/test.sh (--timeout 600) is for one.
function(recq_add_gtests target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "RUN_SERIAL" "SHARDS;PREFIX;FILTER;TIMEOUT;FIXTURES_SETUP"
                        "ENVIRONMENT;ENVIRONMENT_MODIFICATION")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "recq_add_gtests(${target}): unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_SHARDS)
    set(arg_SHARDS 1)
  endif()
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 1500)
  endif()
  set(filter_arg)
  if(arg_FILTER)
    set(filter_arg "--gtest_filter=${arg_FILTER}")
  endif()
  set(results_dir ${PROJECT_BINARY_DIR}/test-results)
  math(EXPR last "${arg_SHARDS} - 1")
  foreach(index RANGE ${last})
    math(EXPR number "${index} + 1")
    if(arg_SHARDS EQUAL 1)
      set(name ${arg_PREFIX}${target})
    else()
      set(name ${arg_PREFIX}${target}.${number}of${arg_SHARDS})
    endif()
    add_test(NAME ${name}
             COMMAND $<TARGET_FILE:${target}> ${filter_arg}
                     --gtest_output=xml:${results_dir}/${name}.xml
             WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
    set_tests_properties(${name} PROPERTIES TIMEOUT ${arg_TIMEOUT})
    set_property(TEST ${name} PROPERTY ENVIRONMENT ${arg_ENVIRONMENT}
                 "GTEST_TOTAL_SHARDS=${arg_SHARDS}" "GTEST_SHARD_INDEX=${index}")
    if(arg_ENVIRONMENT_MODIFICATION)
      set_property(TEST ${name} PROPERTY ENVIRONMENT_MODIFICATION
                   ${arg_ENVIRONMENT_MODIFICATION})
    endif()
    if(arg_FIXTURES_SETUP)
      set_tests_properties(${name} PROPERTIES FIXTURES_SETUP ${arg_FIXTURES_SETUP})
    endif()
    if(arg_RUN_SERIAL)
      set_tests_properties(${name} PROPERTIES RUN_SERIAL TRUE)
    endif()
    set_property(TEST ${name} APPEND PROPERTY LABELS gtest ${target})
  endforeach()
endfunction()
