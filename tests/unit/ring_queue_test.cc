#include "common/ring_queue.h"

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <string>
#include <utility>

namespace shardctl::common {
namespace {

// Against std::deque: pushes and pops in an uneven rhythm, so the front wraps around the array
// and the array grows while wrapped.
TEST(RingQueueTest, BehavesAsADequeThroughWrapsAndGrowth) {
  RingQueue<int> ring;
  std::deque<int> reference;
  int next = 0;
  for (int round = 0; round < 400; ++round) {
    const int pushes = 1 + (round * 7) % 5;
    const int pops = (round * 5) % 4;
    for (int i = 0; i < pushes; ++i) {
      ring.push_back(next);
      reference.push_back(next++);
    }
    for (int i = 0; i < pops && !reference.empty(); ++i) {
      ASSERT_EQ(ring.front(), reference.front());
      ring.pop_front();
      reference.pop_front();
    }
    ASSERT_EQ(ring.size(), reference.size());
    for (size_t i = 0; i < reference.size(); ++i) ASSERT_EQ(ring[i], reference[i]) << i;
    if (!reference.empty()) ASSERT_EQ(ring.back(), reference.back());
  }
}

TEST(RingQueueTest, DrainingAndRefillingDoesNotGrowTheArray) {
  RingQueue<int> ring;
  for (int i = 0; i < 16; ++i) ring.push_back(i);
  const size_t capacity = ring.capacity();
  for (int round = 0; round < 1000; ++round) {
    while (!ring.empty()) ring.pop_front();
    for (int i = 0; i < 16; ++i) ring.push_back(i);
  }
  EXPECT_EQ(ring.capacity(), capacity);
  ring.Release();
  EXPECT_EQ(ring.capacity(), 0u);
  EXPECT_TRUE(ring.empty());
}

TEST(RingQueueTest, PopLeavesNothingOwnedBehind) {
  RingQueue<std::shared_ptr<int>> ring;
  auto value = std::make_shared<int>(7);
  ring.push_back(value);
  EXPECT_EQ(value.use_count(), 2);
  ring.pop_front();
  EXPECT_EQ(value.use_count(), 1);
}

TEST(RingQueueTest, MovedFromQueueIsEmptyAndSwapExchangesContents) {
  RingQueue<std::string> a;
  for (int i = 0; i < 11; ++i) a.push_back(std::to_string(i));
  a.pop_front();
  RingQueue<std::string> b(std::move(a));
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): the state after a move is defined
  ASSERT_EQ(b.size(), 10u);
  EXPECT_EQ(b.front(), "1");
  RingQueue<std::string> c;
  c.push_back("x");
  std::swap(b, c);
  EXPECT_EQ(b.size(), 1u);
  EXPECT_EQ(b.front(), "x");
  ASSERT_EQ(c.size(), 10u);
  EXPECT_EQ(c.back(), "10");
  a.push_back("again");  // a moved-from queue is usable
  EXPECT_EQ(a.front(), "again");
}

}  // namespace
}  // namespace shardctl::common
