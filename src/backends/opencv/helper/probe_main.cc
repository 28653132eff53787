/// \file probe_main.cc
/// `edgemm-opencv-probe`: the helper the opencv backend spawns to probe OpenCV DNN 4.6 node by
/// node outside edgemm's own process (src/backends/opencv/probe_process.h). Not for people: it
/// reads its jobs from file descriptors 3 and 4, which only ProbeProcess sets up.

#include <sys/stat.h>

#include <cstdio>

#include "backends/opencv/probe_child.h"
#include "backends/opencv/probe_protocol.h"

int main() {
  struct stat socket_stat;
  if (::fstat(edgemm::backends::opencv::kChildSocketFd, &socket_stat) != 0 || !S_ISSOCK(socket_stat.st_mode)) {
    std::fprintf(stderr,
                 "edgemm-opencv-probe: this helper is started by edgemm's opencv backend, which hands it a socket "
                 "on descriptor 3; it is not run by hand\n");
    return 2;
  }
  edgemm::backends::opencv::probe_child_main();
}
