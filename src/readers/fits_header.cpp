#include "stoker/readers/fits_header.hpp"

#include <charconv>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "stoker/core/error.hpp"

namespace stoker::readers {
namespace {

constexpr int64_t kBlock = 2880, kCard = 80;

std::string_view trim(std::string_view s) {
  const auto b = s.find_first_not_of(' ');
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(' ') - b + 1);
}

// A card's keyword as cfitsio names it (ffgknm): up to the first blank, '=' or NUL, or, after
// "HIERARCH ", the text before the '='. cfitsio ends a header at the first card it names END.
std::string_view card_name(std::string_view card) {
  card = card.substr(0, card.find('\0'));  // cfitsio reads cards as C strings
  if (card.substr(0, 9) == "HIERARCH ") {
    const auto eq = card.find('=');
    return eq == std::string_view::npos ? card.substr(0, 8) : trim(card.substr(9, eq - 9));
  }
  return card.substr(0, card.find_first_of(" ="));
}

// The value of a card as cfitsio reads it (ffpsvc): after "= " in columns 9-10, else after
// the first '=' anywhere; a quoted string up to its closing quote, a complex value up to ')',
// anything else up to a blank or '/'. nullopt for cards without a value.
std::optional<std::string_view> card_value(std::string_view card) {
  card = card.substr(0, card.find('\0'));  // cfitsio reads cards as C strings
  if (card.size() < 9) return std::nullopt;
  size_t at = 10;
  if (card.substr(8, 2) != "= ") {
    for (std::string_view none : {"COMMENT ", "HISTORY ", "END     ", "CONTINUE", "        "})
      if (card.substr(0, 8) == none) return std::nullopt;
    at = card.find('=');
    if (at == std::string_view::npos) return std::nullopt;
    ++at;
  }
  const auto v = card.substr(std::min(card.size(), at));
  const auto b = v.find_first_not_of(' ');
  if (b == std::string_view::npos || v[b] == '/') return std::string_view();
  size_t end = 0;
  if (v[b] == '\'') {
    for (end = b + 1; end < v.size(); ++end) {
      if (v[end] != '\'') continue;
      if (end + 1 < v.size() && v[end + 1] == '\'') {
        ++end;
        continue;
      }
      break;
    }
    end = std::min(end + 1, v.size());
  } else if (v[b] == '(') {
    end = v.find(')', b);
    if (end == std::string_view::npos) return std::nullopt;  // cfitsio refuses it unread
    ++end;
  } else {
    end = v.find_first_of(" /", b);
    if (end == std::string_view::npos) end = v.size();
  }
  return v.substr(b, end - b);
}

// A string value's text: its quotes and trailing blanks dropped ('' stays doubled: no keyword
// compared here holds a quote).
std::string_view unquoted(std::string_view v) {
  if (v.size() >= 2 && v.front() == '\'' && v.back() == '\'') v = v.substr(1, v.size() - 2);
  return trim(v);
}

// An integer value as FITS writes one ([+-]digits); nullopt for anything else (cfitsio reads
// some of those, "3.0" as 3, "0.5" as 0: refused here rather than guessed).
std::optional<int64_t> as_integer(std::string_view v) {
  if (!v.empty() && v.front() == '+') v.remove_prefix(1);
  int64_t out = 0;
  const auto r = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size()) return std::nullopt;
  return out;
}

}  // namespace

FitsHeaderWalk::FitsHeaderWalk(std::span<const uint8_t> file, std::string path)
    : file_(file), path_(std::move(path)) {}

void FitsHeaderWalk::check_to(int hdu) {
  // A header refused once stays refused: cfitsio must not parse it, nor anything after it.
  STOKER_ENFORCE(refused_.empty() || hdu < checked_, ValueError, refused_);
  while (checked_ < hdu && !ended_) {
    try {
      ended_ = !check_next();
    } catch (const ValueError& e) {
      refused_ = e.what();
      throw;
    }
  }
}

