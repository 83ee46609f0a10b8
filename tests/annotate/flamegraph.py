#!/usr/bin/env python3
"""cachetrace-annotate --flamegraph: the SVG is well formed, self-contained,
and holds the expected frames with the expected widths, worked out by hand
from small inputs (usable width 1180 px between 10 px margins; a frame is
count / total * 1180 wide; 16 px per level; children in name order).
Usage: flamegraph.py ANNOTATE SRCDIR [svg|chromium].  The chromium mode
loads the SVG in headless Chromium, drives its script from a page (hover,
zoom, reset, search), checks the widths Chromium lays out, and renders the
SVG and checks the picture; without Chromium it fails."""
import difflib, html, os, re, shutil, subprocess, sys, tempfile
import xml.etree.ElementTree as ET
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chromium as chromium_mod

ann, srcdir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
mode = sys.argv[3] if len(sys.argv) > 3 else 'svg'
cg = os.path.join(srcdir, 'callgrind')
NS = '{http://www.w3.org/2000/svg}'
tmp = tempfile.mkdtemp()
fail = []

def run(*args, data=None):
    p = subprocess.run([ann] + list(args), input=data, capture_output=True)
    if p.returncode:
        fail.append('%s: status %d: %s' % (args, p.returncode, p.stderr.decode()))
    return p

def frames(path):
    root = ET.parse(path).getroot()
    if root.tag != NS + 'svg':
        fail.append('%s: root is %s' % (path, root.tag))
    out = {}
    for g in root.iter(NS + 'g'):
        if g.get('class') != 'f':
            continue
        title = g.find(NS + 'title').text
        r = g.find(NS + 'rect')
        name = title[:title.rindex(' (')]
        out.setdefault(name, []).append((r.get('x'), r.get('y'), r.get('width'), title))
    return root, out

def expect(path, want):
    root, got = frames(path)
    for name, rows in want.items():
        if sorted(got.get(name, [])) != sorted(rows):
            fail.append('%s: frame %r: got %s, want %s' % (os.path.basename(path), name, got.get(name), rows))
    extra = set(got) - set(want)
    if extra:
        fail.append('%s: unexpected frames %s' % (os.path.basename(path), sorted(extra)))
    return root

def self_contained(path):
    text = open(path, encoding='utf-8').read()
    root = ET.parse(path).getroot()
    for el in root.iter():
        for k, v in el.attrib.items():
            if 'href' in k or (('http:' in v or 'https:' in v) and k != 'xmlns'):
                fail.append('%s: external reference %s=%s' % (path, k, v))
    for must in ('<script', 'function zoom', 'function search', 'id="details"',
                 'id="search"', 'id="reset"'):
        if must not in text:
            fail.append('%s: no %s' % (path, must))
    # xmllint (libxml2-utils, tests/install-deps.sh) is required
    if not shutil.which('xmllint'):
        fail.append('no xmllint: run tests/install-deps.sh')
        return
    p = subprocess.run(['xmllint', '--noout', path], capture_output=True)
    if p.returncode:
        fail.append('%s: xmllint: %s' % (path, p.stderr.decode()))

