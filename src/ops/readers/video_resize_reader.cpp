#include "stoker/ops/readers/video_resize_reader.hpp"

#include "stoker/ops/geometry/resize.hpp"
#include "stoker/ops/readers/reader_base.hpp"
#include "stoker/ops/readers/video_reader.hpp"
#include "stoker/ops/readers/video_source.hpp"
#include "stoker/ops/sequence_operator.hpp"

namespace stoker::ops {
namespace {

constexpr const char* kOp = "readers.video_resize";

// resize's arguments that readers.video_resize takes: all but `dtype`, which is the reader's (the
// resized frames keep the decoded dtype, as in DALI), and `save_attrs` (DALI's has no such
// output). `resize_z` is taken and, the frames being 2-D, ignored, as DALI does.
bool is_resize_arg(const ArgSchema& a) { return a.name != "dtype" && a.name != "save_attrs"; }

// resize's schema under this operator's name: its errors then name readers.video_resize.
const OpSchema& inner_resize_schema() {
  static const OpSchema schema = [] {
    OpSchema s = resize_schema();
    s.name = kOp;
    return s;
  }();
  return schema;
}

// The resize step's spec: this operator's resize arguments, constants and per-sample ones.
OpSpec resize_spec(const OpSpec& spec) {
  OpSpec r;
  r.schema = &inner_resize_schema();
  r.name = spec.name;
  r.instance = spec.instance;
  r.defined_at = spec.defined_at;
  r.backend = spec.backend;
  r.num_outputs = 1;
  r.batch_size = spec.batch_size;
  for (const auto& a : inner_resize_schema().args) {
    if (!is_resize_arg(a)) continue;
    if (auto it = spec.args.find(a.name); it != spec.args.end()) r.args[a.name] = it->second;
    if (auto it = spec.arg_inputs.find(a.name); it != spec.arg_inputs.end())
      r.arg_inputs[a.name] = it->second;
  }
  return r;
}

// readers.video, then resize over each sequence's frames (one size per sequence: the
// arguments are per sample); on the reader's backend, so the gpu operator decodes with NVDEC and
// resizes with the GPU kernel. The reader keeps its state (checkpoints, reader_meta).
class VideoReaderResize final : public Operator {
 public:
  explicit VideoReaderResize(const OpSpec& spec)
      : Operator(spec),
        reader_(spec, make_video_reader_source(spec)),
        resize_(make_operator(resize_spec(spec))) {}

  void run(Workspace& ws) override {
    reader_.run(ws);
    Batch video = std::move(ws.outputs[0]);
    Workspace rs = ws;
    rs.outputs.clear();
    rs.inputs = {&video};
    resize_->run(rs);
    ws.outputs[0] = std::move(rs.outputs[0]);
  }
  std::optional<ReaderMeta> reader_meta() const override { return reader_.reader_meta(); }
  std::optional<std::string> save_state() const override { return reader_.save_state(); }
  void restore_state(const std::string& state) override { reader_.restore_state(state); }

 private:
  ReaderOperator reader_;
  std::unique_ptr<Operator> resize_;
};

}  // namespace

OpSchema video_resize_reader_schema() {
  OpSchema schema{
      .name = kOp,
      .doc =
          "readers.video and resize in one operator (DALI's readers.video_resize): the "
          "sequences readers.video reads, every frame of a sequence resized alike, by the "
          "resize arguments (per sample where given per sample) and with resize's filters. "
          "DALI runs it on the GPU only (device='gpu': NVDEC and the GPU resize here too); "
          "stoker also on the CPU. The frames keep the reader's dtype.",
      .outputs = {"video"},
      .output_names = video_reader_output_names,
      .args = video_reader_args(),
      .make_cpu = [](const OpSpec& s) { return std::make_unique<VideoReaderResize>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<VideoReaderResize>(s); },
#endif
      .deprecated_names = {"video_reader_resize"},
  };
  for (const auto& a : resize_schema().args)
    if (is_resize_arg(a)) schema.args.push_back(a);
  add_video_loader_args(schema);
  return schema;
}

}  // namespace stoker::ops
