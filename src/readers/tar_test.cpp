// DALI webdataset index files: the shared examples written by DALI's wds2idx, and errors.
// (The tar walker itself is tested from Python against archives written by tarfile, and by
// its fuzz target.)
#include "stoker/readers/tar.hpp"

#include <gtest/gtest.h>

#include <functional>

#include "stoker/core/error.hpp"
#include "stoker/core/file_io.hpp"
#include "stoker/testing/jpeg_encode.hpp"

namespace stoker::readers {
namespace {

std::string expect_value_error(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const ValueError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected ValueError";
  return {};
}

TEST(WdsIndex, ReadsDalisV11AndV12FilesAlike) {
  auto data = testing::shared_data_dir();
  if (!data) GTEST_SKIP() << "../shared/data is absent";
  const std::string dir = *data + "/containers/dali-idx/webdataset/";
  auto v11 = parse_wds_index(read_file_text(dir + "train.idx"), "train.idx");
  auto v12 = parse_wds_index(read_file_text(dir + "legacy_index_formats/v1.2.idx"), "v1.2.idx");
  ASSERT_EQ(v11.size(), 94u);  // 47 samples of a .cls and a .jpg
  ASSERT_EQ(v12.size(), 94u);
  for (size_t k = 0; k < v11.size(); ++k) {
    EXPECT_EQ(v11[k].data_offset, v12[k].data_offset);
    EXPECT_EQ(v11[k].size, v12[k].size);
  }
  EXPECT_EQ(v11[0].name, "0.cls");
  EXPECT_EQ(v11[1].name, "0.jpg");
  EXPECT_EQ(v12[1].name, "single_cpy/jpeg/84/peacock-90051_640.jpg");
  EXPECT_EQ(v12[1].data_offset, 1536);
  EXPECT_EQ(v12[1].size, 166535);
  // Our writer produces DALI's v1.2 file byte for byte.
  EXPECT_EQ(format_wds_index(v12), read_file_text(dir + "legacy_index_formats/v1.2.idx"));
  // Grouping: one sample per line, both components present.
  auto samples = group_webdataset(v11, {"jpg", "cls"}, "error", "train.idx");
  ASSERT_EQ(samples.size(), 47u);
  EXPECT_EQ(samples[46].key, "46");
}

TEST(WdsIndex, ErrorsNameTheLine) {
  auto e = expect_value_error([] { parse_wds_index("v2.0 1\n", "x.idx"); });
  EXPECT_NE(e.find("x.idx:1: expected a DALI webdataset index header"), std::string::npos) << e;
  e = expect_value_error([] { parse_wds_index("v1.1 2\njpg 512 10\n", "x.idx"); });
  EXPECT_NE(e.find("announces 2 samples but the index lists 1"), std::string::npos) << e;
  e = expect_value_error([] { parse_wds_index("v1.1 1\njpg 512\n", "x.idx"); });
  EXPECT_NE(e.find("x.idx:2: expected groups of '<ext> <offset> <size>'"), std::string::npos) << e;
  e = expect_value_error([] { parse_wds_index("v1.1 1\njpg 512 -3\n", "x.idx"); });
  EXPECT_NE(e.find("x.idx:2: expected a non-negative number, got '-3'"), std::string::npos) << e;
  e = expect_value_error([] { parse_wds_index("v1.1 1\njpg 512 1000\n", "x.idx", 1024); });
  EXPECT_NE(e.find("runs past the end of the archive (1024 bytes)"), std::string::npos) << e;
  e = expect_value_error([] { parse_wds_index("v1.2 1\njpg 512 10 a/b.png\n", "x.idx"); });
  EXPECT_NE(e.find("member 'a/b.png' is listed under extension 'jpg'"), std::string::npos) << e;
  e = expect_value_error([] { parse_wds_index("", "x.idx"); });
  EXPECT_NE(e.find("empty webdataset index"), std::string::npos) << e;
}

}  // namespace
}  // namespace stoker::readers
