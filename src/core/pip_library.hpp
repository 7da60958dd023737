// Finding NVIDIA's libraries where PyPI's wheels put them (site-packages/nvidia/...), for the
// libraries stoker opens at run time (nvJPEG, nvCOMP): `pip install stoker[cuda]` installs them
// beside stoker, and a system CUDA is found first.
#pragma once

#include <string>
#include <vector>

namespace stoker {

// The paths to try for a library, in order: `env`'s value (when set), the plain `soname`
// (the system's, through the loader's search path), then `site_relative` (e.g.
// "nvidia/cu13/lib/libnvjpeg.so.13") under the site-packages beside stoker's own library, and
// under the running interpreter's and $VIRTUAL_ENV's site-packages.
std::vector<std::string> pip_library_candidates(const char* env, const std::string& soname,
                                                const std::string& site_relative);

// dlopen()s the first candidate that loads; nullptr when none does.
void* open_pip_library(const std::vector<std::string>& candidates);

}  // namespace stoker
