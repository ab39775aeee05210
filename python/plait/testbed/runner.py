"""Runs a testbed plan: namespaces, the emulator, the endpoints, the results, the clean-up.

Everything a run creates is named `plait-<pid>-...` (namespaces) and lives under a temporary
directory; the emulator's TUN devices are not persistent, so they vanish with it. Clean-up runs
on a normal end, on errors and on Ctrl-C/SIGTERM (try/finally); `plait testbed clean` removes
what a killed run (SIGKILL) left, recognised by the prefix and a dead pid. A lock file
(`/run/plait-testbed.lock`, flock) keeps two runs from overlapping.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plait.testbed.plan import Plan, Refusal, dumps, emulator_config

LOCK_PATH = "/run/plait-testbed.lock"
NETNS_DIR = Path("/run/netns")
PREFIX_RE = re.compile(r"^plait-(\d+)-")
#: Bytes of a full-sized packet on the wire (1448 B payload + 52 B headers, docs/testbed.md).
FULL_PACKET_BYTES = 1500
#: The testbed's own columns and their types, which every row of flows, links and paths
#: repeats from the summary's `testbed` object: the kernel release, the emulator's lateness
#: (p50, p99, max, us) and whether it did not keep time (p99 above a tenth of a packet time).
#: plait.testbed.sweep's table schemas and linux-fidelity's kernel store read them from here.
TIMING_COLUMNS: dict[str, type] = {
    "kernel": str,
    "lateness_p50_us": float,
    "lateness_p99_us": float,
    "lateness_max_us": float,
    "timing_flagged": bool,
}


def _binary(name: str) -> str:
    """The testbed binary `name`: $PLAIT_TESTBED_BIN/<name>, else target/release of the
    source tree, else the PATH."""
    env = os.environ.get("PLAIT_TESTBED_BIN")
    candidates = [Path(env) / name] if env else []
    candidates.append(Path(__file__).resolve().parents[3] / "target" / "release" / name)
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    found = shutil.which(name)
    if found:
        return found
    raise Refusal(
        f"{name} not found: build it with `make build` (cargo build --release -p plait-testbed) "
        "or set PLAIT_TESTBED_BIN"
    )


def check_machine() -> None:
    """Refuses, with one line, where the testbed cannot run."""
    if os.geteuid() != 0:
        raise Refusal("plait testbed needs root (network namespaces, TUN devices, SCHED_FIFO)")
    if not os.path.exists("/proc/self/ns/net"):
        raise Refusal("this kernel has no network namespaces")
    if not os.path.exists("/dev/net/tun"):
        raise Refusal("this kernel has no TUN device (/dev/net/tun)")
    if shutil.which("ip") is None:
        raise Refusal("`ip` (iproute2) not found")
    if shutil.which("ethtool") is None:
        raise Refusal("`ethtool` not found (needed to turn TSO/GSO/GRO off)")
    avail = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
    if avail.exists():
        check_machine.ccs = avail.read_text().split()  # type: ignore[attr-defined]


def _sh(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run(args, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {p.stderr.strip() or p.returncode}")
    return p


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _pids_in_netns(ns: str) -> list[int]:
    p = _sh("ip", "netns", "pids", ns, check=False)
    return [int(x) for x in p.stdout.split()]


def _delete_netns(ns: str) -> None:
    for pid in _pids_in_netns(ns):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _sh("ip", "netns", "del", ns, check=False)


def clean_leftovers() -> list[str]:
    """Removes the namespaces of dead runs (`plait-<pid>-*` whose pid is gone), the processes
    in them and the runs' temporary directories; returns the namespaces' names."""
    removed = []
    if not NETNS_DIR.is_dir():
        return removed
    for entry in sorted(NETNS_DIR.iterdir()):
        m = PREFIX_RE.match(entry.name)
        if m and not _pid_alive(int(m.group(1))):
            _delete_netns(entry.name)
            removed.append(entry.name)
    for entry in sorted(Path(tempfile.gettempdir()).glob("plait-testbed-*-*")):
        m = re.match(r"^plait-testbed-(\d+)-", entry.name)
        if m and entry.is_dir() and not _pid_alive(int(m.group(1))):
            shutil.rmtree(entry, ignore_errors=True)
    return removed


@dataclass
class TestbedResult:
    summary: dict[str, Any]
    flows: list[dict[str, Any]]
    links: list[dict[str, Any]]
    flow_series: list[dict[str, Any]]


class _Run:
    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.prefix = f"plait-{os.getpid()}-"
        self.namespaces: list[str] = []
        self.procs: list[subprocess.Popen] = []
        self.emulator: subprocess.Popen | None = None
        self.workdir = tempfile.mkdtemp(prefix=f"plait-testbed-{os.getpid()}-")
        self.lock_fd: int | None = None

    # -- set-up -----------------------------------------------------------------------
    def lock(self) -> None:
        self.lock_fd = os.open(LOCK_PATH, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self.lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise Refusal(
                "another plait testbed run is in progress (lock " + LOCK_PATH + ")"
            ) from None

    def setup(self) -> None:
        plan = self.plan
        for i, _host in enumerate(plan.hosts):
            ns = f"{self.prefix}{i}"
            _sh("ip", "netns", "add", ns)
            self.namespaces.append(ns)
            _sh("ip", "-n", ns, "link", "set", "lo", "up")
            for key, value in (
                ("net.ipv4.tcp_no_metrics_save", "1"),
                ("net.ipv4.tcp_congestion_control", "reno"),
            ):
                _sh("ip", "netns", "exec", ns, "sysctl", "-q", "-w", f"{key}={value}")
        ncpu = os.cpu_count() or 1
        self.emu_cpu = ncpu - 1
        cfg = emulator_config(plan, self.prefix, self.workdir, self.emu_cpu)
        cfg["keep_awake"] = True
        # With link events the run's start is fixed now, to place them on the emulator's clock
        # (the rest of the set-up takes about a second; without events, run() picks it).
        self.t0 = time.time_ns() + 4_000_000_000 if self.plan.events else None
        cfg["t0_realtime_ns"] = self.t0
        cfg["pcap"] = [
            {"links": [i for i, d in enumerate(plan.links) if d.name == name], "file": file}
            for name, file in getattr(self, "pcaps", {}).items()
        ]
        cfg_path = Path(self.workdir, "emulator-config.json")
        cfg_path.write_text(dumps(cfg))
        self.emulator = subprocess.Popen(
            [_binary("plait-linkemu"), str(cfg_path)],
            stderr=open(Path(self.workdir, "emulator.err"), "w"),
        )
        ready = Path(cfg["ready_file"])
        deadline = time.monotonic() + 5
        while not ready.exists():
            if self.emulator.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    "plait-linkemu did not start: "
                    + Path(self.workdir, "emulator.err").read_text().strip()
                )
            time.sleep(0.01)
        for i, host in enumerate(plan.hosts):
            ns = self.namespaces[i]
            _sh("ip", "-n", ns, "link", "set", "ptb0", "txqueuelen", "10000", "up")
            _sh(
                "ip",
                "netns",
                "exec",
                ns,
                "ethtool",
                "-K",
                "ptb0",
                "tso",
                "off",
                "gso",
                "off",
                "gro",
                "off",
                check=False,
            )
            _sh("ip", "-n", ns, "addr", "add", f"{plan.addr(host)}/32", "dev", "ptb0")
            _sh("ip", "-n", ns, "route", "add", "10.99.0.0/16", "dev", "ptb0")
            self._mptcp_setup(host, ns)
            _sh("ip", "-n", ns, "tcp_metrics", "flush", "all", check=False)

    def _mptcp_setup(self, host: str, ns: str) -> None:
        """MPTCP as docs/testbed.md says: on the sender, an extra address per subflow, each a
        `subflow` endpoint of the in-kernel path manager with its own routing table (source-based
        rule); on both ends, limits that allow the subflows. The receiver announces nothing (no
        `signal` endpoint): both together would make two subflows on one path."""
        plan = self.plan
        n = max(
            [len(f.subflows) for f in plan.flows if host in (f.src, f.dst) and f.subflows],
            default=0,
        )
        if n == 0:
            return
        _sh("ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.mptcp.enabled=1")
        _sh(
            "ip",
            "-n",
            ns,
            "mptcp",
            "limits",
            "set",
            "subflows",
            str(n),
            "add_addr_accepted",
            str(n),
        )
        for k in range(1, plan.n_addrs.get(host, 1)):
            addr = plan.addr(host, k)
            _sh("ip", "-n", ns, "addr", "add", f"{addr}/32", "dev", "ptb0")
            table = str(100 + k)
            _sh(
                "ip",
                "-n",
                ns,
                "route",
                "add",
                "10.99.0.0/16",
                "dev",
                "ptb0",
                "src",
                addr,
                "table",
                table,
            )
            _sh("ip", "-n", ns, "rule", "add", "from", addr, "table", table)
            at, backup = plan.endpoints.get((host, k), (None, False))
            endpoint = ["mptcp", "endpoint", "add", addr, "dev", "ptb0", "subflow"]
            endpoint += ["backup"] if backup else []
            if at is None:
                _sh("ip", "-n", ns, *endpoint)
                continue
            # A subflow with a `start`: its endpoint is added then, and the in-kernel path
            # manager opens the subflow on the connections from this host at once. The run's
            # start is fixed now (run() keeps it) to place that time.
            if getattr(self, "t0", None) is None:
                self.t0 = time.time_ns() + 3_000_000_000
            delay = max(0.0, (self.t0 + at - time.time_ns()) / 1e9)
            self.procs.append(
                subprocess.Popen(
                    ["sh", "-c", f"sleep {delay:.6f}; exec ip -n {ns} {' '.join(endpoint)}"],
                    stdout=subprocess.DEVNULL,
                    stderr=open(Path(self.workdir, f"endpoint-{ns}-{k}.err"), "w"),
                )
            )

    def _subflow_state(self) -> dict[tuple[str, str, int], dict[str, float]]:
        """Every MPTCP subflow's TCP state now, from `ss -tin` in its sender's namespace
        (the subflows are TCP sockets there), keyed (sender host, local address, remote port)."""
        out: dict[tuple[str, str, int], dict[str, float]] = {}
        for host in {f.src for f in self.plan.flows if f.subflows}:
            ns = self.namespaces[self.plan.hosts.index(host)]
            p = _sh("ip", "netns", "exec", ns, "ss", "-tinH", check=False)
            out.update({(host, *k): v for k, v in _parse_ss(p.stdout).items()})
        return out

    def _namespace_counters(self) -> dict[str, dict[str, int]]:
        """Every sender namespace's TCP counters now (`/proc/net/snmp` and `/proc/net/netstat`
        read inside it: the `Tcp`, `TcpExt` and `MPTcpExt` lines nstat shows), keyed by host."""
        out: dict[str, dict[str, int]] = {}
        for host in sorted({f.src for f in self.plan.flows}):
            ns = self.namespaces[self.plan.hosts.index(host)]
            p = _sh("ip", "netns", "exec", ns, "cat", "/proc/net/snmp", "/proc/net/netstat",
                    check=False)  # fmt: skip
            out[host] = _parse_proc_counters(p.stdout)
        return out

    def _exec(self, host: str, cpu: int, argv: list[str], log: str) -> subprocess.Popen:
        ns = self.namespaces[self.plan.hosts.index(host)]
        p = subprocess.Popen(
            ["ip", "netns", "exec", ns, "taskset", "-c", str(cpu), *argv],
            stdout=subprocess.DEVNULL,
            stderr=open(Path(self.workdir, log), "w"),
        )
        self.procs.append(p)
        return p

    # -- the run ------------------------------------------------------------------------
    def run(self) -> TestbedResult:
        plan = self.plan
        flowbin = _binary("plait-tcpflow")
        sample = plan.sample_ns or 100_000_000
        t0 = getattr(self, "t0", None) or time.time_ns() + 2_000_000_000  # endpoints set up before
        ncpu = os.cpu_count() or 1
        send_cpu = 0
        recv_cpu = int(os.environ.get("PLAIT_TESTBED_RECV_CPU", self.emu_cpu))
        servers, clients = [], []
        for f in plan.flows:
            rep = str(Path(self.workdir, f"server-{f.port}.json"))
            servers.append(
                (
                    f,
                    rep,
                    self._exec(
                        f.dst,
                        recv_cpu,
                        [
                            flowbin,
                            "server",
                            "--listen",
                            f"{plan.addr(f.dst)}:{f.port}",
                            "--t0-ns",
                            str(t0),
                            "--sample-ns",
                            str(sample),
                            "--report",
                            rep,
                            *(["--mptcp"] if f.subflows else []),
                        ],
                        f"server-{f.port}.err",
                    ),
                )
            )
        deadline = time.monotonic() + 5
        for f, rep, p in servers:
            while not Path(rep + ".listening").exists():
                if p.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"flow {f.name}: receiver did not start")
                time.sleep(0.01)
        for f in plan.flows:
            rep = str(Path(self.workdir, f"client-{f.port}.json"))
            argv = [
                flowbin,
                "client",
                "--connect",
                f"{plan.addr(f.dst)}:{f.port}",
                "--cc",
                f.cc,
                "--t0-ns",
                str(t0),
                "--start-ns",
                str(f.start_ns),
                "--stop-ns",
                str(f.stop_ns),
                "--sample-ns",
                str(sample),
                "--mark-ns",
                str(plan.warmup_ns),
                "--report",
                rep,
            ]
            if f.bytes is not None:
                argv += ["--bytes", str(f.bytes)]
            if f.mss is not None:
                argv += ["--mss", str(f.mss)]
            if f.subflows:
                argv.append("--mptcp")
            clients.append(
                (
                    f,
                    rep,
                    self._exec(f.src, send_cpu if ncpu > 1 else 0, argv, f"client-{f.port}.err"),
                )
            )
        # Warm-up mark, then the end; sleeps are bounded by the scenario's duration.
        mark_at = t0 + plan.warmup_ns
        end_at = t0 + plan.duration_ns
        _sleep_until(mark_at)
        assert self.emulator is not None
        self.emulator.send_signal(signal.SIGUSR1)
        self.counters_mark = self._namespace_counters()
        self.subflows_mark = self._subflow_state()
        _sleep_until(end_at)
        # The window's end: the emulator snapshots its counters now (SIGUSR2 -> emulator.json.end),
        # not when it stops after the endpoints, whose shutdown would count as idle link time.
        self.emulator.send_signal(signal.SIGUSR2)
        self.counters_end = self._namespace_counters()
        self.subflows_end = self._subflow_state()
        for _, _, p in clients:
            _stop(p, 2.0)
        for _, _, p in servers:
            _stop(p, 2.0)
        _stop(self.emulator, 5.0)
        self.emulator = None
        return self.collect(servers, clients)

    def collect(self, servers, clients) -> TestbedResult:
        plan = self.plan
        emu = _read_json(Path(self.workdir, "emulator.json"))
        mark = _read_json(Path(self.workdir, "emulator.json.mark"))
        # The counters at the window's end (the final stats when the snapshot is missing).
        win = _read_json(Path(self.workdir, "emulator.json.end")) or emu
        kernel = os.uname().release
        lat = emu["lateness"]
        bottleneck = plan.bottleneck_bps()
        tx_ns = FULL_PACKET_BYTES * 8 * 1e9 / bottleneck
        flagged = lat["p99_ns"] > tx_ns / 10
        values = (kernel, lat["p50_ns"] / 1e3, lat["p99_ns"] / 1e3, lat["max_ns"] / 1e3, flagged)
        timing = dict(zip(TIMING_COLUMNS, values))
        window_s = (plan.duration_ns - plan.warmup_ns) / 1e9
        nstat = _counter_deltas(
            getattr(self, "counters_mark", {}), getattr(self, "counters_end", {})
        )
        sockets: dict[str, dict[str, int | None]] = {}
        flows, series, paths = [], [], []
        for (f, srep, _), (_, crep, _) in zip(servers, clients):
            s = _read_json(Path(srep))
            c = _read_json(Path(crep))
            samples = s.get("samples", [])
            at_warmup = _cumulative_at(samples, plan.warmup_ns)
            at_end = _cumulative_at(samples, plan.duration_ns)
            infos = c.get("tcp_info") or []
            info = infos[-1]["info"] if infos else {}
            # TCP_INFO counts from the connection's start: subtract its reading at the end of
            # the warm-up (the sender's `mark`; else the last sample by then), so that the
            # counters cover the window as plait run's do. A flow that starts after the
            # warm-up counts from its start, as in the simulator.
            before = {}
            if f.start_ns < plan.warmup_ns:
                for row in infos:
                    if row["t_ns"] <= plan.warmup_ns:
                        before = row["info"]
                if c.get("mark"):
                    before = c["mark"]["info"]
            if f.subflows:
                # TCP_INFO on an MPTCP socket is one subflow's: not the connection's counters.
                info, before = {}, {}
                span_s = (win["duration_ns"] - (mark["duration_ns"] if mark else 0)) / 1e9
                rows = _mptcp_paths(f, plan, win, mark, span_s, timing)
                _add_subflow_state(rows, f, getattr(self, "subflows_mark", {}),
                                   getattr(self, "subflows_end", {}))  # fmt: skip
                sockets[f.name] = {"subflows": _add_subflow_timeouts(rows, c, f, plan)}
                paths.extend(rows)
            if info:
                sockets[f.name] = {
                    "info_len": info.get("info_len"),
                    # Payload bytes per segment the kernel sent with (a gauge, not a count).
                    "snd_mss": info.get("snd_mss"),
                    **{k: _since(info, before, k) for k in SOCKET_COUNTERS},
                }
            if plan.sample_ns:  # as plait run: series only with a sample_interval
                series.extend(_series(f.name, infos, samples, plan))
            flows.append(
                {
                    "name": f.name,
                    "kind": "mptcp" if f.subflows else "tcp",
                    "cc": f"uncoupled:{f.cc}" if f.subflows else f.cc,
                    "src": f.src,
                    "dst": f.dst,
                    "aggregate_name": "",
                    "start_s": f.start_ns / 1e9,
                    "goodput_bps": (at_end - at_warmup) * 8 / window_s if window_s > 0 else None,
                    "throughput_bps": None,
                    "bytes_delivered": at_end - at_warmup,
                    "packets_sent": _since(info, before, "data_segs_out"),
                    "retransmissions": _since(info, before, "total_retrans"),
                    "fast_retransmits": _sole_sender_count(f, plan, nstat, RECOVERY_COUNTERS),
                    # RTOs from the socket (tcpi_total_rto, Linux 6.7+), else the namespace's.
                    "timeouts": _since(info, before, "total_rto")
                    if info.get("total_rto") is not None
                    else _sole_sender_count(f, plan, nstat, TIMEOUT_COUNTERS),
                    "drops": _flow_drops(win, f.port) - _flow_drops(mark, f.port),
                    "rtt_samples": None,
                    "rtt_mean_s": info["rtt_us"] / 1e6 if info else None,
                    "rtt_min_s": info["min_rtt_us"] / 1e6 if info else None,
                    "rtt_p50_s": None,
                    "rtt_p95_s": None,
                    "rtt_p99_s": None,
                    "rtt_max_s": None,
                    "completion_s": (s["last_byte_ns"] - f.start_ns) / 1e9
                    if f.bytes is not None and s.get("bytes") == f.bytes and s.get("last_byte_ns")
                    else None,
                    "client_error": c.get("error"),
                    **timing,
                }
            )
        links = []
        duration_s = win["duration_ns"] / 1e9
        mark_s = mark["duration_ns"] / 1e9 if mark else 0.0
        for i, (d, e) in enumerate(zip(plan.links, win["links"])):
            m = mark["links"][i] if mark else None

            def delta(key: str, e=e, m=m) -> float:
                return e[key] - (m[key] if m else 0)

            span = duration_s - mark_s
            links.append(
                {
                    "name": d.name,
                    "direction": d.direction,
                    "from": d.src,
                    "to": d.dst,
                    "rate_bps": d.rate_bps,
                    "utilization": delta("busy_ns") / 1e9 / span if span > 0 else None,
                    "tx_packets": delta("departed_packets"),
                    "tx_bytes": delta("departed_bytes"),
                    "drops": delta("dropped_queue"),
                    "loss_drops": delta("dropped_loss"),
                    "down_drops": delta("dropped_down"),
                    # Time averages over the window of the packets and bytes waiting (the one
                    # in service not counted), as plait run's (docs/results.md): the growth of
                    # the emulator's integrals between its two snapshots over the time between.
                    "mean_queue_packets": delta("queue_packet_ns") / 1e9 / span
                    if span > 0
                    else None,
                    "mean_queue_bytes": delta("queue_byte_ns") / 1e9 / span if span > 0 else None,
                    "max_queue_packets": e["max_queue_packets"],
                    **timing,
                }
            )
        summary = {
            "seed": plan.seed,
            "duration_s": plan.duration_ns / 1e9,
            "warmup_s": plan.warmup_ns / 1e9,
            "flows": flows,
            "links": links,
            "paths": paths,
            "jain_fairness": _jain([f["goodput_bps"] or 0 for f in flows]),
            "events": None,
            "delivered_packets": emu["delivered_packets"],
            "wall_seconds": None,
            "testbed": {
                **timing,
                "lateness_p999_us": lat["p999_ns"] / 1e3,
                "lateness_packets": lat["packets"],
                "late_over_1ms": lat["over_1ms"],
                "bottleneck_tx_us": tx_ns / 1e3,
                "sched_fifo": emu["sched_fifo"],
                "pinned": emu["pinned"],
                "keep_awake": emu["keep_awake"],
                "emulator_write_errors": emu["write_errors"],
                "emulator_no_route_packets": emu["no_route_packets"],
                # The scenario's `[testbed] sim_only` keys, left out of this run.
                "sim_only_ignored": list(plan.sim_only),
                # Over the window (warm-up mark to end), docs/testbed.md "What it measures".
                "tcp_info": sockets,
                "nstat": nstat,
            },
        }
        return TestbedResult(summary, flows, links, series)

    # -- clean-up -----------------------------------------------------------------------
    def cleanup(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        if self.emulator is not None and self.emulator.poll() is None:
            self.emulator.kill()
            self.emulator.wait()
        for ns in self.namespaces:
            _delete_netns(ns)
        shutil.rmtree(self.workdir, ignore_errors=True)
        if self.lock_fd is not None:
            os.close(self.lock_fd)


def _sleep_until(t_ns: int) -> None:
    while True:
        left = (t_ns - time.time_ns()) / 1e9
        if left <= 0:
            return
        time.sleep(min(left, 0.2))


def _stop(p: subprocess.Popen, timeout: float) -> None:
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None if path.name.endswith((".mark", ".end")) else {}


def _series(name: str, infos: list, samples: list, plan: Plan) -> list[dict[str, Any]]:
    """`flow_series` rows as `plait run` writes them, at the sample ticks (multiples of the
    interval from the run's origin, which the sender and receiver share): cwnd (packets ×
    MSS) and srtt from TCP_INFO, goodput from the bytes delivered since the previous tick;
    what the kernel cannot give is None."""
    interval = plan.sample_ns
    by_tick: dict[int, dict[str, Any]] = {}

    def row(t: int) -> dict[str, Any]:
        return by_tick.setdefault(
            t,
            {
                "time_s": t / 1e9,
                "flow": name,
                "cwnd_bytes": None,
                "srtt_s": None,
                "goodput_bps": None,
                "allowed_rate_bps": None,
                "loss_event_rate": None,
                "packets_per_loss_event": None,
            },
        )

    for sample in infos:
        t = sample["t_ns"]
        if t % interval == 0 and t <= plan.duration_ns:
            info = sample["info"]
            r = row(t)
            r["cwnd_bytes"] = info["snd_cwnd"] * info["snd_mss"]
            r["srtt_s"] = info["rtt_us"] / 1e6
    previous = None
    for t, delivered in samples:
        if t % interval == 0 and t <= plan.duration_ns:
            if previous is not None and previous[0] == t - interval:
                row(t)["goodput_bps"] = (delivered - previous[1]) * 8 / (interval / 1e9)
            previous = (t, delivered)
    return [by_tick[t] for t in sorted(by_tick)]


def _mptcp_paths(f, plan: Plan, emu: dict, mark: dict | None, span_s: float, timing: dict):
    """`paths` rows of an MPTCP flow, one per subflow, from the emulator's per-address-pair
    counters between its warm-up snapshot and its end (`span_s`, as the links table): what the
    wire delivered to the receiver (IP packets and bytes, headers included); the columns the
    kernel does not give per subflow are None."""

    def delivered(stats: dict | None, src: str, dst: str) -> tuple[int, int]:
        for r in (stats or {}).get("routes", []):
            if r["src"] == src and r["dst"] == dst:
                return r["delivered_packets"], r["delivered_bytes"]
        return 0, 0

    rows = []
    for k, (_, _, nodes) in enumerate(f.subflows):
        src, dst = plan.addr(f.src, k), plan.addr(f.dst)
        (pe, be), (pm, bm) = delivered(emu, src, dst), delivered(mark, src, dst)
        rows.append(
            {
                "flow": f.name,
                "path": k,
                "route": ">".join(nodes),
                "reverse_route": ">".join(reversed(nodes)),
                "src_addr": src,
                "dst_addr": dst,
                "wire_packets": pe - pm,
                "wire_bytes": be - bm,
                "wire_bps": (be - bm) * 8 / span_s if span_s > 0 else None,
                "packets_sent": None,
                "throughput_bps": None,
                "fast_retransmits": None,
                "timeouts": None,
                "rtt_samples": None,
                "rtt_mean_s": None,
                "rtt_min_s": None,
                "bytes_sent": None,
                "retransmissions": None,
                "new_data_bytes": None,
                "reinjected_bytes": None,
                "data_share": None,
                "cwnd_mean_bytes": None,
                "cwnd_max_bytes": None,
                "penalisations": None,
                **timing,
            }
        )
    total = sum(r["wire_bytes"] for r in rows)
    for r in rows:
        r["wire_share"] = r["wire_bytes"] / total if total else None
    return rows


_SS_FIELDS = re.compile(
    r"(?:^|\s)(rtt|minrtt|cwnd|bytes_sent|bytes_retrans|data_segs_out|retrans)"
    r":([0-9.]+)(?:/([0-9.]+))?"
)


def _parse_ss(text: str) -> dict[tuple[str, int], dict[str, float]]:
    """`ss -tinH` output: per socket (local address, remote port), its numeric fields (`rtt`
    the smoothed RTT in ms, `minrtt`, `cwnd` in segments, `bytes_sent`, `bytes_retrans`,
    `data_segs_out`, `retrans` the total retransmitted segments of `retrans:now/total`)."""
    out: dict[tuple[str, int], dict[str, float]] = {}
    key = None
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            parts = line.split()
            # State Recv-Q Send-Q Local:Port Peer:Port
            if len(parts) >= 5 and ":" in parts[3] and ":" in parts[4]:
                local = parts[3].rsplit(":", 1)[0].split("%")[0]
                key = (local, int(parts[4].rsplit(":", 1)[1]))
                out[key] = {}
            else:
                key = None
        elif key is not None:
            for name, a, b in _SS_FIELDS.findall(line):
                out[key][name] = float(b if name == "retrans" and b else a)
    return out


def _add_subflow_state(rows: list, f, mark: dict, end: dict) -> None:
    """Fills the `paths` rows of MPTCP flow `f` with its subflows' TCP state from `ss`: bytes
    and data segments sent and segments retransmitted between the warm-up's end and the run's
    end, the smoothed and minimum RTT at the end. A subflow `ss` did not see keeps nulls."""
    for r in rows:
        now = end.get((f.src, r["src_addr"], f.port))
        if not now:
            continue
        before = mark.get((f.src, r["src_addr"], f.port), {})

        def grown(key: str, now=now, before=before) -> int | None:
            return int(now[key] - before.get(key, 0)) if key in now else None

        r["bytes_sent"] = grown("bytes_sent")
        r["packets_sent"] = grown("data_segs_out")
        r["retransmissions"] = grown("retrans")
        r["rtt_mean_s"] = now["rtt"] / 1e3 if "rtt" in now else None
        r["rtt_min_s"] = now["minrtt"] / 1e3 if "minrtt" in now else None


def _add_subflow_timeouts(rows: list, c: dict, f, plan: Plan) -> dict[str, dict]:
    """Fills the `paths` rows' `timeouts` with each subflow's `tcpi_total_rto` over the window,
    from the TCP_INFO of every subflow the sender read (MPTCP_TCPINFO) at the warm-up mark and
    at its end, matched by local address; returns each subflow's counter deltas (for the
    summary). A subflow absent at the mark joined after it and counts from its start; without
    a reading at the mark (or a kernel without tcpi_total_rto) the row's timeouts stay null."""
    end = {e["local"]: e["info"] for e in c.get("subflows_end") or []}
    marked = c.get("subflows_mark")
    before_all = {e["local"]: e["info"] for e in marked or []}
    usable = marked is not None or f.start_ns >= plan.warmup_ns
    out: dict[str, dict] = {}
    for r in rows:
        now = end.get(r["src_addr"])
        if not now or not usable:
            continue
        before = before_all.get(r["src_addr"], {})
        r["timeouts"] = _since(now, before, "total_rto")
        out[r["src_addr"]] = {
            "info_len": now.get("info_len"),
            **{k: _since(now, before, k) for k in SOCKET_COUNTERS},
        }
    return out


