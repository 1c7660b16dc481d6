// The run page: details, timeline, steps, waits, events, state, parent and children, and the
// cancel / pause / resume / retry / fork actions (each behind a confirmation dialog).
import {
  api,
  badge,
  confirmDialog,
  fill,
  formatDuration,
  formatError,
  formatJson,
  formatTime,
  h,
  inlineJson,
  poll,
  runLink,
  shownStatus,
  showError,
} from './dom.js';
import { watchStreams } from './streams.js';
import { approvalForms, drawGraph, graphLegend } from './graph.js';
import { drawTimeline } from './timeline.js';

const REFRESH_MS = 2000;
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const $ = (id) => document.getElementById(id);
const runId = decodeURIComponent(location.pathname.split('/')[2] ?? '');

let view;
let acting = false;
let actedAt = 0;
let actionsDrawn = '';
// The step chosen for a fork survives the refreshes.
let forkStep = '';

// Record fields the details list shows in its own way; any other field is listed as JSON.
const SHOWN = new Set([
  'id',
  'workflow',
  'version',
  'status',
  'input',
  'output',
  'error',
  'parent',
  'idempotencyKey',
  'lease',
  'fence',
  'cancelRequested',
  'cancelReason',
  'deadline',
  'wakeAt',
  'createdAt',
  'updatedAt',
  'forkedFrom',
  'retries',
  'paused',
  'tags',
  'tagWrites',
]);

function notice(message) {
  $('notice').hidden = !message;
  fill($('notice'), message ?? '');
}

function detail(term, ...value) {
  return [h('dt', {}, term), h('dd', {}, ...value)];
}

function renderDetails(run) {
  const items = [
    detail('Run', h('code', {}, run.id)),
    detail('Workflow', run.workflow, h('span', { class: 'version' }, ` version ${run.version}`)),
    detail('Created', formatTime(run.createdAt)),
    detail('Updated', formatTime(run.updatedAt), TERMINAL.has(run.status) ? ` (took ${formatDuration(run.updatedAt - run.createdAt)})` : ''),
    run.idempotencyKey !== undefined ? detail('Idempotency key', h('code', {}, run.idempotencyKey)) : [],
    run.tags !== undefined ? detail('Tags', ...Object.keys(run.tags).map((key) => h('code', { class: 'tag' }, `${key}=${run.tags[key]}`))) : [],
    run.parent ? detail('Parent', runLink(run.parent.runId), ` step ${run.parent.stepKey}`) : [],
    run.deadline !== undefined ? detail('Deadline', formatTime(run.deadline)) : [],
    run.wakeAt !== undefined && !TERMINAL.has(run.status) ? detail('Wakes at', formatTime(run.wakeAt)) : [],
    run.cancelRequested ? detail('Cancel requested', run.cancelReason ?? 'no reason given') : [],
    run.paused && !TERMINAL.has(run.status)
      ? detail(
          'Paused',
          formatTime(run.paused.at),
          run.paused.scope === 'workflow' ? ' (its workflow is paused)' : '',
          `: ${run.paused.reason ?? 'no reason given'}`,
        )
      : [],
    run.forkedFrom ? detail('Forked from', runLink(run.forkedFrom.runId), ` at step ${run.forkedFrom.stepKey}`) : [],
    (run.retries ?? []).map((retry, i) =>
      detail(
        `Retry ${i + 1}`,
        formatTime(retry.at),
        ` from ${retry.previousStatus}`,
        retry.previousError ? ` (${retry.previousError.message})` : '',
        retry.reason ? `: ${retry.reason}` : '',
        retry.forgottenSteps?.length ? `; ran again: ${retry.forgottenSteps.join(', ')}` : '',
      ),
    ),
    run.lease && !TERMINAL.has(run.status) ? detail('Leased by', run.lease.owner, ` until ${formatTime(run.lease.expiresAt)}`) : [],
    Object.entries(run)
      .filter(([key]) => !SHOWN.has(key))
      .map(([key, value]) => detail(key, h('code', {}, typeof value === 'string' ? value : JSON.stringify(value)))),
  ];
  fill($('details'), items.flat(2));
}

