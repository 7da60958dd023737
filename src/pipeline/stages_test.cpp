// The executor's pieces, each alone: the queues between stages, the telemetry, bad-sample
// replacement, checkpointing, and the CPU stage producing iterations into a queue with no
// executor around it.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "stoker/core/error.hpp"
#include "stoker/ops/registry.hpp"
#include "stoker/pipeline/checkpointer.hpp"
#include "stoker/pipeline/cpu_stage.hpp"
#include "stoker/pipeline/iteration_queue.hpp"
#include "stoker/pipeline/sample_replacement.hpp"
#include "stoker/pipeline/telemetry.hpp"

namespace stoker::pipeline {
namespace {

using namespace std::chrono_literals;

Iteration numbered(int64_t n) {
  Iteration it;
  it.number = n;
  return it;
}

Iteration failed(int64_t n, const std::string& message) {
  Iteration it = numbered(n);
  it.error = std::make_exception_ptr(ValueError(message));
  return it;
}

TEST(IterationQueue, BoundsTheGiverAndWakesItWhenTakenFrom) {
  IterationQueue q(1);
  ASSERT_TRUE(q.wait_for_room());
  ASSERT_TRUE(q.push(numbered(0)));
  auto room = std::async(std::launch::async, [&] { return q.wait_for_room(); });
  EXPECT_EQ(room.wait_for(50ms), std::future_status::timeout);  // full: the giver waits
  ASSERT_TRUE(q.wait_for_item());
  EXPECT_EQ(q.pop().number, 0);
  ASSERT_TRUE(room.get().has_value());
  q.set_capacity(3);
  EXPECT_EQ(q.capacity(), 3);
}

TEST(IterationQueue, InOrderPushesDeliverInIterationOrder) {
  IterationQueue q(4);
  q.start_order(5);
  auto later = std::async(std::launch::async, [&] { return q.push(numbered(6), true); });
  EXPECT_EQ(later.wait_for(50ms), std::future_status::timeout);  // waits for 5
  ASSERT_TRUE(q.push(numbered(5), true));
  ASSERT_TRUE(later.get());
  double waited = 0;
  EXPECT_EQ(q.take({}, waited).number, 5);
  EXPECT_EQ(q.take({}, waited).number, 6);
}

TEST(IterationQueue, AFailedIterationEndsTheQueue) {
  IterationQueue q(4);
  q.start_order(0);
  EXPECT_FALSE(q.push(failed(0, "bad sample"), true));  // the giver stops
  EXPECT_FALSE(q.push(numbered(1), true));        // nothing after a failed iteration
  double waited = 0;
  Iteration it = q.take({}, waited);
  ASSERT_TRUE(it.error);
  try {
    q.take({}, waited);
    FAIL() << "take() after the failure returned";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(), "the pipeline stopped after an earlier error: bad sample");
  }
}

TEST(IterationQueue, StopWakesWaitersAndInterruptLeavesItemsQueued) {
  IterationQueue q(1);
  auto item = std::async(std::launch::async, [&] { return q.wait_for_item(); });
  double waited = 0;
  EXPECT_THROW(q.take([] { return true; }, waited), Interrupted);
  q.stop();
  EXPECT_FALSE(item.get().has_value());
  EXPECT_FALSE(q.wait_for_room().has_value());
  EXPECT_FALSE(q.push(numbered(0)));
}

ops::OpSpec spec(const std::string& op, int64_t instance, Graph& g,
                 std::vector<ops::InputRef> inputs = {}) {
  ops::OpSpec s;
  s.schema = ops::find_op_schema(op);
  s.name = op + "_" + std::to_string(instance);
  s.instance = instance;
  s.batch_size = 4;
  s.inputs = std::move(inputs);
  validate_node(g, s);
  return s;
}

Graph make_graph(bool with_feed) {
  Graph g;
  if (with_feed) g.nodes.push_back(spec("external_source", 0, g));
  g.nodes.push_back(spec("random.uniform", 1, g));
  g.outputs = {{int(g.nodes.size()) - 1, 0}};
  return g;
}

// A graph and everything a stage runs with, without an executor.
struct Bench {
  explicit Bench(PipelineOptions o, bool with_feed = false)
      : options(std::move(o)), graph(make_graph(with_feed)) {
    for (auto& s : graph.nodes) ops.push_back(s.schema->make_cpu(s));
  }
  PipelineOptions options;
  Graph graph;
  std::vector<std::unique_ptr<ops::Operator>> ops;
  ThreadPool pool{options.num_threads};
  MemoryPool host{make_host_allocator()};
  Telemetry telemetry{graph, ""};
  std::atomic<bool> stopping{false};
  StageContext ctx{graph, options, ops, pool, host, nullptr, nullptr, telemetry, stopping};
  Checkpointer checkpoints{graph, ops, uint64_t(options.seed)};
};

PipelineOptions options(int threads, int lanes) {
  PipelineOptions o;
  o.batch_size = 4, o.num_threads = threads, o.seed = 7, o.cpu_lanes = lanes;
  return o;
}

std::vector<std::vector<float>> produce(Bench& b, int iterations, std::vector<int64_t>* numbers) {
  IterationQueue out(2);
  CpuStage stage(b.ctx, b.checkpoints, out, 10, false, {});
  EXPECT_EQ(stage.lanes(), b.options.cpu_lanes == 2 ? 2 : 1);
  stage.start();
  stage.begin();
  std::vector<std::vector<float>> values;
  for (int i = 0; i < iterations; ++i) {
    double waited = 0;
    Iteration it = out.take({}, waited);
    EXPECT_FALSE(it.error);
    EXPECT_EQ(it.after.iteration, it.number + 1);
    numbers->push_back(it.number);
    const Batch& batch = it.outputs.at(0);
    for (int s = 0; s < batch.size(); ++s) values.push_back({batch.data_as<float>(s)[0]});
  }
  stage.stop();
  out.stop();
  stage.join();
  EXPECT_GE(b.telemetry.stages().at(0).iterations, iterations);
  return values;
}

TEST(CpuStage, ProducesNumberedIterationsIntoItsQueue) {
  Bench b(options(2, 1));
  std::vector<int64_t> numbers;
  auto values = produce(b, 3, &numbers);
  EXPECT_EQ(numbers, (std::vector<int64_t>{10, 11, 12}));
  EXPECT_EQ(values.size(), 12u);
  EXPECT_EQ(b.telemetry.operator_times().at(0).runs >= 3, true);
}

TEST(CpuStage, TwoLanesDeliverInOrderWhatOneLaneDelivers) {
  Bench one(options(2, 1)), two(options(2, 2));
  std::vector<int64_t> n1, n2;
  const auto v1 = produce(one, 6, &n1);
  const auto v2 = produce(two, 6, &n2);
  EXPECT_EQ(n2, n1);
  EXPECT_EQ(v2, v1);
}

TEST(CpuStage, WaitsForTheFirstBatchAskedFor) {
  Bench b(options(1, 1));
  IterationQueue out(2);
  CpuStage stage(b.ctx, b.checkpoints, out, 0, false, {});
  stage.start();
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(out.size(), 0u);  // prefetching starts with begin()
  stage.stop();
  out.stop();
  stage.join();
}

TEST(SampleReplacement, RefusesExternalSourcesAndGivesUpBeyondItsBudget) {
  Bench fed(options(1, 1), /*with_feed=*/true);
  SampleReplacement r1(fed.ctx);
  try {
    r1.drop(1, "Error in operator x, ", {{2, "bad JPEG"}}, 4);
    FAIL() << "replaced samples of an external source";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "Error in operator x, bad JPEG (on_error='skip' cannot replace samples that "
                 "come from an external_source)");
  }
  Bench b(options(1, 1));
  SampleReplacement r2(b.ctx);
  EXPECT_EQ(r2.drop(0, "", {{1, "bad"}, {3, "worse"}}, 4), (std::vector<int>{0, 2}));
  EXPECT_EQ(b.telemetry.error_stats().skipped, 2);
  EXPECT_EQ(b.telemetry.take_incidents().size(), 2u);
  for (int k = 0; k < 3; ++k) r2.drop(0, "", {{0, "bad"}, {1, "bad"}, {2, "bad"}, {3, "bad"}}, 4);
  try {  // 2 + 12 + 4 > 4 x 4
    r2.drop(0, "ctx: ", {{0, "a"}, {1, "b"}, {2, "c"}, {3, "last"}}, 4);
    FAIL() << "no limit";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(),
                 "ctx: on_error='skip' gave up after replacing 18 samples in one batch; the last: "
                 "last");
  }
  EXPECT_EQ(r2.next_round(), 1u);
}

