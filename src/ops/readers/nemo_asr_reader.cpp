#include "stoker/ops/readers/nemo_asr_reader.hpp"

#include <filesystem>

#include "stoker/ops/decoders/audio_decode.hpp"
#include "stoker/ops/readers/reader_base.hpp"
#include "stoker/readers/nemo_manifest.hpp"

namespace stoker::ops {
namespace {

constexpr const char* kName = "readers.nemo_asr";

std::vector<std::string> nemo_output_names(const OpSpec& spec) {
  std::vector<std::string> names{"audio"};
  if (spec.arg<bool>("read_sample_rate")) names.push_back("sample_rate");
  if (spec.arg<bool>("read_text")) names.push_back("text");
  if (spec.arg<bool>("read_idxs")) names.push_back("idx");
  return names;
}

class NemoAsrSource final : public ReaderSource {
 public:
  explicit NemoAsrSource(const OpSpec& spec)
      : spec_(spec),
        file_options_(file_options(spec)),
        sample_rate_(float(spec.arg<double>("sample_rate"))),
        args_(spec, kName, sample_rate_ > 0),
        read_rate_(spec.arg<bool>("read_sample_rate")),
        read_text_(spec.arg<bool>("read_text")),
        read_idxs_(spec.arg<bool>("read_idxs")) {
    manifest_options_.min_duration = spec.arg<double>("min_duration");
    manifest_options_.max_duration = spec.arg<double>("max_duration");
  }

  std::vector<DType> output_dtypes() const override {
    std::vector<DType> d{args_.dtype};
    if (read_rate_) d.push_back(DType::kF32);
    if (read_text_) d.push_back(DType::kU8);
    if (read_idxs_) d.push_back(DType::kI64);
    return d;
  }
  std::string source_info(int64_t index) const override {
    return entries_[size_t(index)].audio_filepath;
  }
  bool preshuffles() const override { return true; }  // DALI's NemoAsrLoader, as its FileLoader

  int64_t build_index() override {
    STOKER_ENFORCE(codecs::audio_available(), RuntimeError, kName,
                   ": stoker was built without libsndfile (libsndfile1-dev): audio cannot be "
                   "decoded here");
    const auto manifests = spec_.arg<std::vector<std::string>>("manifest_filepaths");
    STOKER_ENFORCE(!manifests.empty(), ValueError, kName,
                   ": manifest_filepaths is empty; it names the manifests to read");
    int64_t left_out = 0;
    for (const auto& path : manifests) {
      const auto bytes = readers::read_whole_file(path, file_options_, default_host_pool());
      const std::string_view text(reinterpret_cast<const char*>(bytes.data), bytes.size);
      const size_t first = entries_.size();
      left_out += readers::parse_nemo_manifest(text, path, manifest_options_, entries_);
      resolve_relative_paths(path, first);
    }
    STOKER_ENFORCE(!entries_.empty(), ValueError, kName, ": the manifests list no utterance",
                   left_out ? detail::concat(" within the duration limits (", left_out,
                                             " left out by min_duration/max_duration)")
                            : std::string());
    return int64_t(entries_.size());
  }

  void load(readers::LoadedSample& s, MemoryPool& pool) const override {
    const readers::NemoEntry& e = entries_[size_t(s.index)];
    const auto bytes = readers::read_whole_file(e.audio_filepath, file_options_, pool);
    AudioDecoding audio(bytes.data, bytes.size, args_, sample_rate_, kName, -1,
                        {e.offset, e.duration});
    const TensorShape shape = audio.shape();
    auto buf = pool.acquire(size_t(shape.volume()) * dtype_size(args_.dtype));
    audio.decode(buf->data());
    const void* data = buf->data();
    s.outputs.push_back({std::move(buf), data, shape});
    if (read_rate_) push_scalar(s, pool, audio.rate());
    if (read_text_) {
      auto text = pool.acquire(e.text.size());
      std::copy(e.text.begin(), e.text.end(), static_cast<char*>(text->data()));
      const void* p = text->data();
      s.outputs.push_back({std::move(text), p, TensorShape{int64_t(e.text.size())}});
    }
    if (read_idxs_) push_scalar(s, pool, e.index, TensorShape{1});  // DALI's shape
  }

