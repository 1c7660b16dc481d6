/** What removing a listener left behind, so a backend knows what to unsubscribe. */
export interface ListenerRemoval {
  /** The channel has no listener left (unsubscribe from it). */
  channelEmpty: boolean;
  /** No channel has a listener left (the listening connection may go). */
  noneLeft: boolean;
}

/**
 * The listener bookkeeping of a `StoreSignals` implementation, shared by the backends: listeners
 * per channel, delivery that one throwing listener cannot stop, and what a removal leaves.
 */
export class SignalListeners {
  readonly #channels = new Map<string, Set<(message?: string) => void>>();
  // The `onLost` of each listener that gave one (StoreSignals.listen), keyed by its wrapper.
  readonly #onLost = new Map<(message?: string) => void, () => void>();

  /** Channels with at least one listener. */
  channels(): string[] {
    return [...this.#channels.keys()];
  }

  /** True when no channel has a listener. */
  get empty(): boolean {
    return this.#channels.size === 0;
  }

  /**
   * Adds a listener (a wrapper per call: the same function added twice is two listeners), with the
   * `onLost` it may have given. `first` tells whether the channel had none before (subscribe to
   * it); `remove` is idempotent.
   */
  add(channel: string, onSignal: (message?: string) => void, onLost?: () => void): { first: boolean; remove: () => ListenerRemoval } {
    const listener = (message?: string) => onSignal(message);
    let set = this.#channels.get(channel);
    const first = set === undefined;
    if (!set) this.#channels.set(channel, (set = new Set()));
    set.add(listener);
    if (onLost) this.#onLost.set(listener, onLost);
    const listeners = set;
    return {
      first,
      remove: () => {
        listeners.delete(listener);
        this.#onLost.delete(listener);
        const channelEmpty = listeners.size === 0 && this.#channels.get(channel) === listeners;
        if (channelEmpty) this.#channels.delete(channel);
        return { channelEmpty, noneLeft: this.#channels.size === 0 };
      },
    };
  }

  /** Hands `message` to every listener of `channel`, or "look at the store" (no message) to every listener of every channel when `channel` is omitted. */
  deliver(channel?: string, message?: string): void {
    const targets = channel === undefined ? [...this.#channels.values()] : [this.#channels.get(channel) ?? new Set()];
    for (const listeners of targets) {
      for (const listener of [...listeners]) {
        try {
          listener(message);
        } catch {
          // A listener must not throw (StoreSignals); one that does cannot stop the others.
        }
      }
    }
  }

  /**
   * A delivery to the listeners `channel` has now, to be made later (a signal in flight): a
   * listener added meanwhile is not called, as it would not be by a server, nor one removed meanwhile.
   */
  deliverLater(channel: string): (message?: string) => void {
    const now = [...(this.#channels.get(channel) ?? [])];
    return (message) => {
      for (const listener of now) {
        if (!this.#channels.get(channel)?.has(listener)) continue;
        try {
          listener(message);
        } catch {
          // As in deliver().
        }
      }
    };
  }

  /**
   * The listening connection broke: calls every listener's `onLost` (once per call; a backend calls
   * this once per outage). Messages are missed from now until `deliver()` without a channel.
   */
  lost(): void {
    for (const onLost of [...this.#onLost.values()]) {
      try {
        onLost();
      } catch {
        // As in deliver().
      }
    }
  }

  /** Forgets every listener. */
  clear(): void {
    this.#channels.clear();
    this.#onLost.clear();
  }
}
