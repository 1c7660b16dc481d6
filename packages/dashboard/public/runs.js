// The runs table: filters (kept in the address bar), cursor paging, live refresh, and runs
// selected to act on together (one bulk operation, behind a confirmation dialog).
import { api, badge, confirmDialog, fill, formatTime, h, poll, runLink, shownStatus, showError } from './dom.js';

const REFRESH_MS = 2000;
const $ = (id) => document.getElementById(id);
const form = $('filters');
const text = { workflow: $('f-workflow'), parentRunId: $('f-parent'), idempotencyKey: $('f-key') };
const statusBoxes = [...form.querySelectorAll('input[name=status]')];

// Cursors of the pages before the current one: [undefined (page 1), cursor of page 2, ...].
let cursors = [];
let cursor;
let nextCursor;
// Run ids selected for a bulk action: kept across live refreshes and pages until acted on.
const selected = new Set();
let shownIds = [];

/** epoch ms → the value of a datetime-local input (browser time zone), and back. */
const toLocalInput = (ms) => {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 19);
};
const fromLocalInput = (value) => (value ? new Date(value).getTime() : undefined);

/** The filters as query parameters (times as epoch ms). */
function filterParams() {
  const params = new URLSearchParams();
  for (const [name, input] of Object.entries(text)) if (input.value.trim()) params.set(name, input.value.trim());
  const statuses = statusBoxes.filter((b) => b.checked).map((b) => b.value);
  if (statuses.length > 0) params.set('status', statuses.join(','));
  const after = fromLocalInput($('f-after').value);
  const before = fromLocalInput($('f-before').value);
  if (after !== undefined) params.set('createdAfter', String(after));
  if (before !== undefined) params.set('createdBefore', String(before));
  // One `tag` parameter per key=value entry of the Tags field (comma-separated).
  for (const tag of $('f-tags').value.split(',')) if (tag.trim()) params.append('tag', tag.trim());
  const limit = $('f-limit').value.trim();
  if (limit && limit !== '50') params.set('limit', limit);
  return params;
}

/** Fills the form from the address bar, so a filtered view can be linked and reloaded. */
function readAddress() {
  const params = new URLSearchParams(location.search);
  for (const [name, input] of Object.entries(text)) input.value = params.get(name) ?? '';
  const statuses = (params.get('status') ?? '').split(',');
  for (const box of statusBoxes) box.checked = statuses.includes(box.value);
  const after = Number(params.get('createdAfter'));
  const before = Number(params.get('createdBefore'));
  $('f-after').value = after ? toLocalInput(after) : '';
  $('f-before').value = before ? toLocalInput(before) : '';
  $('f-limit').value = params.get('limit') ?? '50';
  $('f-tags').value = params.getAll('tag').join(', ');
}

// The table shows the code (or class) and the start of the message; the cell's title has it all.
const briefError = (error) => {
  if (!error) return '';
  const text = `${error.code ?? error.name}: ${error.message}`;
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
};

const sameDay = (a, b) => formatTime(a).slice(0, 10) === formatTime(b).slice(0, 10);

/** A run link showing the id's random tail (UUIDv7s of one period share their head); the full id on hover. */
function shortRunLink(id) {
  const link = runLink(id, id.length > 14 ? `…${id.slice(-12)}` : id);
  link.setAttribute('title', id);
  return link;
}

function showSelection() {
  $('bulk-bar').hidden = selected.size === 0;
  $('selected-count').textContent = `${selected.size} selected`;
  const all = $('select-all');
  all.checked = shownIds.length > 0 && shownIds.every((id) => selected.has(id));
}

function selectBox(run) {
  const box = h('input', { type: 'checkbox', class: 'select', 'data-run-id': run.id, 'aria-label': `Select run ${run.id}` });
  box.checked = selected.has(run.id);
  box.addEventListener('change', () => {
    if (box.checked) selected.add(run.id);
    else selected.delete(run.id);
    showSelection();
  });
  return box;
}

/** A run's tags as `key=value` chips (text only: tags are run data). */
function tagChips(tags) {
  return Object.keys(tags ?? {}).map((key) => h('span', { class: 'tag', 'data-tag': key }, `${key}=${tags[key]}`));
}

