#!/usr/bin/env python3
"""Deterministic large Cachegrind profile: FILES x FNS x LINES cost lines
(default 400 x 50 x 40 = 800,000 lines, 9 events, about 44 MB) on stdout."""
import sys
files, fns, lines = (int(a) for a in (sys.argv[1:4] if len(sys.argv) > 3 else (400, 50, 40)))
out = sys.stdout
w = out.write
w('desc: I1 cache:         32768 B, 64 B, 8-way associative\n'
  'desc: D1 cache:         32768 B, 64 B, 8-way associative\n'
  'desc: LL cache:         8388608 B, 64 B, 16-way associative\n'
  'cmd: ./generated\nevents: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw\n')
tot = [0] * 9
x = 12345
for f in range(files):
    w('fl=/src/project/module%03d/file%03d.c\n' % (f % 20, f))
    for g in range(fns):
        w('fn=module%03d_function%02d\n' % (f, g))
        buf = []
        for l in range(lines):
            x = (x * 1103515245 + 12345) & 0x7fffffff
            ir = 1 + x % 100000000
            c = [ir, x % 997, x % 113, ir // 3, x % 10009, x % 1001, ir // 5, x % 5003, x % 503]
            for i in range(9):
                tot[i] += c[i]
            buf.append('%d %s\n' % (10 + l * 3, ' '.join(map(str, c))))
        w(''.join(buf))
w('summary: %s\n' % ' '.join(map(str, tot)))
