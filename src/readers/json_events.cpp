#include "stoker/readers/json_events.hpp"

#include <boost/json/basic_parser_impl.hpp>
#include <charconv>
#include <exception>
#include <limits>

#include "stoker/core/error.hpp"

// Boost.JSON's compiled part, header-only (this is its one translation unit in stoker).
#include <boost/json/src.hpp>

namespace stoker::readers {
namespace {

namespace bj = boost::json;

std::string_view view(bj::string_view s) { return {s.data(), s.size()}; }

// basic_parser's handler: joins the parts of keys, strings and numbers split across calls
// (basic_parser may split them), and keeps the consumer's exception to rethrow it.
class Handler {
 public:
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  explicit Handler(JsonEvents& events) : events_(events) {}
  std::exception_ptr error;

  bool on_document_begin(bj::error_code&) { return true; }
  bool on_document_end(bj::error_code&) { return true; }
  bool on_object_begin(bj::error_code& ec) { return call(ec, [&] { events_.start_object(); }); }
  bool on_object_end(std::size_t, bj::error_code& ec) {
    return call(ec, [&] { events_.end_container(); });
  }
  bool on_array_begin(bj::error_code& ec) { return call(ec, [&] { events_.start_array(); }); }
  bool on_array_end(std::size_t, bj::error_code& ec) {
    return call(ec, [&] { events_.end_container(); });
  }
  bool on_key_part(bj::string_view s, std::size_t, bj::error_code&) {
    part_.append(s.data(), s.size());
    return true;
  }
  bool on_key(bj::string_view s, std::size_t, bj::error_code& ec) {
    const auto k = whole(s);
    return call(ec, [&] { events_.key(k); });
  }
  bool on_string_part(bj::string_view s, std::size_t, bj::error_code&) {
    part_.append(s.data(), s.size());
    return true;
  }
  bool on_string(bj::string_view s, std::size_t, bj::error_code& ec) {
    return scalar(ec, JsonScalar{.kind = JsonScalar::kString, .s = whole(s)});
  }
  bool on_number_part(bj::string_view s, bj::error_code&) {
    part_.append(s.data(), s.size());
    return true;
  }
  bool on_int64(int64_t v, bj::string_view, bj::error_code& ec) {
    part_.clear();
    return scalar(ec, JsonScalar{.kind = JsonScalar::kInt, .i = v, .d = double(v)});
  }
  bool on_uint64(uint64_t v, bj::string_view, bj::error_code& ec) {
    part_.clear();
    if (v > uint64_t(std::numeric_limits<int64_t>::max())) {
      return scalar(ec, JsonScalar{.kind = JsonScalar::kFloat, .d = double(v)});
    }
    return scalar(ec, JsonScalar{.kind = JsonScalar::kInt, .i = int64_t(v), .d = double(v)});
  }
  bool on_double(double d, bj::string_view s, bj::error_code& ec) {
    const auto text = whole(s);
    double exact = d;
    // (out of double's range: Boost's infinity stands)
    std::from_chars(text.data(), text.data() + text.size(), exact);
    return scalar(ec, JsonScalar{.kind = JsonScalar::kFloat, .d = exact});
  }
  bool on_bool(bool b, bj::error_code& ec) {
    return scalar(ec, JsonScalar{.kind = JsonScalar::kBool, .i = b});
  }
  bool on_null(bj::error_code& ec) { return scalar(ec, JsonScalar{}); }
  bool on_comment_part(bj::string_view, bj::error_code&) { return true; }
  bool on_comment(bj::string_view, bj::error_code&) { return true; }

 private:
  // The text of a key, string or number: `s` alone, or the parts before it joined with it.
  std::string_view whole(bj::string_view s) {
    if (part_.empty()) return view(s);
    part_.append(s.data(), s.size());
    joined_.swap(part_);
    part_.clear();
    return joined_;
  }

  bool scalar(bj::error_code& ec, const JsonScalar& v) {
    return call(ec, [&] { events_.scalar(v); });
  }

  template <typename F>
  bool call(bj::error_code& ec, F&& f) {
    try {
      f();
      return true;
    } catch (...) {
      error = std::current_exception();
      ec = bj::error::exception;
      return false;
    }
  }

  JsonEvents& events_;
  std::string part_, joined_;
};

}  // namespace

void parse_json_events(std::string_view text, JsonEvents& events, const std::string& what) {
  bj::parse_options options;
  options.max_depth = 256;
  bj::basic_parser<Handler> parser(options, events);
  bj::error_code ec;
  const std::size_t used = parser.write_some(false, text.data(), text.size(), ec);
  if (parser.handler().error) std::rethrow_exception(parser.handler().error);
  STOKER_ENFORCE(!ec, ValueError, what, ": not valid JSON (at byte ", used, "): ", ec.message());
}

}  // namespace stoker::readers
