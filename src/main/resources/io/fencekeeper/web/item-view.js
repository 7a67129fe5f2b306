// One item: its current lease with a live countdown, and its audit journal told as a story, one
// row per event: who claimed with which token, renewals, the effect and its provider reference,
// ambiguity and the lookup that resolved it, and every stale command that was rejected.
import { actionBlocker, act, confirmAction } from './app.js';
import { call, callAllPages, save, seg } from './api.js';
import { fill, h } from './dom.js';
import { duration, time, utc } from './format.js';

/** FAILED and QUARANTINED items come back only by an operator's retry. */
const retryable = (item) => item.status === 'FAILED' || item.status === 'QUARANTINED';

const at = (iso) => h('time', { datetime: iso, title: utc(iso) }, time(iso));

function effectText(o) {
  return `Provider reference ${o.providerReference || '(none)'}${o.detail ? ` – ${o.detail}` : ''}.`;
}

function resolution(o) {
  return o.kind === 'FOUND_BY_LOOKUP'
    ? ' Resolves the ambiguity: the lookup found the earlier effect at the provider, nothing was sent twice.'
    : ' Resolves the ambiguity: the lookup found nothing, so the effect was applied once now.';
}

/**
 * The audit events as sentences. `ambiguous` carries across rows: an effect recorded after an
 * ambiguous mark or a takeover is the reconciliation (lookup) that resolved it.
 */
export function story(events) {
  let ambiguous = false;
  let recorded = false;
  return events.map((e) => {
    const f = e.fields || {};
    let kind = 'info';
    let title = e.type;
    let text = '';
    switch (e.type) {
      case 'LeaseGranted':
        kind = 'claim';
        title = `Claimed by ${f.workerId} with token ${f.token}`;
        text = `Attempt ${f.attempt} of ${f.maxAttempts}; lease until ${time(f.leaseExpiresAt)}.`;
        if (f.previousOwner && recorded) {
          kind = 'takeover';
          text += ` Took over from ${f.previousOwner}, whose lease expired before it completed the item; the effect was already recorded, so nothing is sent to the provider again.`;
        } else if (f.previousOwner) {
          kind = 'takeover';
          text += ` Took over from ${f.previousOwner}, whose lease expired without an outcome: the effect is ambiguous until a lookup at the provider.`;
          ambiguous = true;
        }
        break;
      case 'LeaseRenewed':
        title = `Token ${f.token} renewed the lease`;
        text = `Now held until ${time(f.leaseExpiresAt)}.`;
        break;
      case 'EffectRecorded': {
        const o = f.outcome || {};
        kind = 'effect';
        recorded = true;
        title = `Token ${f.token} recorded the effect: ${o.kind}`;
        text = effectText(o);
        if (ambiguous) {
          text += resolution(o);
          kind = 'resolved';
          ambiguous = false;
        }
        break;
      }
      case 'MarkedAmbiguous':
        kind = 'ambiguous';
        title = `Token ${f.token} marked the effect AMBIGUOUS`;
        text = `${f.reason}. The next holder must look it up at the provider before sending anything.`;
        ambiguous = true;
        break;
      case 'ItemCompleted':
        kind = 'done';
        title = `Token ${f.token} completed the item: DONE`;
        if (f.outcome) {
          // the worker's last step: the effect and the completion are one event
          const o = f.outcome;
          title = `Token ${f.token} recorded the effect (${o.kind}) and completed the item: DONE`;
          text = effectText(o);
          if (ambiguous) {
            text += resolution(o);
            ambiguous = false;
          }
        }
        if (f.throttles) text += ` The provider throttled this attempt ${f.throttles} times.`;
        break;
      case 'AttemptFailed':
        kind = 'failed';
        title = `Token ${f.token} failed${f.exhausted ? ': attempts used up, FAILED' : f.retryable ? ', will retry' : ': not retryable, FAILED'}`;
        text = `${f.error}${f.retryAt ? ` Retry from ${time(f.retryAt)}.` : ''}`;
        break;
      case 'LeaseReleased':
        title = `Token ${f.token} released the lease`;
        text = 'Back to PENDING without an error.';
        break;
      case 'ItemClosed':
        kind = 'closed';
        title = `Closed: ${f.reason}`;
        text = `Token moved to ${f.newToken}, fencing off any holder${f.abandonedOwner ? ` (${f.abandonedOwner} held a live lease: its effect is ambiguous)` : ''}.`;
        if (f.abandonedOwner) ambiguous = true;
        break;
      case 'ItemReopened':
        title = `Reopened from ${f.from}`;
        text = 'PENDING again (resume).';
        break;
      case 'RetryRequested':
        title = 'An operator asked for a retry';
        text = 'Back to PENDING, with a new budget of attempts.';
        break;
      case 'ItemQuarantined':
        kind = 'failed';
        title = `QUARANTINED: its holders were lost ${(f.lostOwners || []).length} times in a row`;
        text = `Lost holders: ${(f.lostOwners || []).join(', ')}. Token moved to ${f.newToken}. Out of work until an operator retries it: the item may crash whoever takes it.`;
        ambiguous = true;
        break;
      case 'LateHolderHeard':
        title = `${f.workerId} (token ${f.token}) spoke after its lease lapsed: paused or cut off, not lost`;
        text = f.quarantineLifted
          ? 'It does not count as a lost holder, so the item is not poison after all: quarantine lifted, PENDING again.'
          : 'It does not count as a lost holder: the item did not kill its node.';
        break;
      case 'HolderNodeAlive':
        title = `${f.workerId} (token ${f.token}) went silent, but its node was still a member when its lease was taken over`;
        text = 'It does not count as a lost holder: the item did not kill its node.';
        break;
      case 'AttemptsExhausted':
        kind = 'failed';
        title = 'Attempts used up: FAILED';
        text = `${f.reason}. Token moved to ${f.newToken}.`;
        break;
      case 'StaleCommandRejected':
        kind = 'stale';
        title = `REJECTED stale ${f.command}: presented token ${f.presentedToken}, current token ${f.currentToken}`;
        text = `${f.reason}. Nothing changed.`;
        break;
      default:
        text = JSON.stringify(f);
    }
    return { seq: e.sequenceNr, at: e.at, type: e.type, kind, title, text };
  });
}

