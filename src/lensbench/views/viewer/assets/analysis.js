/* lensbench viewer: the Items tab (item analysis of a benchmark's runs, D.items: lensbench.views.viewer.analysis.items_data)
   and the Judge tab (stored `lensbench analyze judge` reports, D.judge: judge_data). Each tab's button shows only
   when it has data; each sample id links to #sample=<run key>/<id> (links.js). Uses window.lensbenchViewer and
   window.lensbenchSort. See docs/analysis.md. */
(function () {
  'use strict';
  var V = window.lensbenchViewer, D = V.D, R = V.R, h = V.h, fmt = V.fmt;
  var ITEMS = D.items || {}, JUDGE = D.judge || [];

  function num(v, nd) { return v === null || v === undefined ? '-' : Number(v).toFixed(nd === undefined ? 3 : nd); }
  function ci(t, nd) {  /* [value, low, high] -> "v [lo, hi]" */
    if (!t || t[0] === null || t[0] === undefined) return '-';
    return num(t[0], nd) + (t[1] === null || t[1] === undefined ? '' : ' [' + num(t[1], nd) + ', ' + num(t[2], nd) + ']');
  }
  function sampleLink(ri, id) {
    return h('a', { href: '#sample=' + encodeURIComponent(R[ri].key) + '/' + encodeURIComponent(id), text: id });
  }
  function table(cls, head, rows) {
    return h('div', { cls: 'tblwrap' }, h('table', { cls: 'tbl ' + cls },
      h('thead', null, h('tr', null, head.map(function (x) { return h('th', { text: x }); }))),
      h('tbody', null, rows)));
  }
  function tr(cells) { return h('tr', null, cells.map(function (c) { return typeof c === 'string' ? h('td', { text: c }) : h('td', null, c); })); }

  /* ---------------- items */
  function renderItems() {
    var box = document.getElementById('tab-items');
    Object.keys(ITEMS).forEach(function (b) {
      var a = ITEMS[b], w = a.without_flagged;
      var sec = h('div', { cls: 'panel items', 'data-bench': b }, h('h2', null, b + ': item analysis',
        h('span', { cls: 'sub', text: a.n_items + ' items × ' + a.runs.length + ' runs · ' + a.n_flagged + ' flagged' })));
      sec.appendChild(h('p', { cls: 'note', text: 'Difficulty = share of runs right; point-biserial = the item against the ' +
        'rest score; 2PL a/b = discrimination/difficulty. ' + (a.irt_skipped ? '2PL not fitted on the page (too many ' +
        'items × runs): run lensbench analyze items. ' : a.irt ? '2PL ' + (a.irt.converged ? 'converged' : 'NOT converged') +
        ' in ' + a.irt.iterations + ' iterations. ' : '') + (a.blind_runs.length ? 'Blind runs: ' + a.blind_runs.join(', ') + '.' :
        'No blind run: "blind-answerable" not tested.') }));
      sec.appendChild(h('h4', { text: 'Flag counts' }));
      sec.appendChild(table('flagcounts', ['flag', 'items'], Object.keys(a.flag_counts).map(function (f) {
        return tr([f, String(a.flag_counts[f])]); })));
      sec.appendChild(h('h4', { text: 'Flagged items (' + a.items.length + ')' }));
      if (a.items.length) sec.appendChild(table('flagged', ['item', 'flag', 'difficulty', 'point-biserial', '2PL a', '2PL b', 'why'],
        a.items.map(function (r) {
          return h('tr', { 'data-item': r.item }, h('td', null, sampleLink(r.run, r.item)), h('td', { text: r.flags.replace(/;/g, ', ') }),
            h('td', { text: num(r.difficulty) }), h('td', { text: num(r.point_biserial) }), h('td', { text: num(r.irt_a) }),
            h('td', { text: num(r.irt_b) }), h('td', { cls: 'note wrap', text: r.why }));
        })));
      else sec.appendChild(h('p', { cls: 'note', text: 'No item flagged.' }));
      sec.appendChild(h('h4', { text: 'Headline with and without the ' + w.n_items_left_out + ' flagged items' }));
      sec.appendChild(table('without', ['run', 'full', 'without flagged', 'change'], w.runs.map(function (s) {
        return tr([s.label, ci(s.full, 2), ci(s.reduced, 2), ci(s.change, 2)]); })));
      sec.appendChild(h('p', { cls: 'note', text: 'Ranking agreement (Kendall tau-b, full vs without flagged): ' + ci(w.kendall_tau, 3) +
        '; 95% CIs over ' + a.design.cluster + ' clusters, ' + a.design.n_resamples + ' resamples.' }));
      box.appendChild(sec);
    });
    window.lensbenchSort(box);
  }

  /* ---------------- judge */
  function renderJudge() {
    var box = document.getElementById('tab-judge');
    JUDGE.forEach(function (j) {
      var run = R[j.run], hd = j.headline, n = j.n_judged, d = j.disagreements;
      var sec = h('div', { cls: 'panel judge', 'data-run': run.key, 'data-name': j.name },
        h('h2', null, run.label + ': ' + j.judges[0] + ' vs ' + j.judges[1], h('span', { cls: 'sub', text: j.name })));
      var facts = [['replies decided by a judge', String(n)],
        ['same verdict', (100 * j.agreement).toFixed(1) + '% (' + (n - d.length) + ' of ' + n + ')'],
        ["Cohen's kappa [95% CI]", ci(j.kappa, 3)]];
      if (hd) facts.push([hd.metric + ' headline (first → second judge)', num(hd.first, 2) + ' → ' + num(hd.second, 2)],
        ['change [95% CI], paired p', ci([hd.change, hd.low, hd.high], 2) + ', p = ' + (hd.p_value === null ? '-' : Number(hd.p_value).toPrecision(3))]);
      sec.appendChild(h('table', { cls: 'facts' }, h('tbody', null, facts.map(function (f) {
        return h('tr', null, h('th', { text: f[0] }), h('td', { text: f[1] })); }))));
      sec.appendChild(h('p', { cls: 'note', text: 'CIs over ' + j.n_clusters + ' ' + (j.design || {}).cluster + ' clusters.' }));
      sec.appendChild(h('h4', { text: 'Disagreements (' + d.length + ')' }));
      if (d.length) sec.appendChild(table('disagree', ['sample', 'first judge', 'second judge', 'outcome (first)', 'outcome (second)'],
        d.map(function (x) { return tr([sampleLink(j.run, x.sample_id), fmt(x.first), fmt(x.second), fmt(x.outcome_first), fmt(x.outcome_second)]); })));
      else sec.appendChild(h('p', { cls: 'note', text: 'The judges agree on every reply.' }));
      box.appendChild(sec);
    });
    window.lensbenchSort(box);
  }

  V.lazyTabs = V.lazyTabs || {};
  V.lazyTabs.items = renderItems;
  V.lazyTabs.judge = renderJudge;
  [['items', Object.keys(ITEMS).length], ['judge', JUDGE.length]].forEach(function (t) {
    if (!t[1]) return;
    var b = document.querySelector('#tabs button[data-tab=' + t[0] + ']');
    b.hidden = false;
    b.appendChild(h('span', { cls: 'n', text: String(t[0] === 'items' ? Object.keys(ITEMS).reduce(function (s, k) {
      return s + ITEMS[k].n_flagged; }, 0) : JUDGE.length) }));
  });
})();
