#include "stoker/readers/coco_masks.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "stoker/core/error.hpp"

namespace stoker::readers {

std::vector<uint32_t> rle_from_string(std::string_view text) {
  std::vector<uint32_t> counts;
  size_t p = 0;
  while (p < text.size()) {
    int64_t value = 0;
    int group = 0;
    bool more = true;
    while (more) {
      STOKER_ENFORCE(p < text.size(), ValueError, "RLE counts string ends inside a count");
      const int c = int(static_cast<unsigned char>(text[p])) - 48;
      STOKER_ENFORCE(c >= 0 && c < 64, ValueError, "RLE counts string has the character '",
                     text[p], "' at ", p, " (expected '0' to 'o')");
      // A 32-bit count takes 7 groups; more is not a count.
      STOKER_ENFORCE(group < 7, ValueError, "RLE counts string has a count longer than 32 bits at ",
                     p);
      value |= int64_t(c & 0x1f) << (5 * group);
      more = (c & 0x20) != 0;
      ++p;
      ++group;
      if (!more && (c & 0x10) != 0) value -= int64_t(1) << (5 * group);  // sign of the last group
    }
    if (counts.size() > 2) value += counts[counts.size() - 2];
    STOKER_ENFORCE(value >= 0 && value <= int64_t(std::numeric_limits<uint32_t>::max()),
                   ValueError, "RLE counts string gives run ", counts.size(), " the length ",
                   value);
    counts.push_back(uint32_t(value));
  }
  return counts;
}

namespace {

// One point of the walk along the scaled boundary, and the column crossings it records.
struct BoundaryWalk {
  int64_t h, w;
  std::vector<int64_t> toggles;  // column-major pixel indices where the mask flips
  bool started = false;
  int64_t px = 0, py = 0;

  void visit(int64_t x, int64_t y) {
    if (started && x != px) {
      // The walk moved between scaled columns x and px (adjacent): the boundary between them
      // is the centre of pixel column k when the lower one is 5k + 2.
      const int64_t col = std::min(x, px);
      if (col >= 2 && (col - 2) % 5 == 0 && (col - 2) / 5 < w) {
        const int64_t k = (col - 2) / 5;
        // The first row whose centre lies below the crossing: ceil((ymin - 2) / 5).
        const int64_t ymin = std::min(y, py);
        int64_t row = ymin - 2 >= 0 ? (ymin - 2 + 4) / 5 : -((2 - ymin) / 5);
        row = std::clamp<int64_t>(row, 0, h);
        toggles.push_back(k * h + row);
      }
    }
    started = true;
    px = x;
    py = y;
  }
};

// C's conversion of a double to int (truncation toward zero), as COCO's rule rounds with it.
int64_t trunc_int(double v) { return int64_t(v); }

}  // namespace

int32_t coco_grid(double v) {
  constexpr double kLimit = double(1 << 30);
  return int32_t(trunc_int(std::clamp(5.0 * v + 0.5, -kLimit, kLimit)));
}

std::vector<uint32_t> rle_from_polygon(std::span<const int32_t> xy, int64_t h, int64_t w) {
  const size_t n = xy.size() / 2;
  BoundaryWalk walk{h, w, {}};
  std::vector<int64_t> vx(n + 1), vy(n + 1);
  for (size_t j = 0; j < n; ++j) {
    vx[j] = xy[2 * j];
    vy[j] = xy[2 * j + 1];
  }
  if (n > 0) {
    vx[n] = vx[0];
    vy[n] = vy[0];
  }
  for (size_t j = 0; j < n; ++j) {
    // Each edge is stepped along its longer axis from its lower end there, so that the
    // rounding of the other coordinate does not depend on the direction of travel; the
    // points are visited in the polygon's own order.
    const int64_t dx = std::abs(vx[j + 1] - vx[j]), dy = std::abs(vy[j + 1] - vy[j]);
    const bool along_x = dx >= dy;
    const bool reversed = along_x ? vx[j] > vx[j + 1] : vy[j] > vy[j + 1];
    const int64_t sx = reversed ? vx[j + 1] : vx[j], sy = reversed ? vy[j + 1] : vy[j];
    const int64_t ex = reversed ? vx[j] : vx[j + 1], ey = reversed ? vy[j] : vy[j + 1];
    const int64_t steps = along_x ? dx : dy;
    if (steps == 0) {  // a repeated vertex: one point, no crossing
      walk.visit(sx, sy);
      continue;
    }
    const double slope = along_x ? double(ey - sy) / double(dx) : double(ex - sx) / double(dy);
    for (int64_t d = 0; d <= steps; ++d) {
      const int64_t t = reversed ? steps - d : d;
      if (along_x) {
        walk.visit(sx + t, trunc_int(double(sy) + slope * double(t) + 0.5));
      } else {
        walk.visit(trunc_int(double(sx) + slope * double(t) + 0.5), sy + t);
      }
    }
  }
  // Sorted toggles become run lengths; two toggles at one pixel cancel (a zero-length run
  // joins its neighbours).
  auto& a = walk.toggles;
  std::sort(a.begin(), a.end());
  a.push_back(h * w);
  std::vector<uint32_t> counts;
  counts.reserve(a.size());
  int64_t prev = 0;
  bool merge_next = false;
  for (size_t j = 0; j < a.size(); ++j) {
    const int64_t run = a[j] - prev;
    prev = a[j];
    if (j == 0) {
      counts.push_back(uint32_t(run));
    } else if (merge_next) {
      counts.back() += uint32_t(run);
      merge_next = false;
    } else if (run > 0) {
      counts.push_back(uint32_t(run));
    } else {
      merge_next = true;
    }
  }
  return counts;
}

bool rle_covers(std::span<const uint32_t> counts, int64_t h, int64_t w) {
  uint64_t total = 0;
  for (auto c : counts) total += c;
  return total == uint64_t(h) * uint64_t(w);
}

void paint_rle(std::span<const uint32_t> counts, int64_t h, int64_t w, int32_t label,
               int32_t* labels) {
  int64_t pos = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const int64_t end = pos + counts[i];
    if (i % 2 == 1) {
      for (int64_t p = pos; p < end;) {  // one column segment at a time
        const int64_t x = p / h, y0 = p % h;
        const int64_t y1 = std::min(h, y0 + (end - p));
        for (int64_t y = y0; y < y1; ++y) {
          int32_t& v = labels[y * w + x];
          v = std::max(v, label);
        }
        p += y1 - y0;
      }
    }
    pos = end;
  }
}

}  // namespace stoker::readers
