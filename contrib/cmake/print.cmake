# Writes what the built binary prints for ARGS (a ;-list, e.g. "__man" or
# "completion;bash") to OUT, replacing OUT only when the run succeeded:
#   cmake -DDSFORGE=path/to/dsforge "-DARGS=completion;bash" -DOUT=f -P print.cmake
execute_process(COMMAND ${DSFORGE} ${ARGS} OUTPUT_FILE ${OUT}.tmp
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(REMOVE ${OUT}.tmp)
  message(FATAL_ERROR "dsforge ${ARGS} failed: ${rc}")
endif()
file(RENAME ${OUT}.tmp ${OUT})
