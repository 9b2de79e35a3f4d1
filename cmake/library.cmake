# The models as an installable C++ library: a shared libheteroreason_models built from
# the objects of cosim_models (the Verilated KVMU inside it when it was built), its
# headers under include/heteroreason/, and a CMake package, heteroreason::models.
# Included from the top CMakeLists.txt after cosim_models is defined.
# In the Python wheel (scikit-build) the same layout goes under the package, at cosim/_cpp/
# (lib/, include/heteroreason/, lib/cmake/heteroreason_models/): that folder is the prefix
# cosim.cmake_prefix() returns. The package config finds its files relative to itself.
if(SKBUILD)
  set(CMAKE_INSTALL_LIBDIR cosim/_cpp/lib)
  set(CMAKE_INSTALL_INCLUDEDIR cosim/_cpp/include)
  set(CMAKE_INSTALL_BINDIR cosim/_cpp/bin)
endif()
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# One version, the package's (pyproject.toml).
file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/pyproject.toml _cosim_version_line REGEX "^version *= *\"")
string(REGEX REPLACE "^version *= *\"([0-9.]+)\".*" "\\1" HETEROREASON_MODELS_VERSION "${_cosim_version_line}")

# The headers are installed flat into one directory, so their own quoted includes
# ("power.hpp", "cosim_params.hpp") find each other there; two of the same name in
# different source folders would overwrite one another, so that stops the configure.
# The RTL transactor's headers stay private: nothing public includes them.
file(GLOB_RECURSE _cosim_public_headers CONFIGURE_DEPENDS
     ${CMAKE_CURRENT_SOURCE_DIR}/models/*.hpp)
list(FILTER _cosim_public_headers EXCLUDE REGEX "/models/rtl/")
list(APPEND _cosim_public_headers ${COSIM_GENERATED}/cosim_params.hpp)
set(_cosim_header_names)
foreach(header ${_cosim_public_headers})
  get_filename_component(name ${header} NAME)
  if(name IN_LIST _cosim_header_names)
    message(FATAL_ERROR "two public headers named ${name}: the installed include/heteroreason/ is flat")
  endif()
  list(APPEND _cosim_header_names ${name})
endforeach()

# The same layout inside the build tree, so tests and examples built here include
# <heteroreason/...> as a consumer does.
set(_cosim_staged_dir ${CMAKE_CURRENT_BINARY_DIR}/include/heteroreason)
set(_cosim_staged_headers)
foreach(header ${_cosim_public_headers})
  get_filename_component(name ${header} NAME)
  add_custom_command(OUTPUT ${_cosim_staged_dir}/${name}
    COMMAND ${CMAKE_COMMAND} -E copy_if_different ${header} ${_cosim_staged_dir}/${name}
    DEPENDS ${header} VERBATIM)
  list(APPEND _cosim_staged_headers ${_cosim_staged_dir}/${name})
endforeach()

# The shared library holds every object of the static one (whole archive): one compile
# of each source serves the Python extension and the C++ library.
add_library(heteroreason_models SHARED ${_cosim_staged_headers})
set_target_properties(heteroreason_models PROPERTIES LINKER_LANGUAGE CXX)
if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.24)
  target_link_libraries(heteroreason_models PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,cosim_models>")
else()
  target_link_libraries(heteroreason_models PRIVATE -Wl,--whole-archive cosim_models -Wl,--no-whole-archive)
endif()
target_link_libraries(heteroreason_models PUBLIC PkgConfig::SYSTEMC)
target_include_directories(heteroreason_models PUBLIC
  "$<BUILD_INTERFACE:${CMAKE_CURRENT_BINARY_DIR}/include>"
  "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")
set_target_properties(heteroreason_models PROPERTIES
  EXPORT_NAME models
  VERSION ${HETEROREASON_MODELS_VERSION}
  SOVERSION 0
  # Its one dependency, libsystemc, is on the system's library path: no rpath once installed.
  INSTALL_RPATH "")
if(COSIM_SANITIZE)
  # The objects carry the sanitizers' calls; whatever links them needs their runtimes.
  target_link_options(heteroreason_models PUBLIC -fsanitize=address,undefined)
endif()
# The same name inside this build as in a consumer's (tests, examples built in tree).
add_library(heteroreason::models ALIAS heteroreason_models)

# For processes without an sc_main that host the kernel themselves (cppyy, pysystemc):
# embed/no_sc_main.cpp says why it exists.
add_library(heteroreason_embed SHARED embed/no_sc_main.cpp)
set_target_properties(heteroreason_embed PROPERTIES EXPORT_NAME embed VERSION ${HETEROREASON_MODELS_VERSION}
                      SOVERSION 0)
add_library(heteroreason::embed ALIAS heteroreason_embed)

install(TARGETS heteroreason_models heteroreason_embed EXPORT heteroreason_modelsTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${_cosim_public_headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/heteroreason)

get_target_property(_cosim_definitions cosim_models INTERFACE_COMPILE_DEFINITIONS)
if("COSIM_HAVE_RTL_KVMU" IN_LIST _cosim_definitions)
  set(COSIM_HAVE_RTL_KVMU_VALUE ON)
else()
  set(COSIM_HAVE_RTL_KVMU_VALUE OFF)
endif()
set(_cosim_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/heteroreason_models)
install(EXPORT heteroreason_modelsTargets NAMESPACE heteroreason:: DESTINATION ${_cosim_cmake_dir})
configure_package_config_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/heteroreason_modelsConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/heteroreason_modelsConfig.cmake INSTALL_DESTINATION ${_cosim_cmake_dir})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/heteroreason_modelsConfigVersion.cmake
  VERSION ${HETEROREASON_MODELS_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/heteroreason_modelsConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/heteroreason_modelsConfigVersion.cmake
        DESTINATION ${_cosim_cmake_dir})
