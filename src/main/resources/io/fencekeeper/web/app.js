// The dashboard shell: hash routes (#/, #/runs/{id}, #/items/{id}, #/cluster), the token asked
// once per browser session, confirmation dialogs and notices. Each view renders into <main> and
// returns a function that stops its streams and timers when the operator navigates away.
import { ApiError, call, onAuthProblem, setToken, token } from './api.js';
import { fill, h } from './dom.js';
import { runsView } from './runs-view.js';
import { runView } from './run-view.js';
import { itemView } from './item-view.js';
import { clusterView } from './cluster-view.js';

/** What this browser may do: role open | admin | read | none (no valid token) | unknown. */
export const session = { role: 'unknown', reason: '' };

/** Why actions are disabled, or '' when they are allowed (the node has the last word: 401/403). */
export function actionBlocker() {
  if (session.role === 'read') return session.reason || 'Read-only token: changing runs and items needs the admin token.';
  if (session.role === 'none') return 'No valid token: enter the admin token to act.';
  return '';
}

const main = document.getElementById('main');
const who = document.getElementById('who');
let stopView = () => {};

function renderWho() {
  const labels = {
    open: 'Open node (no token configured)',
    admin: 'Signed in with the admin token',
    read: 'Read-only token: actions disabled',
    none: 'No token: read-only view',
    unknown: 'Checking access…',
  };
  fill(who,
    h('span', { class: `role role-${session.role}`, 'data-role': session.role }, labels[session.role] || session.role),
    session.role !== 'open' ? h('button', { type: 'button', class: 'link', onclick: () => askToken('') }, token() ? 'Change token' : 'Enter token') : null,
    token() ? h('button', { type: 'button', class: 'link', onclick: () => { setToken(''); whoami().then(route); } }, 'Forget token') : null);
}

/** Asks the node what the stored token allows. */
async function whoami() {
  try {
    const me = await call('/api/whoami');
    session.role = me.role;
    session.reason = '';
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) session.role = 'none';
    else session.role = 'unknown'; // an older node without /api/whoami: actions tell by 401/403
  }
  renderWho();
  return session.role;
}

// --- the token dialog ----------------------------------------------------------------------------
const tokenDialog = document.getElementById('token-dialog');
const tokenForm = document.getElementById('token-form');
const tokenInput = document.getElementById('token-input');
const tokenError = document.getElementById('token-error');
const tokenWhy = document.getElementById('token-why');

function askToken(why) {
  if (tokenDialog.open) return;
  tokenWhy.textContent = why || 'This node requires a bearer token. It is kept in this browser tab only (sessionStorage), never in a URL or cookie.';
  tokenError.textContent = '';
  tokenInput.value = '';
  tokenDialog.showModal();
  tokenInput.focus();
}

tokenForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  if (event.submitter && event.submitter.value === 'cancel') {
    tokenDialog.close();
    return;
  }
  setToken(tokenInput.value.trim());
  const role = await whoami();
  if (role === 'none') {
    tokenError.textContent = 'The node did not accept this token.';
    setToken('');
    renderWho();
    tokenInput.select();
    return;
  }
  tokenDialog.close();
  route();
});

onAuthProblem('unauthorized', () => {
  if (session.role !== 'none') {
    session.role = 'none';
    renderWho();
  }
  askToken(token() ? 'The node refused the stored token. Enter a valid token.' : '');
});

onAuthProblem('forbidden', (error) => {
  session.role = 'read';
  session.reason = `The node refused the action (403): ${error.message}`;
  renderWho();
  route();
});

// --- confirmation and notices --------------------------------------------------------------------
const confirmDialog = document.getElementById('confirm-dialog');

/**
 * Says exactly what an action will do and waits for the operator: resolves true on confirm. `body`
 * is a list of paragraphs and elements (an input for the new deadline, say).
 */
