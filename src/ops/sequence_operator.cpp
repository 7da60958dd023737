#include "stoker/ops/sequence_operator.hpp"

#include <algorithm>
#include <cstring>
#include <deque>

#include "stoker/core/cuda.hpp"

namespace stoker::ops {
namespace {

bool per_frame(const Batch& b) {
  const auto& l = b.layout().str();
  return !l.empty() && l[0] == 'F';
}

// The frames of sequences as samples, in order: views of each sequence's memory.
Batch unfold(const Batch& b, const std::vector<int64_t>& frames, int64_t total) {
  Batch out = Batch::with_samples(int(total), b.dtype(), TensorLayout(b.layout().str().substr(1)),
                                  b.memory());
  int k = 0;
  for (int i = 0; i < b.size(); ++i) {
    const auto& d = b.shape(i).dims();
    const TensorShape frame(std::vector<int64_t>(d.begin() + 1, d.end()));
    const size_t bytes = size_t(frame.volume()) * dtype_size(b.dtype());
    for (int64_t f = 0; f < frames[size_t(i)]; ++f, ++k) {
      out.set_sample(k, b.owner(i), static_cast<uint8_t*>(b.data(i)) + size_t(f) * bytes, frame);
      out.set_source_info(k, b.source_info(i));
    }
  }
  out.set_ready_event(b.ready_event());
  return out;
}

// Each sample repeated for every frame of its sequence (views).
Batch repeat(const Batch& b, const std::vector<int64_t>& frames, int64_t total) {
  Batch out = Batch::with_samples(int(total), b.dtype(), b.layout(), b.memory());
  int k = 0;
  for (int i = 0; i < b.size(); ++i)
    for (int64_t f = 0; f < frames[size_t(i)]; ++f, ++k) {
      out.set_sample(k, b.owner(i), b.data(i), b.shape(i));
      out.set_source_info(k, b.source_info(i));
    }
  out.set_ready_event(b.ready_event());
  return out;
}

class SequenceOperator final : public Operator {
 public:
  SequenceOperator(const OpSpec& spec, std::unique_ptr<Operator> op, std::string output_layout)
      : Operator(spec), op_(std::move(op)), output_layout_(std::move(output_layout)) {
    frame_axis_ = int(output_layout_.find('F'));  // npos -> -1: frames outermost
  }

