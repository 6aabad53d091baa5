#!/usr/bin/env python3
"""Data for scripts/bench-import: fills a standalone server, and proves a cluster holds the same.

    import_data.py fill HOST:PORT [--keys 1000000] [--seed 1] [--kind mixed|string]
                        [--value-size 1024] [--ttl-share 0.2]
    import_data.py compare SRC_HOST:PORT --cluster HOST:PORT [--sample K]
                           [--ttl-tolerance-ms 2000]

fill writes KEYS keys, deterministic from SEED, over one pipelined connection of raw RESP.
--kind mixed: about half strings of VALUE-SIZE bytes, the rest hashes (10 fields), lists
(10 items), sets (10 members, half of them integers), sorted sets (10 members) and streams
(5 entries), some keys with a hash tag; --kind string: strings only (the redis-cli baseline's
data). A TTL-SHARE of the keys get a TTL between 1 and 24 h, in ms. Fails unless the server's
DBSIZE is then KEYS.

compare SCANs the source and, for each key, reads DUMP and PTTL on the source and on the cluster
primary that owns its slot (slot map from CLUSTER SLOTS, CRC16 with hash tags), pipelined in
batches. A key is equal when both payloads are the same bytes, or, for a set or hash that Redis
keeps as a hash table (its DUMP order follows the server's random hash seed), the same members;
and both PTTLs are -1 or within the tolerance. The cluster's key count (DBSIZE of every primary)
must equal the source's. --sample K stops after K keys (the counts are still checked).

Both print one summary line. Exit 0: done and equal; 1: a mismatch or a server error (the first
keys that differ are named); 2: bad arguments.
"""
import argparse
import binascii
import random
import socket
import sys
import time

PREFIX = "import_data"
SLOTS = 16384
MIN_TTL_MS = 3_600_000
MAX_TTL_MS = 86_400_000
COLLECTION_SIZE = 10
STREAM_ENTRIES = 5
HASH_TAGGED_SHARE = 0.05
COMMANDS_PER_BATCH = 4000
KEYS_PER_SCAN = 1000
EXAMPLES_SHOWN = 5


class ReplyError(str):
    """An error reply (-ERR ..., -MOVED ...), kept as a value so a pipeline reads on."""


class Incomplete(Exception):
    """The buffer ends inside a reply."""


def fail(message, code=1):
    print(f"{PREFIX}: {message}", file=sys.stderr)
    sys.exit(code)


def encode(*args):
    """One command as a RESP array of bulk strings; ints are written in decimal."""
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        if isinstance(arg, int):
            arg = b"%d" % arg
        parts.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    return b"".join(parts)


def parse(buf, pos):
    """The RESP2 reply starting at buf[pos] and the position after it; Incomplete if cut."""
    end = buf.find(b"\r\n", pos)
    if end < 0:
        raise Incomplete
    kind = buf[pos]
    line = buf[pos + 1:end]
    if kind == 0x24:  # $ bulk string
        size = int(line)
        if size < 0:
            return None, end + 2
        start = end + 2
        if len(buf) < start + size + 2:
            raise Incomplete
        return bytes(buf[start:start + size]), start + size + 2
    if kind == 0x3A:  # : integer
        return int(line), end + 2
    if kind == 0x2B:  # + status
        return bytes(line), end + 2
    if kind == 0x2D:  # - error
        return ReplyError(line.decode(errors="replace")), end + 2
    if kind == 0x2A:  # * array
        count = int(line)
        items, pos = [], end + 2
        for _ in range(max(count, 0)):
            item, pos = parse(buf, pos)
            items.append(item)
        return (items if count >= 0 else None), pos
    raise ValueError(f"unexpected RESP type byte {kind!r}")


class Connection:
    """A plain TCP connection to one server; commands are sent in bulk and replies read back
    in order."""

    def __init__(self, address):
        self.address = address
        host, port = split_address(address)
        try:
            self.sock = socket.create_connection((host, port), timeout=60)
        except OSError as error:
            fail(f"{address}: cannot connect: {error} (is the server running?)")
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.pos = 0

    def send(self, payload):
        self.sock.sendall(payload)

    def read(self, count):
        replies = []
        while len(replies) < count:
            try:
                reply, self.pos = parse(self.buf, self.pos)
            except Incomplete:
                self._receive()
                continue
            replies.append(reply)
        return replies

    def call(self, *args):
        self.send(encode(*args))
        return self.read(1)[0]

    def _receive(self):
        del self.buf[:self.pos]
        self.pos = 0
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            fail(f"{self.address}: connection closed by the server")
        self.buf += chunk


