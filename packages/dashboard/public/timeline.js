// Draws a run's timeline (the `RunTimeline` in /api/runs/:id) as SVG: one lane per step, one bar
// per attempt (or per wait), over the run's time. Names go in as text nodes; geometry as attributes.
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

// A step's bars: one per attempt of a task; otherwise one for the step (a wait, or a recorded value).
function barsOf(step) {
  if (step.attempts.length > 0) {
    return step.attempts.map((a) => ({ kind: 'attempt', start: a.startedAt, end: a.endedAt, status: a.status, attempt: a.attempt, error: a.error?.message }));
  }
  const point = step.endedAt !== undefined && step.endedAt === step.startedAt;
  return [{ kind: point ? 'mark' : 'wait', start: step.startedAt, end: step.endedAt, status: step.status }];
}

function barTitle(step, bar, duration) {
  const parts = [step.key];
  if (bar.kind === 'attempt') parts.push(`attempt ${bar.attempt}`);
  else parts.push(step.kind);
  parts.push(bar.status, bar.end === undefined ? `${formatDuration(duration)} so far` : formatDuration(duration));
  if (bar.error) parts.push(bar.error);
  return parts.join(' · ');
}

/**
 * The timeline (a `RunTimeline`) as an `<svg>` element: one lane per step in call order, over the
 * run's span; `now` extends the span and closes the open bars of a run that has not ended.
 */
export function drawTimeline(timeline, now) {
  const steps = timeline.steps;
  const ended = timeline.run.endedAt !== undefined;
  const start = timeline.span.from;
  const end = Math.max(ended ? timeline.span.to : Math.max(timeline.span.to, now), start + 1);
  const span = end - start;
  const plot = WIDTH - LABEL - 10;
  const x = (t) => LABEL + ((Math.min(Math.max(t, start), end) - start) / span) * plot;
  const height = AXIS + Math.max(steps.length, 1) * LANE + 4;
  const root = svg('svg', {
    viewBox: `0 0 ${WIDTH} ${height}`,
    class: 'timeline-svg',
    role: 'img',
    'aria-label': `Timeline of ${steps.length} steps over ${formatDuration(span)}`,
  });
  for (let i = 0; i <= TICKS; i++) {
    const t = start + (span * i) / TICKS;
    root.append(svg('line', { x1: x(t), x2: x(t), y1: AXIS - 4, y2: height, class: 'tick' }));
    root.append(
      svg(
        'text',
        { x: x(t), y: AXIS - 8, class: 'tick-label', 'text-anchor': i === 0 ? 'start' : i === TICKS ? 'end' : 'middle' },
        `+${formatDuration(t - start)}`,
      ),
    );
  }
  steps.forEach((step, i) => {
    const y = AXIS + i * LANE;
    const group = svg('g', { class: 'lane', 'data-step': step.key, 'data-kind': step.kind, 'data-status': step.status });
    if (i % 2 === 1) group.append(svg('rect', { x: 0, y, width: WIDTH, height: LANE, class: 'lane-bg' }));
    const label = svg('text', { x: 4, y: y + LANE / 2 + 4, class: 'lane-label' }, shorten(step.key));
    label.append(svg('title', {}, `${step.key} (${step.kind}, ${step.status})`));
    group.append(label);
    for (const bar of barsOf(step)) {
      const barEnd = bar.end ?? Math.max(end, bar.start);
      const left = x(bar.start);
      const width = Math.max(x(barEnd) - left, bar.kind === 'mark' ? 3 : 4);
      const status = BAR_STATUSES.has(bar.status) ? bar.status : 'unknown';
      const rect = svg('rect', {
        x: left,
        y: y + 5,
        width,
        height: LANE - 10,
        rx: 3,
        class: `bar bar-${bar.kind} bar-${status}${bar.end === undefined ? ' bar-open' : ''}`,
        'data-step': step.key,
        'data-kind': bar.kind,
        'data-status': bar.status,
        'data-attempt': bar.attempt,
      });
      rect.append(svg('title', {}, barTitle(step, bar, barEnd - bar.start)));
      group.append(rect);
    }
    root.append(group);
  });
  if (steps.length === 0) root.append(svg('text', { x: LABEL, y: AXIS + LANE / 2 + 4, class: 'lane-label' }, 'No steps recorded yet.'));
  return root;
}
