/* lensbench sortable tables: every <table class="tbl"> with a <thead> sorts by a column when its header is
   clicked or, focused, Enter/Space is pressed. Numeric-aware: a cell counts as a number by its leading figure
   ("74.8 [72.7, 76.8]" -> 74.8, "1,417/1,624" -> 1417, "77.4*" -> 77.4); "-" and empty cells always sort last.
   A numeric column sorts highest first on the first press, a text column A-Z; the second press reverses, the
   third restores the original order. The state is in aria-sort. Exposes window.lensbenchSort(root). */
(function () {
  'use strict';
  var NUM = /^[<>~≤≥]?\s*([-+\u2212]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?)/i;
  var collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });
  function key(cell) {
    var t = cell ? cell.textContent.trim() : '';
    if (t === '' || t === '-' || t === '\u2013' || t === '\u2014' || t === 'n/a') return null;
    var m = NUM.exec(t);
    if (m) return parseFloat(m[1].replace(/,/g, '').replace('\u2212', '-'));
    return t;
  }
  function col(th) {
    var i = 0, e = th;
    while ((e = e.previousElementSibling)) i += e.colSpan || 1;
    return i;
  }
  function cellAt(tr, c) {
    var i = 0;
    for (var k = 0; k < tr.cells.length; k++) { if (i === c) return tr.cells[k]; i += tr.cells[k].colSpan || 1; }
    return null;
  }
  function sortBy(th) {
    var table = th.closest('table'), body = table.tBodies[0];
    if (!body) return;
    var rows = Array.prototype.slice.call(body.rows), c = col(th);
    rows.forEach(function (r, i) { if (!r.hasAttribute('data-o')) r.setAttribute('data-o', String(i)); });
    var keys = rows.map(function (r) { return key(cellAt(r, c)); });
    var nums = keys.filter(function (k) { return typeof k === 'number'; }).length;
    var texts = keys.filter(function (k) { return typeof k === 'string'; }).length;
    var numeric = nums > 0 && nums >= texts;
    var was = th.getAttribute('aria-sort'), first = numeric ? 'descending' : 'ascending';
    var next = was === 'none' || !was ? first : (was === first ? (first === 'ascending' ? 'descending' : 'ascending') : 'none');
    table.querySelectorAll('thead th[aria-sort]').forEach(function (x) { x.setAttribute('aria-sort', 'none'); });
    th.setAttribute('aria-sort', next);
    var order = rows.map(function (r, i) { return { r: r, k: keys[i], o: +r.getAttribute('data-o') }; });
    var dir = next === 'descending' ? -1 : 1;
    order.sort(function (a, b) {
      if (next === 'none') return a.o - b.o;
      if (a.k === null || b.k === null) return a.k === b.k ? a.o - b.o : (a.k === null ? 1 : -1);
      var ta = typeof a.k, tb = typeof b.k, d;
      if (ta !== tb) d = (ta === 'number') === numeric ? -1 : 1;  /* the column's kind first, in either direction */
      else d = dir * (ta === 'number' ? a.k - b.k : collator.compare(a.k, b.k));
      return d || a.o - b.o;
    });
    var frag = document.createDocumentFragment();
    order.forEach(function (x) { frag.appendChild(x.r); });
    body.appendChild(frag);
  }
  function mark(root) {
    (root || document).querySelectorAll('table.tbl > thead th:not([aria-sort])').forEach(function (th) {
      var t = th.closest('table');
      if (!t.tBodies[0] || t.tBodies[0].rows.length < 2) return;
      th.setAttribute('aria-sort', 'none');
      th.setAttribute('tabindex', '0');
      th.classList.add('sortable');
      th.title = 'sort by ' + th.textContent.trim();
    });
  }
  function hit(e) {
    var th = e.target.closest && e.target.closest('th.sortable');
    if (!th) return;
    if (e.type === 'keydown' && e.key !== 'Enter' && e.key !== ' ') return;
    e.preventDefault();
    sortBy(th);
  }
  document.addEventListener('click', hit);
  document.addEventListener('keydown', hit);
  window.lensbenchSort = mark;
})();
