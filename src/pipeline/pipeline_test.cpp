#include "stoker/pipeline.hpp"

#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "stoker/core/affinity.hpp"
#include "stoker/testing/image_reference.hpp"
#include "stoker/testing/jpeg_encode.hpp"

namespace stoker {
namespace {
namespace fs = std::filesystem;

// A folder of class sub-folders with small random JPEGs.
class JpegFolder {
 public:
  explicit JpegFolder(int per_class, int classes = 2) {
    root_ = fs::temp_directory_path() /
            ("stoker_pipe_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    fs::remove_all(root_);
    for (int c = 0; c < classes; ++c) {
      fs::create_directories(root_ / ("class" + std::to_string(c)));
      for (int i = 0; i < per_class; ++i) {
        int64_t h = 20 + 3 * i, w = 30 + 5 * c;
        auto px = testing::random_image_u8(h, w, 3, uint32_t(100 * c + i));
        auto jpeg = testing::encode_jpeg(px.data(), h, w, 3);
        std::ofstream f(
            root_ / ("class" + std::to_string(c)) / ("img" + std::to_string(i) + ".jpg"),
            std::ios::binary);
        f.write(reinterpret_cast<const char*>(jpeg.data()), std::streamsize(jpeg.size()));
      }
    }
  }
  ~JpegFolder() { fs::remove_all(root_); }
  std::string root() const { return root_.string(); }

 private:
  fs::path root_;
  static inline int counter_ = 0;
};

std::unique_ptr<Pipeline> train_pipeline(const std::string& root, int threads, int depth,
                                         int batch = 4) {
  PipelineBuilder b(
      {.batch_size = batch, .num_threads = threads, .seed = 1234, .prefetch_queue_depth = depth});
  auto r = b.add("readers.file", {}, {{"file_root", root}, {"random_shuffle", true}}, {},
                 {.name = "Reader"});
  auto img = b.add("decoders.image", {r[0]});
  auto crop = b.add("random_resized_crop", {img[0]}, {{"size", std::vector<int64_t>{16, 16}}});
  auto coin = b.add("random.coin_flip");
  auto out = b.add("crop_mirror_normalize", {crop[0]},
                   {{"mean", std::vector<double>{128}},
                    {"std", std::vector<double>{64}},
                    {"dtype", std::string("float16")}},
                   {{"mirror", coin[0]}});
  b.set_outputs({out[0], r[1]});
  return b.build();
}

std::vector<uint8_t> flatten(const std::vector<Batch>& outs) {
  std::vector<uint8_t> v;
  for (auto& b : outs)
    for (int i = 0; i < b.size(); ++i) {
      auto* p = static_cast<const uint8_t*>(b.data(i));
      v.insert(v.end(), p, p + b.sample(i).num_bytes());
    }
  return v;
}

TEST(Pipeline, SameSeedSameBatchesForAnyThreadsAndPrefetch) {
  JpegFolder data(5);
  std::vector<std::vector<uint8_t>> reference;
  for (auto [threads, depth] : {std::pair{1, 1}, std::pair{4, 3}, std::pair{2, 2}}) {
    auto pipe = train_pipeline(data.root(), threads, depth);
    for (int it = 0; it < 6; ++it) {  // crosses epoch boundaries (10 files, batch 4)
      auto v = flatten(pipe->run());
      if (reference.size() <= size_t(it)) {
        reference.push_back(v);
      } else {
        ASSERT_EQ(v, reference[size_t(it)]) << "threads " << threads << " depth " << depth;
      }
    }
  }
  EXPECT_NE(reference[0], reference[1]);
}

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

TEST(Pipeline, ReaderMetaAndLabels) {
  JpegFolder data(3, 3);
  auto pipe = train_pipeline(data.root(), 2, 2, 9);
  EXPECT_EQ(pipe->reader_meta("Reader").epoch_size, 9);
  EXPECT_EQ(pipe->reader_meta().shard_size, 9);
  auto out = pipe->run();
  std::vector<int> counts(3);
  for (int i = 0; i < 9; ++i) counts[size_t(out[1].data_as<int32_t>(i)[0])]++;
  EXPECT_EQ(counts, (std::vector<int>{3, 3, 3}));  // one full epoch in the first batch
  EXPECT_EQ(out[0].shape(0), (TensorShape{3, 16, 16}));
  EXPECT_THROW(pipe->reader_meta("nope"), ValueError);
}

TEST(Pipeline, OperatorTimesCountRunsSamplesAndBytes) {
  JpegFolder data(2, 4);
  auto pipe = train_pipeline(data.root(), 2, 1, 4);
  for (int i = 0; i < 3; ++i) pipe->run();
  // Read once the CPU stage is idle (its queue full): an iteration in flight has operator time
  // but no busy time yet.
  std::vector<OperatorTimes> times;
  for (int tries = 0;; ++tries) {
    const int64_t before = pipe->stage_stats()[0].iterations;
    times = pipe->operator_times();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const bool idle =
        std::all_of(times.begin(), times.end(), [&](const auto& t) { return t.runs == before; });
    if (idle && pipe->stage_stats()[0].iterations == before) break;
    ASSERT_LT(tries, 600) << "the CPU stage never stopped";
  }
  ASSERT_EQ(times.size(), 5u);  // reader, decoder, crop, coin flip, normalize
  EXPECT_EQ(times[0].name, "Reader");
  double total = 0;
  for (const auto& t : times) {
    EXPECT_EQ(t.backend, "cpu") << t.name;
    EXPECT_GE(t.runs, 3) << t.name;  // the delivered batches, and maybe one prefetched
    EXPECT_EQ(t.samples, 4 * t.runs) << t.name;
    total += t.seconds;
  }
  const auto& norm = times[4];
  EXPECT_EQ(norm.op, "crop_mirror_normalize");
  EXPECT_EQ(norm.bytes_out, norm.samples * 3 * 16 * 16 * 2);      // float16 CHW
  EXPECT_EQ(times[2].bytes_out, times[2].samples * 16 * 16 * 3);  // the uint8 crops
  // Inside the CPU stage's busy time (with two lanes, busy is their mean).
  const auto cpu = pipe->stage_stats()[0];
  EXPECT_LE(total, cpu.busy * cpu.threads + 1e-6);
}

TEST(Pipeline, CorruptFileErrorNamesOperatorSampleAndFile) {
  JpegFolder data(2, 1);
  auto bad = fs::path(data.root()) / "class0" / "img1.jpg";
  std::ofstream(bad, std::ios::binary | std::ios::trunc) << "\xff\xd8\xff\xe0 not really";
  PipelineBuilder b({.batch_size = 2, .num_threads = 2, .seed = 1});
  auto r = b.add("readers.file", {}, {{"file_root", data.root()}});
  auto img = b.add("decoders.image", {r[0]}, {}, {}, {.defined_at = "train.py:7"});
  b.set_outputs({img[0]});
  auto pipe = b.build();
  try {
    pipe->run();
    FAIL();
  } catch (const ValueError& e) {
    std::string m = e.what();
    EXPECT_EQ(m.rfind("Error in operator decoders.image (defined at train.py:7), iteration 0, "
                      "sample 1 (source '" +
                          bad.string() + "'): invalid JPEG: ",
                      0),
              0u)
        << m;
  }
  try {
    pipe->run();
    FAIL();
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("the pipeline stopped after an earlier error"),
              std::string::npos);
  }
}

std::unique_ptr<Pipeline> skip_pipeline(const std::string& root, int threads) {
  PipelineBuilder b({.batch_size = 4,
                     .num_threads = threads,
                     .seed = 9,
                     .prefetch_queue_depth = 2,
                     .on_error = "skip"});
  auto r = b.add("readers.file", {}, {{"file_root", root}, {"stick_to_shard", true}});
  auto img = b.add("decoders.image", {r[0]});
  auto crop = b.add("random_resized_crop", {img[0]}, {{"size", std::vector<int64_t>{8, 8}}});
  auto coin = b.add("random.coin_flip");
  auto out = b.add("crop_mirror_normalize", {crop[0]}, {}, {{"mirror", coin[0]}});
  b.set_outputs({out[0], r[1]});
  return b.build();
}

TEST(Pipeline, SkipReplacesBadSamplesWithTheNextOnes) {
  JpegFolder data(5);  // 10 files
  auto bad1 = fs::path(data.root()) / "class0" / "img2.jpg";
  auto bad2 = fs::path(data.root()) / "class1" / "img0.jpg";
  std::ofstream(bad1, std::ios::binary | std::ios::trunc) << "\xff\xd8\xff\xe0 broken";
  std::ofstream(bad2, std::ios::binary | std::ios::trunc) << "not an image at all";
  std::vector<std::vector<uint8_t>> first;
  for (int threads : {1, 3}) {
    auto pipe = skip_pipeline(data.root(), threads);
    std::vector<std::string> sources;
    std::vector<std::vector<uint8_t>> outs;
    for (int it = 0; it < 4; ++it) {  // 16 good samples: two epochs of 8 good files
      auto batch = pipe->run();
      ASSERT_EQ(batch[0].size(), 4);
      for (int i = 0; i < 4; ++i) sources.push_back(batch[0].source_info(i));
      outs.push_back(flatten(batch));
    }
    std::set<std::string> unique(sources.begin(), sources.end());
    EXPECT_EQ(unique.size(), 8u);
    EXPECT_FALSE(unique.count(bad1.string()) || unique.count(bad2.string()));
    // Read order without shuffling: the good files in order, twice.
    EXPECT_EQ(sources[0], (fs::path(data.root()) / "class0" / "img0.jpg").string());
    EXPECT_EQ(sources[2], (fs::path(data.root()) / "class0" / "img3.jpg").string());
    auto stats = pipe->error_stats();
    EXPECT_GE(stats.skipped, 4);  // each bad file at least twice (prefetching may read more)
    EXPECT_NE(stats.recent.at(0).find("decoders.image: sample "), std::string::npos);
    EXPECT_NE(stats.recent.at(0).find(bad1.string()), std::string::npos) << stats.recent[0];
    // The pipeline reads ahead until its queues are full, meeting the bad files again: once it
    // waits for the consumer, nothing new happens between two takes (under a loaded machine's
    // scheduling the read-ahead could still be going on right after run()).
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_FALSE(pipe->take_incidents().empty());
    EXPECT_TRUE(pipe->take_incidents().empty());
    if (first.empty()) {
      first = outs;
    } else {
      EXPECT_EQ(outs, first);  // replacements do not depend on the thread count
    }
  }
}

TEST(Pipeline, SkipGivesUpWhenEverythingIsBad) {
  JpegFolder data(3, 1);
  for (int i = 0; i < 3; ++i)
    std::ofstream(fs::path(data.root()) / "class0" / ("img" + std::to_string(i) + ".jpg"),
                  std::ios::trunc)
        << "junk";
  auto pipe = skip_pipeline(data.root(), 2);
  try {
    pipe->run();
    FAIL();
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("on_error='skip' gave up after replacing"),
              std::string::npos)
        << e.what();
  }
}

TEST(Pipeline, ValidationErrorsNameTheOperator) {
  PipelineBuilder b({.batch_size = 2});
  auto expect_error = [&](auto f, const std::string& msg) {
    try {
      f();
      FAIL() << "no error; expected: " << msg;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), msg);
    }
  };
  expect_error(
      [&] {
        b.add("readers.file", {}, {{"file_rot", std::string("x")}}, {}, {.defined_at = "p.py:3"});
      },
      "readers.file (defined at p.py:3): unknown argument 'file_rot'; did you mean "
      "'file_root'?");
  expect_error([&] { b.add("random_resized_crop", {}, {}); },
               "random_resized_crop: expects 1 input(s), got 0");
  auto coin = b.add("random.coin_flip");
  expect_error([&] { b.add("random_resized_crop", {coin[0]}, {}); },
               "random_resized_crop: missing required argument 'size'");
  expect_error(
      [&] {
        b.add("resize", {coin[0]}, {}, {{"mode", coin[0]}});
      },
      "resize: argument 'mode' must be a constant; it does not accept per-sample "
      "tensors");
  expect_error([&] { b.add("peek_image_shape", {coin[0]}, {}, {}, {.device = "gpu"}); },
               "peek_image_shape: no 'gpu' backend; this operator runs on: cpu");
  expect_error([&] { b.add("decoders.nothing"); }, "unknown operator 'decoders.nothing'");
  expect_error(
      [&] {
        b.add("flip", {coin[0]}, {{"horizontal", std::string("yes")}});
      },
      "flip: argument 'horizontal' expects int, got str 'yes'");
}

