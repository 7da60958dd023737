#include "stoker/ops/tensor/sequence_ops.hpp"

#include <cstring>

#include "stoker/ops/operator.hpp"
#ifdef STOKER_HAVE_CUDA
#include "stoker/ops/tensor/copy_gpu_plan.hpp"
#endif

namespace stoker::ops {
namespace {

// One frame copy: frame `from` of sample `sample` to frame `to` of output `output`'s sample.
struct FrameCopy {
  int output, sample;
  int64_t from, to;
};

// Both operators: outputs of frames picked from each sample's frames, as element copies.
class FrameGather : public Operator {
 public:
  FrameGather(const OpSpec& spec, bool separate) : Operator(spec), separate_(separate) {}

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const std::string& name = spec_.schema->name;
    const auto layout = in.layout().str();
    STOKER_ENFORCE(layout.empty() || layout[0] == 'F', ValueError, name,
                   ": expected sequences (a layout starting with F), got layout '", layout, "'");
    const int n = in.size();
    // Per sample: the frames to take, in order.
    std::vector<std::vector<int64_t>> picks(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      const auto& s = in.shape(i);
      STOKER_ENFORCE(s.ndim() >= 1, ValueError, name, ": sample ", i,
                     " is a scalar, not a sequence");
      for (double v : list_arg(ws, separate_ ? "element_map" : "new_order", i)) {
        const int64_t f = int64_t(v);
        STOKER_ENFORCE(f >= 0 && f < s[0], ValueError, name, ": sample ", i, " has ", s[0],
                       " frames; frame ", f, " does not exist");
        picks[size_t(i)].push_back(f);
      }
      STOKER_ENFORCE(!picks[size_t(i)].empty(), ValueError, name, ": sample ", i, ": ",
                     separate_ ? "element_map" : "new_order", " is empty");
    }
    std::vector<FrameCopy> copies;
    // element_map is one list for the batch: its length is the number of outputs.
    const int outputs = separate_ ? int(spec_.arg<std::vector<int64_t>>("element_map").size()) : 1;
    const TensorLayout out_layout(separate_ && !layout.empty() ? layout.substr(1) : layout);
    for (int o = 0; o < outputs; ++o) {
      std::vector<TensorShape> shapes;
      for (int i = 0; i < n; ++i) {
        std::vector<int64_t> dims(in.shape(i).dims().begin(), in.shape(i).dims().end());
        if (separate_) {
          dims.erase(dims.begin());
          copies.push_back({o, i, picks[size_t(i)][size_t(o)], 0});
        } else {
          dims[0] = int64_t(picks[size_t(i)].size());
          for (size_t k = 0; k < picks[size_t(i)].size(); ++k)
            copies.push_back({o, i, picks[size_t(i)][k], int64_t(k)});
        }
        shapes.emplace_back(dims);
      }
      add_output(ws, in.dtype(), std::move(shapes), out_layout);
    }
    move_frames(ws, copies);
  }

 protected:
  virtual void move_frames(Workspace& ws, const std::vector<FrameCopy>& copies) = 0;
  // Bytes of one frame of sample i.
  static int64_t frame_bytes(const Batch& in, int i) {
    const auto& s = in.shape(i);
    return s[0] == 0 ? 0 : s.volume() / s[0] * int64_t(dtype_size(in.dtype()));
  }

