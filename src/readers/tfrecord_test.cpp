#include "stoker/readers/tfrecord.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <map>
#include <optional>

#include "stoker/core/error.hpp"
#include "stoker/readers/recordio.hpp"
#include "stoker/readers/tf_example.hpp"
#include "stoker/testing/errors.hpp"
#include "stoker/testing/jpeg_encode.hpp"

namespace stoker::readers {
namespace {

// --- an independent writer, straight from TensorFlow's and protobuf's documentation --------

uint32_t crc32c_bitwise(const std::vector<uint8_t>& d) {
  uint32_t crc = 0xffffffffu;
  for (uint8_t b : d) {
    crc ^= b;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}
uint32_t mask(uint32_t c) { return ((c >> 15) | (c << 17)) + 0xa282ead8u; }
void put_le(std::vector<uint8_t>& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(uint8_t(v >> (8 * i)));
}
void put_varint(std::vector<uint8_t>& out, uint64_t v) {
  while (v >= 0x80) out.push_back(uint8_t(v | 0x80)), v >>= 7;
  out.push_back(uint8_t(v));
}
void put_bytes_field(std::vector<uint8_t>& out, int number, const std::vector<uint8_t>& payload) {
  put_varint(out, uint64_t(number) << 3 | 2);
  put_varint(out, payload.size());
  out.insert(out.end(), payload.begin(), payload.end());
}
std::vector<uint8_t> str(const std::string& s) { return {s.begin(), s.end()}; }

std::vector<uint8_t> example(const std::map<std::string, std::vector<uint8_t>>& features) {
  std::vector<uint8_t> feats;
  for (auto& [key, feature] : features) {
    std::vector<uint8_t> entry;
    put_bytes_field(entry, 1, str(key));
    put_bytes_field(entry, 2, feature);
    put_bytes_field(feats, 1, entry);
  }
  std::vector<uint8_t> ex;
  put_bytes_field(ex, 1, feats);
  return ex;
}
std::vector<uint8_t> bytes_feature(const std::vector<std::string>& values) {
  std::vector<uint8_t> list, f;
  for (auto& v : values) put_bytes_field(list, 1, str(v));
  put_bytes_field(f, 1, list);
  return f;
}
std::vector<uint8_t> int64_feature(const std::vector<int64_t>& values, bool packed) {
  std::vector<uint8_t> list, f;
  if (packed) {
    std::vector<uint8_t> p;
    for (auto v : values) put_varint(p, uint64_t(v));
    put_bytes_field(list, 1, p);
  } else {
    for (auto v : values) put_varint(list, 1 << 3 | 0), put_varint(list, uint64_t(v));
  }
  put_bytes_field(f, 3, list);
  return f;
}
std::vector<uint8_t> float_feature(const std::vector<float>& values) {
  std::vector<uint8_t> p, list, f;
  for (float v : values) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    put_le(p, bits, 4);
  }
  put_bytes_field(list, 1, p);
  put_bytes_field(f, 2, list);
  return f;
}
void append_record(std::vector<uint8_t>& file, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> len;
  put_le(len, data.size(), 8);
  file.insert(file.end(), len.begin(), len.end());
  put_le(file, mask(crc32c_bitwise(len)), 4);
  file.insert(file.end(), data.begin(), data.end());
  put_le(file, mask(crc32c_bitwise(data)), 4);
}

// --- tests ------------------------------------------------------------------------------

TEST(Crc32c, KnownValues) {
  const std::string s = "123456789";
  EXPECT_EQ(crc32c(reinterpret_cast<const uint8_t*>(s.data()), s.size()), 0xE3069283u);
  EXPECT_EQ(crc32c(nullptr, 0), 0u);
  std::vector<uint8_t> zeros(32, 0);
  EXPECT_EQ(crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);  // RFC 3720 test vector
}

TEST(TFRecord, RoundTripsWhatAnIndependentWriterWrote) {
  std::vector<uint8_t> file;
  std::vector<std::vector<uint8_t>> records;
  for (int i = 0; i < 5; ++i) {
    records.push_back(example({{"image/encoded", bytes_feature({std::string(size_t(i * 37), 'x')})},
                               {"label", int64_feature({i, -i, int64_t(1) << 40}, i % 2 == 0)},
                               {"bbox", float_feature({0.5f * float(i), -1.25f})}}));
    append_record(file, records.back());
  }
  auto spans = index_tfrecord(file, "mem.tfrecord", true);
  ASSERT_EQ(spans.size(), 5u);
  EXPECT_EQ(spans[1].offset, spans[0].size);
  for (int i = 0; i < 5; ++i) {
    auto payload = tfrecord_payload(file, spans[size_t(i)], "mem.tfrecord", true);
    ASSERT_TRUE(std::equal(payload.begin(), payload.end(), records[size_t(i)].begin(),
                           records[size_t(i)].end()));
    auto ex = parse_example(payload);
    ASSERT_EQ(ex.size(), 3u);
    EXPECT_EQ(ex["image/encoded"].kind, FeatureValue::Kind::kBytes);
    EXPECT_EQ(ex["image/encoded"].bytes[0].size(), size_t(i * 37));
    EXPECT_EQ(ex["label"].ints, (std::vector<int64_t>{i, -i, int64_t(1) << 40}));
    EXPECT_EQ(ex["bbox"].floats, (std::vector<float>{0.5f * float(i), -1.25f}));
  }
  auto text = format_tfrecord_index(spans);
  auto back = parse_tfrecord_index(text, "mem.idx", int64_t(file.size()));
  ASSERT_EQ(back.size(), spans.size());
  EXPECT_EQ(back[4].offset, spans[4].offset);
  EXPECT_EQ(back[4].size, spans[4].size);
}

TEST(TFRecord, CorruptionIsReportedWithFileAndOffset) {
  std::vector<uint8_t> file;
  append_record(file, example({{"a", int64_feature({1}, true)}}));
  const int64_t second = int64_t(file.size());
  append_record(file, example({{"a", int64_feature({2}, true)}}));
  auto flipped = file;
  flipped[size_t(second) + 14] ^= 0x40;
  EXPECT_EQ(testing::value_error_of([&] { index_tfrecord(flipped, "f.rec", true); }),
            "f.rec: record at offset " + std::to_string(second) +
                ": data CRC mismatch: the record is corrupt");
  EXPECT_NO_THROW(index_tfrecord(flipped, "f.rec", false));  // CRC checks are optional
  auto truncated = std::vector<uint8_t>(file.begin(), file.end() - 6);
  EXPECT_EQ(testing::value_error_of([&] { index_tfrecord(truncated, "t.rec", false); }),
            "t.rec: record at offset " + std::to_string(second) + ": length " +
                std::to_string(file.size() - size_t(second) - 16) +
                " runs past the end of the file (" + std::to_string(truncated.size()) + " bytes)");
  std::vector<uint8_t> text(40, 'A');
  EXPECT_EQ(testing::value_error_of([&] { index_tfrecord(text, "x.txt", true); }),
            "x.txt: record at offset 0: length CRC mismatch (the header is corrupt or this is "
            "not a TFRecord file)");
  EXPECT_EQ(testing::value_error_of([&] {
              parse_example(std::vector<uint8_t>{0x0a, 0x05, 0x01});
            }),
            "malformed Example: field 1 claims 5 bytes but only 1 remain (at byte 0)");
  EXPECT_EQ(testing::value_error_of([&] { parse_tfrecord_index("0 30\n30 x\n", "i.idx"); }),
            "i.idx line 2: expected '<offset> <size>', got '30 x'");
  EXPECT_EQ(testing::value_error_of([&] { parse_tfrecord_index("0 30\n30 30\n", "i.idx", 50); }),
            "i.idx line 2: record [30, 60) runs past the end of the data file (50 bytes)");
  // Found by the fuzz campaign: a number and a trailing tab ended the process
  // (std::out_of_range); a huge offset overflowed the bounds check.
  EXPECT_EQ(testing::value_error_of([&] { parse_tfrecord_index("00\t\n1 156\n", "i.idx"); }),
            "i.idx line 1: expected '<offset> <size>', got '00\t'");
  EXPECT_EQ(testing::value_error_of(
                [&] { parse_tfrecord_index("9223372036854775800 30\n", "i.idx", 50); }),
            "i.idx line 1: record [9223372036854775800, 9223372036854775830) runs past the end "
            "of the data file (50 bytes)");
  EXPECT_EQ(testing::value_error_of([&] { parse_recordio_index("00\t\n1\t156\n", "r.idx", 200); }),
            "r.idx line 1: expected '<key>\\t<offset>', got '00\t'");
}

// --- real files written by TensorFlow (../shared/data/containers) -------------------------

std::optional<std::string> containers() {
  auto d = testing::shared_data_dir();
  if (!d) return std::nullopt;
  return *d + "/containers";
}

TEST(TFRecordSharedData, FlowersWrittenByTensorFlow) {
  auto dir = containers();
  if (!dir) GTEST_SKIP() << "shared data not found";
  auto path = *dir + "/tfrecord/tfx-flowers/flowers.tfrecord";
  auto file = testing::read_file(path);
  auto spans = index_tfrecord(file, path, true);
  ASSERT_EQ(spans.size(), 25u);
  std::map<int64_t, int> labels;
  for (auto& s : spans) {
    auto ex = parse_example(tfrecord_payload(file, s, path, true));
    ASSERT_EQ(ex["label"].ints.size(), 1u);
    labels[ex["label"].ints[0]]++;
    auto& jpeg = ex["image_raw"].bytes.at(0);
    ASSERT_GT(jpeg.size(), 1000u);
    EXPECT_EQ(jpeg[0], 0xff);
    EXPECT_EQ(jpeg[1], 0xd8);
    EXPECT_EQ(ex["depth"].ints, std::vector<int64_t>{3});
    EXPECT_GE(ex["height"].ints.at(0), 159);
  }
  EXPECT_EQ(labels, (std::map<int64_t, int>{{0, 5}, {1, 5}, {2, 5}, {3, 5}, {4, 5}}));
}

TEST(TFRecordSharedData, MnistFloatsCifarPngsVocKeysAndGzip) {
  auto dir = containers();
  if (!dir) GTEST_SKIP() << "shared data not found";
  {
    auto path = *dir + "/tfrecord/tfx-mnist/mnist.tfrecord";
    auto file = testing::read_file(path);
    auto spans = index_tfrecord(file, path, true);
    ASSERT_EQ(spans.size(), 1000u);
    for (auto& s : spans) {
      auto ex = parse_example(tfrecord_payload(file, s, path, false));
      ASSERT_EQ(ex["image_floats"].floats.size(), 784u);
      ASSERT_EQ(ex["image_class"].ints.size(), 1u);
      ASSERT_LE(uint64_t(ex["image_class"].ints[0]), 9u);
    }
  }
  for (auto name : {"cifar10_train.tfrecord", "cifar10_test.tfrecord"}) {
    auto path = *dir + "/tfrecord/tfx-cifar10/" + name;
    auto file = testing::read_file(path);
    auto spans = index_tfrecord(file, path, true);
    ASSERT_EQ(spans.size(), 128u);
    auto ex = parse_example(tfrecord_payload(file, spans[0], path, true));
    EXPECT_EQ(ex["image"].bytes.at(0)[1], 'P');  // PNG
    EXPECT_EQ(std::string(ex["id"].bytes.at(0).begin(), ex["id"].bytes.at(0).end())
                  .rfind(name[8] == 't' && name[9] == 'r' ? "train_" : "test_", 0),
              0u);
  }
  {
    auto path = *dir + "/tfrecord/tf-models-voc/pascal_voc_seg_val-00000-of-00001.tfrecord";
    auto file = testing::read_file(path);
    auto spans = index_tfrecord(file, path, true);
    ASSERT_EQ(spans.size(), 3u);
    std::vector<int64_t> heights;
    for (auto& s : spans)
      heights.push_back(
          parse_example(tfrecord_payload(file, s, path, true))["image/height"].ints.at(0));
    EXPECT_EQ(heights, (std::vector<int64_t>{366, 335, 333}));
  }
  {
    auto path = *dir + "/tfrecord/tfx-gzip/data.tfrecord.gz";
    auto gz = testing::read_file(path);
    ASSERT_TRUE(is_gzip(gz));
    auto file = gunzip(gz, path);
    auto spans = index_tfrecord(file, path, true);
    ASSERT_EQ(spans.size(), 100u);
    auto ex = parse_example(tfrecord_payload(file, spans[7], path, true));
    EXPECT_EQ(ex["session_index"].kind, FeatureValue::Kind::kInt64);
    auto cut = std::vector<uint8_t>(gz.begin(), gz.begin() + long(gz.size() / 2));
    EXPECT_NE(testing::value_error_of([&] {
                gunzip(cut, path);
              }).find(path + ": corrupt or truncated gzip"),
              std::string::npos);
  }
}

TEST(TFRecordSharedData, CorruptFileFromTheWild) {
  auto dir = containers();
  if (!dir) GTEST_SKIP() << "shared data not found";
  auto path = *dir + "/tfrecord/negative/CORRUPT_pets_examples.record";
  auto file = testing::read_file(path);
  EXPECT_EQ(testing::value_error_of([&] { index_tfrecord(file, path, true); }),
            path + ": record at offset 0: data CRC mismatch: the record is corrupt");
  // Without CRC checks the garbage length header at offset 18446 is still caught.
  auto msg = testing::value_error_of([&] { index_tfrecord(file, path, false); });
  EXPECT_NE(msg.find(path + ": record at offset 18446: length "), std::string::npos) << msg;
}

TEST(TFRecordSharedData, DaliIndexFile) {
  auto dir = containers();
  if (!dir) GTEST_SKIP() << "shared data not found";
  auto text = testing::read_file(*dir + "/dali-idx/tfrecord/train.idx");
  auto spans = parse_tfrecord_index(std::string(text.begin(), text.end()), "train.idx");
  ASSERT_EQ(spans.size(), 47u);
  for (size_t i = 1; i < spans.size(); ++i)
    EXPECT_EQ(spans[i].offset, spans[i - 1].offset + spans[i - 1].size);
  EXPECT_EQ(spans.back().offset + spans.back().size, 12078679);
}

}  // namespace
}  // namespace stoker::readers