export function itemView(main, itemId) {
  const runId = itemId.split('/').slice(0, 2).join('/');
  const state = h('section', { class: 'panel item-state', 'aria-labelledby': 'state-title' });
  const lease = h('p', { class: 'lease', id: 'lease' });
  const actions = h('div', { class: 'buttons' });
  const journal = h('ol', { class: 'story', id: 'story' });
  fill(main,
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: '#/' }, 'Runs'), ' / ', h('a', { href: `#/runs/${encodeURIComponent(runId)}` }, runId), ' / ', itemId.split('/').slice(2).join('/')),
    h('div', { class: 'page-head' }, h('h1', {}, 'Item ', h('span', { class: 'id' }, itemId))),
    state, actions,
    h('section', { class: 'panel', 'aria-labelledby': 'story-title' }, h('h2', { id: 'story-title' }, 'What happened, attempt by attempt'), journal));

  let item = null;
  let audit = null;
  let skew = 0; // server clock minus this browser's, from the Date header
  let poll = null;
  let actionsKey = '';

  function renderState() {
    const o = item.effectOutcome;
    const rows = [
      ['Status', h('span', { class: `badge status-${item.status.toLowerCase()}` }, item.status)],
      ['Owner', item.owner || '–'],
      ['Fencing token', String(item.token)],
      ['Attempt', `${item.attempt} of ${item.maxAttempts}`],
      ['Effect', item.effect + (o ? ` (${o.kind})` : '')],
      ['Provider reference', (o && o.providerReference) || '–'],
      ['Idempotency key', h('code', {}, item.idempotencyKey)],
      item.lastError ? ['Last error', item.lastError] : null,
      item.closedReason ? ['Closed because', item.closedReason] : null,
      item.retryAt ? ['Retry from', at(item.retryAt)] : null,
    ].filter(Boolean);
    fill(state, h('h2', { id: 'state-title' }, 'Now'), lease, h('dl', { class: 'facts' }, rows.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])));
    renderLease();
    const blocker = actionBlocker();
    const key = `${item.status}|${blocker}`;
    if (key !== actionsKey) {
      actionsKey = key;
      fill(actions,
        retryable(item) ? h('button', { type: 'button', id: 'retry-item', disabled: !!blocker, 'aria-describedby': 'item-note', onclick: retry }, 'Retry item…') : null,
        h('button', { type: 'button', id: 'audit-json', onclick: () => save(new Blob([JSON.stringify(audit, null, 2)], { type: 'application/json' }), `${itemId.replaceAll('/', '_')}-audit.json`) }, 'Download the audit (JSON)'),
        h('span', { id: 'item-note', class: 'note' }, retryable(item) ? blocker : ''));
    }
  }

  /** The live countdown of the current lease, from the node's clock. */
  function renderLease() {
    if (!item || item.status !== 'LEASED' || !item.leaseExpiresAt) {
      lease.textContent = item && item.status === 'LEASED' ? '' : 'No lease is held.';
      lease.className = 'lease';
      return;
    }
    const left = (Date.parse(item.leaseExpiresAt) - (Date.now() + skew)) / 1000;
    lease.className = `lease ${left > 0 ? 'lease-live' : 'lease-expired'}`;
    lease.textContent = left > 0
      ? `Lease held by ${item.owner} with token ${item.token}: expires in ${duration(left)} (${time(item.leaseExpiresAt)}).`
      : `The lease of ${item.owner} (token ${item.token}) expired ${duration(-left)} ago: the next claim takes over.`;
  }

  function renderStory() {
    fill(journal, story(audit.events).map((row) => h('li', { class: `event event-${row.kind}`, 'data-type': row.type },
      h('span', { class: 'seq', 'aria-label': `event ${row.seq}` }, `#${row.seq}`),
      at(row.at),
      h('strong', {}, row.title),
      row.text ? h('span', { class: 'text' }, row.text) : null)));
  }

  async function load() {
    try {
      const sent = Date.now();
      [item, audit] = await Promise.all([call(`/api/items/${seg(itemId)}`), callAllPages(`/api/items/${seg(itemId)}/audit`)]);
      skew = call.lastDate - (sent + Date.now()) / 2;
      if (Math.abs(skew) < 1500) skew = 0; // the Date header has whole seconds: ignore noise
      renderState();
      renderStory();
    } catch (error) {
      fill(state, h('p', { class: 'form-error' }, error.status === 404 ? `There is no item ${itemId}.` : `Cannot load the item: ${error.message}`));
    }
  }

  async function retry() {
    const ok = await confirmAction({
      title: `Retry item ${itemId}`,
      body: [`This moves the ${item.status} item back to PENDING with a new budget of ${item.maxAttempts} attempts (it used ${item.attempt}). If its run is RUNNING, the dispatcher hands it out again; otherwise it waits for a resume.`,
        item.status === 'QUARANTINED' ? `Its last holders were lost (${item.lastError}): fix the cause first, or it takes down more nodes.` : null].filter(Boolean),
      confirm: 'Retry item',
    });
    if (ok && (await act(`Retry ${itemId}`, () => call(`/api/items/${seg(itemId)}/retry`, { method: 'POST' })))) load();
  }

  load();
  // an open item changes (claims, renewals); a finished one does not, but stays cheap to re-read
  poll = setInterval(() => { if (!item || ['PENDING', 'LEASED'].includes(item.status)) load(); }, 2000);
  const tick = setInterval(renderLease, 1000);
  return () => { clearInterval(poll); clearInterval(tick); };
}
