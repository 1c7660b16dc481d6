// The overview (the dashboard's home): per workflow, the runs of the last hour and day by outcome
// with an hourly chart drawn here as SVG (no library, nothing fetched from elsewhere), run times,
// failures by error code with links to the filtered runs table, and the backlog.
import { api, fill, formatDuration, formatTime, h, poll, runLink, showError } from './dom.js';

const REFRESH_MS = 5000;
const SVG = 'http://www.w3.org/2000/svg';
const $ = (id) => document.getElementById(id);

function svg(tag, attributes = {}, text) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  if (text !== undefined) element.textContent = text;
  return element;
}

/** `12 started · 10 completed · 1 failed` (cancelled only when there are some). */
function counts(c) {
  const parts = [`${c.started} started`, `${c.completed} completed`, `${c.failed} failed`];
  if (c.cancelled > 0) parts.push(`${c.cancelled} cancelled`);
  return h('span', { class: 'counts', 'data-started': c.started, 'data-completed': c.completed, 'data-failed': c.failed }, parts.join(' · '));
}

/** 24 bars, one per hour: completed (green) under failed (red) under the rest (grey), scaled to the busiest hour. */
function hourChart(hours) {
  const width = 24 * 8;
  const height = 40;
  const top = Math.max(1, ...hours.map((hour) => hour.started));
  const chart = svg('svg', { class: 'hours', viewBox: `0 0 ${width} ${height}`, width, height, role: 'img' });
  chart.append(svg('title', {}, 'Runs created per hour over the last 24 hours: completed, failed, other'));
  hours.forEach((hour, i) => {
    let y = height;
    const other = hour.started - hour.completed - hour.failed;
    for (const [kind, n] of [
      ['completed', hour.completed],
      ['failed', hour.failed],
      ['other', other],
    ]) {
      if (n <= 0) continue;
      const barHeight = (n / top) * (height - 2);
      y -= barHeight;
      const bar = svg('rect', { class: `bar bar-${kind}`, x: i * 8 + 1, y, width: 6, height: barHeight });
      bar.append(svg('title', {}, `${formatTime(hour.start)}: ${n} ${kind}`));
      chart.append(bar);
    }
  });
  return chart;
}

const runsLink = (params, text) => h('a', { href: `/runs?${new URLSearchParams(params)}` }, text);

function render(data) {
  const { backlog } = data;
  fill(
    $('backlog'),
    h('span', { class: 'figure', id: 'due', 'data-value': backlog.due }, h('strong', {}, String(backlog.due)), ' due now'),
    h('span', { class: 'figure', id: 'waiting', 'data-value': backlog.waiting }, h('strong', {}, String(backlog.waiting)), ' waiting'),
    backlog.oldestWaiting
      ? h(
          'span',
          { class: 'figure', id: 'oldest' },
          'oldest waiting: ',
          runLink(backlog.oldestWaiting.runId),
          ` (${backlog.oldestWaiting.workflow}, for ${formatDuration(data.now - backlog.oldestWaiting.createdAt)})`,
        )
      : h('span', { class: 'figure', id: 'oldest' }, 'no run waiting'),
  );
  fill(
    $('workflow-rows'),
    data.workflows.map((w) =>
      h(
        'tr',
        { 'data-workflow': w.workflow },
        h('td', {}, runsLink({ workflow: w.workflow }, w.workflow)),
        h('td', { class: 'last-hour' }, counts(w.lastHour)),
        h('td', { class: 'last-day' }, counts(w.lastDay)),
        h('td', { class: 'durations' }, w.durationMs ? `${formatDuration(w.durationMs.p50)} / ${formatDuration(w.durationMs.p95)} (${w.durationMs.of})` : '—'),
        h('td', {}, hourChart(w.hours)),
      ),
    ),
  );
  $('no-workflows').hidden = data.workflows.length > 0;
  fill(
    $('failure-rows'),
    data.failures.map((f) =>
      h(
        'tr',
        { 'data-code': f.code },
        h('td', {}, f.code),
        h('td', { class: 'count' }, String(f.count)),
        h(
          'td',
          {},
          f.workflows.flatMap((workflow, i) => [i > 0 ? ', ' : '', runsLink({ workflow, status: 'failed' }, workflow)]),
        ),
        h('td', {}, formatTime(f.lastAt)),
      ),
    ),
  );
  $('no-failures').hidden = data.failures.length > 0;
  $('scanned').textContent = `${data.scanned} runs read${data.truncated ? ' (bounded: the figures cover the newest runs only)' : ''}.`;
  $('refreshed').textContent = `updated ${formatTime(data.now)}`;
}

async function load() {
  try {
    render(await api('/api/overview'));
    showError($('error'), '');
  } catch (error) {
    showError($('error'), error.message);
  }
}

void poll(load, REFRESH_MS, () => $('live').checked);
