#!/usr/bin/env python3
"""cachetrace-annotate --html (issue 13).
Usage: html_report.py ANNOTATE SRCDIR MODE [CACHETRACE SCRATCH]
  golden     small profiles against html/*.expected (the page with its CSS
             and script cut out: the plain tables and the data)
  malformed  the text report's malformed inputs fail the same way (status,
             message) with --html, and nothing is written
  chromium   the page of html/shop.cgout in headless Chromium, driven by a
             test page: function rows, totals, a sorted order, the source
             heat classes, the three clicks (hot line, callers, flame graph),
             coherence, nothing fetched; without scripts the plain tables;
             a diff's signed, coloured rows; folded stacks' flame graph; a
             screenshot that is not blank.  Every expected number is
             worked out here from the profile file, not by the annotator.
  tracer     cachetrace --html on the false-sharing program (jaguar, two
             threads): the page's coherence table names the two loop lines,
             the function rows match the profile, cg_annotate still reads
             the profile.
Chromium is a test dependency (tests/install-deps.sh): missing fails."""
import difflib, html, math, os, re, shutil, subprocess, sys, tempfile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chromium

ann, srcdir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
mode = sys.argv[3]
here = os.path.join(srcdir, 'html')
tmp = tempfile.mkdtemp()
fail = []

def run(*args, cwd=srcdir, prog=None):
    return subprocess.run([prog or ann] + list(args), capture_output=True, cwd=cwd)

def strip_assets(page):
    """The page without its CSS and script (they have tests of their own
    in Chromium), the data kept."""
    page = re.sub(r'<style>.*?</style>', '<style>(css)</style>', page, count=1, flags=re.S)
    return re.sub(r'<script>\n.*?</script>', '<script>(js)</script>', page, flags=re.S)

# ---- the profile, read independently -------------------------------------

def read_profile(path):
    """events, {(file, fn): [counts]}, {(file, line): [counts]} of the self
    costs of a Cachegrind or Callgrind file: name compression, fi=/fe=
    (the code's own file, which a later fn= keeps, as callgrind_annotate
    reads it), relative lines (+N, -N, *), cost lines after calls=
    skipped.  One position (line), as cachetrace and the fixtures write."""
    events, fns, lines = [], {}, {}
    names = {}
    cur = fn = None
    skip = False
    last = 0
    def name(v, kind):
        m = re.match(r'\((\d+)\)(?: (.*))?$', v)
        if not m:
            return v
        if m.group(2) is not None:
            names[(kind, m.group(1))] = m.group(2)
        return names[(kind, m.group(1))]
    for raw in open(path, encoding='utf-8', errors='replace'):
        s = raw.rstrip('\n')
        key = s.split('=', 1)[0] if '=' in s[:9] else None
        if s.startswith('events:'):
            events = s.split()[1:]
        elif key in ('fl', 'fi', 'fe'):
            cur = name(s[len(key) + 1:], 'f')
        elif key == 'fn':
            fn = name(s[3:], 'n')
        elif key in ('cfi', 'cfl'):
            name(s[4:], 'f')
        elif key == 'cfn':
            name(s[4:], 'n')
        elif key in ('ob', 'cob'):
            name(s[len(key) + 1:], 'o')
        elif key == 'calls':
            skip = True
        elif s and (s[0].isdigit() or s[0] in '+-*'):
            w = s.split()
            p = w[0]
            last = last if p == '*' else last + int(p) if p[0] in '+-' else int(p, 0)
            if skip:
                skip = False
                continue
            c = [0 if x == '.' else int(x) for x in w[1:]] + [0] * (len(events) + 1 - len(w))
            f = fns.setdefault((cur, fn), [0] * len(events))
            l = lines.setdefault((cur, last), [0] * len(events))
            for i, v in enumerate(c):
                f[i] += v
                l[i] += v
    return events, fns, lines

def commify(v):
    return '{:,}'.format(v)

