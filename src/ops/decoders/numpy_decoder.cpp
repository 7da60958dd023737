#include "stoker/ops/decoders/numpy_decoder.hpp"

#include <cstring>
#include <vector>

#include "stoker/kernels/tensor/tensor_cpu.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {

namespace {
constexpr const char* kOp = "decoders.numpy";

// DALI's NUMPY_ALLOWED_TYPES: what a .npy header may hold and what `dtype` may ask for.
bool npy_dtype(DType d) { return d != DType::kBF16; }
}  // namespace

readers::NpyHeader parse_npy_sample(std::span<const uint8_t> f) {
  STOKER_ENFORCE(!f.empty(), ValueError, kOp,
                 ": the input sample is empty; expected the bytes of a .npy file");
  // DALI's decoder reads format version 1 only (versions 2 and 3 exist for headers over 64 KiB
  // and non-latin-1 field names: structured arrays, which neither library decodes).
  if (f.size() >= 7 && std::memcmp(f.data(), "\x93NUMPY", 6) == 0)
    STOKER_ENFORCE(f[6] == 1, ValueError, kOp, ": .npy format version ", int(f[6]),
                   " is not supported; decoders.numpy reads version 1 only (as DALI's)");
  return readers::parse_npy_header(f, kOp);
}

// A bool array's bytes as 0 and 1: a file may hold any byte there, and reading one that is
// neither as a C++ bool is undefined (found by the npy_decoder fuzz target); numpy reads any
// nonzero byte as True.
void normalize_bools(uint8_t* p, size_t n) {
  for (size_t k = 0; k < n; ++k) p[k] = p[k] != 0;
}

void decode_npy_sample(const readers::NpyHeader& h, const uint8_t* bytes, DType dtype, void* out) {
  const uint8_t* data = bytes + h.data_offset;
  if (dtype == h.dtype) {
    readers::npy_to_c_order(h, data, static_cast<uint8_t*>(out));
    if (h.dtype == DType::kBool) normalize_bools(static_cast<uint8_t*>(out), h.data_bytes());
    return;
  }
  // C order (and alignment: a sample may start anywhere in its batch) first, then the cast.
  std::vector<uint8_t> c_order(h.data_bytes());
  readers::npy_to_c_order(h, data, c_order.data());
  if (h.dtype == DType::kBool) normalize_bools(c_order.data(), c_order.size());
  int64_t count = 1;
  for (auto d : h.shape) count *= d;
  visit_numeric(h.dtype, "decoders.numpy input", [&](auto it) {
    using In = typename decltype(it)::type;
    visit_numeric(dtype, "decoders.numpy output", [&](auto ot) {
      using Out = typename decltype(ot)::type;
      kernels::cast_cpu(reinterpret_cast<const In*>(c_order.data()), count, static_cast<Out*>(out));
    });
  });
}

namespace {

class NumpyDecoder final : public Operator {
 public:
  explicit NumpyDecoder(const OpSpec& spec) : Operator(spec) {
    if (spec.has_arg("dtype")) {
      dtype_ = dtype_from_name(spec.arg<std::string>("dtype"));
      STOKER_ENFORCE(npy_dtype(*dtype_), TypeError, kOp, ": dtype ", dtype_name(*dtype_),
                     " is not a .npy type (bool, integers, float16/32/64)");
    }
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    STOKER_ENFORCE(in.dtype() == DType::kU8 || in.dtype() == DType::kI8, TypeError, kOp,
                   ": the input must be the bytes of .npy files (uint8 or int8), got ",
                   dtype_name(in.dtype()));
    std::vector<readers::NpyHeader> headers(static_cast<size_t>(n));
    for_each_sample(ws, n, [&](int i, int) {
      headers[size_t(i)] =
          parse_npy_sample({static_cast<const uint8_t*>(in.data(i)), in.sample(i).num_bytes()});
    });
    DType dtype = dtype_.value_or(n ? headers[0].dtype : DType::kU8);
    std::vector<TensorShape> shapes;
    for (int i = 0; i < n; ++i) {
      const auto& h = headers[size_t(i)];
      STOKER_ENFORCE(dtype_ || h.dtype == dtype, TypeError, kOp, ": sample ", i, " holds ",
                     dtype_name(h.dtype), " data but sample 0 holds ", dtype_name(dtype),
                     " (a batch has one dtype; give `dtype` to convert)");
      STOKER_ENFORCE(h.shape.size() == headers[0].shape.size(), ValueError, kOp, ": sample ", i,
                     " has ", h.shape.size(), " dimensions but sample 0 has ",
                     headers[0].shape.size(), " (all samples of a batch have the same number)");
      shapes.emplace_back(h.shape);
    }
    Batch& out = add_output(ws, dtype, std::move(shapes), TensorLayout());
    for_each_sample(ws, n, [&](int i, int) {
      decode_npy_sample(headers[size_t(i)], static_cast<const uint8_t*>(in.data(i)), dtype,
                        out.data(i));
    });
  }

 private:
  std::optional<DType> dtype_;
};

}  // namespace

OpSchema numpy_decoder_schema() {
  return {
      .name = "decoders.numpy",
      .doc =
          "Decodes NumPy .npy files given as bytes (a 1-D uint8 tensor per sample, e.g. from "
          "io.file.read) into their arrays, as DALI's: format version 1, little-endian bool, "
          "integer and float dtypes, any number of dimensions (0-D too); Fortran-ordered "
          "arrays come out in C order with their own shape. All samples must share the number "
          "of dimensions and, unless `dtype` converts them, the dtype.",
      .inputs = {"data"},
      .outputs = {"output"},
      .args = {optional_arg("dtype", ArgType::kDType,
                            "Convert every array to this dtype (saturating, as `cast`); default: "
                            "the arrays' own dtype, which must then be the same in the batch.",
                            false)},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<NumpyDecoder>(s); },
      .example = OpExample{.args = {}, .dtype = "uint8", .layout = ""},
  };
}

}  // namespace stoker::ops
