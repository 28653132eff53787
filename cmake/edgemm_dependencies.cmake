# The third-party packages edgemm's libraries link, found the same way by the build
# (CMakeLists.txt) and by programs that use an installed edgemm (edgemmConfig.cmake includes this
# file from <prefix>/lib/cmake/edgemm). All are Debian packages (scripts/setup.sh lists them).
find_package(Protobuf REQUIRED)
find_package(ONNX REQUIRED)
find_package(dnnl REQUIRED)
find_package(OpenMP REQUIRED)
find_package(Threads REQUIRED)
find_package(nlohmann_json REQUIRED)
include(${CMAKE_CURRENT_LIST_DIR}/opencv_modules.cmake)
find_package(PkgConfig REQUIRED)
pkg_check_modules(POLYCLIPPING REQUIRED IMPORTED_TARGET polyclipping)
# ICU (Debian libicu-dev): Unicode normalization, case mapping and regex for the tokenizers (src/pipelines/text).
pkg_check_modules(ICU REQUIRED IMPORTED_TARGET icu-uc icu-i18n)
# libjpeg(-turbo) (Debian libjpeg-dev): checks a JPEG's entropy data, which OpenCV decodes past (jpeg_check.h).
find_package(JPEG REQUIRED)
