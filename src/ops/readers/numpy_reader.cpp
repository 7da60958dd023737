#include "stoker/ops/readers/numpy_reader.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "stoker/core/file_io.hpp"
#include "stoker/kernels/geometry/slice_cpu.hpp"
#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/readers/file_list.hpp"
#include "stoker/ops/readers/reader_base.hpp"
#include "stoker/readers/npy.hpp"

namespace stoker::ops {
namespace {

// DALI's rule: O_DIRECT applies to plain reads, so it asks for dont_use_mmap.
readers::FileOptions numpy_file_options(const OpSpec& spec) {
  auto o = file_options(spec);
  if (spec.arg<bool>("use_o_direct")) {
    STOKER_ENFORCE(spec.arg<bool>("dont_use_mmap"), ValueError,
                   "readers.numpy: use_o_direct reads with plain file I/O, not a mapping: give "
                   "dont_use_mmap=True with it");
    o.mode = readers::IoMode::kDirect;
  }
  return o;
}

class NumpySource final : public ReaderSource {
 public:
  explicit NumpySource(const OpSpec& spec)
      : spec_(spec),
        file_options_(numpy_file_options(spec)),
        roi_axes_(spec.arg<std::vector<int64_t>>("roi_axes")),
        policy_(spec.arg<std::string>("out_of_bounds_policy")),
        fill_value_(spec.arg<double>("fill_value")) {
    STOKER_ENFORCE(policy_ == "error" || policy_ == "trim_to_shape" || policy_ == "pad", ValueError,
                   "readers.numpy: out_of_bounds_policy must be 'error', 'trim_to_shape' or "
                   "'pad', got '",
                   policy_, "'");
  }

  std::vector<DType> output_dtypes() const override { return {dtype_}; }
  std::string source_info(int64_t index) const override { return files_[size_t(index)]; }

  void load(readers::LoadedSample& s, MemoryPool& pool) const override {
    const auto& path = files_[size_t(s.index)];
    auto bytes = readers::read_whole_file(path, file_options_, pool);
    auto h = readers::parse_npy_header(bytes.span(), path);
    STOKER_ENFORCE(h.dtype == dtype_, TypeError, "the array has dtype ", dtype_name(h.dtype),
                   ", but the first file of the dataset has ", dtype_name(dtype_),
                   " (a batch holds one dtype)");
    const bool aligned = uintptr_t(bytes.data + h.data_offset) % dtype_size(h.dtype) == 0;
    if (!h.fortran_order && aligned) {  // C order: the array is a view of the file's bytes
      s.outputs = {{std::move(bytes.owner), bytes.data + h.data_offset, TensorShape(h.shape)}};
      return;
    }
    auto buf = pool.acquire(h.data_bytes());
    readers::npy_to_c_order(h, bytes.data + h.data_offset, static_cast<uint8_t*>(buf->data()));
    const void* data = buf->data();
    s.outputs = {{std::move(buf), data, TensorShape(h.shape)}};
  }

  // The region of interest (DALI's roi_* arguments), cut on the compute thread: its
  // arguments may be per-sample tensors of this iteration.
  void finish(readers::LoadedSample& s, const Operator& op, const Workspace& ws,
              int i) const override {
    auto given = [&](const char* name) {
      return spec_.has_arg(name) || ws.arg_inputs.count(std::string_view(name)) > 0;
    };
    auto arg = [&](const char* name) -> std::optional<std::vector<double>> {
      if (!given(name)) return std::nullopt;
      return op.list_arg(ws, name, i);
    };
    auto start_abs = arg("roi_start"), start_rel = arg("rel_roi_start");
    auto end_abs = arg("roi_end"), end_rel = arg("rel_roi_end");
    auto shape_abs = arg("roi_shape"), shape_rel = arg("rel_roi_shape");
    if (!start_abs && !start_rel && !end_abs && !end_rel && !shape_abs && !shape_rel) return;
    STOKER_ENFORCE(!(start_abs && start_rel), ValueError,
                   "give roi_start or rel_roi_start, not both");
    STOKER_ENFORCE(
        int(bool(end_abs)) + int(bool(end_rel)) + int(bool(shape_abs)) + int(bool(shape_rel)) <= 1,
        ValueError, "give one of roi_end, rel_roi_end, roi_shape and rel_roi_shape");
    auto& d = s.outputs[0];
    const std::vector<int64_t> shape(d.shape.dims().begin(), d.shape.dims().end());
    const int64_t nd = int64_t(shape.size());
    std::vector<int64_t> axes = roi_axes_;
    if (axes.empty())
      for (int64_t a = 0; a < nd; ++a) axes.push_back(a);
    auto check_len = [&](const std::optional<std::vector<double>>& v, const char* name) {
      STOKER_ENFORCE(!v || v->size() == axes.size(), ValueError, name, " has ", v ? v->size() : 0,
                     " values for ", axes.size(), " ROI axes");
    };
    for (auto [v, name] : {std::pair{&start_abs, "roi_start"},
                           {&start_rel, "rel_roi_start"},
                           {&end_abs, "roi_end"},
                           {&end_rel, "rel_roi_end"},
                           {&shape_abs, "roi_shape"},
                           {&shape_rel, "rel_roi_shape"}})
      check_len(*v, name);
    std::vector<int64_t> begin(size_t(nd), 0), out_shape = shape;
    for (size_t k = 0; k < axes.size(); ++k) {
      const int64_t a = axes[k];
      STOKER_ENFORCE(a >= 0 && a < nd, ValueError, "roi_axes names axis ", a, " of a ", nd,
                     "-D array");
      const double extent = double(shape[size_t(a)]);
      const int64_t lo = start_abs   ? int64_t((*start_abs)[k])
                         : start_rel ? std::llround((*start_rel)[k] * extent)
                                     : 0;
      const int64_t hi = end_abs     ? int64_t((*end_abs)[k])
                         : end_rel   ? std::llround((*end_rel)[k] * extent)
                         : shape_abs ? lo + int64_t((*shape_abs)[k])
                         : shape_rel ? lo + std::llround((*shape_rel)[k] * extent)
                                     : shape[size_t(a)];
      int64_t b = lo, e = hi;
      STOKER_ENFORCE(e >= b, ValueError, "the ROI of axis ", a, " ends (", e,
                     ") before it starts (", b, ")");
      if (policy_ == "trim_to_shape") {
        b = std::clamp<int64_t>(b, 0, shape[size_t(a)]);
        e = std::clamp<int64_t>(e, b, shape[size_t(a)]);
      } else if (policy_ == "error") {
        STOKER_ENFORCE(b >= 0 && e <= shape[size_t(a)], ValueError, "the ROI [", b, ", ", e,
                       ") of axis ", a, " lies outside the array of shape ", d.shape.to_string(),
                       " (out_of_bounds_policy='trim_to_shape' or 'pad' allow it)");
      }
      begin[size_t(a)] = b;
      out_shape[size_t(a)] = e - b;
    }
    const size_t es = dtype_size(dtype_);
    std::vector<uint8_t> fill(es);
    visit_numeric(dtype_, "readers.numpy fill_value", [&](auto tag) {
      using T = typename decltype(tag)::type;
      T v = convert_sat<T>(float(fill_value_));
      std::memcpy(fill.data(), &v, es);
    });
    // Padded, the ROI is the output's size (arg_limits.hpp).
    check_arg_elements("readers.numpy", "the ROI arguments", out_shape, i,
                       double(d.shape.volume()));
    TensorShape out(out_shape);
    auto buf = ws.host_pool->acquire(size_t(out.volume()) * es);
    kernels::slice_cpu(static_cast<const uint8_t*>(d.data), shape, es, begin, out_shape,
                       fill.data(), static_cast<uint8_t*>(buf->data()));
    const void* p = buf->data();
    d = {std::move(buf), p, out};
  }

