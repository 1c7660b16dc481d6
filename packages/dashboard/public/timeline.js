// Draws a run's timeline (the `timeline` of /api/runs/:id) as SVG: one lane per step, one bar per
// attempt (or per wait), over the run's time. Names go in as text nodes; geometry as attributes.
import { formatDuration } from './dom.js';

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 1000;
const LABEL = 190;
const LANE = 24;
const AXIS = 22;
const TICKS = 5;
const BAR_STATUSES = new Set(['running', 'succeeded', 'failed', 'abandoned', 'waiting', 'scheduled', 'retry_wait']);

function svg(tag, attributes = {}, text) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) if (value !== undefined) element.setAttribute(name, String(value));
  if (text !== undefined) element.textContent = text;
  return element;
}

const shorten = (name, max = 26) => (name.length > max ? `${name.slice(0, max - 1)}…` : name);

function barTitle(lane, bar, duration) {
  const parts = [lane.key];
  if (bar.kind === 'attempt') parts.push(`attempt ${bar.attempt}`);
  else if (bar.kind === 'wait') parts.push(lane.kind);
  parts.push(bar.status, bar.end === undefined ? `${formatDuration(duration)} so far` : formatDuration(duration));
  if (bar.error) parts.push(bar.error);
  return parts.join(' · ');
}

/** The timeline as an `<svg>` element; `now` closes the bars still open. */
export function drawTimeline(timeline, now) {
  const { start, lanes } = timeline;
  const end = Math.max(timeline.end, start + 1);
  const span = end - start;
  const plot = WIDTH - LABEL - 10;
  const x = (t) => LABEL + ((Math.min(Math.max(t, start), end) - start) / span) * plot;
  const height = AXIS + Math.max(lanes.length, 1) * LANE + 4;
  const root = svg('svg', { viewBox: `0 0 ${WIDTH} ${height}`, class: 'timeline-svg', role: 'img', 'aria-label': `Timeline of ${lanes.length} steps over ${formatDuration(span)}` });
  for (let i = 0; i <= TICKS; i++) {
    const t = start + (span * i) / TICKS;
    root.append(svg('line', { x1: x(t), x2: x(t), y1: AXIS - 4, y2: height, class: 'tick' }));
    root.append(svg('text', { x: x(t), y: AXIS - 8, class: 'tick-label', 'text-anchor': i === 0 ? 'start' : i === TICKS ? 'end' : 'middle' }, `+${formatDuration(t - start)}`));
  }
  lanes.forEach((lane, i) => {
    const y = AXIS + i * LANE;
    const group = svg('g', { class: 'lane', 'data-step': lane.key, 'data-kind': lane.kind, 'data-status': lane.status });
    if (i % 2 === 1) group.append(svg('rect', { x: 0, y, width: WIDTH, height: LANE, class: 'lane-bg' }));
    const label = svg('text', { x: 4, y: y + LANE / 2 + 4, class: 'lane-label' }, shorten(lane.key));
    label.append(svg('title', {}, `${lane.key} (${lane.kind}, ${lane.status})`));
    group.append(label);
    for (const bar of lane.bars) {
      const barEnd = bar.end ?? Math.max(now, bar.start);
      const left = x(bar.start);
      const width = Math.max(x(barEnd) - left, bar.kind === 'mark' ? 3 : 4);
      const status = BAR_STATUSES.has(bar.status) ? bar.status : 'unknown';
      const rect = svg('rect', {
        x: left, y: y + 5, width, height: LANE - 10, rx: 3,
        class: `bar bar-${bar.kind} bar-${status}${bar.end === undefined ? ' bar-open' : ''}`,
        'data-step': lane.key, 'data-kind': bar.kind, 'data-status': bar.status, 'data-attempt': bar.attempt,
      });
      rect.append(svg('title', {}, barTitle(lane, bar, barEnd - bar.start)));
      group.append(rect);
    }
    root.append(group);
  });
  if (lanes.length === 0) root.append(svg('text', { x: LABEL, y: AXIS + LANE / 2 + 4, class: 'lane-label' }, 'No steps recorded yet.'));
  return root;
}
