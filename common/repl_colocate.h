// How a replicated command whose keys span slots (RENAME a b, SMOVE, LMOVE, COPY, *STORE,
// PFMERGE, BITOP, ...) still runs on a cluster: on one primary, with stand-ins for the keys that
// live elsewhere. Pure: the applier (launcher/cluster/repl_apply.h) does the I/O.
//
//   home slot: the destination's (RENAME a b: b's), so the key the command writes stays in place
//   each other key ──DUMP+PEXPIRETIME, RESTORE ABSTTL──▶ a temporary key in the home slot
//   the command, the temporaries' names in place of the keys ──▶ run on the home slot's primary
//   each temporary it may have written ──DUMP+PEXPIRETIME, RESTORE (or DEL)──▶ its original key
//   then the temporaries are deleted
//
// Only the commands a primary really replicates across slots are co-located. Redis 7+ and Valkey
// rewrite BLMOVE, BRPOPLPUSH, LMPOP and ZMPOP into one-key forms and scripts into their effects,
// and a PFCOUNT of several keys writes nothing, so their verbatim cross-slot forms would come from
// a primary shardctl does not support; EVAL may touch keys it does not declare, and SORT's BY/GET
// patterns name keys of their own. Those stay problems: the cluster cannot follow the source past
// them, and the user is told so.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace shardctl::common {

// The prefix of every temporary key; a live import's leftovers (after a crash) are found by it.
inline constexpr std::string_view kColocatePrefix = "shardctl:import:tmp:";

// A key that is not in the home slot, and its stand-in there.
struct ColocatedKey {
  std::string key;
  std::string temporary;  // kColocatePrefix + "{tag}:" + n, in the home slot
  // The command may change or delete it: the temporary is copied back to the key afterwards.
  // A key only read (COPY's source, a *STORE's inputs) is not.
  bool written = false;
  friend bool operator==(const ColocatedKey&, const ColocatedKey&) = default;
};

struct Colocation {
  int home_slot = 0;
  std::vector<std::string> command;  // with the temporaries' names at those keys' positions
  std::vector<ColocatedKey> moved;   // distinct, in the order the command names them
  friend bool operator==(const Colocation&, const Colocation&) = default;
};

// The co-location of `command` (a command of repl_commands.h's table; args[0] its name). The
// error, one line starting with the command's name, says why it cannot be co-located and what
// to do on the source instead.
Result<Colocation> PlanColocation(const std::vector<std::string>& command);

// The `n`th temporary key of `home_slot`: KeySlot() of it is `home_slot`.
std::string ColocateTemporary(int home_slot, size_t n);

}  // namespace shardctl::common
