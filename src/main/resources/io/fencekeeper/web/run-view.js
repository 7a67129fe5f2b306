// One run: where it stands against its deadline, progress over time (with the fleet's nodes now and
// wanted), the governor's decisions and the run's need of the fleet, stale rejections and
// takeovers, its items, and the operator's actions.
import { actionBlocker, act, confirmAction } from './app.js';
import { call, download, follow, seg } from './api.js';
import { legend, timeChart } from './charts.js';
import { fill, h } from './dom.js';
import { needTile } from './fleet.js';
import { fleetSamples } from './fleet-samples.js';
import { duration, num, percent, rate, relative, time, utc, ZONE } from './format.js';
import { outlookBadge, progressBar, stateBadge } from './runs-view.js';
import { verificationPanel } from './verify-panel.js';

const COLUMNS = ['at', 'done', 'failed', 'closed', 'leased', 'pending', 'cap', 'throttled', 'stale', 'takeovers', 'rate'];
const PAGE = 25;

/** Per-second series for the chart from the cumulative samples. */
export function derive(hist) {
  const out = { at: hist.at, donePerSecond: [], inFlight: hist.leased, cap: hist.cap, throttledPerSecond: [], marks: [] };
  for (let i = 0; i < hist.at.length; i++) {
    const dt = i === 0 ? 0 : (hist.at[i] - hist.at[i - 1]) / 1000;
    out.donePerSecond.push(dt > 0 ? Math.max(0, hist.done[i] - hist.done[i - 1]) / dt : null);
    out.throttledPerSecond.push(dt > 0 ? Math.max(0, hist.throttled[i] - hist.throttled[i - 1]) / dt : 0);
    if (i > 0 && hist.stale[i] > hist.stale[i - 1]) {
      out.marks.push({ at: hist.at[i], cls: 'stale', label: `${time(new Date(hist.at[i]).toISOString())}: +${hist.stale[i] - hist.stale[i - 1]} stale rejections` });
    }
    if (i > 0 && hist.takeovers[i] > hist.takeovers[i - 1]) {
      out.marks.push({ at: hist.at[i], cls: 'expiry', label: `${time(new Date(hist.at[i]).toISOString())}: +${hist.takeovers[i] - hist.takeovers[i - 1]} takeovers` });
    }
  }
  return out;
}