TEST(Pipeline, ExternalSourceFeedsEndsEpochsAndPrunes) {
  PipelineBuilder b({.batch_size = 2, .num_threads = 2, .seed = 3});
  auto src = b.add("external_source", {}, {{"layout", std::string("HWC")}}, {}, {.name = "in"});
  b.add("random.uniform");  // unused: pruned
  auto flipped = b.add("flip", {src[0]});
  b.set_outputs({flipped[0]});
  auto pipe = b.build();
  EXPECT_EQ(pipe->external_source_names(), std::vector<std::string>{"in"});
  auto batch = Batch::allocate(default_host_pool(), DType::kU8, {{1, 2, 1}, {1, 2, 1}});
  for (int i = 0; i < 2; ++i) {
    batch.data_as<uint8_t>(i)[0] = uint8_t(10 * i);
    batch.data_as<uint8_t>(i)[1] = uint8_t(10 * i + 1);
  }
  pipe->feed_input("in", batch);
  pipe->feed_end("in");
  auto out = pipe->run();
  EXPECT_EQ(out[0].data_as<uint8_t>(1)[0], 11);
  EXPECT_EQ(out[0].data_as<uint8_t>(1)[1], 10);
  EXPECT_THROW(pipe->run(), EndOfData);
  pipe->feed_input("in", batch);  // the next epoch
  EXPECT_EQ(pipe->run()[0].data_as<uint8_t>(0)[0], 1);
  EXPECT_THROW(pipe->feed_input("nope", batch), ValueError);
}

