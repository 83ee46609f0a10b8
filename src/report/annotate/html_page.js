/* The HTML report's script (embedded by ct-embed; the data's layout is
 * described at the top of html.c).  Everything is drawn from the JSON
 * object in #ct-data, lazily: the functions table and a source file in
 * chunks as the page scrolls, tree nodes when they are opened, the flame
 * graph of an event when it is first shown.  One state: the event (the
 * menu in the header) and the selected function; every view follows. */
'use strict';
(function () {
const D = JSON.parse(document.getElementById('ct-data').textContent);
const E = D.events, NE = E.length, CHUNK = 200;
const S = { ev: D.ev >= 0 ? D.ev : (D.sort.length ? D.sort[0] : 0), sel: -1,
	    col: null, desc: true, filter: '', thr: 0, rows: [], shownRows: 0,
	    file: -1, srcRows: null, srcDone: 0, hotIdx: -1 };
const $ = (id) => document.getElementById(id);

function el(tag, cls, text) {
	const e = document.createElement(tag);
	if (cls) e.className = cls;
	if (text !== undefined && text !== null) e.textContent = text;
	return e;
}
function commify(v) {
	const s = String(Math.abs(v)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
	return v < 0 ? '-' + s : D.diff && v > 0 ? '+' + s : s;
}
function fmt(v) { return v === null || v === undefined ? '.' : commify(v); }
function val(v) { return v === null || v === undefined ? 0 : v; }
function pct(v, t) { return t ? (100 * v / t).toFixed(1) + '%' : 'n/a'; }
/* (DLmr + DLmw)^2 / Ir, printed as the text report prints it. */
function badness(row) {
	if (!D.bad) return null;
	const ir = val(row[D.bad[0]]), d = val(row[D.bad[1]]) + val(row[D.bad[2]]);
	if (ir <= 0) return null;
	return d * d / ir;
}
/* As C's %.3g below 100 (the text report's Badness), commified above. */
function fmtBad(b) {
	if (b === null) return '.';
	if (b >= 100) return commify(Math.floor(b));
	if (b === 0) return '0';
	if (Math.abs(b) < 1e-4)
		return b.toExponential(2).replace(/\.?0+e/, 'e').replace(/e([+-])(\d)$/, 'e$10$2');
	return String(Number(b.toPrecision(3)));
}
function cell(tr, v) {
	const td = el('td', v < 0 ? 'neg' : D.diff && v > 0 ? 'pos' : '', fmt(v));
	tr.appendChild(td);
	return td;
}
function cells(tr, row) {
	for (const c of D.shown) {
		if (c < 0) tr.appendChild(el('td', '', fmtBad(badness(row))));
		else cell(tr, row[c]);
	}
}
function evName(c) { return c < 0 ? 'Badness' : E[c]; }
function baseName(n) { const q = n.indexOf("'"); return q > 0 ? n.substring(0, q) : n; }

/* ---- the call graph ---- */
const G = { self: [], incl: [], out: [], inn: [], called: [] };
const hasGraph = !!D.calls;
if (hasGraph) {
	for (const r of D.incl) { G.self[r[0]] = r[1]; G.incl[r[0]] = r[2]; }
	D.calls.forEach((c, i) => {
		(G.out[c[0]] = G.out[c[0]] || []).push(i);
		(G.inn[c[1]] = G.inn[c[1]] || []).push(i);
		if (c[0] !== c[1]) G.called[c[1]] = true;
	});
}
const byName = new Map();	/* base name -> owner functions */
D.fns.forEach((f, i) => {
	if (f[2] !== i) return;
	const b = baseName(f[1]);
	if (!byName.has(b)) byName.set(b, []);
	byName.get(b).push(i);
});
function inclOf(f) { return hasGraph && G.incl[f] ? G.incl[f] : D.fns[f][3]; }

/* ---- selection ---- */
function select(f) {
	S.sel = f;
	document.querySelectorAll('#fntab tr.selected').forEach((t) => t.classList.remove('selected'));
	const tr = document.querySelector('#fntab tr[data-fn="' + f + '"]');
	if (tr) tr.classList.add('selected');
	drawSel();
	markFlame();
	markTree();
}
function selectName(name) {
	const fs = byName.get(name);
	if (fs && fs.length) {
		let best = fs[0];
		for (const f of fs) if (Math.abs(val(inclOf(f)[S.ev])) > Math.abs(val(inclOf(best)[S.ev]))) best = f;
		select(best);
	} else {
		S.sel = -1;
		S.selName = name;
		drawSel();
		markFlame();
	}
}
function selName() { return S.sel >= 0 ? baseName(D.fns[S.sel][1]) : S.selName || null; }

/* The callers of F (owner) by event EV: [name, count, calls, fn] each. */
function callersOf(f) {
	const out = [];
	if (hasGraph) {
		for (const i of G.inn[f] || []) {
			const c = D.calls[i];
			if (c[0] !== c[1]) out.push([D.fns[c[0]][1], val(c[3][S.ev]), c[2], c[0]]);
		}
	} else if (folded) {
		const name = selName(), m = new Map();
		for (const x of folded.nodes) {
			if (x.name !== name || x.depth === 0) continue;
			let a = x.parent, outer = true;
			for (let q = a; q; q = folded.nodes[q].parent) if (folded.nodes[q].name === name) outer = false;
			if (!outer) continue;
			const pn = a ? folded.nodes[a].name : '(root)';
			m.set(pn, (m.get(pn) || 0) + x.val);
		}
		for (const [k, v] of m) out.push([k, v, null, -1]);
	}
	out.sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]));
	return out;
}
function calleesOf(f) {
	const out = [];
	if (!hasGraph) return out;
	for (const i of G.out[f] || []) {
		const c = D.calls[i];
		if (c[0] !== c[1]) out.push([D.fns[c[1]][1], val(c[3][S.ev]), c[2], c[1]]);
	}
	out.sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]));
	return out;
}
function edgeTable(title, rows, total, id) {
	const box = el('div');
	box.appendChild(el('h3', '', title));
	if (!rows.length) { box.appendChild(el('p', 'note', 'none')); return box; }
	const t = el('table', 'counts');
	t.id = id;
	const h = el('tr');
	for (const s of [E[S.ev], 'share', 'calls', 'function']) h.appendChild(el('th', s === 'function' ? 'name' : '', s));
	t.appendChild(el('thead')).appendChild(h);
	const tb = t.appendChild(el('tbody'));
	for (const r of rows) {
		const tr = el('tr', 'fn');
		cell(tr, r[1]);
		tr.appendChild(el('td', 'share', pct(r[1], total)));
		tr.appendChild(el('td', '', r[2] === null ? '' : commify(r[2])));
		const td = tr.appendChild(el('td', 'name', r[0]));
		if (r[3] >= 0) tr.addEventListener('click', () => select(r[3]));
		else tr.addEventListener('click', () => selectName(r[0]));
		td.title = r[0];
		tb.appendChild(tr);
	}
	box.appendChild(t);
	return box;
}
function drawSel() {
	const a = $('sel');
	a.textContent = '';
	const name = selName();
	if (name === null) return;
	a.appendChild(el('h3', '', 'Selected: ' + (S.sel >= 0 ? D.fns[S.sel][1] : name)));
	let total = 0;
	if (S.sel >= 0) {
		const f = S.sel, fn = D.fns[f];
		a.appendChild(el('div', 'file', D.files[fn[0]]));
		const t = el('table', 'kv');
		const add = (k, v) => { const tr = t.appendChild(el('tr')); tr.appendChild(el('th', '', k)); tr.appendChild(el('td', '', v)); };
		add('self ' + E[S.ev], fmt(fn[3][S.ev]) + ' (' + pct(val(fn[3][S.ev]), D.tot[S.ev]) + ')');
		if (hasGraph && G.incl[f]) add('inclusive ' + E[S.ev], fmt(G.incl[f][S.ev]) + ' (' + pct(val(G.incl[f][S.ev]), D.tot[S.ev]) + ')');
		a.appendChild(t);
		const src = el('a', 'link', 'show its source');
		src.id = 'sel-source';
		src.addEventListener('click', () => sourceOfFn(f));
		a.appendChild(src);
		total = val(inclOf(f)[S.ev]);
	}
	const callers = callersOf(S.sel);
	let sum = 0;
	for (const c of callers) sum += c[1];
	a.appendChild(edgeTable('Callers (by ' + E[S.ev] + ')', callers, sum || total, 'callers'));
	if (hasGraph && S.sel >= 0) a.appendChild(edgeTable('Callees', calleesOf(S.sel), total, 'callees'));
	const fl = el('a', 'link', 'its flame graph');
	fl.id = 'sel-flame';
	fl.addEventListener('click', () => { drawFlame(); $('flame').scrollIntoView(); });
	a.appendChild(el('p')).appendChild(fl);
}