export function runView(main, runId) {
  let run = null;
  let hist = Object.fromEntries(COLUMNS.map((c) => [c, []]));
  let actionsKey = '';
  let controller = null;
  const live = h('span', { class: 'live', role: 'status' }, 'connecting…');
  const head = h('section', { class: 'run-head', 'aria-label': 'Run summary' });
  const actions = h('section', { class: 'actions', 'aria-label': 'Actions' });
  const tiles = h('section', { class: 'tiles', 'aria-label': 'Figures' });
  const chartBox = h('div', { class: 'chart-box' });
  const flightBox = h('div', { class: 'chart-box' });
  const chartSummary = h('p', { class: 'muted chart-summary' });
  const timeline = h('ol', { class: 'timeline' });
  const items = h('section', { class: 'items', 'aria-labelledby': 'items-title' });
  const verification = verificationPanel(runId);
  const fleet = fleetSamples();
  fill(main,
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: '#/' }, 'Runs'), ' / ', runId),
    h('div', { class: 'page-head' }, h('h1', {}, runId), live),
    head, actions, tiles,
    h('section', { class: 'panel', 'aria-labelledby': 'chart-title' },
      h('h2', { id: 'chart-title' }, 'Progress over time'),
      legend([
        { name: 'done per second', cls: 'done-rate' },
        { name: 'throttled answers per second', cls: 'throttled', kind: 'bar' },
        { name: 'nodes dispatching now (right axis)', cls: 'fleet-nodes' },
        { name: 'nodes wanted (right axis)', cls: 'fleet-wanted' },
      ]),
      chartBox,
      h('h3', {}, "Items in flight and the governor's cap"),
      legend([
        { name: 'items in flight', cls: 'in-flight' },
        { name: "governor's cap", cls: 'cap' },
        { name: 'stale rejections', cls: 'stale', kind: 'mark' },
        { name: 'takeovers', cls: 'expiry', kind: 'mark' },
      ]),
      flightBox, chartSummary),
    h('section', { class: 'panel', 'aria-labelledby': 'timeline-title' },
      h('h2', { id: 'timeline-title' }, 'Governor decisions, stale rejections and takeovers'),
      timeline),
    verification.section,
    items);

  // the run's provider budget (GET /api/providers), read at most every five seconds
  let budget = null;
  let budgetReadAt = 0;
  async function readBudget() {
    if (!run.provider || Date.now() - budgetReadAt < 5000) return;
    budgetReadAt = Date.now();
    try {
      const all = await call('/api/providers');
      budget = (all.providers || []).find((p) => p.provider === run.provider) || null;
    } catch (error) {
      budget = null;
    }
    renderHead();
  }

  function providerLine() {
    if (!budget || !budget.maxInFlight) return run.provider;
    const rateOf = (n) => (budget.maxRate ? `, ${num(n)} calls/s` : '');
    const share = (budget.runs || []).find((r) => r.runId === run.runId);
    return `${run.provider}: ${num(budget.effectiveInFlight)} in flight${rateOf(budget.effectiveRate)}`
      + ` of ${num(budget.maxInFlight)}${rateOf(budget.maxRate)}`
      + (share ? `; this run's share ${num(share.share)}` : '');
  }

  function renderHead() {
    readBudget();
    const facts = [
      ['State', stateBadge(run.state)],
      ['Deadline', h('time', { datetime: run.deadline, title: utc(run.deadline) }, `${time(run.deadline)} (${relative(run.deadline)})`)],
      run.state === 'RUNNING'
        ? ['Projected finish', run.projectedFinish ? h('time', { datetime: run.projectedFinish, title: utc(run.projectedFinish) }, `${time(run.projectedFinish)} (${relative(run.projectedFinish)})`) : 'not yet known']
        : ['Ended', run.endedAt ? h('time', { datetime: run.endedAt, title: utc(run.endedAt) }, time(run.endedAt)) : '–'],
      ['Started', h('time', { datetime: run.createdAt, title: utc(run.createdAt) }, time(run.createdAt))],
      run.staging ? ['Staged', stagingLine(run.staging)] : null,
      run.endReason ? [run.state === 'STAGING' ? 'Staging' : 'Why it ended', run.endReason] : null,
      run.resumes ? ['Resumes', num(run.resumes)] : null,
      run.provider ? ['Provider', providerLine()] : null,
      run.archive ? ['Archived', archiveLine(run.archive)] : null,
    ].filter(Boolean);
    fill(head,
      h('p', { class: 'outlook-line' }, outlookBadge(run)),
      h('dl', { class: 'facts' }, facts.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
      h('p', { class: 'muted' }, ZONE === 'UTC' || ZONE === 'Etc/UTC' ? 'Times in UTC.' : `Times in ${ZONE}; hover a time for UTC.`));
  }

  // a STAGING run's scope so far: rows staged, their recent rate, and takeovers after a stager was gone
  function stagingLine(st) {
    return h('span', { id: 'staging-line' }, `${num(st.rowsStaged)} rows, ${rate(st.rowsPerSecond)}`,
      st.resumes ? ` (gone on with ${num(st.resumes)} time${st.resumes === 1 ? '' : 's'} after its stager stopped)` : '');
  }

  // where retention archived the run: the file in the archive directory of the node that wrote it
  function archiveLine(a) {
    const when = h('time', { datetime: a.archivedAt, title: utc(a.archivedAt) }, time(a.archivedAt));
    return h('span', { id: 'archive-line' }, when, ` as ${a.file} in the archive directory of ${a.node.replace(/^pekko:\/\/[^@]*@/, '')}`,
      ` (${num(a.items)} items, ${num(a.events)} events, sha256 ${a.sha256.slice(0, 12)}…)`,
      a.prunedAt ? `; ${num(a.rowsDeleted)} rows deleted from the database` : '; its rows are being deleted');
  }

  function renderActions() {
    const blocker = actionBlocker();
    const archived = !!run.archive;
    const key = `${run.state}|${blocker}|${archived}`;
    if (key === actionsKey) return; // re-rendering would take the keyboard focus away
    actionsKey = key;
    const canResume = !archived && ['PARTIAL', 'FAILED', 'CANCELLED'].includes(run.state);
    const canCancel = run.state === 'RUNNING';
    const note = archived ? `Archived: its items are no longer in the journal, so it cannot be resumed. Read it with: fencekeeper archive show ${runId} (--report for its items), fencekeeper archive audit <itemId>.`
      : blocker
      || (run.state === 'RUNNING' ? 'Resume applies once the run has ended PARTIAL, FAILED or CANCELLED.'
        : run.state === 'SUCCEEDED' ? 'Nothing to resume or cancel: the run SUCCEEDED.'
          : 'Cancel applies to a RUNNING run.');
    const file = runId.replace('/', '-');
    fill(actions,
      h('div', { class: 'buttons' },
        h('button', { type: 'button', id: 'resume-run', disabled: !!blocker || !canResume, 'aria-describedby': 'actions-note', onclick: resume }, 'Resume with a new deadline…'),
        h('button', { type: 'button', id: 'cancel-run', class: 'danger', disabled: !!blocker || !canCancel, 'aria-describedby': 'actions-note', onclick: cancel }, 'Cancel run…'),
        h('button', { type: 'button', id: 'report-csv', disabled: archived, 'aria-describedby': 'actions-note', onclick: () => report('csv', file) }, 'Report (CSV)'),
        h('button', { type: 'button', id: 'report-jsonl', disabled: archived, 'aria-describedby': 'actions-note', onclick: () => report('jsonl', file) }, 'Report (JSON lines)')),
      h('p', { id: 'actions-note', class: 'note' }, note));
  }

  async function report(format, file) {
    try {
      await download(`/api/runs/${seg(runId)}/report?format=${format}`, `${file}-report.${format}`);
    } catch (error) {
      fill(actions.querySelector('.note'), `The report could not be downloaded: ${error.message}`);
    }
  }

  async function resume() {
    const input = h('input', { type: 'datetime-local', id: 'new-deadline', required: true, step: 60 });
    const inHour = new Date(Date.now() + 3600000 - new Date().getTimezoneOffset() * 60000);
    input.value = inHour.toISOString().slice(0, 16);
    const ok = await confirmAction({
      title: `Resume run ${runId}`,
      body: [
        `This reopens every CLOSED and FAILED item of the run (${num(run.counts.closed)} closed, ${num(run.counts.failed)} failed) and hands them out again until the new deadline. DONE items are never redone.`,
        h('label', { for: 'new-deadline' }, `New deadline (${ZONE})`), input,
      ],
      confirm: 'Resume run',
      validate: () => (!input.value || new Date(input.value).getTime() <= Date.now() ? 'The new deadline must be in the future.' : ''),
    });
    if (!ok) return;
    const deadline = new Date(input.value).toISOString();
    const resumed = await act(`Resume ${runId}`, () => call(`/api/runs/${seg(runId)}/resume`, { method: 'POST', body: { deadline } }));
    if (resumed) { run = resumed; update(); connect(); }
  }

  async function cancel() {
    const open = run.counts.pending + run.counts.leased;
    const ok = await confirmAction({
      title: `Cancel run ${runId}`,
      body: [
        `This stops handing out work, closes the ${num(open)} items that are not done (an in-flight worker's commit is then refused by its fencing token) and ends the run CANCELLED.`,
        `The ${num(run.counts.done)} DONE items stay done. A later resume with a new deadline reopens the closed ones.`,
      ],
      confirm: 'Cancel run',
      danger: true,
    });
    if (!ok) return;
    const cancelled = await act(`Cancel ${runId}`, () => call(`/api/runs/${seg(runId)}/cancel`, { method: 'POST' }));
    if (cancelled) { run = cancelled; update(); }
  }

  // whose leases were taken over, and when the last one was: after a node died, when it stopped costing
  function takeoversDetail(byNode) {
    const nodes = Object.entries(byNode || {});
    if (nodes.length === 0) return 'claims after a silent holder';
    return nodes.map(([node, t]) => `${node.replace(/^pekko:\/\/[^@]*@/, '')}: ${num(t.count)}, last ${time(t.last)}`).join('; ');
  }

  function renderTiles() {
    const g = run.governor || {};
    const tile = (label, value, detail) => h('div', { class: 'tile' }, h('span', { class: 'tile-label' }, label), h('span', { class: 'tile-value' }, value), detail ? h('span', { class: 'tile-detail' }, detail) : null);
    fill(tiles,
      run.staging
        ? tile('Staged', num(run.staging.rowsStaged), `rows of its scope, ${rate(run.staging.rowsPerSecond)} lately`)
        : tile('Done', `${percent(run.counts.done, run.counts.total)}%`, `${num(run.counts.done)} of ${num(run.counts.total)}`),
      tile('Rate', `${rate(run.itemsPerSecond)}`, 'items done, last 10 s'),
      tile('Backlog age', run.state === 'RUNNING' ? duration(run.backlogAgeSeconds) : '–', 'oldest item waiting'),
      tile('In flight', num(run.counts.leased), g.cap ? `cap ${num(g.cap)}` : null),
      tile('Governor', g.decision || '–', g.reason || null),
      needTile(run.fleet, run.state === 'RUNNING'),
      tile('Stale rejections', num(run.staleRejections), 'commands that lost their lease'),
      tile('Takeovers', num(run.takeovers), takeoversDetail(run.takeoversByNode)),
      tile('Reconciliations', num(run.reconciliations), 'ambiguous effects looked up'),
      tile('Attempts', num(run.attempts), 'attempts that ended'),
      tile('Throttled answers', num(run.throttledAnswers), 'provider 429s'),
      verification.tile,
      h('div', { class: 'tile tile-wide' }, h('span', { class: 'tile-label' }, 'By status'), progressBar(run.counts),
        h('ul', { class: 'status-counts' }, ['pending', 'leased', 'done', 'failed', 'closed', 'quarantined'].map((k) => h('li', { class: `count-${k}` }, h('span', { class: 'swatch', 'aria-hidden': 'true' }), `${k}: ${num(run.counts[k])}`)))));
  }

  function renderChart() {
    const d = derive(hist);
    const nodes = fleet.series(d.at);
    const width = chartBox.clientWidth || main.clientWidth || 600;
    const height = width < 500 ? 160 : 200;
    fill(chartBox, timeChart({
      width,
      height,
      times: d.at,
      lines: [{ name: 'done per second', values: d.donePerSecond, cls: 'done-rate' }],
      bars: { values: d.throttledPerSecond, cls: 'throttled' },
      right: {
        unit: 'nodes',
        lines: [
          { name: 'nodes now', values: nodes.nodes, cls: 'fleet-nodes', step: true },
          { name: 'nodes wanted', values: nodes.wanted, cls: 'fleet-wanted', step: true },
        ],
      },
      label: `Items of ${runId} done per second, throttled answers per second, and the nodes dispatching against the nodes wanted`,
    }));
    fill(flightBox, timeChart({
      width,
      height: height - 30,
      times: d.at,
      lines: [
        { name: 'in flight', values: d.inFlight, cls: 'in-flight' },
        { name: 'cap', values: d.cap, cls: 'cap', step: true },
      ],
      marks: d.marks,
      label: `Items of ${runId} in flight against the governor's cap, with stale rejections and takeovers marked`,
    }));
    const n = d.at.length;
    const fleetNow = n && nodes.nodes[n - 1] !== null ? `; nodes: ${num(nodes.nodes[n - 1])} dispatching, ${num(nodes.wanted[n - 1])} wanted` : '';
    chartSummary.textContent = n > 1
      ? `Latest: ${rate(d.donePerSecond[n - 1] || 0)} done, ${num(d.inFlight[n - 1])} in flight, cap ${num(d.cap[n - 1])}${fleetNow}; ${n} samples since ${time(new Date(d.at[0]).toISOString())}.`
      : '';
  }

  function renderTimeline() {
    const entries = [];
    for (const c of (run.governor && run.governor.changes) || []) {
      entries.push({ at: Date.parse(c.at), kind: 'governor', title: `Governor ${c.mode}, cap ${c.cap}`, text: c.reason });
    }
    for (const m of derive(hist).marks) {
      entries.push({ at: m.at, kind: m.cls, title: m.cls === 'stale' ? 'Stale rejection' : 'Takeover', text: m.label.replace(/^[^:]*:\d\d:\d\d: /, '') });
    }
    entries.sort((a, b) => b.at - a.at);
    if (!entries.length) {
      fill(timeline, h('li', { class: 'muted' }, 'No decisions or incidents yet.'));
      return;
    }
    fill(timeline, entries.slice(0, 60).map((e) => h('li', { class: `event event-${e.kind}` },
      h('time', { datetime: new Date(e.at).toISOString(), title: utc(new Date(e.at).toISOString()) }, time(new Date(e.at).toISOString())),
      h('strong', {}, e.title), h('span', {}, e.text))));
  }

  // --- items ---------------------------------------------------------------------------------------
  const filter = h('select', { id: 'item-status' }, ['all', 'pending', 'leased', 'done', 'failed', 'closed', 'quarantined'].map((s) => h('option', { value: s === 'all' ? '' : s }, s)));
  const table = h('div', { class: 'item-table' });
  const pager = h('div', { class: 'pager' });
  let cursors = [null];
  fill(items,
    h('h2', { id: 'items-title' }, 'Items'),
    h('div', { class: 'filters' }, h('label', { for: 'item-status' }, 'Status '), filter,
      h('button', { type: 'button', onclick: () => loadItems() }, 'Refresh')),
    table, pager);
  filter.addEventListener('change', () => { cursors = [null]; loadItems(); });

  function renderArchivedItems() {
    fill(table, h('p', { class: 'note', id: 'items-archived' },
      `Retention archived this run: its items and their audit trails are in its archive file, no longer in the database. `
      + `fencekeeper archive show ${runId} --report lists the items; fencekeeper archive audit <itemId> shows an item's trail.`));
    fill(pager);
  }

  async function loadItems() {
    if (run && run.archive) { renderArchivedItems(); return; }
    const after = cursors[cursors.length - 1];
    const query = new URLSearchParams({ limit: PAGE });
    if (filter.value) query.set('status', filter.value);
    if (after !== null) query.set('after', after);
    fill(table, h('p', { class: 'muted' }, 'Loading items…'));
    let page;
    try {
      page = await call(`/api/runs/${seg(runId)}/items?${query}`);
    } catch (error) {
      if (error.status === 410) { renderArchivedItems(); return; }
      fill(table, h('p', { class: 'form-error' }, `Cannot load the items: ${error.message}`));
      return;
    }
    const blocker = actionBlocker();
    fill(table, page.items.length === 0
      ? h('p', { class: 'muted' }, filter.value ? `No ${filter.value} items on this page of the scope${page.nextAfter != null ? ': try the next page' : ''}.` : 'No items.')
      : h('table', { class: 'table' },
        h('caption', { class: 'visually-hidden' }, 'Items of the run in scope order'),
        h('thead', {}, h('tr', {}, ['#', 'Item', 'Status', 'Attempt', 'Owner', 'Token', 'Effect', 'Last error', ''].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, page.items.map(({ seq, item }) => h('tr', {},
          h('td', { 'data-label': '#' }, seq),
          h('th', { scope: 'row', 'data-label': 'Item' }, h('a', { href: `#/items/${encodeURIComponent(item.itemId)}` }, item.itemId.split('/').slice(2).join('/'))),
          h('td', { 'data-label': 'Status' }, h('span', { class: `badge status-${item.status.toLowerCase()}` }, item.status)),
          h('td', { 'data-label': 'Attempt' }, `${item.attempt}/${item.maxAttempts}`),
          h('td', { 'data-label': 'Owner' }, item.owner || '–'),
          h('td', { 'data-label': 'Token' }, item.token),
          h('td', { 'data-label': 'Effect' }, item.effect),
          h('td', { 'data-label': 'Last error', class: 'wrap' }, item.lastError || '–'),
          h('td', { 'data-label': '' }, item.status === 'FAILED' || item.status === 'QUARANTINED'
            ? h('button', { type: 'button', disabled: !!blocker, title: blocker || null, onclick: () => retry(item) }, 'Retry…')
            : null))))));
    fill(pager,
      h('button', { type: 'button', disabled: cursors.length === 1, onclick: () => { cursors = [null]; loadItems(); } }, 'First page'),
      h('button', { type: 'button', disabled: cursors.length === 1, onclick: () => { cursors.pop(); loadItems(); } }, 'Previous page'),
      h('button', { type: 'button', disabled: page.nextAfter == null, onclick: () => { cursors.push(page.nextAfter); loadItems(); } }, 'Next page'),
      h('span', { class: 'muted' }, ` page ${cursors.length}`));
  }

  async function retry(item) {
    const ok = await confirmAction({
      title: `Retry item ${item.itemId}`,
      body: [
        `This moves the ${item.status} item back to PENDING with a new budget of attempts (it used ${item.attempt} of ${item.maxAttempts}; last error: ${item.lastError || 'none'}).`,
        run.state === 'RUNNING' ? 'The run is RUNNING: its dispatcher hands the item out again.' : `The run has ended ${run.state}: the item waits for a resume.`,
      ],
      confirm: 'Retry item',
    });
    if (ok && (await act(`Retry ${item.itemId}`, () => call(`/api/items/${seg(item.itemId)}/retry`, { method: 'POST' })))) loadItems();
  }

  // --- live ----------------------------------------------------------------------------------------
  function update() {
    fleet.poll(run.state === 'RUNNING');
    renderHead();
    renderActions();
    renderTiles();
    renderChart();
    renderTimeline();
    verification.update(run);
  }

  function append(sample) {
    if (!sample) return;
    if (hist.at.length && hist.at[hist.at.length - 1] >= sample.at) return;
    for (const c of COLUMNS) hist[c].push(sample[c]);
    fleet.record(sample.at);
  }

  function connect() {
    if (controller) controller.abort();
    controller = new AbortController();
    follow(`/api/runs/${seg(runId)}/events`, {
      signal: controller.signal,
      finished: () => run && run.state !== 'RUNNING',
      onEvent: (name, data) => {
        if (name === 'snapshot') {
          hist = Object.fromEntries(COLUMNS.map((c) => [c, data.history[c] || []]));
          fleet.keep(hist.at);
        } else if (name === 'progress') {
          append(data.sample);
        } else {
          return;
        }
        const stateChanged = run !== null && (run.state !== data.run.state || !run.archive !== !data.run.archive);
        run = data.run;
        update();
        if (stateChanged) loadItems(); // the run ended or resumed: the items moved
      },
      onState: (state, detail) => {
        const text = { live: '● live', ended: 'run ended: not live', reconnecting: `reconnecting… ${detail && detail.message ? `(${detail.message})` : ''}` };
        live.textContent = text[state] || state;
        live.className = `live live-${state}`;
      },
    }).catch((error) => fill(head, h('p', { class: 'form-error' }, error.status === 404 ? `There is no run ${runId}.` : `Cannot follow the run: ${error.message}`)));
  }

  const resize = new ResizeObserver(() => { if (run) renderChart(); });
  resize.observe(chartBox);
  connect();
  loadItems();
  return () => { if (controller) controller.abort(); resize.disconnect(); verification.dispose(); };
}