namespace stoker::readers {
namespace {
TEST(RecordIOSharedData, MXNetIndexFile) {
  auto dir = testing::shared_data_dir();
  if (!dir) GTEST_SKIP() << "shared data not found";
  auto text = testing::read_file(*dir + "/containers/dali-idx/recordio/train.idx");
  auto entries = parse_recordio_index(std::string(text.begin(), text.end()), "train.idx", 12069000);
  ASSERT_EQ(entries.size(), 47u);  // keys are unsorted in the file; offsets come out sorted
  for (size_t i = 1; i < entries.size(); ++i) {
    EXPECT_GT(entries[i].offset, entries[i - 1].offset);
    EXPECT_EQ(entries[i - 1].offset + entries[i - 1].size, entries[i].offset);
  }
  EXPECT_EQ(entries.back().offset + entries.back().size, 12069000);
  try {
    parse_recordio_index("1\t5\nx\n", "i.idx", 100);
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "i.idx line 2: expected '<key>\\t<offset>', got 'x'");
  }
}
}  // namespace
}  // namespace stoker::readers

namespace stoker::readers {
namespace {

// gzip of `n` zero bytes, compressed with zlib's gzip wrapper.
std::vector<uint8_t> gzip_zeros(size_t n) {
  std::vector<uint8_t> in(n, 0), out(compressBound(uLong(n)) + 64);
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  z.next_in = in.data();
  z.avail_in = uInt(n);
  z.next_out = out.data();
  z.avail_out = uInt(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

TEST(Gunzip, RefusesBombsAndKeepsOrdinaryData) {
  auto zeros = gzip_zeros(size_t(8) << 20);  // 8 MiB of zeros: ~1000x, under the 64 MiB floor
  EXPECT_EQ(gunzip(zeros, "ok.gz").size(), size_t(8) << 20);
  try {
    gunzip(zeros, "bomb.gz", size_t(1) << 20);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("bomb.gz: gzip data of " + std::to_string(zeros.size()) +
                                         " bytes inflates beyond 1048576 bytes; refusing it"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace stoker::readers
