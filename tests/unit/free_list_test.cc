#include "common/free_list.h"

#include <gtest/gtest.h>

#include <string>

namespace shardctl::common {
namespace {

TEST(FreeListTest, AKeptObjectIsTheNextOneTaken) {
  FreeList<std::string> list;
  std::string* first = list.Take();
  first->assign(100, 'x');  // a buffer worth keeping
  first->clear();
  list.Keep(first);
  EXPECT_EQ(list.size(), 1u);
  std::string* again = list.Take();
  EXPECT_EQ(again, first);
  EXPECT_GE(again->capacity(), 100u);
  EXPECT_EQ(list.size(), 0u);
  std::string* fresh = list.Take();  // none kept: a new one
  EXPECT_NE(fresh, first);
  list.Keep(again);
  list.Keep(fresh);  // freed with the list
}

#if defined(__SANITIZE_ADDRESS__)
// The reuse must not hide a pointer kept past its object's return: ASan still reports it.
TEST(FreeListDeathTest, TouchingAnObjectGivenBackIsReported) {
  EXPECT_DEATH(
      {
        FreeList<std::string> list;
        std::string* object = list.Take();
        list.Keep(object);
        object->assign("late");
      },
      "use-after-poison");
}
#endif

}  // namespace
}  // namespace shardctl::common