const call = (c) => `${c.kind} “${c.key}”`;

// A run that failed with NON_DETERMINISM: where its code and its history part (the error's data),
// the line of the code's call, and what to do (the error's message says it).
function renderDivergence(run) {
  const d = run.error?.code === 'NON_DETERMINISM' ? run.error.data : undefined;
  const shown = typeof d === 'object' && d !== null && typeof d.reason === 'string' && 'recorded' in d && 'called' in d;
  $('divergence-section').hidden = !shown;
  if (!shown) return;
  const quiet = { 'ended-early': 'nothing: the workflow ended first', 'missing-call': `nothing: it went quiet in turn ${d.turn}` };
  fill(
    $('divergence'),
    [
      detail('Position', d.seq === null ? '—' : `#${d.seq}`, ` (turn ${d.turn})`),
      detail('The history has', d.recorded ? call(d.recorded) : 'nothing'),
      detail('The code called', d.called ? call(d.called) : (quiet[d.reason] ?? 'nothing')),
      d.location ? detail('Location', h('code', {}, d.location)) : [],
      d.historyBeforeTurns ? detail('Note', 'recorded by a Cairn build before delivery turns (before 0.2.0)') : [],
    ].flat(),
  );
  fill($('divergence-why'), run.error.message.replace(/^Run \S+: /, ''));
}

function stepRow(step) {
  const result = step.error
    ? h('span', { class: 'error-text' }, formatError(step.error))
    : step.output !== undefined
      ? h('code', { class: 'json' }, inlineJson(step.output))
      : '';
  return h(
    'tr',
    { 'data-step': step.key, 'data-status': step.status },
    h('td', {}, String(step.seq)),
    h('td', { class: 'step-name' }, step.key),
    h('td', {}, step.kind, step.queued ? ' (queued)' : ''),
    h('td', {}, badge(step.status)),
    h('td', {}, step.kind === 'task' || step.kind === 'compensation' ? `${step.attempts.length} / ${step.maxAttempts}` : ''),
    h('td', {}, formatTime(step.startedAt)),
    h('td', {}, step.durationMs === undefined ? '' : formatDuration(step.durationMs)),
    h('td', { class: 'result' }, result),
  );
}

const LIVE_STEP = new Set(['waiting', 'retry_wait', 'scheduled']);

function waitItem(step) {
  const wait = step.wait ?? { kind: step.kind };
  const what =
    wait.kind === 'sleep'
      ? `timer until ${formatTime(wait.until)}`
      : wait.kind === 'event'
        ? `event “${wait.event}”${wait.timeoutAt ? ` (times out ${formatTime(wait.timeoutAt)})` : ''}`
        : wait.kind === 'child'
          ? ['child run ', runLink(wait.childRunId)]
          : wait.kind === 'retry'
            ? `attempt ${step.attempts.length + 1} at ${formatTime(wait.at)}`
            : wait.kind === 'select'
              ? `first of several${wait.timeoutAt ? ` (times out ${formatTime(wait.timeoutAt)})` : ''}`
              : `a worker to run it (${step.status})`;
  return h('li', { 'data-step': step.key }, h('strong', {}, step.key), ': ', what);
}

function eventRow(step) {
  const at = step.endedAt ?? step.startedAt;
  return h(
    'tr',
    { 'data-step': step.key },
    h('td', {}, step.wait.event),
    h('td', {}, badge(step.status)),
    h('td', {}, formatTime(at)),
    h('td', {}, h('code', { class: 'json' }, 'received' in step.wait ? formatJson(step.wait.received) : step.wait.timedOut ? 'timed out' : '—')),
  );
}

async function act(action, dialog, body = {}) {
  const values = await confirmDialog(dialog);
  if (values === undefined) return;
  acting = true;
  actedAt = Date.now();
  try {
    const answer = await api(`/api/runs/${encodeURIComponent(runId)}/${action}`, { method: 'POST', body: { ...body, ...values } });
    if (action === 'fork' && answer.runId) {
      notice(h('span', {}, 'Forked as ', runLink(answer.runId), '.'));
    } else {
      notice({ cancel: 'Cancellation requested.', pause: 'Paused.', resume: 'Resumed.' }[action] ?? 'Retry requested.');
    }
    showError($('error'), '');
    await load();
  } catch (error) {
    showError($('error'), `${action} failed: ${error.message}`);
  } finally {
    acting = false;
  }
}

