// The run page's streams: every stream the run writes (ctx.emit), each fed live by server-sent
// events from /api/runs/<id>/streams/<name>/events. An EventSource reconnects by itself with the
// last chunk's index (Last-Event-ID), so a dropped connection neither loses nor repeats a chunk.
import { api, fill, h, inlineJson } from './dom.js';

const watched = new Map();

function follow(container, runId, name) {
  const chunks = h('ol', { class: 'chunks', start: '0' });
  const state = h('span', { class: 'stream-state' }, 'live');
  const block = h('div', { class: 'stream', 'data-stream': name }, h('h3', {}, h('code', {}, name), ' ', state), chunks);
  container.append(block);
  const source = new EventSource(`/api/runs/${encodeURIComponent(runId)}/streams/${encodeURIComponent(name)}/events`);
  source.addEventListener('message', (event) => {
    chunks.append(h('li', { 'data-index': event.lastEventId }, h('code', { class: 'json' }, inlineJson(JSON.parse(event.data)))));
  });
  source.addEventListener('end', () => {
    source.close();
    fill(state, 'ended');
    state.classList.add('ended');
  });
  return source;
}

/** Lists the run's streams (again on every refresh: a stream may start later) and follows each new one. */
export async function watchStreams(container, hint, runId) {
  let streams;
  try {
    ({ streams } = await api(`/api/runs/${encodeURIComponent(runId)}/streams`));
  } catch (error) {
    // A store without streams (or a failed read): the rest of the page stands.
    fill(hint, `Streams unavailable: ${error.message}`);
    return;
  }
  for (const { stream } of streams) if (!watched.has(stream)) watched.set(stream, follow(container, runId, stream));
  fill(hint, watched.size === 0 ? 'No streams.' : '');
}
