#include "stoker/ops/readers/webdataset_reader.hpp"

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
  std::unique_ptr<readers::DataFile> file;
  std::vector<readers::TarMember> members;
  std::vector<readers::WdsSample> samples;
};

class WebdatasetSource final : public ReaderSource {
 public:
  explicit WebdatasetSource(const OpSpec& spec)
      : spec_(spec),
        groups_(spec.arg<std::vector<std::string>>("ext").size()),
        file_options_(file_options(spec)) {}

  std::vector<DType> output_dtypes() const override {
    return std::vector<DType>(groups_, DType::kU8);
  }

  std::string source_info(int64_t index) const override {
    auto [shard, s] = locate(index);
    return shard->file->path() + ":" + shard->samples[size_t(s)].key;
  }

  // One range per output; a missing component (missing_component_behavior='empty') is an
  // empty range.
  bool ranges(int64_t index, std::vector<readers::FileRange>& out) const override {
    auto [shard, k] = locate(index);
    for (int m : shard->samples[size_t(k)].members) {
      if (m < 0)
        out.push_back({shard->file.get(), 0, 0});
      else
        out.push_back({shard->file.get(), shard->members[size_t(m)].data_offset,
                       shard->members[size_t(m)].size});
    }
    return true;
  }

  void parse(readers::LoadedSample& s, std::span<const readers::FileBytes> bytes,
             MemoryPool& /*pool*/) const override {
    s.outputs.clear();
    for (const auto& b : bytes)
      s.outputs.push_back({b.owner, b.data, TensorShape{int64_t(b.size)}});
  }

  std::vector<int64_t> file_starts() const override { return index_.starts(); }

  int64_t build_index() override {
    auto paths = spec_.arg<std::vector<std::string>>("paths");
    auto index_paths = spec_.arg<std::vector<std::string>>("index_paths");
    auto ext = spec_.arg<std::vector<std::string>>("ext");
    auto missing = spec_.arg<std::string>("missing_component_behavior");
    STOKER_ENFORCE(!paths.empty(), ValueError, "readers.webdataset: `paths` is empty");
    STOKER_ENFORCE(index_paths.empty() || index_paths.size() == paths.size(), ValueError,
                   "readers.webdataset: got ", paths.size(), " shards but ", index_paths.size(),
                   " index files");
    MemoryPool& pool = default_host_pool();
    int64_t total = 0;
    for (size_t k = 0; k < paths.size(); ++k) {
      const auto& p = paths[k];
      auto shard = std::make_unique<Shard>();
      shard->file = std::make_unique<readers::DataFile>(p, file_options_);
      auto head = shard->file->read(0, std::min<int64_t>(2, shard->file->size()), pool);
      if (readers::is_gzip(head.span())) {  // .tgz: inflated in memory
        auto inflated = readers::gunzip(shard->file->read_all(pool).span(), p);
        shard->file = std::make_unique<readers::DataFile>(p, std::move(inflated));
      }
      if (!index_paths.empty()) {
        shard->members = readers::parse_wds_index(read_file_text(index_paths[k]), index_paths[k],
                                                  shard->file->size());
      } else {  // a scan reads only the headers (a mapping's other pages stay untouched)
        shard->members = readers::index_tar(shard->file->read_all(pool, false).span(), p);
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

 private:
  std::pair<const Shard*, int64_t> locate(int64_t index) const {
    auto [k, local] = index_.locate(index);
    return {shards_[k].get(), local};
  }

  OpSpec spec_;
  size_t groups_;
  readers::FileOptions file_options_;
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
               {"index_paths", ArgType::kStringList,
                "DALI webdataset index files (v1.1 or v1.2, from `python -m stoker.tools.index "
                "webdataset` or DALI's wds2idx), one per shard; without them the shards' "
                "headers are scanned at build.",
                std::vector<std::string>{}},
               {"missing_component_behavior", ArgType::kString, "'empty', 'skip' or 'error'.",
                std::string("empty")}},
      .make_cpu = [](const OpSpec& sp) { return make_reader<WebdatasetSource>(sp); },
  };
  for (auto& a : loader_arg_schemas()) s.args.push_back(a);
  return s;
}

}  // namespace stoker::ops