  void run(Workspace& ws) override {
    const std::string& name = spec_.schema->name;
    int ref = -1;
    for (size_t k = 0; k < ws.inputs.size() && ref < 0; ++k)
      if (per_frame(*ws.inputs[k])) ref = int(k);
    if (ref < 0) {
      const std::string layout = ws.inputs.empty() ? "" : ws.input(0).layout().str();
      for (const auto& [arg, b] : ws.arg_inputs)
        STOKER_ENFORCE(!per_frame(*b), ValueError, name, ": argument '", arg,
                       "' is given per frame (layout '", b->layout().str(),
                       "'), but the input has no frames (layout '", layout, "')");
      if (frame_axis_ >= 0 && layout.find('F') != std::string::npos) {
        // Frames the operator takes whole (CFHW clips): it places them itself.
        if (!whole_) whole_ = spec_.schema->factory(spec_.backend)(spec_);
        return whole_->run(ws);
      }
      STOKER_ENFORCE(frame_axis_ < 0, ValueError, name, ": output_layout '", output_layout_,
                     "' has frames (F), but the input is not a sequence (layout '", layout,
                     "'; sequences: FHWC, FCHW)");
      return op_->run(ws);
    }
    const Batch& seq = ws.input(ref);
    const int n = seq.size();
    std::vector<int64_t> frames(static_cast<size_t>(n));
    FrameMap map;
    map.batch_size = ws.batch_size;
    for (int i = 0; i < n; ++i) {
      const auto& s = seq.shape(i);
      STOKER_ENFORCE(s.ndim() == int(seq.layout().str().size()), ValueError, name, ": sample ", i,
                     " has shape ", s.to_string(), ", which layout '", seq.layout().str(),
                     "' does not describe");
      STOKER_ENFORCE(s[0] > 0, ValueError, name, ": sample ", i, " is a sequence of no frames");
      frames[size_t(i)] = s[0];
      for (int64_t f = 0; f < s[0]; ++f) {
        map.sequence.push_back(i);
        map.frame.push_back(int(f));
      }
    }
    const auto total = int64_t(map.sequence.size());
    // The operator's view of the iteration: every input, argument and fused step's argument
    // unfolded into frames or repeated for them.
    std::vector<Batch> inputs;
    inputs.reserve(ws.inputs.size());
    for (size_t k = 0; k < ws.inputs.size(); ++k) {
      const Batch& in = *ws.inputs[k];
      if (!per_frame(in)) {
        inputs.push_back(repeat(in, frames, total));
        continue;
      }
      STOKER_ENFORCE(in.size() == n, ValueError, name, ": input ", k, " has ", in.size(),
                     " samples, input ", ref, " ", n);
      for (int i = 0; i < n; ++i)
        STOKER_ENFORCE(in.shape(i).ndim() >= 1 && in.shape(i)[0] == frames[size_t(i)], ValueError,
                       name, ": sample ", i, " has ", frames[size_t(i)], " frames in input ", ref,
                       " but shape ", in.shape(i).to_string(), " in input ", k);
      inputs.push_back(unfold(in, frames, total));
    }
    std::deque<Batch> args;  // the maps below point into it
    auto unfold_args = [&](const ArgInputs& given) {
      ArgInputs out;
      for (const auto& [arg, b] : given) {
        args.push_back(per_frame(*b) ? arg_frames(*b, arg, frames, total)
                                     : repeat(*b, frames, total));
        out.emplace(arg, &args.back());
      }
      return out;
    };
    Workspace fw = ws;
    fw.inputs.clear();
    for (auto& b : inputs) fw.inputs.push_back(&b);
    fw.arg_inputs = unfold_args(ws.arg_inputs);
    fw.fused_arg_inputs.clear();
    for (const auto& a : ws.fused_arg_inputs) fw.fused_arg_inputs.push_back(unfold_args(a));
    fw.outputs.clear();
    fw.outputs.reserve(ws.outputs.capacity());
    fw.batch_size = int(total);
    fw.frames = &map;
    fw.prepared = nullptr;
    SampleFailures failures, warnings;
    if (ws.failures) {
      fw.failures = &failures;
      for (int64_t k = 0; k < total; ++k)
        if (ws.failures->contains(map.sequence[size_t(k)])) failures.add(int(k), "");
    }
    if (ws.warnings) fw.warnings = &warnings;
    op_->run(fw);
    // A frame's failure or warning is its sequence's (the first one said).
    for (const auto& [k, message] : failures.by_sample())
      ws.failures->add(map.sequence[size_t(k)], message);
    for (const auto& [k, message] : warnings.by_sample())
      ws.warnings->add(map.sequence[size_t(k)], message);
    const auto& whole = spec_.schema->per_sequence_outputs;
    for (size_t k = 0; k < fw.outputs.size(); ++k) {
      const bool per_sequence = std::find(whole.begin(), whole.end(), int(k)) != whole.end();
      ws.outputs.push_back(per_sequence ? first_frames(fw.outputs[k], frames, seq)
                                        : fold(ws, fw.outputs[k], frames, seq));
    }
  }

  std::optional<ReaderMeta> reader_meta() const override { return op_->reader_meta(); }
  std::optional<std::string> save_state() const override { return op_->save_state(); }
  void restore_state(const std::string& state) override { op_->restore_state(state); }
  std::shared_ptr<void> prepare_on_host(Workspace& ws) override {
    for (const Batch* in : ws.inputs)
      if (per_frame(*in)) return nullptr;  // run() works without it
    return op_->prepare_on_host(ws);
  }
  bool prepares_on_host() const override { return op_->prepares_on_host(); }
  std::map<std::string, double> stats() const override { return op_->stats(); }

