#include "stoker/ops/io/file_read.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "stoker/ops/operator.hpp"
#include "stoker/readers/data_file.hpp"

namespace stoker::ops {
namespace {

constexpr const char* kOp = "io.file.read";
std::string sys_error() { return std::strerror(errno); }

// A file descriptor closed with its owner (files stay open between the two passes, as DALI's
// do: sizes first, then the reads into the batch).
struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(Fd&& o) noexcept : fd(o.fd) { o.fd = -1; }
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd, o.fd);
    return *this;
  }
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

void pread_all(int fd, uint8_t* out, size_t size, const std::string& path) {
  size_t done = 0;
  while (done < size) {
    const ssize_t r = ::pread(fd, out + done, size - done, off_t(done));
    if (r < 0 && errno == EINTR) continue;
    STOKER_ENFORCE(r >= 0, IOError, kOp, ": reading '", path, "' failed: ", sys_error());
    STOKER_ENFORCE(r > 0, IOError, kOp, ": '", path, "' ended after ", done, " of ", size,
                   " bytes (it changed while being read)");
    done += size_t(r);
  }
}

// Through an O_DIRECT descriptor (the page cache bypassed) into an aligned bounce buffer, or
// false where the file system refuses O_DIRECT.
bool read_direct(const std::string& path, uint8_t* out, size_t size) {
  const size_t padded =
      (size + readers::kDirectAlign - 1) / readers::kDirectAlign * readers::kDirectAlign;
  std::unique_ptr<uint8_t, decltype(&std::free)> buf(
      static_cast<uint8_t*>(std::aligned_alloc(readers::kDirectAlign, padded)), &std::free);
  STOKER_ENFORCE(buf != nullptr, RuntimeError, kOp, ": out of memory reading '", path, "'");
  if (!readers::read_direct(path, buf.get(), size)) return false;
  std::memcpy(out, buf.get(), size);
  return true;
}

class FileRead final : public Operator {
 public:
  explicit FileRead(const OpSpec& spec)
      : Operator(spec),
        mmap_(!spec.arg<bool>("dont_use_mmap")),
        direct_(spec.arg<bool>("use_o_direct")) {}

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    STOKER_ENFORCE(in.dtype() == DType::kU8 || in.dtype() == DType::kI8, TypeError, kOp,
                   ": the file paths must be uint8 or int8 tensors (each path's UTF-8 bytes), "
                   "got ",
                   dtype_name(in.dtype()));
    std::vector<std::string> paths(static_cast<size_t>(n));
    std::vector<Fd> files(static_cast<size_t>(n));
    std::vector<TensorShape> shapes(static_cast<size_t>(n));
    for_each_sample(ws, n, [&](int i, int) {
      const TensorShape& s = in.shape(i);
      STOKER_ENFORCE(s.ndim() == 1, ValueError, kOp,
                     ": a path must be a 1-D tensor of bytes, got shape ", s.to_string());
      // The path ends at its first NUL byte, as DALI's (fixed-width, zero-padded paths work).
      const char* p = static_cast<const char*>(in.data(i));
      std::string path(p, size_t(s.volume()));
      path.resize(std::strlen(path.c_str()));
      STOKER_ENFORCE(!path.empty(), ValueError, kOp, ": the path is empty");
      // O_NONBLOCK: a FIFO's open would wait for a writer; it is refused below instead.
      Fd f(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
      STOKER_ENFORCE(f.fd >= 0, IOError, kOp, ": cannot open '", path, "': ", sys_error());
      struct stat st {};
      STOKER_ENFORCE(::fstat(f.fd, &st) == 0, IOError, kOp, ": cannot stat '", path,
                     "': ", sys_error());
      STOKER_ENFORCE(!S_ISDIR(st.st_mode), IOError, kOp, ": '", path, "' is a folder, not a file");
      STOKER_ENFORCE(S_ISREG(st.st_mode), IOError, kOp, ": '", path,
                     "' is not a regular file (its size cannot be known before reading)");
      shapes[size_t(i)] = TensorShape({int64_t(st.st_size)});
      paths[size_t(i)] = std::move(path);
      files[size_t(i)] = std::move(f);
    });
    Batch& out = add_output(ws, DType::kU8, std::move(shapes), TensorLayout());
    for_each_sample(ws, n, [&](int i, int) {
      read(files[size_t(i)].fd, paths[size_t(i)], out.data_as<uint8_t>(i),
           size_t(out.shape(i).volume()));
      files[size_t(i)] = Fd();
    });
    // Later errors about these bytes (a decoder's) name the file.
    for (int i = 0; i < n; ++i) out.set_source_info(i, paths[size_t(i)]);
  }

 private:
  void read(int fd, const std::string& path, uint8_t* out, size_t size) const {
    if (size == 0) return;
    // DALI's rule: O_DIRECT applies to plain reads; with mapping on, the file is mapped.
    if (mmap_) {
      void* m = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
      STOKER_ENFORCE(m != MAP_FAILED, IOError, kOp, ": cannot map '", path, "': ", sys_error());
      std::memcpy(out, m, size);
      ::munmap(m, size);
      return;
    }
    if (direct_ && read_direct(path, out, size)) return;
    pread_all(fd, out, size, path);
  }

  bool mmap_, direct_;
};

}  // namespace

OpSchema file_read_schema() {
  return {
      .name = "io.file.read",
      .doc =
          "Reads the whole file each sample names (as DALI's): the input holds each path as a "
          "1-D uint8 (or int8) tensor of its UTF-8 bytes, ending at the first NUL byte if any "
          "(from Python: np.frombuffer(path.encode(), dtype=np.uint8)); relative paths are "
          "relative to the working folder. The output is the file's bytes, a 1-D uint8 tensor "
          "per sample (an empty file gives an empty one), whose source is the path.",
      .inputs = {"filepaths"},
      .outputs = {"data"},
      .args = {{"dont_use_mmap", ArgType::kBool,
                "Read with plain reads instead of mapping the file into memory (mapping is a "
                "little faster on local file systems, rarely on network ones).",
                false},
               {"use_o_direct", ArgType::kBool,
                "With dont_use_mmap=True: read with O_DIRECT, bypassing the page cache (where "
                "the file system refuses O_DIRECT, the file is read normally). With mapping on "
                "it has no effect, as in DALI.",
                false}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<FileRead>(s); },
      .example = OpExample{.args = {}, .dtype = "uint8", .layout = ""},
  };
}

}  // namespace stoker::ops
