// What a run holds (listeners, timers, the user's terminal), each with the call that lets it go: all are let go by
// one call, in the reverse order they were taken, once, every one of them even when one fails.
export class Disposables {
  private readonly releases: (() => void)[] = [];
  private disposed = false;

  // Takes a resource's release; one added after dispose() runs at once.
  add(release: () => void): void {
    if (this.disposed) release();
    else this.releases.push(release);
  }

  // Lets everything go; the first failure is thrown once all have run.
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    let failure: { error: unknown } | undefined;
    for (const release of this.releases.splice(0).reverse()) {
      try {
        release();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }
}
