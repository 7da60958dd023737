#include "stoker/ops/geometry/warp_args.hpp"

#include "stoker/core/error.hpp"

namespace stoker::ops {

void throw_bad_choice(const std::string& op, const std::string& arg, const std::string& expected,
                      const std::string& given) {
  throw ValueError(op + ": " + arg + " must be " + expected + ", got '" + given + "'");
}

bool parse_pixel_origin_center(const std::string& op, const std::string& given) {
  return parse_choice<bool>(op, "pixel_origin", given, given, {{"center", true}, {"corner", false}},
                            "'corner' or 'center'");
}

}  // namespace stoker::ops
