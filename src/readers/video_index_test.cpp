// readers.video's dataset logic against DALI's rules, written out case by case (DALI's
// video_loader.h: the file list's format, time/frame ranges, sequence starts, padding).
#include "stoker/readers/video_index.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "stoker/core/error.hpp"

namespace stoker::readers {
namespace {
namespace fs = std::filesystem;

std::string write_list(const std::string& text) {
  const auto path =
      fs::temp_directory_path() / ("stoker_video_list_" + std::to_string(::getpid()) + ".txt");
  std::ofstream(path) << text;
  return path.string();
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(VideoFileList, FieldsRangesAndSkippedLines) {
  const auto list = write_list(
      "a.mp4 0\n"
      "\n"
      "  dir/b.mkv 3 1.5\n"
      "c.mp4 1 0.5 2.25\n"
      "d.mp4 2 4 4\n"  // an empty range: skipped, as DALI does
      "e.mp4 7 -10 -2\n");
  const auto e = parse_video_file_list(list);
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0].path, "a.mp4");
  EXPECT_EQ(e[0].label, 0);
  EXPECT_EQ(e[0].start, 0);
  EXPECT_EQ(e[0].end, 0);
  EXPECT_EQ(e[1].path, "dir/b.mkv");
  EXPECT_EQ(e[1].label, 3);
  EXPECT_EQ(e[1].start, 1.5);
  EXPECT_EQ(e[2].end, 2.25);
  EXPECT_EQ(e[3].path, "e.mp4");
  EXPECT_EQ(e[3].start, -10);
  fs::remove(list);
}

TEST(VideoFileList, BadLinesAreNamed) {
  for (auto [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"a.mp4\n", "line 1: expected '<path> <label> [<start> [<end>]]', got 1 fields"},
           {"a.mp4 0\nb.mp4 -1\n", "line 2: the label must be an integer >= 0, got '-1'"},
           {"a.mp4 x\n", "line 1: the label must be an integer >= 0, got 'x'"},
           {"a.mp4 1 0.5 z\n", "line 1: the end must be a number, got 'z'"},
           {"a.mp4 1 inf 2\n", "start and end must be finite and below 1e9"},
           {"a.mp4 1 0 1e30\n", "start and end must be finite and below 1e9"},
           {"a.mp4 1 2 3 4\n", "got 5 fields"},
           {"\n\n", "lists no files"}}) {
    const auto list = write_list(text);
    EXPECT_NE(error_of([&] { parse_video_file_list(list); }).find(message), std::string::npos)
        << text << " -> " << error_of([&] { parse_video_file_list(list); });
    fs::remove(list);
  }
  EXPECT_NE(error_of([] { parse_video_file_list("/no/such/list.txt"); }).find("cannot open"),
            std::string::npos);
}

TEST(VideoFrameRange, TimesAndFrameNumbersAsDaliComputesThem) {
  const FrameRangeOptions times{}, preceding{false, true}, numbers{true, false};
  auto range = [](float s, float e, const FrameRangeOptions& o) {
    return video_frame_range({"v.mp4", 0, s, e}, 100, 25.0, o);
  };
  using R = std::pair<int64_t, int64_t>;
  EXPECT_EQ(range(0, 0, times), R(0, 100));       // the whole file
  EXPECT_EQ(range(1.0, 2.0, times), R(25, 50));   // exact times
  EXPECT_EQ(range(0.05, 1.99, times), R(2, 49));  // start up, end down: ceil(1.25), floor(49.75)
  EXPECT_EQ(range(0.05, 1.99, preceding), R(1, 50));  // outwards: floor, ceil
  EXPECT_EQ(range(1.0, 0, times), R(25, 100));        // end 0: to the end
  EXPECT_EQ(range(-1.0, -0.5, times), R(75, 87));     // from the end: 100-25, 100+floor(-12.5)
  EXPECT_EQ(range(10, 20, numbers), R(10, 20));
  EXPECT_EQ(range(10.2, 19.8, numbers), R(10, 19));  // truncated, as DALI converts them
  EXPECT_EQ(range(-10, 0, numbers), R(90, 100));
  EXPECT_EQ(range(-6.5, -1.5, numbers), R(93, 98));  // 100 - 6.5 = 93.5 -> 93
  // Times in single precision, as DALI reads them: -0.4f * 25 is a hair below -10.
  EXPECT_EQ(range(-0.4, 0, preceding), R(89, 100));
  EXPECT_EQ(range(-0.4, 0, times), R(90, 100));
  EXPECT_NE(error_of([&] { range(3.0, 2.0, times); }).find("is after the end"), std::string::npos);
  EXPECT_NE(error_of([&] {
              range(1.0, 5.0, times);
            }).find("frames [25, 125) of the file list's range (1, 5) are not all among its 100"),
            std::string::npos)
      << error_of([&] { range(1.0, 5.0, times); });
  EXPECT_NE(error_of([&] { range(-200, 0, numbers); }).find("not all among"), std::string::npos);
}

