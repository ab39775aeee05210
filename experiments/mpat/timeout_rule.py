"""MulTCP's ssthresh after a timeout: the sensitivity behind claims 22 and 25 (README).

Runs multcp_scaling.toml (N = 4, 20, 50) and multcp_pairs.toml (Table 1's ten pairs) with
`timeout_ssthresh = "half"` (plait's default, FlightSize/2, RFC 5681 eq. (4)) and "multcp"
((1 - 1/(2N))·FlightSize), seeds 1-3, 200 s with the first 20 s discarded, and writes
timeout_rule_scaling.csv and timeout_rule_pairs.csv into the folder given (the committed ones
are in results/sensitivity/):

    python experiments/mpat/timeout_rule.py OUT_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import plait
from plait.experiments import mpat

RULES = ("half", "multcp")
SCALING_N = (4, 20, 50)
SEEDS = (1, 2, 3)


def _cc(n: int, rule: str) -> dict:
    return {"name": "multcp", "n": n, "timeout_ssthresh": rule}


def scaling() -> pd.DataFrame:
    rows = []
    for rule in RULES:
        for n in SCALING_N:
            for seed in SEEDS:
                flows = plait.run(
                    mpat.MULTCP_SCALING, seed=seed, overrides={"flow.multcp.cc": _cc(n, rule)}
                ).flows.set_index("name")
                m = flows.loc["multcp"]
                tcp = flows[flows.index.str.startswith("tcp.")]["goodput_bps"].mean()
                rows.append(
                    {
                        "timeout_ssthresh": rule,
                        "n": n,
                        "seed": seed,
                        "timeouts": int(m["timeouts"]),
                        "fast_retransmits": int(m["fast_retransmits"]),
                        "timeout_fraction": round(
                            m["timeouts"] / (m["timeouts"] + m["fast_retransmits"]), 4
                        ),
                        "ratio_to_tcp": round(m["goodput_bps"] / tcp, 3),
                    }
                )
    return pd.DataFrame(rows)


def pairs() -> pd.DataFrame:
    rows = []
    for rule in RULES:
        for n1, n2 in mpat.PAIRS:
            for seed in SEEDS:
                overrides = {"flow.m1.cc": _cc(n1, rule), "flow.m2.cc": _cc(n2, rule)}
                g = plait.run(mpat.MULTCP_PAIRS, seed=seed, overrides=overrides).flows
                g = g.set_index("name")["goodput_bps"]
                rows.append(
                    {
                        "timeout_ssthresh": rule,
                        "n1": n1,
                        "n2": n2,
                        "seed": seed,
                        "b1_kBps": round(g["m1"] / 8e3, 1),
                        "b2_kBps": round(g["m2"] / 8e3, 1),
                        "ratio": round(g["m1"] / g["m2"], 3),
                    }
                )
    return pd.DataFrame(rows)


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    scaling().to_csv(out / "timeout_rule_scaling.csv", index=False)
    pairs().to_csv(out / "timeout_rule_pairs.csv", index=False)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]))
