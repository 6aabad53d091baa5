// PlanReplicaHomes (launcher/cluster/replica_homes.h): where replicas go once a cluster spans
// hosts.
#include "launcher/cluster/replica_homes.h"

#include <gtest/gtest.h>

#include <map>

namespace shardctl::launcher {
namespace {

PlacedNode Primary(const std::string& id, const std::string& host) {
  return {.id = id, .host = host, .primary = true};
}
PlacedNode Replica(const std::string& id, const std::string& host, const std::string& follows) {
  return {.id = id, .host = host, .primary = false, .follows = follows};
}

// Whom each replica follows after applying `moves` to `nodes`.
std::map<std::string, std::string> After(const std::vector<PlacedNode>& nodes,
                                         const std::vector<ReplicaMove>& moves) {
  std::map<std::string, std::string> follows;
  for (const auto& node : nodes) {
    if (!node.primary) follows[node.id] = node.follows;
  }
  for (const auto& move : moves) follows[move.replica] = move.primary;
  return follows;
}

TEST(ReplicaHomesTest, TwoAlikeHostsSwapTheirReplicas) {
  // Host A formed alone (replicas beside their primaries); host B joins the same way.
  std::vector<PlacedNode> nodes = {
      Primary("a0", "A"), Primary("a1", "A"), Replica("a2", "A", "a0"), Replica("a3", "A", "a1"),
      Primary("b0", "B"), Primary("b1", "B"), Replica("b2", "B", ""),   Replica("b3", "B", "")};
  auto moves = PlanReplicaHomes(nodes);
  auto follows = After(nodes, moves);
  EXPECT_EQ(follows["a2"], "b0");
  EXPECT_EQ(follows["a3"], "b1");
  EXPECT_EQ(follows["b2"], "a0");
  EXPECT_EQ(follows["b3"], "a1");
  EXPECT_EQ(moves.size(), 4u);
}

TEST(ReplicaHomesTest, AReplicaStaysOnItsHostRatherThanLeaveItsPrimaryWithout) {
  // A: 2 primaries + 2 replicas; B joins with 1 primary + 1 replica. One replica each at most.
  std::vector<PlacedNode> nodes = {Primary("a0", "A"),       Primary("a1", "A"),
                                   Replica("a2", "A", "a0"), Replica("a3", "A", "a1"),
                                   Primary("b0", "B"),       Replica("b1", "B", "")};
  auto follows = After(nodes, PlanReplicaHomes(nodes));
  EXPECT_EQ(follows["a2"], "b0") << "the first of A's replicas goes to B's primary";
  EXPECT_EQ(follows["a3"], "a1") << "B's primary has its share: this one stays with its own";
  EXPECT_EQ(follows["b1"], "a0") << "B's replica follows the A primary left without one";
}

TEST(ReplicaHomesTest, ReplicasAlreadyApartStayAndMovesAreOnlyChanges) {
  std::vector<PlacedNode> nodes = {Primary("a0", "A"), Primary("b0", "B"), Replica("a1", "A", "b0"),
                                   Replica("b1", "B", "a0")};
  EXPECT_TRUE(PlanReplicaHomes(nodes).empty());
}

TEST(ReplicaHomesTest, OneHostKeepsReplicasOnItWithTheFewestFirst) {
  std::vector<PlacedNode> nodes = {Primary("a0", "A"), Primary("a1", "A"), Replica("r0", "A", "a0"),
                                   Replica("r1", "A", "a1"), Replica("r2", "A", "")};
  auto moves = PlanReplicaHomes(nodes);
  // r0 and r1 stay (their own primary is tied for fewest); r2, following nobody, gets the first.
  EXPECT_EQ(moves, (std::vector<ReplicaMove>{{"r2", "a0"}}));
}

TEST(ReplicaHomesTest, ThreeHostsEveryPrimaryGetsAReplicaFromAnotherHost) {
  std::vector<PlacedNode> nodes;
  for (const std::string host : {"A", "B", "C"}) {
    nodes.push_back(Primary(host + "p", host));
    nodes.push_back(Replica(host + "r", host, host == "C" ? "" : host + "p"));
  }
  auto follows = After(nodes, PlanReplicaHomes(nodes));
  std::map<std::string, int> replicas_of;
  for (const auto& [replica, primary] : follows) {
    EXPECT_NE(replica.substr(0, 1), primary.substr(0, 1)) << replica << " follows " << primary;
    ++replicas_of[primary];
  }
  EXPECT_EQ(replicas_of, (std::map<std::string, int>{{"Ap", 1}, {"Bp", 1}, {"Cp", 1}}));
}

TEST(ReplicaHomesTest, AReplicaOfAGonePrimaryFindsANewOne) {
  std::vector<PlacedNode> nodes = {Primary("a0", "A"), Replica("b1", "B", "gone")};
  EXPECT_EQ(PlanReplicaHomes(nodes), (std::vector<ReplicaMove>{{"b1", "a0"}}));
  EXPECT_TRUE(PlanReplicaHomes({Replica("x", "A", "")}).empty()) << "no primary at all";
}

}  // namespace
}  // namespace shardctl::launcher
