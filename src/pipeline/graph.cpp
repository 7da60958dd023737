#include "stoker/pipeline/graph.hpp"

#include <algorithm>
#include <numeric>

#include "stoker/core/error.hpp"

namespace stoker::pipeline {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t(0));
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t prev = row[0]++;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cur = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] != b[j - 1])});
      prev = cur;
    }
  }
  return row[b.size()];
}

namespace {

std::string suggestion(const std::string& name, const ops::OpSchema& schema) {
  std::string best;
  size_t best_d = 3;  // suggest only close matches
  for (auto& a : schema.args) {
    size_t d = edit_distance(name, a.name);
    if (d < best_d) best_d = d, best = a.name;
  }
  return best.empty() ? "" : "; did you mean '" + best + "'?";
}

void check_ref(const Graph& g, const ops::OpSpec& node, const ops::InputRef& r,
               const std::string& what) {
  STOKER_ENFORCE(r.node >= 0 && r.node < int(g.nodes.size()), ValueError, node.describe(), ": ",
                 what, " refers to an unknown node");
  const auto& producer = g.nodes[size_t(r.node)];
  STOKER_ENFORCE(r.output >= 0 && r.output < producer.num_outputs, ValueError, node.describe(),
                 ": ", what, " refers to output ", r.output, " of ", producer.schema->name,
                 ", which has ", producer.num_outputs);
}

}  // namespace

void validate_node(const Graph& g, ops::OpSpec& node) {
  const auto& s = *node.schema;
  const std::string op = node.describe();
  if (!s.supports(node.backend)) {
    std::string have;
    for (auto b : s.backends())
      have += (have.empty() ? "" : ", ") + std::string(ops::backend_name(b));
    throw ValueError(detail::concat(op, ": no '", ops::backend_name(node.backend),
                                    "' backend; this operator runs on: ", have));
  }
  const size_t fewest = s.inputs.size() - size_t(s.optional_inputs);
  STOKER_ENFORCE((node.inputs.size() >= fewest && node.inputs.size() <= s.inputs.size()) ||
                     (s.variadic_inputs && node.inputs.size() > s.inputs.size()),
                 TypeError, op, ": expects ",
                 fewest < s.inputs.size() ? detail::concat(fewest, " to ") : std::string(),
                 s.inputs.size(), s.variadic_inputs ? " or more" : "", " input(s), got ",
                 node.inputs.size());
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const std::string what = "input '" + s.inputs[std::min(i, s.inputs.size() - 1)] + "'";
    check_ref(g, node, node.inputs[i], what);
    // Data flows CPU -> GPU only: cpu and mixed operators take CPU data.
    const auto& producer = g.nodes[size_t(node.inputs[i].node)];
    STOKER_ENFORCE(node.backend == ops::Backend::kGpu || producer.backend == ops::Backend::kCpu,
                   ValueError, op, ": ", what, " comes from ", producer.describe(),
                   " on the GPU, but a '", ops::backend_name(node.backend),
                   "' operator takes CPU data (GPU to CPU is not supported inside a pipeline)");
    const bool host = s.host_inputs > 0 && i + size_t(s.host_inputs) >= s.inputs.size();
    STOKER_ENFORCE(!host || producer.backend == ops::Backend::kCpu,
                   ValueError, op, ": ", what, " comes from ", producer.describe(),
                   " on the GPU, but it is read on the host: give CPU data");
  }
  for (auto& [name, ref] : node.arg_inputs) {
    const ops::ArgSchema* a = s.find_arg(name);
    STOKER_ENFORCE(a != nullptr, TypeError, op, ": unknown argument '", name, "'",
                   suggestion(name, s));
    STOKER_ENFORCE(a->per_sample, TypeError, op, ": argument '", name,
                   "' must be a constant; it does not accept per-sample tensors");
    STOKER_ENFORCE(!node.args.count(name), TypeError, op, ": argument '", name,
                   "' given both as a constant and as a tensor");
    check_ref(g, node, ref, "argument '" + name + "'");
    const auto& producer = g.nodes[size_t(ref.node)];
    STOKER_ENFORCE(producer.backend == ops::Backend::kCpu, ValueError, op, ": argument '", name,
                   "' comes from ", producer.describe(),
                   " on the GPU; per-sample arguments must be CPU data");
  }
  for (auto& [name, value] : node.args) {
    const ops::ArgSchema* a = s.find_arg(name);
    STOKER_ENFORCE(a != nullptr, TypeError, op, ": unknown argument '", name, "'",
                   suggestion(name, s));
    try {
      value = ops::coerce_arg(s, *a, value);
    } catch (const Error& e) {
      e.rethrow_with(op + ": " + std::string(e.what()).substr(s.name.size() + 2));
    }
  }
  if (s.output_names) {
    node.num_outputs = int(s.output_names(node).size());
  } else if (!s.outputs_from.empty()) {
    STOKER_ENFORCE(node.args.count(s.outputs_from), TypeError, op, ": missing required argument '",
                   s.outputs_from, "'");
    node.num_outputs = int(node.arg<std::vector<std::string>>(s.outputs_from).size());
    STOKER_ENFORCE(node.num_outputs > 0, ValueError, op, ": '", s.outputs_from,
                   "' must name at least one output");
  } else {
    node.num_outputs = int(s.outputs.size());
  }
  for (auto& a : s.args) {
    bool given = node.args.count(a.name) || node.arg_inputs.count(a.name);
    STOKER_ENFORCE(given || a.default_value || a.optional, TypeError, op,
                   ": missing required argument '", a.name, "'");
  }
}