TEST(VideoSequences, StartsStepStrideAndPadding) {
  auto cut = [](int64_t first, int64_t end, SequenceOptions o) {
    std::vector<VideoSequence> out;
    cut_sequences(4, first, end, o, out);
    std::vector<std::pair<int64_t, int32_t>> starts;
    for (const auto& s : out) {
      EXPECT_EQ(s.file, 4);
      starts.emplace_back(s.first, s.frames);
    }
    return starts;
  };
  using V = std::vector<std::pair<int64_t, int32_t>>;
  // Default step: length * stride (DALI's loader; its docs say sequence_length).
  EXPECT_EQ(cut(0, 10, {3, -1, 1, false}), (V{{0, 3}, {3, 3}, {6, 3}}));
  EXPECT_EQ(cut(0, 10, {3, -1, 2, false}), (V{{0, 3}}));  // spans 5 frames; the next starts at 6
  EXPECT_EQ(cut(0, 10, {3, 1, 1, false}).size(), 8u);     // 0..7
  EXPECT_EQ(cut(2, 9, {3, 2, 1, false}), (V{{2, 3}, {4, 3}, {6, 3}}));
  // Padding: later starts keep the frames that remain.
  EXPECT_EQ(cut(0, 10, {3, -1, 1, true}), (V{{0, 3}, {3, 3}, {6, 3}, {9, 1}}));
  EXPECT_EQ(cut(0, 10, {4, 3, 2, true}), (V{{0, 4}, {3, 4}, {6, 2}, {9, 1}}));
  EXPECT_TRUE(cut(0, 2, {3, -1, 1, false}).empty());  // too short for one sequence
  EXPECT_EQ(cut(0, 2, {3, -1, 1, true}), (V{{0, 2}}));
  EXPECT_NE(error_of([&] { cut(0, 10, {3, 0, 1, false}); }).find("step != 0"), std::string::npos);
  EXPECT_NE(error_of([&] {
              cut(0, 10, {3, 1, 0, false});
            }).find("stride must be >= 1"),
            std::string::npos);
}

TEST(VideoFrameSelection, RangesListsAndPaddingAsDaliDecodes) {
  // Measured with DALI 2.4's decoders.video on a 30-frame VP9 video (the parity test repeats
  // it): the frame numbers each output frame shows.
  auto sel = [](auto set) {
    FrameSelection s;
    set(s);
    return select_frames(s, 30);
  };
  using V = std::vector<int64_t>;
  EXPECT_EQ(sel([](auto&) {}).size(), 30u);  // every frame
  EXPECT_EQ(sel([](auto& s) { s.start = 25, s.length = 8; }), (V{25, 26, 27, 28, 29, -1, -1, -1}));
  EXPECT_EQ(sel([](auto& s) { s.start = 25, s.length = 8, s.pad = FramePadding::kEdge; }),
            (V{25, 26, 27, 28, 29, 29, 29, 29}));
  EXPECT_EQ(sel([](auto& s) { s.start = 25, s.length = 8, s.pad = FramePadding::kReflect1001; }),
            (V{25, 26, 27, 28, 29, 29, 28, 27}));
  EXPECT_EQ(sel([](auto& s) { s.start = 25, s.length = 8, s.pad = FramePadding::kReflect101; }),
            (V{25, 26, 27, 28, 29, 28, 27, 26}));
  EXPECT_EQ(sel([](auto& s) { s.start = 25, s.length = 8, s.pad = FramePadding::kNone; }),
            (V{25, 26, 27, 28, 29}));
  EXPECT_EQ(sel([](auto& s) { s.start = 20, s.end = 35, s.stride = 3; }), (V{20, 23, 26, 29, -1}));
  EXPECT_EQ(sel([](auto& s) { s.start = 2, s.stride = 7; }), (V{2, 9, 16, 23}));
  EXPECT_EQ(sel([](auto& s) { s.listed = true, s.frames = {3, 1, 28, 1}; }), (V{3, 1, 28, 1}));
  EXPECT_EQ(sel([](auto& s) {
              s.listed = true, s.frames = {3, 31, 29}, s.pad = FramePadding::kEdge;
            }),
            (V{3, 29, 29}));
  // Reflections keep going past one period.
  FrameSelection far;
  far.listed = true, far.frames = {3, 4, 5, 6, 7}, far.pad = FramePadding::kReflect101;
  EXPECT_EQ(select_frames(far, 3), (V{1, 0, 1, 2, 1}));
  far.pad = FramePadding::kReflect1001;
  EXPECT_EQ(select_frames(far, 3), (V{2, 1, 0, 0, 1}));
  EXPECT_NE(
      error_of([&] {
        sel([](auto& s) { s.listed = true, s.frames = {3, 31}, s.pad = FramePadding::kNone; });
      }).find("frame 31 is past the video's 30 frames (pad_mode is 'none')"),
      std::string::npos);
  EXPECT_NE(error_of([&] {
              sel([](auto& s) { s.start = 40, s.length = 2; });
            }).find("start_frame 40 is not among the video's 30 frames"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_frame_padding("wrap"); }).find("pad_mode must be"),
            std::string::npos);
  EXPECT_EQ(parse_frame_padding("symmetric"), FramePadding::kReflect1001);
  EXPECT_EQ(parse_frame_padding("repeat"), FramePadding::kEdge);
}

