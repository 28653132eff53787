# The OpenCV 4 modules edgemm links (core, imgproc, imgcodecs: the pipelines; dnn: the bench and the
# "opencv" backend) as imported targets named as OpenCV's own CMake package names them (opencv_core,
# ...), with OpenCV_INCLUDE_DIRS and OpenCV_LIBS (core, imgproc, imgcodecs).
#
# Found per module, not through OpenCVConfig.cmake: Debian ships that file only in libopencv-dev,
# which depends on every OpenCV module (video, highgui, contrib, ...), and its target file fails when
# any module's library is missing. The aarch64 sysroot (scripts/aarch64_sysroot.sh) unpacks only the
# four modules' -dev packages; the x86 build finds the same files the same way.
include_guard(GLOBAL)
find_path(OpenCV_INCLUDE_DIR opencv2/core.hpp PATH_SUFFIXES opencv4 REQUIRED)
set(OpenCV_INCLUDE_DIRS "${OpenCV_INCLUDE_DIR}")
foreach(module core imgproc imgcodecs dnn)
  find_library(OpenCV_${module}_LIBRARY opencv_${module} REQUIRED)
  add_library(opencv_${module} SHARED IMPORTED)
  set_target_properties(opencv_${module} PROPERTIES IMPORTED_LOCATION "${OpenCV_${module}_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${OpenCV_INCLUDE_DIRS}")
endforeach()
target_link_libraries(opencv_imgproc INTERFACE opencv_core)
target_link_libraries(opencv_imgcodecs INTERFACE opencv_imgproc)
target_link_libraries(opencv_dnn INTERFACE opencv_imgproc)
set(OpenCV_LIBS opencv_core opencv_imgproc opencv_imgcodecs)
