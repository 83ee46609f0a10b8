#!/usr/bin/env python3
"""bench/sample: a sampled profile against the full one of the same run
(issue 31).  compare.py FULL SAMPLED [--estimates]: for each function with >= 5% of the
full profile's data accesses (Dr + Dw), its D1 and LL miss rates (misses
per data access) in both, and their relative difference; the last line
says how many are within 15%.  With --estimates, the sampled rates are
the profile's estimates (its statistics, each sample weighted by the
instructions a cycle the model estimates for it), not its raw counts,
and a last column gives the LL rate's bounds (LLlo, LLhi: every first
reference of a line in its sample a hit, or a miss) and whether the full
run's rate lies between them."""
import sys


def read(path):
    """Per file:function totals of a Cachegrind-format profile."""
    events, fns, cur, fl = [], {}, None, '?'
    with open(path, errors='replace') as f:
        for line in f:
            if line.startswith('events:'):
                events = line.split()[1:]
            elif line.startswith('fl='):
                fl = line[3:].rstrip('\n')
            elif line.startswith('fn='):
                cur = fns.setdefault(fl + ':' + line[3:].rstrip('\n'),
                                     [0] * len(events))
            elif line[:1].isdigit() and cur is not None:
                for i, v in enumerate(line.split()[1:]):
                    if v != '.':
                        cur[i] += int(v)
    return events, fns


def stats(path):
    """The sampled profile's estimates: per file:function, its D1 and LL
    ratios (sum m / sum a) from the statistics after the summary."""
    names, est = [], {}
    with open(path, errors='replace') as f:
        for line in f:
            if line.startswith('# cachetrace-samples:'):
                names = line.split()[5:]
            elif line.startswith('# cachetrace-sample\t'):
                _, fl, fn, _k, *rs = line.rstrip('\n').split('\t')
                r = {}
                for name, sums in zip(names, rs):
                    m, a = [float(v) for v in sums.split()[:2]]
                    r[name] = m / a if a else 0.0
                est[fl + ':' + fn] = r
    return est


def rates(events, row):
    ix = {e: i for i, e in enumerate(events)}
    acc = row[ix['Dr']] + row[ix['Dw']]
    d1 = row[ix['D1mr']] + row[ix['D1mw']]
    ll = row[ix['DLmr']] + row[ix['DLmw']]
    return acc, (d1 / acc if acc else 0), (ll / acc if acc else 0)


def rel(a, b):
    if a == b:
        return 0.0
    return abs(b - a) / a if a else float('inf')


def main():
    ev, full = read(sys.argv[1])
    ev2, samp = read(sys.argv[2])
    est = stats(sys.argv[2])
    total = sum(rates(ev, r)[0] for r in full.values())
    ok = n = inside = bounded = 0
    print('%-44s %7s %9s %9s %6s %9s %9s %6s  %s' % (
        'function (>= 5% of data accesses)', 'share', 'D1 full', 'sampled',
        'diff', 'LL full', 'sampled', 'diff', 'LL bounds'))
    for name, row in sorted(full.items(), key=lambda kv: -rates(ev, kv[1])[0]):
        acc, d1, ll = rates(ev, row)
        if acc < 0.05 * total:
            continue
        s = samp.get(name)
        sacc, sd1, sll = rates(ev2, s) if s else (0, 0, 0)
        if '--estimates' in sys.argv and name in est:
            sd1, sll = est[name].get('D1', 0), est[name].get('LL', 0)
        e1, e2 = rel(d1, sd1), rel(ll, sll)
        n += 2
        ok += (e1 <= 0.15) + (e2 <= 0.15)
        b = ''
        if name in est and 'LLlo' in est[name]:
            lo, hi = est[name]['LLlo'], est[name]['LLhi']
            bounded += 1
            inside += lo <= ll <= hi
            b = '%.4f%%-%.4f%% %s' % (100 * lo, 100 * hi,
                                      'in' if lo <= ll <= hi else 'OUT')
        print('%-44s %6.1f%% %8.3f%% %8.3f%% %5.0f%% %8.4f%% %8.4f%% %5.0f%%  %s' % (
            name[-44:], 100 * acc / total, 100 * d1, 100 * sd1, 100 * e1,
            100 * ll, 100 * sll, 100 * e2, b))
    print('%d of %d rates within 15%%' % (ok, n) +
          ('; the full LL rate within the bounds for %d of %d' %
           (inside, bounded) if bounded else ''))


main()
