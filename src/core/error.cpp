#include "stoker/core/error.hpp"

namespace stoker {

void rethrow_with_context(const std::exception_ptr& error, const std::string& prefix) {
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    e.rethrow_with(prefix + e.what());
  } catch (const std::bad_alloc& e) {
    throw RuntimeError(prefix + "out of memory (" + e.what() + ")");
  } catch (const std::exception& e) {
    throw RuntimeError(prefix + e.what());
  } catch (...) {
    throw RuntimeError(prefix + "unknown error");
  }
  throw InternalError(prefix + "rethrow_with_context: no exception");  // unreachable
}

}  // namespace stoker
