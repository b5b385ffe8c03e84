import { useCallback, useEffect, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload: () => void;
}

/** Loads data whenever `deps` change; `reload` loads it again (after an action changed it). */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => current && setState({ data, loading: false }),
      (error: Error) => current && setState({ error: error.message, loading: false }),
    );
    return () => {
      current = false;
    };
    // The caller names what the load depends on.
  }, [...deps, round]);
  const reload = useCallback(() => setRound((value) => value + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

export interface ActionState {
  busy: boolean;
  /** What the last action did, or the API's message when it failed. */
  outcome: { ok: boolean; message: string } | undefined;
  run: (action: () => Promise<string>) => Promise<boolean>;
  clear: () => void;
}

/** Runs a write and keeps what it said: success or the API's own error message. */
export function useAction(): ActionState {
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<ActionState['outcome']>();
  const run = useCallback(async (action: () => Promise<string>) => {
    setBusy(true);
    setOutcome(undefined);
    try {
      setOutcome({ ok: true, message: await action() });
      return true;
    } catch (error) {
      setOutcome({ ok: false, message: (error as Error).message });
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, outcome, run, clear: () => setOutcome(undefined) };
}

/** Cursor pages: the cursors of the pages before this one, so that Previous works too. */
export function useCursorPages(resetOn: unknown[]) {
  const [cursors, setCursors] = useState<string[]>([]);
  // A new filter starts at the first page.
  useEffect(() => setCursors([]), resetOn);
  return {
    cursor: cursors[cursors.length - 1],
    page: cursors.length + 1,
    next: (cursor: string) => setCursors((list) => [...list, cursor]),
    previous: () => setCursors((list) => list.slice(0, -1)),
  };
}
