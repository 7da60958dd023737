// stoker._stoker: errors, operator schemas and the registration of the bound classes. The
// Python package builds fn.* from schemas() — no per-operator binding code lives here.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "stoker/codecs/nvjpeg/nvjpeg_decoder.hpp"
#include "stoker/codecs/nvjpeg2k/nvjpeg2k_decoder.hpp"
#include "stoker/codecs/nvtiff/nvtiff_decoder.hpp"
#include "stoker/codecs/versions.hpp"
#include "stoker/codecs/video/nvdec_video.hpp"
#include "stoker/core/cuda.hpp"
#include "stoker/core/file_io.hpp"
#include "stoker/core/mapping_guard.hpp"
#include "stoker/core/memory.hpp"
#include "stoker/kernels/common/arch_check.hpp"
#include "stoker/kernels/compression/lz4_inflate.hpp"
#include "stoker/kernels/flow/nvof_engine.hpp"
#include "stoker/ops/registry.hpp"
#include "stoker/readers/fits.hpp"
#include "stoker/readers/lmdb_env.hpp"
#include "stoker/readers/recordio.hpp"
#include "stoker/readers/tar.hpp"
#include "stoker/readers/tfrecord.hpp"

namespace stoker::python {
namespace {

#ifdef STOKER_HAVE_CUDA
constexpr bool kBuiltWithCuda = true;
#else
constexpr bool kBuiltWithCuda = false;
#endif

nb::object arg_value_to_python(const ops::ArgValue& v) {
  return std::visit([](const auto& x) -> nb::object { return nb::cast(x); }, v);
}

nb::list schemas() {
  nb::list out;
  for (const auto& s : ops::op_schemas()) {
    nb::dict d;
    d["name"] = s.name;
    d["doc"] = s.doc;
    d["inputs"] = s.inputs;
    d["variadic_inputs"] = s.variadic_inputs;
    d["optional_inputs"] = s.optional_inputs;
    d["outputs"] = s.outputs;
    d["outputs_from"] = s.outputs_from;
    d["dynamic_outputs"] = bool(s.output_names);  // names depend on arguments: output_names()
    nb::list backends;
    for (auto b : s.backends()) backends.append(std::string(ops::backend_name(b)));
    d["backends"] = backends;
    d["sequences"] = s.sequences;  // takes FHWC/FCHW clips frame by frame
    d["deprecated_names"] = s.deprecated_names;
    nb::list args;
    for (const auto& a : s.args) {
      nb::dict ad;
      ad["name"] = a.name;
      ad["type"] = std::string(ops::arg_type_name(a.type));
      ad["doc"] = a.doc;
      ad["per_sample"] = a.per_sample;
      ad["required"] = !a.default_value && !a.optional;
      if (a.default_value) ad["default"] = arg_value_to_python(*a.default_value);
      args.append(ad);
    }
    d["args"] = args;
    if (s.example) {
      nb::dict ex, ex_args;
      for (const auto& [k, v] : s.example->args) ex_args[k.c_str()] = arg_value_to_python(v);
      ex["args"] = ex_args;
      ex["dtype"] = s.example->dtype;
      ex["layout"] = s.example->layout;
      d["example"] = ex;
    } else {
      d["example"] = nb::none();
    }
    out.append(d);
  }
  return out;
}

}  // namespace
}  // namespace stoker::python

