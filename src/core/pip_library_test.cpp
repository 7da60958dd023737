#include "stoker/core/pip_library.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

namespace stoker {
namespace {

TEST(PipLibrary, TriesTheEnvironmentThenTheSystemThenSitePackages) {
  ::setenv("STOKER_TEST_PIP_LIBRARY", "/opt/x/libfoo.so.1", 1);
  const auto names = pip_library_candidates("STOKER_TEST_PIP_LIBRARY", "libfoo.so.1",
                                            "nvidia/foo/lib/libfoo.so.1");
  ::unsetenv("STOKER_TEST_PIP_LIBRARY");
  ASSERT_GE(names.size(), 3u);
  EXPECT_EQ(names[0], "/opt/x/libfoo.so.1");
  EXPECT_EQ(names[1], "libfoo.so.1");
  for (size_t i = 2; i < names.size(); ++i) {  // beside this binary, then interpreters' sites
    EXPECT_NE(names[i].find("nvidia/foo/lib/libfoo.so.1"), std::string::npos) << names[i];
    EXPECT_EQ(names[i].front(), '/') << names[i];
  }
}

TEST(PipLibrary, WithoutTheVariableStartsWithTheSystemsName) {
  const auto names = pip_library_candidates("STOKER_TEST_PIP_LIBRARY_UNSET", "libbar.so.2",
                                            "nvidia/bar/libbar.so.2");
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names[0], "libbar.so.2");
  EXPECT_EQ(open_pip_library({"/nonexistent/libbar.so.2"}), nullptr);
}

}  // namespace
}  // namespace stoker
