#!/usr/bin/env python3
"""Writes unique keys while a test changes the cluster, then reads back every acknowledged one.

    $SHARDCTL_PYTHON acked_writer.py [--host H] --port P (--cluster | --plain) --prefix NAME
                                     --stop-file PATH [--max-seconds 120] [--password-file F]
    $SHARDCTL_PYTHON acked_writer.py ... --prefix NAME --read-back N

--read-back N writes nothing and reads keys 0..N-1 back (after a fault, from what survived).

--cluster talks to the shards with redis-py's cluster client (it follows MOVED and ASK itself);
--plain talks to one endpoint, shardproxy, as a client without cluster support would. Key i gets
value "<prefix>:<i>". The writer writes until the stop file exists (or --max-seconds pass), then
reads every key it was told was written and prints one JSON line:

    {"acked": N, "lost": M, "wrong": K, "errors": E, "client_exceptions": X, "first_error": "..."}

errors counts write replies that were errors (a redirect the client had to see, a refused write);
client_exceptions counts failures inside the client library itself (redis-py's cluster client can
trip over its own node table while nodes are removed), after which a new client is made.
Exit 0 when it could run at all; the C++ test judges the counts. A missing redis module exits 1.
"""
import argparse
import json
import os
import sys
import time

try:
    import redis
    from redis.cluster import RedisCluster
except ImportError as error:
    print(f"acked_writer.py: cannot import redis-py ({error}); run ensure_redis_py "
          "from scripts/lib/setup.sh", file=sys.stderr)
    sys.exit(1)

READ_BATCH = 500


def connect(args):
    password = None
    if args.password_file:
        with open(args.password_file, encoding="utf-8") as file:
            password = file.readline().strip()
    if args.cluster:
        return RedisCluster(host=args.host, port=args.port, password=password, socket_timeout=10)
    return redis.Redis(host=args.host, port=args.port, password=password, socket_timeout=10)


def write_until_stopped(client, args):
    acked, errors, exceptions, first_error = [], 0, 0, ""
    deadline = time.monotonic() + args.max_seconds
    i = 0
    while not os.path.exists(args.stop_file) and time.monotonic() < deadline:
        key = f"{args.prefix}:{i}"
        try:
            if client.set(key, key):
                acked.append(i)
        except redis.RedisError as error:
            errors += 1
            first_error = first_error or f"SET {key}: {error}"
        except Exception as error:  # a bug in the client library, not an answer from the server
            exceptions += 1
            first_error = first_error or f"SET {key}: client library: {error!r}"
            client = connect(args)
        i += 1
    return acked, errors, exceptions, first_error, client


def read_back(client, args, acked):
    lost = wrong = 0
    for start in range(0, len(acked), READ_BATCH):
        keys = [f"{args.prefix}:{i}" for i in acked[start:start + READ_BATCH]]
        if args.cluster:
            values = [client.get(key) for key in keys]
        else:
            values = client.mget(keys)
        for key, value in zip(keys, values):
            if value is None:
                lost += 1
            elif value.decode() != key:
                wrong += 1
    return lost, wrong


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--password-file")
    parser.add_argument("--read-back", type=int, metavar="N",
                        help="write nothing: read keys 0..N-1 of --prefix back")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--cluster", action="store_true")
    mode.add_argument("--plain", action="store_true")
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--stop-file")
    parser.add_argument("--max-seconds", type=float, default=120)
    args = parser.parse_args()
    client = connect(args)
    if args.read_back is not None:
        acked, errors, exceptions, first_error = list(range(args.read_back)), 0, 0, ""
    elif args.stop_file is None:
        parser.error("--stop-file is required unless --read-back is given")
    else:
        acked, errors, exceptions, first_error, client = write_until_stopped(client, args)
    lost, wrong = read_back(client, args, acked)
    print(json.dumps({"acked": len(acked), "lost": lost, "wrong": wrong, "errors": errors,
                      "client_exceptions": exceptions, "first_error": first_error}))


if __name__ == "__main__":
    main()
