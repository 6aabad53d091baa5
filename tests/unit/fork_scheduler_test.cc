// The host-wide fork limit policy (launcher/fork_scheduler.h): when a shard is due to fork
// (ForkDue) and which due shards fork now (ChooseForks). Pure: views, time and memory are passed
// in; no shard, socket or clock is involved.
#include "launcher/supervisor/fork_scheduler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "launcher/model/spec.h"

namespace shardctl::launcher {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr int64_t kNow = 1'700'000'000;  // a plausible unix time
constexpr uint64_t kPlenty = uint64_t{1} << 50;

Durability Profile(Persistence persistence, int fork_limit = 1,
                   milliseconds save_interval = seconds(300)) {
  Durability durability;
  durability.persistence = persistence;
  durability.fork_limit = fork_limit;
  durability.save_interval = save_interval;
  return durability;
}

// A reachable shard, not forking, with nothing to save.
PersistenceView Idle() {
  PersistenceView view;
  view.reachable = true;
  view.last_save_unix = kNow;
  view.used_memory = 100 * kMiB;
  return view;
}

// A reachable shard that every profile but none wants to fork: rdb changes long unsaved and an
// AOF that doubled past the minimum.
PersistenceView Due() {
  PersistenceView view = Idle();
  view.changes_since_save = 10;
  view.last_save_unix = kNow - 3600;
  view.aof_size = 2 * kMinAofRewriteSize;
  view.aof_base_size = kMinAofRewriteSize;
  return view;
}

// Views written one letter per shard:
//   d  due (changes long unsaved, AOF doubled)    -  idle (nothing to save)
//   F  forking right now                          x  unreachable (though it has changes)
//   R  idle but a save of everything was asked
std::vector<PersistenceView> Views(const std::string& letters) {
  std::vector<PersistenceView> views;
  for (char letter : letters) {
    PersistenceView view = letter == '-' || letter == 'R' ? Idle() : Due();
    view.forking = letter == 'F';
    view.reachable = letter != 'x';
    view.save_requested = letter == 'R';
    views.push_back(view);
  }
  return views;
}

std::vector<int> Shards(const std::vector<ForkChoice>& choices) {
  std::vector<int> shards;
  for (const auto& choice : choices) shards.push_back(choice.shard);
  return shards;
}

// ---------------------------------------------------------------------------------------------
// ForkDue

struct DueCase {
  const char* name;
  Persistence persistence;
  PersistenceView view;
  bool due;
};

PersistenceView With(PersistenceView view, void (*change)(PersistenceView&)) {
  change(view);
  return view;
}

class ForkDueTest : public testing::TestWithParam<DueCase> {};

TEST_P(ForkDueTest, Decides) {
  const DueCase& c = GetParam();
  EXPECT_EQ(ForkDue(c.view, Profile(c.persistence), kNow), c.due);
}

INSTANTIATE_TEST_SUITE_P(
    Profiles, ForkDueTest,
    testing::Values(
        // none: a cache never writes files, not even when asked to save everything.
        DueCase{"none_with_changes", Persistence::kNone, Due(), false},
        DueCase{"none_idle", Persistence::kNone, Idle(), false},
        DueCase{"none_save_requested", Persistence::kNone,
                With(Due(), [](PersistenceView& v) { v.save_requested = true; }), false},
        // rdb: changes and the interval (300 s) passed.
        DueCase{"rdb_changes_and_interval_passed", Persistence::kRdb, Due(), true},
        DueCase{"rdb_exactly_the_interval", Persistence::kRdb,
                With(Due(), [](PersistenceView& v) { v.last_save_unix = kNow - 300; }), true},
        DueCase{"rdb_one_second_early", Persistence::kRdb,
                With(Due(), [](PersistenceView& v) { v.last_save_unix = kNow - 299; }), false},
        DueCase{"rdb_just_saved", Persistence::kRdb,
                With(Due(), [](PersistenceView& v) { v.last_save_unix = kNow; }), false},
        DueCase{"rdb_never_saved_with_changes", Persistence::kRdb,
                With(Due(), [](PersistenceView& v) { v.last_save_unix = 0; }), true},
        DueCase{"rdb_one_change", Persistence::kRdb,
                With(Due(), [](PersistenceView& v) { v.changes_since_save = 1; }), true},
        DueCase{"rdb_no_changes_long_ago", Persistence::kRdb,
                With(Due(), [](PersistenceView& v) { v.changes_since_save = 0; }), false},
        DueCase{"rdb_ignores_aof_size", Persistence::kRdb,
                With(Idle(), [](PersistenceView& v) { v.aof_size = 10 * kGiB; }), false},
        DueCase{"rdb_save_requested_without_changes", Persistence::kRdb,
                With(Idle(), [](PersistenceView& v) { v.save_requested = true; }), true},
        // aof: at least 64 MiB and at least twice the size after the last rewrite.
        DueCase{"aof_doubled_past_minimum", Persistence::kAof, Due(), true},
        DueCase{"aof_exactly_minimum_and_double", Persistence::kAof,
                With(Idle(),
                     [](PersistenceView& v) {
                       v.aof_size = kMinAofRewriteSize;
                       v.aof_base_size = kMinAofRewriteSize / 2;
                     }),
                true},
        DueCase{"aof_one_byte_below_minimum", Persistence::kAof,
                With(Idle(),
                     [](PersistenceView& v) {
                       v.aof_size = kMinAofRewriteSize - 1;
                       v.aof_base_size = 0;
                     }),
                false},
        DueCase{"aof_big_but_not_doubled", Persistence::kAof,
                With(Idle(),
                     [](PersistenceView& v) {
                       v.aof_size = 2 * kMinAofRewriteSize - 1;
                       v.aof_base_size = kMinAofRewriteSize;
                     }),
                false},
        DueCase{"aof_no_base_yet", Persistence::kAof,
                With(Idle(),
                     [](PersistenceView& v) {
                       v.aof_size = 200 * kMiB;
                       v.aof_base_size = 0;
                     }),
                true},
        DueCase{"aof_ignores_rdb_changes", Persistence::kAof,
                With(Idle(),
                     [](PersistenceView& v) {
                       v.changes_since_save = 1000;
                       v.last_save_unix = 0;
                     }),
                false},
        DueCase{"aof_save_requested_small_file", Persistence::kAof,
                With(Idle(), [](PersistenceView& v) { v.save_requested = true; }), true},
        // A shard that cannot be asked, or already forks, is never due.
        DueCase{"rdb_unreachable", Persistence::kRdb,
                With(Due(), [](PersistenceView& v) { v.reachable = false; }), false},
        DueCase{"rdb_unreachable_save_requested", Persistence::kRdb,
                With(Due(),
                     [](PersistenceView& v) {
                       v.reachable = false;
                       v.save_requested = true;
                     }),
                false},
        DueCase{"rdb_forking", Persistence::kRdb,
                With(Due(), [](PersistenceView& v) { v.forking = true; }), false},
        DueCase{"aof_forking_save_requested", Persistence::kAof,
                With(Due(),
                     [](PersistenceView& v) {
                       v.forking = true;
                       v.save_requested = true;
                     }),
                false},
        DueCase{"aof_unreachable", Persistence::kAof,
                With(Due(), [](PersistenceView& v) { v.reachable = false; }), false}),
    [](const testing::TestParamInfo<DueCase>& case_info) { return case_info.param.name; });

TEST(ForkDueTest, RdbFollowsTheSaveInterval) {
  PersistenceView view = Due();
  view.last_save_unix = kNow - 5;
  EXPECT_TRUE(ForkDue(view, Profile(Persistence::kRdb, 1, seconds(5)), kNow));
  EXPECT_FALSE(ForkDue(view, Profile(Persistence::kRdb, 1, seconds(6)), kNow));
  EXPECT_TRUE(ForkDue(view, Profile(Persistence::kRdb, 1, seconds(1)), kNow));
  view.last_save_unix = kNow - 3600;
  EXPECT_TRUE(ForkDue(view, Profile(Persistence::kRdb, 1, seconds(3600)), kNow));
  EXPECT_FALSE(ForkDue(view, Profile(Persistence::kRdb, 1, seconds(3601)), kNow));
}

// ---------------------------------------------------------------------------------------------
// ChooseForks: the limit.

struct LimitCase {
  const char* name;
  int fork_limit;
  const char* views;  // letters as in Views()
  std::vector<int> chosen;
};

class ChooseForksLimitTest : public testing::TestWithParam<LimitCase> {};

TEST_P(ChooseForksLimitTest, CountsForksAlreadyRunning) {
  const LimitCase& c = GetParam();
  size_t cursor = 0;
  auto chosen =
      ChooseForks(Views(c.views), Profile(Persistence::kRdb, c.fork_limit), kNow, kPlenty, cursor);
  EXPECT_EQ(Shards(chosen), c.chosen);
  int forking = 0;
  for (char letter : std::string(c.views)) forking += letter == 'F';
  EXPECT_LE(forking + static_cast<int>(chosen.size()), std::max(c.fork_limit, forking));
}

INSTANTIATE_TEST_SUITE_P(
    Limits, ChooseForksLimitTest,
    testing::Values(LimitCase{"limit1_none_running", 1, "dddd", {0}},
                    LimitCase{"limit1_one_running", 1, "Fddd", {}},
                    LimitCase{"limit1_one_running_elsewhere", 1, "dddF", {}},
                    LimitCase{"limit2_none_running", 2, "dddd", {0, 1}},
                    LimitCase{"limit2_one_running", 2, "dFdd", {0}},
                    LimitCase{"limit2_two_running", 2, "FddF", {}},
                    LimitCase{"limit2_more_running_than_allowed", 2, "FFFd", {}},
                    LimitCase{"limit3_only_two_due", 3, "-d-d", {1, 3}},
                    LimitCase{"limit3_skips_unreachable", 3, "xdxd", {1, 3}},
                    LimitCase{"limit4_all_due", 4, "dddd", {0, 1, 2, 3}},
                    LimitCase{"limit10_more_than_shards", 10, "ddd", {0, 1, 2}},
                    LimitCase{"nothing_due", 2, "----", {}},
                    LimitCase{"save_requested_counts_as_due", 1, "--R-", {2}}),
    [](const testing::TestParamInfo<LimitCase>& case_info) { return case_info.param.name; });

TEST(ChooseForksTest, NoShardsNoForks) {
  size_t cursor = 3;
  EXPECT_TRUE(ChooseForks({}, Profile(Persistence::kRdb, 4), kNow, kPlenty, cursor).empty());
  EXPECT_EQ(cursor, 3u);
}

TEST(ChooseForksTest, NonePersistenceNeverForksEvenWhenAskedToSave) {
  size_t cursor = 0;
  auto views = Views("RRRR");
  for (auto& view : views) view.changes_since_save = 100;
  EXPECT_TRUE(ChooseForks(views, Profile(Persistence::kNone, 4), kNow, kPlenty, cursor).empty());
  EXPECT_EQ(cursor, 0u);
}

TEST(ChooseForksTest, AofPicksRewriteTheAofAndRdbPicksSnapshot) {
  size_t cursor = 0;
  auto aof = ChooseForks(Views("dd"), Profile(Persistence::kAof, 2), kNow, kPlenty, cursor);
  EXPECT_EQ(aof, (std::vector<ForkChoice>{{0, true}, {1, true}}));
  cursor = 0;
  auto rdb = ChooseForks(Views("dd"), Profile(Persistence::kRdb, 2), kNow, kPlenty, cursor);
  EXPECT_EQ(rdb, (std::vector<ForkChoice>{{0, false}, {1, false}}));
  cursor = 0;
  auto requested = ChooseForks(Views("R"), Profile(Persistence::kAof), kNow, kPlenty, cursor);
  EXPECT_EQ(requested, (std::vector<ForkChoice>{{0, true}}));
}

// ---------------------------------------------------------------------------------------------
// ChooseForks: round-robin.

TEST(ChooseForksRoundRobinTest, LimitOneRotatesThroughEveryShard) {
  size_t cursor = 0;
  std::vector<int> order;
  for (int round = 0; round < 10; ++round) {
    auto chosen = ChooseForks(Views("ddddd"), Profile(Persistence::kRdb, 1), kNow, kPlenty, cursor);
    ASSERT_EQ(chosen.size(), 1u) << "round " << round;
    order.push_back(chosen[0].shard);
  }
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 0, 1, 2, 3, 4}));
}

