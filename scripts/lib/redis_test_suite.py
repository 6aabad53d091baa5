"""Runs Redis' Tcl test suite against targets, one unit file per run (scripts/redis-test-suite).

Started by scripts/redis-test-suite, which obtains the suite and the binaries; see its --help.
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import loopback_ports

TAGS = "-slow -needs:debug -needs:repl"
NAME = "suite"
RESULT = re.compile(r"^\[(ok|err|exception|skip)\]:\s*(.*)$")
COLOR = re.compile(r"\x1b\[[0-9;]*m")


def parse_args():
    parser = argparse.ArgumentParser(prog="redis-test-suite")
    parser.add_argument("--suite", required=True)
    parser.add_argument("--shardctl", required=True)
    parser.add_argument("--server", required=True)
    parser.add_argument("--engine", default="redis")
    parser.add_argument("--target", action="append", default=[])
    parser.add_argument("--compare", action="store_true")
    parser.add_argument("--units", default="")
    parser.add_argument("--shards", type=int, default=3)
    parser.add_argument("--timeout", type=int, default=300)
    parser.add_argument("--json", default="")
    parser.add_argument("--log", default="")
    args = parser.parse_args()
    if not args.compare and not args.target:
        parser.error("give --compare or --target HOST:PORT (see --help)")
    if args.shards < 1 or args.timeout < 10:
        parser.error("--shards takes 1 or more, --timeout 10 seconds or more")
    return args


def suite_units(suite):
    """The suite's own list of unit files, ::all_tests in tests/test_helper.tcl."""
    with open(os.path.join(suite, "tests", "test_helper.tcl")) as file:
        text = file.read()
    match = re.search(r"set ::all_tests \{(.*?)\}", text, re.S)
    return [line.strip() for line in match.group(1).splitlines()
            if line.strip() and not line.strip().startswith("#")]


def free_base_port(count):
    base = loopback_ports.free_base_port(count, 22000, 28000, 89)
    if base is None:
        sys.exit("redis-test-suite: no free port range between 22000 and 38000 on 127.0.0.1")
    return base


