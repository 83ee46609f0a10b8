/* Flame graphs: a call tree drawn as an interactive SVG (flamegraph.pl's
 * look: hover for the tooltip, click to zoom, search), self-contained so
 * that it opens from a file with no network. */
#include "calltree.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "report.h"

size_t markup_utf8_len(const unsigned char *u, size_t n)
{
	unsigned c = u[0];
	if (c < 0x80)
		return 1;
	unsigned len = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 && c < 0xf0 ? 3 :
		       c >= 0xc2 && c < 0xe0 ? 2 : 0;
	uint32_t cp = len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 0x07;
	if (!len || len > n)
		return 0;
	for (unsigned k = 1; k < len; k++) {
		if ((u[k] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (u[k] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe ||
	    cp == 0xffff)
		return 0;
	return len;
}

void markup_put(FILE *out, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {
		unsigned c = u[i];
		size_t len = markup_utf8_len(u + i, n - i);
		if (len > 1) {
			fwrite(u + i, 1, len, out);
			i += len;
			continue;
		}
		i++;
		switch (len ? c : '?') {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default:
			fputc(c < 0x20 && c != '\t' ? '?' : len ? (int)c : '?',
			      out);
		}
	}
}

static void xml_puts(FILE *out, const char *s)
{
	markup_put(out, s, strlen(s));
}

/* flamegraph.pl's "hot" palette, from a hash of the name, so a function
 * keeps its colour from one graph to the next. */
void ctree_colour(const char *s, int *r, int *g, int *b)
{
	uint64_t h = hash_fnv1a(HASH_FNV1A_INIT, s, strlen(s));
	h ^= h >> 31;
	double v1 = (double)(h & 0xffff) / 65535.0;
	double v2 = (double)(h >> 16 & 0xffff) / 65535.0;
	double v3 = (double)(h >> 32 & 0xffff) / 65535.0;
	*r = 205 + (int)(50 * v3);
	*g = (int)(230 * v1);
	*b = (int)(55 * v2);
}

#define SVG_FRAME 16
#define SVG_TOP 50
#define SVG_BOTTOM 34
#define SVG_PAD 10
#define SVG_CHAR 7.08	/* 12px Verdana, as flamegraph.pl reckons it */

static const char svg_script[] =
"var svg = document.documentElement, W = +svg.getAttribute('data-w'),\n"
"    PAD = " "10" ", INV = svg.getAttribute('data-inv') == '1';\n"
"var frames = [], details, matched, searching = null;\n"
"function label(f, w) {\n"
"  var n = Math.floor((w - 6) / 7.08), s = f.name;\n"
"  f.t.textContent = n < 3 ? '' : s.length <= n ? s : s.substring(0, n - 2) + '..';\n"
"}\n"
"function place(f, x, w) {\n"
"  f.r.setAttribute('x', x.toFixed(2)); f.r.setAttribute('width', w.toFixed(2));\n"
"  f.t.setAttribute('x', (x + 3).toFixed(2)); label(f, w);\n"
"}\n"
"function init() {\n"
"  details = document.getElementById('details');\n"
"  matched = document.getElementById('matched');\n"
"  var gs = document.querySelectorAll('g.f');\n"
"  for (var i = 0; i < gs.length; i++) {\n"
"    var g = gs[i], r = g.querySelector('rect'), ti = g.querySelector('title').textContent;\n"
"    var f = { g: g, r: r, t: g.querySelector('text'), x: +r.getAttribute('x'),\n"
"      w: +r.getAttribute('width'), y: +r.getAttribute('y'), info: ti,\n"
"      name: ti.substring(0, ti.lastIndexOf(' (')), fill: r.getAttribute('fill') };\n"
"    g.fi = f; frames.push(f);\n"
"  }\n"
"  svg.addEventListener('mouseover', function (e) {\n"
"    var g = e.target.closest ? e.target.closest('g.f') : null;\n"
"    if (g) details.textContent = g.fi.info;\n"
"  });\n"
"  svg.addEventListener('mouseout', function (e) { details.textContent = ' '; });\n"
"  svg.addEventListener('click', function (e) {\n"
"    var g = e.target.closest ? e.target.closest('g.f') : null;\n"
"    if (g) zoom(g.fi);\n"
"  });\n"
"  document.getElementById('reset').addEventListener('click', function (e) { e.stopPropagation(); unzoom(); });\n"
"  document.getElementById('search').addEventListener('click', function (e) { e.stopPropagation(); search(); });\n"
"}\n"
"function zoom(z) {\n"
"  var e = 0.0001, s = (W - 2 * PAD) / z.w;\n"
"  for (var i = 0; i < frames.length; i++) {\n"
"    var f = frames[i], above = INV ? f.y < z.y : f.y > z.y;\n"
"    if (above && f.x <= z.x + e && f.x + f.w >= z.x + z.w - e) {\n"
"      f.g.style.display = ''; f.g.style.opacity = 0.5; place(f, PAD, W - 2 * PAD);\n"
"    } else if (!above && f.x >= z.x - e && f.x + f.w <= z.x + z.w + e) {\n"
"      f.g.style.display = ''; f.g.style.opacity = ''; place(f, PAD + (f.x - z.x) * s, f.w * s);\n"
"    } else {\n"
"      f.g.style.display = 'none';\n"
"    }\n"
"  }\n"
"  document.getElementById('reset').style.opacity = 1;\n"
"}\n"
"function unzoom() {\n"
"  for (var i = 0; i < frames.length; i++) {\n"
"    var f = frames[i];\n"
"    f.g.style.display = ''; f.g.style.opacity = ''; place(f, f.x, f.w);\n"
"  }\n"
"  document.getElementById('reset').style.opacity = 0.1;\n"
"}\n"
"function search() {\n"
"  if (searching !== null) {\n"
"    searching = null; matched.textContent = ' ';\n"
"    for (var i = 0; i < frames.length; i++) frames[i].r.setAttribute('fill', frames[i].fill);\n"
"    document.getElementById('search').textContent = 'Search';\n"
"    return;\n"
"  }\n"
"  var term = prompt('Search for (a regular expression):', '');\n"
"  if (term === null || term === '') return;\n"
"  var re; try { re = new RegExp(term); } catch (err) { alert(err); return; }\n"
"  highlight(re);\n"
"}\n"
"function highlight(re) {\n"
"  searching = re;\n"
"  var iv = [];\n"
"  for (var i = 0; i < frames.length; i++) {\n"
"    var f = frames[i];\n"
"    if (re.test(f.name)) { f.r.setAttribute('fill', 'rgb(230,0,230)'); iv.push([f.x, f.x + f.w]); }\n"
"  }\n"
"  iv.sort(function (a, b) { return a[0] - b[0]; });\n"
"  var sum = 0, end = -1;\n"
"  for (var i = 0; i < iv.length; i++) {\n"
"    var a = Math.max(iv[i][0], end);\n"
"    if (iv[i][1] > a) sum += iv[i][1] - a;\n"
"    if (iv[i][1] > end) end = iv[i][1];\n"
"  }\n"
"  matched.textContent = 'Matched: ' + (100 * sum / (W - 2 * PAD)).toFixed(1) + '%';\n"
"  document.getElementById('search').textContent = 'Clear';\n"
"}\n"
"window.addEventListener('load', init);\n";

/* x and width of every node into X, W, ON (wide enough to draw);
 * children squeezed into their parent when (by rounding or inconsistent
 * input) they add up to more.  Returns the deepest drawn depth. */
static uint32_t svg_layout(const struct ctree *t, double usable, double *x,
			   double *w, bool *on)
{
	int64_t total = t->n[0].val;
	uint32_t maxd = 0;

	x[0] = SVG_PAD;
	w[0] = total > 0 ? usable : 0;
	on[0] = total > 0;
	for (uint32_t i = 0; i < t->n_nodes; i++) {
		if (!on[i])
			continue;
		if (t->n[i].depth > maxd)
			maxd = t->n[i].depth;
		double sum = 0;
		for (uint32_t c = t->n[i].child; c != CT_NONE; c = t->n[c].next)
			if (t->n[c].val > 0)
				sum += (double)t->n[c].val;
		double scale = total > 0 ? usable / (double)total : 0;
		if (sum * scale > w[i] && sum > 0)
			scale = w[i] / sum;
		double at = x[i];
		for (uint32_t c = t->n[i].child; c != CT_NONE; c = t->n[c].next) {
			if (t->n[c].val <= 0)
				continue;
			x[c] = at;
			w[c] = (double)t->n[c].val * scale;
			at += w[c];
			on[c] = w[c] >= 0.1;
		}
	}
	return maxd;
}

/* The SVG document's head: style, script, background, title and the
 * reset, search, details and matched texts. */
static void svg_head(FILE *out, const struct svg_opts *o, unsigned width,
		     unsigned height)
{
	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%u\" height=\"%u\" "
		"viewBox=\"0 0 %u %u\" xmlns=\"http://www.w3.org/2000/svg\" "
		"data-w=\"%u\" data-inv=\"%d\">\n", width, height, width,
		height, width, o->inverted);
	fputs("<style type=\"text/css\">\n"
	      "text { font-family: Verdana, sans-serif; font-size: 12px; "
	      "fill: rgb(0,0,0); }\n"
	      "g.f:hover rect { stroke: black; stroke-width: 0.5; cursor: pointer; }\n"
	      "#title { font-size: 17px; }\n"
	      "#search, #reset { cursor: pointer; }\n"
	      "</style>\n<script type=\"text/ecmascript\"><![CDATA[\n", out);
	fputs(svg_script, out);
	fputs("]]></script>\n", out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" "
		"fill=\"rgb(250,250,238)\"/>\n", width, height);
	fprintf(out, "<text id=\"title\" x=\"%u\" y=\"24\" "
		"text-anchor=\"middle\">", width / 2);
	xml_puts(out, o->title);
	fputs("</text>\n", out);
	fprintf(out, "<text id=\"reset\" x=\"%d\" y=\"24\" "
		"style=\"opacity: 0.1\">Reset Zoom</text>\n", SVG_PAD);
	fprintf(out, "<text id=\"search\" x=\"%u\" y=\"24\" "
		"text-anchor=\"end\">Search</text>\n", width - SVG_PAD);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n",
		SVG_PAD, height - 12);
	fprintf(out, "<text id=\"matched\" x=\"%u\" y=\"%u\" "
		"text-anchor=\"end\"> </text>\n", width - SVG_PAD, height - 12);
}

/* One frame at X, Y, width W: its tooltip, box and the name cut to fit. */
static void svg_frame(FILE *out, const struct ctree_node *f,
		      const struct svg_opts *o, int64_t total, double x,
		      double y, double w)
{
	char cnt[32];
	int r, g, b;

	ctree_colour(f->name, &r, &g, &b);
	report_commify(cnt, f->val);
	fputs("<g class=\"f\"><title>", out);
	xml_puts(out, f->name);
	fprintf(out, " (%s %s, %.2f%%)</title>", cnt, o->event,
		total ? (double)f->val * 100.0 / (double)total : 0.0);
	fprintf(out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
		"height=\"%d.0\" fill=\"rgb(%d,%d,%d)\" rx=\"2\" "
		"ry=\"2\"/>", x, y, w, SVG_FRAME - 1, r, g, b);
	fprintf(out, "<text x=\"%.2f\" y=\"%.1f\">", x + 3,
		y + SVG_FRAME - 4.5);
	size_t fit = w > 6 ? (size_t)((w - 6) / SVG_CHAR) : 0;
	size_t len = strlen(f->name);
	if (fit >= 3 && len <= fit) {
		markup_put(out, f->name, len);
	} else if (fit >= 3) {
		markup_put(out, f->name, fit - 2);
		fputs("..", out);
	}
	fputs("</text></g>\n", out);
}

int ctree_write_svg(FILE *out, struct ctree *t, const struct svg_opts *o)
{
	unsigned width = o->width ? o->width : 1200;
	double usable = width - 2 * SVG_PAD;
	int64_t total = t->n[0].val;

	ctree_sort_children(t, true);
	double *x = xcalloc(t->n_nodes + 1, sizeof(*x));
	double *w = xcalloc(t->n_nodes + 1, sizeof(*w));
	bool *on = xcalloc(t->n_nodes + 1, sizeof(*on));
	uint32_t maxd = svg_layout(t, usable, x, w, on);
	unsigned height = SVG_TOP + (maxd + 1) * SVG_FRAME + SVG_BOTTOM;

	svg_head(out, o, width, height);
	for (uint32_t i = 0; i < t->n_nodes; i++) {
		const struct ctree_node *f = &t->n[i];
		if (!on[i] || (i && !on[f->parent])) {
			on[i] = false;
			continue;
		}
		double y = o->inverted ? SVG_TOP + f->depth * SVG_FRAME :
			   height - SVG_BOTTOM - (f->depth + 1) * SVG_FRAME;
		svg_frame(out, f, o, total, x[i], y, w[i]);
	}
	fputs("</svg>\n", out);
	free(x);
	free(w);
	free(on);
	return ferror(out) ? -1 : 0;
}