TEST(ChooseForksRoundRobinTest, LimitTwoRotatesInPairsAcrossTheWrap) {
  size_t cursor = 0;
  std::vector<std::vector<int>> rounds;
  for (int round = 0; round < 5; ++round) {
    rounds.push_back(
        Shards(ChooseForks(Views("ddddd"), Profile(Persistence::kRdb, 2), kNow, kPlenty, cursor)));
  }
  EXPECT_EQ(rounds, (std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4, 0}, {1, 2}, {3, 4}}));
}

TEST(ChooseForksRoundRobinTest, CursorPastTheEndWraps) {
  size_t cursor = 12;  // 12 % 5 == 2
  auto chosen = ChooseForks(Views("ddddd"), Profile(Persistence::kRdb, 1), kNow, kPlenty, cursor);
  EXPECT_EQ(Shards(chosen), std::vector<int>{2});
  EXPECT_EQ(cursor, 3u);
}

TEST(ChooseForksRoundRobinTest, NoShardStarvesOverNRounds) {
  for (int shards : {1, 2, 3, 7, 16, 40}) {
    for (int limit : {1, 2, 3}) {
      SCOPED_TRACE(std::to_string(shards) + " shards, fork-limit " + std::to_string(limit));
      size_t cursor = 0;
      std::map<int, int> picks;
      std::string all_due(shards, 'd');
      for (int round = 0; round < shards; ++round) {
        for (int shard : Shards(ChooseForks(Views(all_due), Profile(Persistence::kRdb, limit), kNow,
                                            kPlenty, cursor))) {
          picks[shard]++;
        }
      }
      // N rounds of `limit` picks each spread evenly: every shard min(limit, N) times.
      ASSERT_EQ(picks.size(), static_cast<size_t>(shards));
      for (const auto& [shard, count] : picks) {
        EXPECT_EQ(count, std::min(limit, shards)) << "shard " << shard;
      }
    }
  }
}

