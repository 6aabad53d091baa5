#!/usr/bin/env python3
"""redis-py scenarios against shardproxy, run by tests/integration/proxy_*_test.cc.

    $SHARDCTL_PYTHON proxy_clients.py --port P --protocol 2|3 SCENARIO

Exits 0 when every reply matched, 1 with a message naming the first mismatch, 2 on bad usage.
A missing redis module is a failure (exit 1), never a skip.
"""
import argparse
import os
import random
import sys
import time

try:
    import redis
    import redis.backoff
    import redis.retry
except ImportError as error:  # the C++ test reports this output
    print(f"proxy_clients.py: cannot import redis-py ({error}); run ensure_redis_py "
          "from scripts/lib/setup.sh", file=sys.stderr)
    sys.exit(1)


class Mismatch(Exception):
    pass


def expect(what, got, want):
    if got != want:
        raise Mismatch(f"{what}: got {got!r}, want {want!r}")


def error_text(error):
    """An error reply as "ResponseError: <the server's text>" (redis-py 8's repr leaves the text
    out)."""
    return f"{type(error).__name__}: {error}"


def client(args, **extra):
    if args.tls_ca:
        # TLS as a redis-py user turns it on: ssl=True and the CA; the certificate is checked
        # against it, the name is not (it is issued for 127.0.0.1, not a host name).
        extra.update(ssl=True, ssl_ca_certs=args.tls_ca, ssl_cert_reqs="required",
                     ssl_check_hostname=False)
        if args.tls_cert:
            extra.update(ssl_certfile=args.tls_cert, ssl_keyfile=args.tls_key)
    return redis.Redis(host="127.0.0.1", port=args.port, protocol=args.protocol,
                       decode_responses=True, socket_timeout=10, **extra)


def pipeline(args):
    """~1000 mixed commands over many slots in one non-transactional pipeline, all checked."""
    r = client(args)
    rng = random.Random(args.protocol)
    prefix = f"py{args.protocol}"
    pipe = r.pipeline(transaction=False)
    expected = []
    strings = {}
    counters = {}
    for i in range(100):
        key = f"{prefix}:s:{i}"
        pipe.delete(key, f"{prefix}:c:{i}", f"{prefix}:h:{i}", f"{prefix}:z:{i}",
                    f"{prefix}:set:{i}")
        expected.append(("DEL", None))  # leftovers from an earlier run: any count
    for step in range(900):
        i = rng.randrange(100)
        kind = step % 9
        if kind == 0:
            key, value = f"{prefix}:s:{i}", f"v{step}"
            pipe.set(key, value)
            strings[key] = value
            expected.append(("SET", True))
        elif kind == 1:
            key = f"{prefix}:s:{i}"
            pipe.get(key)
            expected.append(("GET " + key, strings.get(key)))
        elif kind == 2:
            key = f"{prefix}:c:{i}"
            counters[key] = counters.get(key, 0) + 1
            pipe.incr(key)
            expected.append(("INCR " + key, counters[key]))
        elif kind == 3:
            keys = [f"{prefix}:s:{rng.randrange(100)}" for _ in range(5)]
            pipe.mget(keys)
            expected.append(("MGET " + " ".join(keys), [strings.get(k) for k in keys]))
        elif kind == 4:
            key = f"{prefix}:h:{i}"
            pipe.hset(key, mapping={"a": "1", "b": str(step)})
            pipe.hgetall(key)
            expected.append(("HSET " + key, None))  # 0, 1 or 2 new fields
            expected.append(("HGETALL " + key, {"a": "1", "b": str(step)}))
        elif kind == 5:
            key = f"{prefix}:z:{i}"
            pipe.zadd(key, {"m": step + 0.5})
            pipe.zscore(key, "m")
            expected.append(("ZADD " + key, None))
            expected.append(("ZSCORE " + key, step + 0.5))
        elif kind == 6:
            key = f"{prefix}:set:{i}"
            pipe.sadd(key, "x", "y")
            pipe.smembers(key)
            expected.append(("SADD " + key, None))
            expected.append(("SMEMBERS " + key, {"x", "y"}))
        elif kind == 7:
            keys = [f"{prefix}:s:{i}", f"{prefix}:s:{i}", f"{prefix}:nothing:{i}"]
            pipe.exists(*keys)
            want = 2 if f"{prefix}:s:{i}" in strings else 0
            expected.append(("EXISTS " + " ".join(keys), want))
        else:
            key = f"{prefix}:s:{i}"
            pipe.delete(key)
            expected.append(("DEL " + key, 1 if strings.pop(key, None) is not None else 0))
    results = pipe.execute(raise_on_error=False)
    expect("number of replies", len(results), len(expected))
    for index, ((what, want), got) in enumerate(zip(expected, results)):
        if isinstance(got, Exception):
            raise Mismatch(f"reply {index} ({what}): {error_text(got)}")
        if want is not None:
            expect(f"reply {index} ({what})", got, want)
    print(f"pipeline: {len(results)} replies checked (protocol {args.protocol})")


