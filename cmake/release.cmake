# The release tarball: `cmake --build build --target package` writes
# warpforge-VERSION-linux-x86_64.tar.gz holding, under warpforge-VERSION-linux-x86_64/:
#   bin/warpforge   stripped; RPATH $ORIGIN/../lib as DT_RPATH, which also covers the bundled
#                   libraries' own dependencies (a DT_RUNPATH would not)
#   lib/            every shared library bin/warpforge loads except glibc's and the GPU driver's
#                   (libcuda comes with the driver on a GPU machine), plus NVRTC's builtins
#   python/         the exporter as a wheel (pip wheel python/)
#   licenses/       the Debian copyright file of each bundled library's package; a note for
#                   libraries from elsewhere (the CUDA toolkit's)
# Extracted anywhere, `env -i bin/warpforge ...` runs: nothing is looked up in the environment.
# Included from the top-level CMakeLists.txt after every target is defined.
set_target_properties(warpforge PROPERTIES INSTALL_RPATH "\$ORIGIN/../lib")
target_link_options(warpforge PRIVATE "LINKER:--disable-new-dtags")
install(TARGETS warpforge RUNTIME DESTINATION bin)

find_package(Python3 COMPONENTS Interpreter QUIET)
set(WF_RELEASE_EXTRA_LIBS "")
if(TARGET CUDA::nvrtc)
  find_library(WF_NVRTC_BUILTINS NAMES nvrtc-builtins HINTS ${CUDAToolkit_LIBRARY_DIR})
  if(WF_NVRTC_BUILTINS)
    set(WF_RELEASE_EXTRA_LIBS "${WF_NVRTC_BUILTINS}")
  endif()
endif()
install(CODE "
  set(WF_RELEASE_EXE \"$<TARGET_FILE:warpforge>\")
  set(WF_RELEASE_EXTRA_LIBS \"${WF_RELEASE_EXTRA_LIBS}\")
  set(WF_RELEASE_PYTHON \"${Python3_EXECUTABLE}\")
  set(WF_RELEASE_SOURCE \"${PROJECT_SOURCE_DIR}\")
")
install(CODE [[
  # The dependencies of the build-tree binary, whose RPATH still names every library directory.
  file(GET_RUNTIME_DEPENDENCIES
    EXECUTABLES "${WF_RELEASE_EXE}"
    RESOLVED_DEPENDENCIES_VAR wf_deps
    UNRESOLVED_DEPENDENCIES_VAR wf_missing
    PRE_EXCLUDE_REGEXES "^ld-linux" "^libc\\.so" "^libm\\.so" "^libdl\\.so" "^libpthread\\.so" "^librt\\.so"
                        "^libresolv\\.so" "^libcuda\\.so" "^linux-vdso")
  if(wf_missing)
    message(FATAL_ERROR "release: bin/warpforge needs libraries that were not found: ${wf_missing}")
  endif()
  set(wf_root "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}")
  file(MAKE_DIRECTORY "${wf_root}/lib" "${wf_root}/licenses")
  foreach(dep IN LISTS wf_deps WF_RELEASE_EXTRA_LIBS)
    if(NOT dep)
      continue()
    endif()
    file(INSTALL "${dep}" DESTINATION "${wf_root}/lib" FOLLOW_SYMLINK_CHAIN)
    # dpkg knows each file under one spelling: try the path as found, resolved, and across the
    # merged-/usr link (/lib -> /usr/lib).
    file(REAL_PATH "${dep}" real)
    string(REGEX REPLACE "^/usr/lib/" "/lib/" short "${real}")
    string(REGEX REPLACE "^/lib/" "/usr/lib/" long "${real}")
    set(rc 1)
    foreach(candidate IN ITEMS "${dep}" "${real}" "${short}" "${long}")
      if(NOT rc EQUAL 0)
        execute_process(COMMAND dpkg -S "${candidate}" OUTPUT_VARIABLE owner ERROR_QUIET RESULT_VARIABLE rc)
      endif()
    endforeach()
    get_filename_component(name "${dep}" NAME)
    if(rc EQUAL 0)
      string(REGEX REPLACE ":.*" "" owner "${owner}")
      string(STRIP "${owner}" owner)
      if(EXISTS "/usr/share/doc/${owner}/copyright")
        configure_file("/usr/share/doc/${owner}/copyright" "${wf_root}/licenses/${owner}.copyright" COPYONLY)
      endif()
    else()
      file(WRITE "${wf_root}/licenses/${name}.txt"
           "${dep}: not from a Debian package; its vendor's licence applies (the CUDA toolkit EULA for CUDA libraries).\n")
    endif()
  endforeach()
  execute_process(COMMAND "${WF_RELEASE_PYTHON}" -m pip wheel --no-deps --no-build-isolation -q
                          -w "${wf_root}/python" "${WF_RELEASE_SOURCE}/python"
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "release: pip wheel python/ failed")
  endif()
]])

set(CPACK_GENERATOR "TGZ")
set(CPACK_PACKAGE_NAME "warpforge")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_FILE_NAME "warpforge-${PROJECT_VERSION}-linux-x86_64")
set(CPACK_STRIP_FILES TRUE)
include(CPack)
