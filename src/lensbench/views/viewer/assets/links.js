/* lensbench viewer: a link to any one sample, #sample=<run key>/<sample id> (both URI-encoded; the run key is
   its folder's name, lensbench.report.viewer.data.run_keys), opening that sample alone on the Samples tab;
   each sample card's link and copy-link controls. Uses window.lensbenchViewer (viewer.js). */
(function () {
  'use strict';
  var V = window.lensbenchViewer, R = V.R, S = V.S, h = V.h, st = V.st;

  function linkOf(i) { return '#sample=' + encodeURIComponent(R[S[i].r].key) + '/' + encodeURIComponent(S[i].id); }
  V.linkControls = function (i) {
    var a = h('a', { cls: 'permalink', href: linkOf(i), title: 'link to this sample', text: 'link' });
    var b = h('button', { cls: 'copylink', type: 'button', title: 'copy a link to this sample', text: 'copy link' });
    b.addEventListener('click', function () {
      var url = location.href.split('#')[0] + linkOf(i);
      function said(t) { b.textContent = t; setTimeout(function () { b.textContent = 'copy link'; }, 1500); }
      if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(url).then(function () { said('copied'); }, function () { fallback(); });
      else fallback();
      function fallback() {  /* file:// pages may have no clipboard API: select the link in a field */
        var f = h('input', { cls: 'linkfield', value: url, readonly: 'readonly', 'aria-label': 'link' });
        b.replaceWith(f); f.select();
        try { document.execCommand('copy'); } catch (e) { /* the selected field is enough */ }
      }
    });
    return h('span', { cls: 'links' }, a, b);
  };
  function sampleFromHash(hash) {  /* the index of the sample a #sample= link names, -1 if none in these runs, null if no link */
    var m = /^#sample=([^/]*)\/(.*)$/.exec(hash || '');
    if (!m) return null;
    var key, id;
    try { key = decodeURIComponent(m[1]); id = decodeURIComponent(m[2]); } catch (e) { return -1; }
    var run = R.filter(function (r) { return r.key === key; })[0], i = run ? V.sampleAt(run.i, id) : undefined;
    return i === undefined ? -1 : i;
  }
  V.openFromHash = function () {
    var i = sampleFromHash(location.hash);
    if (i === null) return false;
    st.focus = { i: i, hash: location.hash };
    V.showTab('samples');
    V.renderList();
    window.scrollTo(0, 0);
    return true;
  };
  V.renderFocus = function (list) {
    var f = st.focus, back = h('button', { type: 'button', cls: 'back', text: 'show all samples', onclick: function () {
      st.focus = null; history.replaceState(null, '', '#samples'); V.renderList(); } });
    list.appendChild(h('div', { cls: 'focus note' }, f.i >= 0 ? 'One sample, opened from its link. ' :
      'No sample ' + f.hash.slice(8) + ' in these runs. ', back));
    if (f.i >= 0) list.appendChild(V.card(f.i, false));
    list.setAttribute('data-count', f.i >= 0 ? '1' : '0');
    document.getElementById('f-count').textContent = f.i >= 0 ? '1 linked sample' : 'no such sample';
    ['pager-top', 'pager-bottom'].forEach(function (id) { document.getElementById(id).innerHTML = ''; });
  };
})();