def connection(args):
    """HELLO with AUTH and SETNAME, CLIENT SETINFO/GETNAME/ID/INFO, INFO with the proxy section."""
    r = client(args, username="default", password="x", client_name="first-name")
    expect("PING", r.ping(), True)
    expect("CLIENT GETNAME after connect", r.client_getname(), "first-name")
    hello = r.execute_command("HELLO", args.protocol, "AUTH", "default", "x", "SETNAME",
                              "py-client")
    if args.protocol == 2 and isinstance(hello, list):  # RESP2: a flat key, value, ... array
        hello = dict(zip(hello[::2], hello[1::2]))
    if not isinstance(hello, dict):
        raise Mismatch(f"HELLO: expected a map, got {hello!r}")
    expect("HELLO proto", hello.get("proto"), args.protocol)
    expect("HELLO server", hello.get("server"), "redis")
    expect("CLIENT SETINFO LIB-NAME", r.client_setinfo("LIB-NAME", "shardctl-test"), True)
    expect("CLIENT SETINFO LIB-VER", r.client_setinfo("LIB-VER", "1.0"), True)
    expect("CLIENT GETNAME", r.client_getname(), "py-client")
    client_id = r.client_id()
    if not isinstance(client_id, int) or client_id <= 0:
        raise Mismatch(f"CLIENT ID: got {client_id!r}")
    expect("HELLO id", hello.get("id"), client_id)
    info = r.client_info()
    expect("CLIENT INFO id", int(info.get("id", -1)), client_id)
    expect("CLIENT INFO resp", str(info.get("resp")), str(args.protocol))
    expect("CLIENT INFO name", info.get("name"), "py-client")
    wrong = None
    # redis-py treats WRONGPASS as a connection error and retries it: no retries here.
    no_retry = client(args, retry=redis.retry.Retry(redis.backoff.NoBackoff(), 0))
    try:
        no_retry.execute_command("HELLO", args.protocol, "AUTH", "nobody", "x")
    except redis.exceptions.ResponseError as error:
        wrong = str(error)
    except redis.exceptions.AuthenticationError as error:
        wrong = str(error)
    if wrong is None or "invalid username-password" not in wrong:
        raise Mismatch(f"HELLO AUTH nobody: expected WRONGPASS, got {wrong!r}")
    everything = r.info()
    for field in ("redis_version", "connected_clients", "slot_map_primaries", "moved_redirects"):
        if field not in everything:
            raise Mismatch(f"INFO: no field {field} in {sorted(everything)}")
    proxy = r.info("proxy")
    expect("INFO proxy slot_map_primaries", proxy.get("slot_map_primaries"), 3)
    expect("INFO proxy slot_map_unassigned_slots", proxy.get("slot_map_unassigned_slots"), 0)
    # The connection still routes commands after all of that.
    expect("SET", r.set("py:conn", "ok"), True)
    expect("GET", r.get("py:conn"), "ok")
    print(f"connection: ok (protocol {args.protocol}, client id {client_id})")


