/**
 * An async iterable that runs `check` when its first item is asked for, then hands over to the
 * iterator `make()` gives, without a generator around it (which would add a promise per item).
 * A failed check is the first `next()`'s rejection, as it was from a generator that checked first.
 */
export function afterCheck<T>(check: () => Promise<void>, make: () => AsyncIterable<T>): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<T> {
      let inner: AsyncIterator<T> | null = null;
      let starting: Promise<AsyncIterator<T>> | null = null;
      let ended = false;
      const started = (): Promise<AsyncIterator<T>> =>
        (starting ??= check().then(
          () => (inner = make()[Symbol.asyncIterator]()),
          (e: unknown) => {
            ended = true;
            throw e;
          },
        ));
      const finished = (): Promise<IteratorResult<T>> => Promise.resolve({ done: true, value: undefined });
      return {
        next: (): Promise<IteratorResult<T>> => (inner ? inner.next() : ended ? finished() : started().then((it) => it.next())),
        return: (value?: unknown): Promise<IteratorResult<T>> => {
          if (inner) return inner.return ? inner.return(value) : finished();
          if (!starting) {
            ended = true; // nothing started: nothing to end, and nothing more to give
            return finished();
          }
          return starting.then(
            (it) => (it.return ? it.return(value) : finished()),
            () => finished(),
          );
        },
      };
    },
  };
}
