#include "proxy/commands/request_pool.h"

#include <gtest/gtest.h>

#include <vector>

namespace shardctl::proxy {
namespace {

SubRequest* WithBuffer(SubRequestPool& pool, size_t bytes) {
  SubRequest* request = pool.Take();
  request->request.assign(bytes, 'x');
  request->slot = 7;
  return request;
}

TEST(SubRequestPoolTest, AGivenRequestComesBackResetWithItsBuffer) {
  SubRequestPool pool;
  SubRequest* first = WithBuffer(pool, 300);
  first->Extras();
  pool.Give(first);
  EXPECT_EQ(pool.kept(), 1u);
  EXPECT_GE(pool.kept_bytes(), 300u);
  SubRequest* again = pool.Take();
  EXPECT_EQ(again, first);
  EXPECT_TRUE(again->request.empty());
  EXPECT_GE(again->request.capacity(), 300u);
  EXPECT_EQ(again->slot, -1);
  EXPECT_EQ(again->extras, nullptr);
  EXPECT_EQ(pool.kept(), 0u);
  EXPECT_EQ(pool.kept_bytes(), 0u);
  pool.Give(again);
}

TEST(SubRequestPoolTest, AHugeBufferIsFreedNotKept) {
  SubRequestPool pool;
  pool.Give(WithBuffer(pool, SubRequestPool::kMaxBufferBytes + 1));
  EXPECT_EQ(pool.kept(), 0u);
  EXPECT_EQ(pool.kept_bytes(), 0u);
  pool.Give(WithBuffer(pool, SubRequestPool::kMaxBufferBytes / 2));
  EXPECT_EQ(pool.kept(), 1u);
}

// A burst of big pipelined requests: the pool keeps buffers up to its byte budget and frees the
// rest, and the count it keeps matches what it says.
TEST(SubRequestPoolTest, TheKeptBuffersStayWithinTheByteBudget) {
  SubRequestPool pool;
  constexpr size_t kBytes = 60 * 1024;
  std::vector<SubRequest*> burst;
  for (int i = 0; i < 1000; ++i) burst.push_back(WithBuffer(pool, kBytes));
  for (SubRequest* request : burst) pool.Give(request);
  EXPECT_LE(pool.kept_bytes(), SubRequestPool::kMaxKeptBytes);
  EXPECT_GT(pool.kept_bytes(), SubRequestPool::kMaxKeptBytes - 2 * kBytes);
  EXPECT_LT(pool.kept(), burst.size());
  const size_t kept = pool.kept();
  for (size_t i = 0; i < kept; ++i) {
    SubRequest* request = pool.Take();
    EXPECT_GE(request->request.capacity(), kBytes);
    delete request;
  }
  EXPECT_EQ(pool.kept_bytes(), 0u);
}

TEST(SubRequestPoolTest, KeepsAtMostMaxKeptRequests) {
  SubRequestPool pool;
  std::vector<SubRequest*> many;
  for (size_t i = 0; i < SubRequestPool::kMaxKept + 10; ++i) many.push_back(pool.Take());
  for (SubRequest* request : many) pool.Give(request);
  EXPECT_EQ(pool.kept(), SubRequestPool::kMaxKept);
}

}  // namespace
}  // namespace shardctl::proxy