if mode == 'svg':
    # small.folded: main;a;x 30, main;a 10, main;b 50, other 10 (total 100).
    # Height 50 + 4 levels * 16 + 34 = 148; level d at y = 148-34-16(d+1).
    f = os.path.join(tmp, 'small.svg')
    run('--flamegraph=' + f, '--event=DLmr', os.path.join(cg, 'small.folded'))
    root = expect(f, {
        'all':   [('10.00', '98.0', '1180.00', 'all (100 DLmr, 100.00%)')],
        'main':  [('10.00', '82.0', '1062.00', 'main (90 DLmr, 90.00%)')],
        'a':     [('10.00', '66.0', '472.00', 'a (40 DLmr, 40.00%)')],
        'x':     [('10.00', '50.0', '354.00', 'x (30 DLmr, 30.00%)')],
        'b':     [('482.00', '66.0', '590.00', 'b (50 DLmr, 50.00%)')],
        'other': [('1072.00', '82.0', '118.00', 'other (10 DLmr, 10.00%)')],
    })
    if (root.get('width'), root.get('height')) != ('1200', '148'):
        fail.append('small.svg: size %s x %s, want 1200 x 148' % (root.get('width'), root.get('height')))
    self_contained(f)
    # From the call graph of game.cgout, by DLmr (total 14,000): frame_a
    # 9000/14000*1180 = 758.571, frame_b 421.429 at 10 + 758.571; under
    # frame_b, cull 3000 -> 252.857 and physics 2000 -> 168.571.
    f = os.path.join(tmp, 'game.svg')
    run('--flamegraph=' + f, '--event=DLmr', os.path.join(cg, 'game.cgout'))
    expect(f, {
        'all':     [('10.00', '114.0', '1180.00', 'all (14,000 DLmr, 100.00%)')],
        'main':    [('10.00', '98.0', '1180.00', 'main (14,000 DLmr, 100.00%)')],
        'frame_a': [('10.00', '82.0', '758.57', 'frame_a (9,000 DLmr, 64.29%)')],
        'frame_b': [('768.57', '82.0', '421.43', 'frame_b (5,000 DLmr, 35.71%)')],
        'cull':    [('10.00', '66.0', '758.57', 'cull (9,000 DLmr, 64.29%)'),
                    ('768.57', '66.0', '252.86', 'cull (3,000 DLmr, 21.43%)')],
        'physics': [('1021.43', '66.0', '168.57', 'physics (2,000 DLmr, 14.29%)')],
        'getpos':  [('10.00', '50.0', '758.57', 'getpos (9,000 DLmr, 64.29%)'),
                    ('768.57', '50.0', '252.86', 'getpos (3,000 DLmr, 21.43%)'),
                    ('1021.43', '50.0', '168.57', 'getpos (2,000 DLmr, 14.29%)')],
    })
    self_contained(f)
    # --blame draws the callers upside down, the root at the top (y 50):
    # cull 12000/14000*1180 = 1011.429, physics 168.571 after it.
    f = os.path.join(tmp, 'blame.svg')
    run('--flamegraph=' + f, '--blame=getpos', '--event=DLmr', os.path.join(cg, 'game.cgout'))
    expect(f, {
        'getpos':  [('10.00', '50.0', '1180.00', 'getpos (14,000 DLmr, 100.00%)')],
        'cull':    [('10.00', '66.0', '1011.43', 'cull (12,000 DLmr, 85.71%)')],
        'physics': [('1021.43', '66.0', '168.57', 'physics (2,000 DLmr, 14.29%)')],
        'frame_a': [('10.00', '82.0', '758.57', 'frame_a (9,000 DLmr, 64.29%)')],
        'frame_b': [('768.57', '82.0', '252.86', 'frame_b (3,000 DLmr, 21.43%)'),
                    ('1021.43', '82.0', '168.57', 'frame_b (2,000 DLmr, 14.29%)')],
        'main':    [('10.00', '98.0', '758.57', 'main (9,000 DLmr, 64.29%)'),
                    ('768.57', '98.0', '252.86', 'main (3,000 DLmr, 21.43%)'),
                    ('1021.43', '98.0', '168.57', 'main (2,000 DLmr, 14.29%)')],
    })
    # Names that need escaping, bytes that are not UTF-8, and a frame
    # narrower than 0.1 px (1/100002 * 1180), which is left out.
    f = os.path.join(tmp, 'esc.svg')
    data = b'm;a<&"\'>b 50000\nm;c\xffd 50000\nm;\xc3\xa9t\xc3\xa9 1\nm;tiny;t 1\n'
    run('--flamegraph=' + f, '--folded', '-', data=data)
    _, got = frames(f)
    for name in ('a<&"\'>b', 'c?d', 'm', 'all'):
        if name not in got:
            fail.append('esc.svg: no frame %r (got %s)' % (name, sorted(got)))
    if 'tiny' in got or 't' in got or '\u00e9t\u00e9' in got:
        fail.append('esc.svg: frames under 0.1 px drawn: %s' % sorted(got))
    self_contained(f)
