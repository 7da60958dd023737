// ReaderOperator with a fake format: samples come in the loader's order, are loaded only on
// the reader's own I/O threads, checkpoints ignore what was read ahead, and load errors carry
// the sample and its source.
#include "stoker/ops/readers/reader_base.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <thread>

namespace stoker::ops {
namespace {

class FakeSource final : public ReaderSource {
 public:
  explicit FakeSource(std::set<std::thread::id>* load_threads, int64_t bad = -1)
      : load_threads_(load_threads), bad_(bad) {}
  int64_t build_index() override { return 40; }
  std::vector<DType> output_dtypes() const override { return {DType::kI64}; }
  std::string source_info(int64_t index) const override { return "fake:" + std::to_string(index); }
  void load(readers::LoadedSample& s, MemoryPool& pool) const override {
    {
      std::lock_guard lock(mutex_);
      load_threads_->insert(std::this_thread::get_id());
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
    STOKER_ENFORCE(s.index != bad_, ValueError, "cannot parse record");
    auto buf = pool.acquire(8);
    *static_cast<int64_t*>(buf->data()) = s.index;
    const void* p = buf->data();
    s.outputs = {{std::move(buf), p, TensorShape{1}}};
  }

 private:
  // One lock for every instance: tests with two readers share load_threads (a per-instance
  // lock let TSan see two inserts race).
  static inline std::mutex mutex_;
  std::set<std::thread::id>* load_threads_;
  int64_t bad_;
};

class ReaderOperatorTest : public ::testing::Test {
 protected:
  ReaderOperatorTest() {
    schema_.name = "readers.fake";
    schema_.outputs = {"data"};
    schema_.args = loader_arg_schemas();
  }

  std::unique_ptr<ReaderOperator> make(int64_t bad = -1) {
    OpSpec spec;
    spec.schema = &schema_;
    spec.name = "fake";
    spec.batch_size = 6;
    spec.args["random_shuffle"] = true;
    spec.args["initial_fill"] = int64_t{10};
    spec.args["num_io_threads"] = int64_t{3};
    return std::make_unique<ReaderOperator>(spec, std::make_unique<FakeSource>(&loads_, bad));
  }

  std::vector<int64_t> run(ReaderOperator& op, SampleFailures* failures = nullptr) {
    Workspace ws;
    ws.pool = &threads_;
    ws.host_pool = &pool_;
    ws.batch_size = 6;
    ws.seed = 11;
    ws.failures = failures;
    op.run(ws);
    std::vector<int64_t> out;
    for (int i = 0; i < ws.outputs[0].size(); ++i)
      out.push_back(failures && failures->contains(i) ? -1 : ws.outputs[0].data_as<int64_t>(i)[0]);
    for (int i = 0; i < ws.outputs[0].size(); ++i)
      EXPECT_EQ(ws.outputs[0].source_info(i),
                "fake:" + std::to_string(out[size_t(i)] < 0 ? 7 : out[size_t(i)]));
    return out;
  }

  OpSchema schema_;
  std::set<std::thread::id> loads_;
  MemoryPool pool_{make_host_allocator()};
  ThreadPool threads_{3};
};

TEST_F(ReaderOperatorTest, LoadsOnlyOnItsOwnThreadsInTheLoadersOrder) {
  auto op = make();
  std::vector<int64_t> got;
  for (int b = 0; b < 5; ++b)
    for (auto v : run(*op)) got.push_back(v);
  // The same sequence as the loader alone draws.
  readers::LoaderOptions o;
  o.shuffle = readers::ShuffleMode::kBuffer;
  o.initial_fill = 10;
  o.seed = 11;
  o.batch_size = 6;
  readers::SampleLoader loader(40, o);
  for (auto v : got) EXPECT_EQ(v, loader.next().index);
  // No load ran on the caller's thread or the compute pool's threads.
  std::set<std::thread::id> compute{std::this_thread::get_id()};
  std::mutex m;
  threads_.parallel_for(64, [&](int64_t, int) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::lock_guard lock(m);
    compute.insert(std::this_thread::get_id());
  });
  EXPECT_GE(compute.size(), 2u);
  EXPECT_FALSE(loads_.empty());
  for (auto id : loads_) EXPECT_EQ(compute.count(id), 0u);
}

TEST_F(ReaderOperatorTest, CheckpointsIgnoreWhatWasReadAhead) {
  auto a = make();
  run(*a);
  run(*a);
  auto state = a->save_state();
  ASSERT_TRUE(state);
  auto third = run(*a);
  auto b = make();
  b->restore_state(*state);
  EXPECT_EQ(run(*b), third);
  // Restoring a running reader drops its read-ahead.
  a->restore_state(*state);
  EXPECT_EQ(run(*a), third);
}

TEST_F(ReaderOperatorTest, LoadErrorsNameTheSampleAndSource) {
  auto op = make(/*bad=*/7);
  try {
    for (int b = 0; b < 10; ++b) run(*op);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("(source 'fake:7'): cannot parse record"),
              std::string::npos)
        << e.what();
  }
  auto skipping = make(/*bad=*/7);
  bool seen = false;
  for (int b = 0; b < 10 && !seen; ++b) {
    SampleFailures failures;
    auto got = run(*skipping, &failures);
    for (auto& [i, msg] : failures.by_sample()) {
      EXPECT_EQ(got[size_t(i)], -1);
      EXPECT_NE(msg.find("fake:7"), std::string::npos) << msg;
      seen = true;
    }
  }
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace stoker::ops
