"""Headless Chromium for the annotator's browser tests (flamegraph.py,
html.py): find it (a test dependency, tests/install-deps.sh: missing is a
failure, never a skip), run it with no network, and decode its PNG
screenshots."""
import html, os, re, shutil, struct, subprocess, sys, tempfile, zlib

def find():
    chromium = shutil.which('chromium') or '/usr/bin/chromium'
    if not os.access(chromium, os.X_OK):
        print('FAIL: no chromium: run tests/install-deps.sh'); sys.exit(1)
    return chromium

# Nothing may come from the network: no DNS, a dead proxy, and when the
# kernel lets us, a network namespace with nothing in it.
def _jail():
    for u in (['unshare', '-n'], ['unshare', '-rn']):
        if shutil.which('unshare') and subprocess.run(u + ['true'], capture_output=True).returncode == 0:
            return u
    return []

_JAIL = None

def run(cwd, *args):
    """Chromium's stdout for ARGS (--dump-dom FILE, --screenshot=...)."""
    global _JAIL
    if _JAIL is None:
        _JAIL = _jail()
    prof = tempfile.mkdtemp()
    p = subprocess.run(_JAIL + [find(), '--headless', '--no-sandbox', '--disable-gpu',
                        '--disable-background-networking', '--disable-component-update',
                        '--disable-sync', '--no-first-run', '--no-default-browser-check',
                        '--host-resolver-rules=MAP * ~NOTFOUND', '--proxy-server=127.0.0.1:9',
                        # a test page reads the document in its iframe
                        '--allow-file-access-from-files', '--user-data-dir=' + prof]
                       + list(args), capture_output=True, timeout=120, cwd=cwd)
    shutil.rmtree(prof, ignore_errors=True)
    return p.stdout.decode('utf-8', 'replace')

_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>test page</title></head>
<body style="margin:0">
<iframe id="t" src="%s" width="%d" height="%d"%s style="border:0;display:block"></iframe>
<pre id="out"></pre>
<script>
window.addEventListener('load', function () {
  var out = [];
  try {
    var w = document.getElementById('t').contentWindow, d = w.document;
%s
  } catch (e) { out.push('error ' + e + ' ' + e.stack); }
  document.getElementById('out').textContent = out.join('\\n');
});
</script></body></html>
"""

def drive(cwd, src, width, height, script, sandbox=None, *args):
    """Load SRC (a file in CWD) in an iframe of a test page and run SCRIPT
    there after the load, as a user would act: JavaScript with w the
    iframe's window, d its document, out an array of lines.  Returns the
    lines (the page's DOM after the script, read with --dump-dom).
    SANDBOX: the iframe's sandbox attribute ("allow-same-origin": the
    document is readable, its own scripts do not run)."""
    page = os.path.join(cwd, 'test-page.html')
    box = ' sandbox="%s"' % sandbox if sandbox is not None else ''
    open(page, 'w').write(_PAGE % (src, width, height, box, script))
    dom = run(cwd, '--dump-dom', *args, 'file://' + page)
    m = re.search(r'<pre id="out">(.*?)</pre>', dom, re.S)
    return html.unescape(m.group(1)).split('\n') if m else ['no output: ' + dom[:300]]

def png_rows(path):
    """(width, height, rows): each row a bytearray of RGB(A) pixels, BPP
    bytes each (8-bit RGB or RGBA, no interlace)."""
    d = open(path, 'rb').read()
    pos, idat, w = 8, b'', 0
    while pos < len(d):
        n, typ = struct.unpack('>I4s', d[pos:pos + 8])
        body = d[pos + 8:pos + 8 + n]
        if typ == b'IHDR':
            w, h, depth, ctype = struct.unpack('>IIBB', body[:10])
        elif typ == b'IDAT':
            idat += body
        pos += 12 + n
    if depth != 8 or ctype not in (2, 6):
        raise ValueError('PNG depth %d type %d' % (depth, ctype))
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), w * bpp
    prev, rows = bytearray(stride), []
    for y in range(h):
        ft, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if ft == 1: line[i] = (line[i] + a) & 255
            elif ft == 2: line[i] = (line[i] + b) & 255
            elif ft == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif ft == 4:
                p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows
