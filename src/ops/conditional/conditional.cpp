#include "stoker/ops/conditional/conditional.hpp"

#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

// DALI's advice, appended to every predicate error.
constexpr const char* kPredicateAdvice =
    " Conditions and logical expressions take one value per sample (a 0-d tensor on the CPU), "
    "so that they always give one boolean per sample; comparisons (`x > 0`) give such values. "
    "For elementwise logic on larger tensors use the bitwise operators `&`, `|` and `== 0`, "
    "which evaluate both sides.";

// Sample i of a predicate batch, as a truth value; `what` names the expression in errors.
bool truth(const Batch& pred, int i, const std::string& what, bool bool_only) {
  const TensorShape& shape = pred.shape(i);
  STOKER_ENFORCE(shape.ndim() == 0, ValueError, what,
                 " must be a scalar (0-d tensor) per sample; "
                 "sample ",
                 i, " (source '", pred.source_info(i), "') has shape ", shape.to_string(), ".",
                 kPredicateAdvice);
  STOKER_ENFORCE(!bool_only || pred.dtype() == DType::kBool, ValueError, what,
                 " must be of type bool; got ", dtype_name(pred.dtype()), ".", kPredicateAdvice);
  // A bool is read as its byte: memory from outside may hold values other than 0 and 1.
  if (pred.dtype() == DType::kBool) return *static_cast<const uint8_t*>(pred.data(i)) != 0;
  return sample_as_doubles(pred, i)[0] != 0;
}

void check_sizes(const Batch& data, const Batch& pred, const std::string& op) {
  STOKER_ENFORCE(data.size() == pred.size(), ValueError, op, ": the input has ", data.size(),
                 " samples but the predicate ", pred.size());
}

class Split final : public Operator {
 public:
  using Operator::Operator;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const Batch& pred = ws.input(1);
    check_sizes(in, pred, "_conditional.split");
    std::vector<int> taken[2];  // [0]: the `if` branch's samples, [1]: the `else` branch's
    for (int i = 0; i < pred.size(); ++i)
      taken[truth(pred, i, "the condition of an `if` statement", false) ? 0 : 1].push_back(i);
    for (auto& samples : taken) ws.outputs.push_back(in.select(samples));
  }
};

// Data of the two branches must be one batch: same type, layout and number of dimensions.
void check_same(const Batch& a, const Batch& b) {
  const char* what =
      "the `if` and `else` branches give one variable values of different kinds, which cannot "
      "be merged into one batch: ";
  STOKER_ENFORCE(a.dtype() == b.dtype(), ValueError, what, "type ", dtype_name(a.dtype()),
                 " in the `if` branch, ", dtype_name(b.dtype()), " in the `else` branch");
  if (a.size() == 0 || b.size() == 0) return;  // an empty branch produced no layout to compare
  STOKER_ENFORCE(a.layout() == b.layout(), ValueError, what, "layout '", a.layout().str(),
                 "' in the `if` branch, '", b.layout().str(), "' in the `else` branch");
  STOKER_ENFORCE(a.sample_ndim() == b.sample_ndim(), ValueError, what, a.sample_ndim(),
                 " dimensions in the `if` branch, ", b.sample_ndim(), " in the `else` branch");
}

class Merge final : public Operator {
 public:
  using Operator::Operator;
  void run(Workspace& ws) override {
    const Batch& yes = ws.input(0);
    const Batch& no = ws.input(1);
    const Batch& pred = ws.input(2);
    check_same(yes, no);
    // The builder copies a gpu merge's CPU input to the device; a cpu merge takes no GPU data.
    STOKER_ASSERT(yes.memory() == no.memory(), "_conditional.merge: branches on two devices");
    STOKER_ENFORCE(yes.size() + no.size() == pred.size(), ValueError,
                   "_conditional.merge: the branches give ", yes.size(), " + ", no.size(),
                   " samples for a predicate of ", pred.size());
    const Batch& like = yes.size() > 0 || no.size() == 0 ? yes : no;
    Batch out = Batch::with_samples(pred.size(), like.dtype(), like.layout(), like.memory());
    int k[2] = {0, 0};
    for (int i = 0; i < pred.size(); ++i) {
      const int side = truth(pred, i, "the condition of an `if` statement", false) ? 0 : 1;
      const Batch& from = side == 0 ? yes : no;
      STOKER_ENFORCE(k[side] < from.size(), ValueError, "_conditional.merge: the ",
                     side == 0 ? "`if`" : "`else`",
                     " branch gives fewer samples than its "
                     "predicate selects");
      const int j = k[side]++;
      out.set_sample(i, from.owner(j), from.data(j), from.shape(j));
      out.set_source_info(i, from.source_info(j));
    }
    STOKER_ENFORCE(k[0] == yes.size() && k[1] == no.size(), ValueError,
                   "_conditional.merge: a branch gives more samples than its predicate selects");
    ws.outputs.push_back(std::move(out));
  }
};

