"""An MPTCP subflow and a TCP flow sharing one drop-tail link, from testbed pcaps
(docs/linux.md, "An MPTCP subflow beside a TCP flow").

Capture (a quiet machine, one run at a time; the pcaps are 20-40 MB each, not stored):

    sudo plait testbed run experiments/linux-fidelity/mptcp.toml --seed 1 \\
        --pcap a1 --pcap c1 --pcap p1 --pcap a2 --out DIR --json DIR.json

Usage: analyse.py DIR [WARMUP_S]

Per flow on p1 (the subflow's data crosses a1, the TCP flow's c1; pcap times are the ideal end
of transmission at the emulated link, so an ACK leaving a 1 ms access link reaches the sender
1 ms later): data sent, retransmissions, back-to-back bursts at the 100 Mb/s access link, data
in flight at a send, ACKs per data packet and segments per ACK, and the time from the first
ACK bringing new SACK information for a lost segment to its retransmission; for the
connection, the room left in its receive window (DATA_ACK + window, RFC 8684 §3.3.5) at each
send of new data."""

import collections
import statistics
import struct
import sys
from pathlib import Path

# The capture reader of the host-delay analysis (experiments/phase/kernel/host_delay).
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "phase" / "kernel" / "host_delay"))
from analyse import packets as pcap_records  # noqa: E402

MSS = 1448
ACCESS_S = 0.001  # one-way delay of the access links
SERVICE_S = 125e-6  # a 1500-byte packet at 100 Mb/s is 120 us: closer means back to back


def read(path):
    """Every packet of a capture: time, addresses, seq, ack, window, payload, SACK blocks,
    window scale (SYN), and the MPTCP DSS fields (DATA_ACK, DSN, data-level length)."""
    out = []
    for time, pkt, ihl, total in pcap_records(path):
        t = pkt[ihl:]
        seq, ack = struct.unpack(">II", t[4:12])
        doff = (t[12] >> 4) * 4
        p = dict(t=time, src=pkt[12:16], dst=pkt[16:20], seq=seq, ack=ack)
        p.update(payload=total - ihl - doff, syn=bool(t[13] & 2))
        p.update(win=struct.unpack(">H", t[14:16])[0], sack=[], ws=None)
        p.update(data_ack=None, dsn=None, dlen=None)
        opts, i = t[20:doff], 0
        while i < len(opts) and opts[i] != 0:
            if opts[i] == 1:
                i += 1
                continue
            kind, n = opts[i], opts[i + 1]
            if kind == 3:
                p["ws"] = opts[i + 2]
            elif kind == 5:
                p["sack"] = [struct.unpack(">II", opts[j : j + 8]) for j in range(i + 2, i + n, 8)]
            elif kind == 30 and opts[i + 2] >> 4 == 2:  # MPTCP DSS (RFC 8684 §3.3)
                flags, j = opts[i + 3], i + 4
                if flags & 1:
                    w = 8 if flags & 2 else 4
                    p["data_ack"] = int.from_bytes(opts[j : j + w], "big")
                    j += w
                if flags & 4:
                    w = 8 if flags & 8 else 4
                    p["dsn"] = int.from_bytes(opts[j : j + w], "big")
                    j += w + 4
                    p["dlen"] = struct.unpack(">H", opts[j : j + 2])[0]
            i += n
        out.append(p)
    return out


def after(a, b):
    """Whether sequence number a is after b (32-bit wrap)."""
    return a != b and (a - b) % 2**32 < 2**31


def q(xs, f):
    xs = sorted(xs)
    return xs[int(f * (len(xs) - 1))]


def flow(packets, warmup):
    """The capture's data sender (the address sending most data), its data and the ACKs to it."""
    src = collections.Counter(p["src"] for p in packets if p["payload"]).most_common(1)[0][0]
    data = [p for p in packets if p["src"] == src and p["payload"]]
    acks = [p for p in packets if p["dst"] == src and not p["payload"]]
    return src, [p for p in data if p["t"] > warmup], acks