elif mode == 'chromium':
    chromium_mod.find()
    f = os.path.join(tmp, 'game.svg')
    run('--flamegraph=' + f, '--event=DLmr', os.path.join(cg, 'game.cgout'))
    png = os.path.join(tmp, 'out.png')

    def chrome(*args):
        return chromium_mod.run(tmp, *args)

    # The SVG is loaded unmodified in an iframe of an HTML page whose own
    # script drives it as a user would (hover, click to zoom, Reset Zoom,
    # Search through its prompt, Clear) and reads back what Chromium laid
    # out: getBoundingClientRect of every frame (a hidden frame has no box),
    # elementFromPoint, computed fills.  The results go into the page's
    # DOM, which --dump-dom prints.
    got = chromium_mod.drive(tmp, 'game.svg', 1200, 164, r"""
    var rects = d.querySelectorAll('g.f rect');
    var name = function (r) { var t = r.parentNode.querySelector('title').textContent;
                              return t.substring(0, t.lastIndexOf(' (')); };
    var boxes = function (what) {
      for (var i = 0; i < rects.length; i++) {
        var b = rects[i].getBoundingClientRect();
        if (b.width > 0)
          out.push(what + ' ' + name(rects[i]) + ' ' + b.x.toFixed(2) + ' ' + b.width.toFixed(2));
      }
    };
    var find = function (n) { for (var i = 0; i < rects.length; i++) if (name(rects[i]) == n) return rects[i]; };
    var click = function (el) {
      var b = el.getBoundingClientRect();
      el.dispatchEvent(new w.MouseEvent('click', { bubbles: true, view: w,
        clientX: b.x + b.width / 2, clientY: b.y + b.height / 2 }));
    };
    var purple = function (what) {
      for (var i = 0; i < rects.length; i++)
        if (w.getComputedStyle(rects[i]).fill == 'rgb(230, 0, 230)')
          out.push(what + ' ' + rects[i].parentNode.querySelector('title').textContent);
    };
    boxes('drawn');
    var b = find('frame_b'), bb = b.getBoundingClientRect();
    var hit = d.elementFromPoint(bb.x + bb.width / 2, bb.y + bb.height / 2);
    out.push('hit ' + (hit && hit.parentNode.querySelector('title') ? name(hit) : String(hit)));
    b.dispatchEvent(new w.MouseEvent('mouseover', { bubbles: true, view: w }));
    out.push('details ' + d.getElementById('details').textContent);
    click(b);
    boxes('zoomed');
    click(d.getElementById('reset'));
    boxes('reset');
    w.prompt = function () { return 'cull'; };
    click(d.getElementById('search'));
    out.push('search ' + d.getElementById('matched').textContent);
    purple('purple');
    click(d.getElementById('search'));
    out.push('cleared [' + d.getElementById('matched').textContent + ']');
    purple('still purple');
    [performance, w.performance].forEach(function (p) {
      p.getEntriesByType('resource').forEach(function (e) {
        if (!/^file:/.test(e.name)) out.push('fetched ' + e.name); }); });
""")
    # game.cgout by DLmr: the widths of the svg mode above, as drawn.
    # Zoomed on frame_b, it is 1180 px; cull 3000/5000 of it, from the
    # SVG's rounded 252.86 / 421.43 * 1180 = 708.01; physics after it;
    # its ancestors all and main stay full width; frame_a's side is gone.
    # cull's two frames cover (758.57 + 252.86) / 1180 = 85.7%.
    drawn = ['all 10.00 1180.00', 'main 10.00 1180.00', 'frame_a 10.00 758.57',
             'cull 10.00 758.57', 'getpos 10.00 758.57', 'frame_b 768.57 421.43',
             'cull 768.57 252.86', 'getpos 768.57 252.86', 'physics 1021.43 168.57',
             'getpos 1021.43 168.57']
    want = (['drawn ' + x for x in drawn] +
            ['hit frame_b', 'details frame_b (5,000 DLmr, 35.71%)',
             'zoomed all 10.00 1180.00', 'zoomed main 10.00 1180.00',
             'zoomed frame_b 10.00 1180.00', 'zoomed cull 10.00 708.01',
             'zoomed getpos 10.00 708.01', 'zoomed physics 718.01 471.99',
             'zoomed getpos 718.01 471.99'] +
            ['reset ' + x for x in drawn] +
            ['search Matched: 85.7%', 'purple cull (9,000 DLmr, 64.29%)',
             'purple cull (3,000 DLmr, 21.43%)', 'cleared [ ]'])
    if got != want:
        print('FAIL: the flame graph in Chromium:')
        for line in difflib.unified_diff(want, got, 'want', 'got', lineterm=''):
            print(line)
        sys.exit(1)
    print('Chromium: %d checks of widths, hover, zoom, reset and search' % len(want))
    chrome('--screenshot=' + png, '--window-size=1200,600', 'file://' + f)
    if not os.path.exists(png) or os.path.getsize(png) < 2000:
        print('FAIL: no screenshot, or a trivial one'); sys.exit(1)
    # Count the pixels in the flame palette: red 205-255, blue under 60.
    w, h, bpp, rows = chromium_mod.png_rows(png)
    if (w, h) != (1200, 600):
        print('FAIL: PNG is %dx%d' % (w, h)); sys.exit(1)
    flame = sum(1 for line in rows for x in range(0, w * bpp, bpp)
                if line[x] >= 205 and line[x + 2] < 60)
    # 7 frame rows of 15 px over about 1180 px: far more than 20,000 pixels.
    if flame < 20000:
        print('FAIL: only %d flame-coloured pixels' % flame); sys.exit(1)
    print('%d flame-coloured pixels' % flame)
shutil.rmtree(tmp, ignore_errors=True)
for f in fail:
    print('FAIL:', f)
sys.exit(1 if fail else 0)