def _since(info: dict, before: dict, key: str) -> int | None:
    """A TCP_INFO counter's growth since `before` (None when the kernel gave nothing: an
    absent key, or a field its `struct tcp_info` is too short for)."""
    if info.get(key) is None:
        return None
    return info[key] - (before.get(key) or 0)


#: TCP_INFO counters whose growth over the window the summary gives per flow
#: (`testbed.tcp_info`), besides `info_len`, the bytes of `struct tcp_info` the kernel filled.
SOCKET_COUNTERS = (
    "segs_out",
    "data_segs_out",
    "delivered",
    "total_retrans",
    "bytes_sent",
    "bytes_retrans",
    "dsack_dups",
    "total_rto",
    "total_rto_recoveries",
    "total_rto_time_ms",
)
#: Loss-recovery episodes entered on duplicate ACKs or SACK (net/ipv4/tcp_input.c,
#: tcp_enter_recovery: one of the two per episode, by whether the connection uses SACK).
RECOVERY_COUNTERS = ("TcpExtTCPSackRecovery", "TcpExtTCPRenoRecovery")
#: Retransmission timeouts that fired (net/ipv4/tcp_timer.c, tcp_retransmit_timer; recurring
#: ones included).
TIMEOUT_COUNTERS = ("TcpExtTCPTimeouts",)
#: Lines of /proc/net/snmp and /proc/net/netstat kept, and the values that are not counters
#: (gauges of open connections, constants): no delta for them.
COUNTER_PREFIXES = ("Tcp", "TcpExt", "MPTcpExt")
NOT_COUNTERS = {
    "TcpRtoAlgorithm",
    "TcpRtoMin",
    "TcpRtoMax",
    "TcpMaxConn",
    "TcpCurrEstab",
    "MPTcpExtMPCurrEstab",
}