namespace {
// Applies f to every reference node n makes: its inputs, its per-sample arguments and those of
// the operators fused into it (copied first: fused specs are shared, immutable).
template <typename F>
void for_each_ref(ops::OpSpec& n, const F& f) {
  for (auto& r : n.inputs) f(r);
  for (auto& [_, r] : n.arg_inputs) f(r);
  auto remap_fused = [&](std::shared_ptr<const ops::OpSpec>& step) {
    if (!step || step->arg_inputs.empty()) return;
    auto copy = std::make_shared<ops::OpSpec>(*step);
    for (auto& [_, r] : copy->arg_inputs) f(r);
    step = std::move(copy);
  };
  remap_fused(n.fused_first);
  for (auto& m : n.fused_middle) remap_fused(m);
}

// `g` without the nodes not in `keep`, re-indexed, order kept (references to dropped nodes
// must not remain).
Graph keep_nodes(const Graph& g, const std::vector<bool>& keep) {
  std::vector<int> remap(g.nodes.size(), -1);
  Graph out;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!keep[i]) continue;
    remap[i] = int(out.nodes.size());
    out.nodes.push_back(g.nodes[i]);
  }
  for (auto& n : out.nodes)
    for_each_ref(n, [&](ops::InputRef& r) { r.node = remap[size_t(r.node)]; });
  for (auto o : g.outputs) out.outputs.push_back({remap[size_t(o.node)], o.output});
  return out;
}
}  // namespace

namespace {

std::vector<int> count_uses(const Graph& g) {
  std::vector<int> uses(g.nodes.size(), 0);
  for (const auto& n : g.nodes) {
    for (const auto& r : n.inputs) ++uses[size_t(r.node)];
    for (const auto& [_, r] : n.arg_inputs) ++uses[size_t(r.node)];
  }
  for (const auto& o : g.outputs) ++uses[size_t(o.node)];
  return uses;
}

using Chain = ops::FusionTraits::Chain;

// A gpu node reading one value (its input's first output) that nothing has fused into yet.
bool single_gpu(const ops::OpSpec& n) {
  return n.backend == ops::Backend::kGpu && n.inputs.size() == 1 && n.inputs[0].output == 0 &&
         !n.fused_first;
}

// Whether node n's operator declares it may be fused with these arguments.
bool fusable(const ops::OpSpec& n) {
  const auto& f = n.schema->fusion;
  return !f.fusable || f.fusable(n);
}

bool in_chain(const ops::OpSpec& n, Chain role) {
  return single_gpu(n) && n.schema->fusion.chain == role && fusable(n);
}

// Node n as a step fused into another: it keeps its arguments and per-sample arguments; its
// input is the fusing node's business.
std::shared_ptr<const ops::OpSpec> fused_step(const ops::OpSpec& n) {
  auto step = std::make_shared<ops::OpSpec>(n);
  step->inputs.clear();
  return step;
}

}  // namespace

