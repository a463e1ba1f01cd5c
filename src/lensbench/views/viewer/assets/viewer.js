/* lensbench run viewer: summary tables, a paginated per-sample browser, comparisons, plots.
   Data (see lensbench/report/viewer/html.py): #lensbench-index (runs, tables, comparisons, and per
   sample [run, id, outcome, labels]) before this script; sample details in chunks
   #lensbench-c<k> ({d: [details], img: {sha: image}}) parsed on demand; #lensbench-figures.
   Each script has one job: sort.js sorts tables, links.js opens a sample from its link, summary.js draws the
   summary and plots, compare.js the comparison tab, analysis.js the Items and Judge tabs; they share window.lensbenchViewer (V). */
(function () {
  'use strict';
  var t0 = performance.now();
  var D = JSON.parse(document.getElementById('lensbench-index').textContent);
  var R = D.runs, IMG = {}, C = D.chunk || 1, CH = [], FULL = [], pending = false, done = {};
  var S = D.samples.map(function (a) { return { r: a[0], id: a[1], o: a[2], l: a[3] || {} }; });
  function chunk(k) {
    if (CH[k] === undefined) {
      var e = document.getElementById('lensbench-c' + k);
      if (!e) return null;
      CH[k] = JSON.parse(e.textContent);
      for (var x in CH[k].img) IMG[x] = CH[k].img[x];
    }
    return CH[k];
  }
  function full(i) {
    if (FULL[i]) return FULL[i];
    var k = Math.floor(i / C), c = chunk(k);
    if (!c) return null;
    var d = c.d[i - k * C], s = S[i], o = { r: s.r, id: s.id, o: s.o, l: s.l };
    for (var x in d) o[x] = d[x];
    FULL[i] = o;
    return o;
  }
  function img(sha) {  /* an image is stored with the first chunk that uses it */
    for (var k = 0; !(sha in IMG) && k < D.nChunks; k++) if (!chunk(k)) break;
    return IMG[sha];
  }
  var PAGE = 25;
  var st = { bench: '', run: '', outcome: '', labels: {}, group: '', q: '', page: 0, focus: null };
  var V = window.lensbenchViewer = { D: D, R: R, S: S };
  var hay = null, byKey = null;

  function h(tag, attrs) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) {
      if (k === 'text') e.textContent = attrs[k];
      else if (k === 'cls') e.className = attrs[k];
      else if (k === 'html') e.innerHTML = attrs[k];
      else if (k.slice(0, 2) === 'on') e.addEventListener(k.slice(2), attrs[k]);
      else e.setAttribute(k, attrs[k]);
    }
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined || c === false) continue;
      if (Array.isArray(c)) c.forEach(function (x) { if (x) e.appendChild(typeof x === 'string' ? document.createTextNode(x) : x); });
      else e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    }
    return e;
  }
  function js(v) { return typeof v === 'string' ? v : JSON.stringify(v); }
  function fmt(v) {
    if (v === null || v === undefined) return '-';
    if (typeof v === 'number') return Number.isInteger(v) ? String(v) : v.toFixed(2);
    return js(v);
  }
  function uniq(a) { var s = {}, o = []; a.forEach(function (x) { if (!(x in s)) { s[x] = 1; o.push(x); } }); return o; }

  /* ---------------- tabs */
  function tabCounts() {
    var n = { samples: S.length, compare: D.comparisons.length, plots: D.nFigures || 0 };
    Object.keys(n).forEach(function (k) {
      var b = document.querySelector('#tabs button[data-tab=' + k + ']');
      b.appendChild(h('span', { cls: 'n', text: String(n[k]) }));
    });
    document.getElementById('meta').textContent = R.length + ' run' + (R.length === 1 ? '' : 's') + ' · generated ' + (D.generated || '');
  }
  document.querySelectorAll('#tabs button').forEach(function (b) {
    b.addEventListener('click', function () { showTab(b.getAttribute('data-tab')); });
  });
  function showTab(name) {
    document.querySelectorAll('#tabs button').forEach(function (b) { b.classList.toggle('on', b.getAttribute('data-tab') === name); });
    document.querySelectorAll('.tab').forEach(function (t) { t.classList.toggle('on', t.id === 'tab-' + name); });
    st.tab = name;
    lateTabs();
  }
  function lateTabs() {  /* comparisons and plots need every chunk: render them once the page is parsed */
    if (document.readyState === 'loading') return;
    if (st.tab === 'compare' && !done.compare) { done.compare = true; V.renderCompare(); }
    if (st.tab === 'plots' && !done.plots) { done.plots = true; V.renderPlots(); }
    if (V.lazyTabs && V.lazyTabs[st.tab] && !done[st.tab]) { done[st.tab] = true; V.lazyTabs[st.tab](); }  /* analysis.js */
  }

  /* ---------------- images and boxes */
  function asBox(v) {
    if (v && !Array.isArray(v) && typeof v === 'object') v = v.bbox || v.box || null;
    if (Array.isArray(v) && v.length === 4 && v.every(function (x) { return typeof x === 'number'; })) return v;
    return null;
  }
  function boxesOf(s) {
    var x = s.x || {}, out = [];
    var gt = asBox(x.gt_box) || asBox(s.t), pr = asBox(x.pred_box) || asBox(s.a);
    /* boxes are in the original image's pixels (extra.width/height) when the record says so */
    var sp = typeof x.width === 'number' && typeof x.height === 'number' ? [x.width, x.height] : null;
    if (gt) out.push({ b: gt, cls: 'gt', color: '#1a7f37', sp: sp });
    if (pr) out.push({ b: pr, cls: 'pr', color: '#cf222e', sp: sp });
    return out;
  }
  function svgBoxes(img, boxes) {
    if (!boxes.length || !img.w || !img.h) return null;
    var W = boxes[0].sp ? boxes[0].sp[0] : img.w, H = boxes[0].sp ? boxes[0].sp[1] : img.h;
    var ns = 'http://www.w3.org/2000/svg';
    var svg = document.createElementNS(ns, 'svg');
    svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
    svg.setAttribute('preserveAspectRatio', 'none');
    boxes.forEach(function (bx) {
      var b = bx.b, norm = b.every(function (v) { return v <= 1.0; });
      var k = norm ? [W, H] : [1, 1];
      var r = document.createElementNS(ns, 'rect');
      r.setAttribute('x', b[0] * k[0]); r.setAttribute('y', b[1] * k[1]);
      r.setAttribute('width', Math.max(0, (b[2] - b[0]) * k[0])); r.setAttribute('height', Math.max(0, (b[3] - b[1]) * k[1]));
      r.setAttribute('fill', 'none'); r.setAttribute('stroke', bx.color);
      r.setAttribute('stroke-width', Math.max(2, W / 150)); r.setAttribute('class', 'box ' + bx.cls);
      svg.appendChild(r);
    });
    return svg;
  }
  function thumb(sha, boxes) {
    var im = img(sha);
    if (!im || !im.t) return h('span', { cls: 'missing', text: im && im.why ? 'image not shown: ' + im.why : 'image not found' + (im && im.missing ? ': ' + im.missing : '') });
    var wrap = h('span', { cls: 'thumb', title: 'click to enlarge' },
      h('img', { src: im.t, loading: 'lazy', alt: sha.slice(0, 12) }), svgBoxes(im, boxes || []));
    wrap.addEventListener('click', function () { enlarge(sha, boxes || []); });
    return wrap;
  }
  function enlarge(sha, boxes) {
    var im = img(sha), m = document.getElementById('modal'), body = document.getElementById('modal-body');
    body.innerHTML = '';
    body.appendChild(h('span', { cls: 'big' }, h('img', { src: im.u || im.t, alt: 'full image' }), svgBoxes(im, boxes)));
    m.hidden = false;
  }
  document.getElementById('modal').addEventListener('click', function () { this.hidden = true; });
  document.addEventListener('keydown', function (e) { if (e.key === 'Escape') document.getElementById('modal').hidden = true; });

  /* ---------------- one sample */
  function media(s) {
    var boxes = boxesOf(s), out = [];
    (s.m || []).forEach(function (msg) {
      msg[1].forEach(function (p) {
        if (p[0] === 'i') out.push(thumb(p[1], boxes));
        else if (p[0] === 'v') {
          var strip = h('div', { cls: 'strip', title: p[1] || '' });
          p[2].forEach(function (ts, k) {
            var im = img(p[3][k]);
            strip.appendChild(h('figure', null, im && im.t ? thumb(p[3][k], []) : h('span', { cls: 'missing', text: '[frame]' }),
              h('figcaption', { text: (typeof ts === 'number' ? ts.toFixed(2) : ts) + ' s' })));
          });
          out.push(h('div', null, h('div', { cls: 'note', text: 'video ' + (p[1] || '') + ' · ' + p[2].length + ' frames' }), strip));
        }
      });
    });
    return out.length ? h('div', { cls: 'media' }, out) : null;
  }
  function promptText(s) {
    var parts = [];
    (s.m || []).forEach(function (msg) {
      msg[1].forEach(function (p) { if (p[0] === 't') parts.push((s.m.length > 1 ? '[' + msg[0] + '] ' : '') + p[1]); });
    });
    return parts.join('\n');
  }
  function kv(pairs) {
    var g = h('div', { cls: 'kv' });
    pairs.forEach(function (p) { if (p[1] !== undefined && p[1] !== null) { g.appendChild(h('b', { text: p[0] })); g.appendChild(h('span', { text: p[1] })); } });
    return g;
  }
  function card(i, compact) {
    var s = full(i), run = R[S[i].r];
    if (!s) { pending = true; return h('div', { cls: (compact ? 'mini' : 'card') + ' pending', text: S[i].id + ': loading…' }); }
    var labels = Object.keys(s.l || {}).map(function (k) { return h('span', { cls: 'chip', text: k + ': ' + js(s.l[k]) }); });
    var outer = h('div', { cls: compact ? 'mini sample' : 'card sample', 'data-i': i, 'data-outcome': s.o },
      h('h3', null, h('span', { cls: 'badge o-' + s.o, text: s.o }), h('code', { text: s.id }),
        h('span', { cls: 'run', text: run ? run.label + ' · ' + run.benchmark : '' }), V.linkControls(i)),
      compact ? null : h('div', { cls: 'chips' }, labels));
    var c = h('div', { cls: 'text' }), md = media(s);
    outer.appendChild(compact || !md ? h('div', null, md, c) : h('div', { cls: 'body' }, md, c));
    var p = promptText(s);
    if (compact) c.appendChild(h('details', null, h('summary', { text: 'prompt' }), h('pre', { cls: 'prompt', text: p })));
    else c.appendChild(h('pre', { cls: 'prompt', text: p }));
    var x = s.x || {};
    if (x.options) c.appendChild(kv([['options', js(x.options)]]));
    if (s.rs) c.appendChild(h('details', null, h('summary', { text: 'reasoning' }), h('pre', { cls: 'reasoning', text: s.rs })));
    if (s.rp !== undefined) c.appendChild(h('pre', { cls: 'reply', text: s.rp }));
    var sc = s.s ? Object.keys(s.s).map(function (k) { return k + '=' + fmt(s.s[k]); }).join(', ') : undefined;
    c.appendChild(kv([['answer', s.a !== undefined ? js(s.a) : '(none)'], ['target', s.t !== undefined ? js(s.t) : undefined],
      ['scores', sc], ['error', s.e], ['latency', s.lt !== undefined ? fmt(s.lt) + ' s' : undefined]]));
    if (boxesOf(s).length) c.appendChild(h('div', { cls: 'legend' }, h('span', { cls: 'gt', text: '■ ground truth ' }),
      h('span', { cls: 'pr', text: '■ prediction' }), s.s && s.s.iou !== undefined ? ' · IoU ' + fmt(s.s.iou) : ''));
    if (s.j && s.j.length) c.appendChild(h('details', null, h('summary', { text: s.j.length + ' judge/parser call(s)' }),
      s.j.map(function (j) { return h('div', null, kv([['kind', j.kind], ['request', j.request_id], ['verdict', js(j.verdict)], ['error', j.error]]), h('pre', { text: j.reply || '' })); })));
    var rest = {};
    Object.keys(x).forEach(function (k) { if (k !== 'options') rest[k] = x[k]; });
    if (Object.keys(rest).length) c.appendChild(h('details', null, h('summary', { text: 'extra' }), h('pre', { text: JSON.stringify(rest, null, 1) })));
    return outer;
  }

  /* ---------------- filters */
  function sel(id, opts, val) {
    var e = document.getElementById(id);
    e.innerHTML = '';
    opts.forEach(function (o) { var op = h('option', { value: o[0], text: o[1] }); if (o[0] === val) op.selected = true; e.appendChild(op); });
    return e;
  }
  function labelStats() {
    var stats = {};
    for (var i = 0; i < S.length; i++) {
      var s = S[i];
      if (st.bench && R[s.r].benchmark !== st.bench) continue;
      for (var k in s.l) { var v = js(s.l[k]); (stats[k] = stats[k] || {})[v] = ((stats[k] || {})[v] || 0) + 1; }
    }
    return stats;
  }
  function facet(k, vals, counts) {  /* one label filter: the label and its control in one unbreakable pill */
    var e = h('select', { 'data-label': k, 'aria-label': k });
    e.appendChild(h('option', { value: '', text: 'all' }));
    vals.forEach(function (v) { var op = h('option', { value: v, text: v + ' (' + counts[v] + ')' }); if (st.labels[k] === v) op.selected = true; e.appendChild(op); });
    var pill = h('label', { cls: 'facet' + (st.labels[k] !== undefined ? ' on' : ''), 'data-facet': k }, h('span', { cls: 'fl', text: k }), e);
    e.addEventListener('change', function () {
      if (e.value) st.labels[k] = e.value; else delete st.labels[k];
      pill.classList.toggle('on', !!e.value); st.page = 0; clearButton(); renderList();
    });
    return pill;
  }
  function clearButton() {
    var box = document.getElementById('f-labels'), old = box.querySelector('button.clear');
    if (old) old.remove();
    if (Object.keys(st.labels).length) box.appendChild(h('button', { cls: 'clear', text: 'clear filters', onclick: function () {
      st.labels = {}; st.page = 0; buildControls(); renderList(); } }));
  }
  function buildFacets(stats, benches) {
    /* only the selected benchmark's labels (the keys its records carry), with 2-60 values each */
    var box = document.getElementById('f-labels');
    box.innerHTML = '';
    box.hidden = false;
    if (!st.bench && benches.length > 1) {
      box.appendChild(h('span', { cls: 'note', text: 'Choose a benchmark to filter by its labels.' }));
      return;
    }
    var shown = Object.keys(stats).filter(function (k) { var n = Object.keys(stats[k]).length; return n >= 2 && n <= 60; });
    if (!shown.length) { box.hidden = true; return; }
    box.appendChild(h('span', { cls: 'lead', text: 'Filter' }));
    /* numbers in their numeric order (frames 8, 16, 32, 64; not 16, 32, 64, 8), the rest as text */
    var natural = function (a, b) { return a.localeCompare(b, undefined, { numeric: true }); };
    shown.forEach(function (k) { box.appendChild(facet(k, Object.keys(stats[k]).sort(natural), stats[k])); });
    clearButton();
  }
  function buildControls() {
    var benches = uniq(R.map(function (r) { return r.benchmark; }));
    if (benches.length === 1) st.bench = benches[0];
    sel('f-bench', (benches.length > 1 ? [['', 'all']] : []).concat(benches.map(function (b) { return [b, b]; })), st.bench);
    sel('f-run', [['', 'all']].concat(R.filter(function (r) { return !st.bench || r.benchmark === st.bench; })
      .map(function (r) { return [String(r.i), r.label + ' · ' + r.benchmark]; })), st.run);
    sel('f-outcome', [['', 'all']].concat(['correct', 'wrong', 'unparseable', 'error', 'scored'].map(function (o) { return [o, o]; })), st.outcome);
    var stats = labelStats(), keys = Object.keys(stats);
    buildFacets(stats, benches);
    var dflt = st.bench && (D.groupDefault[st.bench] || []).filter(function (k) { return keys.indexOf(k) >= 0; })[0];
    if (st.group === null || st.group === undefined) st.group = '';
    sel('f-group', [['', 'none']].concat(keys.map(function (k) { return [k, k]; })), st.group || '');
    if (dflt && !st.groupTouched && keys.indexOf(dflt) >= 0) { st.group = dflt; document.getElementById('f-group').value = dflt; }
  }
  function haystack(i) {
    if (!hay) hay = new Array(S.length);
    if (hay[i] === undefined) { var s = full(i); if (!s) { pending = true; return ''; } hay[i] = (s.id + '\n' + promptText(s) + '\n' + (s.rp || '') + '\n' + js(s.a === undefined ? '' : s.a) + '\n' + js(s.l)).toLowerCase(); }
    return hay[i];
  }
  function filtered() {
    var out = [], q = st.q.trim().toLowerCase(), lk = Object.keys(st.labels), run = st.run === '' ? -1 : +st.run;
    for (var i = 0; i < S.length; i++) {
      var s = S[i];
      if (st.bench && R[s.r].benchmark !== st.bench) continue;
      if (run >= 0 && s.r !== run) continue;
      if (st.outcome && s.o !== st.outcome) continue;
      var ok = true;
      for (var j = 0; j < lk.length; j++) if (!s.l || js(s.l[lk[j]]) !== st.labels[lk[j]]) { ok = false; break; }
      if (!ok) continue;
      if (q && haystack(i).indexOf(q) < 0) continue;
      out.push(i);
    }
    return out;
  }
  function items(idx) {
    if (!st.group) return idx.map(function (i) { return [i]; });
    var groups = {}, order = [];
    idx.forEach(function (i) {
      var s = S[i], v = s.l && st.group in s.l ? js(s.l[st.group]) : '#' + i, k = s.r + '\u0001' + v;
      if (!(k in groups)) { groups[k] = []; order.push(k); }
      groups[k].push(i);
    });
    return order.map(function (k) { return groups[k]; });
  }
  function groupCard(members) {
    var s = S[members[0]], run = R[s.r];
    var right = members.filter(function (i) { return S[i].o === 'correct'; }).length;
    return h('div', { cls: 'card group', 'data-group': js(s.l[st.group]) },
      h('h3', null, h('code', { text: st.group + ' = ' + js(s.l[st.group]) }), h('span', { cls: 'run', text: run.label + ' · ' + run.benchmark }),
        h('span', { cls: 'chip', text: right + '/' + members.length + ' correct' })),
      h('div', { cls: 'grid' }, members.map(function (i) { return card(i, true); })));
  }
  function pager(id, n, pages) {
    var p = document.getElementById(id);
    p.innerHTML = '';
    p.appendChild(h('button', { text: '‹ prev', cls: 'prev', onclick: function () { if (st.page > 0) { st.page--; renderList(); } } }));
    p.appendChild(h('span', { text: 'page ' + (pages ? st.page + 1 : 0) + ' / ' + pages }));
    p.appendChild(h('button', { text: 'next ›', cls: 'next', onclick: function () { if (st.page < pages - 1) { st.page++; renderList(); window.scrollTo(0, 0); } } }));
  }
  function renderList() {
    if (st.focus) { var l = document.getElementById('list'); l.innerHTML = ''; V.renderFocus(l); return; }
    var idx = filtered(), its = items(idx), pages = Math.ceil(its.length / PAGE);
    if (st.page >= pages) st.page = Math.max(0, pages - 1);
    document.getElementById('f-count').textContent = idx.length + ' of ' + S.length + ' samples' + (st.group ? ' in ' + its.length + ' groups' : '');
    var list = document.getElementById('list');
    list.innerHTML = '';
    var frag = document.createDocumentFragment();
    its.slice(st.page * PAGE, (st.page + 1) * PAGE).forEach(function (g) { frag.appendChild(st.group ? groupCard(g) : card(g[0], false)); });
    list.appendChild(frag);
    var first = list.querySelector('h3 code');
    if (first && !document.querySelector('[elementtiming]')) first.setAttribute('elementtiming', 'first-sample');  /* paint timing */
    list.setAttribute('data-count', String(idx.length));
    pager('pager-top', its.length, pages); pager('pager-bottom', its.length, pages);
  }
  function wire() {
    document.getElementById('f-bench').addEventListener('change', function () { st.bench = this.value; st.run = ''; st.labels = {}; st.page = 0; st.groupTouched = false; st.group = ''; buildControls(); renderList(); });
    document.getElementById('f-run').addEventListener('change', function () { st.run = this.value; st.page = 0; renderList(); });
    document.getElementById('f-outcome').addEventListener('change', function () { st.outcome = this.value; st.page = 0; renderList(); });
    document.getElementById('f-group').addEventListener('change', function () { st.group = this.value; st.groupTouched = true; st.page = 0; renderList(); });
    /* any filter leaves a linked sample for the list again */
    ['change', 'input'].forEach(function (ev) { document.getElementById('controls').addEventListener(ev, function () { st.focus = null; }, true); });
    window.addEventListener('hashchange', function () { V.openFromHash(); });
    var timer = null;
    document.getElementById('f-search').addEventListener('input', function () {
      var v = this.value; clearTimeout(timer);
      timer = setTimeout(function () { st.q = v; st.page = 0; renderList(); }, 150);
    });
  }

  /* ---------------- comparisons */
  function sampleAt(ri, id) {
    if (!byKey) { byKey = {}; S.forEach(function (s, i) { byKey[s.r + '\u0001' + s.id] = i; }); }
    return byKey[ri + '\u0001' + id];
  }
  V.h = h; V.fmt = fmt; V.js = js; V.uniq = uniq; V.st = st; V.renderList = renderList; V.card = card; V.sampleAt = sampleAt; V.showTab = showTab;

  V.start = function () {  /* called by the page once every script (this, summary.js, compare.js) is in */
  tabCounts();
  V.renderSummary();
  buildControls();
  wire();
  renderList();
  document.addEventListener('DOMContentLoaded', function () {
    if (pending) { pending = false; renderList(); }
    lateTabs();
  });
  if (/^#(samples|compare|plots|items|judge)$/.test(location.hash)) showTab(location.hash.slice(1));
  else if (/^#compare=/.test(location.hash)) showTab('compare');
  else V.openFromHash();
  document.body.setAttribute('data-start', String(Math.round(t0)));  /* ms since navigation start */
  document.body.setAttribute('data-ready', String(Math.round(performance.now() - t0)));
  };
})();
