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

#include "pipeline_test_util.hpp"
#include "stoker/core/affinity.hpp"

namespace stoker {
namespace {
using pipeline_testing::flatten;
using pipeline_testing::JpegFolder;
using pipeline_testing::train_pipeline;
namespace fs = std::filesystem;

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
