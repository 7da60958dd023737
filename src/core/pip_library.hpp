// Finding NVIDIA's libraries where PyPI's wheels put them (site-packages/nvidia/...), for the
// libraries stoker opens at run time (nvJPEG, nvCOMP): `pip install stoker[cuda]` installs them
// beside stoker, and a system CUDA is found first.
#pragma once

#include <functional>
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
// dlopen()s the candidates in turn and keeps the first that `accept` takes (it returns "" for
// one it takes, else why not: missing entry points, another version; the others are closed), so
// that an older system copy does not hide a usable one from PyPI. nullptr when none is taken,
// with `why` the last refusal (or "" when none loaded).
void* open_pip_library_checked(const std::vector<std::string>& candidates,
                               const std::function<std::string(void*)>& accept, std::string& why);

// `sym` of `lib` (a dlopen handle) into `fn`, typed as `fn` is; a missing one sets `error` to
// "<libname> lacks <sym>" (the first that is missing: the library is unusable).
void* pip_library_symbol(void* lib, const char* sym);
template <typename Fn>
void resolve_symbol(void* lib, Fn& fn, const char* sym, const char* libname, std::string& error) {
  fn = reinterpret_cast<Fn>(pip_library_symbol(lib, sym));
  if (!fn && error.empty()) error = std::string(libname) + " lacks " + sym;
}

// Whether a library opened at run time (`load_error`: why it did not load, empty when it did)
// serves a device: it loaded and CUDA sees a device. Otherwise `why` says why not.
bool runtime_library_usable(const std::string& load_error, std::string* why);

}  // namespace stoker
