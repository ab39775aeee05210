"""ns-2 checks behind the causes in README.md (needs Debian's `ns`, ns-2.35; about 5 minutes).

`python experiments/multfrc/ns2_checks.py` writes, under results/sensitivity/:

- `ns2_tfrc_vs_tcp.csv`: n TFRC flows (the n = 1 case of MulTFRC, which ns-2 has) against n
  Reno flows on friendliness.toml's 32 Mb/s link with our earlier RED (packet mode, thresholds
  BDP/4 and 3 BDP/4, w_q = 0.002), n = 16, 32, 64; and on influence.toml's 8 Mb/s link with a
  DropTail of one BDP (31 packets), n = 4 and 16. plait and ns-2, seeds 1 and 2 (1-3 for
  DropTail), through `plait.ns2.compare`.
- `ns2_auto_red.csv`: ns-2 with its own automatic RED (every Queue/RED default: byte mode,
  thresh_ 0, maxthresh_ 0, q_weight_ -1, mean_pktsize_ 500; limit 735 × 500 bytes = 2 BDP) on
  the 32 Mb/s link: MulTCP(n) against n Reno flows, n = 1, 2, 4, 8, and n TFRC against n
  Reno, n = 8 and 32; seeds 1-3. The harness translates only packet-mode RED, so the script
  it writes is edited (queue lines) before ns-2 runs it.
- `ns2_equation_droptail.csv`: equation_droptail.toml in ns-2 (Agent/TCP/Sack1), n = 5 and
  10, 1-64 Mb/s, seeds 1 and 2, analysed as the experiment analyses plait's runs: the data
  drops traced at the bottleneck (`trace-queue`) between 10 and 60 s grouped into loss events
  by the flows' mean RTT (their srtt_ sampled every 0.1 s), the sending rate from ndatapack_,
  against plait.models.multfrc_rate.
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from plait import models, ns2
from plait.experiments import multfrc as mt

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "sensitivity"
EXACT = {"tcp.exact_timing": True}


def tfrc_scenario(work: Path) -> Path:
    """friendliness.toml with `count` TFRC flows in MulTFRC's place."""
    text = mt.FRIENDLINESS.read_text()
    text = text.replace('kind = "multfrc"\nn = 1\n', 'kind = "tfrc"\ncount = 1\n')
    assert 'kind = "tfrc"' in text
    path = work / "tfrc_vs_tcp.toml"
    path.write_text(text)
    return path


def tfrc_vs_tcp(work: Path) -> pd.DataFrame:
    scenario = tfrc_scenario(work)
    cases = [("red (ours)", 32, None, n, (1, 2)) for n in (16, 32, 64)] + [
        ("droptail 1 BDP", 8, mt.droptail_queue(8), n, (1, 2, 3)) for n in (4, 16)
    ]
    rows = []
    for queue, mbps, q, n, seeds in cases:
        over = {"flow.agg.count": n, "flow.tcp.count": n, **EXACT}
        if q is not None:
            over |= {"link.bottleneck.rate": f"{mbps}Mbps", "link.bottleneck.queue": q}
        flows, _ = ns2.compare(scenario, list(seeds), over)
        flows["side"] = np.where(flows["cc"] == "tfrc", "tfrc", "tcp")
        for (sim, seed), f in flows.groupby(["simulator", "seed"]):
            t, r = f[f.side == "tfrc"], f[f.side == "tcp"]
            rows.append(
                {
                    "queue": queue,
                    "capacity_mbps": mbps,
                    "n": n,
                    "simulator": sim,
                    "seed": seed,
                    "tfrc_over_tcp": t.goodput_bps.mean() / r.goodput_bps.mean(),
                    "tfrc_drop_rate": t.drops.sum() / t.packets_sent.sum(),
                    "tcp_drop_rate": r.drops.sum() / r.packets_sent.sum(),
                    "tcp_timeouts_per_flow": r.timeouts.mean(),
                }
            )
    return pd.DataFrame(rows)


def with_auto_red(script: str) -> str:
    """An ns-2 script of the harness (packet-mode RED) turned to ns-2's own RED defaults."""
    edits = [
        (r"Queue/RED set bytes_ false[^\n]*", "Queue/RED set bytes_ true"),
        (r"Queue/RED set queue_in_bytes_ false", "Queue/RED set queue_in_bytes_ true"),
        (r"Queue/RED set thresh_ \S+", "Queue/RED set thresh_ 0"),
        (r"Queue/RED set maxthresh_ \S+", "Queue/RED set maxthresh_ 0"),
        (r"Queue/RED set q_weight_ \S+", "Queue/RED set q_weight_ -1"),
        (r"Queue/RED set mean_pktsize_ \S+", "Queue/RED set mean_pktsize_ 500"),
        # 245 packets of 1500 bytes (2 BDP): limit_ counts mean_pktsize_ bytes in byte mode.
        (r"(\$ns queue-limit \$n\(\d\) \$n\(\d\)) 245", r"\1 735"),
    ]
    for pattern, new in edits:
        script, count = re.subn(pattern, new, script)
        assert count, pattern
    return script


