#include "stoker/ops/readers/webdataset_reader.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "stoker/core/file_io.hpp"
#include "stoker/ops/readers/reader_base.hpp"
#include "stoker/readers/tar.hpp"
#include "stoker/readers/text_lines.hpp"
#include "stoker/readers/tfrecord.hpp"

namespace stoker::ops {
namespace {

struct Shard {
  std::string path;
  int fd = -1;
  std::vector<uint8_t> inflated;  // gzip-compressed shards (.tgz) are inflated at build
  std::vector<readers::TarMember> members;
  std::vector<readers::WdsSample> samples;
  ~Shard() {
    if (fd >= 0) ::close(fd);
  }
};

class WebdatasetReader final : public ReaderOperator {
 public:
  explicit WebdatasetReader(const OpSpec& spec) : ReaderOperator(spec) { init(); }

  void run(Workspace& ws) override {
    auto picks = next_indices(ws);
    const int n = ws.batch_size;
    const size_t groups = spec_.arg<std::vector<std::string>>("ext").size();
    for (size_t g = 0; g < groups; ++g) ws.outputs.push_back(Batch::with_samples(n, DType::kU8));
    for (int i = 0; i < n; ++i) {
      auto [shard, s] = locate(picks[size_t(i)]);
      for (auto& out : ws.outputs)
        out.set_source_info(i, shard->path + ":" + shard->samples[size_t(s)].key);
    }
    for_each_sample(
        ws, n,
        [&](int i, int) {
          auto [shard, s] = locate(picks[size_t(i)]);
          const auto& sample = shard->samples[size_t(s)];
          for (size_t g = 0; g < groups; ++g) {
            int m = sample.members[g];
            int64_t size = m < 0 ? 0 : shard->members[size_t(m)].size;
            auto buf = ws.host_pool->acquire(size_t(size));
            if (size > 0) read_member(*shard, shard->members[size_t(m)], buf->data());
            void* data = buf->data();
            ws.outputs[g].set_sample(i, std::move(buf), data, TensorShape{size});
          }
        },
        &ws.outputs[0]);
  }

 private:
  static void read_member(const Shard& shard, const readers::TarMember& m, void* out) {
    if (!shard.inflated.empty()) {
      std::memcpy(out, shard.inflated.data() + m.data_offset, size_t(m.size));
      return;
    }
    ssize_t got = ::pread(shard.fd, out, size_t(m.size), off_t(m.data_offset));
    STOKER_ENFORCE(got == m.size, IOError, "cannot read member '", m.name, "' (", m.size,
                   " bytes at offset ", m.data_offset,
                   "): ", got < 0 ? std::strerror(errno) : "short read");
  }

  int64_t build_index() override {
    auto paths = spec_.arg<std::vector<std::string>>("paths");
    auto ext = spec_.arg<std::vector<std::string>>("ext");
    auto missing = spec_.arg<std::string>("missing_component_behavior");
    STOKER_ENFORCE(!paths.empty(), ValueError, "readers.webdataset: `paths` is empty");
    int64_t total = 0;
    for (auto& p : paths) {
      auto shard = std::make_unique<Shard>();
      shard->path = p;
      auto bytes = read_file_bytes(p);
      if (readers::is_gzip(bytes)) {
        shard->inflated = readers::gunzip(bytes, p);
        shard->members = readers::index_tar(shard->inflated, p);
      } else {
        shard->members = readers::index_tar(bytes, p);
        shard->fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
        STOKER_ENFORCE(shard->fd >= 0, IOError, "cannot open '", p, "': ", std::strerror(errno));
      }
      shard->samples = readers::group_webdataset(shard->members, ext, missing, p);
      total += int64_t(shard->samples.size());
      index_.add_file(int64_t(shard->samples.size()));
      shards_.push_back(std::move(shard));
    }
    STOKER_ENFORCE(total > 0, ValueError,
                   "readers.webdataset: the shards hold no samples with "
                   "the requested extensions");
    return total;
  }

  std::pair<const Shard*, int64_t> locate(int64_t index) const {
    auto [k, local] = index_.locate(index);
    return {shards_[k].get(), local};
  }

  std::vector<std::unique_ptr<Shard>> shards_;
  readers::MultiFileIndex index_;
};

}  // namespace

OpSchema webdataset_reader_schema() {
  OpSchema s{
      .name = "readers.webdataset",
      .doc =
          "Reads webdataset tar shards (ustar, GNU long names, pax headers; .tgz shards "
          "are inflated in memory). Members 'dir/key.ext' are grouped into samples by key "
          "(the name up to the first dot of its basename); each entry of `ext` (e.g. "
          "'jpg;jpeg') gives one uint8 output with the first matching member. Samples "
          "missing a component: `missing_component_behavior` 'empty' (an empty tensor), "
          "'skip' or 'error'. Source info is 'shard:key'.",
      .outputs_from = "ext",
      .args = {{"paths", ArgType::kStringList, "Tar shards."},
               {"ext", ArgType::kStringList,
                "One entry per output: ';'-separated extensions, e.g. ['jpg;jpeg', 'cls']."},
               {"missing_component_behavior", ArgType::kString, "'empty', 'skip' or 'error'.",
                std::string("empty")}},
      .make_cpu = [](const OpSpec& sp) { return std::make_unique<WebdatasetReader>(sp); },
  };
  for (auto& a : loader_arg_schemas()) s.args.push_back(a);
  return s;
}

}  // namespace stoker::ops
