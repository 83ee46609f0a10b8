#!/usr/bin/env python3
"""Cross-check cachetrace-annotate against valgrind's own cg_annotate (3.19,
perl) on a profile written by valgrind's Cachegrind: program totals, every
file:function figure and every annotated source line must agree.  Also
checks that cg_annotate reads our --output-profile (merge and diff).
Usage: crosscheck.py ANNOTATE SRCDIR.  Fails when valgrind is missing."""
import os, re, shutil, subprocess, sys, tempfile

ann, srcdir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
cg = shutil.which('cg_annotate')
if not shutil.which('valgrind') or not cg or not shutil.which('gcc'):
    print('FAIL: valgrind, cg_annotate or gcc missing: run tests/install-deps.sh'); sys.exit(1)
FANCY = '-' * 80
PCT = re.compile(r'\(\s*-?[\d.]+%\)|\(n/a\)')
fail = []

def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout

def cells(line, n):
    """The first n cells (numbers or '.') of LINE, and the rest."""
    toks = PCT.sub('', line).split(None, n)
    vals = [None if t == '.' else int(t.replace(',', '')) for t in toks[:n]]
    return vals, (toks[n] if len(toks) > n else '')

def parse_theirs(out, n):
    tot, fns, lines, src = None, {}, {}, None
    blocks = out.split(FANCY + '\n')
    for i, b in enumerate(blocks):
        rows = b.split('\n')
        for r in rows:
            if r.endswith('PROGRAM TOTALS'):
                tot = cells(r, n)[0]
        if rows[0].endswith('file:function') and i + 1 < len(blocks):
            for r in blocks[i + 1].split('\n'):
                if r.strip():
                    v, label = cells(r, n)
                    fns[label.strip()] = v
        if rows[0].startswith('-- Auto-annotated source: '):
            src = rows[0][len('-- Auto-annotated source: '):]
            lines[src] = [cells(r, n) for r in blocks[i + 1].split('\n')[2:]
                          if r and not r.startswith('-- line')
                          and cells(r, n)[0][0] is not None]
    return tot, fns, lines

def parse_ours(out, n):
    tot, fns, lines = None, {}, {}
    blocks = out.split(FANCY + '\n')
    for i, b in enumerate(blocks):
        head = b.split('\n')[0]
        if head == '-- Summary':
            for r in blocks[i + 1].split('\n'):
                if r.endswith('PROGRAM TOTALS'):
                    tot = cells(r, n)[0]
        if head == '-- File:function summary':
            outer = None
            for r in blocks[i + 1].split('\n')[2:]:
                if not r.strip():
                    continue
                v, label = cells(r[2:], n)
                if r.startswith('< '):
                    if label.endswith(':'):
                        outer = label
                    else:
                        fns[label] = v
                else:
                    fns[outer + label.strip()] = v
        if head.startswith('-- Annotated source file: '):
            src = head[len('-- Annotated source file: '):]
            lines[src] = [cells(r, n) for r in blocks[i + 1].split('\n')[2:]
                          if r and not r.startswith('-- line')
                          and cells(r, n)[0][0] is not None]
    return tot, fns, lines

with tempfile.TemporaryDirectory() as tmp:
    prog = os.path.join(tmp, 'matrix')
    src = os.path.join(tmp, 'matrix.c')
    shutil.copy(os.path.join(srcdir, 'prog', 'matrix.c'), src)
    run(['gcc', '-O1', '-g', '-fno-inline', '-o', prog, src])
    prof = os.path.join(tmp, 'cg.out')
    run(['valgrind', '--tool=cachegrind', '--cache-sim=yes', '--branch-sim=yes',
         '--I1=32768,8,64', '--D1=32768,8,64', '--LL=1048576,16,64',
         '--cachegrind-out-file=' + prof, prog])
    events = [l.split()[1:] for l in open(prof) if l.startswith('events:')][0]
    n = len(events)
    theirs = parse_theirs(run([cg, '--auto=yes', '--threshold=0', prof], cwd=tmp), n)
    ours = parse_ours(run([ann, '--threshold=0', '--percent=no', prof], cwd=tmp), n)

    if theirs[0] is None or theirs[0] != ours[0]:
        fail.append('totals: cg_annotate %s, ours %s' % (theirs[0], ours[0]))
    if not theirs[1]:
        fail.append('no functions parsed from cg_annotate')
    for k, v in theirs[1].items():
        if ours[1].get(k) != v:
            fail.append('%s: cg_annotate %s, ours %s' % (k, v, ours[1].get(k)))
    if set(ours[1]) != set(theirs[1]):
        fail.append('function sets differ: %s' % (set(ours[1]) ^ set(theirs[1])))
    if src not in theirs[2] or not theirs[2][src]:
        fail.append('cg_annotate did not annotate %s' % src)
    for f, rows in theirs[2].items():
        if ours[2].get(f) != rows:
            fail.append('%s lines differ:\n cg_annotate %s\n ours        %s'
                        % (f, rows, ours[2].get(f)))

    # Our merge of the profile with itself, read by cg_annotate: doubled.
    merged = os.path.join(tmp, 'merged.out')
    run([ann, '--output-profile=' + merged, prof, prof])
    t2 = parse_theirs(run([cg, '--auto=no', '--threshold=0', merged]), n)
    if t2[0] != [2 * x for x in theirs[0]]:
        fail.append('merged totals read by cg_annotate: %s' % t2[0])
    for k, v in theirs[1].items():
        if t2[1].get(k) != [2 * x for x in v]:
            fail.append('merged %s: %s' % (k, t2[1].get(k)))
    # A diff of the profile against itself is all zeros.
    diffed = os.path.join(tmp, 'diff.out')
    run([ann, '--diff', '--output-profile=' + diffed, prof, merged])
    t3 = parse_theirs(run([cg, '--auto=no', '--threshold=0', diffed]), n)
    if t3[0] != theirs[0]:
        fail.append('diff (2x - 1x) totals read by cg_annotate: %s' % t3[0])

for f in fail:
    print('FAIL:', f)
print('%d function(s), %d annotated line(s) compared' % (len(theirs[1]),
      sum(len(r) for r in theirs[2].values())))
sys.exit(1 if fail else 0)