def auto_red(work: Path) -> pd.DataFrame:
    original = ns2.tcl
    ns2.tcl = lambda s, *a, **k: with_auto_red(original(s, *a, **k))
    try:
        rows = []
        scenario = tfrc_scenario(work)
        cases = [("multcp", n) for n in (1, 2, 4, 8)] + [("tfrc", n) for n in (8, 32)]
        for kind, n in cases:
            for seed in (1, 2, 3):
                over = {"flow.tcp.count": n, "simulation.seed": seed, **EXACT}
                if kind == "multcp":
                    path = mt.FRIENDLINESS_MULTCP
                    over["flow.agg.cc"] = mt.multcp_value(n)
                else:
                    path = scenario
                    over["flow.agg.count"] = n
                f = ns2.run(ns2.from_plait(path, overrides=over)).flows
                agg, tcp = f[f.cc != "reno"], f[f.cc == "reno"]
                rows.append(
                    {
                        "kind": kind,
                        "n": n,
                        "seed": seed,
                        "normalised": agg.goodput_bps.sum() / (n * tcp.goodput_bps.mean()),
                        "agg_drop_rate": agg.drops.sum() / agg.packets_sent.sum(),
                        "tcp_drop_rate": tcp.drops.sum() / tcp.packets_sent.sum(),
                        "agg_timeouts": agg.timeouts.sum(),
                        "tcp_timeouts_per_flow": tcp.timeouts.mean(),
                    }
                )
        return pd.DataFrame(rows)
    finally:
        ns2.tcl = original


def equation_droptail(work: Path) -> pd.DataFrame:
    trace, rtts = work / "drops.tr", work / "rtt.txt"
    original = ns2.tcl

    def traced(s, *a, **k):
        t = original(s, *a, **k)
        link = t.index("$ns duplex-link $n(1) $n(2) ")
        end = t.index("\n", link) + 1
        t = t[:end] + f"$ns trace-queue $n(1) $n(2) [open {trace} w]\n" + t[end:]
        sampler = (
            f"set rttf [open {rtts} w]\n"
            "proc rtts {} { global ns tcp rttf; "
            "for {set i 0} {[info exists tcp($i)]} {incr i} "
            '{ puts $rttf "[$tcp($i) set srtt_] [$tcp($i) set tcpTick_]" }; '
            '$ns at [expr [$ns now] + 0.1] "rtts" }\n'
            f'$ns at {mt.EQ_WARMUP_S} "rtts"\n'
        )
        return t.replace("$ns run", sampler + "$ns run")

    ns2.tcl = traced
    try:
        rows = []
        for mbps in (1, 2, 4, 8, 16, 64):
            packets = max(2, round(mbps * 1e6 * mt.EQ_DROPTAIL_RTT / (8 * mt.PACKET_BYTES)))
            for n in (5, 10):
                for seed in (1, 2):
                    over = {
                        "link.bottleneck.rate": f"{mbps}Mbps",
                        "link.bottleneck.queue": {"kind": "droptail", "packets": packets},
                        "flow.tcp.count": n,
                        "simulation.seed": seed,
                        "simulation.trace_drops": False,
                        **EXACT,
                    }
                    f = ns2.run(ns2.from_plait(mt.EQUATION_DROPTAIL, overrides=over)).flows
                    sent = float(f.packets_sent.sum())
                    drops = [
                        float(e[1])
                        for e in (line.split() for line in trace.read_text().splitlines())
                        if e[0] == "d" and e[4] == "tcp"
                    ]
                    drops = [t for t in drops if mt.EQ_WARMUP_S <= t <= mt.EQ_DURATION_S]
                    # srtt_ is kept in ticks scaled by 2^T_SRTT_BITS = 8 (tcp/tcp.cc).
                    sampled = np.loadtxt(rtts)
                    rtt = float(np.mean(sampled[:, 0] * sampled[:, 1] / 8))
                    sizes = mt.loss_event_sizes(drops, rtt)
                    p, j = len(sizes) / sent, float(np.mean(sizes))
                    rate = sent * mt.SEGMENT_BYTES / (mt.EQ_DURATION_S - mt.EQ_WARMUP_S)
                    predicted = float(models.multfrc_rate(n, p, j, rtt, mt.SEGMENT_BYTES))
                    rows.append(
                        {
                            "capacity_mbps": mbps,
                            "n": n,
                            "seed": seed,
                            "rtt_s": rtt,
                            "loss_event_rate": p,
                            "packets_per_loss_event": j,
                            "timeouts": int(f.timeouts.sum()),
                            "ratio": rate / predicted,
                        }
                    )
        return pd.DataFrame(rows)
    finally:
        ns2.tcl = original


def main() -> int:
    if ns2.find_ns() is None:
        print("ns2_checks: ns-2 is not installed (apt-get install ns2)", file=sys.stderr)
        return 2
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="multfrc-ns2-") as tmp:
        work = Path(tmp)
        for name, check in (
            ("ns2_tfrc_vs_tcp.csv", tfrc_vs_tcp),
            ("ns2_auto_red.csv", auto_red),
            ("ns2_equation_droptail.csv", equation_droptail),
        ):
            frame = check(work)
            frame.to_csv(OUT / name, index=False)
            print(name, "\n", frame.groupby(list(frame.columns[:2])).mean(numeric_only=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
