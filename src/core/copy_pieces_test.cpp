#include <gtest/gtest.h>

#include <vector>

#include "stoker/core/cuda.hpp"

namespace stoker {
namespace {

bool same(const std::vector<CopyPiece>& a, const std::vector<CopyPiece>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].dst != b[i].dst || a[i].src != b[i].src || a[i].bytes != b[i].bytes) return false;
  return true;
}

TEST(CopyPieces, SamplesBackToBackOnBothSidesBecomeOneCopy) {
  char src[100], dst[100];
  const auto merged =
      merge_adjacent_copies({{dst, src, 10}, {dst + 10, src + 10, 30}, {dst + 40, src + 40, 60}});
  EXPECT_TRUE(same(merged, {{dst, src, 100}}));
}

TEST(CopyPieces, AGapOnEitherSideStartsANewCopy) {
  char src[100], dst[100];
  // The mixed decoder's case: the hardware decoded sample 1, so the threads' samples 0 and 2
  // are back to back in staging but not in the batch; then 2 and 3 are back to back in both.
  const auto merged = merge_adjacent_copies({{dst, src, 10},
                                             {dst + 20, src + 10, 10},
                                             {dst + 30, src + 20, 10},
                                             {dst + 40, src + 50, 10}});
  EXPECT_TRUE(same(merged, {{dst, src, 10}, {dst + 20, src + 10, 20}, {dst + 40, src + 50, 10}}));
}

TEST(CopyPieces, EmptyPiecesAreDroppedAndOrderIsKept) {
  char src[100], dst[100];
  EXPECT_TRUE(merge_adjacent_copies({}).empty());
  EXPECT_TRUE(merge_adjacent_copies({{dst, src, 0}}).empty());
  // Out of order pieces are not reordered (a later piece before an earlier one: two copies).
  const auto merged =
      merge_adjacent_copies({{dst + 50, src + 50, 50}, {dst, src, 0}, {dst, src, 50}});
  EXPECT_TRUE(same(merged, {{dst + 50, src + 50, 50}, {dst, src, 50}}));
}

}  // namespace
}  // namespace stoker