 private:
  // A per-frame argument: one value (tensor) per frame of its sample's sequence, or one for all.
  Batch arg_frames(const Batch& b, const std::string& arg, const std::vector<int64_t>& frames,
                   int64_t total) const {
    STOKER_ENFORCE(b.size() == int(frames.size()), ValueError, spec_.schema->name, ": argument '",
                   arg, "' has ", b.size(), " samples for ", frames.size(), " sequences");
    std::vector<int64_t> given(frames.size());
    bool broadcast = false;
    for (size_t i = 0; i < frames.size(); ++i) {
      const auto& s = b.shape(int(i));
      given[i] = s.ndim() >= 1 ? s[0] : 0;
      STOKER_ENFORCE(given[i] == frames[i] || given[i] == 1, ValueError, spec_.schema->name,
                     ": sample ", i, " of argument '", arg, "' (per frame) has ", given[i],
                     " values for a sequence of ", frames[i],
                     " frames: give one per frame, or one for all of them");
      broadcast = broadcast || given[i] != frames[i];
    }
    if (!broadcast) return unfold(b, frames, total);
    int64_t values = 0;
    for (int64_t g : given) values += g;
    Batch one = unfold(b, given, values);  // each sample's values; a single one is repeated
    Batch out = Batch::with_samples(int(total), one.dtype(), one.layout(), one.memory());
    int k = 0, j = 0;
    for (size_t i = 0; i < frames.size(); ++i) {
      for (int64_t f = 0; f < frames[i]; ++f, ++k) {
        const int from = given[i] == 1 ? j : j + int(f);
        out.set_sample(k, one.owner(from), one.data(from), one.shape(from));
      }
      j += int(given[i]);
    }
    return out;
  }

  // An output that describes whole sequences: each sequence's first frame's sample (a view).
  static Batch first_frames(const Batch& out, const std::vector<int64_t>& frames,
                            const Batch& seq) {
    const int n = int(frames.size());
    Batch folded = Batch::with_samples(n, out.dtype(), out.layout(), out.memory());
    for (int i = 0, k = 0; i < n; k += int(frames[size_t(i)]), ++i)
      folded.set_sample(i, out.owner(k), out.data(k), out.shape(k));
    folded.set_ready_event(out.ready_event());
    folded.copy_source_info(seq);
    return folded;
  }

