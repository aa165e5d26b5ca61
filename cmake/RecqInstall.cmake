# cmake --install rules, exported targets and package files for recq.
#
# Installs the public headers (include/recq), the static libraries recq,
# recq_graph, recq_onnx and recq_engine_file_format (and, with
# RECQ_BUILD_SHARED, one shared librecq holding all four, with a SOVERSION), the recq CLI and the qcom emulation
# layer; recqConfig.cmake + recqConfigVersion.cmake + recqTargets.cmake
# (targets recq::recq, recq::graph, recq::onnx, and recq::shared with
# RECQ_BUILD_SHARED), and recq.pc / recq-onnx.pc for pkg-config.
#
# A consumer:
#   find_package(recq 0.1 CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE recq::recq recq::onnx)
#
# Included at the end of the top-level CMakeLists.txt, after every target.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

option(RECQ_BUILD_SHARED "Also build and install a shared librecq (recq + graph + onnx)" OFF)

# The names targets have inside the tree and in an installed package.
add_library(recq::recq ALIAS recq)
add_library(recq::graph ALIAS recq_graph)
add_library(recq::onnx ALIAS recq_onnx)
set_target_properties(recq PROPERTIES EXPORT_NAME recq)
set_target_properties(recq_graph PROPERTIES EXPORT_NAME graph)
set_target_properties(recq_onnx PROPERTIES EXPORT_NAME onnx)
# The engine-file format library: recq links it (installed because recq's
# exported link interface names it; it has no public header of its own).
set_target_properties(recq_engine_file_format PROPERTIES EXPORT_NAME engine_file_format)
# recq's headers include <CL/cl.h>: consumers get the OpenCL version recq
# was built against (the build tree sets it directory-wide already).
target_compile_definitions(recq_graph INTERFACE $<INSTALL_INTERFACE:CL_TARGET_OPENCL_VERSION=300>)

set(recq_export_targets recq recq_graph recq_onnx recq_engine_file_format)

if(RECQ_BUILD_SHARED)
  # One shared library made of the four static libraries' objects (all
  # compiled position-independent).
  add_library(recq_shared SHARED
    $<TARGET_OBJECTS:recq> $<TARGET_OBJECTS:recq_graph> $<TARGET_OBJECTS:recq_onnx>
    $<TARGET_OBJECTS:recq_engine_file_format>)
  set_target_properties(recq_shared PROPERTIES
    OUTPUT_NAME recq
    EXPORT_NAME shared
    VERSION ${PROJECT_VERSION}.0
    SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
  target_link_libraries(recq_shared
    PUBLIC
      OpenCL::OpenCL absl::status absl::statusor absl::span absl::strings absl::str_format
      absl::flat_hash_map absl::flat_hash_set Threads::Threads
    PRIVATE OpenSSL::Crypto $<BUILD_INTERFACE:recq_onnx_proto>)
  target_link_options(recq_shared PRIVATE ${RECQ_NO_UNDEFINED})
  target_include_directories(recq_shared INTERFACE
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>)
  target_compile_definitions(recq_shared INTERFACE
    $<INSTALL_INTERFACE:CL_TARGET_OPENCL_VERSION=300>)
  add_library(recq::shared ALIAS recq_shared)
  list(APPEND recq_export_targets recq_shared)
endif()

install(TARGETS ${recq_export_targets}
  EXPORT recqTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/recq
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")
install(TARGETS recq_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The layer is loaded by path (OPENCL_LAYERS=<libdir>/libRecqQcomLayer.so).
install(TARGETS recq_qcom_layer LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

set(recq_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/recq)
install(EXPORT recqTargets NAMESPACE recq:: DESTINATION ${recq_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/recqConfig.cmake.in
  ${PROJECT_BINARY_DIR}/recqConfig.cmake
  INSTALL_DESTINATION ${recq_cmake_dir})
# 0.x: a new minor version may break the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/recqConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/recqConfig.cmake ${PROJECT_BINARY_DIR}/recqConfigVersion.cmake
  DESTINATION ${recq_cmake_dir})

# pkg-config files find the prefix relative to themselves, so that
# `cmake --install --prefix DIR` gives working files anywhere.
file(RELATIVE_PATH recq_pc_to_prefix "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
set(RECQ_PC_PREFIX "\${pcfiledir}/${recq_pc_to_prefix}")
foreach(pc recq recq-onnx)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${pc}.pc.in ${PROJECT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