TEST(Pipeline, DestroyedMidEpochWithoutHanging) {
  JpegFolder data(4);
  auto t0 = std::chrono::steady_clock::now();
  for (int rep = 0; rep < 5; ++rep) {
    auto pipe = train_pipeline(data.root(), 3, 4);
    pipe->run();  // the producer is now busy prefetching
  }
  {
    // Waiting on an external source that is never fed.
    PipelineBuilder b({.batch_size = 1});
    auto src = b.add("external_source");
    b.set_outputs({src[0]});
    auto pipe = b.build();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 30);
}

#ifdef __linux__
std::set<int> thread_ids() {
  std::set<int> ids;
  for (const auto& e : fs::directory_iterator("/proc/self/task"))
    ids.insert(std::stoi(e.path().filename()));
  return ids;
}

std::vector<int> cores_of_thread(int tid) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(tid, sizeof(set), &set) != 0) return {};
  std::vector<int> cores;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cores.push_back(c);
  return cores;
}

std::string name_of_thread(int tid) {
  std::ifstream f("/proc/self/task/" + std::to_string(tid) + "/comm");
  std::string name;
  std::getline(f, name);
  return name;
}

TEST(Pipeline, CpuAffinityHoldsEveryThreadThePipelineStarts) {
  JpegFolder data(6);
  const std::vector<int> mine = thread_affinity();
  const int core = mine.back();
  const std::set<int> before = thread_ids();
  PipelineBuilder b({.batch_size = 4, .num_threads = 3, .seed = 1, .cpu_affinity = {core}});
  auto r = b.add("readers.file", {}, {{"file_root", data.root()}});
  auto img = b.add("decoders.image", {r[0]});
  b.set_outputs({img[0], r[1]});
  auto pipe = b.build();
  for (int i = 0; i < 3; ++i) pipe->run();  // readers start their I/O threads at the first run
  EXPECT_EQ(thread_affinity(), mine);       // the caller keeps its own cores
  int started = 0;
  for (int tid : thread_ids()) {
    if (before.count(tid)) continue;
#ifdef __SANITIZE_THREAD__
    // ThreadSanitizer's own background thread starts lazily: not one of the pipeline's.
    if (name_of_thread(tid).rfind("stoker-", 0) != 0) continue;
#endif
    ++started;
    EXPECT_EQ(cores_of_thread(tid), std::vector<int>{core}) << "thread " << tid;
    // Named, so profiles (top -H, perf, bench/fed_gap.py) tell them from the framework's.
    EXPECT_EQ(name_of_thread(tid).rfind("stoker-", 0), 0u)
        << "thread " << tid << ": " << name_of_thread(tid);
  }
  EXPECT_GE(started, 3);  // the producer, 2 pool workers (and the readers' I/O threads)
}

TEST(Pipeline, CpuAffinityRefusesCoresThatDoNotExist) {
  PipelineBuilder b({.batch_size = 1, .cpu_affinity = {0, 99999}});
  auto coin = b.add("random.coin_flip");
  b.set_outputs({coin[0]});
  try {
    b.build();
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("cpu_affinity: core 99999 does not exist"),
              std::string::npos)
        << e.what();
  }
}
#endif

}  // namespace
}  // namespace stoker
