// The fleet's signal as the dashboard shows it (GET /api/fleet; docs/design.md, "The fleet's
// rule"): the nodes dispatching now against the nodes wanted and why, on the cluster page; a run's
// own need in flight on its page.
import { h, fill } from './dom.js';
import { LEVEL_MARK, num } from './format.js';

// Only AT_RISK asks for the operator's eye (more nodes would help a deadline), marked like a run at
// risk of its deadline; THROTTLED says more nodes would not help, IDLE and ON_TRACK need nothing.
const LEVEL = { AT_RISK: 'risk', THROTTLED: 'none', ON_TRACK: 'ok', IDLE: 'none' };

/** The reason in words, with the outlook's colour and mark: colour is never the only signal. */
export function reasonBadge(reason) {
  const level = LEVEL[reason] || 'none';
  return h('span', { class: `outlook level-${level}`, 'data-reason': reason },
    h('span', { 'aria-hidden': 'true', class: 'mark' }, LEVEL_MARK[level]), ` ${reason.replace('_', ' ')}`);
}

/** Fills the cluster page's fleet tile from an answer of GET /api/fleet, or says why there is none. */
export function renderFleetTile(tile, fleet, error) {
  const label = h('span', { class: 'tile-label' }, 'Nodes now / wanted');
  if (!fleet) {
    fill(tile, label, h('span', { class: 'tile-value' }, '–'), h('span', { class: 'tile-detail' }, `Cannot read the fleet: ${error ? error.message : 'no answer'}`));
    return;
  }
  fill(tile, label,
    h('span', { class: 'tile-value' }, `${num(fleet.nodes)} / ${num(fleet.wanted)} `, reasonBadge(fleet.reason)),
    h('span', { class: 'tile-detail fleet-detail' }, fleet.detail),
    h('span', { class: 'tile-detail' },
      `kept between ${num(fleet.minNodes)} and ${num(fleet.maxNodes)} nodes of ${num(fleet.workersPerNode)} workers each`),
    fleet.runs.length
      ? h('ul', { class: 'tile-detail fleet-runs' }, fleet.runs.map((need) => h('li', {},
        h('a', { href: `#/runs/${encodeURIComponent(need.runId)}` }, need.runId),
        `: ${num(need.inFlight)} in flight, ${need.reason.replace('_', ' ')}: ${need.detail}`)))
      : null);
}

/** The run page's tile of what the run needs of the fleet (its view's fleet; null unless RUNNING). */
export function needTile(need, running) {
  return h('div', { class: 'tile', id: 'fleet-need' },
    h('span', { class: 'tile-label' }, 'Fleet need'),
    h('span', { class: 'tile-value' }, need ? `${num(need.inFlight)} in flight` : '–'),
    h('span', { class: 'tile-detail' }, need ? [reasonBadge(need.reason), ' ', need.detail]
        : running ? 'not yet computed' : 'nothing: the run is not running'));
}
