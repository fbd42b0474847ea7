# Reads the versions pinned in scripts/deps.lock (shell syntax) into CMake variables.
file(STRINGS "${CMAKE_CURRENT_LIST_DIR}/deps.lock" _factlens_deps REGEX "^[A-Z0-9_]+=")
foreach(_line IN LISTS _factlens_deps)
  string(REGEX MATCH "^([A-Z0-9_]+)=(.*)$" _ "${_line}")
  set(${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
endforeach()
