// A run's verification against its provider (docs/verification.md): a tile with the verdict, a
// panel with the counts per outcome and the first findings (both sides of each), the action that
// starts one, and the findings as CSV or JSON lines. Read from GET .../verifications/latest, again
// every two seconds while one runs.
import { act, actionBlocker, confirmAction } from './app.js';
import { call, download, seg } from './api.js';
import { fill, h } from './dom.js';
import { num, percent, time, utc } from './format.js';

const VERDICT_CLASS = { AGREE: 'state-succeeded', DISCREPANCIES: 'state-failed', INCOMPLETE: 'state-partial', RUNNING: 'state-running' };
const OUTCOMES = [
  ['agree', 'agree'],
  ['missing', 'missing'],
  ['different', 'different'],
  ['unexpectedEffect', 'unexpected effect'],
  ['resolvedApplied', 'resolved: applied'],
  ['resolvedNone', 'resolved: none'],
];

function rowsText(v) {
  return v.sample ? `a sample of ${num(v.sample)} of ${num(v.population)} items (seed ${v.seed})` : `every item (${num(v.toCheck)})`;
}

export function verificationPanel(runId) {
  let run = null;
  let latest = null;
  let problem = '';
  let timer = null;
  let actionsKey = '';
  const path = `/api/runs/${seg(runId)}`;
  const tile = h('div', { class: 'tile', id: 'verification-tile' });
  const summary = h('div', { class: 'verification-summary' });
  const actions = h('div', { class: 'verification-actions' });
  const table = h('div', { class: 'finding-table', id: 'verification-findings' });
  const section = h('section', { class: 'panel', id: 'verification', 'aria-labelledby': 'verification-title' },
    h('h2', { id: 'verification-title' }, 'Verification against the provider'),
    summary, actions, table);

  async function load() {
    clearTimeout(timer);
    try {
      latest = await call(`${path}/verifications/latest`);
      problem = '';
    } catch (error) {
      if (error.status === 404) latest = null;
      else problem = `Cannot read the verification: ${error.message}`;
    }
    render();
    if (latest && latest.verdict === 'RUNNING') timer = setTimeout(load, 2000);
  }

  function renderTile() {
    const value = latest ? h('span', { class: `badge ${VERDICT_CLASS[latest.verdict] || ''}` }, latest.verdict) : '–';
    let detail = 'not verified';
    if (latest && latest.verdict === 'RUNNING') detail = `${num(latest.checked)} of ${num(latest.toCheck)} checked`;
    else if (latest && latest.verdict === 'INCOMPLETE') detail = 'could not complete';
    else if (latest) detail = `${num(latest.discrepancies)} discrepancies in ${num(latest.checked)}${latest.sample ? ' sampled' : ''}`;
    fill(tile, h('span', { class: 'tile-label' }, 'Provider agrees?'), h('span', { class: 'tile-value' }, value), h('span', { class: 'tile-detail' }, detail));
  }

  function renderSummary() {
    if (problem) {
      fill(summary, h('p', { class: 'form-error' }, problem));
      return;
    }
    if (!latest) {
      fill(summary, h('p', { class: 'muted' }, run && run.state === 'RUNNING'
        ? 'Not verified: a run can be verified against its provider once it has ended.'
        : 'Not verified yet: ask the provider about every item of this run (or a sample) and compare with the journal.'));
      return;
    }
    const v = latest;
    const when = v.endedAt
      ? h('time', { datetime: v.endedAt, title: utc(v.endedAt) }, `ended ${time(v.endedAt)}`)
      : h('time', { datetime: v.requestedAt, title: utc(v.requestedAt) }, `requested ${time(v.requestedAt)}`);
    fill(summary,
      h('p', { class: 'verification-verdict' },
        h('span', { class: `badge ${VERDICT_CLASS[v.verdict] || ''}`, id: 'verification-verdict' }, v.verdict), ' ',
        `Verification ${v.number}${v.auto ? ' (when the run ended)' : ''} of ${rowsText(v)} at provider ${v.provider}: `,
        v.verdict === 'RUNNING' ? `${num(v.checked)} of ${num(v.toCheck)} checked (${percent(v.checked, v.toCheck)}%), ` : `${num(v.checked)} checked, `,
        when, '.'),
      v.reason ? h('p', { class: 'form-error', role: 'alert' }, `Could not complete: ${v.reason}`) : null,
      h('ul', { class: 'status-counts', id: 'verification-counts' }, OUTCOMES.map(([key, label]) => h('li', { class: `count-outcome-${key}` }, `${label}: ${num(v.tally[key])}`))));
  }

  function renderActions() {
    const blocker = actionBlocker();
    const ended = run && !['RUNNING', 'STAGING'].includes(run.state);
    const running = latest && latest.verdict === 'RUNNING';
    const key = `${blocker}|${ended}|${running}|${latest ? latest.number : 0}`;
    if (key === actionsKey) return; // re-rendering would take the keyboard focus away
    actionsKey = key;
    const file = `${runId.replace('/', '-')}-verification-${latest ? latest.number : 0}`;
    fill(actions,
      h('div', { class: 'buttons' },
        h('button', { type: 'button', id: 'verify-run', disabled: !!blocker || !ended || running, 'aria-describedby': 'verify-note', onclick: start }, 'Verify against the provider…'),
        latest ? h('button', { type: 'button', id: 'findings-csv', onclick: () => exportAs('csv', file) }, 'Findings (CSV)') : null,
        latest ? h('button', { type: 'button', id: 'findings-jsonl', onclick: () => exportAs('jsonl', file) }, 'Findings (JSON lines)') : null),
      h('p', { id: 'verify-note', class: 'note' }, blocker
        || (!ended ? 'A run can be verified once it has ended.'
          : running ? 'A verification of this run is under way.'
            : 'It looks every item up at the provider at low priority, under the provider\'s budget.')));
  }

  async function exportAs(format, file) {
    try {
      await download(`${path}/verifications/${latest.number}/findings?format=${format}`, `${file}.${format}`);
    } catch (error) {
      fill(actions.querySelector('.note'), `The findings could not be downloaded: ${error.message}`);
    }
  }

  async function start() {
    const all = h('input', { type: 'radio', name: 'verify-rows', id: 'verify-all', value: 'all', checked: true });
    const some = h('input', { type: 'radio', name: 'verify-rows', id: 'verify-sample', value: 'sample' });
    const size = h('input', { type: 'number', id: 'verify-sample-size', min: 1, max: run.counts.total, step: 1, value: Math.min(1000, run.counts.total) });
    const ok = await confirmAction({
      title: `Verify run ${runId}`,
      body: [
        `This asks the provider about the idempotency key of every item checked (GET /v1/cleanups/{key}) and compares the answer with the journal. It runs at low priority under the provider's budget and changes nothing, here or at the provider.`,
        h('div', { class: 'choice' }, all, h('label', { for: 'verify-all' }, `Every item (${num(run.counts.total)})`)),
        h('div', { class: 'choice' }, some, h('label', { for: 'verify-sample' }, 'A random sample of'), size),
      ],
      confirm: 'Verify',
      validate: () => (some.checked && !(Number(size.value) >= 1) ? 'The sample needs at least one item.' : ''),
    });
    if (!ok) return;
    const body = some.checked ? { sample: Number(size.value) } : {};
    const started = await act(`Verify ${runId}`, () => call(`${path}/verify`, { method: 'POST', body }));
    if (started) {
      latest = started;
      render();
      load();
    }
  }

  function renderTable() {
    if (!latest || !latest.findings.length) {
      fill(table, latest && latest.verdict !== 'RUNNING' ? h('p', { class: 'muted' }, 'No findings: every item checked agrees with the provider.') : null);
      return;
    }
    const more = latest.findingCount - latest.findings.length;
    fill(table,
      h('table', { class: 'table' },
        h('caption', { class: 'visually-hidden' }, 'Findings of the verification: the journal and the provider side by side'),
        h('thead', {}, h('tr', {}, ['Item', 'Finding', 'Journal', 'Provider', 'Idempotency key'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, latest.findings.map((f) => h('tr', { class: `finding finding-${f.outcome.toLowerCase()}` },
          h('th', { scope: 'row', 'data-label': 'Item' }, h('a', { href: `#/items/${encodeURIComponent(f.itemId)}` }, f.itemId.split('/').slice(2).join('/'))),
          h('td', { 'data-label': 'Finding' }, h('span', { class: `badge outcome-${f.outcome.toLowerCase()}` }, f.outcome.replace('_', ' '))),
          h('td', { 'data-label': 'Journal', class: 'wrap' }, `${f.journalStatus}, effect ${f.journalEffect}${f.journalOutcome ? ` (${f.journalOutcome})` : ''}${f.journalEffectId ? `: ${f.journalEffectId}` : ''}`),
          h('td', { 'data-label': 'Provider', class: 'wrap' }, f.providerAnswer === 'FOUND' ? `${f.providerEffectId}${f.providerAppliedAt ? `, applied ${time(f.providerAppliedAt)}` : ''}` : 'nothing under the key (404)'),
          h('td', { 'data-label': 'Idempotency key' }, h('code', {}, f.idempotencyKey)))))),
      more > 0 ? h('p', { class: 'note' }, `${num(more)} more in the export.`) : null);
  }

  function render() {
    renderTile();
    renderSummary();
    renderActions();
    renderTable();
  }

  load();
  return {
    tile,
    section,
    /** The run changed (or ended): the action follows its state. */
    update(next) {
      const ended = run && run.state !== next.state;
      run = next;
      if (ended) load();
      else render();
    },
    dispose() {
      clearTimeout(timer);
    },
  };
}