function row(run) {
  return h(
    'tr',
    { 'data-run-id': run.id, 'data-status': run.status },
    h('td', {}, selectBox(run)),
    h('td', {}, badge(shownStatus(run)), run.cancelRequested && run.status !== 'cancelled' ? h('span', { class: 'hint' }, ' cancelling') : null),
    h('td', { class: 'workflow' }, run.workflow, h('span', { class: 'version' }, ` v${run.version}`)),
    h('td', { class: 'nowrap' }, runLink(run.id)),
    h('td', { class: 'nowrap' }, formatTime(run.createdAt)),
    h('td', { class: 'nowrap' }, sameDay(run.createdAt, run.updatedAt) ? formatTime(run.updatedAt).slice(11) : formatTime(run.updatedAt)),
    h('td', { class: 'nowrap' }, run.parent ? shortRunLink(run.parent.runId) : ''),
    h('td', { class: 'key' }, run.idempotencyKey ?? ''),
    h('td', { class: 'tags' }, tagChips(run.tags)),
    h('td', { class: 'error-cell', title: run.error ? `${run.error.name ?? run.error.code}: ${run.error.message}` : null }, briefError(run.error)),
  );
}

async function load() {
  const params = filterParams();
  if (cursor) params.set('cursor', cursor);
  try {
    const page = await api(`/api/runs?${params}`);
    fill($('rows'), page.runs.map(row));
    shownIds = page.runs.map((run) => run.id);
    showSelection();
    $('empty').hidden = page.runs.length > 0;
    nextCursor = page.nextCursor;
    $('older').disabled = !nextCursor;
    $('newer').disabled = cursors.length === 0;
    $('page').textContent = `Page ${cursors.length + 1}`;
    $('refreshed').textContent = `updated ${formatTime(Date.now()).slice(11)}`;
    showError($('error'), '');
  } catch (error) {
    showError($('error'), error.message);
  }
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  cursors = [];
  cursor = undefined;
  const params = filterParams();
  history.replaceState(null, '', params.size > 0 ? `/runs?${params}` : '/runs');
  void load();
});
$('clear').addEventListener('click', () => {
  history.replaceState(null, '', '/');
  readAddress();
  form.requestSubmit();
});
$('older').addEventListener('click', () => {
  if (!nextCursor) return;
  cursors.push(cursor);
  cursor = nextCursor;
  void load();
});
$('newer').addEventListener('click', () => {
  if (cursors.length === 0) return;
  cursor = cursors.pop();
  void load();
});

$('select-all').addEventListener('change', () => {
  for (const id of shownIds) {
    if ($('select-all').checked) selected.add(id);
    else selected.delete(id);
  }
  for (const box of document.querySelectorAll('#rows input.select')) box.checked = selected.has(box.dataset.runId);
  showSelection();
});
$('unselect').addEventListener('click', () => {
  selected.clear();
  for (const box of document.querySelectorAll('#rows input.select')) box.checked = false;
  showSelection();
});

const BULK_WORDS = {
  cancel: 'Cancellation is requested for each selected run that has not ended.',
  retry: 'Each selected failed or cancelled run is retried from where it ended.',
  pause: 'Each selected run that has not ended is paused.',
  resume: 'Each selected paused run is resumed.',
  delete: 'Each selected run that has ended is deleted with everything it recorded.',
};

async function bulk(action) {
  const runIds = [...selected];
  const values = await confirmDialog({
    title: `${action[0].toUpperCase()}${action.slice(1)} ${runIds.length} run(s)?`,
    message: `${BULK_WORDS[action]} Runs the action does not apply to are skipped.`,
    confirmLabel: `${action[0].toUpperCase()}${action.slice(1)} ${runIds.length} run(s)`,
    danger: action === 'cancel' || action === 'delete',
    fields: action === 'cancel' || action === 'retry' ? [{ name: 'reason', label: 'Reason (optional)' }] : [],
  });
  if (values === undefined) return;
  try {
    const result = await api('/api/bulk', { method: 'POST', body: { action, runIds, ...values } });
    const { done, skipped, failed } = result.counts;
    const failures = result.outcomes.filter((o) => o.outcome === 'failed').map((o) => `${o.runId}: ${o.code}`);
    const notice = $('bulk-result');
    notice.hidden = false;
    notice.textContent = `${action}: ${done} done, ${skipped} skipped, ${failed} failed${failures.length > 0 ? ` (${failures.join('; ')})` : ''}.`;
    selected.clear();
    // Hidden with the result, not after the reload: the page never shows a bar for runs no longer selected.
    showSelection();
    showError($('error'), '');
    await load();
  } catch (error) {
    showError($('error'), `${action} failed: ${error.message}`);
  }
}
for (const button of document.querySelectorAll('[data-bulk]')) button.addEventListener('click', () => void bulk(button.dataset.bulk));

readAddress();
void poll(load, REFRESH_MS, () => $('live').checked);
