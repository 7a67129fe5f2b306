// The node's HTTP API as the dashboard uses it: every call carries the token (if any) in the
// Authorization header, never in a URL or a cookie; live feeds are read with fetch() streams
// because EventSource cannot send that header.

const TOKEN_KEY = 'fencekeeper.token';

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

/** An API refusal: the HTTP status and the error envelope {error, message}. */
export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.message) || `HTTP ${status}`);
    this.status = status;
    this.code = (body && body.error) || `http_${status}`;
    this.body = body || {};
  }
}

// the app registers what to do when the node refuses the token (ask for it) or the role (read-only)
const listeners = { unauthorized: () => {}, forbidden: () => {} };
export function onAuthProblem(kind, listener) {
  listeners[kind] = listener;
}

function headers(extra) {
  const h = Object.assign({ Accept: 'application/json' }, extra);
  const t = token();
  if (t) h.Authorization = `Bearer ${t}`;
  return h;
}

async function refusal(response) {
  let body;
  try {
    body = await response.json();
  } catch (e) {
    body = { error: `http_${response.status}`, message: response.statusText || `HTTP ${response.status}` };
  }
  const error = new ApiError(response.status, body);
  if (response.status === 401) listeners.unauthorized(error);
  if (response.status === 403) listeners.forbidden(error);
  return error;
}

/** One JSON call; resolves to the body (null for 204), rejects with ApiError. */
export async function call(path, { method = 'GET', body, signal } = {}) {
  // every change says application/json, with or without a body: the node refuses any other type
  // for a change (the browser's guard against cross-site requests)
  const init = { method, signal, cache: 'no-store', headers: headers(method === 'GET' ? {} : { 'Content-Type': 'application/json' }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(path, init);
  if (!response.ok) throw await refusal(response);
  call.lastDate = Date.parse(response.headers.get('Date') || '') || Date.now();
  return response.status === 204 ? null : response.json();
}

/**
 * Every page of a paged read that answers {events, next}: an item's audit is read a page at a
 * time by the node, however long a flood of rejected commands made it.
 */
export async function callAllPages(path, { signal } = {}) {
  const first = await call(`${path}?limit=1000`, { signal });
  const events = [...first.events];
  let next = first.next;
  while (next !== undefined && next !== null) {
    const page = await call(`${path}?limit=1000&after=${next}`, { signal });
    events.push(...page.events);
    next = page.next;
  }
  return Object.assign(first, { events, next: undefined });
}

/** Percent-encodes an id (which contains '/') as one path segment. */
export const seg = (id) => encodeURIComponent(id);

/** Downloads a file through fetch (so the token goes in the header) and saves it. */
export async function download(path, filename) {
  const response = await fetch(path, { headers: headers({ Accept: '*/*' }), cache: 'no-store' });
  if (!response.ok) throw await refusal(response);
  save(await response.blob(), filename);
}

export function save(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

/**
 * Follows a server-sent event stream with fetch and a ReadableStream, reconnecting with back-off
 * (1 s doubling to 15 s) until `signal` aborts or `finished()` says the stream has nothing more to
 * tell. `onEvent(name, data)` gets each event's parsed JSON; `onState(state, detail)` gets 'live',
 * 'reconnecting' or 'ended'.
 */
export async function follow(path, { onEvent, onState = () => {}, signal, finished = () => false }) {
  let backoff = 1000;
  while (!signal.aborted) {
    try {
      const response = await fetch(path, { headers: headers({ Accept: 'text/event-stream' }), signal, cache: 'no-store' });
      if (!response.ok) throw await refusal(response);
      onState('live');
      backoff = 1000;
      await readEvents(response.body, onEvent);
      if (finished()) {
        onState('ended');
        return;
      }
      onState('reconnecting', 'the stream ended');
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof ApiError && error.status === 404) {
        onState('ended', error);
        throw error;
      }
      onState('reconnecting', error);
    }
    await pause(backoff, signal);
    backoff = Math.min(backoff * 2, 15000);
  }
}

function pause(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
  });
}

/** The text/event-stream format: fields per line, an empty line ends an event, ':' a comment. */
async function readEvents(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let name = 'message';
  let data = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let newline;
    while ((newline = buffer.search(/\r?\n/)) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer[newline] === '\r' ? 2 : 1));
      if (line === '') {
        if (data.length) onEvent(name, JSON.parse(data.join('\n')));
        name = 'message';
        data = [];
      } else if (line.startsWith(':')) {
        // keep-alive comment
      } else {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const val = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') name = val;
        else if (field === 'data') data.push(val);
      }
    }
  }
}
