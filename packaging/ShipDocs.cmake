# cmake -DSOURCE_DIR=<tree> -DOUTPUT_DIR=<dir> -DDOC_DIR=<installed doc dir> -P ShipDocs.cmake
#
# The README and docs/*.md as the package ships them (README.md and docs/ under DOC_DIR), their
# relative links rewritten for the package: the docs link to files of the source tree, and the
# package holds some of them elsewhere (the units in /usr/lib/systemd/system, the alerting rules in
# /usr/share/tributary/prometheus, the cron example in DOC_DIR/examples) and the rest not at all
# (tests/, tools/...). A link to a file the package holds points at it as installed (relative
# within DOC_DIR, else absolute); a link to one it does not hold becomes plain text that names the
# file in the source tree. Links to other docs, their anchors and web addresses are kept as they
# are. packaging/tests/check-package checks that every link of the shipped docs resolves.
cmake_minimum_required(VERSION 3.16)

# Source-tree path -> installed path, for the files the package holds outside DOC_DIR's own
# copy of the tree (README.md, docs/*.md, docs/images/*).
function(installed_path repo_path out)
  set(result "")
  if(repo_path MATCHES "^packaging/systemd/(.+)$")
    set(result "/usr/lib/systemd/system/${CMAKE_MATCH_1}")
  elseif(repo_path STREQUAL "packaging/prometheus/tributary-alerts.yml")
    set(result "/usr/share/tributary/prometheus/tributary-alerts.yml")
  elseif(repo_path STREQUAL "packaging/examples/tributary.cron")
    set(result "${DOC_DIR}/examples/tributary.cron")
  elseif(repo_path STREQUAL "README.md" OR repo_path MATCHES "^docs/[^/]+\\.md$"
         OR repo_path MATCHES "^docs/images/[^/]+\\.png$")
    set(result "${DOC_DIR}/${repo_path}")
  endif()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

function(ship_doc repo_path)
  file(READ "${SOURCE_DIR}/${repo_path}" text)
  get_filename_component(repo_dir "${repo_path}" DIRECTORY)
  get_filename_component(shipped_dir "${DOC_DIR}/${repo_path}" DIRECTORY)
  # [text](target): the text has no ']' and the target no ')' or space (as the docs write them).
  string(REGEX MATCHALL "\\[[^]\n]*\\]\\([^) \n]+\\)" links "${text}")
  list(REMOVE_DUPLICATES links)
  foreach(link IN LISTS links)
    string(REGEX MATCH "^\\[([^]\n]*)\\]\\(([^)#]*)(#[^)]*)?\\)$" _ "${link}")
    set(label "${CMAKE_MATCH_1}")
    set(target "${CMAKE_MATCH_2}")
    set(anchor "${CMAKE_MATCH_3}")
    if(target STREQUAL "" OR target MATCHES "^[a-z]+:" OR target MATCHES "^/")
      continue()  # an anchor in the same file, a web address, an absolute path
    endif()
    get_filename_component(absolute "${SOURCE_DIR}/${repo_dir}/${target}" ABSOLUTE)
    file(RELATIVE_PATH target_repo_path "${SOURCE_DIR}" "${absolute}")
    installed_path("${target_repo_path}" installed)
    if(installed STREQUAL "")
      set(replacement "${label} (`${target_repo_path}` in tributary's source tree)")
    elseif(installed MATCHES "^${DOC_DIR}/")
      file(RELATIVE_PATH relative "${shipped_dir}" "${installed}")
      set(replacement "[${label}](${relative}${anchor})")
    else()
      set(replacement "[${label}](${installed}${anchor})")
    endif()
    string(REPLACE "${link}" "${replacement}" text "${text}")
  endforeach()
  file(WRITE "${OUTPUT_DIR}/${repo_path}.new" "${text}")
  file(RENAME "${OUTPUT_DIR}/${repo_path}.new" "${OUTPUT_DIR}/${repo_path}")
endfunction()

file(MAKE_DIRECTORY "${OUTPUT_DIR}/docs")
file(GLOB docs RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/docs/*.md")
foreach(doc IN ITEMS README.md ${docs})
  ship_doc("${doc}")
endforeach()