TEST(SampleReplacement, SpliceKeepsTheGoodSamplesAndAppendsTheRefill) {
  MemoryPool host(make_host_allocator());
  auto batch = [&](std::vector<int32_t> v) {
    Batch b = Batch::allocate(host, DType::kI32, std::vector<TensorShape>(v.size(), TensorShape({1})),
                              TensorLayout());
    for (size_t i = 0; i < v.size(); ++i) b.data_as<int32_t>(int(i))[0] = v[i];
    return b;
  };
  std::vector<std::vector<Batch>> values{{batch({1, 2, 3, 4})}};
  SampleReplacement::splice(values, 1, {0, 3}, {{batch({8, 9})}});
  std::vector<int32_t> got;
  for (int i = 0; i < values[0][0].size(); ++i) got.push_back(values[0][0].data_as<int32_t>(i)[0]);
  EXPECT_EQ(got, (std::vector<int32_t>{1, 4, 8, 9}));
}

TEST(Telemetry, StagesConsumerAndIncidentsAddUp) {
  Bench b(options(1, 1));
  Telemetry& t = b.telemetry;
  const int cpu = t.add_stage("cpu"), gpu = t.add_stage("gpu");
  t.stage_waited(cpu, 1.0, 2.0, 0.5);
  t.stage_ran(cpu, 3.0, 0.5);
  t.stage_ran(gpu, 1.0);
  EXPECT_DOUBLE_EQ(t.stage_blocked(cpu), 1.0);
  EXPECT_EQ(t.stages()[size_t(cpu)].iterations, 1);
  EXPECT_DOUBLE_EQ(t.stages()[size_t(cpu)].busy, 1.5);
  t.consumer_popped(0.25, {2, 0});
  t.consumer_popped(0.25, {0, 1});
  EXPECT_EQ(t.queue_means(), (std::vector<double>{1.0, 0.5}));
  EXPECT_DOUBLE_EQ(t.consumer().starved, 0.5);
  EXPECT_EQ(t.consumer_batches(), 2);
  for (int i = 0; i < 25; ++i) t.samples_warned(b.graph.nodes[0], {{i, "corrupt data"}});
  const ErrorStats e = t.error_stats();
  EXPECT_EQ(e.warnings, 25);
  EXPECT_EQ(e.recent.size(), 20u);  // the last 20
  EXPECT_TRUE(t.take_incidents().empty());  // warnings are not incidents
}

TEST(Checkpointer, RefusesAnotherSeedOrAnUnknownOperator) {
  Bench b(options(1, 1));
  Checkpoint c = b.checkpoints.snapshot(3);
  EXPECT_EQ(b.checkpoints.restore(c.to_text()), 3);
  c.seed = 8;
  EXPECT_THROW(
      {
        try {
          b.checkpoints.restore(c.to_text());
        } catch (const ValueError& e) {
          EXPECT_STREQ(e.what(),
                       "the checkpoint was taken with seed 8 but this pipeline has seed 7; build "
                       "it with the same seed (or seed=-1 to adopt the checkpoint's)");
          throw;
        }
      },
      ValueError);
  c.seed = 7;
  c.ops.emplace_back("reader", "v2 0");
  EXPECT_THROW(b.checkpoints.restore(c.to_text()), ValueError);
  b.checkpoints.delivered(b.checkpoints.snapshot(5));
  EXPECT_EQ(b.checkpoints.last_delivered().iteration, 5);
}

}  // namespace
}  // namespace stoker::pipeline
