#!/usr/bin/env python3
"""Faults under load, counted by what clients were told. Run through scripts/chaos.

Starts a deployment of its own (loopback, a free port range, a temporary state dir, AOF with the
chosen appendfsync, shardproxy in front), then two writers write unique keys all the time: one
with redis-py's cluster client, one through shardproxy as a client without cluster support. Each
remembers every write it was told succeeded. Meanwhile the schedule injects one fault at a time
and waits for `shardctl status` to exit 0 again:

    kill-primary     kill -9 of a shard that is a primary now
    kill-supervisor  kill -9 of the supervisor, then `shardctl up` of the same spec adopts the shards
    kill-proxy       kill -9 of shardproxy (the supervisor restarts it)
    stop-primary     SIGSTOP of a primary for twice the cluster-node-timeout, then SIGCONT
    scale            `shardctl scale` out by one primary, then back in, under load
    full-disk        the state dir (a tmpfs of its own, --disk-size) fills up until shards fail
                     to write their AOF and `status` reports them disk-full; then it is freed
                     (needs root, for the tmpfs)

At the end every acknowledged key is read back: lost = gone, wrong = another value. Prints one
row per fault (time until status was healthy again, errors and ms of unavailability each writer
saw, the slot ranges those errors hit) and `acked=N lost=M wrong=K`; --json prints the same as
one object. Exit 0 when nothing acknowledged was lost or wrong and every fault healed, 1 when
not, 2 on bad arguments. Everything it started is stopped (`shardctl down --purge`) at the end.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

import loopback_ports

try:
    import redis
    from redis.cluster import RedisCluster
    from redis.crc import key_slot
except ImportError as error:
    print(f"chaos: cannot import redis-py ({error}); run scripts/chaos, which installs it",
          file=sys.stderr)
    sys.exit(1)

FAULTS = ["kill-primary", "kill-supervisor", "kill-proxy", "stop-primary", "scale", "full-disk"]
NAME = "chaos"
HEAL_TIMEOUT = 90.0      # seconds a fault may take to heal before it counts as not healed
SETTLE_SECONDS = 2.0     # load keeps running this long after status is healthy again
ERROR_BACKOFF = 0.01     # a writer that got an error waits this long before the next write
DISK_FULL_WAIT = 30.0    # seconds a full disk is held while waiting for status to report it


def parse_args():
    parser = argparse.ArgumentParser(prog="scripts/chaos", description=__doc__.split("\n")[0])
    parser.add_argument("--shardctl", required=True, help="the shardctl binary")
    parser.add_argument("--shards", type=int, default=3, help="primaries (default 3)")
    parser.add_argument("--replicas", type=int, default=1, help="replicas per primary (default 1)")
    parser.add_argument("--appendfsync", default="always", choices=["always", "everysec", "no"])
    parser.add_argument("--faults", default=",".join(FAULTS),
                        help="comma-separated schedule (default: all, in this order: "
                        + ",".join(FAULTS) + ")")
    parser.add_argument("--rounds", type=int, default=1, help="times the schedule runs (default 1)")
    parser.add_argument("--node-timeout", default="2s",
                        help="cluster-node-timeout of the deployment (default 2s)")
    parser.add_argument("--engine", default="redis")
    parser.add_argument("--base-port", type=int,
                        help="first shard port; shards, the proxy and bus ports (+10000) follow "
                        "(default: the first free range from 21000)")
    parser.add_argument("--disk-size", default="256m",
                        help="size of the state dir's tmpfs with the full-disk fault (default 256m)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    faults = [fault for fault in args.faults.split(",") if fault]
    unknown = [fault for fault in faults if fault not in FAULTS]
    if unknown or not faults:
        parser.error(f"--faults: unknown fault(s) {','.join(unknown) or '(none given)'} "
                     f"(choose from {','.join(FAULTS)})")
    if args.shards < 1 or args.replicas < 0 or args.rounds < 1:
        parser.error("--shards and --rounds must be at least 1, --replicas at least 0")
    if "kill-primary" in faults or "stop-primary" in faults:
        if args.shards < 2:
            parser.error("killing or stopping a primary needs --shards 2 or more")
    if "full-disk" in faults and os.geteuid() != 0:
        parser.error("full-disk needs root: it mounts a tmpfs of its own to fill "
                     "(run as root, or leave full-disk out of --faults)")
    args.fault_list = faults * args.rounds
    return args


def seconds_of(duration):
    units = {"ms": 0.001, "s": 1, "m": 60}
    for unit in ("ms", "s", "m"):
        if duration.endswith(unit):
            return float(duration[:-len(unit)]) * units[unit]
    return float(duration)


def free_base_port(count):
    """A base port with base..base+count-1 and their bus ports (+10000) free, below 28000."""
    base = loopback_ports.free_base_port(count, 21000, 28000, 97)
    if base is None:
        sys.exit("chaos: no free port range between 21000 and 38000 on 127.0.0.1")
    return base


class Deployment:
    """The deployment under test: shardctl commands and the pids in its state dir."""

    def __init__(self, args, state_dir):
        self.args = args
        self.state_dir = state_dir
        self.dir = os.path.join(state_dir, NAME)
        self.processes = args.shards * (1 + args.replicas)
        # Room for one more primary with its replicas (scale), and the proxy after them.
        self.base_port = args.base_port or free_base_port(self.processes + 1 + args.replicas + 2)
        self.proxy_port = self.base_port + self.processes + 1 + args.replicas + 1
        self.spec = ["--shards", str(args.shards), "--replicas", str(args.replicas),
                     "--base-port", str(self.base_port), "--engine", args.engine,
                     "--persistence", "aof", "--appendfsync", args.appendfsync,
                     "--cluster-node-timeout", args.node_timeout,
                     "--proxy-port", str(self.proxy_port), "--proxy-threads", "1"]

    def shardctl(self, *command, timeout=180):
        argv = [self.args.shardctl, *command, "--name", NAME, "--state-dir", self.state_dir]
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)

    def up(self):
        started = self.shardctl("up", *self.spec)
        if started.returncode != 0:
            raise RuntimeError(f"shardctl up failed: {started.stderr.strip()}")

    def healthy(self):
        return self.shardctl("status", "--json", timeout=60).returncode == 0

    def pid(self, relative):
        try:
            with open(os.path.join(self.dir, relative)) as file:
                return int(file.read().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def shard_indexes(self):
        shards = os.path.join(self.dir, "shards")
        return sorted(int(name) for name in os.listdir(shards) if name.isdigit())

    def primaries(self):
        """(index, port, pid) of every shard that answers as a primary now."""
        found = []
        for index in self.shard_indexes():
            port = self.base_port + index
            try:
                role = redis.Redis(port=port, socket_timeout=1).info("replication").get("role")
            except redis.RedisError:
                continue
            pid = self.pid(os.path.join("shards", str(index), "pid"))
            if role == "master" and pid:
                found.append((index, port, pid))
        return found


class Writer(threading.Thread):
    """Writes key i = "<name>:<i>" with value the key until stopped; remembers every acked write
    with its time, and the time and slot of every error."""

    def __init__(self, name, connect):
        super().__init__(daemon=True)
        self.name = name
        self.connect = connect
        self.acked = []
        self.errors = []  # (monotonic seconds, slot)
        self.first_error = ""
        self.stop = threading.Event()

    def run(self):
        client = None
        i = 0
        while not self.stop.is_set():
            key = f"{self.name}:{i}"
            i += 1
            try:
                client = client or self.connect()
                if client.set(key, key):
                    self.acked.append((key, time.monotonic()))
            except Exception as error:  # redis errors and the cluster client's own trips alike
                self.errors.append((time.monotonic(), key_slot(key.encode())))
                self.first_error = self.first_error or f"SET {key}: {error}"
                if not isinstance(error, redis.ResponseError):
                    client = None  # a fresh client: its node table may be stale
                time.sleep(ERROR_BACKOFF)


def slot_ranges(slots):
    ranges = []
    for slot in sorted(set(slots)):
        if ranges and slot == ranges[-1][1] + 1:
            ranges[-1][1] = slot
        else:
            ranges.append([slot, slot])
    text = ",".join(f"{a}-{b}" if a != b else str(a) for a, b in ranges[:6])
    return text + (f",... ({len(ranges)} ranges)" if len(ranges) > 6 else "")


def unavailable_ms(errors):
    """Milliseconds from the first error to the last of every burst (errors < 1 s apart)."""
    total = 0.0
    burst_start = previous = None
    for moment, _ in errors:
        if previous is None or moment - previous > 1.0:
            if previous is not None:
                total += previous - burst_start + ERROR_BACKOFF
            burst_start = moment
        previous = moment
    if previous is not None:
        total += previous - burst_start + ERROR_BACKOFF
    return round(total * 1000)


class Faults:
    def __init__(self, deployment, node_timeout):
        self.deployment = deployment
        self.node_timeout = node_timeout
        self.turn = 0

    def pick_primary(self):
        primaries = self.deployment.primaries()
        if not primaries:
            raise RuntimeError("no primary answers")
        self.turn += 1
        return primaries[self.turn % len(primaries)]

    def kill_primary(self):
        index, port, pid = self.pick_primary()
        os.kill(pid, signal.SIGKILL)
        return f"shard {index} (port {port}, pid {pid})"

    def kill_recorded(self, pid_file):
        """kill -9 of the process a pid file of the deployment names; returns its pid."""
        pid = self.deployment.pid(pid_file)
        if pid is None:
            raise RuntimeError(f"no {pid_file}")
        os.kill(pid, signal.SIGKILL)
        return pid

    def kill_supervisor(self):
        pid = self.kill_recorded("supervisor.pid")
        time.sleep(0.5)
        self.deployment.up()  # what systemd's restart of the unit does: adopt the running shards
        return f"supervisor pid {pid}, then shardctl up"

    def kill_proxy(self):
        return f"shardproxy pid {self.kill_recorded('proxy.pid')}"

    def stop_primary(self):
        index, port, pid = self.pick_primary()
        os.kill(pid, signal.SIGSTOP)
        outcome = "then SIGCONT"
        try:
            time.sleep(2 * self.node_timeout)
        finally:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:  # the supervisor killed it once the cluster failed it
                outcome = "killed by the supervisor while stopped"
        return f"shard {index} (port {port}) stopped {2 * self.node_timeout:g} s, {outcome}"

    def full_disk(self):
        """Fills the state dir's tmpfs until every write fails, holds it full until `status`
        reports a shard disk-full (at most DISK_FULL_WAIT), then frees it."""
        ballast = os.path.join(self.deployment.state_dir, "ballast")
        fd = os.open(ballast, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        chunk = b"\0" * (1 << 20)
        filled = 0
        try:
            while True:  # bounded by the tmpfs' size
                filled += os.write(fd, chunk)
        except OSError:
            pass
        finally:
            os.close(fd)
        started = time.monotonic()
        reported = False
        while time.monotonic() - started < DISK_FULL_WAIT and not reported:
            status = self.deployment.shardctl("status", "--json", timeout=60)
            reported = '"disk-full"' in status.stdout
            time.sleep(0.2)
        held = time.monotonic() - started
        os.remove(ballast)
        seen = "status showed disk-full" if reported else "no shard reported disk-full"
        return f"state dir filled ({filled >> 20} MB more), {seen} after {held:.1f} s, then freed"

    def scale(self):
        shards = self.deployment.args.shards
        for count in (shards + 1, shards):
            result = self.deployment.shardctl("scale", "--shards", str(count), timeout=600)
            if result.returncode != 0:
                raise RuntimeError(f"scale --shards {count}: {result.stderr.strip()}")
        return f"scale {shards} -> {shards + 1} -> {shards}"


def run_fault(fault, faults, deployment, writers):
    started = time.monotonic()
    row = {"fault": fault, "target": "", "healed": False, "healthy_after_ms": None}
    try:
        row["target"] = getattr(faults, fault.replace("-", "_"))()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as error:
        row["target"] = f"could not inject: {error}"
    deadline = time.monotonic() + HEAL_TIMEOUT
    while time.monotonic() < deadline:
        if deployment.healthy():
            row["healed"] = True
            row["healthy_after_ms"] = round((time.monotonic() - started) * 1000)
            break
        time.sleep(0.2)
    time.sleep(SETTLE_SECONDS)
    ended = time.monotonic()
    row["window"] = (started, ended)
    for writer in writers:
        seen = [error for error in writer.errors if started <= error[0] < ended]
        row[writer.name] = {"errors": len(seen), "unavailable_ms": unavailable_ms(seen),
                            "slots": slot_ranges(slot for _, slot in seen)}
    return row


def read_back(port, writers):
    """The acknowledged writes that are gone, as (key, acked at), and how many hold another value."""
    client = RedisCluster(host="127.0.0.1", port=port, socket_timeout=10)
    lost, wrong = [], 0
    for writer in writers:
        for start in range(0, len(writer.acked), 500):
            batch = writer.acked[start:start + 500]
            pipe = client.pipeline()
            for key, _ in batch:
                pipe.get(key)
            for (key, moment), value in zip(batch, pipe.execute()):
                if value is None:
                    lost.append((key, moment))
                elif value.decode() != key:
                    wrong += 1
    return lost, wrong


def blame(rows, lost):
    """Counts each lost write against the fault whose window it was acknowledged in."""
    outside = 0
    for row in rows:
        row["lost"] = 0
    for _, moment in lost:
        for row in rows:
            if row["window"][0] <= moment < row["window"][1]:
                row["lost"] += 1
                break
        else:
            outside += 1
    for row in rows:
        del row["window"]
    return outside


def print_table(result):
    print(f"chaos: {result['shards']} primaries x {1 + result['replicas']}, "
          f"appendfsync {result['appendfsync']}, {result['engine']}, "
          f"cluster-node-timeout {result['node_timeout']}")
    print(f"{'fault':<16} {'healed after':>12} {'lost':>5}  {'cluster client':>20}  "
          f"{'through proxy':>20}  target")
    for row in result["faults"]:
        healed = f"{row['healthy_after_ms']} ms" if row["healed"] else "NOT HEALED"
        cells = [f"{row[w]['errors']} err {row[w]['unavailable_ms']} ms" for w in ("cluster", "proxy")]
        print(f"{row['fault']:<16} {healed:>12} {row['lost']:>5}  {cells[0]:>20}  {cells[1]:>20}  "
              f"{row['target']}")
        for name in ("cluster", "proxy"):
            if row[name]["slots"]:
                print(f"{'':<16} {name} errors in slots {row[name]['slots']}")
    print(f"acked={result['acked']} lost={result['lost']} wrong={result['wrong']}")


def main():
    args = parse_args()
    state_dir = tempfile.mkdtemp(prefix="shardctl-chaos.")
    mounted = False
    if "full-disk" in args.fault_list:
        mount = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={args.disk_size},mode=0700",
                                "shardctl-chaos", state_dir], capture_output=True, text=True)
        if mount.returncode != 0:
            print(f"chaos: mounting a tmpfs on {state_dir}: {mount.stderr.strip()}",
                  file=sys.stderr)
            os.rmdir(state_dir)
            return 1
        mounted = True
    deployment = Deployment(args, state_dir)
    writers = []
    try:
        deployment.up()
        writers = [Writer("cluster", lambda: RedisCluster(host="127.0.0.1", port=deployment.base_port,
                                                          socket_timeout=5)),
                   Writer("proxy", lambda: redis.Redis(port=deployment.proxy_port,
                                                      socket_timeout=5))]
        for writer in writers:
            writer.start()
        time.sleep(SETTLE_SECONDS)
        faults = Faults(deployment, seconds_of(args.node_timeout))
        rows = [run_fault(fault, faults, deployment, writers) for fault in args.fault_list]
        for writer in writers:
            writer.stop.set()
        for writer in writers:
            writer.join(30)
        lost_writes, wrong = read_back(deployment.base_port, writers)
        lost = len(lost_writes)
        lost_outside_faults = blame(rows, lost_writes)
        result = {"shards": args.shards, "replicas": args.replicas, "appendfsync": args.appendfsync,
                  "engine": args.engine, "node_timeout": args.node_timeout, "faults": rows,
                  "acked": sum(len(w.acked) for w in writers), "lost": lost, "wrong": wrong,
                  "lost_outside_faults": lost_outside_faults,
                  "first_errors": {w.name: w.first_error for w in writers},
                  "healed": all(row["healed"] for row in rows)}
        if args.json:
            print(json.dumps(result))
        else:
            print_table(result)
        return 0 if lost == 0 and wrong == 0 and result["healed"] else 1
    except RuntimeError as error:
        print(f"chaos: {error}", file=sys.stderr)
        return 1
    finally:
        for writer in writers:
            writer.stop.set()
        down = deployment.shardctl("down", "--purge", timeout=180)
        if down.returncode != 0:
            print(f"chaos: shardctl down failed: {down.stderr.strip()}", file=sys.stderr)
        if mounted:
            subprocess.run(["umount", state_dir], check=False)
        subprocess.run(["rm", "-rf", state_dir], check=False)


if __name__ == "__main__":
    sys.exit(main())
