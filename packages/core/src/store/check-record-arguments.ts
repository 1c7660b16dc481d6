import { invalidInput } from '../errors/invalid-input.js';
import { checkedCall as checked } from './checked-call.js';
import type { EventStore, HistoryStore, StateStore, StreamStore } from './workflow-store.js';
import { str, optStr, num, fence, obj, index } from './check-argument-types.js';

// `withArgumentChecks` for the run's records: `state`, `events`, `streams` and `history`.

export function checkedState(state: StateStore): StateStore {
  return {
    set: (runId, f, key, value, now) =>
      checked(
        () => {
          str('state.set', 'runId', runId);
          fence('state.set', f, true);
          str('state.set', 'key', key);
          num('state.set', 'now', now);
        },
        () => state.set(runId, f, key, value, now),
      ),
    get: (runId) =>
      checked(
        () => {
          str('state.get', 'runId', runId);
        },
        () => state.get(runId),
      ),
  };
}

export function checkedEvents(events: EventStore): EventStore {
  return {
    deliver: (runId, name, payload, now, options) =>
      checked(
        () => {
          str('events.deliver', 'runId', runId);
          str('events.deliver', 'name', name);
          num('events.deliver', 'now', now);
          if (options !== undefined) optStr('events.deliver', 'options.idempotencyKey', obj('events.deliver', 'options', options).idempotencyKey);
        },
        () => (options === undefined ? events.deliver(runId, name, payload, now) : events.deliver(runId, name, payload, now, options)),
      ),
    get: (runId, name, seq) =>
      checked(
        () => {
          str('events.get', 'runId', runId);
          str('events.get', 'name', name);
          if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) throw invalidInput('events.get: seq', 'must be an integer from 1', seq);
        },
        () => events.get(runId, name, seq),
      ),
  };
}

export function checkedStreams(streams: StreamStore): StreamStore {
  return {
    append: (runId, f, entry, now) =>
      checked(
        () => {
          str('streams.append', 'runId', runId);
          fence('streams.append', f, true);
          const e = obj('streams.append', 'entry', entry);
          str('streams.append', 'entry.stream', e.stream);
          index('streams.append', 'entry.index', e.index);
          if (e.close !== undefined && e.close !== true) throw invalidInput('streams.append: entry.close', 'must be true or absent', e.close);
          if (e.close === true && e.data !== undefined) throw invalidInput('streams.append: entry.data', 'must be absent on the end marker', e.data);
          if (e.close === undefined && e.data === undefined) throw invalidInput('streams.append: entry.data', 'must be a JSON value', e.data);
          num('streams.append', 'now', now);
        },
        () => streams.append(runId, f, entry, now),
      ),
    read: (runId, stream, from, limit) =>
      checked(
        () => {
          str('streams.read', 'runId', runId);
          str('streams.read', 'stream', stream);
          index('streams.read', 'from', from);
          if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1 || limit > 1000)
            throw invalidInput('streams.read: limit', 'must be an integer from 1 to 1000', limit);
        },
        () => streams.read(runId, stream, from, limit),
      ),
    list: (runId) =>
      checked(
        () => str('streams.list', 'runId', runId),
        () => streams.list(runId),
      ),
  };
}

export function checkedHistory(history: HistoryStore): HistoryStore {
  return {
    list: (runId) =>
      checked(
        () => {
          str('history.list', 'runId', runId);
        },
        () => history.list(runId),
      ),
  };
}