/* ---- the event menu ---- */
function drawMenu() {
	const m = $('evmenu');
	m.textContent = 'Event: ';
	const s = el('select');
	s.id = 'ev';
	E.forEach((n, i) => { const o = el('option', '', n); o.value = i; if (i === S.ev) o.selected = true; s.appendChild(o); });
	s.addEventListener('change', () => setEvent(+s.value));
	m.appendChild(s);
}
function setEvent(ev) {
	S.ev = ev;
	$('ev').value = ev;
	if (S.file >= 0) drawSource(S.file, S.curLine);
	drawSel();
	drawTree();
	if (flameDrawn) drawFlame();
	if (S.col === null || S.col === 'incl') drawFunctions();
}

/* ---- the run ---- */
function drawRun() {
	for (const tr of document.querySelectorAll('#hot tr')) {
		const ev = +tr.dataset.ev, h = D.hot.find((x) => x[0] === ev);
		if (!h) continue;
		const td = tr.querySelector('td.loc');
		const a = el('a', 'loc', td.textContent);
		td.textContent = '';
		td.appendChild(a);
		a.addEventListener('click', () => {
			setEvent(ev);
			select(h[3]);
			showSource(h[1], h[2]);
		});
	}
}

/* ---- functions ---- */
function sortKey(f, col) {
	const row = D.fns[f][3];
	if (col === 'bad') return badness(row) || 0;
	if (col === 'incl') return Math.abs(val(inclOf(f)[S.ev]));
	return Math.abs(val(row[col]));
}
function drawFunctions() {
	const t = $('fntab');
	t.textContent = '';
	const h = el('tr');
	const cols = D.shown.map((c) => c < 0 ? 'bad' : c);
	if (hasGraph) cols.push('incl');
	cols.push('name');
	for (const c of cols) {
		const th = el('th', c === 'name' ? 'name' : '', c === 'bad' ? 'Badness' : c === 'incl' ? E[S.ev] + ' (incl)' : c === 'name' ? 'function' : E[c]);
		th.dataset.col = c;
		if (S.col !== null && String(S.col) === String(c)) th.classList.add(S.desc ? 'sorted-desc' : 'sorted-asc');
		th.addEventListener('click', () => {
			const k = c === 'name' || c === 'bad' || c === 'incl' ? c : +c;
			if (S.col === k) S.desc = !S.desc; else { S.col = k; S.desc = k !== 'name'; }
			drawFunctions();
		});
		h.appendChild(th);
	}
	t.appendChild(el('thead')).appendChild(h);
	const tb = t.appendChild(el('tbody'));
	/* Filter, threshold (of the sort event, or the first sort event), sort. */
	const thrEv = typeof S.col === 'number' ? S.col : D.sort.length ? D.sort[0] : 0;
	const lim = S.thr / 100 * Math.abs(val(D.tot[thrEv]));
	const q = S.filter.toLowerCase();
	let rows = [];
	for (let f = 0; f < D.fns.length; f++) {
		const fn = D.fns[f];
		if (Math.abs(val(fn[3][thrEv])) < lim) continue;
		if (q && fn[1].toLowerCase().indexOf(q) < 0 && D.files[fn[0]].toLowerCase().indexOf(q) < 0) continue;
		rows.push(f);
	}
	/* Keys computed once (20,000 functions in the benchmark's profile):
	 * the column, or the sort events in turn, ties by name. */
	const name = (f) => D.fns[f][1];
	const sign = S.desc ? 1 : -1;
	const byName = (a, b) => name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0;
	if (S.col === 'name') rows.sort((a, b) => -sign * byName(a, b));
	else {
		const keys = (S.col === null ? D.sort : [S.col]).map((c) => {
			const k = new Float64Array(D.fns.length);
			for (const f of rows) k[f] = sortKey(f, c);
			return k;
		});
		rows.sort((a, b) => {
			for (const k of keys) if (k[a] !== k[b]) return sign * (k[b] - k[a]);
			return byName(a, b);
		});
	}
	S.rows = rows;
	S.shownRows = 0;
	$('fn-note').textContent = rows.length + ' of ' + D.fns.length + ' functions shown (threshold ' + S.thr + '% of ' + E[thrEv] + (q ? ', filter "' + S.filter + '"' : '') + ')';
	moreFunctions(CHUNK);
}
function moreFunctions(n) {
	const tb = $('fntab').tBodies[0];
	const end = Math.min(S.rows.length, S.shownRows + n);
	for (let k = S.shownRows; k < end; k++) {
		const f = S.rows[k], fn = D.fns[f];
		const tr = el('tr', 'fn' + (f === S.sel ? ' selected' : ''));
		tr.dataset.fn = f;
		cells(tr, fn[3]);
		if (hasGraph) cell(tr, G.incl[fn[2]] ? G.incl[fn[2]][S.ev] : null);
		const td = tr.appendChild(el('td', 'name'));
		const a = td.appendChild(el('a', 'loc', fn[1]));
		a.addEventListener('click', (e) => { e.stopPropagation(); select(f); sourceOfFn(f); });
		td.appendChild(document.createTextNode(' '));
		td.appendChild(el('span', 'file', D.files[fn[0]]));
		tr.addEventListener('click', () => select(f));
		tb.appendChild(tr);
	}
	S.shownRows = end;
}
function drawControls() {
	const c = $('fn-controls');
	c.className = 'controls';
	const fl = el('input');
	fl.id = 'filter';
	fl.placeholder = 'filter: function or file';
	fl.addEventListener('input', () => { S.filter = fl.value; drawFunctions(); });
	const th = el('input');
	th.id = 'threshold';
	th.type = 'number'; th.min = 0; th.max = 100; th.step = 0.1; th.value = S.thr;
	th.style.width = '5em';
	th.addEventListener('change', () => { S.thr = +th.value || 0; drawFunctions(); });
	const l1 = el('label', '', 'Filter '); l1.appendChild(fl);
	const l2 = el('label', '', 'Threshold % '); l2.appendChild(th);
	c.appendChild(l1);
	c.appendChild(l2);
}

