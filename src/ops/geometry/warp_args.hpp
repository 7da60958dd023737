// The string arguments of the warps that sample an image at mapped points (experimental.remap,
// experimental.warp_perspective): interpolation and border names, and pixel_origin, each
// refused with the same words.
#pragma once

#include <initializer_list>
#include <string>

namespace stoker::ops {

// A name an argument takes and what it means.
template <class T>
struct ArgChoice {
  const char* name;
  T value;
};

// Throws ValueError "<op>: <arg> must be <expected>, got '<given>'".
[[noreturn]] void throw_bad_choice(const std::string& op, const std::string& arg,
                                   const std::string& expected, const std::string& given);

// The value of the choice named `key` (`given`, or a form of it normalised by the caller);
// else the error above, which quotes `given` as the user wrote it.
template <class T>
T parse_choice(const std::string& op, const std::string& arg, const std::string& given,
               const std::string& key, std::initializer_list<ArgChoice<T>> choices,
               const std::string& expected) {
  for (const auto& c : choices)
    if (key == c.name) return c.value;
  throw_bad_choice(op, arg, expected, given);
}

// pixel_origin: true for 'center' (pixel centres at integers: OpenCV's and NPP's convention),
// false for 'corner'.
bool parse_pixel_origin_center(const std::string& op, const std::string& given);

}  // namespace stoker::ops
