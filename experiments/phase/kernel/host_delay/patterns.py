"""Send and ACK patterns of the kernel from the captures of the host-delay runs (README.md):
ACKs by how many segments each acknowledges, data packets sent per ACK, and bursts at the
sender's access link (packets that left back to back).

Usage: patterns.py A1.pcap ACCESS_DELAY_S ACCESS_RATE MSS
"""

import bisect
import collections
import sys

from analyse import read


def shares(counter):
    n = sum(counter.values())
    return " ".join(f"{k}: {v * 100 / n:.1f}%" for k, v in sorted(counter.items()))


def main(path, delay, rate, mss):
    pk = read(path)
    data = [p for p in pk if p[5] > 0]
    src = data[0][1]
    data = [p for p in data if p[1] == src]
    acks = [p for p in pk if p[5] == 0 and p[2] == src]
    # Segments each ACK acknowledges (cumulative ACK advance over the mss), per connection.
    last = {}
    acked = collections.Counter()
    for p in acks:
        key = p[1]
        if key in last and p[4] != last[key]:
            acked[min(round(((p[4] - last[key]) % 2**32) / mss), 5)] += 1
        elif key in last:
            acked[0] += 1  # a duplicate ACK
        last[key] = p[4]
    print("ACKs by segments acknowledged (0: duplicate, 5: 5 or more):", shares(acked))
    # Data packets whose transmission started between one ACK's arrival and the next.
    arrivals = sorted(p[0] + delay for p in acks)
    per_ack = collections.Counter()
    starts = [p[0] - p[6] * 8 / rate for p in data]
    for a, b in zip(arrivals, arrivals[1:]):
        i, j = bisect.bisect_left(starts, a), bisect.bisect_left(starts, b)
        per_ack[min(j - i, 5)] += 1
    print("data packets sent per ACK (5: 5 or more):", shares(per_ack))
    # Bursts: packets that left the access link back to back (each started when the one
    # before it ended).
    bursts, run, prev_end = collections.Counter(), 0, -1.0
    for p, start in zip(data, starts):
        if start <= prev_end + 1e-6:
            run += 1
        else:
            if run:
                bursts[min(run, 8)] += 1
            run = 1
        prev_end = p[0]
    bursts[min(run, 8)] += 1
    print("bursts by packets back to back (8: 8 or more):", shares(bursts))


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]))
