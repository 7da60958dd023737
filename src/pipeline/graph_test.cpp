// The graph passes on hand-made graphs (no device needed): fusion of GPU resampling chains.
#include "stoker/pipeline/graph.hpp"

#include <gtest/gtest.h>

#include "stoker/ops/registry.hpp"

namespace stoker::pipeline {
namespace {

ops::OpSpec node(const std::string& op, ops::Backend b, std::vector<ops::InputRef> inputs,
                 int64_t instance) {
  ops::OpSpec s;
  s.schema = ops::find_op_schema(op);
  s.name = op + "_" + std::to_string(instance);
  s.instance = instance;
  s.backend = b;
  s.num_outputs = 1;
  s.inputs = std::move(inputs);
  return s;
}

// external_source -> copy_to_device -> random_resized_crop (gpu) -> crop_mirror_normalize (gpu)
Graph chain(bool rrc_is_an_output) {
  Graph g;
  g.nodes.push_back(node("external_source", ops::Backend::kCpu, {}, 0));
  g.nodes.push_back(node("random.coin_flip", ops::Backend::kCpu, {}, 1));
  g.nodes.push_back(node("copy_to_device", ops::Backend::kMixed, {{0, 0}}, 1 << 20));
  g.nodes.push_back(node("random_resized_crop", ops::Backend::kGpu, {{2, 0}}, 2));
  g.nodes.back().arg_inputs["num_attempts_dummy"] = {1, 0};
  g.nodes.push_back(node("crop_mirror_normalize", ops::Backend::kGpu, {{3, 0}}, 3));
  g.nodes.back().arg_inputs["mirror"] = {1, 0};
  g.outputs = {{4, 0}};
  if (rrc_is_an_output) g.outputs.push_back({3, 0});
  return g;
}

TEST(Fusion, ResizeIntoCropMirrorNormalizeBecomesOneNode) {
  Graph f = fuse(chain(false));
  ASSERT_EQ(f.nodes.size(), 4u);
  const auto& cmn = f.nodes[3];
  EXPECT_EQ(cmn.schema->name, "crop_mirror_normalize");
  ASSERT_TRUE(cmn.fused_first);
  EXPECT_EQ(cmn.fused_first->schema->name, "random_resized_crop");
  EXPECT_EQ(cmn.fused_first->instance, 2);  // its random stream is kept
  EXPECT_EQ(cmn.instance, 3);
  EXPECT_EQ(cmn.inputs[0].node, 2);  // the copy to the device, re-indexed
  EXPECT_EQ(cmn.arg_inputs.at("mirror").node, 1);
  EXPECT_EQ(cmn.fused_first->arg_inputs.at("num_attempts_dummy").node, 1);  // its own names
  EXPECT_EQ(cmn.arg_inputs.size(), 1u);                                    // mirror only
  EXPECT_TRUE(cmn.fused_first->inputs.empty());
  ASSERT_EQ(f.outputs.size(), 1u);
  EXPECT_EQ(f.outputs[0].node, 3);
}

TEST(Fusion, AnIntermediateUsedElsewhereOrOnTheCpuIsKept) {
  Graph f = fuse(chain(true));  // the crop is also an output: nothing to fuse
  EXPECT_EQ(f.nodes.size(), 5u);
  EXPECT_FALSE(f.nodes[4].fused_first);
  Graph cpu = chain(false);
  cpu.nodes[3].backend = cpu.nodes[4].backend = ops::Backend::kCpu;
  EXPECT_EQ(fuse(cpu).nodes.size(), 5u);  // CPU operators are not fused
}

// external_source -> coin_flip; copy_to_device -> resize -> crop -> flip(horizontal=coin) ->
// crop_mirror_normalize(HWC) -> transpose([2, 0, 1]) -> cast(float16)
Graph long_chain(const std::string& crop_policy) {
  Graph g;
  g.nodes.push_back(node("external_source", ops::Backend::kCpu, {}, 0));
  g.nodes.push_back(node("random.coin_flip", ops::Backend::kCpu, {}, 1));
  g.nodes.push_back(node("copy_to_device", ops::Backend::kMixed, {{0, 0}}, 2));
  g.nodes.push_back(node("resize", ops::Backend::kGpu, {{2, 0}}, 3));
  g.nodes.push_back(node("crop", ops::Backend::kGpu, {{3, 0}}, 4));
  g.nodes.back().args["out_of_bounds_policy"] = crop_policy;
  g.nodes.push_back(node("flip", ops::Backend::kGpu, {{4, 0}}, 5));
  g.nodes.back().arg_inputs["horizontal"] = {1, 0};
  g.nodes.push_back(node("crop_mirror_normalize", ops::Backend::kGpu, {{5, 0}}, 6));
  g.nodes.back().args["output_layout"] = std::string("HWC");
  g.nodes.push_back(node("transpose", ops::Backend::kGpu, {{6, 0}}, 7));
  g.nodes.back().args["perm"] = std::vector<int64_t>{2, 0, 1};
  g.nodes.push_back(node("cast", ops::Backend::kGpu, {{7, 0}}, 8));
  g.nodes.back().args["dtype"] = std::string("float16");
  g.outputs = {{8, 0}, {1, 0}};
  return g;
}

TEST(Fusion, CropsAndFlipsBetweenAndTransposeAndCastAfterJoinTheChain) {
  Graph f = fuse(long_chain("error"));
  ASSERT_EQ(f.nodes.size(), 4u);  // external_source, coin_flip, copy_to_device, the fused node
  const auto& cmn = f.nodes[3];
  ASSERT_EQ(cmn.schema->name, "crop_mirror_normalize");
  ASSERT_TRUE(cmn.fused_first);
  EXPECT_EQ(cmn.fused_first->schema->name, "resize");
  ASSERT_EQ(cmn.fused_middle.size(), 2u);
  EXPECT_EQ(cmn.fused_middle[0]->schema->name, "crop");
  EXPECT_EQ(cmn.fused_middle[1]->schema->name, "flip");
  EXPECT_EQ(cmn.fused_middle[1]->instance, 5);
  EXPECT_EQ(cmn.fused_middle[1]->arg_inputs.at("horizontal").node, 1);  // the flip's per-sample flag
  EXPECT_EQ(cmn.inputs[0].node, 2);
  EXPECT_EQ(cmn.arg<std::string>("output_layout"), "CHW");  // the transpose
  EXPECT_EQ(cmn.arg<std::string>("dtype"), "float16");      // the cast
  ASSERT_EQ(f.outputs.size(), 2u);
  EXPECT_EQ(f.outputs[0].node, 3);
  EXPECT_EQ(f.outputs[1].node, 1);
}

TEST(Fusion, PaddingCropsAndOtherTransposesStayApart) {
  Graph f = fuse(long_chain("pad"));  // a padding crop breaks the chain to the resize
  ASSERT_EQ(f.nodes.size(), 7u);      // ... but the transpose and the cast still fold in
  const auto& cmn = f.nodes[6];
  EXPECT_FALSE(cmn.fused_first);
  EXPECT_TRUE(cmn.fused_middle.empty());
  EXPECT_EQ(cmn.arg<std::string>("dtype"), "float16");
  Graph g = long_chain("error");
  g.nodes[7].args["perm"] = std::vector<int64_t>{1, 0, 2};  // not HWC <-> CHW
  Graph h = fuse(g);
  ASSERT_EQ(h.nodes.size(), 6u);  // fused chain, then transpose and cast stay
  EXPECT_EQ(h.nodes[3].arg<std::string>("output_layout"), "HWC");
  EXPECT_EQ(h.nodes[4].schema->name, "transpose");
  EXPECT_EQ(h.nodes[5].schema->name, "cast");
}

// external_source -> coin_flip; copy_to_device -> flip(horizontal=coin) -> rotate ->
// flip(vertical) -> flip -> warp_affine
Graph warp_chain() {
  Graph g;
  g.nodes.push_back(node("external_source", ops::Backend::kCpu, {}, 0));
  g.nodes.push_back(node("random.coin_flip", ops::Backend::kCpu, {}, 1));
  g.nodes.push_back(node("copy_to_device", ops::Backend::kMixed, {{0, 0}}, 2));
  g.nodes.push_back(node("flip", ops::Backend::kGpu, {{2, 0}}, 3));
  g.nodes.back().arg_inputs["horizontal"] = {1, 0};
  g.nodes.push_back(node("rotate", ops::Backend::kGpu, {{3, 0}}, 4));
  g.nodes.push_back(node("flip", ops::Backend::kGpu, {{4, 0}}, 5));
  g.nodes.back().args["vertical"] = int64_t{1};
  g.nodes.push_back(node("flip", ops::Backend::kGpu, {{5, 0}}, 6));
  g.nodes.push_back(node("warp_affine", ops::Backend::kGpu, {{6, 0}}, 7));
  g.outputs = {{7, 0}};
  return g;
}

TEST(Fusion, AFlipBeforeAWarpBecomesPartOfIt) {
  Graph f = fuse(warp_chain());
  // external_source, coin_flip, copy, rotate (+ the first flip), flip, warp_affine (+ a flip)
  ASSERT_EQ(f.nodes.size(), 6u);
  const auto& rotate = f.nodes[3];
  ASSERT_EQ(rotate.schema->name, "rotate");
  ASSERT_EQ(rotate.fused_middle.size(), 1u);
  EXPECT_EQ(rotate.fused_middle[0]->schema->name, "flip");
  EXPECT_EQ(rotate.fused_middle[0]->instance, 3);
  EXPECT_EQ(rotate.fused_middle[0]->arg_inputs.at("horizontal").node, 1);
  EXPECT_EQ(rotate.inputs[0].node, 2);
  // Of two flips in a row only the one feeding the warp joins it.
  EXPECT_EQ(f.nodes[4].schema->name, "flip");
  EXPECT_EQ(f.nodes[4].inputs[0].node, 3);
  const auto& warp = f.nodes[5];
  ASSERT_EQ(warp.schema->name, "warp_affine");
  ASSERT_EQ(warp.fused_middle.size(), 1u);
  EXPECT_EQ(warp.fused_middle[0]->instance, 6);
  EXPECT_EQ(warp.inputs[0].node, 4);
  EXPECT_EQ(f.outputs[0].node, 5);
}

TEST(Fusion, AFlipUsedElsewhereOrBeforeACpuWarpIsKept) {
  Graph g = warp_chain();
  g.outputs.push_back({3, 0});  // the first flip is also an output
  g.nodes[7].backend = ops::Backend::kCpu;
  Graph f = fuse(g);
  ASSERT_EQ(f.nodes.size(), 8u);
  for (const auto& n : f.nodes) EXPECT_TRUE(n.fused_middle.empty()) << n.name;
  // Nearest-neighbour sampling breaks ties at pixel edges towards one side: not mirrored.
  g = warp_chain();
  g.nodes[4].args["interp_type"] = std::string("INTERP_NN");
  g.nodes[7].args["interp_type"] = std::string("nn");
  EXPECT_EQ(fuse(g).nodes.size(), 8u);
}

}  // namespace
}  // namespace stoker::pipeline