/* ---- source ---- */
const srcByFile = new Map();
D.src.forEach((s, i) => srcByFile.set(s[0], i));
function sourceOfFn(f) {
	const fn = D.fns[f], s = srcByFile.get(fn[0]);
	let best = fn[4];
	if (s !== undefined) {
		let bv = -1;
		for (const l of D.src[s][2]) {
			if (l[0] < fn[4] || l[0] > fn[5]) continue;
			const v = Math.abs(val(l[1][S.ev]));
			if (v > bv) { bv = v; best = l[0]; }
		}
	}
	showSource(fn[0], best);
}
function showSource(file, line) {
	drawSource(file, line);
	const tr = line !== undefined ? $('L' + line) : null;
	if (tr) tr.scrollIntoView({ block: 'center', inline: 'nearest' });
	$('source').scrollIntoView({ block: 'start', inline: 'nearest' });
}
/* The rows of one file: line 0, then blocks of the counted lines with
 * D.context lines either side (a gap between them folded), then the
 * lines past the end, as the text report prints them. */
function buildRows(s) {
	const text = D.src[s][3], counted = D.src[s][2];
	const lines = text === null ? [] : text.split('\n');
	if (text !== null && text.endsWith('\n')) lines.pop();
	const n = lines.length, ctx = D.context, rows = [];
	let i = 0;
	if (counted.length && counted[0][0] === 0) rows.push({ l: 0, c: counted[i++][1], t: '<unknown (line 0)>' });
	let first = i;
	while (first < counted.length && counted[first][0] <= n) first++;
	let prevHi = 0;
	while (i < first) {
		let lo = Math.max(1, counted[i][0] - ctx), hi = counted[i][0] + ctx, j = i;
		while (j + 1 < first && counted[j + 1][0] <= hi + ctx + 1) hi = counted[++j][0] + ctx;
		hi = Math.min(hi, n);
		if (lo > prevHi + 1) rows.push({ gap: [prevHi + 1, lo - 1] });
		for (let l = lo; l <= hi; l++) {
			if (i <= j && counted[i][0] === l) rows.push({ l: l, c: counted[i++][1], t: lines[l - 1] });
			else rows.push({ l: l, c: null, t: lines[l - 1] });
		}
		prevHi = hi;
	}
	if (text !== null && prevHi < n) rows.push({ gap: [prevHi + 1, n] });
	for (; i < counted.length; i++) rows.push({ l: counted[i][0], c: counted[i][1], t: text === null ? '' : '<bogus line ' + counted[i][0] + '>' });
	return { rows: rows, lines: lines };
}
function heat(v, max) {
	if (!v || !max) return '';
	const k = Math.min(5, Math.ceil(5 * Math.abs(v) / max));
	return (v < 0 ? 'c' : 'h') + k;
}
function drawSource(file, line) {
	const s = srcByFile.get(file), view = $('srcview');
	S.file = file;
	S.curLine = line;
	view.textContent = '';
	const bar = view.appendChild(el('div', 'controls'));
	const menu = bar.appendChild(el('select'));
	menu.id = 'srcfile';
	D.src.forEach((x) => { const o = el('option', '', x[1] || D.files[x[0]]); o.value = x[0]; if (x[0] === file) o.selected = true; menu.appendChild(o); });
	menu.addEventListener('change', () => showSource(+menu.value));
	const next = bar.appendChild(el('button', '', 'Next hot line \u25BE'));
	next.id = 'nexthot';
	next.addEventListener('click', nextHot);
	bar.appendChild(el('span', 'note', 'coloured by ' + E[S.ev] + ' (the event menu above)'));
	if (s === undefined) { view.appendChild(el('p', 'note', D.files[file] + ': no lines to show')); return; }
	if (D.src[s][3] === null) view.appendChild(el('p', 'note', D.files[file] + ': source not found (use -I DIR); the counted lines:'));
	const b = buildRows(s);
	let max = 0;
	for (const l of D.src[s][2]) max = Math.max(max, Math.abs(val(l[1][S.ev])));
	S.max = max;
	S.srcRows = b.rows;
	S.srcLines = b.lines;
	S.srcDone = 0;
	const t = view.appendChild(el('table', 'counts src'));
	t.id = 'srctab';
	pane(t, 'srcpane', () => { if (S.srcDone < S.srcRows.length) moreSource(CHUNK); });
	const h = el('tr');
	h.appendChild(el('th', '', 'line'));
	for (const c of D.shown) h.appendChild(el('th', '', evName(c)));
	h.appendChild(el('th', 'name', D.src[s][1] || D.files[file]));
	t.appendChild(el('thead')).appendChild(h);
	t.appendChild(el('tbody'));
	/* Hot lines to jump through: level 3 and up, in line order. */
	S.hot = b.rows.filter((r) => r.c && /[hc][345]/.test(heat(val(r.c[S.ev]), max))).map((r) => r.l);
	S.hotIdx = -1;
	moreSource(CHUNK);
	if (line !== undefined) {
		renderTo(line);
		const tr = $('L' + line);
		if (tr) { tr.classList.add('cur'); S.hotIdx = S.hot.indexOf(line); }
	}
}
function srcRow(r) {
	const tr = el('tr');
	if (r.gap) {
		tr.className = 'gap';
		const td = tr.appendChild(el('td', '', '-- line ' + r.gap[0] + '-' + r.gap[1] + ' (' + (r.gap[1] - r.gap[0] + 1) + ' lines folded; click to show) --'));
		td.colSpan = D.shown.length + 2;
		tr.addEventListener('click', () => {
			const frag = document.createDocumentFragment();
			for (let l = r.gap[0]; l <= r.gap[1]; l++) frag.appendChild(srcRow({ l: l, c: null, t: S.srcLines[l - 1] }));
			tr.replaceWith(frag);
		});
		return tr;
	}
	tr.className = 'l ' + (r.c ? heat(val(r.c[S.ev]), S.max) : '');
	tr.id = 'L' + r.l;
	tr.dataset.line = r.l;
	tr.appendChild(el('td', 'ln', r.l));
	if (r.c) cells(tr, r.c);
	else for (let k = 0; k < D.shown.length; k++) tr.appendChild(el('td', '', ''));
	tr.appendChild(el('td', 'code', r.t === undefined ? '' : r.t));
	return tr;
}
function moreSource(n) {
	const tb = $('srctab').tBodies[0], frag = document.createDocumentFragment();
	const end = Math.min(S.srcRows.length, S.srcDone + n);
	for (let k = S.srcDone; k < end; k++) frag.appendChild(srcRow(S.srcRows[k]));
	tb.appendChild(frag);
	S.srcDone = end;
}
function renderTo(line) {
	while (!$('L' + line) && S.srcDone < S.srcRows.length) moreSource(CHUNK);
}
function nextHot() {
	if (!S.hot || !S.hot.length) return;
	S.hotIdx = (S.hotIdx + 1) % S.hot.length;
	const l = S.hot[S.hotIdx];
	renderTo(l);
	document.querySelectorAll('#srctab tr.cur').forEach((t) => t.classList.remove('cur'));
	const tr = $('L' + l);
	tr.classList.add('cur');
	tr.scrollIntoView({ block: 'center', inline: 'nearest' });
	S.curLine = l;
}

