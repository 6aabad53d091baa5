// common/repl_colocate.h: which keys of a cross-slot command move to stand-ins in the home slot,
// the command that runs there, and which stand-ins are copied back.
//
// Slots of the keys used here (as in repl_plan_test): a 15495, b 3300, dst 9394, x 16287.
#include "common/repl_colocate.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/slots.h"

namespace shardctl::common {
namespace {

constexpr int kSlotA = 15495;
constexpr int kSlotB = 3300;
constexpr int kSlotDst = 9394;

std::string Tmp(int slot, size_t n) { return ColocateTemporary(slot, n); }

ColocatedKey Moved(std::string key, int home, size_t n, bool written) {
  return {.key = std::move(key), .temporary = Tmp(home, n), .written = written};
}

struct ColocateCase {
  std::vector<std::string> command;
  Colocation expected;
};

TEST(ReplColocateTest, TemporaryKeysHashToTheHomeSlot) {
  EXPECT_EQ(Tmp(kSlotB, 0), "shardctl:import:tmp:{" + std::string(TagForSlot(kSlotB)) + "}:0");
  for (int slot = 0; slot < kSlotCount; ++slot) {
    ASSERT_EQ(KeySlot(Tmp(slot, static_cast<size_t>(slot % 3))), slot) << slot;
  }
}

TEST(ReplColocateTest, KeysOutsideTheDestinationsSlotMoveToStandIns) {
  const ColocateCase cases[] = {
      // The destination is home; a moved source that the command deletes or takes from is
      // copied back.
      {{"RENAME", "a", "b"},
       {.home_slot = kSlotB,
        .command = {"RENAME", Tmp(kSlotB, 0), "b"},
        .moved = {Moved("a", kSlotB, 0, true)}}},
      {{"smove", "a", "b", "m"},
       {.home_slot = kSlotB,
        .command = {"smove", Tmp(kSlotB, 0), "b", "m"},
        .moved = {Moved("a", kSlotB, 0, true)}}},
      {{"LMOVE", "a", "b", "LEFT", "RIGHT"},
       {.home_slot = kSlotB,
        .command = {"LMOVE", Tmp(kSlotB, 0), "b", "LEFT", "RIGHT"},
        .moved = {Moved("a", kSlotB, 0, true)}}},
      // COPY only reads its source.
      {{"COPY", "a", "b", "REPLACE"},
       {.home_slot = kSlotB,
        .command = {"COPY", Tmp(kSlotB, 0), "b", "REPLACE"},
        .moved = {Moved("a", kSlotB, 0, false)}}},
      // A key named twice has one stand-in; a key already in the home slot stays.
      {{"SUNIONSTORE", "dst", "a", "b", "{dst}x", "a"},
       {.home_slot = kSlotDst,
        .command = {"SUNIONSTORE", "dst", Tmp(kSlotDst, 0), Tmp(kSlotDst, 1), "{dst}x",
                    Tmp(kSlotDst, 0)},
        .moved = {Moved("a", kSlotDst, 0, false), Moved("b", kSlotDst, 1, false)}}},
      // Only keys are replaced: WEIGHTS and a value equal to a key's name are not.
      {{"ZUNIONSTORE", "dst", "2", "a", "b", "WEIGHTS", "2", "a"},
       {.home_slot = kSlotDst,
        .command = {"ZUNIONSTORE", "dst", "2", Tmp(kSlotDst, 0), Tmp(kSlotDst, 1), "WEIGHTS", "2",
                    "a"},
        .moved = {Moved("a", kSlotDst, 0, false), Moved("b", kSlotDst, 1, false)}}},
      {{"BITOP", "AND", "dst", "a"},
       {.home_slot = kSlotDst,
        .command = {"BITOP", "AND", "dst", Tmp(kSlotDst, 0)},
        .moved = {Moved("a", kSlotDst, 0, false)}}},
      {{"PFMERGE", "dst", "a"},
       {.home_slot = kSlotDst,
        .command = {"PFMERGE", "dst", Tmp(kSlotDst, 0)},
        .moved = {Moved("a", kSlotDst, 0, false)}}},
      // STORE comes last: the last store key is the one written.
      {{"SORT", "a", "GET", "#", "STORE", "dst"},
       {.home_slot = kSlotDst,
        .command = {"SORT", Tmp(kSlotDst, 0), "GET", "#", "STORE", "dst"},
        .moved = {Moved("a", kSlotDst, 0, false)}}},
      {{"GEORADIUS", "a", "15", "37", "200", "km", "STORE", "x", "STOREDIST", "dst"},
       {.home_slot = kSlotDst,
        .command = {"GEORADIUS", Tmp(kSlotDst, 0), "15", "37", "200", "km", "STORE",
                    Tmp(kSlotDst, 1), "STOREDIST", "dst"},
        .moved = {Moved("a", kSlotDst, 0, false), Moved("x", kSlotDst, 1, false)}}},
  };
  for (const ColocateCase& c : cases) {
    Result<Colocation> colocation = PlanColocation(c.command);
    ASSERT_TRUE(colocation.ok()) << c.command[0] << ": " << colocation.error().message();
    EXPECT_EQ(*colocation, c.expected) << c.command[0];
    for (const std::string& arg : colocation->command) {
      if (arg.starts_with(kColocatePrefix)) {
        EXPECT_EQ(KeySlot(arg), c.expected.home_slot);
      }
    }
  }
}

TEST(ReplColocateTest, WhatCannotRunOnOnePrimaryIsAnErrorNamingTheCommand) {
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"EVALSHA", "abc", "2", "a", "b"},
       "EVALSHA: keys in different slots (a, b), and a script may touch keys it does not "
       "declare; give such keys one hash tag on the source"},
      {{"ZMPOP", "2", "a", "b", "MIN"},
       "ZMPOP: keys in different slots (a, b), and Redis 7+ and Valkey replicate it in other "
       "forms; give such keys one hash tag on the source"},
      {{"SORT", "a", "LIMIT", "0", "5", "GET", "obj_*->f", "STORE", "dst"},
       "SORT: keys in different slots (a, dst), and its BY/GET pattern names keys the cluster "
       "holds elsewhere; give such keys one hash tag on the source"},
      {{"LMPOP", "2", std::string(70, 'k') + "\x01", "b\x01", "LEFT"},
       "LMPOP: keys in different slots (" + std::string(64, 'k') +
           "..., b\\x01), and Redis 7+ and Valkey replicate it in other forms; give such keys "
           "one hash tag on the source"},
      {{"RENAME", "a"}, "RENAME: wrong number of arguments (1) for its keys"},
      {{"GET", "a"}, "co-location: a command shardctl does not know the keys of"},
  };
  for (const auto& [command, message] : cases) {
    Result<Colocation> colocation = PlanColocation(command);
    ASSERT_FALSE(colocation.ok()) << command[0];
    EXPECT_EQ(colocation.error().message(), message);
  }
}

}  // namespace
}  // namespace shardctl::common
