# Runs PROGRAM with ARGS (a space-separated string) and writes its standard output to OUTPUT;
# fails the build, showing its standard error, when it exits non-zero. The build renders the man
# pages this way: `shardctl help --man`, `shardproxy --help-man`.
#
#   cmake -DPROGRAM=... -DARGS="help --man" -DOUTPUT=.../shardctl.1 -P capture_output.cmake
separate_arguments(args UNIX_COMMAND "${ARGS}")
execute_process(COMMAND "${PROGRAM}" ${args} OUTPUT_FILE "${OUTPUT}.tmp"
                ERROR_VARIABLE errors RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  file(REMOVE "${OUTPUT}.tmp")
  message(FATAL_ERROR "${PROGRAM} ${ARGS} failed (${status}): ${errors}")
endif()
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