  bool separate_;
};

class FrameGatherCpu final : public FrameGather {
 public:
  using FrameGather::FrameGather;
  void move_frames(Workspace& ws, const std::vector<FrameCopy>& copies) override {
    const Batch& in = ws.input(0);
    for (const auto& c : copies) {
      const int64_t bytes = frame_bytes(in, c.sample);
      if (bytes == 0) continue;
      std::memcpy(static_cast<uint8_t*>(ws.outputs[size_t(c.output)].data(c.sample)) + c.to * bytes,
                  static_cast<const uint8_t*>(in.data(c.sample)) + c.from * bytes, size_t(bytes));
    }
  }
};

#ifdef STOKER_HAVE_CUDA
// Every frame copy of the batch in one launch of the strided copy kernel.
class FrameGatherGpu final : public FrameGather {
 public:
  using FrameGather::FrameGather;
  void move_frames(Workspace& ws, const std::vector<FrameCopy>& copies) override {
    const Batch& in = ws.input(0);
    const int64_t element = int64_t(dtype_size(in.dtype()));
    std::vector<kernels::StridedCopy> d;
    for (const auto& c : copies) {
      const int64_t elements = frame_bytes(in, c.sample) / element;
      if (elements == 0) continue;
      d.push_back(
          copy_desc(static_cast<const uint8_t*>(in.data(c.sample)) + c.from * elements * element,
                    static_cast<uint8_t*>(ws.outputs[size_t(c.output)].data(c.sample)) +
                        c.to * elements * element,
                    {elements}, {1}, {1}, {elements}, spec_.schema->name));
    }
    run_copies(*this, ws, d, size_t(element));
  }
};
#endif

// Marks samples as per-frame values: only the layout changes; the output views the input.
class PerFrame final : public Operator {
 public:
  using Operator::Operator;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    const std::string given = in.layout().str();
    std::string layout = given;
    if (given.empty()) {
      for (int i = 0; i < n; ++i)
        STOKER_ENFORCE(in.shape(i).ndim() >= 1, ValueError, "per_frame: sample ", i,
                       " is a scalar; per-frame values need an outer axis of frames");
      if (n > 0) {
        layout.assign(size_t(in.shape(0).ndim()), '*');
        layout[0] = 'F';
      }
    } else if (given[0] != 'F') {
      STOKER_ENFORCE(spec_.arg<bool>("replace"), ValueError, "per_frame: the input's layout '",
                     given,
                     "' does not start with F (frames); replace=True renames its outermost axis");
      layout[0] = 'F';
    }
    ws.outputs.push_back(Batch::with_samples(n, in.dtype(), layout, in.memory()));
    Batch& out = ws.outputs.back();
    for (int i = 0; i < n; ++i)
      out.set_sample(i, in.owner(i), const_cast<void*>(in.sample(i).data), in.shape(i));
    out.copy_source_info(in);
    out.set_ready_event(in.ready_event());
  }
};

std::vector<std::string> element_extract_outputs(const OpSpec& spec) {
  const auto map = spec.arg<std::vector<int64_t>>("element_map");
  STOKER_ENFORCE(!map.empty(), ValueError, "element_extract: element_map is empty");
  std::vector<std::string> names;
  for (size_t k = 0; k < map.size(); ++k) names.push_back("element" + std::to_string(k));
  return names;
}

}  // namespace

OpSchema element_extract_schema() {
  return {
      .name = "element_extract",
      .doc =
          "Frames of sequences as separate outputs (DALI's element_extract): output k holds "
          "frame element_map[k] of every sample, without the F dimension (layout FHWC -> "
          "HWC). The input's layout, when it has one, must start with F.",
      .inputs = {"data"},
      .outputs = {"element0"},
      .output_names = element_extract_outputs,
      .args = {{"element_map", ArgType::kIntList, "The frames to extract, one output each.",
                std::nullopt}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<FrameGatherCpu>(s, true); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<FrameGatherGpu>(s, true); },
#endif
      .example = OpExample{.args = {{"element_map", std::vector<int64_t>{0}}},
                           .dtype = "uint8",
                           .layout = "FHWC"},
  };
}

OpSchema per_frame_schema() {
  return {
      .name = "per_frame",
      .doc =
          "Marks its input as per-frame values (DALI's per_frame): the layout gets F as its "
          "outermost axis (none: F followed by *), the data is untouched. Given as an "
          "argument of an operator that processes sequences, sample i then holds one value "
          "per frame of sequence i, or one for all of its frames.",
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {{"replace", ArgType::kBool,
                "Rename an outermost axis that is not F to F (default: such a layout is an "
                "error).",
                false}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<PerFrame>(s); },
      // No data moves: the same operator views device memory as well.
      .make_gpu = [](const OpSpec& s) { return std::make_unique<PerFrame>(s); },
      .example = OpExample{.dtype = "float32", .layout = "F"},
  };
}

OpSchema sequence_rearrange_schema() {
  return {
      .name = "sequence_rearrange",
      .doc =
          "Sequences with their frames in a new order (DALI's sequence_rearrange): output "
          "frame k is input frame new_order[k]; frames may repeat or be left out. The "
          "input's layout, when it has one, must start with F.",
      .inputs = {"data"},
      .outputs = {"data"},
      .args = {{"new_order", ArgType::kIntList, "The frames, in their new order.", std::nullopt,
                /*per_sample=*/true}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<FrameGatherCpu>(s, false); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<FrameGatherGpu>(s, false); },
#endif
      .example =
          OpExample{
              .args = {{"new_order", std::vector<int64_t>{0}}}, .dtype = "uint8", .layout = "FHWC"},
  };
}

}  // namespace stoker::ops
