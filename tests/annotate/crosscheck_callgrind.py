#!/usr/bin/env python3
"""Cross-check cachetrace-annotate's Callgrind reader against valgrind's own
callgrind_annotate (3.19) on a profile that valgrind's Callgrind writes for
prog/calls.c: the totals (the file's totals: line, and the sum of
callgrind_annotate's functions), every file:function self figure, every
inclusive figure (callgrind_annotate --inclusive=yes; the program's own
functions must all be there), and the first level of --blame=get against
callgrind_annotate --tree=caller.
Usage: crosscheck_callgrind.py ANNOTATE SRCDIR.  Fails without valgrind."""
import os, re, shutil, subprocess, sys, tempfile

ann, srcdir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
cga = shutil.which('callgrind_annotate')
if not shutil.which('valgrind') or not cga or not shutil.which('gcc'):
    print('FAIL: valgrind, callgrind_annotate or gcc missing: run tests/install-deps.sh'); sys.exit(1)
PCT = re.compile(r'\(\s*-?[\d.]+%(,\s*-?[\d.]+%)?\)|\(n/a\)')
FANCY = '-' * 80
fail = []

def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout

def cells(line, n):
    toks = PCT.sub('', line).split(None, n)
    vals = [0 if t == '.' else int(t.replace(',', '')) for t in toks[:n]]
    return vals, (toks[n].strip() if len(toks) > n else '')

def theirs(out, n):
    """callgrind_annotate's file:function rows, keyed file:function."""
    rows, on = {}, False
    for line in out.split('\n'):
        if line.endswith('file:function'):
            on = 'skip'
            continue
        if on == 'skip':
            on = True
            continue
        if on is True:
            if not line.strip():
                break
            v, label = cells(line, n)
            label = re.sub(r' \[[^]]*\]$', '', label)
            rows[label] = [a + b for a, b in zip(rows.get(label, [0] * n), v)]
    return rows

def blocks(out):
    bs = out.split(FANCY + '\n')
    return {bs[i].split('\n')[0]: bs[i + 1] for i in range(len(bs) - 1)}

tmp = tempfile.mkdtemp()
try:
    exe = os.path.join(tmp, 'calls')
    run(['gcc', '-g', '-O1', '-o', exe, os.path.join(srcdir, 'prog', 'calls.c')])
    prof = os.path.join(tmp, 'callgrind.out')
    subprocess.run(['valgrind', '--tool=callgrind', '--cache-sim=yes',
                    '--branch-sim=yes', '--dump-instr=no',
                    '--callgrind-out-file=' + prof, exe],
                   check=True, capture_output=True)
    events = next(l for l in open(prof) if l.startswith('events:')).split()[1:]
    totals = [int(x) for x in next(l for l in open(prof)
                                    if l.startswith('totals:')).split()[1:]]
    n = len(events)
    # cwd / so that callgrind_annotate strips no directory from names.
    cself = theirs(run([cga, '--inclusive=no', '--threshold=100', prof], cwd='/'), n)
    cincl = theirs(run([cga, '--inclusive=yes', '--threshold=100', prof], cwd='/'), n)
    ours = run([ann, '--annotate=no', '--threshold=0', prof])
    b = blocks(ours)

    tot = None
    for line in b['-- Summary'].split('\n'):
        if line.endswith('PROGRAM TOTALS'):
            tot = cells(line, n)[0]
    if tot != totals:
        fail.append('totals: ours %s, totals: line %s' % (tot, totals))
    csum = [sum(v[e] for v in cself.values()) for e in range(n)]
    if tot != csum:
        fail.append('totals: ours %s, callgrind_annotate functions add up to %s' % (tot, csum))

    oself, f = {}, None
    for line in b['-- File:function summary'].split('\n')[2:]:
        if not line.strip():
            continue
        v, label = cells(line[2:], n)
        if line.startswith('< '):
            if label.endswith(':'):
                f = label[:-1]
                continue
            oself[label] = v
        else:
            oself['%s:%s' % (f, label)] = v
    if set(oself) != set(cself):
        fail.append('functions: only ours %s; only theirs %s' %
                    (sorted(set(oself) - set(cself))[:5], sorted(set(cself) - set(oself))[:5]))
    for k in sorted(set(oself) & set(cself)):
        if oself[k] != cself[k]:
            fail.append('self %s: ours %s, theirs %s' % (k, oself[k], cself[k]))

    oincl = {}
    sec = b['-- Inclusive costs (function:file)'].split('\n')[2:]
    for line in sec:
        if not line.strip() or '<' in line:
            continue
        v, label = cells(line, 2 * n)
        fn, _, file = label.partition(':')
        oincl['%s:%s' % (file, fn)] = [v[2 * e + 1] for e in range(n)]
    src = os.path.join(srcdir, 'prog', 'calls.c')
    for fn in ('main', 'both', 'hot', 'cold', 'get'):
        k = '%s:%s' % (src, fn)
        if k not in oincl or k not in cincl:
            fail.append('inclusive %s: missing (ours %s, theirs %s)' % (k, k in oincl, k in cincl))
        elif oincl[k] != cincl[k]:
            fail.append('inclusive %s: ours %s, theirs %s' % (k, oincl[k], cincl[k]))
    # All the others agree too here (no function of this run calls itself,
    # where callgrind_annotate would add the recursive calls again).
    for k in sorted(oincl):
        if k in cincl and oincl[k] != cincl[k]:
            fail.append('inclusive %s: ours %s, theirs %s' % (k, oincl[k], cincl[k]))
    print('%d functions (self), %d inclusive figures compared' %
          (len(oself), sum(1 for k in oincl if k in cincl)))

    # --blame=get, first level, against --tree=caller's "< caller" lines.
    tree = run([cga, '--tree=caller', '--inclusive=yes', '--threshold=100', prof], cwd='/')
    want = {}
    # The caller lines just before the '*' line of get.
    lines = tree.split('\n')
    for i, line in enumerate(lines):
        if re.search(r'\* +%s:get( \[|$)' % re.escape(src), line):
            j = i - 1
            while j >= 0 and '<' in lines[j]:
                m = re.search(r'< (\S+):(\S+) \(', lines[j])
                v, _ = cells(lines[j], 1)
                want[m.group(2)] = v[0]
                j -= 1
    got = {}
    for line in run([ann, '--blame=get', '--threshold=0', prof]).split('\n'):
        m = re.match(r'^([\d,]+) +\([\d.]+%\)    (\S+)$', line)
        if m:
            got[m.group(2)] = int(m.group(1).replace(',', ''))
    if not want or got != want:
        fail.append('--blame=get first level: ours %s, callgrind_annotate --tree=caller %s' % (got, want))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
for f in fail:
    print('FAIL:', f)
sys.exit(1 if fail else 0)
