# A dict-and-string loop for bench/cpython/window.sh: runs for argv[1]
# seconds (or argv[2] rounds, bench/supervisor-cg.sh), then prints what it
# computed (the check that it ran on).
import sys
import time

d = {}
end = time.monotonic() + float(sys.argv[1])
rounds = 0
limit = int(sys.argv[2]) if len(sys.argv) > 2 else None
while (rounds < limit) if limit is not None else time.monotonic() < end:
    for i in range(1000):
        k = "key%d" % (i * 7 % 997)
        d[k] = d.get(k, 0) + len(k.upper())
    rounds += 1
print("rounds", rounds, "keys", len(d), "ok", sum(d.values()) > 0)
