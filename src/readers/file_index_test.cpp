#include "stoker/readers/file_index.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "stoker/core/error.hpp"

namespace stoker::readers {
namespace {
namespace fs = std::filesystem;

class FileIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("stoker_index_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    for (auto p : {"dog/b.JPG", "dog/a.jpeg", "cat/z.jpg", "cat/nested/y.png", "cat/notes.txt",
                   "bird/readme.md"}) {
      fs::create_directories((root_ / p).parent_path());
      std::ofstream(root_ / p) << "x";
    }
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(FileIndexTest, ClassFoldersSortedWithCaseInsensitiveFilters) {
  auto idx = index_class_folders(root_.string(), default_image_filters());
  ASSERT_EQ(idx.size(), 4u);
  // classes sorted: bird(0, no images), cat(1), dog(2)
  EXPECT_EQ(idx[0].path, (root_ / "cat/nested/y.png").string());
  EXPECT_EQ(idx[0].label, 1);
  EXPECT_EQ(idx[1].path, (root_ / "cat/z.jpg").string());
  EXPECT_EQ(idx[2].path, (root_ / "dog/a.jpeg").string());
  EXPECT_EQ(idx[3].path, (root_ / "dog/b.JPG").string());
  EXPECT_EQ(idx[3].label, 2);
}

TEST_F(FileIndexTest, FileListWithSpacesAndComments) {
  std::ofstream(root_ / "list.txt") << "# comment\ncat/z.jpg 4\n\n  dog/a.jpeg\t7\n";
  auto idx = index_file_list((root_ / "list.txt").string(), "");
  ASSERT_EQ(idx.size(), 2u);
  EXPECT_EQ(idx[0].path, (root_ / "cat/z.jpg").string());
  EXPECT_EQ(idx[1].label, 7);
  std::ofstream(root_ / "bad.txt") << "cat/z.jpg 4\ndog/a.jpeg seven\n";
  try {
    index_file_list((root_ / "bad.txt").string(), "");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_EQ(std::string(e.what()), "file_list '" + (root_ / "bad.txt").string() +
                                         "' line 2: label 'seven' is not an integer");
  }
}

TEST_F(FileIndexTest, MissingRootAndEmptyFolders) {
  try {
    index_class_folders((root_ / "nope").string(), default_image_filters());
    FAIL();
  } catch (const IOError& e) {
    EXPECT_EQ(std::string(e.what()),
              "file_root '" + (root_ / "nope").string() + "' is not a folder (or cannot be read)");
  }
  EXPECT_THROW(index_class_folders((root_ / "bird").string(), default_image_filters()), ValueError);
  try {
    index_file_list((root_ / "missing.txt").string(), "");
    FAIL();
  } catch (const IOError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot open file_list: cannot open '" +
                                         (root_ / "missing.txt").string() +
                                         "': No such file or directory");
  }
  EXPECT_THROW(index_files({"a", "b"}, {1}, ""), ValueError);
}

TEST(FileIndex, FilesWithoutLabelsAreLabelledByPositionAsInDali) {
  auto e = index_files({"a", "b", "c"}, {}, "r");
  ASSERT_EQ(e.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(e[size_t(i)].label, i);
  EXPECT_EQ(e[1].path, "r/b");
  EXPECT_EQ(index_files({"a", "b"}, {7, 9}, "")[1].label, 9);
}

}  // namespace
}  // namespace stoker::readers
