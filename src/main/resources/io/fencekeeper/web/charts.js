// Hand-written SVG charts: a time chart with lines, step lines and bars, and its legend. Lines
// differ by dash pattern and marker as well as by colour, so the legend reads in greyscale too.
import { h } from './dom.js';

const BASE_PAD = { left: 46, right: 12, top: 14, bottom: 24 };
const pad2 = (n) => String(n).padStart(2, '0');
const STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600].map((s) => s * 1000);

function niceMax(v) {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

function clock(ms, withSeconds) {
  const d = new Date(ms);
  return `${pad2(d.getHours())}:${pad2(d.getMinutes())}${withSeconds ? `:${pad2(d.getSeconds())}` : ''}`;
}

/**
 * times: epoch ms; lines: [{name, values, cls, step}]; bars: {name, values, cls} drawn from the
 * bottom; marks: [{at, cls, label}] drawn as ticks on the top edge; right: {unit, lines} drawn
 * against an axis of their own on the right, in whole numbers (nodes beside items per second).
 */
export function timeChart({ width, height = 220, times, lines = [], bars = null, marks = [], right = null, label }) {
  const w = Math.max(280, Math.floor(width));
  // the right axis only once its lines have a value: until then the plot keeps its width
  const second = right && right.lines.some((line) => line.values.some((v) => v !== null && v !== undefined)) ? right : null;
  const PAD = second ? { ...BASE_PAD, right: 40 } : BASE_PAD;
  const plotW = w - PAD.left - PAD.right;
  const plotH = height - PAD.top - PAD.bottom;
  const svg = h('svg:svg', { class: 'chart', width: w, height, viewBox: `0 0 ${w} ${height}`, role: 'img', 'aria-label': label });
  if (times.length < 2) {
    svg.append(h('svg:text', { x: w / 2, y: height / 2, 'text-anchor': 'middle', class: 'chart-empty' }, 'Collecting samples: the chart starts after two seconds of data'));
    return svg;
  }
  const t0 = times[0];
  const t1 = times[times.length - 1];
  const span = Math.max(1, t1 - t0);
  const x = (t) => PAD.left + ((t - t0) / span) * plotW;
  let max = 0;
  for (const line of lines) for (const v of line.values) if (v !== null && v > max) max = v;
  if (bars) for (const v of bars.values) if (v > max) max = v;
  max = niceMax(max);
  const y = (v) => PAD.top + plotH - (v / max) * plotH;

  // grid and y axis
  for (let i = 0; i <= 4; i++) {
    const v = (max * i) / 4;
    const yy = y(v);
    svg.append(h('svg:line', { x1: PAD.left, x2: w - PAD.right, y1: yy, y2: yy, class: 'grid' }));
    svg.append(h('svg:text', { x: PAD.left - 6, y: yy + 4, 'text-anchor': 'end', class: 'tick' }, Number.isInteger(v) ? v : v.toFixed(1)));
  }
  // x axis: round times (every 1 s ... 2 h), about one label per 110 px
  const most = Math.max(2, Math.floor(plotW / 110));
  const step = STEPS.find((st) => span / st <= most) || STEPS[STEPS.length - 1];
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
    const tx = x(t);
    const anchor = tx - PAD.left < 30 ? 'start' : w - PAD.right - tx < 30 ? 'end' : 'middle';
    svg.append(h('svg:line', { x1: tx, x2: tx, y1: PAD.top + plotH, y2: PAD.top + plotH + 4, class: 'axis' }));
    svg.append(h('svg:text', { x: tx, y: height - 6, 'text-anchor': anchor, class: 'tick' }, clock(t, step < 60000)));
  }

  if (bars) {
    const bw = Math.min(10, Math.max(1, plotW / times.length - 1));
    const g = h('svg:g', { class: bars.cls });
    bars.values.forEach((v, i) => {
      if (v > 0) g.append(h('svg:rect', { x: x(times[i]) - bw / 2, y: y(v), width: bw, height: PAD.top + plotH - y(v) }));
    });
    svg.append(g);
  }
  for (const line of lines) drawLine(svg, line, times.map(x), y);
  if (second) drawRight(svg, second, times.map(x), { x: w - PAD.right, top: PAD.top, bottom: PAD.top + plotH });
  for (const mark of marks) {
    if (mark.at < t0 || mark.at > t1) continue;
    const mx = x(mark.at);
    svg.append(h('svg:path', { d: `M${mx - 5},${PAD.top - 10}L${mx + 5},${PAD.top - 10}L${mx},${PAD.top - 2}Z`, class: `mark ${mark.cls}` }, h('svg:title', {}, mark.label)));
  }
  svg.append(h('svg:line', { x1: PAD.left, x2: PAD.left, y1: PAD.top, y2: PAD.top + plotH, class: 'axis' }));
  svg.append(h('svg:line', { x1: PAD.left, x2: w - PAD.right, y1: PAD.top + plotH, y2: PAD.top + plotH, class: 'axis' }));
  return svg;
}

/** One series as a path; a gap where a value is missing. */
function drawLine(svg, line, xs, y) {
  let d = '';
  let prev = null;
  line.values.forEach((v, i) => {
    if (v === null || v === undefined) { prev = null; return; }
    const px = xs[i].toFixed(1);
    const py = y(v).toFixed(1);
    if (prev === null) d += `M${px},${py}`;
    else if (line.step) d += `H${px}V${py}`;
    else d += `L${px},${py}`;
    prev = v;
  });
  if (d) svg.append(h('svg:path', { d, class: `series ${line.cls}` }));
}

/** The right axis (its unit on top, whole-number ticks) and the lines drawn against it. */
function drawRight(svg, right, xs, edge) {
  let top = 0;
  for (const line of right.lines) for (const v of line.values) if (v !== null && v !== undefined && v > top) top = v;
  // four steps of a whole number each: a count of nodes has no halves
  const max = Math.max(4, 4 * Math.ceil(top / 4));
  const y = (v) => edge.bottom - (v / max) * (edge.bottom - edge.top);
  for (let i = 0; i <= 4; i++) {
    const v = (max * i) / 4;
    svg.append(h('svg:text', { x: edge.x + 6, y: y(v) + 4, 'text-anchor': 'start', class: 'tick' }, v));
  }
  svg.append(h('svg:text', { x: edge.x + 4, y: edge.top - 4, 'text-anchor': 'start', class: 'tick axis-unit' }, right.unit));
  svg.append(h('svg:line', { x1: edge.x, x2: edge.x, y1: edge.top, y2: edge.bottom, class: 'axis' }));
  for (const line of right.lines) drawLine(svg, line, xs, y);
}

/** A legend entry per series, with a sample of its line style or bar. */
export function legend(entries) {
  return h('ul', { class: 'legend' }, entries.map((e) =>
    h('li', {},
      h('svg:svg', { width: 26, height: 12, 'aria-hidden': 'true' },
        e.kind === 'bar'
          ? h('svg:rect', { x: 6, y: 1, width: 12, height: 10, class: e.cls })
          : e.kind === 'mark'
            ? h('svg:path', { d: 'M7,2L19,2L13,11Z', class: `mark ${e.cls}` })
            : h('svg:line', { x1: 1, x2: 25, y1: 6, y2: 6, class: `series ${e.cls}` })),
      ` ${e.name}`)));
}