# ---- golden ----------------------------------------------------------------

def golden():
    cases = [
        ('basic', ['-I', 'golden', 'golden/basic.cgout']),
        ('shop', ['-I', 'html', 'html/shop.cgout']),
        ('diff', ['--diff', 'merge/d1.cgout', 'merge/d2.cgout']),
        ('folded', ['callgrind/small.folded']),
    ]
    for name, args in cases:
        p = run('--html=-', *args)
        if p.returncode:
            fail.append('%s: status %d: %s' % (name, p.returncode, p.stderr.decode()))
            continue
        got = strip_assets(p.stdout.decode())
        exp_path = os.path.join(here, name + '.expected')
        if os.environ.get('CT_REGEN'):
            open(exp_path, 'w').write(got)
        want = open(exp_path).read()
        if got != want:
            fail.append('%s: differs from html/%s.expected:\n%s' % (name, name, ''.join(
                list(difflib.unified_diff(want.splitlines(1), got.splitlines(1), 'want', 'got'))[:40])))
        # Self-contained: no attribute points anywhere but into the page.
        for m in re.finditer(r'\b(src|href|action|data)\s*=\s*"([^"]*)"', p.stdout.decode()):
            if not m.group(2).startswith('#'):
                fail.append('%s: external reference %s' % (name, m.group(0)))
        if re.search(r'<link\b|<iframe\b|<img\b|@import|url\(', p.stdout.decode()):
            fail.append('%s: a resource that could be fetched' % name)
    # Written to a file as well as to stdout, the same bytes.
    out = os.path.join(tmp, 'shop.html')
    p = run('--html=' + out, '-I', 'html', 'html/shop.cgout')
    q = run('--html=-', '-I', 'html', 'html/shop.cgout')
    body = lambda b: re.sub(r'--html=\S+', '', b)
    if p.returncode or body(open(out).read()) != body(q.stdout.decode()):
        fail.append('--html=FILE and --html=- differ')

# ---- malformed ---------------------------------------------------------------

def malformed():
    hdr = 'cmd: ./p\nevents: Ir Dr\n'
    cases = {
        'trunc': hdr + 'fl=a.c\nfn=f\n1 2 3\n2 4',
        'badcount': hdr + 'fl=a.c\nfn=f\n1 2 3x\n',
        'big': hdr + 'fl=a.c\nfn=f\n1 99999999999999999999\n',
        'nofn': hdr + 'fl=a.c\n1 2 3\n',
        'nofl': hdr + '1 2 3\n',
        'fnfirst': hdr + 'fn=f\n',
        'many': hdr + 'fl=a.c\nfn=f\n# comment\n\n1 2 3 4\n',
        'summ': hdr + 'fl=a.c\nfn=f\n1 2 3\n2 1 .\nsummary: 3 4\n',
        'nosumm': hdr + 'fl=a.c\nfn=f\n1 2 3\n',
        'after': hdr + 'fl=a.c\nfn=f\nsummary: 0 0\n1 2\n',
        'dup': 'cmd: x\nevents: Ir Ir\n',
        'nocmd': 'events: Ir\n',
        'nul': hdr + 'fl=a\x00b\n',
        'minus': hdr + 'fl=a.c\nfn=f\n1 -\n',
        'badline': hdr + 'fl=a.c\nfn=f\n1x 2\n',
        'empty': '',
        'cg-undefined': '# callgrind format\nevents: Ir\nfl=(1)\n',
        'cg-totals': '# callgrind format\nevents: Ir\nfl=a.c\nfn=f\n1 5\ntotals: 6\n',
    }
    for name, text in cases.items():
        f = os.path.join(tmp, name + '.cgout')
        open(f, 'wb').write(text.encode('latin-1'))
        t = run(f)
        out = os.path.join(tmp, name + '.html')
        h = run('--html=' + out, f)
        if t.returncode != 1 or (h.returncode, h.stderr) != (t.returncode, t.stderr):
            fail.append('%s: text report %d %r, --html %d %r' % (name, t.returncode, t.stderr, h.returncode, h.stderr))
        if os.path.exists(out) and os.path.getsize(out):
            fail.append('%s: --html wrote %d bytes for a bad input' % (name, os.path.getsize(out)))
    # The same through standard input; and folded stacks that are wrong.
    t = run('-', prog=None)
    for name, data in (('stdin', cases['badcount']),):
        t = subprocess.run([ann, '-'], input=data.encode(), capture_output=True)
        h = subprocess.run([ann, '--html=-', '-'], input=data.encode(), capture_output=True)
        if (h.returncode, h.stderr) != (t.returncode, t.stderr) or h.stdout:
            fail.append('%s: text %d %r, --html %d %r' % (name, t.returncode, t.stderr, h.returncode, h.stderr))
    for name, data, msg in (('nocount', 'a;b\n', 'bad.folded:1: expected'),
                            ('emptyframe', 'a;;b 3\n', 'bad.folded:1: empty frame')):
        f = os.path.join(tmp, 'bad.folded')
        open(f, 'w').write(data)
        h = run('--html=-', '--folded', f)
        if h.returncode != 1 or msg not in h.stderr.decode() or h.stdout:
            fail.append('folded %s: %d %r' % (name, h.returncode, h.stderr))
    p = run('--html=', 'golden/basic.cgout')
    if p.returncode != 2:
        fail.append('--html= (no name): status %d' % p.returncode)
    p = run('--html=-', '--tree=callee', 'golden/basic.cgout')
    if p.returncode != 2:
        fail.append('--html with --tree: status %d' % p.returncode)

