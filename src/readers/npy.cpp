#include "stoker/readers/npy.hpp"

#include <charconv>
#include <cstring>

#include "stoker/core/error.hpp"
#include "stoker/core/shape.hpp"

namespace stoker::readers {

size_t NpyHeader::data_bytes() const {
  size_t n = dtype_size(dtype);
  for (auto d : shape) n *= size_t(d);
  return n;
}

namespace {

// The value text of `key` in the header dict, e.g. "'<f4'" or "(2, 3)".
std::string_view dict_value(std::string_view dict, std::string_view key, const std::string& path) {
  std::string quoted = "'" + std::string(key) + "'";
  auto k = dict.find(quoted);
  STOKER_ENFORCE(k != std::string_view::npos, ValueError, path, ": .npy header lacks '", key, "'");
  auto colon = dict.find(':', k + quoted.size());
  STOKER_ENFORCE(colon != std::string_view::npos, ValueError, path, ": malformed .npy header");
  auto v = dict.substr(colon + 1);
  v.remove_prefix(std::min(v.find_first_not_of(' '), v.size()));
  size_t end = 0;
  if (!v.empty() && v[0] == '(') {
    end = v.find(')');
    STOKER_ENFORCE(end != std::string_view::npos, ValueError, path,
                   ": malformed shape in .npy header");
    return v.substr(0, end + 1);
  }
  if (!v.empty() && v[0] == '\'') {
    end = v.find('\'', 1);
    STOKER_ENFORCE(end != std::string_view::npos, ValueError, path, ": malformed .npy header");
    return v.substr(0, end + 1);
  }
  end = v.find_first_of(",}");
  return v.substr(0, end == std::string_view::npos ? v.size() : end);
}

DType parse_descr(std::string_view d, const std::string& path) {
  STOKER_ENFORCE(d.size() >= 4 && d.front() == '\'' && d.back() == '\'', ValueError, path,
                 ": unsupported .npy dtype ", d);
  auto s = d.substr(1, d.size() - 2);
  char order = s[0];
  STOKER_ENFORCE(order != '>', ValueError, path, ": big-endian .npy data ('", s,
                 "') is not supported; save it little-endian");
  STOKER_ENFORCE(order == '<' || order == '|' || order == '=', ValueError, path,
                 ": unsupported .npy dtype '", s, "'");
  auto t = s.substr(1);
  static const std::pair<std::string_view, DType> kTypes[] = {
      {"b1", DType::kBool}, {"u1", DType::kU8},  {"u2", DType::kU16}, {"u4", DType::kU32},
      {"u8", DType::kU64},  {"i1", DType::kI8},  {"i2", DType::kI16}, {"i4", DType::kI32},
      {"i8", DType::kI64},  {"f2", DType::kF16}, {"f4", DType::kF32}, {"f8", DType::kF64}};
  for (auto& [name, dt] : kTypes)
    if (t == name) return dt;
  throw ValueError(detail::concat(path, ": unsupported .npy dtype '", s, "'"));
}

std::vector<int64_t> parse_shape(std::string_view v, const std::string& path) {
  STOKER_ENFORCE(v.size() >= 2 && v.front() == '(' && v.back() == ')', ValueError, path,
                 ": malformed shape ", v, " in .npy header");
  std::vector<int64_t> shape;
  auto body = v.substr(1, v.size() - 2);
  size_t pos = 0;
  while (pos < body.size()) {
    while (pos < body.size() && (body[pos] == ' ' || body[pos] == ',')) ++pos;
    if (pos >= body.size()) break;
    int64_t d = -1;
    auto r = std::from_chars(body.data() + pos, body.data() + body.size(), d);
    STOKER_ENFORCE(r.ec == std::errc() && d >= 0, ValueError, path, ": malformed shape ", v,
                   " in .npy header");
    shape.push_back(d);
    pos = size_t(r.ptr - body.data());
  }
  return shape;
}

}  // namespace

NpyHeader parse_npy_header(std::span<const uint8_t> f, const std::string& path) {
  STOKER_ENFORCE(f.size() >= 10 && std::memcmp(f.data(), "\x93NUMPY", 6) == 0, ValueError, path,
                 ": not a .npy file (bad magic)");
  const int major = f[6];
  STOKER_ENFORCE(major >= 1 && major <= 3, ValueError, path, ": unsupported .npy version ", major);
  size_t len_bytes = major == 1 ? 2 : 4;
  STOKER_ENFORCE(f.size() >= 8 + len_bytes, ValueError, path, ": truncated .npy header");
  size_t header_len = f[8] | size_t(f[9]) << 8;
  if (len_bytes == 4) header_len |= size_t(f[10]) << 16 | size_t(f[11]) << 24;
  NpyHeader h;
  h.data_offset = 8 + len_bytes + header_len;
  STOKER_ENFORCE(h.data_offset <= f.size(), ValueError, path, ": truncated .npy header (",
                 header_len, " bytes announced, file has ", f.size(), ")");
  std::string_view dict(reinterpret_cast<const char*>(f.data()) + 8 + len_bytes, header_len);
  h.dtype = parse_descr(dict_value(dict, "descr", path), path);
  auto fo = dict_value(dict, "fortran_order", path);
  STOKER_ENFORCE(fo == "True" || fo == "False", ValueError, path,
                 ": malformed fortran_order in .npy header");
  h.fortran_order = fo == "True";
  h.shape = parse_shape(dict_value(dict, "shape", path), path);
  STOKER_ENFORCE(h.shape.size() <= size_t(kMaxNdim), ValueError, path,
                 ": the .npy header declares ", h.shape.size(), " dimensions; at most ", kMaxNdim,
                 " are supported (numpy's limit)");
  size_t elems = 1;
  for (auto d : h.shape) {
    STOKER_ENFORCE(d == 0 || elems <= (size_t(1) << 48) / size_t(d), ValueError, path,
                   ": .npy shape too large");
    elems *= size_t(d);
  }
  STOKER_ENFORCE(f.size() - h.data_offset >= h.data_bytes(), ValueError, path,
                 ": .npy data truncated (", f.size() - h.data_offset, " of ", h.data_bytes(),
                 " bytes)");
  return h;
}

void npy_to_c_order(const NpyHeader& h, const uint8_t* data, uint8_t* out) {
  const size_t esize = dtype_size(h.dtype), bytes = h.data_bytes();
  const size_t nd = h.shape.size();
  if (bytes == 0) return;  // an empty array: no buffer behind `out` (memcpy needs one)
  if (!h.fortran_order || nd <= 1) {
    std::memcpy(out, data, bytes);
    return;
  }
  // Fortran strides (first axis fastest); walk the output in C order.
  std::vector<size_t> fstride(nd);
  size_t s = 1;
  for (size_t k = 0; k < nd; ++k) fstride[k] = s, s *= size_t(h.shape[k]);
  std::vector<int64_t> idx(nd, 0);
  const size_t n = bytes / esize;
  for (size_t e = 0; e < n; ++e) {
    size_t src = 0;
    for (size_t k = 0; k < nd; ++k) src += size_t(idx[k]) * fstride[k];
    std::memcpy(out + e * esize, data + src * esize, esize);
    for (size_t k = nd; k-- > 0;) {  // C order: last axis fastest
      if (++idx[k] < h.shape[k]) break;
      idx[k] = 0;
    }
  }
}

}  // namespace stoker::readers