// `not x` (eager) and the check on each side of `and`/`or`: a bool per sample.
class Logical final : public Operator {
 public:
  Logical(const OpSpec& spec, bool negate) : Operator(spec), negate_(negate) {}
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const std::string what = negate_ ? std::string("the operand of `not`")
                                     : "the " + spec_.arg<std::string>("expression_side") +
                                           " side of `" +
                                           spec_.arg<std::string>("expression_name") + "`";
    const int n = in.size();
    Batch& out =
        add_output(ws, DType::kBool, std::vector<TensorShape>(size_t(n), TensorShape{}), {});
    for (int i = 0; i < n; ++i) {
      const bool v = truth(in, i, what, !negate_);
      *out.data_as<bool>(i) = negate_ ? !v : v;
    }
  }

 private:
  bool negate_;
};

std::unique_ptr<Operator> make_split(const OpSpec& s) { return std::make_unique<Split>(s); }
std::unique_ptr<Operator> make_merge(const OpSpec& s) { return std::make_unique<Merge>(s); }

OpExample predicate_example(int inputs) {
  OpExample e{.layout = ""};
  e.input_dtypes[inputs - 1] = "bool";
  return e;
}

}  // namespace

OpSchema split_schema() {
  return {
      .name = "_conditional.split",
      .doc =
          "The samples of `input` whose predicate is true (first output) and those whose "
          "predicate is false (second output), in order, without copying. Inserted by "
          "`if` statements on pipeline values; the predicate is a scalar per sample, read "
          "on the CPU.",
      .inputs = {"input", "predicate"},
      .host_inputs = 1,
      .outputs = {"true_samples", "false_samples"},
      .make_cpu = make_split,
      .make_gpu = make_split,  // only sample pointers move: the same code views device memory
      .regroups_samples = true,
      .example = predicate_example(2),
  };
}

OpSchema merge_schema() {
  return {
      .name = "_conditional.merge",
      .doc =
          "The batch whose sample i is the next sample of `true_input` where the predicate "
          "of sample i is true, else the next of `false_input`, without copying: the "
          "values a variable took in the `if` and `else` branches put back in order. Both "
          "must have the same type, layout and number of dimensions.",
      .inputs = {"true_input", "false_input", "predicate"},
      .host_inputs = 1,
      .outputs = {"output"},
      .make_cpu = make_merge,
      .make_gpu = make_merge,
      .regroups_samples = true,
      .example = predicate_example(3),
  };
}

OpSchema not_schema() {
  return {
      .name = "_conditional.not_",
      .doc = "`not x` for a scalar per sample (any numeric type): a bool per sample.",
      .inputs = {"input"},
      .outputs = {"output"},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Logical>(s, true); },
      .example = OpExample{.dtype = "bool", .layout = ""},
  };
}

OpSchema validate_logical_schema() {
  return {
      .name = "_conditional.validate_logical",
      .doc = "Checks that one side of `and`/`or` is a bool scalar per sample and passes it on.",
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {{"expression_name", ArgType::kString, "`and` or `or` (for messages).",
                std::string("and")},
               {"expression_side", ArgType::kString, "`left` or `right` (for messages).",
                std::string("left")}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Logical>(s, false); },
      .example = OpExample{.dtype = "bool", .layout = ""},
  };
}

}  // namespace stoker::ops