/* ---- call tree ---- */
let folded = null;
function treeOf(ev) {
	const f = D.flames.find((x) => x[0] === ev) || (D.flames.length && D.flames[0][0] === -1 ? D.flames[0] : null);
	if (!f) return null;
	const nodes = f[1].map((x, i) => ({ i: i, name: D.names[x[0]][0], col: D.names[x[0]][1], val: x[1], parent: x[2], self: x[3], kids: [], depth: 0 }));
	for (const x of nodes) if (x.parent >= 0) { nodes[x.parent].kids.push(x); x.depth = nodes[x.parent].depth + 1; }
	return { nodes: nodes, truncated: f[2] };
}
if (D.flames.length && D.flames[0][0] === -1) folded = treeOf(-1);
function treeNode(label, count, total, name, kids, fn) {
	const d = el('div', 'node');
	const tog = d.appendChild(el('span', 'tog', kids ? '\u25B8' : ''));
	d.appendChild(el('span', 'cnt', fmt(count)));
	d.appendChild(el('span', 'pc', pct(count, total)));
	const nm = d.appendChild(el('span', 'nm', label));
	nm.dataset.name = name;
	nm.addEventListener('click', () => fn >= 0 ? select(fn) : selectName(name));
	const box = el('div');
	box.style.marginLeft = '18px';
	let open = false;
	tog.addEventListener('click', () => {
		if (!kids) return;
		open = !open;
		tog.textContent = open ? '\u25BE' : '\u25B8';
		if (open && !box.firstChild) kids(box);
		box.style.display = open ? '' : 'none';
	});
	const w = el('div');
	w.appendChild(d);
	w.appendChild(box);
	w.open = () => { if (!open) tog.click(); };
	return w;
}
function drawTree() {
	const t = $('tree');
	t.textContent = '';
	t.className = 'tree';
	if (!hasGraph && !folded) { t.appendChild(el('p', 'note', 'No call stacks in the input: profile with cachetrace --call-stacks=yes (--html turns it on), or give a Callgrind profile or folded stacks.')); return; }
	const ev = S.ev, total = folded ? folded.nodes[0].val : D.tot[ev];
	t.appendChild(el('p', 'note', 'Inclusive ' + (folded ? D.folded_ev : E[ev]) + ' by call path (click \u25B8 to open, a name to select it).'));
	if (folded) {
		const add = (box, x) => {
			const kids = x.kids.slice().sort((a, b) => b.val - a.val);
			const w = treeNode(x.name + (x.self ? '  (self ' + commify(x.self) + ')' : ''), x.val, total, x.name, kids.length ? (b) => kids.forEach((k) => add(b, k)) : null, -1);
			box.appendChild(w);
			return w;
		};
		add(t, folded.nodes[0]).open();
		return;
	}
	const path = new Set();
	const add = (box, f, count) => {
		const out = (G.out[f] || []).filter((i) => D.calls[i][0] !== D.calls[i][1]).sort((a, b) => Math.abs(val(D.calls[b][3][ev])) - Math.abs(val(D.calls[a][3][ev])));
		const self = G.self[f] ? G.self[f][ev] : null;
		const label = D.fns[f][1] + '  (self ' + fmt(self) + ')';
		const w = treeNode(label, count, total, baseName(D.fns[f][1]), out.length ? (b) => {
			path.clear();
			for (let q = b; q && q !== t; q = q.parentNode) if (q.fn !== undefined) path.add(q.fn);
			for (const i of out) { const c = D.calls[i]; if (!path.has(c[1])) add(b, c[1], val(c[3][ev])); }
		} : null, f);
		w.fn = f;
		box.appendChild(w);
		return w;
	};
	const roots = [];
	for (let f = 0; f < D.fns.length; f++) if (D.fns[f][2] === f && !G.called[f] && G.incl[f] && val(G.incl[f][ev])) roots.push(f);
	roots.sort((a, b) => Math.abs(val(G.incl[b][ev])) - Math.abs(val(G.incl[a][ev])));
	roots.slice(0, 200).forEach((f, k) => { const w = add(t, f, val(G.incl[f][ev])); if (k === 0) w.open(); });
	markTree();
}
function markTree() {
	const name = selName();
	document.querySelectorAll('#tree .nm').forEach((n) => n.classList.toggle('selected', n.dataset.name === name));
}