  bool preshuffles() const override { return true; }  // as DALI's file lists

  int64_t build_index() override {
    files_ = list_reader_files(spec_);
    // The batch dtype comes from the first file's header.
    auto first = read_file_bytes(files_[0]);
    dtype_ = readers::parse_npy_header(first, files_[0]).dtype;
    return int64_t(files_.size());
  }

  OpSpec spec_;
  readers::FileOptions file_options_;
  std::vector<int64_t> roi_axes_;
  std::string policy_;
  double fill_value_;
  std::vector<std::string> files_;
  DType dtype_ = DType::kU8;
};

}  // namespace

OpSchema numpy_reader_schema() {
  OpSchema s{
      .name = "readers.numpy",
      .doc =
          "Reads arrays from NumPy .npy files (format versions 1-3, little-endian bool, "
          "integer and float dtypes; Fortran-ordered arrays are returned in C order). All "
          "files must share the dtype of the first one. Files: `files` (relative to "
          "`file_root` when given), a `file_list` (one name per line, relative to `file_root` "
          "when given, else to the list's folder), or every file under `file_root` matching "
          "`file_filter`, sorted. An optional region of interest (roi_* arguments, constants or "
          "per-sample "
          "tensors, as DALI's) is cut from each array.",
      .outputs = {"data"},
      .args = {{"file_root", ArgType::kString, "Folder to search, or base of `files`.",
                std::string()},
               {"files", ArgType::kStringList, "Explicit list of .npy files.",
                std::vector<std::string>{}},
               {"file_list", ArgType::kString,
                "Text file of .npy names, one per line (instead of `files`).", std::string()},
               {"file_filter", ArgType::kString, "Glob of files to take from file_root.",
                std::string("*.npy")},
               {"use_o_direct", ArgType::kBool,
                "Read with O_DIRECT, bypassing the page cache (needs dont_use_mmap=True; where "
                "the file system refuses O_DIRECT, files are read normally).",
                false},
               {"roi_start", ArgType::kIntList,
                "Region of interest: start per ROI axis, in elements (or per-sample tensor).",
                std::nullopt, true, true},
               {"rel_roi_start", ArgType::kFloatList,
                "ROI start as a fraction of each extent (rounded to the nearest element).",
                std::nullopt, true, true},
               {"roi_end", ArgType::kIntList, "ROI end (exclusive) per ROI axis.", std::nullopt,
                true, true},
               {"rel_roi_end", ArgType::kFloatList, "ROI end as a fraction of each extent.",
                std::nullopt, true, true},
               {"roi_shape", ArgType::kIntList, "ROI extent per ROI axis.", std::nullopt, true,
                true},
               {"rel_roi_shape", ArgType::kFloatList, "ROI extent as a fraction of each extent.",
                std::nullopt, true, true},
               {"roi_axes", ArgType::kIntList,
                "The axes the ROI arguments refer to, in their order (default: all axes).",
                std::vector<int64_t>{}},
               {"out_of_bounds_policy", ArgType::kString,
                "A ROI reaching outside the array: 'error', 'trim_to_shape' (cut to the array) "
                "or 'pad' (filled with fill_value).",
                std::string("error")},
               {"fill_value", ArgType::kFloat, "The value of padded elements.", 0.0}},
      .make_cpu = [](const OpSpec& sp) { return make_reader<NumpySource>(sp); },
      .deprecated_names = {"numpy_reader"},
  };
  for (auto& a : loader_arg_schemas()) s.args.push_back(a);
  return s;
}

}  // namespace stoker::ops
