// Runs a fuzz target over corpus files or folders (recursively) without libFuzzer, so the
// corpora run as ordinary tests under any compiler and under the sanitizers. Fails when a
// file takes longer than --max-seconds. Exits 77 (ctest: skipped) when no path exists.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  double max_seconds = 10;
  std::vector<fs::path> files;
  bool any_path = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--max-seconds") == 0 && i + 1 < argc) {
      max_seconds = std::atof(argv[++i]);
      continue;
    }
    fs::path p(argv[i]);
    if (fs::is_directory(p)) {
      any_path = true;
      for (auto& e : fs::recursive_directory_iterator(p))
        if (e.is_regular_file()) files.push_back(e.path());
    } else if (fs::is_regular_file(p)) {
      any_path = true;
      files.push_back(p);
    }
  }
  if (!any_path) {
    std::printf("no corpus found: skipped\n");
    return 77;
  }
  std::sort(files.begin(), files.end());
  double slowest = 0;
  std::string slowest_file;
  for (auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), {});
    auto t0 = std::chrono::steady_clock::now();
    LLVMFuzzerTestOneInput(data.data(), data.size());
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s > slowest) slowest = s, slowest_file = f.string();
    if (s > max_seconds) {
      std::printf("FAIL: %s took %.2f s (limit %.1f s)\n", f.c_str(), s, max_seconds);
      return 1;
    }
  }
  std::printf("%zu inputs, none crashed; slowest %.3f s (%s)\n", files.size(), slowest,
              slowest_file.c_str());
  return 0;
}
