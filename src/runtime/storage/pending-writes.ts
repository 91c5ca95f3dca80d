/**
 * Files a run writes side by side and needs on disk only later (its start files: none reads
 * another, and each is one atomic write of several file-system calls): started at once, awaited
 * together. A failure is held from the moment it happens (never an unhandled rejection) and thrown
 * by `settled()`, the first one if several fail.
 */
export class PendingWrites {
  private readonly writes: Array<Promise<void>> = [];
  private failure: { error: unknown } | null = null;

  add(write: Promise<void>): void {
    this.writes.push(
      write.catch((error: unknown) => {
        this.failure ??= { error };
      }),
    );
  }

  /** Resolves when every write is done; rejects with the first failure. */
  async settled(): Promise<void> {
    await Promise.all(this.writes);
    this.writes.length = 0;
    if (this.failure) throw this.failure.error;
  }
}
