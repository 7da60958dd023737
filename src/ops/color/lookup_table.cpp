#include "stoker/ops/color/lookup_table.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "stoker/kernels/color/lookup_table.hpp"
#include "stoker/kernels/color/lookup_table_gpu.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

// DALI's largest key (its table has 0x10000 entries).
constexpr int64_t kMaxKey = 65535;

bool integer_input(DType d) {
  switch (d) {
    case DType::kU8:
    case DType::kU16:
    case DType::kU32:
    case DType::kU64:
    case DType::kI8:
    case DType::kI16:
    case DType::kI32:
    case DType::kI64:
      return true;
    default:
      return false;
  }
}

class LookupTable : public Operator {
 public:
  // The table is built once, here, so that bad arguments fail when the pipeline is built.
  explicit LookupTable(const OpSpec& spec) : Operator(spec) {
    const auto keys = spec.arg<std::vector<int64_t>>("keys");
    const auto values = spec.arg<std::vector<double>>("values");
    STOKER_ENFORCE(keys.size() == values.size(), ValueError, "lookup_table: `keys` has ",
                   keys.size(), " entries and `values` ", values.size(),
                   "; their lengths must match");
    for (int64_t k : keys)
      STOKER_ENFORCE(k >= 0 && k <= kMaxKey, ValueError, "lookup_table: key ", k,
                     " is outside the range [0, ", kMaxKey, "] of `keys`");
    out_ = dtype_from_name(spec.arg<std::string>("dtype"));
    STOKER_ENFORCE(out_ != DType::kBF16, TypeError,
                   "lookup_table: unsupported output dtype bfloat16 (DALI's: integers, bool, "
                   "float16, float32, float64)");
    // DALI reads the values and the default as float before converting them.
    std::vector<float> v(values.begin(), values.end());
    table_ = kernels::make_lut(keys, v, float(spec.arg<double>("default_value")), out_);
  }

  void run(Workspace& ws) override {
    const Batch& in = checked_input(ws);
    Batch& out = add_output(ws, out_, in.shapes(), in.layout());
    visit_dtype<DType::kU8, DType::kU16, DType::kU32, DType::kU64, DType::kI8, DType::kI16,
                DType::kI32, DType::kI64>(in.dtype(), "lookup_table input", [&](auto tag) {
      using In = typename decltype(tag)::type;
      for_each_sample(ws, in.size(), [&](int i, int) {
        const In* src = in.data_as<const In>(i);
        const int64_t n = in.shape(i).volume();
        void* dst = out.data(i);
        switch (table_.entry_bytes) {
          case 1:
            return gather<In, uint8_t>(src, dst, n);
          case 2:
            return gather<In, uint16_t>(src, dst, n);
          case 4:
            return gather<In, uint32_t>(src, dst, n);
          default:
            return gather<In, uint64_t>(src, dst, n);
        }
      });
    });
  }

 protected:
  const Batch& checked_input(Workspace& ws) const {
    const Batch& in = ws.input(0);
    STOKER_ENFORCE(integer_input(in.dtype()), TypeError,
                   "lookup_table: expects integer input (uint8/16/32/64, int8/16/32/64), got ",
                   dtype_name(in.dtype()));
    return in;
  }

  template <typename In, typename E>
  void gather(const In* src, void* dst, int64_t n) const {
    kernels::lookup_table_cpu(src, static_cast<E*>(dst), n,
                              reinterpret_cast<const E*>(table_.bytes.data()), table_.size);
  }

  DType out_ = DType::kF32;
  kernels::LutTable table_;
};

#ifdef STOKER_HAVE_CUDA
// The gpu backend: the table copied to the device once (and again only if the pipeline's device
// pool changes), one launch per batch.
class LookupTableGpu final : public LookupTable {
 public:
  using LookupTable::LookupTable;
  void run(Workspace& ws) override {
    const Batch& in = checked_input(ws);
    Batch& out = add_output(ws, out_, in.shapes(), in.layout());
    const int n = in.size();
    if (n == 0) return;
    if (!device_table_ || table_pool_ != ws.device_pool) {
      device_table_ = upload(ws, table_.bytes);
      table_pool_ = ws.device_pool;
    }
    std::vector<kernels::LutGpuSample> desc(static_cast<size_t>(n));
    int64_t most = 0;
    for (int i = 0; i < n; ++i) {
      auto& d = desc[size_t(i)];
      d.in = in.data(i), d.out = out.data(i), d.elements = in.shape(i).volume();
      most = std::max(most, d.elements);
    }
    if (most == 0) return;
    STOKER_ENFORCE(n <= 65535, ValueError, "lookup_table (gpu): batches of at most 65535 samples");
    auto device = upload(ws, desc);
    cuda_check(kernels::lookup_table_gpu(static_cast<const kernels::LutGpuSample*>(device->data()),
                                         n, most, in.dtype(), device_table_->data(), table_.size,
                                         table_.entry_bytes, ws.stream),
               "lookup_table (gpu): launching the kernel");
  }

 private:
  std::shared_ptr<Buffer> device_table_;
  const void* table_pool_ = nullptr;
};
#endif

}  // namespace

OpSchema lookup_table_schema() {
  ArgSchema keys{"keys", ArgType::kIntList,
                 "The input values the table maps, each in [0, 65535]; a key given twice keeps "
                 "its last value. As long as `values`.",
                 std::vector<int64_t>{}};
  ArgSchema values{"values", ArgType::kFloatList,
                   "The output value of each key (read as float32, then converted to `dtype`: "
                   "integers rounded half away from zero and saturated).",
                   std::vector<double>{}};
  return {
      .name = "lookup_table",
      .doc =
          "Maps integer data (uint8/16/32/64, int8/16/32/64; any shape and layout, kept) "
          "through a table: out = values[k] where the input value is keys[k], else "
          "`default_value`, converted to `dtype`. As DALI: the table is built once from "
          "float32 values; input values outside every key (negative ones included) give the "
          "default.",
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {std::move(keys),
               std::move(values),
               {"default_value", ArgType::kFloat, "The output for input values that are not keys.",
                0.0},
               {"dtype", ArgType::kDType,
                "The output's type: any numeric type but bfloat16 (bool: value != 0).",
                std::string("float32")}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<LookupTable>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<LookupTableGpu>(s); },
#endif
      .sequences = true,
      .example = OpExample{.args = {{"keys", std::vector<int64_t>{0, 1}},
                                    {"values", std::vector<double>{0.5, 1.5}}},
                           .dtype = "uint8",
                           .layout = "HWC"},
  };
}

}  // namespace stoker::ops
