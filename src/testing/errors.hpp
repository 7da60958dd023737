// Test helper: the message of the ValueError a call raises, for tests that assert error text.
#pragma once

#include <functional>
#include <string>

#include "stoker/core/error.hpp"

namespace stoker::testing {

// What `f` raises as a ValueError, or "<no ValueError>" when it returns.
inline std::string value_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ValueError& e) {
    return e.what();
  }
  return "<no ValueError>";
}

}  // namespace stoker::testing
