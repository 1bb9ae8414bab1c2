import { useCallback, useEffect, useRef, useState } from 'react';

export interface ApiState<T> {
  /** The last good answer (kept while reloading or after a failed refresh). */
  data: T | undefined;
  /** The last failure; cleared by the next success. */
  error: unknown;
  loading: boolean;
  /** When `data` was last received. */
  updatedAt: Date | undefined;
  reload: () => void;
}

/**
 * Loads data with `load(signal)` when the component mounts and whenever `deps` change; an answer that
 * arrives after the component moved on (unmounted, other deps) is dropped. Use with the clients of
 * `useClients()` and `unwrap`: `useApi((signal) => hub.raw.GET(...).then(unwrap), [workspace])`.
 */
export function useApi<T>(load: (signal: AbortSignal) => Promise<T>, deps: readonly unknown[]): ApiState<T> {
  return usePolling(load, 0, deps);
}

/**
 * Like {@link useApi}, and for live data: loads again every `intervalMs` (0: never) while the page is visible,
 * and at once when it becomes visible again. A slow answer is never overlapped by the next poll.
 */
export function usePolling<T>(
  load: (signal: AbortSignal) => Promise<T>,
  intervalMs: number,
  deps: readonly unknown[],
): ApiState<T> {
  const [state, setState] = useState<Omit<ApiState<T>, 'reload'>>({
    data: undefined,
    error: undefined,
    loading: true,
    updatedAt: undefined,
  });
  const [generation, setGeneration] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  const reload = useCallback(() => setGeneration((g) => g + 1), []);

  useEffect(() => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let running = false;
    const run = async () => {
      if (running || controller.signal.aborted) return;
      running = true;
      setState((s) => ({ ...s, loading: true }));
      try {
        const data = await loadRef.current(controller.signal);
        if (!controller.signal.aborted)
          setState({ data, error: undefined, loading: false, updatedAt: new Date() });
      } catch (error) {
        if (!controller.signal.aborted) setState((s) => ({ ...s, error, loading: false }));
      } finally {
        running = false;
        schedule();
      }
    };
    const schedule = () => {
      clearTimeout(timer);
      if (intervalMs > 0 && !controller.signal.aborted && document.visibilityState === 'visible')
        timer = setTimeout(() => void run(), intervalMs);
    };
    const onVisibility = () => {
      if (document.visibilityState === 'visible') void run();
      else clearTimeout(timer);
    };
    void run();
    if (intervalMs > 0) document.addEventListener('visibilitychange', onVisibility);
    return () => {
      controller.abort();
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [...deps, intervalMs, generation]);

  return { ...state, reload };
}