 private:
  template <typename T>
  static void push_scalar(readers::LoadedSample& s, MemoryPool& pool, T value,
                          TensorShape shape = {}) {
    auto b = pool.acquire(sizeof(T));
    *static_cast<T*>(b->data()) = value;
    const void* p = b->data();
    s.outputs.push_back({std::move(b), p, std::move(shape)});
  }

  // DALI opens a relative audio_filepath from the working directory; NeMo's own loaders (and
  // most manifests written for them) take it from the manifest's folder. The working directory
  // is kept when it holds the manifest's first relative file, else the manifest's folder is
  // used: DALI's result wherever DALI finds the files, NeMo's where only NeMo would.
  void resolve_relative_paths(const std::string& manifest, size_t first) {
    const auto slash = manifest.rfind('/');
    if (slash == std::string::npos) return;  // the manifest is in the working directory
    const std::string folder = manifest.substr(0, slash + 1);
    bool from_folder = false, decided = false;
    for (size_t i = first; i < entries_.size(); ++i) {
      std::string& p = entries_[i].audio_filepath;
      if (p[0] == '/') continue;
      if (!decided) {
        std::error_code ec;
        from_folder = !std::filesystem::exists(p, ec);
        decided = true;
      }
      if (from_folder) p = folder + p;
    }
  }

  OpSpec spec_;
  readers::FileOptions file_options_;
  readers::NemoManifestOptions manifest_options_;
  float sample_rate_;
  AudioDecodeArgs args_;
  bool read_rate_, read_text_, read_idxs_;
  std::vector<readers::NemoEntry> entries_;
};

}  // namespace

OpSchema nemo_asr_reader_schema() {
  OpSchema s{
      .name = kName,
      .doc =
          "Reads the utterances that NeMo ASR manifests list (DALI's readers.nemo_asr): JSON "
          "lines with \"audio_filepath\" (a relative path from the working directory, as "
          "DALI, or from the manifest's folder when the manifest's first relative file is not "
          "in the working directory, as NeMo), "
          "\"duration\" and \"offset\" in seconds and \"text\"; other keys are ignored. Each "
          "utterance is decoded as decoders.audio decodes (libsndfile; WAV, FLAC, Ogg...), "
          "from `offset` for `duration` seconds when the line gives them. Outputs: the "
          "audio; its sampling rate (float32 scalar, read_sample_rate); the transcript as "
          "UTF-8 bytes (uint8, read_text); the entry's index in its manifest, counted "
          "after duration filtering (int64, shape (1,), read_idxs).",
      .output_names = nemo_output_names,
      .args = {{"manifest_filepaths", ArgType::kStringList, "The manifests to read, in order.",
                std::vector<std::string>{}},
               {"sample_rate", ArgType::kFloat,
                "Resample every utterance to this rate (Hz); not positive: each keeps its own.",
                -1.0},
               {"min_duration", ArgType::kFloat,
                "Leave out utterances shorter than this (seconds, the manifest's \"duration\"); "
                "0: none.",
                0.0},
               {"max_duration", ArgType::kFloat,
                "Leave out utterances longer than this (seconds); 0: none.", 0.0},
               {"read_sample_rate", ArgType::kBool, "Output each utterance's sampling rate.", true},
               {"read_text", ArgType::kBool, "Output each utterance's transcript.", true},
               {"read_idxs", ArgType::kBool, "Output each utterance's index in the manifests.",
                false},
               {"normalize_text", ArgType::kBool,
                "Accepted and ignored, as DALI 2.4 ignores it (its transcripts come as written).",
                false}},
      .make_cpu = [](const OpSpec& sp) { return make_reader<NemoAsrSource>(sp); },
      .deprecated_names = {"nemo_asr_reader"},
  };
  for (auto& a : audio_decode_arg_schemas(true)) s.args.push_back(a);
  for (auto& a : loader_arg_schemas()) s.args.push_back(a);
  return s;
}

}  // namespace stoker::ops
