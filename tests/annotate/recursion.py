#!/usr/bin/env python3
"""Blame through recursion (issue 26) against valgrind: prog/recursion.c
(direct recursion, mutual recursion even <-> odd, glibc's qsort sorting by
a merge sort that calls itself), each shape with a leaf of its own that
only it calls, profiled by valgrind's Callgrind twice: with its default
names (recursion levels f'2) and with --separate-callers=3
--separate-recs=5 (f'3'caller'caller2...).  The expected figures are
callgrind_annotate --inclusive=yes's:
- --blame=LEAF is one chain of callers (the shape's entry, main, then what
  runs main), every frame with LEAF's whole inclusive cost, no name twice;
- --blame=F of a recursive F (direct, even, odd, msort_with_tmp.part.0)
  has F's inclusive cost at its outermost level (the contexts that are no
  recursion level), and so has every frame above it;
- the top-down tree's LEAF frames add up to LEAF's inclusive cost.
Usage: recursion.py ANNOTATE SRCDIR.  Fails without valgrind or gcc."""
import os, re, shutil, subprocess, sys, tempfile

ann, srcdir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
cga = shutil.which('callgrind_annotate')
if not shutil.which('valgrind') or not cga or not shutil.which('gcc'):
    print('FAIL: valgrind, callgrind_annotate or gcc missing: run tests/install-deps.sh'); sys.exit(1)
fail = []
# leaf -> its callers up to main, nearest first (exactly these).
CHAINS = {'leaf_direct': ['direct', 'main'],
          'leaf_mutual': ['odd', 'even', 'main'],
          'cmp_int': None}          # glibc's frames, then qsort, main
# recursive function -> its caller outside the recursion.
RECURSIVE = {'direct': 'main', 'even': 'main', 'odd': 'even',
             'msort_with_tmp.part.0': 'qsort_r'}
ROW = re.compile(r'^\s*([\d,]+) \(\s*[\d.]+%\)  (.*?)( \[[^]]*\])?$')
FRAME = re.compile(r'^\s*([\d,]+) +\(\s*[\d.]+%\)  ( *)(\S.*)$')


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def base(name):
    return name.split("'")[0] if not name.startswith("'") else name


def is_level(name):
    """f'2, f'3'caller: a call of f while f runs (inside an outer f)."""
    parts = name.split("'")
    return len(parts) > 1 and parts[1].isdigit()


def inclusive(prof):
    """callgrind_annotate --inclusive=yes, summed per base name over the
    contexts that are no recursion level."""
    out = run([cga, '--inclusive=yes', '--threshold=100', prof], cwd='/')
    incl, levels, on = {}, set(), False
    for line in out.split('\n'):
        if line.endswith('file:function'):
            on = True
            continue
        m = ROW.match(line) if on else None
        if not m:
            if on and line.startswith('-- '):
                break
            continue
        fn = m.group(2).rsplit(':', 1)[-1]
        if is_level(fn):
            levels.add(base(fn))
            continue
        incl[base(fn)] = incl.get(base(fn), 0) + int(m.group(1).replace(',', ''))
    return incl, levels


def frames(out):
    """(value, depth, name) of an annotator tree."""
    res = []
    for line in out.split('\n'):
        m = FRAME.match(line)
        if m:
            res.append((int(m.group(1).replace(',', '')), len(m.group(2)) // 2, m.group(3)))
    return res


def check_chain(what, prof, func, want, first):
    """--blame=FUNC: one chain, every frame WANT, FIRST its next names."""
    fr = frames(run([ann, '--blame=' + func, '--threshold=0', prof]))
    names = [n for _, _, n in fr]
    if not fr or fr[0][2] != func:
        fail.append('%s --blame=%s: no tree (%s)' % (what, func, fr[:2]))
        return []
    if [d for _, d, _ in fr] != list(range(len(fr))):
        fail.append('%s --blame=%s: not one chain: %s' % (what, func, fr))
    bad = [(v, n) for v, _, n in fr if v != want]
    if bad:
        fail.append('%s --blame=%s: frames without the whole %d: %s' % (what, func, want, bad))
    if len(set(names)) != len(names):
        fail.append('%s --blame=%s: a name twice: %s' % (what, func, names))
    if first and names[1:1 + len(first)] != first:
        fail.append('%s --blame=%s: callers %s, want %s first' % (what, func, names[1:], first))
    return names


tmp = tempfile.mkdtemp()
try:
    exe = os.path.join(tmp, 'recursion')
    run(['gcc', '-O2', '-g', '-no-pie', '-o', exe, os.path.join(srcdir, 'prog', 'recursion.c')])
    for label, opts in (('default names', []),
                        ('--separate-callers=3 --separate-recs=5',
                         ['--separate-callers=3', '--separate-recs=5'])):
        prof = os.path.join(tmp, 'callgrind.out')
        subprocess.run(['valgrind', '--tool=callgrind', '--callgrind-out-file=' + prof] +
                       opts + [exe], check=True, capture_output=True)
        incl, levels = inclusive(prof)
        for shape in ('direct', 'even', 'odd'):
            if shape not in levels:
                fail.append('%s: no recursion level of %s in the profile' % (label, shape))
        for leaf, first in CHAINS.items():
            if leaf not in incl:
                fail.append('%s: %s missing from callgrind_annotate' % (label, leaf))
                continue
            names = check_chain(label, prof, leaf, incl[leaf], first)
            if first is None and ('qsort' not in names or 'main' not in names or
                                  names.index('qsort') > names.index('main')):
                fail.append('%s --blame=%s: want qsort then main in %s' % (label, leaf, names))
            tree = frames(run([ann, '--tree=callee', '--threshold=0', prof]))
            got = sum(v for v, _, n in tree if n == leaf)
            if got != incl[leaf]:
                fail.append('%s --tree: the %s frames add up to %d, want %d' %
                            (label, leaf, got, incl[leaf]))
        for func, caller in RECURSIVE.items():
            if func not in levels:
                # Another C library's qsort may not recurse.
                print('note: %s: %s does not recurse here' % (label, func))
                continue
            check_chain(label, prof, func, incl[func], [caller])
        print('%s: blame and tree checked for %s' % (label, ', '.join(list(CHAINS) + list(RECURSIVE))))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
for f in fail:
    print('FAIL:', f)
sys.exit(1 if fail else 0)
