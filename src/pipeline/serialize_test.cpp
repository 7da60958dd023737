// Pipelines from their serialised definitions (Python's pipe.serialize()): what the builder
// builds, automatic settings, older versions, and the documents and options refused.
#include <gtest/gtest.h>

#include <string>

#include "pipeline_test_util.hpp"
#include "stoker/pipeline.hpp"

namespace stoker {
namespace {
using pipeline_testing::flatten;
using pipeline_testing::JpegFolder;
using pipeline_testing::train_pipeline;

// train_pipeline(root, 2, 2) as Python's pipe.serialize() writes it.
std::string train_json(const std::string& root) {
  return R"({"format": "stoker.pipeline", "version": 1, "batch_size": 4, "num_threads": 2,
    "device_id": null, "seed": 1234, "prefetch_queue_depth": {"cpu_size": 2, "gpu_size": 2},
    "host_memory_budget": 0, "device_memory_budget": 0, "on_error": "raise",
    "pinned_outputs": false,
    "nodes": [
     {"op": "readers.file", "name": "Reader", "device": "cpu", "inputs": [],
      "args": {"file_root": ")" +
         root + R"(", "random_shuffle": true}, "arg_inputs": {}},
     {"op": "decoders.image", "name": "decode", "device": "cpu", "inputs": [[0, 0]], "args": {},
      "arg_inputs": {}},
     {"op": "random_resized_crop", "name": "crop", "device": "cpu", "inputs": [[1, 0]],
      "args": {"size": [16, 16]}, "arg_inputs": {}},
     {"op": "random.coin_flip", "name": "coin", "device": "cpu", "inputs": [], "args": {},
      "arg_inputs": {}},
     {"op": "crop_mirror_normalize", "name": "cmn", "device": "cpu", "inputs": [[2, 0]],
      "args": {"mean": [128], "std": [64], "dtype": "float16"}, "arg_inputs": {"mirror": [3, 0]}}
    ],
    "outputs": [[4, 0], [0, 1]]})";
}

// num_threads="auto" with a cpu_budget, prefetch_queue_depth="auto": read as the options, and
// the outputs are the builder's (they do not depend on the thread count).
TEST(Pipeline, FromJsonReadsTheAutomaticSettings) {
  JpegFolder data(5);
  std::string text = train_json(data.root());
  const auto replace = [&](const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
  };
  replace("\"num_threads\": 2,", "\"num_threads\": \"auto\", \"cpu_budget\": 3,");
  replace("{\"cpu_size\": 2, \"gpu_size\": 2}", "\"auto\"");
  auto loaded = Pipeline::from_json(text);
  EXPECT_TRUE(loaded->options().auto_threads);
  EXPECT_EQ(loaded->options().num_threads, 3);
  EXPECT_TRUE(loaded->options().auto_prefetch);
  EXPECT_EQ(loaded->autotune().threads, 3);
  EXPECT_EQ(loaded->autotune().prefetch_depth, 2);
  EXPECT_TRUE(loaded->options().cpu_affinity.empty());  // absent: any core
  replace("\"num_threads\":", "\"cpu_affinity\": [0], \"num_threads\":");
  EXPECT_EQ(Pipeline::from_json(text)->options().cpu_affinity, std::vector<int>{0});
  auto built = train_pipeline(data.root(), 2, 2);
  for (int it = 0; it < 3; ++it)
    EXPECT_EQ(flatten(loaded->run()), flatten(built->run())) << "iteration " << it;
}

// The tuner parks threads while the stages run (a slow consumer: it descends), and the
// outputs stay the builder's.
TEST(Pipeline, AutoThreadsChangeWhileRunningWithoutChangingOutputs) {
  JpegFolder data(5);
  std::string text = train_json(data.root());
  const std::string from = "\"num_threads\": 2,";
  text.replace(text.find(from), from.size(), "\"num_threads\": \"auto\", \"cpu_budget\": 4,");
  auto tuned = Pipeline::from_json(text);
  auto built = train_pipeline(data.root(), 2, 2);
  const auto start = std::chrono::steady_clock::now();
  int it = 0;
  while (tuned->autotune().changes.empty() &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(20)) {
    EXPECT_EQ(flatten(tuned->run()), flatten(built->run())) << "iteration " << it++;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));  // a training step
  }
  const auto a = tuned->autotune();
  ASSERT_FALSE(a.changes.empty()) << "no change in 20 s";
  EXPECT_EQ(a.changes[0].threads, 3);
  EXPECT_NE(a.changes[0].why.find("fewer"), std::string::npos);
  for (int k = 0; k < 5; ++k) EXPECT_EQ(flatten(tuned->run()), flatten(built->run()));
}