def churn(args):
    """Pipelines batches on the keys of one slot (--tag) until --stop-file exists, checking each.

    The C++ migration test runs this while it moves the slot: the keys {tag}k0..k19 hold v0..v19
    beforehand; everything else this writes is its own ({tag}py<protocol>:...).
    """
    r = client(args)
    mine = f"{args.tag}py{args.protocol}:"
    deadline = time.monotonic() + 90
    counter = 0
    replies = 0
    batch = 0
    while not os.path.exists(args.stop_file) and time.monotonic() < deadline:
        pipe = r.pipeline(transaction=False)
        expected = []
        for i in range(10):
            n = batch * 10 + i
            pipe.get(f"{args.tag}k{n % 20}")
            expected.append((f"GET {args.tag}k{n % 20}", f"v{n % 20}"))
            counter += 1
            pipe.incr(mine + "ctr")
            expected.append(("INCR", counter))
            pipe.set(f"{mine}s{n}", f"x{n}")
            expected.append(("SET", True))
            pipe.get(f"{mine}s{n}")
            expected.append((f"GET {mine}s{n}", f"x{n}"))
            pipe.hset(f"{mine}h{n % 7}", mapping={"f": str(n)})
            expected.append(("HSET", None))
            pipe.hgetall(f"{mine}h{n % 7}")
            expected.append((f"HGETALL {mine}h{n % 7}", {"f": str(n)}))
        results = pipe.execute(raise_on_error=False)
        expect("number of replies", len(results), len(expected))
        for (what, want), got in zip(expected, results):
            if isinstance(got, Exception):
                raise Mismatch(f"batch {batch} {what}: {error_text(got)}")
            if want is not None:
                expect(f"batch {batch} {what}", got, want)
        replies += len(results)
        batch += 1
        print(f"batch {batch} ok", flush=True)  # progress, for the test's pacing
    print(f"churn: {replies} replies checked in {batch} batches (protocol {args.protocol})")


