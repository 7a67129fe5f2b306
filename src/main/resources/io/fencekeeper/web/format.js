// Numbers, times and the deadline outlook: pure functions, the same on every page.

const pad = (n) => String(n).padStart(2, '0');

export function num(n) {
  return n === null || n === undefined ? '–' : Number(n).toLocaleString('en-US');
}

export function rate(perSecond) {
  if (!perSecond) return '0/s';
  return `${perSecond >= 100 ? Math.round(perSecond) : perSecond.toFixed(1)}/s`;
}

/** 42s, 3m 05s, 1h 02m, 2d 3h */
export function duration(seconds) {
  if (seconds === null || seconds === undefined || Number.isNaN(seconds)) return '–';
  let s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${pad(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

/** Local time of day, with the date when it is not today; the title attribute gets UTC. */
export function time(iso, now = new Date()) {
  if (!iso) return '–';
  const d = new Date(iso);
  const hms = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  const sameDay = d.toDateString() === now.toDateString();
  return sameDay ? hms : `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${hms}`;
}

export function utc(iso) {
  return iso ? new Date(iso).toISOString().replace('.000Z', 'Z') : '';
}

/** "in 12m 03s" or "4m 10s ago" relative to now. */
export function relative(iso, now = Date.now()) {
  if (!iso) return '';
  const seconds = (Date.parse(iso) - now) / 1000;
  return seconds >= 0 ? `in ${duration(seconds)}` : `${duration(-seconds)} ago`;
}

export const ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time';

/**
 * Will this run make its deadline? level: ok (green), risk (amber: the projected finish is within
 * 10% of the run's window before the deadline), late (red: projected or ended past it), none (grey:
 * cancelled or nothing to project). The label says it in words, colour is never the only signal.
 */
export function outlook(run, now = Date.now()) {
  const deadline = Date.parse(run.deadline);
  const created = Date.parse(run.createdAt);
  if (run.state !== 'RUNNING') {
    const ended = run.endedAt ? Date.parse(run.endedAt) : now;
    if (run.state === 'SUCCEEDED') {
      return ended <= deadline
        ? { level: 'ok', label: `Made it: finished ${duration((deadline - ended) / 1000)} before the deadline` }
        : { level: 'late', label: `Finished ${duration((ended - deadline) / 1000)} after the deadline` };
    }
    if (run.state === 'CANCELLED') return { level: 'none', label: 'Cancelled by an operator' };
    return { level: 'late', label: `Ended ${run.state}${run.endReason ? `: ${run.endReason}` : ''}` };
  }
  if (now >= deadline) return { level: 'late', label: 'Past the deadline: closing what is open' };
  const remaining = run.counts.pending + run.counts.leased;
  if (remaining === 0) return { level: 'ok', label: 'On track: finishing' };
  if (!run.projectedFinish) return { level: 'risk', label: 'No projection yet: nothing finished in the last seconds' };
  const projected = Date.parse(run.projectedFinish);
  const margin = deadline - projected;
  if (margin < 0) return { level: 'late', label: `Late: projected ${duration(-margin / 1000)} past the deadline` };
  const window = Math.max(1, deadline - created);
  if (margin < 0.1 * window) return { level: 'risk', label: `At risk: projected only ${duration(margin / 1000)} before the deadline` };
  return { level: 'ok', label: `On track: projected ${duration(margin / 1000)} before the deadline` };
}

export const LEVEL_MARK = { ok: '✓', risk: '!', late: '✕', none: '–' };

export function percent(part, total) {
  return total ? Math.floor((1000 * part) / total) / 10 : 0;
}