def split_address(address):
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        fail(f"{address}: not HOST:PORT", 2)
    return host, int(port)


def key_slot(key):
    """Redis Cluster's slot of a key: CRC16 (XMODEM, which binascii.crc_hqx computes with
    initial value 0) of the hash tag when there is a non-empty {...}, else of the whole key."""
    open_at = key.find(b"{")
    if open_at >= 0:
        close_at = key.find(b"}", open_at + 1)
        if close_at > open_at + 1:
            key = key[open_at + 1:close_at]
    return binascii.crc_hqx(key, 0) % SLOTS


# The check values of the Redis Cluster specification.
assert key_slot(b"123456789") == 0x31C3
assert key_slot(b"{user1000}.following") == key_slot(b"user1000")


# ---- fill ------------------------------------------------------------------------------------

class Filler:
    """The commands that write key number i, drawn from one seeded generator."""

    def __init__(self, seed, kind, value_size, ttl_share):
        self.rng = random.Random(seed)
        self.pool = self.rng.randbytes(1 << 20)  # string values are slices of it
        self.kind = kind
        self.value_size = value_size
        self.ttl_share = ttl_share
        self.types = {}

    def value(self, size):
        start = self.rng.randrange(len(self.pool) - size)
        return self.pool[start:start + size]

    def key_name(self, type_name, i):
        if self.rng.random() < HASH_TAGGED_SHARE:
            return b"{tag%d}:%s:%d" % (i % 997, type_name, i)
        return b"%s:%d" % (type_name, i)

    def commands(self, i):
        rng = self.rng
        type_name = b"string"
        if self.kind == "mixed" and rng.random() >= 0.5:
            type_name = rng.choice((b"hash", b"list", b"set", b"zset", b"stream"))
        self.types[type_name] = self.types.get(type_name, 0) + 1
        key = self.key_name(type_name, i) if self.kind == "mixed" else b"key:%d" % i
        ttl = rng.randrange(MIN_TTL_MS, MAX_TTL_MS) if rng.random() < self.ttl_share else 0
        if type_name == b"string":
            expiry = (b"PX", ttl) if ttl else ()
            return [encode(b"SET", key, self.value(self.value_size), *expiry)]
        out = self.collection(type_name, key, i)
        if ttl:
            out.append(encode(b"PEXPIRE", key, ttl))
        return out

    def small_value(self):
        return self.value(self.rng.randrange(4, 64))

    def collection(self, type_name, key, i):
        rng, n = self.rng, COLLECTION_SIZE
        if type_name == b"hash":
            pairs = [(b"field%d" % f, self.small_value()) for f in range(n)]
            return [encode(b"HSET", key, *(part for pair in pairs for part in pair))]
        if type_name == b"list":
            return [encode(b"RPUSH", key, *(self.small_value() for _ in range(n)))]
        if type_name == b"set":
            # Integer members make an intset; others a listpack or hash table, by engine.
            form = b"%d" if rng.random() < 0.5 else b"member:%d"
            return [encode(b"SADD", key, *(form % rng.randrange(10 ** 9) for _ in range(n)))]
        if type_name == b"zset":
            pairs = [(b"%.3f" % (rng.random() * 1000), b"m%d" % m) for m in range(n)]
            return [encode(b"ZADD", key, *(part for pair in pairs for part in pair))]
        first_ms = 1_700_000_000_000 + i * 10
        return [encode(b"XADD", key, b"%d-%d" % (first_ms + e, e), b"reading", self.value(16))
                for e in range(STREAM_ENTRIES)]


def check_replies(replies, address):
    for reply in replies:
        if isinstance(reply, ReplyError):
            fail(f"{address}: a write was refused: {reply}")


def fill(args):
    conn = Connection(args.address)
    filler = Filler(args.seed, args.kind, args.value_size, args.ttl_share)
    started = time.monotonic()
    batch, in_flight = [], 0
    for i in range(args.keys):
        batch += filler.commands(i)
        if len(batch) >= COMMANDS_PER_BATCH or i == args.keys - 1:
            # One batch travels while the previous one's replies are read.
            conn.send(b"".join(batch))
            check_replies(conn.read(in_flight), args.address)
            batch, in_flight = [], len(batch)
    check_replies(conn.read(in_flight), args.address)
    seconds = time.monotonic() - started
    stored = conn.call(b"DBSIZE")
    mix = ", ".join(f"{count} {name.decode()}" for name, count in sorted(filler.types.items()))
    print(f"fill: {args.keys} keys ({mix}) into {args.address} in {seconds:.1f} s "
          f"({args.keys / seconds:.0f} keys/s), DBSIZE {stored}")
    if stored != args.keys:
        fail(f"{args.address}: DBSIZE is {stored} after writing {args.keys} keys "
             "(was the server empty?)")