# ---- chromium ----------------------------------------------------------------

# The test page's script (chromium.drive: the report in an iframe) acts as
# a user: it reads what the report's script drew, clicks, and writes what
# it saw.
SCRIPT = r"""
    var txt = function (e) { return e.textContent.trim(); };
    var click = function (e) { e.dispatchEvent(new w.MouseEvent('click', { bubbles: true, view: w })); };
    var rows = function (what) {
      d.querySelectorAll('#fntab tbody tr.fn').forEach(function (tr) {
        var c = Array.prototype.map.call(tr.cells, txt);
        var nm = tr.querySelector('td.name a').textContent, fl = tr.querySelector('td.name .file').textContent;
        out.push(what + ' ' + fl + ':' + nm + ' ' + c.slice(0, -1).join(' '));
      });
    };
    out.push('ready ' + d.body.dataset.ready);
    out.push('totals ' + Array.prototype.map.call(d.querySelectorAll('#totals tbody td'), txt).join(' '));
    var heads = Array.prototype.map.call(d.querySelectorAll('#fntab thead th'), txt);
    out.push('head ' + heads.join('|'));
    rows('row');
    // Sort by D1mr: one click on its header.
    click(d.querySelector('#fntab th[data-col="3"]'));
    rows('sorted');
    // The filter box.
    var f = d.getElementById('filter'); f.value = 'look'; f.dispatchEvent(new w.Event('input'));
    rows('filtered');
    f.value = ''; f.dispatchEvent(new w.Event('input'));
    // The source coloured by each event in turn.
    var ev = d.getElementById('ev');
    for (var e = 0; e < ev.options.length; e++) {
      ev.value = e; ev.dispatchEvent(new w.Event('change'));
      d.querySelectorAll('#srctab tr.l').forEach(function (tr) {
        if (tr.cells[1].textContent === '') return;
        var h = (tr.className.match(/\b[hc][1-5]\b/) || ['-'])[0];
        out.push('heat ' + ev.options[e].text + ' ' + tr.dataset.line + ' ' + h);
      });
    }
    out.push('gaps ' + Array.prototype.map.call(d.querySelectorAll('#srctab tr.gap'), txt).join(' | '));
    // The three clicks: the hot line of D1mr, its callers, its flame graph.
    ev.value = 0; ev.dispatchEvent(new w.Event('change'));
    click(d.querySelector('#hot tr[data-ev="3"] a.loc'));
    out.push('event ' + ev.options[ev.selectedIndex].text);
    var cur = d.querySelector('#srctab tr.cur');
    out.push('current ' + (cur ? cur.dataset.line + ' ' + cur.className : 'none'));
    out.push('selected ' + txt(d.querySelector('#sel h3')));
    d.querySelectorAll('#callers tbody tr').forEach(function (tr) {
      out.push('caller ' + Array.prototype.map.call(tr.cells, txt).join(' '));
    });
    click(d.getElementById('sel-flame'));
    d.querySelectorAll('#fgbox div.fr.hl').forEach(function (fr) { out.push('flame-hl ' + fr.title); });
    var frames = d.querySelectorAll('#fgbox div.fr');
    var all = frames[0].getBoundingClientRect();
    frames.forEach(function (fr) {
      var b = fr.getBoundingClientRect();
      out.push('frame ' + fr.dataset.name + ' ' + (b.width / all.width).toFixed(4));
    });
    // A frame clicked selects its function everywhere.
    var hashf = Array.prototype.filter.call(frames, function (x) { return x.dataset.name == 'hash'; })[0];
    click(hashf);
    out.push('selected ' + txt(d.querySelector('#sel h3')));
    out.push('row-selected ' + Array.prototype.map.call(d.querySelectorAll('#fntab tr.selected td.name a'), txt).join(','));
    // The call tree: open main's first child.
    var tog = d.querySelectorAll('#tree .tog');
    out.push('tree ' + Array.prototype.map.call(d.querySelectorAll('#tree .node'), function (n) {
      return n.querySelector('.nm').textContent + '=' + n.querySelector('.cnt').textContent; }).join(', '));
    d.querySelectorAll('#cohtab tbody tr').forEach(function (tr) {
      out.push('coh ' + Array.prototype.map.call(tr.cells, txt).join(' | '));
    });
    // Next hot line, from the top.
    click(d.getElementById('nexthot'));
    out.push('nexthot ' + d.querySelector('#srctab tr.cur').dataset.line);
    [performance, w.performance].forEach(function (p) {
      p.getEntriesByType('resource').forEach(function (e) {
        if (!/^file:/.test(e.name)) out.push('fetched ' + e.name); }); });
    out.push('resources ' + w.performance.getEntriesByType('resource').length);
"""

