#include "stoker/readers/sequence_index.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "stoker/core/error.hpp"
#include "stoker/readers/video_index.hpp"

namespace stoker::readers {
namespace {
namespace fs = std::filesystem;

class SequenceIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("stoker_seq_index_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void touch(const std::string& p) {
    fs::create_directories((root_ / p).parent_path());
    std::ofstream(root_ / p) << "x";
  }
  std::string path(const std::string& p) const { return root_.string() + "/" + p; }
  fs::path root_;
};

// The order DALI 2.4 gives (checked against it): all paths sorted bytewise, so ' ' < '.' < '/'
// orders "a b" and "a.b" before "a"; one level only; no hidden entries; extensions matched
// case-insensitively; other files ignored.
TEST_F(SequenceIndexTest, StreamsAndFramesInDalisOrder) {
  for (auto p :
       {"a/001.jpg", "a/000.jpg", "a/X.JPG", "a/_1.jpeg", "a/y.Png", "a/z.txt", "a/.h.jpg",
        "a.b/000.jpg", "a b/000.jpg", "B/000.jpg", ".hid/000.jpg", "a/sub/000.jpg", "top.jpg"})
    touch(p);
  fs::create_directories(root_ / "a/dir.jpg");  // a folder named like a frame: not a frame
  auto streams = index_frame_streams(root_.string());
  ASSERT_EQ(streams.size(), 4u);
  EXPECT_EQ(streams[0].folder, path("B"));
  EXPECT_EQ(streams[1].folder, path("a b"));
  EXPECT_EQ(streams[2].folder, path("a.b"));
  EXPECT_EQ(streams[3].folder, path("a"));
  EXPECT_EQ(streams[3].frames,
            (std::vector<std::string>{path("a/000.jpg"), path("a/001.jpg"), path("a/X.JPG"),
                                      path("a/_1.jpeg"), path("a/y.Png")}));
}

TEST_F(SequenceIndexTest, PathsAreSpelledAsGlobSpellsThem) {
  touch("s/0.jpg");
  auto streams = index_frame_streams(root_.string() + "/");
  ASSERT_EQ(streams.size(), 1u);
  EXPECT_EQ(streams[0].frames[0], root_.string() + "//s/0.jpg");
}

TEST_F(SequenceIndexTest, MissingRootAndNoFrames) {
  try {
    index_frame_streams((root_ / "nope").string());
    FAIL();
  } catch (const IOError& e) {
    EXPECT_EQ(std::string(e.what()),
              "file_root '" + (root_ / "nope").string() + "' is not a folder (or cannot be read)");
  }
  touch("top.jpg");
  touch("s/notes.txt");
  try {
    index_frame_streams(root_.string());
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_EQ(std::string(e.what()), "file_root '" + root_.string() +
                                         "' holds no frames: expected image files in its "
                                         "sub-folders ('" +
                                         root_.string() + "/*/*', a folder per stream)");
  }
}

// DALI's GenerateSequences: starts 0, step, 2 step, ... while the last frame,
// start + (length - 1) * stride, is inside the stream; streams too short give none.
std::vector<std::pair<int32_t, int64_t>> cut(const std::vector<int64_t>& sizes, int64_t length,
                                             int64_t step, int64_t stride) {
  std::vector<VideoSequence> out;
  for (size_t s = 0; s < sizes.size(); ++s)
    cut_sequences(int32_t(s), 0, sizes[s], SequenceOptions{length, step, stride, false}, out);
  std::vector<std::pair<int32_t, int64_t>> r;
  for (auto& q : out) {
    EXPECT_EQ(q.frames, length);
    r.push_back({q.file, q.first});
  }
  return r;
}

TEST(SequenceEnumeration, WindowsPerStreamAsDali) {
  using V = std::vector<std::pair<int32_t, int64_t>>;
  // Streams of 7, 5 and 2 frames (DALI 2.4 gave these windows, in this order).
  EXPECT_EQ(cut({7, 5, 2}, 3, 1, 1),
            (V{{0, 0}, {0, 1}, {0, 2}, {0, 3}, {0, 4}, {1, 0}, {1, 1}, {1, 2}}));
  EXPECT_EQ(cut({7, 5, 2}, 3, 2, 1), (V{{0, 0}, {0, 2}, {0, 4}, {1, 0}, {1, 2}}));
  EXPECT_EQ(cut({7, 5, 2}, 2, 1, 3), (V{{0, 0}, {0, 1}, {0, 2}, {0, 3}, {1, 0}, {1, 1}}));
  EXPECT_EQ(cut({7, 5, 2}, 3, 3, 2), (V{{0, 0}, {1, 0}}));
  EXPECT_EQ(cut({2, 1}, 3, 1, 1), V{});
  EXPECT_EQ(cut({1}, 1, 1, 1), (V{{0, 0}}));
}

}  // namespace
}  // namespace stoker::readers