// A restart-backoff-style sequence: one tick per row, the cursor carried from row to row, the
// views as the shards would report them after the previous picks started, ran and finished.
struct Tick {
  const char* views;  // letters as in Views()
  std::vector<int> chosen;
  size_t cursor_after;
};

void RunSequence(int fork_limit, const std::vector<Tick>& ticks) {
  size_t cursor = 0;
  for (size_t t = 0; t < ticks.size(); ++t) {
    SCOPED_TRACE("tick " + std::to_string(t) + " \"" + ticks[t].views + "\"");
    auto chosen = ChooseForks(Views(ticks[t].views), Profile(Persistence::kRdb, fork_limit), kNow,
                              kPlenty, cursor);
    EXPECT_EQ(Shards(chosen), ticks[t].chosen);
    EXPECT_EQ(cursor, ticks[t].cursor_after);
  }
}

TEST(ChooseForksSequenceTest, LimitOneOverThreeShards) {
  RunSequence(1, {
                     {"ddd", {0}, 1},  // all due: start at the cursor
                     {"Fdd", {}, 1},   // shard 0 forks: the limit is reached
                     {"-dd", {1}, 2},  // shard 0 saved: next in line is 1
                     {"dFd", {}, 2},   // 0 is due again but 1 still forks
                     {"d-d", {2}, 3},  // 2 comes before 0: it waited longer
                     {"d-F", {}, 3},   //
                     {"dd-", {0}, 1},  // wraps to 0
                     {"-xd", {2}, 3},  // 1 unreachable: skipped, not waited for
                     {"dd-", {0}, 1},  // wraps
                     {"-d-", {1}, 2},  // only 1 due
                     {"---", {}, 2},   // nothing due: the cursor stays
                     {"R--", {0}, 1},  // a requested save counts as due
                 });
}

