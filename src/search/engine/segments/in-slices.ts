/**
 * Runs `steps` to its end a step per turn of the event loop, so that requests are answered between
 * its steps; resolves with what it returns.
 */
export function runInSlices<T>(steps: Iterator<void, T>): Promise<T> {
  return new Promise((resolve, reject) => {
    const next = () => {
      try {
        const step = steps.next();
        if (step.done) resolve(step.value);
        else setImmediate(next);
      } catch (error) {
        reject(error);
      }
    };
    next();
  });
}
