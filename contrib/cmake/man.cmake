# Writes the man page the built binary prints (dsforge __man) to OUT:
#   cmake -DDSFORGE=path/to/dsforge -DOUT=dsforge.1 -P man.cmake
execute_process(COMMAND ${DSFORGE} __man OUTPUT_FILE ${OUT}.tmp
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dsforge __man failed: ${rc}")
endif()
file(RENAME ${OUT}.tmp ${OUT})
