// Error hierarchy (mapped one-to-one to Python exceptions) and the two check macros:
// STOKER_ENFORCE for user input, STOKER_ASSERT for internal invariants. Messages are
// formatted only when the check fails.
#pragma once

#include <charconv>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace stoker {

// Base of every error stoker throws. `with_message` rethrows an error of the same dynamic
// type with a new message, so that the executor can prefix operator/sample context without
// losing the exception's kind.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  [[noreturn]] virtual void rethrow_with(const std::string& message) const = 0;
};

template <typename Self>
class ErrorKind : public Error {
 public:
  using Error::Error;
  [[noreturn]] void rethrow_with(const std::string& message) const override { throw Self(message); }
};

// Invalid argument value or input data (Python ValueError).
class ValueError : public ErrorKind<ValueError> {
  using ErrorKind::ErrorKind;
};
// Wrong type/dtype/layout (Python TypeError).
class TypeError : public ErrorKind<TypeError> {
  using ErrorKind::ErrorKind;
};
// Index out of range (Python IndexError).
class IndexError : public ErrorKind<IndexError> {
  using ErrorKind::ErrorKind;
};
// Files and storage (Python OSError).
class IOError : public ErrorKind<IOError> {
  using ErrorKind::ErrorKind;
};
// Failures at run time that are not the user's input: out of memory budget, CUDA... (Python
// RuntimeError).
class RuntimeError : public ErrorKind<RuntimeError> {
  using ErrorKind::ErrorKind;
};
// A broken internal invariant: a bug in stoker (Python stoker.InternalError).
class InternalError : public ErrorKind<InternalError> {
  using ErrorKind::ErrorKind;
};

// Thrown by a data source (external source, finite reader) to mark the end of its data: the
// executor turns it into the end of an epoch (Python StopIteration), not an error.
class EndOfData : public std::exception {
 public:
  const char* what() const noexcept override { return "end of data"; }
};

// Thrown by a wait that its caller's check interrupted (Python: a signal such as Ctrl-C is
// pending; the binding raises the KeyboardInterrupt it set).
class Interrupted : public std::exception {
 public:
  const char* what() const noexcept override { return "interrupted"; }
};

namespace detail {
// Appends the text of a value: strings as they are, numbers in their shortest round-trip form
// (std::to_chars), bools as true/false. Deliberately not iostreams: no locale, no global
// state, so messages format the same in any process (an extension loaded beside another C++
// runtime crashed inside ostream's locale machinery on one machine).
template <typename T>
void append_text(std::string& s, const T& v) {
  using U = std::decay_t<T>;
  if constexpr (std::is_same_v<U, bool>) {
    s += v ? "true" : "false";
  } else if constexpr (std::is_same_v<U, char>) {
    s += v;
  } else if constexpr (std::is_arithmetic_v<U>) {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    s.append(buf, r.ptr);
  } else if constexpr (std::is_enum_v<U>) {
    append_text(s, static_cast<std::underlying_type_t<U>>(v));
  } else {
    s += std::string_view(v);
  }
}

template <typename... Args>
std::string concat(const Args&... args) {
  std::string s;
  (append_text(s, args), ...);
  return s;
}
}  // namespace detail

// Rethrows `error` (a stoker::Error, or any std::exception as RuntimeError) with `prefix`
// prepended to its message. Keeps the exception kind.
[[noreturn]] void rethrow_with_context(const std::exception_ptr& error, const std::string& prefix);

}  // namespace stoker

// User-input check: throws ErrorType with the concatenated message arguments.
#define STOKER_ENFORCE(cond, ErrorType, ...)                  \
  do {                                                        \
    if (!(cond)) [[unlikely]] {                               \
      throw ErrorType(::stoker::detail::concat(__VA_ARGS__)); \
    }                                                         \
  } while (0)

// Internal invariant: a failure is a stoker bug and says where.
#define STOKER_ASSERT(cond, ...)                                                                \
  do {                                                                                          \
    if (!(cond)) [[unlikely]] {                                                                 \
      throw ::stoker::InternalError(                                                            \
          ::stoker::detail::concat("internal error at ", __FILE__, ":", __LINE__, ": `", #cond, \
                                   "` failed. " __VA_OPT__(, ) __VA_ARGS__));                   \
    }                                                                                           \
  } while (0)