def per_flow(name, packets, warmup):
    src, data, acks = flow(packets, warmup)
    seen, rtx = set(), 0
    for p in data:
        rtx += p["seq"] in seen
        seen.add(p["seq"])
    bursts, run = [], 1
    for a, b in zip(data, data[1:]):
        if b["t"] - a["t"] < SERVICE_S:
            run += 1
        else:
            bursts.append(run)
            run = 1
    bursts.append(run)
    # In flight at a send: highest byte sent minus the last cumulative ACK that reached the sender.
    arrivals = [(a["t"] + ACCESS_S, a["ack"]) for a in acks]
    flight, k, last_ack, high = [], 0, None, None
    for p in data:
        while k < len(arrivals) and arrivals[k][0] <= p["t"]:
            last_ack = arrivals[k][1]
            k += 1
        end = (p["seq"] + p["payload"]) % 2**32
        high = end if high is None or after(end, high) else high
        if last_ack is not None:
            flight.append(((high - last_ack) % 2**32) / MSS)
    late = [a for a in acks if a["t"] > warmup]
    advanced = collections.Counter()
    for a, b in zip(late, late[1:]):
        d = (b["ack"] - a["ack"]) % 2**32
        if d < 2**31:
            advanced[min(round(d / MSS), 3)] += 1
    # First ACK with new SACK information about a lost segment -> its retransmission.
    sack_news, highest = collections.defaultdict(list), {}
    for a in acks:
        edges = [e for _, e in a["sack"]]
        if not edges:
            continue
        right = max(edges, key=lambda e: (e - a["ack"]) % 2**32)
        if a["ack"] not in highest or after(right, highest[a["ack"]]):
            highest[a["ack"]] = right
            sack_news[a["ack"]].append(a["t"] + ACCESS_S)
    first, detect = {}, []
    for p in data:
        if p["seq"] in first:
            news = [t for t in sack_news.get(p["seq"], []) if first[p["seq"]] < t < p["t"]]
            if news:
                detect.append((p["t"] - SERVICE_S - news[0]) * 1e3)
        first.setdefault(p["seq"], p["t"])
    n = sum(advanced.values())
    print(
        f"{name}: {len(data)} data packets, {rtx} retransmissions ({100 * rtx / len(data):.2f} %); "
        f"bursts: mean {statistics.mean(bursts):.2f}, "
        + ", ".join(
            f"{k}: {c / len(bursts):.3f}"
            for k, c in sorted(collections.Counter(bursts).items())[:3]
        )
        + "; in flight at a send p10/p50/p90 "
        + "/".join(f"{q(flight, f):.1f}" for f in (0.1, 0.5, 0.9))
        + f"; {len(late) / len(data):.3f} ACKs per data packet, segments per ACK "
        + ", ".join(f"{k}: {c / n:.3f}" for k, c in sorted(advanced.items()))
        + f"; first SACK -> retransmission p50 {q(detect, 0.5):.2f} ms ({len(detect)} matched)"
    )


def window_room(a1, a2, warmup):
    """Packets of room left in the connection's window at each send of new data on each path."""
    sender = flow(a1, 0)[0]
    scale = next(p["ws"] for p in a1 if p["syn"] and p["src"] != sender)
    events = []
    for name, packets in (("a1", a1), ("a2", a2)):
        src = flow(packets, 0)[0]
        for p in packets:
            if p["src"] == src and p["payload"] and p["dsn"] is not None:
                events.append((p["t"], name, p))
            elif p["dst"] == src and not p["payload"] and p["data_ack"] is not None:
                events.append((p["t"] + ACCESS_S, "ack", p))
    events.sort(key=lambda e: e[0])
    right, high, room = None, 0, collections.defaultdict(list)
    for t, kind, p in events:
        if kind == "ack":
            edge = p["data_ack"] + (p["win"] << scale)
            right = edge if right is None else max(right, edge)
            continue
        high = max(high, p["dsn"] + (p["dlen"] or p["payload"]))
        if t > warmup and right is not None:
            room[kind].append((right - high) / (MSS - 24))
    for name, xs in sorted(room.items()):
        short = sum(x < 10 for x in xs) / len(xs)
        print(
            f"{name}: room left in the connection's window at a send of new data (packets): "
            f"p1 {q(xs, 0.01):.1f}, p50 {q(xs, 0.5):.1f}; "
            f"under 10 packets at {100 * short:.2f} % of sends"
        )


def main(folder, warmup=5.0):
    captures = {n: read(f"{folder}/{n}.pcap") for n in ("a1", "c1", "a2")}
    per_flow("MPTCP subflow (a1)", captures["a1"], warmup)
    per_flow("TCP flow (c1)", captures["c1"], warmup)
    window_room(captures["a1"], captures["a2"], warmup)


if __name__ == "__main__":
    main(sys.argv[1], *(float(x) for x in sys.argv[2:]))
