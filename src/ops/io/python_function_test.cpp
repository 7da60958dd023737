// The python_function operator's queue, served here by a C++ thread as the Python layer serves
// it: calls reach the server in order, outputs come back as the operator's, errors carry the
// server's message, an unserved queue fails at once, and a closing pipeline withdraws its call.
#include "stoker/ops/io/python_function.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "stoker/core/error.hpp"
#include "stoker/ops/op_test_util.hpp"

namespace stoker::ops {
namespace {

using testing::OpRunner;

Batch floats(const std::vector<std::vector<float>>& samples,
             const std::vector<TensorShape>& shapes) {
  auto b = Batch::allocate(default_host_pool(), DType::kF32, shapes, {});
  for (size_t i = 0; i < samples.size(); ++i)
    std::copy(samples[i].begin(), samples[i].end(), b.data_as<float>(int(i)));
  return b;
}

std::string error_of(OpRunner& r, std::vector<Batch> in) {
  try {
    r.run(std::move(in));
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

// Serves calls until stopped: doubles every float of input 0 (function 1) or fails (2).
class Server {
 public:
  Server() {
    ForeignCalls::instance().set_served(true);
    thread_ = std::thread([this] {
      while (ForeignCalls::instance().served()) {
        auto c = ForeignCalls::instance().next(0.05);
        if (!c) continue;
        functions.push_back(c->function);
        if (c->function == 2) {
          c->error = c->op + ": the function raised KeyError";
        } else {
          const Batch& in = c->inputs.at(0);
          Batch out = Batch::allocate(default_host_pool(), DType::kF32, in.shapes(), "");
          for (int s = 0; s < in.size(); ++s)
            for (int64_t k = 0; k < in.shape(s).volume(); ++k)
              out.data_as<float>(s)[k] = 2 * in.data_as<float>(s)[k];
          c->outputs.push_back(std::move(out));
        }
        ForeignCalls::instance().finish(c);
      }
    });
  }
  ~Server() {
    ForeignCalls::instance().set_served(false);
    thread_.join();
  }
  std::vector<int64_t> functions;

 private:
  std::thread thread_;
};

TEST(PythonFunction, ServedCallsGiveTheOutputs) {
  Server server;
  OpRunner r("python_function",
             {{"function_id", int64_t{1}}, {"output_layouts", std::vector<std::string>{"X"}}});
  auto out = r.run({floats({{1, 2}, {3}}, {TensorShape{2}, TensorShape{1}})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].layout(), "X");
  EXPECT_EQ(out[0].data_as<float>(0)[1], 4.f);
  EXPECT_EQ(out[0].data_as<float>(1)[0], 6.f);
  EXPECT_EQ(r.op().stats().at("calls"), 1.0);
}

TEST(PythonFunction, ErrorsAndMissingOutputsAreClear) {
  Server server;
  OpRunner bad("python_function",
               {{"function_id", int64_t{2}}, {"output_layouts", std::vector<std::string>{""}}});
  EXPECT_EQ(error_of(bad, {floats({{1}}, {TensorShape{1}})}),
            "python_function 'python_function': the function raised KeyError");
  OpRunner two("python_function",
               {{"function_id", int64_t{1}}, {"output_layouts", std::vector<std::string>{"", ""}}});
  EXPECT_EQ(error_of(two, {floats({{1}}, {TensorShape{1}})}),
            "python_function 'python_function': the function gave 1 outputs, expected 2 "
            "(num_outputs)");
}

TEST(PythonFunction, WithoutAServerItFailsAtOnce) {
  ForeignCalls::instance().set_served(false);
  OpRunner r("python_function",
             {{"function_id", int64_t{1}}, {"output_layouts", std::vector<std::string>{""}}});
  EXPECT_NE(error_of(r, {floats({{1}}, {TensorShape{1}})}).find("no server runs the functions"),
            std::string::npos);
}

TEST(PythonFunction, AClosingPipelineWithdrawsItsCall) {
  ForeignCalls::instance().set_served(true);  // served, but nobody takes the call
  auto c = std::make_shared<ForeignCall>();
  c->op = "python_function 'f'";
  std::atomic<bool> stopping{false};
  std::thread closer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    stopping = true;
  });
  EXPECT_THROW(ForeignCalls::instance().call(c, &stopping), RuntimeError);
  closer.join();
  EXPECT_EQ(ForeignCalls::instance().next(0.0), nullptr);  // withdrawn from the queue
  ForeignCalls::instance().set_served(false);
}

}  // namespace
}  // namespace stoker::ops
