#include "stoker/readers/nemo_manifest.hpp"

#include <gtest/gtest.h>

#include "stoker/core/error.hpp"

namespace stoker::readers {
namespace {

std::vector<NemoEntry> parse(std::string_view text, NemoManifestOptions o = {},
                             int64_t* left_out = nullptr) {
  std::vector<NemoEntry> out;
  const int64_t n = parse_nemo_manifest(text, "/data/set/train.json", o, out);
  if (left_out) *left_out = n;
  return out;
}

std::string error_of(std::string_view text) {
  try {
    parse(text);
  } catch (const ValueError& e) {
    return e.what();
  }
  return "no error";
}

TEST(NemoManifest, ReadsEveryKeyOfEachLine) {
  const auto e = parse(
      "{\"audio_filepath\": \"a/1.wav\", \"duration\": 1.5, \"text\": \"h\\u00e9llo\"}\n"
      "\n"
      "  {\"text\": \"x\", \"offset\": 0.25, \"extra\": {\"k\": [1, {\"duration\": 9}]}, "
      "\"audio_filepath\": \"/abs/2.flac\", \"duration\": 2}\r\n"
      "{\"audio_filepath\": \"3.wav\", \"duration\": 0}");
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].audio_filepath, "a/1.wav");
  EXPECT_EQ(e[0].text, "h\xc3\xa9llo");
  EXPECT_EQ(e[0].duration, 1.5);
  EXPECT_EQ(e[0].offset, 0);
  EXPECT_EQ(e[2].duration, 0);  // given: an empty window
  EXPECT_EQ(e[1].audio_filepath, "/abs/2.flac");
  EXPECT_EQ(e[1].offset, 0.25);
  EXPECT_EQ(e[1].duration, 2);  // the nested "duration" is not the entry's
  EXPECT_EQ(e[2].text, "");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(e[size_t(i)].index, i);
}

TEST(NemoManifest, DurationLimitsLeaveEntriesOutAndIndicesCountWhatIsKept) {
  const std::string text =
      "{\"audio_filepath\": \"a\", \"duration\": 1}\n"
      "{\"audio_filepath\": \"b\", \"duration\": 2}\n"
      "{\"audio_filepath\": \"c\", \"duration\": 3}\n";
  int64_t left = 0;
  auto e = parse(text, {.min_duration = 1.5, .max_duration = 2.5}, &left);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].audio_filepath, "b");
  EXPECT_EQ(e[0].index, 0);
  parse_nemo_manifest(text, "second.json", {}, e);  // a second manifest counts from 0 again
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[1].index, 0);
  EXPECT_EQ(e[3].index, 2);
  EXPECT_EQ(left, 2);
  e = parse(text, {.min_duration = 2, .max_duration = 2});  // the limits themselves are kept
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].audio_filepath, "b");
}

TEST(NemoManifest, BadLinesAreNamedWithTheirNumber) {
  EXPECT_NE(error_of("{\"audio_filepath\": \"a\"}\n{\"audio_filepath\": \"b\"\n")
                .find("/data/set/train.json, line 2: not valid JSON"),
            std::string::npos)
      << error_of("{\"audio_filepath\": \"a\"}\n{\"audio_filepath\": \"b\"\n");
  EXPECT_EQ(error_of("[1, 2]"), "/data/set/train.json, line 1: expected a JSON object per line");
  EXPECT_EQ(error_of("7"), "/data/set/train.json, line 1: expected a JSON object per line");
  EXPECT_EQ(error_of("{\"duration\": 1}"),
            "/data/set/train.json, line 1: the entry has no \"audio_filepath\"");
  EXPECT_EQ(error_of("{\"audio_filepath\": 5}"),
            "/data/set/train.json, line 1: \"audio_filepath\" is not a string");
  EXPECT_EQ(error_of("{\"audio_filepath\": \"a\", \"duration\": \"long\"}"),
            "/data/set/train.json, line 1: \"duration\" is not a number");
  EXPECT_EQ(error_of("{\"audio_filepath\": \"a\", \"text\": [\"a\"]}"),
            "/data/set/train.json, line 1: \"text\" is not a string");
  EXPECT_EQ(error_of("{\"audio_filepath\": \"a\", \"offset\": -1}"),
            "/data/set/train.json, line 1: \"offset\" must be a non-negative number of seconds, "
            "got -1");
}

}  // namespace
}  // namespace stoker::readers
