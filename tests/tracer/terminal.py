#!/usr/bin/env python3
"""cachetrace on a terminal (issue 26, items 10-12), in a pseudo-terminal
that cachetrace and its target share, as a user's shell gives them:

- the progress line is never left under the target's own output: the
  screen, rebuilt from the bytes written (a carriage return goes back to
  the start of the line, text overwrites), has every "workround K" line
  whole; and the progress line was drawn (else the check proves nothing);
- attaching says so once armed, naming the pid, the threads and the start
  event; an interrupt before the start event warns that nothing was
  traced, as a launched run whose target exits first does;
- --toggle-signal: the handler is in place before anything is attached
  (strace's record of cachetrace's own system calls: rt_sigaction of the
  toggle signal before the first ptrace), and the armed line names the
  command that starts a window; two signals make one window;
- a signal that comes between the loop's look at its signals and its wait
  for the target (CACHETRACE_TEST_WAIT_LATE puts 300 ms there while no
  window runs) is taken at once all the same: an interrupt, and the toggle
  signal (once, in CI, the first toggle waited 30 s for the second, and
  the window they began never ended).

Usage: terminal.py CACHETRACE SRCDIR SCRATCH.  Each check prints ok: or FAIL:."""
import os, pty, re, select, signal, subprocess, sys, time

ct, srcdir, scratch = (os.path.abspath(a) for a in sys.argv[1:4])
w = os.path.join(scratch, 'tracer-terminal')
os.makedirs(w, exist_ok=True)
os.chdir(w)
fails = 0


def ok(what):
    print('ok:', what)


def fail(what):
    global fails
    fails += 1
    print('FAIL:', what)


subprocess.run(['cc', '-O2', '-g', '-fno-pie', '-no-pie', '-o', 'rounds',
                os.path.join(srcdir, 'tests/tracer/rounds.c')], check=True)
engine = os.environ.get('CACHETRACE_ENGINE', 'instrument')
step = engine == 'step'


class Term:
    """A process whose stdin, stdout and stderr are one pseudo-terminal."""

    def __init__(self, argv, env=None):
        self.master, slave = pty.openpty()
        self.p = subprocess.Popen(argv, stdin=slave, stdout=slave,
                                  stderr=slave, close_fds=True, env=env)
        os.close(slave)
        self.data = b''

    def read(self, until=None, timeout=60):
        """Read until the text matches UNTIL (a regex) or the end."""
        end = time.time() + timeout
        while time.time() < end:
            if until and re.search(until, self.data.decode(errors='replace')):
                return True
            r, _, _ = select.select([self.master], [], [], 0.1)
            if r:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:		# EIO: every writer is gone
                    chunk = b''
                if not chunk:
                    return until is None
                self.data += chunk
        return False

    def wait(self, timeout=60):
        self.read(None, timeout)
        try:
            return self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return None

    def text(self):
        return self.data.decode(errors='replace')


def target_runs_on(srv, what):
    if srv.poll() is None:
        ok('%s: the target runs on' % what)
    else:
        fail('%s: the target ended: %s' % (what, srv.returncode))


def screen(text):
    """The lines a terminal shows for TEXT: '\\r' to column 0, overwrite."""
    lines, cur, col = [], [], 0
    for ch in text:
        if ch == '\n':
            lines.append(''.join(cur).rstrip())
            cur, col = [], 0
        elif ch == '\r':
            col = 0
        else:
            if col < len(cur):
                cur[col] = ch
            else:
                cur.append(ch)
            col += 1
    if cur:
        lines.append(''.join(cur).rstrip())
    return lines


# 1. The progress line and the target's output on one terminal.
# work(N) is ~4N instructions: 4 rounds of a few tenths of a second each,
# so that the progress line (every 0.25 s) is drawn
n = {'step': '10000', 'instrument': '40000000'}.get(engine, '3000000')
t = Term([ct, '--start=main', '-o', 'p.cg', '--', './rounds', n, '4'])
rc = t.wait(300)
out = t.text()
if rc != 0:
    fail('progress: exit %s: %s' % (rc, out[-400:]))
if re.search(r'cachetrace: \d+ instructions, [\d.]+k/s', out):
    ok('progress: the progress line was drawn')
else:
    fail('progress: no progress line was drawn (nothing checked): %r'
         % out[:300])
rows = [l for l in screen(out) if 'workround' in l]
bad = [l for l in rows if not re.fullmatch(r'workround \d', l)]
if len(rows) == 4 and not bad:
    ok('progress: the 4 lines of the target are whole on the screen')
else:
    fail('progress: the screen shows %r' % (bad or rows))