  // The frames of each sequence back into one sample, the frame axis where output_layout puts
  // it: views of the operator's output when its frames lie back to back, else a copy.
  Batch fold(Workspace& ws, const Batch& out, const std::vector<int64_t>& frames,
             const Batch& seq) const {
    const std::string& name = spec_.schema->name;
    const int n = int(frames.size());
    const std::string frame_layout = out.layout().str();
    const int axis = frame_axis_ < 0 ? 0 : frame_axis_;
    std::string layout;
    if (!frame_layout.empty()) {
      const size_t at = size_t(std::min<int>(axis, int(frame_layout.size())));
      layout = frame_layout.substr(0, at) + 'F' + frame_layout.substr(at);
    }
    const size_t elem = dtype_size(out.dtype());
    std::vector<TensorShape> shapes(static_cast<size_t>(n));
    std::vector<int> first(static_cast<size_t>(n));
    bool views = axis == 0;
    for (int i = 0, k = 0; i < n; k += int(frames[size_t(i)]), ++i) {
      first[size_t(i)] = k;
      const TensorShape& s = out.shape(k);
      const bool failed = ws.failures && ws.failures->contains(i);
      for (int64_t f = 1; f < frames[size_t(i)] && !failed; ++f)
        STOKER_ENFORCE(out.shape(k + int(f)) == s, ValueError, name, ": sample ", i,
                       ": its frames came out in different shapes (frame 0: ", s.to_string(),
                       ", frame ", f, ": ", out.shape(k + int(f)).to_string(),
                       "); the frames of a sequence must agree");
      STOKER_ENFORCE(axis <= s.ndim(), ValueError, name, ": output_layout '", output_layout_,
                     "' does not fit frames of shape ", s.to_string());
      std::vector<int64_t> d = s.dims();
      d.insert(d.begin() + axis, failed ? 0 : frames[size_t(i)]);
      shapes[size_t(i)] = TensorShape(std::move(d));
      const size_t bytes = size_t(s.volume()) * elem;
      for (int64_t f = 1; f < frames[size_t(i)] && views; ++f)
        views = out.owner(k + int(f)) == out.owner(k) &&
                out.data(k + int(f)) == static_cast<uint8_t*>(out.data(k)) + size_t(f) * bytes;
    }
    Batch folded;
    if (views) {
      folded = Batch::with_samples(n, out.dtype(), TensorLayout(layout), out.memory());
      for (int i = 0; i < n; ++i)
        folded.set_sample(i, out.owner(first[size_t(i)]), out.data(first[size_t(i)]),
                          shapes[size_t(i)]);
      folded.set_ready_event(out.ready_event());
    } else {
      const bool device = out.memory() == MemoryKind::kDevice;
      folded = device ? Batch::allocate_on(ws.stream, *ws.device_pool, out.dtype(), shapes, layout)
                      : Batch::allocate(*ws.host_pool, out.dtype(), shapes, layout);
      // Frame f's block of each outer index (the axes before F) lands at (outer, f).
      for (int i = 0; i < n; ++i) {
        const int64_t count = shapes[size_t(i)][axis];
        if (count == 0) continue;
        const auto& s = out.shape(first[size_t(i)]);
        int64_t outer = 1;
        for (int a = 0; a < axis; ++a) outer *= s[a];
        const size_t block = size_t(s.volume() / std::max<int64_t>(outer, 1)) * elem;
        auto* dst = static_cast<uint8_t*>(folded.data(i));
        for (int64_t f = 0; f < count; ++f) {
          const auto* src = static_cast<const uint8_t*>(out.data(first[size_t(i)] + int(f)));
          if (device) {
            copy_device_rows_async(dst + size_t(f) * block, size_t(count) * block, src, block,
                                   block, size_t(outer), ws.stream);
          } else {
            for (int64_t o = 0; o < outer; ++o)
              std::memcpy(dst + (size_t(o) * size_t(count) + size_t(f)) * block,
                          src + size_t(o) * block, block);
          }
        }
      }
    }
    folded.copy_source_info(seq);
    return folded;
  }

  std::unique_ptr<Operator> op_;
  std::string output_layout_;  // as given, with F ("" when F is not in it)
  std::unique_ptr<Operator> whole_;  // with output_layout_, for inputs with F not first
  int frame_axis_ = -1;
};

}  // namespace

std::unique_ptr<Operator> make_operator(const OpSpec& spec) {
  const auto& factory = spec.schema->factory(spec.backend);
  STOKER_ASSERT(bool(factory), spec.describe(), " has no such backend");
  if (!spec.schema->sequences) return factory(spec);
  // An output_layout with F places the frame axis; the operator is given it without F.
  std::string with_frames;
  if (spec.has_arg("output_layout")) {
    const auto layout = spec.arg<std::string>("output_layout");
    if (layout.find('F') != std::string::npos) with_frames = layout;
  }
  if (with_frames.empty()) return std::make_unique<SequenceOperator>(spec, factory(spec), "");
  STOKER_ENFORCE(with_frames.find('F') == with_frames.rfind('F'), ValueError, spec.describe(),
                 ": output_layout '", with_frames, "' names frames (F) twice");
  OpSpec inner = spec;
  std::string frame_layout = with_frames;
  frame_layout.erase(frame_layout.find('F'), 1);
  inner.args["output_layout"] = frame_layout;
  return std::make_unique<SequenceOperator>(spec, factory(inner), with_frames);
}

}  // namespace stoker::ops
