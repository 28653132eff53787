# What `cmake --install` puts on a machine, and its Debian package (CPack's DEB generator).
#
# Installed: the `edgemm` CLI and its OpenCV probe helper side by side in bin/ (the helper is found
# beside the running program), edgemm-fetch-ppocr-models (scripts/fetch_ppocr_models.sh: the
# PP-OCRv4 models are not redistributed; the package's users fetch them, sha256-verified), the
# libraries (static, or shared with BUILD_SHARED_LIBS=ON), the public headers (include/edgemm),
# the CMake package (lib/cmake/edgemm: find_package(edgemm), target edgemm::edgemm) and
# lib/pkgconfig/edgemm.pc, README.md and docs/ (the guides link each other).
#
# The package: scripts/package_deb.sh runs cpack in a build folder and declares the package's
# Depends from the shared libraries the installed programs link (scripts/deb_depends.py reads the
# shlibs files of the packages that provide them, as dpkg-shlibdeps does: the host's dpkg database
# for amd64, the cached arm64 .debs of the sysroot for arm64); docs/aarch64.md has the commands.
install(TARGETS edgemm edgemm-opencv-probe RUNTIME DESTINATION bin)
install(PROGRAMS scripts/fetch_ppocr_models.sh DESTINATION bin RENAME edgemm-fetch-ppocr-models)
# The libraries, each as edgemm::<layer> (edgemm::session, edgemm::pipelines, ...), and edgemm::edgemm:
# the runtime plus the pipelines, what a program that loads models and runs OCR, CLIP or VLM links.
add_library(edgemm_api INTERFACE)
target_link_libraries(edgemm_api INTERFACE edgemm_pipelines)
set_target_properties(edgemm_api PROPERTIES EXPORT_NAME edgemm)
set(EDGEMM_INSTALLED_LAYERS core ir kernels runtime passes backends session convert quant targets pipelines bench capi)
foreach(layer IN LISTS EDGEMM_INSTALLED_LAYERS)
  set_target_properties(edgemm_${layer} PROPERTIES EXPORT_NAME ${layer})  # edgemm::capi is libedgemm_c
  list(APPEND EDGEMM_INSTALLED_TARGETS edgemm_${layer})
endforeach()
install(TARGETS ${EDGEMM_INSTALLED_TARGETS} edgemm_api EXPORT edgemmTargets ARCHIVE DESTINATION lib
        LIBRARY DESTINATION lib)
install(EXPORT edgemmTargets NAMESPACE edgemm:: DESTINATION lib/cmake/edgemm)
include(CMakePackageConfigHelpers)
configure_package_config_file(cmake/edgemmConfig.cmake.in ${CMAKE_BINARY_DIR}/edgemmConfig.cmake
                              INSTALL_DESTINATION lib/cmake/edgemm)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/edgemmConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/edgemmConfig.cmake ${CMAKE_BINARY_DIR}/edgemmConfigVersion.cmake
              cmake/edgemm_dependencies.cmake cmake/opencv_modules.cmake DESTINATION lib/cmake/edgemm)
# pkg-config: edgemm (the same libraries as edgemm::edgemm; --static adds the dependencies).
list(REVERSE EDGEMM_INSTALLED_LAYERS)
list(REMOVE_ITEM EDGEMM_INSTALLED_LAYERS capi convert quant targets bench)
list(TRANSFORM EDGEMM_INSTALLED_LAYERS PREPEND "-ledgemm_" OUTPUT_VARIABLE EDGEMM_PC_LIBS)
list(JOIN EDGEMM_PC_LIBS " " EDGEMM_PC_LIBS)
configure_file(cmake/edgemm.pc.in ${CMAKE_BINARY_DIR}/edgemm.pc @ONLY)
# edgemm-c: the C API (libedgemm_c) for C programs, which also need the C++ runtime when static.
configure_file(cmake/edgemm-c.pc.in ${CMAKE_BINARY_DIR}/edgemm-c.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/edgemm.pc ${CMAKE_BINARY_DIR}/edgemm-c.pc DESTINATION lib/pkgconfig)
install(DIRECTORY include/edgemm DESTINATION include)
# The NPU target profiles and recipes (`edgemm inspect --target`, `edgemm convert --target`),
# found by an installed edgemm in <prefix>/share/edgemm/platforms.
install(DIRECTORY platforms DESTINATION share/edgemm)
install(FILES README.md DESTINATION share/doc/edgemm)
install(DIRECTORY docs/ DESTINATION share/doc/edgemm/docs FILES_MATCHING PATTERN "*.md")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME edgemm)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "edgemm developers <edgemm@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "deploy multimodal models (OCR, CLIP, small VLMs) on edge CPUs")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "edgemm loads ONNX models, optimizes and quantizes them and runs them through one runtime,\n\
and chains them into pipelines (PP-OCRv4 OCR, CLIP retrieval, VQA). The edgemm command line,\n\
its static libraries and headers. PP-OCRv4 models: edgemm-fetch-ppocr-models DIR.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # edgemm_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# edgemm-fetch-ppocr-models downloads with npm, curl or wget.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "curl | wget | npm")
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
else()
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE amd64)
endif()
include(CPack)