def _parse_proc_counters(text: str) -> dict[str, int]:
    """`/proc/net/snmp` and `/proc/net/netstat`: each group is a line of names and a line of
    values under the same prefix (`TcpExt: SyncookiesSent ...` then `TcpExt: 0 ...`); kept as
    nstat names them (`TcpExtTCPSackRecovery`), for the prefixes in COUNTER_PREFIXES."""
    out: dict[str, int] = {}
    header: tuple[str, list[str]] | None = None
    for line in text.splitlines():
        prefix, sep, rest = line.partition(":")
        if not sep:
            header = None
            continue
        fields = rest.split()
        if (
            header is not None
            and header[0] == prefix
            and fields
            and fields[0].lstrip("-").isdigit()
        ):
            if prefix in COUNTER_PREFIXES:
                out.update({prefix + n: int(v) for n, v in zip(header[1], fields)})
            header = None
        else:
            header = (prefix, fields)
    return out


def _counter_deltas(
    mark: dict[str, dict[str, int]], end: dict[str, dict[str, int]]
) -> dict[str, dict[str, int]]:
    """Per host, each counter's growth from the warm-up mark to the end (every counter both
    readings have; gauges and constants left out)."""
    return {
        host: {
            k: v - mark[host][k]
            for k, v in sorted(now.items())
            if k in mark.get(host, {}) and k not in NOT_COUNTERS
        }
        for host, now in end.items()
        if host in mark
    }