// The approval forms are redrawn only when the set of pending gates changes (typing survives refreshes).
let approvalsDrawn = '';

async function answerGate(node, { by, decision, payloadText }) {
  let payload;
  if (payloadText.trim() !== '') {
    try {
      payload = JSON.parse(payloadText);
    } catch (error) {
      showError($('error'), `The payload is not JSON: ${error.message}`);
      return;
    }
  }
  acting = true;
  actedAt = Date.now();
  try {
    await api(`/api/runs/${encodeURIComponent(runId)}/approve`, {
      method: 'POST',
      body: { node, by, decision, ...(payload === undefined ? {} : { payload }) },
    });
    notice(`Answer sent to ${node}.`);
    showError($('error'), '');
    approvalsDrawn = '';
    await load();
  } catch (error) {
    showError($('error'), `approve failed: ${error.message}`);
  } finally {
    acting = false;
  }
}

function renderGraph() {
  const graph = view.graph;
  $('graph-section').hidden = !graph;
  if (!graph) return;
  // A code run has no graph of its own: the drawing is what it did, its calls in call order.
  $('graph-title').textContent = graph.source === 'history' ? 'What the run did (recorded calls, in call order)' : 'Graph';
  fill($('graph'), drawGraph(graph));
  if ($('graph-legend').childElementCount === 0) fill($('graph-legend'), graphLegend());
  const key = JSON.stringify(graph.pending.map((p) => p.node));
  if (key !== approvalsDrawn) {
    approvalsDrawn = key;
    fill($('approvals'), approvalForms(graph.pending, answerGate));
  }
}

function renderActions() {
  const { run, actions } = view;
  const steps = view.timeline.steps;
  // Redrawn only when what they offer changes, so a refresh never swaps a button under the pointer.
  const drawn = JSON.stringify([run.status, run.paused, actions, steps.map((s) => s.key)]);
  if (drawn === actionsDrawn) return;
  actionsDrawn = drawn;
  const buttons = [];
  // One button a dialog-confirmed action: `dialog` says what it will do.
  const actionButton = (action, label, cls, dialog) =>
    h('button', { type: 'button', id: action, ...(cls ? { class: cls } : {}), onclick: () => act(action, dialog) }, label);
  const reason = [{ name: 'reason', label: 'Reason (optional)' }];
  if (actions.cancel) {
    buttons.push(
      actionButton('cancel', 'Cancel…', 'danger', {
        title: 'Cancel this run?',
        danger: true,
        confirmLabel: 'Cancel run',
        message: `${run.workflow} ${run.id} will stop at its next step; its children are cancelled too.`,
        fields: reason,
      }),
    );
  }
  if (actions.pause) {
    buttons.push(
      actionButton('pause', 'Pause…', 'secondary', {
        title: 'Pause this run?',
        confirmLabel: 'Pause run',
        message: `${run.workflow} ${run.id} stops before its next step (steps running now finish and are recorded); no worker takes it until it is resumed. Its deadline keeps counting.`,
        fields: reason,
      }),
    );
  }
  if (actions.resume) {
    buttons.push(
      actionButton('resume', 'Resume…', undefined, {
        title: 'Resume this run?',
        confirmLabel: 'Resume run',
        message: `${run.workflow} ${run.id} goes on exactly where it stopped, with whatever arrived meanwhile.`,
      }),
    );
  }
  if (actions.retry) {
    buttons.push(
      actionButton('retry', 'Retry…', undefined, {
        title: 'Retry this run?',
        confirmLabel: 'Retry run',
        message: `${run.workflow} ${run.id} resumes from where it ${run.status === 'failed' ? 'failed' : 'stopped'}, keeping every step that succeeded.`,
        fields: reason,
      }),
    );
  }
  if (actions.fork) {
    const keys = steps.map((s) => s.key);
    if (!keys.includes(forkStep)) forkStep = keys[0] ?? '';
    const select = h(
      'select',
      {
        id: 'fork-step',
        'aria-label': 'Fork from step',
        onchange: (event) => {
          forkStep = event.target.value;
        },
      },
      keys.map((key) => h('option', { value: key, selected: key === forkStep }, key)),
    );
    buttons.push(
      h(
        'span',
        { class: 'fork' },
        h('label', { for: 'fork-step' }, 'Fork from '),
        select,
        h(
          'button',
          {
            type: 'button',
            id: 'fork',
            class: 'secondary',
            onclick: () =>
              act(
                'fork',
                {
                  title: 'Fork this run?',
                  confirmLabel: 'Fork run',
                  message: `A new run of ${run.workflow} reuses the recorded outputs of the steps before “${forkStep}” and runs the rest with the current code.`,
                },
                { fromStep: forkStep },
              ),
          },
          'Fork…',
        ),
      ),
    );
  }
  fill($('actions'), buttons.length > 0 ? buttons : h('span', { class: 'hint' }, 'No actions for a run in this state.'));
}

