#!/usr/bin/env python3
"""Open an HTML report in headless Chromium and time what a user does:
bench/annotate/html-open.py REPORT.html.  Prints the time the page took to
draw itself (navigation start to the end of its script), then the time of a
sort by a column, of typing in the filter box, of a change of event in the
menu and of a jump to the next hot line, and how many rows and source lines
the page holds in its DOM after each (it draws them lazily)."""
import os, shutil, sys, tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tests', 'annotate'))
import chromium

report = os.path.abspath(sys.argv[1])
tmp = tempfile.mkdtemp()
shutil.copy(report, os.path.join(tmp, 'r.html'))
lines = chromium.drive(tmp, 'r.html', 1400, 900, r"""
  var rows = function () { return d.querySelectorAll('#fntab tbody tr').length + ' rows, ' +
                           d.querySelectorAll('#srctab tbody tr').length + ' source lines'; };
  var time = function (what, f) { var t = performance.now(); f(); d.body.offsetHeight;
    out.push(what + ' ' + (performance.now() - t).toFixed(0) + ' ms, ' + rows()); };
  out.push('drawn ' + d.body.dataset.readyMs + ' ms after navigation, ' + rows() +
           ', ' + d.querySelectorAll('*').length + ' elements');
  time('sort by the 5th column', function () {
    d.querySelectorAll('#fntab th')[4].dispatchEvent(new w.MouseEvent('click', { bubbles: true })); });
  time('filter "function07"', function () {
    var f = d.getElementById('filter'); f.value = 'function07'; f.dispatchEvent(new w.Event('input')); });
  time('event menu: the 2nd event', function () {
    var e = d.getElementById('ev'); e.value = 1; e.dispatchEvent(new w.Event('change')); });
  time('next hot line', function () {
    var b = d.getElementById('nexthot'); if (b) b.dispatchEvent(new w.MouseEvent('click', { bubbles: true })); });
  time('clear the filter, scroll to the end of the table', function () {
    var f = d.getElementById('filter'); f.value = ''; f.dispatchEvent(new w.Event('input'));
    var p = d.getElementById('fnpane'); p.scrollTop = p.scrollHeight; p.dispatchEvent(new w.Event('scroll')); });
""", None, '--window-size=1400,900')
print('\n'.join(lines))
print('page: %d bytes' % os.path.getsize(report))
shutil.rmtree(tmp, ignore_errors=True)