# ---- compare ---------------------------------------------------------------------------------

class Cluster:
    """Connections to every primary of a cluster and the owner of each slot."""

    def __init__(self, seed_address):
        seed = Connection(seed_address)
        ranges = seed.call(b"CLUSTER", b"SLOTS")
        if isinstance(ranges, ReplyError):
            fail(f"{seed_address}: CLUSTER SLOTS: {ranges} (is it a cluster node?)")
        self.nodes = {}
        self.owner = [None] * SLOTS
        for first, last, primary, *_ in ranges:
            address = f"{primary[0].decode()}:{primary[1]}"
            if address not in self.nodes:
                self.nodes[address] = Connection(address)
            for slot in range(first, last + 1):
                self.owner[slot] = address
        uncovered = self.owner.count(None)
        if uncovered:
            fail(f"{seed_address}: {uncovered} slots have no owner in CLUSTER SLOTS")
        self.primaries = self._all_primaries(seed)

    @staticmethod
    def _all_primaries(seed):
        """Every primary from CLUSTER NODES, slot owners or not, so no key goes uncounted."""
        listing = seed.call(b"CLUSTER", b"NODES").decode()
        primaries = []
        for line in listing.splitlines():
            fields = line.split()
            if len(fields) > 2 and "master" in fields[2].split(","):
                primaries.append(fields[1].split("@")[0])
        return primaries

    def key_count(self):
        total = 0
        for address in self.primaries:
            conn = self.nodes.get(address) or Connection(address)
            total += conn.call(b"DBSIZE")
        return total


class Tally:
    """What compare found; the first few differing keys are kept to name them."""

    def __init__(self):
        self.equal_bytes = self.equal_members = self.vanished = 0
        self.problems = 0
        self.examples = []

    def problem(self, key, what):
        self.problems += 1
        if len(self.examples) < EXAMPLES_SHOWN:
            self.examples.append(f"{key!r}: {what}")


def dump_and_ttl(conn, keys):
    """Sends DUMP key and PTTL key for every key (spelled out: this is the hot loop)."""
    conn.send(b"".join(b"*2\r\n$4\r\nDUMP\r\n$%d\r\n%s\r\n*2\r\n$4\r\nPTTL\r\n$%d\r\n%s\r\n"
                       % (len(k), k, len(k), k) for k in keys))


def read_pairs(conn, count):
    replies = conn.read(2 * count)
    return list(zip(replies[0::2], replies[1::2]))


def compare_batch(source, cluster, keys, tally, tolerance_ms):
    by_node = {}
    for key in keys:
        by_node.setdefault(cluster.owner[key_slot(key)], []).append(key)
    # Everything is sent before anything is read, so all servers work at once.
    dump_and_ttl(source, keys)
    for address, node_keys in by_node.items():
        dump_and_ttl(cluster.nodes[address], node_keys)
    theirs = {}
    for address, node_keys in by_node.items():
        theirs.update(zip(node_keys, read_pairs(cluster.nodes[address], len(node_keys))))
    recheck = []
    for key, (dump, ttl) in zip(keys, read_pairs(source, len(keys))):
        their_dump, their_ttl = theirs[key]
        if dump is None:
            tally.vanished += 1  # expired or deleted after SCAN named it
            continue
        if isinstance(dump, ReplyError):
            tally.problem(key, f"source: {dump}")
        elif isinstance(their_dump, ReplyError):
            tally.problem(key, f"cluster: {their_dump}")
        elif their_dump is None:
            tally.problem(key, "missing on the cluster")
        elif not ttl_close(ttl, their_ttl, tolerance_ms):
            tally.problem(key, f"PTTL {ttl} on the source, {their_ttl} on the cluster")
        elif their_dump == dump:
            tally.equal_bytes += 1
        else:
            recheck.append((key, dump))
    if recheck:
        compare_members(source, cluster, recheck, tally)


def ttl_close(ttl, their_ttl, tolerance_ms):
    if ttl < 0 or their_ttl < 0:
        return ttl == their_ttl
    return abs(ttl - their_ttl) <= tolerance_ms


# RDB object types whose DUMP lists members in hash-table order, which follows each server's
# random hash seed: such payloads can differ while the values are the same.
UNORDERED_DUMPS = {2: b"SMEMBERS", 4: b"HGETALL"}  # RDB_TYPE_SET, RDB_TYPE_HASH