bool FitsHeaderWalk::check_next() {
  const int hdu = checked_ + 1;
  const auto size = int64_t(file_.size());
  // Every value of every keyword, up to the first card cfitsio names END.
  std::map<std::string_view, std::vector<std::string_view>, std::less<>> values;
  std::string_view first;
  int64_t at = next_;
  bool end = false;
  for (; !end && at + kBlock <= size; at += kBlock) {
    for (int64_t c = at; c < at + kBlock; c += kCard) {
      const std::string_view card(reinterpret_cast<const char*>(file_.data() + c), kCard);
      const auto name = card_name(card);
      if (c == next_) first = name;
      if (name == "END") {
        end = true;
        break;
      }
      if (auto v = card_value(card)) values[name].push_back(*v);
    }
  }
  if (first != (hdu == 1 ? "SIMPLE" : "XTENSION")) return false;  // cfitsio stops here too
  ++checked_;
  std::string_view type;
  if (auto it = values.find("XTENSION"); hdu > 1 && it != values.end())
    type = unquoted(it->second[0]);
  const bool table =
      type == "BINTABLE" || type == "TABLE" || type == "A3DTABLE" || type == "3DTABLE";
  // cfitsio 4.2 copies a table's unquoted TTYPEn value into a 70-byte field unchecked (a
  // fortified build aborts), card by card, before it knows whether the header ends: column
  // keywords may hold at most 68 characters, as quoted ones do.
  if (table)
    for (const auto& [key, list] : values)
      if (!key.empty() && key.front() == 'T')
        for (auto v : list)
          STOKER_ENFORCE(v.size() < 69 || v.front() == '\'', ValueError, path_, ": HDU ", hdu, ": ",
                         key, " = ", v, " is too long");
  // A keyword given twice with different values: cfitsio reads one or the other depending on
  // what it looks for, so the walk could not be sure to follow it.
  auto value = [&](std::string_view key) -> std::optional<std::string_view> {
    const auto it = values.find(key);
    if (it == values.end()) return std::nullopt;
    for (auto v : it->second)
      STOKER_ENFORCE(v == it->second.front(), ValueError, path_, ": HDU ", hdu, ": ", key,
                     " is given twice, as ", it->second.front(), " and as ", v);
    return it->second.front();
  };
  auto integer = [&](std::string_view key, std::optional<int64_t> absent) -> int64_t {
    const auto v = value(key);
    if (!v) {
      STOKER_ENFORCE(absent.has_value(), ValueError, path_, ": HDU ", hdu, " has no ", key,
                     end ? "" : " (its header has no END card: the file is truncated)");
      return *absent;
    }
    const auto n = as_integer(*v);
    STOKER_ENFORCE(n.has_value(), ValueError, path_, ": HDU ", hdu, ": ", key, " = ", *v,
                   " is not an integer");
    return *n;
  };
  auto positive = [&](std::string_view key) {
    const auto n = as_integer(value(key).value_or(""));
    STOKER_ENFORCE(n.has_value() && *n > 0, ValueError, path_, ": HDU ", hdu, ": ", key, " = ",
                   value(key).value_or("(none)"), "; tile sizes must be positive integers");
  };
  auto flag = [&](std::string_view key) {
    const auto v = value(key);
    return v && !v->empty() && v->front() == 'T';
  };
  // A compressed image: cfitsio divides by each ZTILEn (ZTILE1 defaults to ZNAXIS1) as it
  // reads the header. It takes any ZIMAGE card saying T.
  bool compressed = false;
  if (auto it = values.find("ZIMAGE"); it != values.end())
    for (auto v : it->second) compressed |= !v.empty() && v.front() == 'T';
  if (compressed) {
    // cfitsio 4.2 reads the compression keywords as integers through ffc2j, whose error
    // message for an unreadable value of 29 characters or more overflows its buffer (a
    // fortified build aborts); and it may read either of two differing copies.
    for (const auto& [key, unused] : values) {
      if ((key.empty() || key.front() != 'Z') && key != "BLANK" && key != "THEAP") continue;
      const auto v = *value(key);
      STOKER_ENFORCE(v.size() < 29, ValueError, path_, ": HDU ", hdu, ": ", key, " = ", v,
                     " is too long for a compression keyword");
    }
    for (const auto& [key, unused] : values)
      if (key.size() > 5 && key.substr(0, 5) == "ZTILE") positive(key);
    if (!values.count("ZTILE1")) positive("ZNAXIS1");
    // Rice: cfitsio divides by the block size (ZVAL1, or ZVAL2 where ZVAL1 < 16 and ZVAL2 > 8,
    // which it takes for the two swapped) as it reads the header, and adds it to a pixel index
    // in an int as it decodes.
    const auto method = unquoted(value("ZCMPTYPE").value_or(""));
    if (method == "RICE_1" || method == "RICE_ONE") {
      int64_t blocksize = integer("ZVAL1", std::nullopt), bytepix = 4;
      if (unquoted(value("ZNAME2").value_or("")) != "NOISEBIT") bytepix = integer("ZVAL2", 4);
      if (blocksize < 16 && bytepix > 8) std::swap(blocksize, bytepix);
      STOKER_ENFORCE(blocksize >= 1 && blocksize <= 65536, ValueError, path_, ": HDU ", hdu,
                     ": the Rice block size ", blocksize, " is not in [1, 65536]");
    }
  }
  const int64_t naxis = integer("NAXIS", std::nullopt);
  STOKER_ENFORCE(naxis >= 0 && naxis <= 999, ValueError, path_, ": HDU ", hdu, ": NAXIS = ", naxis,
                 " is not in [0, 999]");
  std::vector<int64_t> naxes;
  for (int64_t i = 1; i <= naxis; ++i) {
    naxes.push_back(integer("NAXIS" + std::to_string(i), std::nullopt));
    STOKER_ENFORCE(naxes.back() >= 0, ValueError, path_, ": HDU ", hdu, ": NAXIS", i, " = ",
                   naxes.back(), " is negative");
  }
  const int64_t pcount = integer("PCOUNT", 0), gcount = integer("GCOUNT", 1);
  STOKER_ENFORCE(pcount >= 0 && gcount >= 0, ValueError, path_, ": HDU ", hdu,
                 ": negative PCOUNT or GCOUNT");
  int64_t bytes = 0;
  bool overflow = false;
  if (table) {
    // Tables: NAXIS1 x NAXIS2 + PCOUNT bytes, whatever BITPIX and GCOUNT say.
    STOKER_ENFORCE(naxis == 2, ValueError, path_, ": HDU ", hdu, ": a table with NAXIS = ", naxis);
    // cfitsio 4.2 means to refuse more than 999 columns but compares instead of assigning the
    // error, and allocates the columns' descriptions.
    const int64_t fields = integer("TFIELDS", std::nullopt);
    STOKER_ENFORCE(fields >= 0 && fields <= 999, ValueError, path_, ": HDU ", hdu,
                   ": TFIELDS = ", fields, " is not in [0, 999]");
    overflow |= __builtin_mul_overflow(naxes[0], naxes[1], &bytes);
    overflow |= __builtin_add_overflow(bytes, pcount, &bytes);
  } else {
    // Images: |BITPIX| / 8 x GCOUNT x (PCOUNT + pixels), random groups (the primary HDU,
    // NAXIS1 = 0, GROUPS = T) without NAXIS1.
    const int64_t bitpix = integer("BITPIX", std::nullopt);
    STOKER_ENFORCE(bitpix == 8 || bitpix == 16 || bitpix == 32 || bitpix == 64 || bitpix == -32 ||
                       bitpix == -64,
                   ValueError, path_, ": HDU ", hdu, ": BITPIX = ", bitpix,
                   " is not 8, 16, 32, 64, -32 or -64");
    const bool groups = naxis > 0 && naxes[0] == 0 && flag("GROUPS");
    int64_t pixels = naxis == 0 ? 0 : 1;
    for (size_t i = groups ? 1 : 0; i < naxes.size(); ++i)
      overflow |= __builtin_mul_overflow(pixels, naxes[i], &pixels);
    overflow |= __builtin_add_overflow(pixels, pcount, &bytes);
    overflow |= __builtin_mul_overflow(bytes, gcount, &bytes);
    overflow |= __builtin_mul_overflow(bytes, (bitpix < 0 ? -bitpix : bitpix) / 8, &bytes);
  }
  // A header cut short (no END): cfitsio takes it to the end of the file, reads its keywords
  // as above, and finds nothing after it.
  if (!end) return false;
  overflow |= __builtin_add_overflow(bytes, kBlock - 1, &bytes);
  overflow |= __builtin_add_overflow(at, bytes / kBlock * kBlock, &next_);
  STOKER_ENFORCE(!overflow, ValueError, path_, ": HDU ", hdu,
                 " declares more data than a file can hold");
  return next_ < size;
}

}  // namespace stoker::readers
