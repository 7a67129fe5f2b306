// The cluster: members and their status, the coordinator's host (oldest Up member), shards and
// live items per node, each node's worker pool use, and the fleet's nodes now against the nodes
// wanted. Read every 2 s from GET /api/cluster and GET /api/fleet.
import { call } from './api.js';
import { fill, h } from './dom.js';
import { renderFleetTile } from './fleet.js';
import { num, percent } from './format.js';

function poolBar(workers) {
  if (workers.capacity === null || workers.capacity === undefined) return h('span', { class: 'muted' }, 'no worker pool (coordinates only), or no answer');
  const bar = h('div', { class: 'bar', role: 'meter', 'aria-valuemin': 0, 'aria-valuemax': workers.capacity, 'aria-valuenow': workers.inFlight, 'aria-label': 'worker pool use' },
    h('span', { class: 'seg leased' }));
  bar.firstChild.style.width = `${percent(workers.inFlight, workers.capacity)}%`;
  return h('div', { class: 'progress' }, bar, h('span', { class: 'progress-text' }, `${num(workers.inFlight)} in flight of ${num(workers.capacity)}`));
}

// Pekko gives every member its data centre as a role (dc-default): not news to an operator
const roles = (m) => m.roles.filter((r) => !r.startsWith('dc-'));

export function clusterView(main) {
  const summary = h('p', { class: 'cluster-summary', role: 'status' }, 'Loading the cluster…');
  const body = h('div');
  const fleetTile = h('div', { class: 'tile tile-wide', id: 'fleet-tile' }, h('span', { class: 'tile-label' }, 'Nodes now / wanted'), h('span', { class: 'tile-value' }, '…'));
  fill(main, h('div', { class: 'page-head' }, h('h1', {}, 'Cluster')), summary,
    h('section', { class: 'tiles', 'aria-label': 'Fleet' }, fleetTile), body);

  // its own read: a node that cannot answer the fleet still shows its members, and the reverse
  async function loadFleet() {
    try {
      renderFleetTile(fleetTile, await call('/api/fleet'));
    } catch (error) {
      renderFleetTile(fleetTile, null, error);
    }
  }

  async function load() {
    loadFleet();
    let c;
    try {
      c = await call('/api/cluster');
    } catch (error) {
      summary.textContent = `Cannot read the cluster: ${error.message}`;
      return;
    }
    const up = c.members.filter((m) => m.status === 'Up').length;
    const unreachable = c.members.filter((m) => !m.reachable).length;
    summary.textContent = `${c.members.length} member${c.members.length === 1 ? '' : 's'}, ${up} Up${unreachable ? `, ${unreachable} UNREACHABLE` : ''}. Run coordinator on ${c.coordinator || 'no member (none is Up)'}.${c.shardStatsAnswered ? '' : ' Shard figures did not answer in time.'}`;
    fill(body, h('table', { class: 'table cluster-table' },
      h('caption', { class: 'visually-hidden' }, 'Cluster members'),
      h('thead', {}, h('tr', {}, ['Member', 'Status', 'Hosts', 'Shards', 'Live items', 'Worker pool'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, c.members.map((m) => h('tr', { 'data-member': m.address },
        h('th', { scope: 'row', 'data-label': 'Member' }, m.address, m.self ? h('span', { class: 'badge self' }, 'this node') : null),
        h('td', { 'data-label': 'Status' }, h('span', { class: `badge member-${m.status.toLowerCase()}` }, m.status), m.reachable ? null : h('span', { class: 'badge unreachable' }, 'UNREACHABLE')),
        h('td', { 'data-label': 'Hosts' }, m.coordinator ? h('span', { class: 'badge coordinator' }, 'run coordinator') : '–', roles(m).length ? ` roles: ${roles(m).join(', ')}` : ''),
        h('td', { 'data-label': 'Shards' }, num(m.shards)),
        h('td', { 'data-label': 'Live items' }, num(m.items)),
        h('td', { 'data-label': 'Worker pool' }, poolBar(m.workers)))))));
  }

  load();
  const timer = setInterval(load, 2000);
  return () => clearInterval(timer);
}
