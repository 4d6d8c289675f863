# write_completion.cmake: writes OUTPUT from `GSMOOTH --completion SHELL`, whole or not at all (run by the build: cmake -P).
foreach(var GSMOOTH SHELL OUTPUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "write_completion.cmake: -D${var}= is required")
  endif()
endforeach()
get_filename_component(dir "${OUTPUT}" DIRECTORY)
file(MAKE_DIRECTORY "${dir}")
# A temporary beside the output, renamed into place only when gsmooth succeeded, so a
# failed run leaves no partial script for the next build to take as current.
execute_process(COMMAND "${GSMOOTH}" --completion "${SHELL}"
  OUTPUT_FILE "${OUTPUT}.tmp" RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  file(REMOVE "${OUTPUT}.tmp")
  message(FATAL_ERROR "gsmooth --completion ${SHELL} failed (${rc}): ${err}")
endif()
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
