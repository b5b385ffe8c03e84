/**
 * Runs `task` every `intervalMs`, never two at once; a failed run is reported and the next one tries
 * again. `stop` waits for a run in progress.
 */
export function every(intervalMs: number, task: () => Promise<unknown>, onError: (error: unknown) => void): { stop(): Promise<void> } {
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    running ??= task()
      .catch(onError)
      .finally(() => {
        running = undefined;
      });
  }, intervalMs).unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