/* ---- flame graph ---- */
let flameDrawn = false;
function drawFlame() {
	flameDrawn = true;
	const box = $('fg');
	box.textContent = '';
	const tr = folded || treeOf(S.ev);
	if (!tr) { box.appendChild(el('p', 'note', hasGraph ? 'No flame graph for ' + E[S.ev] + ' (too many frames; choose another event).' : 'No call stacks in the input.')); return; }
	box.appendChild(el('p', 'note', 'Flame graph of ' + (folded ? D.folded_ev : E[S.ev]) + ': click a frame to select its function everywhere.'));
	const fg = box.appendChild(el('div'));
	fg.id = 'fgbox';
	const detail = box.appendChild(el('div'));
	detail.id = 'fgdetail';
	const total = tr.nodes[0].val;
	if (total <= 0) return;
	/* Layout as --flamegraph: children side by side in name order,
	 * squeezed into their parent; frames under 0.1 px of 1180 left out. */
	const min = 0.1 / 1180, pos = [];
	let maxd = 0;
	pos[0] = [0, 1];
	const order = [tr.nodes[0]];
	for (let k = 0; k < order.length; k++) {
		const x = order[k], p = pos[x.i];
		maxd = Math.max(maxd, x.depth);
		const kids = x.kids.filter((c) => c.val > 0).sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
		let sum = 0;
		for (const c of kids) sum += c.val;
		const scale = Math.min(1 / total, sum ? p[1] / sum : 0);
		let at = p[0];
		for (const c of kids) {
			const w = c.val * scale;
			if (w >= min) { pos[c.i] = [at, w]; order.push(c); }
			at += w;
		}
	}
	fg.style.height = ((maxd + 1) * 16 + 2) + 'px';
	const frag = document.createDocumentFragment();
	for (const x of order) {
		const p = pos[x.i], d = el('div', 'fr', x.name);
		d.style.left = (100 * p[0]) + '%';
		d.style.width = (100 * p[1]) + '%';
		d.style.top = ((maxd - x.depth) * 16) + 'px';
		d.style.background = x.col;
		d.title = x.name + ' (' + commify(x.val) + ' ' + (folded ? D.folded_ev : E[S.ev]) + ', ' + (100 * x.val / total).toFixed(2) + '%)';
		d.dataset.name = x.name;
		frag.appendChild(d);
	}
	fg.appendChild(frag);
	fg.addEventListener('click', (e) => { const d = e.target.closest('div.fr'); if (d && d.dataset.name !== 'all') selectName(d.dataset.name); });
	fg.addEventListener('mouseover', (e) => { const d = e.target.closest('div.fr'); if (d) detail.textContent = d.title; });
	markFlame();
}
function markFlame() {
	const name = selName();
	document.querySelectorAll('#fgbox div.fr').forEach((d) => d.classList.toggle('hl', d.dataset.name === name));
}

