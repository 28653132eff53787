# What `cmake --install` puts on a machine, and its Debian package (CPack's DEB generator).
#
# Installed: the `edgemm` CLI and its OpenCV probe helper side by side in bin/ (the helper is found
# beside the running program), edgemm-fetch-ppocr-models (scripts/fetch_ppocr_models.sh: the
# PP-OCRv4 models are not redistributed; the package's users fetch them, sha256-verified), the
# static libraries and the public headers (include/edgemm), README.md and docs/ (the guides link each
# other).
#
# The package: scripts/package_deb.sh runs cpack in a build folder and declares the package's
# Depends from the shared libraries the installed programs link (scripts/deb_depends.py reads the
# shlibs files of the packages that provide them, as dpkg-shlibdeps does: the host's dpkg database
# for amd64, the cached arm64 .debs of the sysroot for arm64); docs/aarch64.md has the commands.
install(TARGETS edgemm edgemm-opencv-probe RUNTIME DESTINATION bin)
install(PROGRAMS scripts/fetch_ppocr_models.sh DESTINATION bin RENAME edgemm-fetch-ppocr-models)
install(TARGETS edgemm_core edgemm_pipelines ARCHIVE DESTINATION lib)
install(DIRECTORY include/edgemm DESTINATION include)
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
