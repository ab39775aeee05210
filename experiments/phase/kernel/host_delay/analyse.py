"""Host delays of the kernel from testbed pcaps (timestamps: the ideal end of transmission at
the emulated link).

Usage: analyse.py A1.pcap ACCESS_DELAY_S ACCESS_RATE [BOTTLENECK.pcap BDELAY_S BRATE]

Sender (pcap of the sender's access link): for a data packet that found the link idle, its start
(pcap time - transmission time) minus the arrival at the sender of the last ACK before it.
Receiver (pcap of the last link, into the receiving host): an ACK's start minus the arrival of
the last data packet before it."""

import bisect
import struct
import sys


def packets(path):
    """(time, IPv4 packet, its header length, its total length) of every record of a capture
    (libpcap, nanosecond timestamps, raw IPv4: what `plait testbed --pcap` writes)."""
    b = open(path, "rb").read()
    assert struct.unpack("<I", b[:4])[0] == 0xA1B23C4D, f"{path}: not a nanosecond pcap"
    off = 24
    while off + 16 <= len(b):
        s, ns, incl, _ = struct.unpack("<IIII", b[off : off + 16])
        off += 16
        pkt = b[off : off + incl]
        off += incl
        yield s + ns * 1e-9, pkt, (pkt[0] & 15) * 4, struct.unpack(">H", pkt[2:4])[0]


def read(path):
    """(time, src, dst, seq, ack, payload bytes, total bytes) of every packet of a capture."""
    out = []
    for t, pkt, ihl, tot in packets(path):
        seq, ack = struct.unpack(">II", pkt[ihl + 4 : ihl + 12])
        doff = (pkt[ihl + 12] >> 4) * 4
        out.append((t, pkt[12:16], pkt[16:20], seq, ack, tot - ihl - doff, tot))
    return out


def stats(name, xs):
    xs = sorted(xs)

    def q(f):
        return xs[int(f * (len(xs) - 1))]

    print(
        f"{name}: n={len(xs)} min {xs[0]:.1f} p10 {q(0.1):.1f} p25 {q(0.25):.1f} p50 {q(0.5):.1f} "
        f"p75 {q(0.75):.1f} p90 {q(0.9):.1f} p99 {q(0.99):.1f} us"
    )


def sender(path, delay, rate):
    pk = read(path)
    data = [p for p in pk if p[5] > 0]
    src = data[0][1]
    data = [p for p in data if p[1] == src]
    acks = sorted(p[0] + delay for p in pk if p[5] == 0 and p[2] == src)  # arrivals at sender
    out, prev_end = [], -1.0
    for p in data:
        tx = p[6] * 8 / rate
        start = p[0] - tx
        idle = start > prev_end + 1e-7
        prev_end = p[0]
        if not idle:
            continue
        i = bisect.bisect_right(acks, start) - 1
        if i >= 0 and start - acks[i] < 0.002:
            out.append((start - acks[i]) * 1e6)
    stats("sender: data start after the last ACK's arrival", out)


def receiver(path, delay, rate):
    pk = read(path)
    data = [p for p in pk if p[5] > 0]
    src = data[0][1]
    arr = sorted(p[0] + delay for p in data if p[1] == src)
    out = []
    for p in pk:
        if p[5] == 0 and p[2] == src:
            start = p[0] - p[6] * 8 / rate
            i = bisect.bisect_right(arr, start) - 1
            if i >= 0 and start - arr[i] < 0.002:
                out.append((start - arr[i]) * 1e6)
    stats("receiver: ACK start after the last data arrival", out)


if __name__ == "__main__":
    a = sys.argv[1:]
    sender(a[0], float(a[1]), float(a[2]))
    if len(a) > 3:
        receiver(a[3], float(a[4]), float(a[5]))