/* ---- coherence ---- */
function locLink(loc) {
	const a = el('span', '', loc[0]);
	if (loc.length < 3) return a;
	let f = D.files.indexOf(loc[1]);
	if (f < 0) f = D.files.findIndex((n) => n.endsWith('/' + loc[1]) || loc[1].endsWith('/' + n));
	if (f < 0) return a;
	a.className = 'loc';
	a.addEventListener('click', () => showSource(f, loc[2]));
	return a;
}
function drawCoherence() {
	const box = $('coh');
	box.textContent = '';
	if (!D.coh.length) { box.appendChild(el('p', 'note', 'No shared cache lines in the profile (a multi-core model, e.g. --model=jaguar --threads=all, records them).')); return; }
	const t = box.appendChild(el('table', 'counts coh'));
	t.id = 'cohtab';
	const h = el('tr');
	for (const s of ['cache line', 'variable', 'false sharing', 'true sharing', 'invalidations']) h.appendChild(el('th', '', s));
	t.appendChild(el('thead')).appendChild(h);
	const tb = t.appendChild(el('tbody'));
	for (const c of D.coh) {
		const tr = tb.appendChild(el('tr', 'cohline'));
		for (const v of [c[0], c[1], commify(c[2]), commify(c[3]), commify(c[4])]) tr.appendChild(el('td', '', v));
		for (const p of c[5]) {
			const pr = tb.appendChild(el('tr', 'pair ' + (p[0] ? 'true' : 'false')));
			pr.appendChild(el('td', '', p[0] ? 'true' : 'false'));
			pr.appendChild(el('td', '', commify(p[1]) + ' misses'));
			const td = pr.appendChild(el('td'));
			td.colSpan = 3;
			td.appendChild(document.createTextNode('at '));
			td.appendChild(locLink(p[2]));
			td.appendChild(document.createTextNode(' on ' + p[3] + ', written at '));
			td.appendChild(locLink(p[4]));
			td.appendChild(document.createTextNode(' on ' + p[5]));
		}
	}
}