TEST(Pipeline, FromJsonBuildsWhatTheBuilderBuilds) {
  JpegFolder data(5);
  auto built = train_pipeline(data.root(), 2, 2);
  auto loaded = Pipeline::from_json(train_json(data.root()));
  auto one_thread =
      Pipeline::from_json(train_json(data.root()), [](PipelineOptions& o) { o.num_threads = 1; });
  EXPECT_EQ(loaded->options().num_threads, 2);
  EXPECT_EQ(one_thread->options().num_threads, 1);
  EXPECT_EQ(loaded->reader_meta("Reader").epoch_size, 10);
  for (int it = 0; it < 4; ++it) {
    const auto expected = flatten(built->run());
    EXPECT_EQ(flatten(loaded->run()), expected) << "iteration " << it;
    EXPECT_EQ(flatten(one_thread->run()), expected) << "iteration " << it;
  }
}

TEST(Pipeline, FromJsonRefusesDocumentsItCannotUseAndSaysWhy) {
  JpegFolder data(2);
  const std::string good = train_json(data.root());
  auto fails = [](const std::string& text, const std::string& expected) {
    try {
      Pipeline::from_json(text);
      ADD_FAILURE() << "no error; expected: " << expected;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  fails("{nope", "not JSON");
  fails("888e774", "not JSON");  // a number beyond double (found by the fuzz target)
  fails(R"({"nodes": []})", "not a serialized stoker pipeline");
  fails(replace(R"("version": 1)", R"("version": 3)"),
        "schema version 3; this stoker reads versions 1 and 2");
  fails(replace(R"("inputs": [[1, 0]])", R"("inputs": [[3, 0]])"),
        "node 2 ('crop', random_resized_crop) reads output 0 of node 3, which does not come "
        "before it");
  fails(replace(R"("size": [16, 16])", R"("size": {"w": 16})"),
        "node 2 ('crop', random_resized_crop) argument 'size': unsupported argument value");
  fails(replace(R"("op": "random.coin_flip")", R"("op": "random.coin_toss")"), "coin_toss");
  fails(replace(R"("batch_size": 4)", R"("batch_size": "four")"),
        "option 'batch_size' is \"four\"");
  fails(replace(R"("outputs": [[4, 0], [0, 1]])", R"("outputs": [[9, 0]])"),
        "an output reads output 0 of node 9");
  // Wrong JSON types name the field (they were the JSON library's type errors, found by
  // fuzz/pipeline_json_fuzzer.cpp); numbers are not truncated or wrapped.
  fails(replace(R"("name": "decode")", R"("name": 5)"),
        "node 1 (decoders.image) field 'name' is 5");
  fails(replace(R"("name": "coin", "device": "cpu")", R"("name": "coin", "device": ["cpu"])"),
        "node 3 (random.coin_flip) field 'device' is [\"cpu\"]");
  fails(replace(R"("inputs": [[1, 0]])", R"("inputs": {"a": [1, 0]})"),
        "node 2 ('crop', random_resized_crop): \"inputs\" must be a list, got {\"a\":[1,0]}");
  fails(replace(R"("args": {"size": [16, 16]})", R"("args": [16, 16])"),
        "node 2 ('crop', random_resized_crop): \"args\" must be an object");
  fails(replace(R"("arg_inputs": {"mirror": [3, 0]})", R"("arg_inputs": [[3, 0]])"),
        "node 4 ('cmn', crop_mirror_normalize): \"arg_inputs\" must be an object");
  fails(replace(R"("batch_size": 4)", R"("batch_size": 2.5)"), "option 'batch_size' is 2.5");
  fails(replace(R"("seed": 1234)", R"("seed": 18446744073709551615)"),
        "option 'seed' is 18446744073709551615");
  fails(replace(R"("prefetch_queue_depth": {"cpu_size": 2, "gpu_size": 2})",
                R"("prefetch_queue_depth": "deep")"),
        "option 'prefetch_queue_depth' is \"deep\" (\"auto\", a depth, or");
  fails(replace(R"("format": "stoker.pipeline")", R"("format": 7)"),
        "not a serialized stoker pipeline");
  std::string deep(100, '[');
  deep += std::string(100, ']');
  fails(replace(R"("size": [16, 16])", R"("size": )" + deep),
        "argument 'size': unsupported argument value (a value nested more than 64 levels deep)");
}

// Version 1 (options at the top level, Python's forms) read, written back as version 2 (the
// options by their PipelineOptions names), read again: the same definition and batches.
TEST(Pipeline, DefinitionsRoundTripThroughVersionTwo) {
  JpegFolder data(5);
  auto v1 = PipelineDefinition::from_json(train_json(data.root()));
  v1.options.auto_prefetch = true;
  v1.options.cpu_affinity = {0};
  v1.options.trace = "not saved";
  const std::string text = v1.to_json();
  EXPECT_NE(text.find("\"version\": 2"), std::string::npos) << text;
  EXPECT_EQ(text.find("not saved"), std::string::npos) << text;
  auto v2 = PipelineDefinition::from_json(text);
  EXPECT_EQ(v2.to_json(), text);
  EXPECT_TRUE(v2.options.auto_prefetch);
  EXPECT_EQ(v2.options.cpu_affinity, std::vector<int>{0});
  EXPECT_EQ(v2.options.seed, 1234);
  ASSERT_EQ(v2.nodes.size(), 5u);
  EXPECT_EQ(v2.nodes[4].arg_inputs.at("mirror").node, 3);
  auto loaded = v2.build();
  auto built = train_pipeline(data.root(), 2, 2);
  for (int it = 0; it < 3; ++it)
    EXPECT_EQ(flatten(loaded->run()), flatten(built->run())) << "iteration " << it;
}

TEST(Pipeline, FromJsonTakesOneQueueDepthForBoth) {
  JpegFolder data(2);
  std::string text = train_json(data.root());
  const std::string from = R"("prefetch_queue_depth": {"cpu_size": 2, "gpu_size": 2})";
  text.replace(text.find(from), from.size(), R"("prefetch_queue_depth": 3)");
  const auto loaded = Pipeline::from_json(text);
  EXPECT_EQ(loaded->options().prefetch_queue_depth, 3);
  EXPECT_EQ(loaded->options().gpu_queue_depth, 3);
}

// Options beyond their documented ranges (docs/design/pipeline.md, "Ranges") are refused by
// the builder, so serialised pipelines are too, naming the option, the value and the range,
// before a thread starts (100000 threads hung the build; a depth of 10^9 the first run).
TEST(Pipeline, OptionsBeyondTheirRangesAreRefusedFromJsonToo) {
  JpegFolder data(2);
  const std::string good = train_json(data.root());
  auto fails = [&](const std::string& from, const std::string& to, const std::string& expected) {
    std::string text = good;
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    try {
      Pipeline::from_json(text);
      ADD_FAILURE() << "no error; expected: " << expected;
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  const std::string depths = R"("prefetch_queue_depth": {"cpu_size": 2, "gpu_size": 2})";
  fails(R"("num_threads": 2)", R"("num_threads": 100000)",
        "num_threads must be at most 1024, got 100000 (its range is [1, 1024])");
  fails(depths, R"("prefetch_queue_depth": 1000000000)",
        "prefetch_queue_depth must be at most 64, got 1000000000 (its range is [1, 64])");
  fails(depths, R"("prefetch_queue_depth": {"cpu_size": 2, "gpu_size": 65})",
        "gpu_queue_depth (prefetch_queue_depth's gpu_size) must be at most 64, got 65");
  fails(R"("batch_size": 4)", R"("batch_size": 1048577)",
        "batch_size must be at most 1048576, got 1048577 (its range is [1, 1048576])");
  fails(R"("batch_size": 4)", R"("batch_size": 0)", "batch_size must be at least 1, got 0");
  // At the limits they build (without running: a queue of 64 batches of 2^20 samples).
  PipelineOptions o;
  o.batch_size = 1 << 20, o.num_threads = 1024, o.prefetch_queue_depth = 64;
  o.gpu_queue_depth = 64;
  PipelineBuilder b(o);
  b.set_outputs({b.add("random.uniform")[0]});
  EXPECT_NE(b.build(), nullptr);
}

}  // namespace
}  // namespace stoker
