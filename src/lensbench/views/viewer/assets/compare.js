/* lensbench viewer: the Compare tab. Two pickers choose any two runs of one benchmark (A and B; a swap
   button); the page shows the paired comparison lensbench.report.compare computed for that pair (per
   metric and category: A, B, A-B with its 95% CI and p, on the clusters both scored) and the flipped
   samples side by side. A pair stored as (B, A) is shown mirrored: A-B and its CI negated, p unchanged
   (a paired percentile bootstrap and a permutation test are symmetric). A pair the page holds no
   comparison for (more runs than were paired) is compared on outcomes alone, without CIs.
   The choice is in the URL: #compare=<run key A>/<run key B>. */
(function () {
  'use strict';
  var V = window.lensbenchViewer, D = V.D, R = V.R, S = V.S, h = V.h, fmt = V.fmt;
  var st = { a: null, b: null };

  function stored(ia, ib) {
    for (var k = 0; k < D.comparisons.length; k++) {
      var c = D.comparisons[k];
      if (c.ia === ia && c.ib === ib) return c;
      if (c.ia === ib && c.ib === ia) return mirror(c);
    }
    return null;
  }
  function neg(v) { return v === null || v === undefined ? v : -v; }
  function mirror(c) {
    var m = {};
    for (var k in c) m[k] = c[k];
    m.ia = c.ib; m.ib = c.ia; m.a = c.b; m.b = c.a; m.n_only_a = c.n_only_b; m.n_only_b = c.n_only_a;
    m.rows = c.rows.map(function (r) {
      var o = {};
      for (var k in r) o[k] = r[k];
      o.a = r.b; o.b = r.a; o.diff = neg(r.diff); o.low = neg(r.high); o.high = neg(r.low);
      return o;
    });
    function flip(f) { return { sample_id: f.sample_id, outcome_a: f.outcome_b, outcome_b: f.outcome_a }; }
    var fl = c.flips.map(flip);
    m.flips = fl.filter(function (f) { return f.outcome_a === 'correct'; }).concat(fl.filter(function (f) { return f.outcome_a !== 'correct'; }));
    return m;
  }
  function byOutcomes(ia, ib) {  /* no stored comparison: shared samples, accuracy on them, flips */
    var oa = {}, order = [], ob = {};
    S.forEach(function (s) { if (s.r === ia) { oa[s.id] = s.o; order.push(s.id); } else if (s.r === ib) ob[s.id] = s.o; });
    var ok = function (o) { return o && o !== 'error' && o !== 'scored'; };
    var shared = order.filter(function (id) { return ok(oa[id]) && ok(ob[id]); });
    var ra = shared.filter(function (id) { return oa[id] === 'correct'; }).length, rb = shared.filter(function (id) { return ob[id] === 'correct'; }).length;
    var fl = shared.filter(function (id) { return (oa[id] === 'correct') !== (ob[id] === 'correct'); })
      .map(function (id) { return { sample_id: id, outcome_a: oa[id], outcome_b: ob[id] }; });
    var n = shared.length, pct = function (x) { return n ? 100 * x / n : null; };
    return { benchmark: R[ia].benchmark, ia: ia, ib: ib, n_shared: n, n_only_a: order.length - n,
      n_only_b: Object.keys(ob).length - n, approx: true, notes: [],
      rows: [{ metric: 'samples correct (%)', setting: '', category: 'all shared', a: pct(ra), b: pct(rb), diff: n ? pct(ra) - pct(rb) : null,
        low: null, high: null, p_value: null, n: n }],
      flips: fl.filter(function (f) { return f.outcome_a === 'correct'; }).concat(fl.filter(function (f) { return f.outcome_a !== 'correct'; })),
      ci_note: 'This pair was not compared with CIs on this page (too many runs of the benchmark to pair them all): ' +
        'per-sample outcomes only; `lensbench compare` gives the paired CIs and p-values.' };
  }
  function options(sel, runs, val) {
    sel.innerHTML = '';
    runs.forEach(function (r) { var o = h('option', { value: String(r.i), text: r.label }); if (r.i === val) o.selected = true; sel.appendChild(o); });
  }
  /* below lensbench.scoring.bootstrap.MIN_CLUSTERS clusters a row has neither CI nor p (SPEC General rules) */
  function tooFew(r) { return r.too_few_clusters !== null && r.too_few_clusters !== undefined ? 'too few clusters (' + r.too_few_clusters + ')' : ''; }
  function ciText(r) { return tooFew(r) || (r.low === null || r.low === undefined ? '-' : '[' + fmt(r.low) + ', ' + fmt(r.high) + ']'); }
  function pText(r) {
    if (tooFew(r)) return tooFew(r);
    if (r.p_value === null || r.p_value === undefined) return '-';
    return (r.p_value < 0.001 ? '<0.001' : r.p_value.toFixed(3)) + (r.exact ? ' (exact)' : '');
  }
  function panel(c) {
    var la = R[c.ia].label, lb = R[c.ib].label;
    var sec = h('div', { cls: 'panel comparison', 'data-ia': c.ia, 'data-ib': c.ib },
      h('h2', { text: c.benchmark + ': A = ' + la + '  vs  B = ' + lb }),
      h('p', { cls: 'note', text: c.n_shared + ' shared samples (' + c.n_only_a + ' only in A, ' + c.n_only_b + ' only in B); each run scored as its own result scores it, on the units both scored. ' + c.ci_note }));
    var rows = c.rows.map(function (r) {
      var cls = r.diff > 0 ? 'pos' : (r.diff < 0 ? 'neg' : '');
      return h('tr', null, [r.metric + (r.setting ? ' [' + r.setting + ']' : ''), r.category, fmt(r.a), fmt(r.b)].map(function (x) { return h('td', { text: x }); }),
        h('td', { cls: cls, text: fmt(r.diff) }), h('td', { text: ciText(r) }), h('td', { text: pText(r) }), h('td', { text: fmt(r.n) }));
    });
    var unit = (c.design && c.design.cluster ? c.design.cluster : 'unit') + 's';
    sec.appendChild(h('div', { cls: 'tblwrap' }, h('table', { cls: 'tbl deltas' }, h('thead', null, h('tr', null, ['metric', 'category', 'A', 'B', 'A−B', '95% CI', 'p', unit].map(function (x) { return h('th', { text: x }); }))),
      h('tbody', null, rows))));
    if ((c.notes || []).length) sec.appendChild(h('ul', { cls: 'notes' }, c.notes.map(function (n) { return h('li', { text: n }); })));
    var nA = c.flips.filter(function (f) { return f.outcome_a === 'correct'; }).length;
    sec.appendChild(h('h3', { text: c.flips.length + ' flipped samples (' + nA + ' right only in A, ' + (c.flips.length - nA) + ' right only in B)' }));
    if (c.flips.length) sec.appendChild(h('div', { cls: 'side heads' }, h('b', { text: 'A: ' + la }), h('b', { text: 'B: ' + lb })));
    var flips = h('div', { cls: 'flips' }), shown = 0;
    var btn = h('button', { text: 'more', type: 'button', onclick: more });
    function more() {
      c.flips.slice(shown, shown + 20).forEach(function (f) {
        var ia = V.sampleAt(c.ia, f.sample_id), ib = V.sampleAt(c.ib, f.sample_id);
        flips.appendChild(h('div', { cls: 'side flip', 'data-id': f.sample_id },
          ia === undefined ? h('div', { text: f.sample_id }) : V.card(ia, true), ib === undefined ? h('div', { text: f.sample_id }) : V.card(ib, true)));
      });
      shown += 20;
      btn.hidden = shown >= c.flips.length;
    }
    sec.appendChild(flips); sec.appendChild(btn); more();
    window.lensbenchSort(sec);
    return sec;
  }
  function show(push) {
    var out = document.getElementById('cmp-out');
    out.innerHTML = '';
    if (st.a === st.b) { out.appendChild(h('p', { cls: 'note', text: 'Choose two different runs.' })); return; }
    out.appendChild(panel(stored(st.a, st.b) || byOutcomes(st.a, st.b)));
    if (push) history.replaceState(null, '', '#compare=' + encodeURIComponent(R[st.a].key) + '/' + encodeURIComponent(R[st.b].key));
  }
  function fromHash() {
    var m = /^#compare=([^/]*)\/(.*)$/.exec(location.hash);
    if (!m) return false;
    var key = function (k) { try { k = decodeURIComponent(k); } catch (e) { return null; } return R.filter(function (r) { return r.key === k; })[0]; };
    var a = key(m[1]), b = key(m[2]);
    if (!a || !b || a.benchmark !== b.benchmark) return false;
    st.a = a.i; st.b = b.i;
    return true;
  }

  V.renderCompare = function () {
    var box = document.getElementById('tab-compare');
    var benches = V.uniq(R.filter(function (r) { return r.n; }).map(function (r) { return r.benchmark; }))
      .filter(function (b) { return R.filter(function (r) { return r.benchmark === b && r.n; }).length > 1; });
    if (!benches.length) { box.appendChild(h('p', { cls: 'note', text: 'Give two or more runs of one benchmark to compare them.' })); return; }
    if (!fromHash()) {
      var c0 = D.comparisons[0];
      if (c0) { st.a = c0.ia; st.b = c0.ib; } else {
        var rs = R.filter(function (r) { return r.benchmark === benches[0] && r.n; });
        st.a = rs[0].i; st.b = rs[1].i;
      }
    }
    var fb = h('select', { id: 'cmp-bench', 'aria-label': 'benchmark' }), fa = h('select', { id: 'cmp-a', 'aria-label': 'run A' }),
      fB = h('select', { id: 'cmp-b', 'aria-label': 'run B' });
    function runsOf(b) { return R.filter(function (r) { return r.benchmark === b && r.n; }); }
    function fill() {
      var b = R[st.a].benchmark;
      fb.innerHTML = '';
      benches.forEach(function (x) { var o = h('option', { value: x, text: x }); if (x === b) o.selected = true; fb.appendChild(o); });
      options(fa, runsOf(b), st.a); options(fB, runsOf(b), st.b);
    }
    fb.addEventListener('change', function () { var rs = runsOf(fb.value); st.a = rs[0].i; st.b = rs[1].i; fill(); show(true); });
    fa.addEventListener('change', function () { st.a = +fa.value; show(true); });
    fB.addEventListener('change', function () { st.b = +fB.value; show(true); });
    var swap = h('button', { type: 'button', id: 'cmp-swap', text: '⇄ swap', title: 'swap A and B', onclick: function () {
      var t = st.a; st.a = st.b; st.b = t; fill(); show(true); } });
    box.appendChild(h('div', { cls: 'bar cmpbar', id: 'cmp-controls' },
      benches.length > 1 ? h('label', { cls: 'ctl' }, 'Benchmark ', fb) : null,
      h('label', { cls: 'ctl' }, 'A ', fa), swap, h('label', { cls: 'ctl' }, 'B ', fB),
      h('span', { cls: 'note', text: 'any two runs of a benchmark; every pair is compared on its shared samples' })));
    box.appendChild(h('div', { id: 'cmp-out' }));
    fill();
    show(false);
    st.redraw = function () { fill(); show(false); };
  };
  window.addEventListener('hashchange', function () {  /* a #compare= link followed on the open page */
    if (!/^#compare=/.test(location.hash)) return;
    var drawn = !!st.redraw;
    if (fromHash() && drawn) st.redraw();
    V.showTab('compare');
  });
})();