def _sole_sender_count(f, plan: Plan, nstat: dict, names: tuple[str, ...]) -> int | None:
    """The sum of the namespace counters `names` over the window, for flow `f` when it is the
    only flow with an endpoint in its sender's namespace (its subflows are all its own), so
    that the namespace's count is the flow's; None otherwise, or when a counter is missing."""
    alone = all(g is f or f.src not in (g.src, g.dst) for g in plan.flows)
    counters = nstat.get(f.src, {})
    if not alone or any(n not in counters for n in names):
        return None
    return sum(counters[n] for n in names)


def _flow_drops(emu: dict | None, port: int) -> int:
    """Drops of the flow whose receiver listens on `port`, both directions, all links, from
    the emulator's counters keyed `proto:src:sport>dst:dport`."""
    if not emu:
        return 0
    return sum(
        v["queue"] + v["loss"] + v.get("down", 0)
        for link in emu["links"]
        for k, v in link["dropped_by_flow"].items()
        if k.endswith(f":{port}") or f":{port}>" in k
    )


def _cumulative_at(samples: list, t_ns: int) -> int:
    """Bytes delivered by time t: the last sample at or before it."""
    out = 0
    for t, b in samples:
        if t <= t_ns:
            out = b
        else:
            break
    return out


def _jain(x: list[float]) -> float | None:
    s, q = sum(x), sum(v * v for v in x)
    return s * s / (len(x) * q) if q > 0 else None


def run_plan(plan: Plan, pcaps: dict[str, str] | None = None) -> TestbedResult:
    """Runs `plan` on this machine's kernel; everything it created is removed when it returns
    or raises (KeyboardInterrupt included). `pcaps` maps link names to files that receive what
    crossed the link, both directions (libpcap, raw IPv4)."""
    check_machine()
    for f in plan.flows:
        ccs = getattr(check_machine, "ccs", None)
        if ccs is not None and f.cc not in ccs and f.cc != "reno":
            raise Refusal(f"flow {f.name}: cc `{f.cc}` is not available in this kernel")
    if any(f.subflows for f in plan.flows) and not Path("/proc/sys/net/mptcp").is_dir():
        raise Refusal("this kernel has no MPTCP (/proc/sys/net/mptcp)")
    if not math.isfinite(plan.duration_ns):
        raise Refusal("duration must be finite")
    run = _Run(plan)
    run.pcaps = pcaps or {}
    try:
        run.lock()
        clean_leftovers()
        run.setup()
        return run.run()
    finally:
        run.cleanup()
