# cmake -DSOURCE_DIR=<tree> -DTEMPLATE=<.cpp.in> -DOUTPUT=<.cpp> -DVERSION=<x.y.z> -P WriteBuildVersion.cmake
# Run on every build (not only at configure time, so a commit made since is
# seen), it writes OUTPUT only when its text changes: an unchanged commit
# recompiles nothing, a new one recompiles one small file and relinks.
# The commit is `git rev-parse --short=12 HEAD`, with "-dirty" when tracked
# files differ from it (untracked ones do not count), or "unknown" when
# SOURCE_DIR is not the top of a git checkout (a tarball unpacked inside some
# other repository must not borrow that repository's commit).
set(commit "unknown")
find_program(GIT git)
if(GIT)
  execute_process(COMMAND ${GIT} -C ${SOURCE_DIR} rev-parse --show-toplevel
                  OUTPUT_VARIABLE top OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE not_git ERROR_QUIET)
  if(NOT not_git)
    get_filename_component(top "${top}" REALPATH)
    get_filename_component(source "${SOURCE_DIR}" REALPATH)
  endif()
  if(NOT not_git AND top STREQUAL source)
    execute_process(COMMAND ${GIT} -C ${SOURCE_DIR} rev-parse --short=12 HEAD
                    OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE failed ERROR_QUIET)
    if(NOT failed AND head MATCHES "^[0-9a-f]+$")
      set(commit "${head}")
      # --no-optional-locks: a build must never hold the index lock under a
      # `git commit` running beside it.
      execute_process(COMMAND ${GIT} -C ${SOURCE_DIR} --no-optional-locks status --porcelain --untracked-files=no
                      OUTPUT_VARIABLE changes RESULT_VARIABLE failed ERROR_QUIET)
      if(NOT failed AND NOT changes STREQUAL "")
        string(APPEND commit "-dirty")
      endif()
    endif()
  endif()
endif()
set(TRIBUTARY_VERSION_NUMBER "${VERSION}")
set(TRIBUTARY_VERSION_COMMIT "${commit}")
configure_file(${TEMPLATE} ${OUTPUT} @ONLY)