// experimental.readers.video's file_list ranges, as DALI 2.4 gave them for a 30-frame VP9 file
// at 30 fps in a millisecond time base (pts 0, 33, 67, 100, ...), measured case by case.
TEST(VideoListRange, TimestampsAndFrameNumbersAsDali) {
  std::vector<int64_t> pts;
  for (int k = 0; k < 30; ++k) pts.push_back((k * 1000 + 15) / 30);  // 0, 33, 67, 100, ...
  ASSERT_EQ(pts[3], 100);
  ASSERT_EQ(pts[16], 533);
  using P = std::pair<int64_t, int64_t>;
  auto range = [&](float start, float end, const std::string& format,
                   const std::string& rounding = "start_down_end_up", bool include_end = true) {
    VideoEntry e{"v.webm", 0, start, end};
    return video_list_range(e, pts, 1, 1000,
                            parse_list_range_options(format, rounding, include_end));
  };
  EXPECT_EQ(range(0, 0, "timestamps"), (P{0, 30}));        // the whole file
  EXPECT_EQ(range(0.1f, 0.5f, "timestamps"), (P{3, 15}));  // on frames: 100 and 500 ms
  // 0.134 s and 0.533 s (532 ms in single precision): between frames 4/5 and 15/16.
  EXPECT_EQ(range(0.134f, 0.533f, "timestamps"), (P{4, 16}));
  EXPECT_EQ(range(0.134f, 0.533f, "timestamps", "start_up_end_down"), (P{5, 15}));
  EXPECT_EQ(range(0.134f, 0.533f, "timestamps", "all_up"), (P{5, 16}));
  EXPECT_EQ(range(0.134f, 0.533f, "timestamps", "all_down"), (P{4, 15}));
  // DALI's quirks: a time past the last frame's is frame 0; negative times are not counted
  // from the end.
  EXPECT_EQ(range(0.5f, 2.0f, "timestamps"), (P{15, 0}));
  EXPECT_EQ(range(-0.5f, -0.1f, "timestamps"), (P{0, 0}));
  EXPECT_EQ(range(4.5f, 10.5f, "frames"), (P{4, 11}));
  EXPECT_EQ(range(4.5f, 10.5f, "frames", "start_up_end_down"), (P{5, 10}));
  EXPECT_EQ(range(-6, -1, "frames"), (P{24, 29}));
  EXPECT_EQ(range(-6.5f, -1.5f, "frames"), (P{23, 29}));
  EXPECT_EQ(range(-6.5f, -1.5f, "frames", "all_up"), (P{24, 29}));
  EXPECT_EQ(range(25, 40, "frames"), (P{25, 30}));  // include_end clamps
  EXPECT_EQ(range(25, 40, "frames", "all_down", false), (P{25, 40}));
  EXPECT_EQ(range(-3, 0, "frames"), (P{27, 0}));  // no end: empty
  EXPECT_NE(error_of([] {
              parse_list_range_options("seconds", "all_up", true);
            }).find("file_list_format must be 'frames' or 'timestamps', got 'seconds'"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_list_range_options("frames", "nearest", true);
            }).find("file_list_rounding must be"),
            std::string::npos);
}

TEST(VideoListRange, BoundFrameIsDalisHandleBoundary) {
  EXPECT_EQ(bound_frame(12, 10, 20, FramePadding::kNone), 12);
  EXPECT_EQ(bound_frame(23, 10, 20, FramePadding::kEdge), 19);
  EXPECT_EQ(bound_frame(4, 10, 20, FramePadding::kEdge), 10);  // clamped into [lo, end)
  EXPECT_EQ(bound_frame(23, 10, 20, FramePadding::kConstant), -1);
  // Reflections about [0, end) whatever lo is: 20 -> 19 (1001) or 18 (101).
  EXPECT_EQ(bound_frame(20, 10, 20, FramePadding::kReflect1001), 19);
  EXPECT_EQ(bound_frame(20, 10, 20, FramePadding::kReflect101), 18);
  EXPECT_EQ(bound_frame(4, 10, 20, FramePadding::kReflect1001), 4);
  // Negative frames (a frame-number range starting before the file) mirror at 0.
  EXPECT_EQ(bound_frame(-1, -5, 30, FramePadding::kReflect1001), -1);  // inside its range
  EXPECT_EQ(bound_frame(-1, 0, 30, FramePadding::kReflect1001), 0);
  EXPECT_EQ(bound_frame(-1, 0, 30, FramePadding::kReflect101), 1);
  EXPECT_EQ(bound_frame(-4, 0, 3, FramePadding::kReflect1001), 2);  // DALI's loop: 3, then 2
  EXPECT_EQ(bound_frame(5, 0, 1, FramePadding::kReflect101), 0);    // one frame: itself
  EXPECT_NE(error_of([] {
              bound_frame(30, 0, 30, FramePadding::kNone);
            }).find("frame 30 is outside the sample's frames [0, 30) and pad_mode is 'none'"),
            std::string::npos);
}

}  // namespace
}  // namespace stoker::readers