def read_members(conn, reading, count):
    replies = conn.read(count)
    return [set(r) if cmd == b"SMEMBERS" and isinstance(r, list)
            else dict(zip(r[0::2], r[1::2])) if isinstance(r, list) else r
            for cmd, r in zip(reading, replies)]


def compare_members(source, cluster, recheck, tally):
    """Second look at keys whose payloads differ: equal when both are the same set or hash."""
    readable = []
    for key, dump in recheck:
        if dump[0] in UNORDERED_DUMPS:
            readable.append((key, UNORDERED_DUMPS[dump[0]]))
        else:
            tally.problem(key, f"DUMP payloads differ (RDB type {dump[0]})")
    by_node = {}
    for key, cmd in readable:
        by_node.setdefault(cluster.owner[key_slot(key)], []).append((key, cmd))
    source.send(b"".join(encode(cmd, key) for key, cmd in readable))
    for address, pairs in by_node.items():
        cluster.nodes[address].send(b"".join(encode(cmd, key) for key, cmd in pairs))
    theirs = {}
    for address, pairs in by_node.items():
        values = read_members(cluster.nodes[address], [cmd for _, cmd in pairs], len(pairs))
        theirs.update(zip((key for key, _ in pairs), values))
    mine = read_members(source, [cmd for _, cmd in readable], len(readable))
    for (key, cmd), value in zip(readable, mine):
        if value == theirs[key]:
            tally.equal_members += 1
        else:
            tally.problem(key, f"DUMP payloads differ and so do the {cmd.decode()} replies")


def scan_batches(source, sample):
    """The source's keys, a SCAN page at a time, each key once, at most SAMPLE in all."""
    seen, cursor, total = set(), b"0", 0
    while True:
        cursor, page = source.call(b"SCAN", cursor, b"COUNT", KEYS_PER_SCAN)
        fresh = [k for k in page if k not in seen]
        if sample:
            fresh = fresh[:sample - total]
        seen.update(fresh)
        total += len(fresh)
        if fresh:
            yield fresh
        if cursor == b"0" or (sample and total >= sample):
            return


def compare(args):
    source = Connection(args.address)
    cluster = Cluster(args.cluster)
    tally = Tally()
    started = time.monotonic()
    compared = 0
    for keys in scan_batches(source, args.sample):
        compare_batch(source, cluster, keys, tally, args.ttl_tolerance_ms)
        compared += len(keys)
    source_count, cluster_count = source.call(b"DBSIZE"), cluster.key_count()
    if source_count != cluster_count:
        tally.problem(b"*", f"the cluster holds {cluster_count} keys, the source {source_count}")
    seconds = time.monotonic() - started
    verdict = "equal" if tally.problems == 0 else f"{tally.problems} PROBLEM(S)"
    print(f"compare: {verdict}: {compared} keys of {args.address} against {len(cluster.nodes)} "
          f"primaries in {seconds:.1f} s ({tally.equal_bytes} same DUMP, {tally.equal_members} "
          f"same members, {tally.vanished} gone meanwhile); keys: source {source_count}, "
          f"cluster {cluster_count}")
    if tally.problems:
        fail("differences: " + "; ".join(tally.examples))


# ---- command line ----------------------------------------------------------------------------

def share(text):
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError("must be between 0 and 1")
    return value


def positive(text):
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be a positive integer")
    return value


def arguments():
    parser = argparse.ArgumentParser(prog="import_data.py", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    fill_parser = commands.add_parser("fill", help="fill a standalone server")
    fill_parser.add_argument("address", metavar="HOST:PORT")
    fill_parser.add_argument("--keys", type=positive, default=1_000_000)
    fill_parser.add_argument("--seed", type=int, default=1)
    fill_parser.add_argument("--kind", choices=("mixed", "string"), default="mixed")
    fill_parser.add_argument("--value-size", type=positive, default=1024)
    fill_parser.add_argument("--ttl-share", type=share, default=0.2)
    compare_parser = commands.add_parser("compare", help="compare a source with a cluster")
    compare_parser.add_argument("address", metavar="SRC_HOST:PORT")
    compare_parser.add_argument("--cluster", metavar="HOST:PORT", required=True)
    compare_parser.add_argument("--sample", type=positive, default=0)
    compare_parser.add_argument("--ttl-tolerance-ms", type=int, default=2000)
    args = parser.parse_args()
    if args.command == "fill" and args.value_size >= 1 << 20:
        parser.error("--value-size must be below 1 MiB")
    return args


def main():
    args = arguments()
    {"fill": fill, "compare": compare}[args.command](args)


if __name__ == "__main__":
    main()
