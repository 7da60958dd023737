#include "stoker/core/pip_library.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

#include "stoker/core/memory.hpp"

namespace stoker {

std::vector<std::string> pip_library_candidates(const char* env, const std::string& soname,
                                                const std::string& site_relative) {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  if (const char* v = env ? std::getenv(env) : nullptr; v && *v) names.emplace_back(v);
  names.push_back(soname);
  // site-packages/stoker/_stoker.so (or stoker.libs/...): its site-packages is two folders up.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&pip_library_candidates), &info) && info.dli_fname)
    names.push_back((fs::path(info.dli_fname).parent_path().parent_path() / site_relative));
  std::error_code ec;
  std::vector<fs::path> prefixes{
      fs::read_symlink("/proc/self/exe", ec).parent_path().parent_path()};
  if (const char* venv = std::getenv("VIRTUAL_ENV"); venv && *venv) prefixes.emplace_back(venv);
  for (const fs::path& prefix : prefixes)
    for (const auto& e : fs::directory_iterator(prefix / "lib", ec))
      if (e.path().filename().string().rfind("python3", 0) == 0)
        names.push_back((e.path() / "site-packages" / site_relative).string());
  return names;
}

void* open_pip_library(const std::vector<std::string>& candidates) {
  for (const auto& name : candidates)
    if (void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return lib;
  return nullptr;
}

void* open_pip_library_checked(const std::vector<std::string>& candidates,
                               const std::function<std::string(void*)>& accept, std::string& why) {
  why.clear();
  for (const auto& name : candidates) {
    void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) continue;
    why = accept(lib);
    if (why.empty()) return lib;
    dlclose(lib);
  }
  return nullptr;
}

void* pip_library_symbol(void* lib, const char* sym) { return dlsym(lib, sym); }

bool runtime_library_usable(const std::string& load_error, std::string* why) {
  const std::string reason = !load_error.empty() ? load_error
                             : !cuda_available() ? std::string("no CUDA device")
                                                 : std::string();
  if (why) *why = reason;
  return reason.empty();
}

}  // namespace stoker
