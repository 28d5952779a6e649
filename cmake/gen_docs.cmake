# Writes the man pages (each also gzipped, as the packages install them) and the completion
# scripts by running the built binaries, so they come from the same option tables as --help
# (cli/command_doc.h). Run by the target iotail_docs.
# Inputs (-D): IOTAIL (the iotail binary), IOTAIL_MPI (iotail-mpi, or empty), OUT (a directory).
file(MAKE_DIRECTORY ${OUT}/man ${OUT}/completion)
function(generate output)
  execute_process(COMMAND ${ARGN} OUTPUT_FILE ${OUT}/${output}.tmp RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "generating ${output}: '${ARGN}' exited with ${rc}")
  endif()
  file(RENAME ${OUT}/${output}.tmp ${OUT}/${output})
  # A man page also compressed as Debian installs them (gzip -9n: best compression, no name or
  # time stamp in the header, so the same page gives the same bytes).
  if(output MATCHES "^man/")
    execute_process(COMMAND gzip -9nc ${OUT}/${output} OUTPUT_FILE ${OUT}/${output}.gz.tmp
                    RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "compressing ${output}: gzip exited with ${rc}")
    endif()
    file(RENAME ${OUT}/${output}.gz.tmp ${OUT}/${output}.gz)
  endif()
endfunction()
generate(man/iotail.1 ${IOTAIL} --help=man)
foreach(command run sweep pctiles merge compare plot)
  generate(man/iotail-${command}.1 ${IOTAIL} ${command} --help=man)
endforeach()
generate(completion/iotail ${IOTAIL} completion bash)
generate(completion/_iotail ${IOTAIL} completion zsh)
if(IOTAIL_MPI)
  generate(man/iotail-mpi.1 ${IOTAIL_MPI} --help=man)
endif()