def heat(v, mx):
    if not v or not mx:
        return '-'
    return ('c' if v < 0 else 'h') + str(min(5, math.ceil(5 * abs(v) / mx)))

def browser():
    report = os.path.join(tmp, 'shop.html')
    p = run('--html=' + report, '-I', 'html', 'html/shop.cgout')
    if p.returncode:
        fail.append('annotate: %s' % p.stderr.decode()); return
    got = chromium.drive(tmp, 'shop.html', 1400, 900, SCRIPT)

    events, fns, lines = read_profile(os.path.join(here, 'shop.cgout'))
    tot = [sum(c[i] for c in fns.values()) for i in range(len(events))]
    bad = lambda c: (c[5] + c[6]) ** 2 / c[0] if c[0] > 0 else None
    def fmt_bad(b):
        if b is None: return '.'
        return commify(int(b)) if b >= 100 else '%.3g' % b
    # Inclusive Ir, from the edges into each function (worked out by hand
    # in shop.cgout's comment).
    incl = {'main': 2520, 'process': 2200, 'lookup': 1800, 'hash': 600}
    def row(what, key):
        fl, fn = key
        c = fns[key]
        return '%s %s:%s %s %s %s' % (what, fl, fn, ' '.join(commify(v) for v in c), fmt_bad(bad(c)), commify(incl[fn]))
    lim = lambda e: 0.1 / 100 * abs(tot[e])
    by = lambda e: sorted((k for k in fns if abs(fns[k][e]) >= lim(e)), key=lambda k: (-abs(fns[k][e]), k[1]))
    want = ['ready 1', 'totals ' + ' '.join(commify(v) for v in tot) + ' ' + fmt_bad(bad(tot)) + ' PROGRAM TOTALS',
            'head ' + '|'.join(events + ['Badness', 'Ir (incl)', 'function'])]
    want += [row('row', k) for k in by(0)]
    want += [row('sorted', k) for k in by(3)]
    want += [row('filtered', k) for k in by(3) if 'look' in k[1]]
    file_lines = sorted(l for (f, l) in lines if f == 'src/shop.c')
    for e, name in enumerate(events):
        mx = max(abs(lines[('src/shop.c', l)][e]) for l in file_lines)
        want += ['heat %s %d %s' % (name, l, heat(lines[('src/shop.c', l)][e], mx)) for l in file_lines]
    # Context 8 around the counted lines 12..52 of a 70-line file: 4..60
    # shown, as the text report shows them.
    want += ['gaps -- line 1-3 (3 lines folded; click to show) -- | -- line 61-70 (10 lines folded; click to show) --']
    d1 = events.index('D1mr')
    hot = max(file_lines, key=lambda l: lines[('src/shop.c', l)][d1])
    mx = max(lines[('src/shop.c', l)][d1] for l in file_lines)
    want += ['event D1mr', 'current %d l %s cur' % (hot, heat(lines[('src/shop.c', hot)][d1], mx)),
             'selected Selected: lookup',
             # process -> lookup 352 D1mr, main -> lookup 70: of 422.
             'caller 352 83.4% 100 process', 'caller 70 16.6% 20 main',
             'flame-hl lookup (70 D1mr, 15.98%)', 'flame-hl lookup (352 D1mr, 80.37%)']
    # The D1mr flame graph from the graph: all 438 = main 438 (self 1,
    # process 367, lookup 70); under process lookup 352 (hash 2 below it),
    # under main's lookup no hash (70 of lookup's 422 incl, 2 * 70/422 =
    # 0.33 of hash: frames are integers, under 0.5 it rounds to 0 and is
    # not drawn), widths relative to all.
    frames = [('all', 438), ('main', 438), ('lookup', 70), ('process', 367), ('lookup', 352), ('hash', 2)]
    want += ['frame %s %.4f' % (n, v / 438) for n, v in frames]
    want += ['selected Selected: hash', 'row-selected hash',
             'tree main  (self 1)=438, process  (self 15)=367, lookup  (self 420)=70']
    want += ['coh 0x404100 | counters | 20 | 5 | 30',
             'coh false | 20 misses | at src/shop.c:31 (process) on counters+0x8, written at src/shop.c:35 (process) on counters',
             'coh true | 5 misses | at src/shop.c:52 (main) on counters, written at src/shop.c:31 (process) on counters']
    # Next hot line of D1mr (heat 3 and up) after the start of the
    # file: the first such line.
    want += ['nexthot %d' % min(l for l in file_lines if heat(lines[('src/shop.c', l)][d1], mx) in ('h3', 'h4', 'h5')),
             'resources 0']
    if got != want:
        fail.append('the report in Chromium:\n' + '\n'.join(difflib.unified_diff(want, got, 'want', 'got', lineterm='')))
    else:
        print('Chromium: %d checks of rows, totals, sorting, filter, heat, clicks, flame, tree, coherence' % len(want))

    # Without scripts: the plain tables.  The report in a sandboxed iframe
    # (no allow-scripts: its script never runs), read by the page.
    dom = '\n'.join(chromium.drive(tmp, 'shop.html', 1200, 800,
                                   'out.push(d.documentElement.outerHTML);',
                                   sandbox='allow-same-origin'))
    rows = re.findall(r'<tr class="fn" data-fn="\d+">(.*?)</tr>', dom)
    names = [re.search(r'<td class="name">([^ <]+)', r).group(1) for r in rows]
    want_names = [k[1] for k in sorted(fns, key=lambda k: tuple(-abs(fns[k][e]) for e in range(len(events))) + (k[1],))]
    if names != want_names:
        fail.append('no scripts: function rows %s, want %s' % (names, want_names))
    if 'id="evmenu"></span>' not in dom or 'data-ready' in dom:
        fail.append('no scripts: the script ran?')
    if '<td>2,520</td><td>835</td>' not in dom:
        fail.append('no scripts: no totals row')
    if dom.count('<td class="ln">') != len(file_lines):
        fail.append('no scripts: %d source lines, want %d' % (dom.count('<td class="ln">'), len(file_lines)))

    # A diff: signed counts, gains and losses coloured, worked out as B - A
    # from the two files (their file names differ: each function is a gain
    # or a loss of its own).
    dpage = os.path.join(tmp, 'diff.html')
    run('--html=' + dpage, '--diff', 'merge/d1.cgout', 'merge/d2.cgout')
    dom = chromium.run(tmp, '--dump-dom', 'file://' + dpage)
    got = re.findall(r'<tr class="fn" data-fn="\d+">(.*?)<td class="name"><a class="loc">([^<]*)</a> <span class="file">([^<]*)</span>', dom)
    got = sorted((fl, fn, re.findall(r'<td(?: class="(\w+)")?>([^<]*)</td>', cells)) for cells, fn, fl in got)
    want = []
    for sign, name in ((-1, 'd1'), (1, 'd2')):
        _, dfns, _ = read_profile(os.path.join(srcdir, 'merge', name + '.cgout'))
        for (fl, fn), c in dfns.items():
            cells = [('neg' if sign * v < 0 else 'pos', ('+' if sign * v > 0 else '') + commify(sign * v)) if v else ('', '.') for v in c]
            want.append((fl, fn, cells))
    if got != sorted(want):
        fail.append('diff page: rows %s, want %s' % (got, sorted(want)))
    # Folded stacks: the tree and the flame graph, exact (small.folded:
    # main;a;x 30, main;a 10, main;b 50, other 10).
    fpage = os.path.join(tmp, 'folded.html')
    run('--html=' + fpage, 'callgrind/small.folded')
    dom = chromium.run(tmp, '--dump-dom', 'file://' + fpage)
    frames = re.findall(r'<div class="fr" title="([^"]*)" data-name="[^"]*" style="left: ([\d.]+)%; width: ([\d.]+)%', dom)
    want = [('all (100 count, 100.00%)', '0', '100'), ('main (90 count, 90.00%)', '0', '90'),
            ('other (10 count, 10.00%)', '90', '10'), ('a (40 count, 40.00%)', '0', '40'),
            ('b (50 count, 50.00%)', '40', '50'), ('x (30 count, 30.00%)', '0', '30')]
    if frames != want:
        fail.append('folded page: frames %s, want %s' % (frames, want))

    # A screenshot that is not blank: the header bar's colour and the
    # text, against the background.
    png = os.path.join(tmp, 'shot.png')
    chromium.run(tmp, '--screenshot=' + png, '--window-size=1200,800', '--hide-scrollbars', 'file://' + report)
    try:
        w, h, bpp, rows = chromium.png_rows(png)
    except (OSError, ValueError) as e:
        fail.append('screenshot: %s' % e); return
    header = sum(1 for line in rows[:30] for x in range(0, w * bpp, bpp) if tuple(line[x:x + 3]) == (0x24, 0x32, 0x3f))
    ink = sum(1 for line in rows for x in range(0, w * bpp, bpp) if sum(line[x:x + 3]) < 300)
    if header < w * 10 or ink < 20000:
        fail.append('screenshot: %d header pixels, %d dark pixels' % (header, ink))
    else:
        print('screenshot: %d header pixels, %d dark pixels' % (header, ink))