export function confirmAction({ title, body, confirm, danger = false, validate = () => '' }) {
  return new Promise((resolve) => {
    const problem = h('p', { class: 'form-error', role: 'alert' });
    const ok = h('button', { type: 'submit', value: 'ok', class: danger ? 'danger' : 'primary' }, confirm);
    const form = h('form', { method: 'dialog' },
      h('h2', { id: 'confirm-title' }, title),
      body.map((part) => (typeof part === 'string' ? h('p', {}, part) : part)),
      problem,
      h('div', { class: 'dialog-actions' },
        h('button', { type: 'submit', value: 'cancel' }, 'Keep as is'), ok));
    form.addEventListener('submit', (event) => {
      if (event.submitter && event.submitter.value === 'ok') {
        const why = validate();
        if (why) {
          event.preventDefault();
          problem.textContent = why;
          return;
        }
      }
      confirmDialog.returnValue = event.submitter ? event.submitter.value : 'cancel';
    });
    fill(confirmDialog, form);
    confirmDialog.setAttribute('aria-labelledby', 'confirm-title');
    confirmDialog.onclose = () => resolve(confirmDialog.returnValue === 'ok');
    confirmDialog.returnValue = 'cancel';
    confirmDialog.showModal();
    const first = form.querySelector('input, select') || form.querySelector('button[value=cancel]');
    first.focus();
  });
}

const toastBox = document.getElementById('toast');
let toastTimer;
export function toast(message, kind = 'info') {
  fill(toastBox, h('p', { class: `toast toast-${kind}` }, message));
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => fill(toastBox), 8000);
}

/** Runs a mutation and tells the operator how it went; 401/403 are handled by the shell. */
export async function act(label, run) {
  try {
    const result = await run();
    toast(`${label}: done.`, 'ok');
    return result;
  } catch (error) {
    toast(`${label} failed: ${error.message}`, 'error');
    return null;
  }
}

// --- routing -------------------------------------------------------------------------------------
function parse(hash) {
  const path = hash.replace(/^#/, '') || '/';
  let m;
  if (path === '/' || path === '/runs') return { view: runsView, nav: 'runs', title: 'Runs' };
  if ((m = path.match(/^\/runs\/([^/]+)$/))) return { view: runView, nav: 'runs', param: decodeURIComponent(m[1]), title: 'Run' };
  if ((m = path.match(/^\/items\/([^/]+)$/))) return { view: itemView, nav: 'runs', param: decodeURIComponent(m[1]), title: 'Item' };
  if (path === '/cluster') return { view: clusterView, nav: 'cluster', title: 'Cluster' };
  return null;
}

function route() {
  if (location.hash && !location.hash.startsWith('#/')) return; // an in-page anchor
  stopView();
  stopView = () => {};
  const target = parse(location.hash);
  for (const link of document.querySelectorAll('[data-nav]')) {
    if (target && link.dataset.nav === target.nav) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  if (!target) {
    fill(main, h('h1', {}, 'Not found'), h('p', {}, 'No such page. ', h('a', { href: '#/' }, 'Back to the runs')));
    return;
  }
  document.title = `${target.param ? `${target.param} – ` : ''}${target.title} – Fencekeeper`;
  const stop = target.view(main, target.param);
  stopView = typeof stop === 'function' ? stop : () => {};
}

// the skip link focuses the content instead of changing the route
document.querySelector('.skip').addEventListener('click', (event) => {
  event.preventDefault();
  main.focus();
});
window.addEventListener('hashchange', () => {
  route();
  main.focus({ preventScroll: true });
});
// A page left for another may stay in the browser's back/forward cache, and its live streams with
// it, for about a minute: six of them hold every connection the browser opens to the node, and the
// node's stream slots (8 per address). Leaving stops the view; coming back renders it anew.
window.addEventListener('pagehide', () => {
  stopView();
  stopView = () => {};
});
window.addEventListener('pageshow', (event) => {
  if (event.persisted) route();
});

renderWho();
whoami().then((role) => {
  if (role === 'none') askToken('');
  route();
});
