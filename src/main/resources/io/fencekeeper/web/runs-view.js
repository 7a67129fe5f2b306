// The runs page: the runs, newest first, with their state, progress, counts, deadline outlook,
// backlog age and rate, live from GET /api/events/runs (the first page, then every run that
// changes); "Older runs" pages further back through GET /api/runs.
import { call, follow } from './api.js';
import { fill, h } from './dom.js';
import { duration, LEVEL_MARK, num, outlook, percent, rate, time, utc } from './format.js';

export function progressBar(counts) {
  const total = counts.total || 0;
  const part = (n, cls) => (n > 0 ? h('span', { class: `seg ${cls}`, 'data-width': percent(n, total) }) : null);
  const bar = h('div', {
    class: 'bar', role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': total, 'aria-valuenow': counts.done,
    'aria-valuetext': `${num(counts.done)} of ${num(total)} done`,
  }, part(counts.done, 'done'), part(counts.failed, 'failed'), part(counts.closed, 'closed'), part(counts.leased, 'leased'));
  // widths through the CSSOM: the page's CSP allows no inline style attributes
  for (const seg of bar.children) seg.style.width = `${seg.dataset.width}%`;
  return h('div', { class: 'progress' }, bar, h('span', { class: 'progress-text' }, `${num(counts.done)} / ${num(total)} done (${percent(counts.done, total)}%)`));
}

export function stateBadge(state) {
  return h('span', { class: `badge state-${state.toLowerCase()}` }, state);
}

export function outlookBadge(run) {
  const o = outlook(run);
  return h('span', { class: `outlook level-${o.level}`, 'data-level': o.level }, h('span', { 'aria-hidden': 'true', class: 'mark' }, LEVEL_MARK[o.level]), ` ${o.label}`);
}

function countsLine(c) {
  return h('span', { class: 'counts' },
    ['pending', 'leased', 'done', 'failed', 'closed', 'quarantined'].map((k) => h('span', { class: `count count-${k}` }, `${k} ${num(c[k])}`)));
}

const ORDER = { RUNNING: 0 };

export function runsView(main) {
  const live = h('span', { class: 'live', role: 'status' }, 'connecting…');
  const body = h('div', { class: 'runs' }, h('p', { class: 'muted' }, 'Loading runs…'));
  fill(main, h('div', { class: 'page-head' }, h('h1', {}, 'Runs'), live), body);
  const controller = new AbortController();

  // rows are updated in place, never rebuilt: a link that has the keyboard focus keeps it
  const rows = new Map();
  const known = new Map();
  let next = null;
  let tbody = null;
  const more = h('button', { type: 'button', class: 'button more-runs', hidden: true }, 'Older runs');
  more.addEventListener('click', async () => {
    more.disabled = true;
    try {
      const page = await call(`/api/runs?cursor=${encodeURIComponent(next)}`, { signal: controller.signal });
      page.runs.forEach((run) => known.set(run.runId, run));
      next = page.next;
      render([...known.values()]);
    } catch (error) {
      more.textContent = `Older runs (failed: ${error.message})`;
    } finally {
      more.disabled = false;
    }
  });

  function cells(run) {
    return [
      h('td', { 'data-label': 'State' }, stateBadge(run.state)),
      h('td', { 'data-label': 'Progress' }, progressBar(run.counts), countsLine(run.counts)),
      h('td', { 'data-label': 'Deadline' }, h('time', { datetime: run.deadline, title: utc(run.deadline) }, time(run.deadline))),
      h('td', { 'data-label': 'Projected finish' },
        run.state === 'RUNNING' && run.projectedFinish ? h('time', { datetime: run.projectedFinish, title: utc(run.projectedFinish) }, time(run.projectedFinish)) : null,
        run.state !== 'RUNNING' && run.endedAt ? h('span', {}, `ended ${time(run.endedAt)}`) : null,
        h('div', {}, outlookBadge(run))),
      h('td', { 'data-label': 'Backlog age' }, run.state === 'RUNNING' ? duration(run.backlogAgeSeconds) : '–'),
      h('td', { 'data-label': 'Rate' }, run.state === 'RUNNING' ? `${rate(run.itemsPerSecond)} items`
        : run.staging ? `${rate(run.staging.rowsPerSecond)} rows staged` : '–'),
    ];
  }

  function render(runs) {
    if (!runs.length) {
      rows.clear();
      tbody = null;
      fill(body, h('p', { class: 'empty' }, 'No runs yet. Start one with ', h('code', {}, 'fencekeeper run'), ' or ', h('code', {}, 'POST /api/runs'), '.'));
      return;
    }
    if (!tbody) {
      tbody = h('tbody');
      const head = ['Run', 'State', 'Progress', 'Deadline', 'Projected finish', 'Backlog age', 'Rate'];
      fill(body, h('table', { class: 'table runs-table' },
        h('caption', { class: 'visually-hidden' }, 'The runs, running ones first, then the newest'),
        h('thead', {}, h('tr', {}, head.map((c) => h('th', { scope: 'col' }, c)))),
        tbody), more);
    }
    more.hidden = !next;
    const sorted = [...runs].sort((a, b) => (ORDER[a.state] ?? 1) - (ORDER[b.state] ?? 1) || Date.parse(b.createdAt) - Date.parse(a.createdAt));
    const present = new Set(sorted.map((run) => run.runId));
    for (const [id, row] of rows) if (!present.has(id)) { row.remove(); rows.delete(id); }
    sorted.forEach((run, index) => {
      let row = rows.get(run.runId);
      if (!row) {
        row = h('tr', { 'data-run': run.runId },
          h('th', { scope: 'row', 'data-label': 'Run' }, h('a', { href: `#/runs/${encodeURIComponent(run.runId)}` }, run.runId)));
        rows.set(run.runId, row);
      }
      const name = row.firstChild;
      while (name.nextSibling) name.nextSibling.remove();
      row.append(...cells(run));
      if (tbody.children[index] !== row) tbody.insertBefore(row, tbody.children[index] || null);
    });
  }

  follow('/api/events/runs', {
    signal: controller.signal,
    onEvent: (name, data) => {
      if (name === 'runs') {
        known.clear();
        data.runs.forEach((run) => known.set(run.runId, run));
        next = data.next;
      } else if (name === 'run') {
        known.set(data.run.runId, data.run);
      } else {
        return;
      }
      render([...known.values()]);
    },
    onState: (state, detail) => {
      live.textContent = state === 'live' ? '● live' : `reconnecting… ${detail && detail.message ? `(${detail.message})` : ''}`;
      live.className = `live live-${state}`;
    },
  }).catch((error) => fill(body, h('p', { class: 'form-error' }, `Cannot load the runs: ${error.message}`)));
  return () => controller.abort();
}