TEST(ChooseForksSequenceTest, LimitTwoOverFourShards) {
  RunSequence(2, {
                     {"dddd", {0, 1}, 2},  //
                     {"FFdd", {}, 2},      // two running: nothing more
                     {"F-dd", {2}, 3},     // one finished: one more
                     {"--Fd", {3}, 4},     //
                     {"dd--", {0, 1}, 2},  // wraps
                     {"ddFF", {}, 2},      //
                     {"dd-F", {0}, 1},     // 0 and 1 wait from the cursor (2): 0 comes first
                 });
}

// ---------------------------------------------------------------------------------------------
// ChooseForks: memory.

struct MemoryCase {
  const char* name;
  std::vector<uint64_t> used_gib;  // one due shard per entry
  uint64_t available_gib;
  int fork_limit;
  std::vector<int> chosen;
};

class ChooseForksMemoryTest : public testing::TestWithParam<MemoryCase> {};

TEST_P(ChooseForksMemoryTest, EachPickFitsWhatIsLeft) {
  const MemoryCase& c = GetParam();
  std::vector<PersistenceView> views;
  for (uint64_t used : c.used_gib) {
    views.push_back(Due());
    views.back().used_memory = used * kGiB;
  }
  size_t cursor = 0;
  auto chosen = ChooseForks(views, Profile(Persistence::kRdb, c.fork_limit), kNow,
                            c.available_gib * kGiB, cursor);
  EXPECT_EQ(Shards(chosen), c.chosen);
  uint64_t taken = 0;
  for (int shard : Shards(chosen)) taken += c.used_gib[shard];
  EXPECT_LE(taken, c.available_gib);
}

