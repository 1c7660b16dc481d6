import type { StepContext } from '../define/workflow-context.js';

/** What an untimed attempt's context reads its signal from (`UntimedAttempt` in run-step-body). */
export interface SignalSource {
  signal(): AbortSignal;
}

// A base constructor that returns its argument: a subclass's private field is then added to that
// object. It ties a context to its attempt invisibly (no own key, symbol or enumerable property,
// the prototype stays `Object.prototype`), so one getter shared by every context can find it.
class Returns {
  constructor(target: object) {
    // biome-ignore lint/correctness/noConstructorReturn: the point of this class (see above)
    return target;
  }
}

class Attached extends Returns {
  readonly #source: SignalSource;

  constructor(target: object, source: SignalSource) {
    super(target);
    this.#source = source;
  }

  static source(context: object): SignalSource {
    return (context as Attached).#source;
  }
}

// The one getter of every untimed context's `signal`. A getter in an object literal is a new
// closure per context, which V8 can only hold in a dictionary-mode object with its own accessor
// pair, allocated in the old generation: the pair then kept each step's young objects alive
// through minor collections until the next major one (issue 18: ~0.5 KB per step promoted, and
// ~1 µs per context). One shared getter keeps every context on one hidden class.
const SIGNAL: PropertyDescriptor = {
  get(this: object): AbortSignal {
    return Attached.source(this).signal();
  },
  enumerable: true,
  configurable: true,
};

/**
 * The context of an untimed attempt: a plain object with own enumerable `runId`, `key` and
 * `attempt`, then `signal`, an own enumerable, configurable getter that returns `source.signal()`
 * (made when first read) — the same properties, in the same order and with the same attributes, as
 * the object literal `{ runId, key, attempt, get signal() { … } }`.
 */
export function untimedContext(identity: { runId: string; key: string; attempt: number }, source: SignalSource): StepContext {
  const context = { runId: identity.runId, key: identity.key, attempt: identity.attempt };
  Object.defineProperty(context, 'signal', SIGNAL);
  new Attached(context, source);
  return context as StepContext;
}