/* ---- start ---- */
/* TABLE in a scrolling pane that draws MORE rows as its end comes near. */
function pane(table, id, more) {
	const p = el('div', 'pane');
	p.id = id;
	table.parentNode.insertBefore(p, table);
	p.appendChild(table);
	p.addEventListener('scroll', () => {
		if (p.scrollTop + p.clientHeight > p.scrollHeight - 600) more();
	}, { passive: true });
	return p;
}
pane($('fntab'), 'fnpane', () => { if (S.shownRows < S.rows.length) moreFunctions(CHUNK); });
drawMenu();
drawRun();
if (NE) { drawControls(); drawFunctions(); }
else $('functions').appendChild(el('p', 'note', 'Folded stacks have no functions table: see the call tree and the flame graph.'));
if (D.src.length) {
	const h = D.hot.find((x) => x[0] === S.ev);
	drawSource(h ? h[1] : D.src[0][0], h ? h[2] : undefined);
} else {
	$('srcview').textContent = '';
	$('srcview').appendChild(el('p', 'note', 'No source file to show.'));
}
drawTree();
drawFlame();
drawCoherence();
document.body.dataset.ready = '1';
/* How long the page took to draw itself (bench/annotate/html-open.py). */
document.body.dataset.readyMs = Math.round(performance.now());
})();