# ---- tracer ----------------------------------------------------------------

def tracer():
    cachetrace, scratch = os.path.abspath(sys.argv[4]), sys.argv[5]
    root = os.path.dirname(os.path.dirname(srcdir))
    src = os.path.join(root, 'tests', 'cachemodel', 'falseshare.c')
    w = os.path.join(scratch, 'html-tracer')
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(w)
    cc = os.environ.get('CC', 'cc')
    subprocess.run([cc, '-O2', '-g', '-fno-pie', '-no-pie', '-pthread', '-o', 'falseshare', src], cwd=w, check=True)
    text = open(src).read().split('\n')
    la = 1 + next(i for i, s in enumerate(text) if '/* LOOP-A */' in s)
    lb = 1 + next(i for i, s in enumerate(text) if '/* LOOP-B */' in s)
    p = subprocess.run([cachetrace, '--threads=all', '--start=work', '--model=jaguar', '--cores=2',
                        '--html=r%p.html', '--call-stacks=yes', '-o', 'p.out', '--', './falseshare', 'shared'],
                       cwd=w, capture_output=True)
    pages = [f for f in os.listdir(w) if f.startswith('r') and f.endswith('.html')]
    cg = [f for f in os.listdir(w) if f.startswith('callgrind.out.')]
    if p.returncode or len(pages) != 1 or len(cg) != 1:
        fail.append('cachetrace: status %d, pages %s, callgrind %s: %s' % (p.returncode, pages, cg, p.stderr.decode()[-2000:]))
        return
    if 'desc: Report:   line 0x' not in open(os.path.join(w, 'p.out')).read():
        fail.append('the profile has no desc: Report: coherence lines')
    q = subprocess.run(['cg_annotate', 'p.out'], cwd=w, capture_output=True)
    if q.returncode or q.stderr:
        fail.append('cg_annotate cannot read the profile: %s' % q.stderr.decode())
    dom = chromium.run(w, '--dump-dom', 'file://' + os.path.join(w, pages[0]))
    if 'data-ready="1"' not in dom:
        fail.append('the tracer\'s page did not finish its script')
    coh = re.search(r'<table class="counts coh" id="cohtab">(.*?)</table>', dom, re.S)
    coh = html.unescape(re.sub(r'<[^>]+>', ' ', coh.group(1))) if coh else ''
    for a, b in ((la, lb), (lb, la)):
        if not re.search(r'false\s+[\d,]+ misses\s+at\s+\S*falseshare\.c:%d \(worker_.\)\s+on counters_shared\S*, written at\s+\S*falseshare\.c:%d \(worker_.\)\s+on counters_shared' % (a, b), coh):
            fail.append('coherence table: no false-sharing pair of lines %d and %d in: %s' % (a, b, coh[:1500]))
    # The function rows against the Callgrind profile's self costs.
    events, fns, _ = read_profile(os.path.join(w, cg[0]))
    ir = events.index('Ir')
    top = max(fns, key=lambda k: fns[k][ir])
    rows = re.findall(r'<tr class="fn[^"]*" data-fn="\d+">(.*?)</tr>', dom)
    if not rows:
        fail.append('the tracer\'s page has no function rows'); return
    first = html.unescape(re.sub(r'<[^>]+>', ' ', rows[0])).split()
    if first[0] != commify(fns[top][ir]) or top[1] not in first:
        fail.append('first row %s, want %s with Ir %s' % (first, top, commify(fns[top][ir])))
    print('tracer: pairs of lines %d and %d, top function %s' % (la, lb, top[1]))

{'golden': golden, 'malformed': malformed, 'chromium': browser, 'tracer': tracer}[mode]()
shutil.rmtree(tmp, ignore_errors=True)
for f in fail:
    print('FAIL:', f)
sys.exit(1 if fail else 0)