Graph fuse(const Graph& g) {
  Graph out = g;
  std::vector<int> uses = count_uses(g);
  std::vector<bool> keep(g.nodes.size(), true);
  // Resampling chains: from each chain end, walk back through the middle steps to a start.
  for (auto& b : out.nodes) {
    if (!in_chain(b, Chain::kEnd)) continue;
    std::vector<size_t> middle;  // nearest to b first
    size_t at = size_t(b.inputs[0].node);
    while (uses[at] == 1 && out.nodes[at].fused_middle.empty() &&
           in_chain(out.nodes[at], Chain::kMiddle)) {
      middle.push_back(at);
      at = size_t(out.nodes[at].inputs[0].node);
    }
    const auto& a = out.nodes[at];
    if (uses[at] != 1 || !in_chain(a, Chain::kStart)) continue;
    b.fused_first = fused_step(a);
    keep[at] = false;
    for (size_t k = 0; k < middle.size(); ++k) {
      const size_t m = middle[middle.size() - 1 - k];  // in chain order
      b.fused_middle.push_back(fused_step(out.nodes[m]));
      keep[m] = false;
    }
    b.inputs[0] = a.inputs[0];
  }
  // A mirror that only feeds an operator absorbing mirrors: one pass instead of two.
  for (auto& w : out.nodes) {
    if (!single_gpu(w) || !w.schema->fusion.absorbs_mirror || !w.fused_middle.empty() ||
        !fusable(w))
      continue;
    const size_t at = size_t(w.inputs[0].node);
    const auto& f = out.nodes[at];
    if (!keep[at] || uses[at] != 1 || !single_gpu(f) || !f.schema->fusion.mirror ||
        !f.fused_middle.empty())
      continue;
    w.fused_middle.push_back(fused_step(f));
    keep[at] = false;
    w.inputs[0] = f.inputs[0];
  }
  // A node taken over by the one before it (absorb_next): its consumers read that one instead.
  std::vector<int> replaced(out.nodes.size(), -1);
  for (size_t t = 0; t < out.nodes.size(); ++t) {
    auto& tn = out.nodes[t];
    if (tn.backend != ops::Backend::kGpu || tn.inputs.size() != 1 || tn.inputs[0].output != 0)
      continue;
    size_t c = size_t(tn.inputs[0].node);
    while (replaced[c] >= 0) c = size_t(replaced[c]);  // a cast after an absorbed transpose
    auto& cn = out.nodes[c];
    if (!keep[c] || uses[c] != 1 || cn.backend != ops::Backend::kGpu ||
        !cn.schema->fusion.absorb_next || !cn.schema->fusion.absorb_next(cn, tn))
      continue;
    keep[t] = false;
    replaced[t] = int(c);
    uses[c] = uses[t];  // a following node may fold in too
  }
  auto redirect = [&](ops::InputRef& r) {
    while (replaced[size_t(r.node)] >= 0) r.node = replaced[size_t(r.node)];
  };
  for (auto& n : out.nodes) for_each_ref(n, redirect);
  for (auto& o : out.outputs) redirect(o);
  return keep_nodes(out, keep);
}

Graph prune(const Graph& g) {
  std::vector<bool> keep(g.nodes.size(), false);
  std::vector<int> stack;
  for (auto& o : g.outputs) stack.push_back(o.node);
  while (!stack.empty()) {
    int n = stack.back();
    stack.pop_back();
    if (keep[size_t(n)]) continue;
    keep[size_t(n)] = true;
    for (auto& r : g.nodes[size_t(n)].inputs) stack.push_back(r.node);
    for (auto& [_, r] : g.nodes[size_t(n)].arg_inputs) stack.push_back(r.node);
  }
  return keep_nodes(g, keep);
}

}  // namespace stoker::pipeline