function render() {
  const { run } = view;
  document.title = `${run.workflow} ${run.id.slice(0, 8)} · Cairn`;
  fill($('crumb'), run.workflow);
  fill($('title'), run.workflow, ' ', badge(shownStatus(run)));
  fill($('head-meta'), h('code', {}, run.id));
  renderActions();
  renderDivergence(run);
  renderDetails(run);
  renderGraph();
  const { steps, state } = view.timeline;
  fill($('timeline'), drawTimeline(view.timeline, Date.now()));
  fill($('steps'), steps.map(stepRow));
  const waits = steps.filter((s) => LIVE_STEP.has(s.status));
  fill(
    $('waits'),
    waits.length > 0 ? waits.map(waitItem) : h('li', { class: 'hint' }, TERMINAL.has(run.status) ? 'Nothing: the run has ended.' : 'Nothing right now.'),
  );
  fill($('events'), steps.filter((s) => s.wait?.kind === 'event').map(eventRow));
  fill(
    $('state'),
    Object.entries(state).map(([key, value]) => h('tr', {}, h('td', {}, h('code', {}, key)), h('td', {}, h('code', { class: 'json' }, inlineJson(value))))),
  );
  fill(
    $('children'),
    view.children.map((c) =>
      h(
        'tr',
        { 'data-run-id': c.id },
        h('td', {}, badge(c.status)),
        h('td', {}, c.workflow, c.relation === 'child' ? '' : h('span', { class: 'hint' }, ` (${c.relation})`)),
        h('td', {}, runLink(c.id)),
      ),
    ),
  );
  fill(
    $('all-children'),
    view.children.length > 0
      ? h('a', { href: `/?parentRunId=${encodeURIComponent(run.id)}` }, 'All children in the runs table →')
      : h('span', { class: 'hint' }, 'No children.'),
  );
  $('input').textContent = formatJson(run.input);
  $('result-title').textContent = run.error ? 'Error' : 'Output';
  $('result').textContent = run.error ? `${formatError(run.error)}\n\n${run.error.stack ?? ''}`.trim() : formatJson(run.output);
  $('refreshed').textContent = `updated ${formatTime(Date.now()).slice(11)}`;
}

async function load() {
  try {
    view = await api(`/api/runs/${encodeURIComponent(runId)}`);
    render();
    await watchStreams($('streams'), $('streams-hint'), runId);
    showError($('error'), '');
  } catch (error) {
    showError($('error'), error.message);
  }
}

// Refreshes while the run is live (or was just acted on) and no dialog or action is open.
const ACTION_FOLLOW_MS = 15_000;
const live = () => !view || !TERMINAL.has(view.run.status) || Date.now() - actedAt < ACTION_FOLLOW_MS;
void poll(load, REFRESH_MS, () => !acting && !document.querySelector('dialog[open]') && live());