NB_MODULE(_stoker, m) {
  using namespace stoker::python;
  m.doc() = "stoker's native core (see the stoker package for the Python API)";

  static nb::object internal_error =
      nb::exception<stoker::InternalError>(m, "InternalError", PyExc_RuntimeError);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const stoker::ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const stoker::TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const stoker::IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const stoker::IOError& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    } catch (const stoker::InternalError& e) {
      PyErr_SetString(internal_error.ptr(), e.what());
    } catch (const stoker::RuntimeError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const stoker::EndOfData&) {
      PyErr_SetString(PyExc_StopIteration, "end of data");
    }
  });

  m.def("schemas", &schemas, "All operator schemas, as dicts.");
  m.def(
      "tfrecord_index",
      [](const std::string& path) {
        std::vector<uint8_t> data = stoker::read_file_bytes(path);
        if (stoker::readers::is_gzip(data)) data = stoker::readers::gunzip(data, path);
        return stoker::readers::format_tfrecord_index(
            stoker::readers::index_tfrecord(data, path, true));
      },
      "DALI-format index text ('offset size' per record) of a TFRecord file; checks CRCs.");
  m.def(
      "masked_crc32c",
      [](const nb::bytes& data) {
        return stoker::readers::masked_crc32c(static_cast<const uint8_t*>(data.data()),
                                              data.size());
      },
      "TFRecord's masked CRC32C of `data` (for writers of TFRecord files).");
  m.def(
      "recordio_index",
      [](const std::string& path) {
        return stoker::readers::format_recordio_index(
            stoker::readers::index_recordio(stoker::read_file_bytes(path), path));
      },
      "MXNet .idx text ('key<TAB>offset', keys 0, 1, ... in file order) of a RecordIO file.");
  m.def(
      "webdataset_index",
      [](const std::string& path) {
        std::vector<uint8_t> data = stoker::read_file_bytes(path);
        if (stoker::readers::is_gzip(data)) data = stoker::readers::gunzip(data, path);
        return stoker::readers::format_wds_index(stoker::readers::index_tar(data, path));
      },
      "DALI v1.2 webdataset index text of a tar shard ('ext offset size path' per member).");
  m.def(
      "in_mapped_file",
      [](uintptr_t address, size_t bytes) {
        return stoker::guarded_mapping(reinterpret_cast<const void*>(address), bytes) != nullptr;
      },
      nb::arg("address"), nb::arg("bytes"),
      "Whether [address, address + bytes) lies in a file mapping of stoker's (read-only).");
  m.def("take_mapping_damage", &stoker::take_new_damage,
        "Mapped files that shrank (a fault read zeros) since the last call, each named once.");
  m.def("lmdb_available", &stoker::readers::lmdb_available,
        "True when stoker was built with liblmdb (readers.caffe and readers.caffe2).");
  m.def("cuda_available", &stoker::cuda_available,
        "True when stoker was built with CUDA and a device is present.");
  m.attr("built_with_cuda") = kBuiltWithCuda;
  m.def(
      "build_info",
      []() {
        nb::dict info;
        info["cuda_built"] = bool(kBuiltWithCuda);
        info["cuda_architectures"] = stoker::kernels::compiled_cuda_architectures();
        info["cuda_runtime"] = stoker::cuda_runtime_version();
        info["cuda_driver"] = stoker::cuda_driver_version();
        info["libjpeg_turbo"] = stoker::codecs::libjpeg_turbo_version();
        info["libpng"] = stoker::codecs::libpng_version();
        info["ffmpeg"] = stoker::codecs::ffmpeg_version();
        info["libwebp"] = stoker::codecs::libwebp_version();
        info["libtiff"] = stoker::codecs::libtiff_version();
        info["openjpeg"] = stoker::codecs::openjpeg_version();
        info["libsndfile"] = stoker::codecs::libsndfile_version();
        info["lmdb"] = stoker::readers::lmdb_available();
        info["cfitsio"] = stoker::readers::cfitsio_version();
        info["nvcomp"] = bool(kBuiltWithCuda) ? stoker::kernels::nvcomp_unavailable() : "no CUDA";
        // JPEG 2000 and TIFF in mixed decoding: "" when the library loads, else why not.
        info["nvjpeg2k"] = bool(kBuiltWithCuda) ? stoker::codecs::nvjpeg2k_unavailable() : "no CUDA";
        info["nvtiff"] = bool(kBuiltWithCuda) ? stoker::codecs::nvtiff_unavailable() : "no CUDA";
        nb::list devices;
        for (int d = 0; d < stoker::cuda_device_count(); ++d) {
          const auto p = stoker::cuda_device_info(d);
          std::string hw_why, cuda_why;
          nb::dict dev;
          dev["name"] = p.name;
          dev["compute_capability"] = std::to_string(p.major) + "." + std::to_string(p.minor);
          dev["memory_gib"] = double(p.memory) / double(1ull << 30);
          std::string kernels_why;
          try {
            stoker::kernels::check_kernel_image(d);
          } catch (const std::exception& e) {
            kernels_why = e.what();
          }
          dev["kernels"] = kernels_why.empty();
          // NVDEC asked about a common stream (H.264 720p 8-bit 4:2:0); NVOFA as optical_flow
          // asks: "" when usable, else why not.
          stoker::codecs::VideoInfo h264;
          h264.codec = "h264", h264.width = 1280, h264.height = 720, h264.pixel_format = "yuv420p";
          dev["nvdec"] = stoker::codecs::nvdec_unavailable(d, h264);
          dev["nvofa"] = stoker::kernels::nvof_unavailable(d);
          dev["nvjpeg_hardware"] = stoker::codecs::nvjpeg_hardware_available(d, &hw_why);
          dev["nvjpeg_cuda"] = stoker::codecs::nvjpeg_cuda_available(d, &cuda_why);
          dev["nvjpeg_note"] = !cuda_why.empty() ? cuda_why : hw_why;
          devices.append(dev);
        }
        info["devices"] = devices;
        return info;
      },
      "What this build of stoker has and sees: CUDA (built, runtime and driver versions), the "
      "devices with nvJPEG's hardware and CUDA decoders, the codec libraries (ffmpeg: '' when "
      "built "
      "without FFmpeg, i.e. without video), liblmdb.");
  bind_batch(m);
  bind_pipeline(m);
  bind_python_function(m);
  m.def("release_borrowed", &release_borrowed, nb::arg("wait") = false,
        "Drops the Python arrays that external sources fed without copying and that stoker no "
        "longer uses (done by every feed, run and close; wait: also wait for GPU work on them).");
}
