#include "stoker/ops/schema.hpp"

#include "stoker/core/dtype.hpp"
#include "stoker/ops/op_spec.hpp"

namespace stoker::ops {

std::string_view arg_type_name(ArgType t) {
  switch (t) {
    case ArgType::kBool:
      return "bool";
    case ArgType::kInt:
      return "int";
    case ArgType::kFloat:
      return "float";
    case ArgType::kString:
      return "str";
    case ArgType::kIntList:
      return "list of int";
    case ArgType::kFloatList:
      return "list of float";
    case ArgType::kStringList:
      return "list of str";
    case ArgType::kDType:
      return "dtype";
  }
  return "?";
}

std::string_view backend_name(Backend b) {
  switch (b) {
    case Backend::kCpu:
      return "cpu";
    case Backend::kMixed:
      return "mixed";
    case Backend::kGpu:
      return "gpu";
  }
  return "?";
}

namespace {
template <typename T>
void format_one(std::string& os, const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    os += v ? "True" : "False";
  } else if constexpr (std::is_same_v<T, std::string>) {
    os += "'" + v + "'";
  } else {
    detail::append_text(os, v);
  }
}
}  // namespace

std::string format_arg_value(const ArgValue& value) {
  std::string os;
  std::visit(
      [&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::vector<int64_t>> ||
                      std::is_same_v<V, std::vector<double>> ||
                      std::is_same_v<V, std::vector<std::string>>) {
          os += "[";
          for (size_t i = 0; i < v.size(); ++i) {
            if (i) os += ", ";
            format_one(os, v[i]);
          }
          os += "]";
        } else {
          format_one(os, v);
        }
      },
      value);
  return os;
}

const ArgSchema* OpSchema::find_arg(std::string_view arg) const {
  for (auto& a : args) {
    if (a.name == arg) return &a;
  }
  return nullptr;
}

const OpSchema::Factory& OpSchema::factory(Backend b) const {
  return b == Backend::kGpu ? make_gpu : b == Backend::kMixed ? make_mixed : make_cpu;
}

std::vector<Backend> OpSchema::backends() const {
  std::vector<Backend> out;
  for (Backend b : {Backend::kCpu, Backend::kMixed, Backend::kGpu})
    if (supports(b)) out.push_back(b);
  return out;
}

std::string OpSpec::describe() const {
  std::string s = schema ? schema->name : "<unknown>";
  if (!defined_at.empty()) s += " (defined at " + defined_at + ")";
  return s;
}

namespace {
std::string value_type_name(const ArgValue& v) {
  static const char* kNames[] = {"bool",        "int",           "float",      "str",
                                 "list of int", "list of float", "list of str"};
  return kNames[v.index()];
}
}  // namespace

ArgValue coerce_arg(const OpSchema& schema, const ArgSchema& arg, ArgValue value) {
  auto fail = [&]() -> ArgValue {
    throw TypeError(detail::concat(schema.name, ": argument '", arg.name, "' expects ",
                                   arg_type_name(arg.type), ", got ", value_type_name(value), " ",
                                   format_arg_value(value)));
  };
  switch (arg.type) {
    case ArgType::kBool:
      if (auto* b = std::get_if<bool>(&value)) return *b;
      if (auto* i = std::get_if<int64_t>(&value); i && (*i == 0 || *i == 1)) return *i == 1;
      return fail();
    case ArgType::kInt:
      if (auto* i = std::get_if<int64_t>(&value)) return *i;
      if (auto* b = std::get_if<bool>(&value)) return int64_t(*b);
      return fail();
    case ArgType::kFloat:
      if (auto* d = std::get_if<double>(&value)) return *d;
      if (auto* i = std::get_if<int64_t>(&value)) return double(*i);
      return fail();
    case ArgType::kString:
      if (auto* s = std::get_if<std::string>(&value)) return *s;
      // Arguments that are "auto" or a number (hw_decoder_load) keep a number as its text.
      if (arg.number_as_string) {
        if (auto* d = std::get_if<double>(&value)) return format_arg_value(*d);
        if (auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
      }
      // Arguments that grew from a flag into a choice (readers.video's enable_frame_num).
      if (auto* b = std::get_if<bool>(&value); b && arg.bool_as_string)
        return std::string(*b ? "True" : "False");
      return fail();
    case ArgType::kDType:
      if (auto* s = std::get_if<std::string>(&value)) {
        try {
          return std::string(dtype_name(dtype_from_name(*s)));
        } catch (const TypeError&) {
          throw TypeError(detail::concat(schema.name, ": argument '", arg.name,
                                         "' got unknown dtype '", *s, "'"));
        }
      }
      return fail();
    case ArgType::kIntList:
      if (auto* v = std::get_if<std::vector<int64_t>>(&value)) return *v;
      if (auto* i = std::get_if<int64_t>(&value)) return std::vector<int64_t>{*i};
      if (auto* d = std::get_if<std::vector<double>>(&value); d && d->empty())
        return std::vector<int64_t>{};
      return fail();
    case ArgType::kFloatList:
      if (auto* v = std::get_if<std::vector<double>>(&value)) return *v;
      if (auto* v = std::get_if<std::vector<int64_t>>(&value))
        return std::vector<double>(v->begin(), v->end());
      if (auto* d = std::get_if<double>(&value)) return std::vector<double>{*d};
      if (auto* i = std::get_if<int64_t>(&value)) return std::vector<double>{double(*i)};
      return fail();
    case ArgType::kStringList:
      if (auto* v = std::get_if<std::vector<std::string>>(&value)) return *v;
      if (auto* s = std::get_if<std::string>(&value)) return std::vector<std::string>{*s};
      if (auto* d = std::get_if<std::vector<double>>(&value); d && d->empty())
        return std::vector<std::string>{};
      return fail();
  }
  return fail();
}

template <typename T>
T OpSpec::arg(std::string_view name) const {
  const ArgValue* v = nullptr;
  if (auto it = args.find(name); it != args.end()) {
    v = &it->second;
  } else {
    const ArgSchema* a = schema->find_arg(name);
    STOKER_ASSERT(a != nullptr, schema->name, " has no argument '", name, "'");
    STOKER_ASSERT(a->default_value.has_value(), schema->name, ": argument '", name,
                  "' has no value and no default");
    v = &*a->default_value;
  }
  const T* t = std::get_if<T>(v);
  STOKER_ASSERT(t != nullptr, schema->name, ": argument '", name, "' read as the wrong type");
  return *t;
}

template bool OpSpec::arg<bool>(std::string_view) const;
template int64_t OpSpec::arg<int64_t>(std::string_view) const;
template double OpSpec::arg<double>(std::string_view) const;
template std::string OpSpec::arg<std::string>(std::string_view) const;
template std::vector<int64_t> OpSpec::arg<std::vector<int64_t>>(std::string_view) const;
template std::vector<double> OpSpec::arg<std::vector<double>>(std::string_view) const;
template std::vector<std::string> OpSpec::arg<std::vector<std::string>>(std::string_view) const;

}  // namespace stoker::ops