def watch(args):
    """Optimistic locking as redis-py users write it: WATCH, read, MULTI, write, EXEC, retried on
    WatchError. Two threads, each with its own client, add 1 to one counter 100 times each:
    without a working WATCH increments are lost and the total is short."""
    import threading
    key = "{watched}:counter"
    r = client(args)
    r.delete(key)
    per_thread, deadline = 100, time.monotonic() + 60
    conflicts, failures = [0, 0], []

    def incr(index):
        mine = client(args)
        try:
            for _ in range(per_thread):
                while True:
                    if time.monotonic() > deadline:
                        raise Mismatch("watch: not done within 60 s")
                    with mine.pipeline() as pipe:
                        try:
                            pipe.watch(key)
                            value = int(pipe.get(key) or 0)
                            pipe.multi()
                            pipe.set(key, value + 1)
                            pipe.execute()
                            break
                        except redis.exceptions.WatchError:
                            conflicts[index] += 1
        except Exception as error:  # reported by the main thread
            failures.append(f"{type(error).__name__}: {error}")

    threads = [threading.Thread(target=incr, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(90)
    if failures:
        raise Mismatch(f"watch: {failures[0]}")
    expect("watch: counter after 2 x 100 increments", r.get(key), str(2 * per_thread))
    # A watched key changed by another client between WATCH and EXEC: EXEC must abort.
    other = client(args)
    with r.pipeline() as pipe:
        pipe.watch(key)
        other.set(key, "changed")
        pipe.multi()
        pipe.set(key, "mine")
        try:
            pipe.execute()
            raise Mismatch("watch: EXEC ran although the watched key changed")
        except redis.exceptions.WatchError:
            pass
    expect("watch: value after the aborted EXEC", r.get(key), "changed")
    print(f"watch: 200 increments, {sum(conflicts)} WatchError retries (protocol {args.protocol})")


def wait_for_blocked_client(args, r, timeout=10):
    """Returns once a primary behind the proxy (INFO proxy's primaryN) holds a client blocked."""
    primaries = [v for k, v in r.info("proxy").items() if k.startswith("primary")]
    nodes = [redis.Redis(host=p["ip"], port=p["port"], socket_timeout=10) for p in primaries]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(node.info("clients")["blocked_clients"] > 0 for node in nodes):
            return
        time.sleep(0.02)
    raise Mismatch(f"no client blocked on {primaries} within {timeout} s")


def streams(args):
    """XREAD BLOCK through the proxy: a reader blocked on one stream gets the entry another
    client adds, and commands of other clients are not held up meanwhile."""
    import threading
    key = "{stream}:events"
    r = client(args)
    r.delete(key)
    got = []
    reader = threading.Thread(target=lambda: got.append(client(args).xread({key: "$"}, block=5000)))
    reader.start()
    wait_for_blocked_client(args, r)
    started = time.monotonic()
    for i in range(50):
        r.set(f"{{stream}}:other{i}", i)  # same slot, same shard as the blocked reader
    elapsed = time.monotonic() - started
    if elapsed > 2:
        raise Mismatch(f"streams: 50 SETs took {elapsed:.1f} s while a reader was blocked")
    entry_id = r.xadd(key, {"field": "value"})
    reader.join(10)
    if not got or not got[0]:
        raise Mismatch(f"streams: the blocked XREAD returned {got!r}")
    reply = got[0]
    entries = reply[key][0] if isinstance(reply, dict) else reply[0][1]
    expect("streams: entry read", entries[0][0], entry_id)
    print(f"streams: XREAD BLOCK woke with {entry_id}; 50 SETs in {elapsed * 1000:.0f} ms meanwhile")


def families(args):
    """One pass over every command family the proxy serves beyond plain keys, the way redis-py
    users call them: transactions, blocking pops, keyspace-wide commands and SCAN, scripts and
    functions, CONFIG GET, INFO keyspace, WAIT."""
    r = client(args)
    r.flushall()
    # Keyspace-wide: DBSIZE, KEYS, SCAN over every shard, RANDOMKEY.
    keys = {f"fam:{i}" for i in range(300)}
    r.mset({key: "v" for key in keys})
    expect("DBSIZE", r.dbsize(), 300)
    expect("KEYS", set(r.keys("fam:*")), keys)
    expect("SCAN every key once", sorted(r.scan_iter(match="fam:*", count=50)), sorted(keys))
    if r.randomkey() not in keys:
        raise Mismatch("RANDOMKEY: not one of the keys")
    # Transactions: redis-py's default pipeline is MULTI/EXEC.
    with r.pipeline(transaction=True) as pipe:
        pipe.set("{tx}a", 1).incr("{tx}a").get("{tx}a")
        expect("MULTI/EXEC", pipe.execute(), [True, 2, "2"])
    try:
        with r.pipeline(transaction=True) as pipe:
            pipe.set("{tx}a", 1).set("{other}b", 2).execute()
        raise Mismatch("MULTI/EXEC across slots ran")
    except redis.exceptions.ResponseError as error:
        # redis-py drops the error code: "... caused error: Keys in request don't hash ..."
        if "same slot" not in str(error):
            raise Mismatch(f"MULTI/EXEC across slots: {error}")
    # Blocking pops with data and with a timeout.
    r.rpush("{q}jobs", "j1")
    expect("BLPOP", list(r.blpop(["{q}jobs"], timeout=1)), ["{q}jobs", "j1"])
    expect("BRPOP timeout", r.brpop(["{q}jobs"], timeout=0.2), None)
    r.rpush("{q}src", "x")
    expect("BLMOVE", r.blmove("{q}src", "{q}dst", 1, "LEFT", "RIGHT"), "x")
    # Scripts: loaded on every shard, run where their keys live.
    incr = r.register_script("return redis.call('INCRBY', KEYS[1], ARGV[1])")
    for key in ("s:1", "s:2", "s:3"):
        expect(f"script on {key}", incr(keys=[key], args=[5]), 5)
    sha = r.script_load("return 'loaded'")
    expect("SCRIPT EXISTS", r.script_exists(sha), [True])
    expect("EVALSHA without keys", r.evalsha(sha, 0), "loaded")
    # Functions (Redis 7).
    r.function_load("#!lua name=famlib\nredis.register_function('famget', "
                    "function(keys) return redis.call('GET', keys[1]) end)", replace=True)
    r.set("fn:key", "from-function")
    expect("FCALL", r.fcall("famget", 1, "fn:key"), "from-function")
    expect("FUNCTION DELETE", r.function_delete("famlib"), True)
    # Read-only fan-outs.
    expect("CONFIG GET maxmemory-policy", "maxmemory-policy" in r.config_get("maxmemory-policy"),
           True)
    expect("INFO keyspace db0 keys", r.info("keyspace")["db0"]["keys"], r.dbsize())
    # WAIT: no replicas in this cluster, so 0 at once.
    expect("WAIT", r.wait(0, 100), 0)
    r.flushdb()
    expect("DBSIZE after FLUSHDB", r.dbsize(), 0)
    print(f"families: ok (protocol {args.protocol})")


def pubsub(args):
    """redis-py's PubSub through the proxy: channels, patterns and shard channels, messages
    published through the proxy, each arriving once."""
    r = client(args)
    p = r.pubsub()
    p.subscribe("py:news")
    p.psubscribe("py:alert:*")
    p.ssubscribe("{py}shard")

    def next_message(kind):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            message = p.get_message(timeout=0.5)
            if message and message["type"] == kind:
                return message
            if message and message["type"] not in ("subscribe", "psubscribe", "ssubscribe"):
                raise Mismatch(f"pubsub: unexpected {message!r} while waiting for {kind}")
        raise Mismatch(f"pubsub: no {kind} within 10 s")

    for _ in range(3):  # the three confirmations
        if p.get_message(timeout=5) is None:
            raise Mismatch("pubsub: a subscription was not confirmed")
    # PUBLISH's count is the receiving node's own subscribers in Redis Cluster: not checked.
    r.publish("py:news", "hello")
    expect("message", next_message("message")["data"], "hello")
    r.publish("py:alert:disk", "full")
    got = next_message("pmessage")
    expect("pmessage channel", (got["pattern"], got["channel"], got["data"]),
           ("py:alert:*", "py:alert:disk", "full"))
    expect("SPUBLISH receivers", r.spublish("{py}shard", "sharded"), 1)
    expect("smessage", next_message("smessage")["data"], "sharded")
    expect("PUBSUB NUMSUB", r.pubsub_numsub("py:news"), [("py:news", 1)])
    if "py:news" not in r.pubsub_channels():
        raise Mismatch("PUBSUB CHANNELS: py:news missing")
    p.unsubscribe("py:news")
    p.punsubscribe()
    p.sunsubscribe()
    r.publish("py:news", "nobody")
    deadline = time.monotonic() + 1
    while time.monotonic() < deadline:
        message = p.get_message(timeout=0.2)
        if message and message["type"] == "message":
            raise Mismatch(f"pubsub: got {message!r} after unsubscribing")
    p.close()
    print(f"pubsub: ok (protocol {args.protocol})")


SCENARIOS = {"families": families, "pubsub": pubsub, "pipeline": pipeline, "connection": connection, "churn": churn, "watch": watch,
             "streams": streams}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--protocol", type=int, choices=(2, 3), required=True)
    parser.add_argument("--tag", default="{churn}:", help="churn: the key prefix (hash tag)")
    parser.add_argument("--stop-file", default="", help="churn: stop once this file exists")
    parser.add_argument("--tls-ca", default="", help="connect with ssl=True, trusting this CA")
    parser.add_argument("--tls-cert", default="", help="with --tls-ca: the client certificate")
    parser.add_argument("--tls-key", default="", help="with --tls-cert: its key")
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    args = parser.parse_args()
    print(f"redis-py {redis.__version__}")
    try:
        SCENARIOS[args.scenario](args)
    except Mismatch as error:
        print(f"proxy_clients.py {args.scenario} (protocol {args.protocol}): {error}",
              file=sys.stderr)
        return 1
    except redis.exceptions.RedisError as error:
        print(f"proxy_clients.py {args.scenario} (protocol {args.protocol}): "
              f"{error_text(error)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
