/* lensbench viewer: the Summary tab (leaderboard, each benchmark's tables, run folders; every table sortable)
   and the Plots tab. Uses window.lensbenchViewer (viewer.js) and window.lensbenchSort (sort.js). */
(function () {
  'use strict';
  var V = window.lensbenchViewer, D = V.D, R = V.R, h = V.h, fmt = V.fmt, uniq = V.uniq;

  /* ---------------- summary */
  V.renderSummary = function () {
    var box = document.getElementById('tab-summary');
    var benches = uniq(R.map(function (r) { return r.benchmark; }));
    /* tables and notes are HTML made by lensbench.report.viewer.html.md_to_html (every text escaped) */
    if (benches.length > 1) box.appendChild(h('nav', { cls: 'toc' }, h('span', { cls: 'note', text: 'Benchmarks:' }),
      benches.map(function (b) { return h('a', { href: '#bench-' + encodeURIComponent(b), text: b }); })));
    if (D.tables._leaderboard) box.appendChild(h('div', { cls: 'panel leaderboard', html: D.tables._leaderboard }));
    benches.forEach(function (b) {
      var runs = R.filter(function (r) { return r.benchmark === b; });
      var sec = h('div', { cls: 'panel bench', 'data-bench': b, id: 'bench-' + encodeURIComponent(b) }, h('h2', null, b,
        h('span', { cls: 'sub', text: runs.length + ' run' + (runs.length === 1 ? '' : 's') + ' · ' +
          runs.reduce(function (n, r) { return n + (r.n || 0); }, 0) + ' samples' })));
      if (D.tables[b]) sec.appendChild(h('div', { html: D.tables[b] }));
      var rows = R.filter(function (r) { return r.benchmark === b; }).map(function (r) {
        var c = r.counts || {};
        return h('tr', null, h('td', { text: r.label }), h('td', { cls: 'note wrap', text: r.status || (r.complete ? 'complete' : 'unfinished') }),
          h('td', { text: fmt(r.n) }), h('td', { text: fmt(c.n_unparseable) }), h('td', { text: fmt(c.n_empty || 0) }), h('td', { text: fmt(c.n_error) }),
          h('td', { cls: 'note wrap', text: (r.problems || []).join('; ') }), h('td', { cls: 'path', text: r.path }));
      });
      sec.appendChild(h('h4', { text: 'Run folders' }));
      sec.appendChild(h('div', { cls: 'tblwrap' }, h('table', { cls: 'tbl runs' }, h('thead', null, h('tr', null,
        ['run', 'status', 'records', 'unparseable', 'empty replies', 'errors', 'problems', 'folder'].map(function (x) { return h('th', { text: x }); }))),
        h('tbody', null, rows))));
      box.appendChild(sec);
    });
    if (!R.length) box.appendChild(h('p', { cls: 'note', text: 'No runs.' }));
    window.lensbenchSort(box);
  };


  /* ---------------- plots */
  V.renderPlots = function () {
    var box = document.getElementById('tab-plots'), figs = JSON.parse(document.getElementById('lensbench-figures').textContent);
    box.classList.add('plots');
    if (!figs.length) box.appendChild(h('p', { cls: 'note', text: 'No plots for these runs.' }));
    figs.forEach(function (f) {  /* the title is drawn in the plot itself */
      var im = h('img', { src: f.src, alt: f.title, title: f.title, loading: 'lazy' });
      im.addEventListener('click', function () {
        var body = document.getElementById('modal-body');
        body.innerHTML = '';
        body.appendChild(h('span', { cls: 'big' }, h('img', { src: f.src, alt: f.title })));
        document.getElementById('modal').hidden = false;
      });
      var fig = h('figure', { 'data-title': f.title }, im);
      im.addEventListener('load', function () { if (im.naturalWidth > 900) fig.classList.add('wide'); });  /* many panels: a whole row */
      box.appendChild(fig);
    });
  };

})();