INSTANTIATE_TEST_SUITE_P(
    Budgets, ChooseForksMemoryTest,
    testing::Values(MemoryCase{"big_one_skipped_smaller_later_taken", {10, 2}, 4, 1, {1}},
                    MemoryCase{"budget_shrinks_by_each_pick", {2, 3, 1}, 4, 3, {0, 2}},
                    MemoryCase{"budget_exactly_used", {2, 2, 2}, 4, 3, {0, 1}},
                    MemoryCase{"equal_to_available_is_enough", {4}, 4, 1, {0}},
                    MemoryCase{"nothing_fits", {5, 6, 7}, 4, 3, {}},
                    MemoryCase{"no_memory_available", {1, 1}, 0, 2, {}},
                    MemoryCase{"limit_before_memory", {1, 1, 1}, 100, 2, {0, 1}}),
    [](const testing::TestParamInfo<MemoryCase>& case_info) { return case_info.param.name; });

TEST(ChooseForksMemoryTest, ASkippedShardGetsItsTurnOnceMemoryFrees) {
  std::vector<PersistenceView> views = {Due(), Due(), Due()};
  views[0].used_memory = 8 * kGiB;
  views[1].used_memory = 1 * kGiB;
  views[2].used_memory = 1 * kGiB;
  size_t cursor = 0;
  auto low = ChooseForks(views, Profile(Persistence::kRdb, 1), kNow, 2 * kGiB, cursor);
  EXPECT_EQ(Shards(low), std::vector<int>{1});
  views[1].changes_since_save = 0;  // shard 1 saved
  auto high = ChooseForks(views, Profile(Persistence::kRdb, 1), kNow, 16 * kGiB, cursor);
  EXPECT_EQ(Shards(high), std::vector<int>{2});  // the cursor moved past 1
  views[2].changes_since_save = 0;
  auto again = ChooseForks(views, Profile(Persistence::kRdb, 1), kNow, 16 * kGiB, cursor);
  EXPECT_EQ(Shards(again), std::vector<int>{0});
}

}  // namespace
}  // namespace shardctl::launcher
