// Shared helpers of the dashboard's pages. Run data only ever reaches the page as text: `h`
// turns every string child into a text node and sets attributes with setAttribute; nothing here
// parses HTML (the Content-Security-Policy requires Trusted Types: assigning an HTML string throws).

export const STATUSES = ['pending', 'running', 'waiting', 'completed', 'failed', 'cancelled'];
const KNOWN_CLASSES = new Set([...STATUSES, 'scheduled', 'retry_wait', 'succeeded', 'abandoned', 'paused']);

/** Creates an element: `props` are attributes (functions for `on…` become listeners), children text or nodes. */
export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) {
      if (typeof value === 'function') element.addEventListener(name.slice(2), value);
    } else if (name === 'class') element.className = value;
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

/** Appends children: nodes as they are, anything else as text. */
export function append(parent, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's children. */
export function fill(element, ...children) {
  element.replaceChildren();
  append(element, children);
}

/** The link to a run's page. */
export function runLink(id, text = id) {
  return h('a', { href: `/runs/${encodeURIComponent(id)}`, class: 'run-id' }, text);
}

/** A status badge; the class comes from a fixed list, never from the data. */
/** The status a run is shown with: `paused` for a paused run that has not ended, else its status. */
export function shownStatus(run) {
  return run.paused && !['completed', 'failed', 'cancelled'].includes(run.status) ? 'paused' : run.status;
}

export function badge(status) {
  const known = KNOWN_CLASSES.has(status) ? status : 'unknown';
  return h('span', { class: `badge status-${known}`, 'data-status': status }, status);
}

const pad = (n, width = 2) => String(n).padStart(width, '0');

/** `2026-12-03 13:04:05` in the browser's time zone. */
export function formatTime(ms) {
  if (typeof ms !== 'number') return '—';
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** `850 ms`, `3.2 s`, `4 min 10 s`, `2 h 5 min`, `3 d 4 h`. */
export function formatDuration(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.floor(s % 60)} s`;
  const hours = Math.floor(m / 60);
  if (hours < 48) return `${hours} h ${m % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/**
 * How a payload encoded by a codec the dashboard's engine was not given reads: `encoded (key k1)`
 * (`encoded (aes-256-gcm)` without a key id); `undefined` for any other value. The mark is
 * `"cairn:codec"`, as `isPayloadEnvelope` in @cairn/core.
 */
export function encodedLabel(value) {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || typeof value['cairn:codec'] !== 'string') return undefined;
  return typeof value.key === 'string' ? `encoded (key ${value.key})` : `encoded (${value['cairn:codec']})`;
}

/** A JSON value as indented text (`—` for nothing; an encoded payload as `encoded (key k1)`). */
export function formatJson(value) {
  return value === undefined ? '—' : (encodedLabel(value) ?? JSON.stringify(value, null, 2));
}

/** A JSON value on one line (an encoded payload as `encoded (key k1)`). */
export function inlineJson(value) {
  return encodedLabel(value) ?? JSON.stringify(value);
}

/** An error record as one line: `CODE Name: message`. */
export function formatError(error) {
  if (!error) return '';
  return `${error.code ? `${error.code} ` : ''}${error.name ?? 'Error'}: ${error.message}`;
}

/** Calls the dashboard's API; rejects with the server's message when the answer is not 2xx. */
export async function api(path, { method = 'GET', body } = {}) {
  const init = { method, headers: { accept: 'application/json' }, credentials: 'same-origin' };
  if (method !== 'GET') {
    // The custom header is the CSRF defence: a cross-site form or simple request cannot send it.
    init.headers['x-cairn-dashboard'] = '1';
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body ?? {});
  }
  const response = await fetch(path, init);
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(answer?.error?.message ?? `HTTP ${response.status}`);
  return answer;
}

/** Shows a message in a `role=alert` paragraph, or hides it when `message` is empty. */
export function showError(element, message) {
  element.hidden = !message;
  element.textContent = message ?? '';
}

/**
 * Asks for confirmation in a modal `<dialog>`. `fields` are extra inputs (`{ name, label }`).
 * Resolves with their values when confirmed, `undefined` when dismissed.
 */
export function confirmDialog({ title, message, confirmLabel, danger = false, fields = [] }) {
  return new Promise((resolve) => {
    const inputs = fields.map((f) => h('input', { name: f.name, placeholder: f.placeholder ?? '', 'aria-label': f.label }));
    const confirmButton = h('button', { type: 'submit', class: danger ? 'danger' : '', 'data-confirm': '' }, confirmLabel);
    const form = h(
      'form',
      { method: 'dialog' },
      h('h3', {}, title),
      h('p', {}, message),
      fields.map((f, i) => h('label', {}, f.label, inputs[i])),
      h(
        'div',
        { class: 'buttons' },
        h('button', { type: 'button', class: 'secondary', 'data-dismiss': '', onclick: () => dialog.close('') }, 'Back'),
        confirmButton,
      ),
    );
    const dialog = h('dialog', { class: 'confirm' }, form);
    confirmButton.value = 'confirm';
    dialog.addEventListener('close', () => {
      const confirmed = dialog.returnValue === 'confirm';
      const values = Object.fromEntries(fields.map((f, i) => [f.name, inputs[i].value]));
      dialog.remove();
      resolve(confirmed ? values : undefined);
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

/** Runs `load` now, then every `ms` while the page is visible and `active()` holds; never two at once. */
export function poll(load, ms, active = () => true) {
  let busy = false;
  const run = async () => {
    if (busy) return;
    busy = true;
    try {
      await load();
    } finally {
      busy = false;
    }
  };
  setInterval(() => {
    if (document.visibilityState === 'visible' && active()) void run();
  }, ms);
  return run();
}