# 2. Attached, a start event that never comes, then SIGINT.
srv = subprocess.Popen(['./rounds', 'serve'])
try:
    t = Term([ct, '-p', str(srv.pid), '--start=never', '-o', 'a.cg'])
    want = r'cachetrace: attached to %d \(\./rounds serve\), 1 thread; ' \
        r'waiting for --start=never' % srv.pid
    if t.read(want, 30):
        ok('attach: says it is attached and armed')
    else:
        fail('attach: %r' % t.text())
    t.p.send_signal(signal.SIGINT)
    rc = t.wait(30)
    if rc == 128 + signal.SIGINT:
        ok('attach: SIGINT: exit %d' % rc)
    else:
        fail('attach: SIGINT: exit %s' % rc)
    if re.search(r'warning: interrupted by Interrupt before the start event '
                 r'\(--start=never\); no instructions were traced', t.text()):
        ok('attach: SIGINT: warns that nothing was traced')
    else:
        fail('attach: SIGINT: no warning: %r' % t.text())
    target_runs_on(srv, 'attach')

    # 3. --toggle-signal: the handler before the attach; one window.
    log = 'strace.log'
    # LeakSanitizer cannot run under ptrace (the suite's sanitizer pass).
    env = dict(os.environ)
    env['ASAN_OPTIONS'] = env.get('ASAN_OPTIONS', '') + ':detect_leaks=0'
    t = Term(['strace', '-f', '-qq', '-o', log, '-e',
              'trace=rt_sigaction,ptrace', ct, '-p', str(srv.pid),
              '--toggle-signal=SIGUSR2', '-o', 't.cg'], env)
    want = r'attached to %d .*; `kill -USR2 (\d+)` starts a window' % srv.pid
    if t.read(want, 30):
        ok('toggle: the armed line names the signal')
        ctpid = int(re.search(want, t.text()).group(1))
        os.kill(ctpid, signal.SIGUSR2)
        # The second signal once the window runs (its progress line is
        # drawn): sent earlier, under strace and a loaded sanitizer build
        # the kernel merged it with the first (one pending SIGUSR2), and
        # the window never ended.
        if not t.read(r'cachetrace: \d+ instructions', 30):
            fail('toggle: no progress line 30 s after the first signal '
                 '(no window began?): %r' % t.text()[-300:])
        time.sleep(0.3)
        os.kill(ctpid, signal.SIGUSR2)
    else:
        fail('toggle: %r' % t.text())
    rc = t.wait(60)
    if rc == 0:
        ok('toggle: exit 0')
    else:
        fail('toggle: exit %s: %s' % (rc, t.text()[-300:]))
    if os.path.exists('t.cg') and \
            re.search(r'^desc: Windows: +1$', open('t.cg').read(), re.M):
        ok('toggle: one window')
    else:
        fail('toggle: no profile of one window')
    # With -p the tracer is the front process's child (strace -f: each
    # line starts with its pid): its own calls, in order.
    lines = open(log).read().split('\n') if os.path.exists(log) else []
    tracer = [l.split(None, 1)[0] for l in lines if ' ptrace(' in l][:1]
    calls = [l.split(None, 1)[1] for l in lines
             if tracer and l.startswith(tracer[0] + ' ')]
    usr2 = [i for i, l in enumerate(calls)
            if l.startswith('rt_sigaction(SIGUSR2, {sa_handler=0x')]
    first_ptrace = [i for i, l in enumerate(calls) if l.startswith('ptrace(')]
    if usr2 and first_ptrace and usr2[0] < first_ptrace[0]:
        ok('toggle: the SIGUSR2 handler is in place before the first ptrace')
    else:
        fail('toggle: SIGUSR2 handler at line %s, first ptrace at %s of %s'
             % (usr2[:1], first_ptrace[:1], log))
    target_runs_on(srv, 'toggle')

    # 4. Signals between the look and the wait (CACHETRACE_TEST_WAIT_LATE).
    env = dict(os.environ, CACHETRACE_TEST_WAIT_LATE='1')
    t = Term([ct, '-p', str(srv.pid), '--start=never', '-o', 'late.cg'],
             env)
    if t.read(r'waiting for --start=never', 30):
        time.sleep(0.1)
        t.p.send_signal(signal.SIGINT)
        rc = t.wait(10)
        if rc == 128 + signal.SIGINT:
            ok('late: an interrupt during the wait\'s lateness: exit %d' % rc)
        else:
            fail('late: an interrupt during the wait\'s lateness: exit %s'
                 % rc)
    else:
        fail('late: %r' % t.text())
    t = Term([ct, '-p', str(srv.pid), '--toggle-signal=SIGUSR2',
              '-o', 'late-t.cg'], env)
    want = r'`kill -USR2 (\d+)` starts a window'
    if t.read(want, 30):
        ctpid = int(re.search(want, t.text()).group(1))
        time.sleep(0.1)
        os.kill(ctpid, signal.SIGUSR2)
        if t.read(r'cachetrace: \d+ instructions', 10):
            ok('late: the toggle signal began a window at once')
        else:
            fail('late: no window 10 s after the toggle signal: %r'
                 % t.text()[-300:])
        os.kill(ctpid, signal.SIGUSR2)
        rc = t.wait(30)
        if rc == 0 and re.search(r'^desc: Windows: +1$',
                                 open('late-t.cg').read(), re.M):
            ok('late: the second ended it: one window')
        else:
            fail('late: exit %s after the second toggle signal' % rc)
    else:
        fail('late: %r' % t.text())
    target_runs_on(srv, 'late')
finally:
    srv.kill()
    srv.wait()

print('terminal: all passed' if not fails else 'terminal: %d failed' % fails)
sys.exit(1 if fails else 0)