def server_label(binary):
    """The baseline's name in the table and the JSON: its engine and version as the binary reports
    them (`valkey-server --version`: "Valkey server v=9.1.2 ..." gives "valkey-9.1.2"), so a
    Valkey or Redis 8 run is not labelled as Debian's redis-server."""
    try:
        version = subprocess.run([binary, "--version"], capture_output=True, text=True,
                                 timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        version = ""
    match = re.match(r"(\w+) server v=(\S+)", version)
    return f"{match.group(1).lower()}-{match.group(2)}" if match else os.path.basename(binary)


def wait_ping(port, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as conn:
                conn.sendall(b"PING\r\n")
                if conn.recv(16).startswith(b"+PONG"):
                    return True
        except OSError:
            pass
        time.sleep(0.2)
    return False


def stop_leftover_scripts(address):
    """SCRIPT KILL, FUNCTION KILL, CONFIG SET maxmemory 0 and CLIENT UNPAUSE on a target after a
    unit file: a test that failed midway may leave a script running (`while true do end`), the
    server out of memory (`maxmemory 1`) or its writes paused (`CLIENT PAUSE 100000 WRITE`), each
    put back only at the test's end, which would fail the next unit files too. Every target gets
    the same, so the baseline is unchanged: it passes those tests."""
    host, port = address.rsplit(":", 1)
    requests = [b"*2\r\n$%d\r\n%s\r\n$4\r\nKILL\r\n" % (len(command), command)
                for command in (b"SCRIPT", b"FUNCTION")]
    requests.append(b"*4\r\n$6\r\nCONFIG\r\n$3\r\nSET\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n")
    requests.append(b"*2\r\n$6\r\nCLIENT\r\n$7\r\nUNPAUSE\r\n")
    for request in requests:
        try:
            with socket.create_connection((host, int(port)), timeout=2) as conn:
                conn.sendall(request)
                conn.recv(256)
        except OSError:
            pass


class Targets:
    """What --compare starts: one plain server and a proxied cluster, stopped by close()."""

    def __init__(self, args):
        self.args = args
        self.dir = tempfile.mkdtemp(prefix="redis-test-suite.")
        self.plain = None
        self.deployed = False

    def start(self):
        base = free_base_port(self.args.shards + 3)
        plain_port, proxy_port = base + self.args.shards + 1, base + self.args.shards + 2
        data = os.path.join(self.dir, "plain")
        os.mkdir(data)
        self.plain = subprocess.Popen(
            [self.args.server, "--port", str(plain_port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", data], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        if not wait_ping(plain_port):
            raise RuntimeError(f"{self.args.server} did not answer PING on {plain_port}")
        engine = self.args.engine if self.args.engine in ("redis", "valkey") else self.args.server
        up = subprocess.run(
            [self.args.shardctl, "up", "--name", NAME, "--state-dir", self.dir, "--engine", engine,
             "--shards", str(self.args.shards), "--base-port", str(base), "--proxy-port",
             str(proxy_port), "--proxy-threads", "1"], capture_output=True, text=True,
            timeout=240)
        self.deployed = True
        if up.returncode != 0 or not wait_ping(proxy_port):
            raise RuntimeError(f"shardctl up failed: {up.stderr.strip()}")
        return [(server_label(self.args.server), f"127.0.0.1:{plain_port}"),
                ("shardproxy", f"127.0.0.1:{proxy_port}")]

    def close(self):
        if self.plain is not None:
            self.plain.terminate()
            try:
                self.plain.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.plain.kill()
        if self.deployed:
            subprocess.run([self.args.shardctl, "down", "--name", NAME, "--state-dir", self.dir,
                            "--purge"], capture_output=True, timeout=120)
        shutil.rmtree(self.dir, ignore_errors=True)


def save_log(directory, name, unit, output):
    """The harness's whole output for one unit file and target (--log): the failed tests' messages,
    which the counts and names in the JSON leave out."""
    path = os.path.join(directory, f"{name}.{unit.replace('/', '_')}.log")
    with open(path, "w") as file:
        file.write(COLOR.sub("", output))


def run_unit(suite, address, unit, timeout, log_dir="", name=""):
    """One unit file in its own harness run: counts, failed names and how the run ended."""
    host, port = address.rsplit(":", 1)
    argv = ["tclsh", "tests/test_helper.tcl", "--host", host, "--port", port, "--cluster-mode",
            "--tags", TAGS, "--durable", "--clients", "1", "--single", unit]
    started = time.monotonic()
    process = subprocess.Popen(argv, cwd=suite, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, errors="replace",
                               start_new_session=True)
    ended = "done"
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        # The harness spawns its test client as a child: stop the whole group it leads.
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        ended = "timeout"
    row = {"unit": unit, "passed": 0, "failed": 0, "failed_tests": [], "ended": ended,
           "seconds": round(time.monotonic() - started, 1)}
    if log_dir:
        save_log(log_dir, name, unit, output)
    text = COLOR.sub("", output)
    if ended == "done" and "Testing " + unit not in text:
        # The harness never ran the file (e.g. its own port taken by another harness run).
        row["ended"] = "error"
        row["failed_tests"].append("[harness] " + " ".join(text.strip().splitlines()[-3:])[:300])
    for line in text.splitlines():
        match = RESULT.match(line.strip())
        if not match:
            continue
        kind, text = match.groups()
        if kind == "ok":
            row["passed"] += 1
        elif kind == "err":
            row["failed"] += 1
            row["failed_tests"].append(text)
        elif kind == "exception" and ended == "done":
            row["ended"] = "aborted"
            row["failed_tests"].append("[exception] " + text)
    return row


def ratio(numerator, denominator):
    return f"{100.0 * numerator / denominator:.1f}%" if denominator else "-"


def print_table(names, units, results):
    header = f"{'unit':<32}" + "".join(f"{name + ' ok/fail':>24}" for name in names)
    if len(names) == 2:
        header += f"{'ratio':>9}"
    print(header)
    totals = {name: [0, 0] for name in names}
    for unit in units:
        line = f"{unit:<32}"
        for name in names:
            row = results[name][unit]
            cell = f"{row['passed']}/{row['failed']}"
            if row["ended"] != "done":
                cell += f" {row['ended']}"
            line += f"{cell:>24}"
            totals[name][0] += row["passed"]
            totals[name][1] += row["failed"]
        if len(names) == 2:
            line += f"{ratio(results[names[1]][unit]['passed'], results[names[0]][unit]['passed']):>9}"
        print(line, flush=True)
    line = f"{'total':<32}" + "".join(f"{f'{p}/{f}':>24}" for p, f in totals.values())
    if len(names) == 2:
        line += f"{ratio(totals[names[1]][0], totals[names[0]][0]):>9}"
    print(line)
    return totals


def main():
    args = parse_args()
    # Stopped from outside: leave through `finally`, which takes the targets down.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    units = [u for u in args.units.split(",") if u] or suite_units(args.suite)
    if args.log:
        os.makedirs(args.log, exist_ok=True)
    targets = Targets(args) if args.compare else None
    try:
        pairs = targets.start() if targets else [(t, t) for t in args.target]
        results = {name: {} for name, _ in pairs}
        for unit in units:
            # Targets alternate per unit file, so background load weighs on both alike.
            for name, address in pairs:
                row = run_unit(args.suite, address, unit, args.timeout, args.log, name)
                stop_leftover_scripts(address)
                results[name][unit] = row
                print(f"# {name} {unit}: {row['passed']} passed, {row['failed']} failed, "
                      f"{row['ended']} ({row['seconds']} s)", file=sys.stderr, flush=True)
    except (RuntimeError, subprocess.TimeoutExpired) as error:
        print(f"redis-test-suite: {error}", file=sys.stderr)
        return 1
    finally:
        if targets:
            targets.close()
    names = [name for name, _ in pairs]
    totals = print_table(names, units, results)
    if args.json:
        with open(args.json, "w") as file:
            json.dump({"tags": TAGS, "engine": args.engine, "server": args.server,
                       "baseline": names[0], "units": units,
                       "totals": {n: {"passed": p, "failed": f} for n, (p, f) in totals.items()},
                       "results": results}, file, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
