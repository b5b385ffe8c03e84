import type { ActionState } from '../../../web/src/hooks.js';

/** What an action did, announced to screen readers: a status when it worked, an alert when not. */
export function Outcome({ action }: { action: ActionState }) {
  const { outcome } = action;
  if (!outcome) return null;
  return (
    <p class={outcome.ok ? 'outcome ok' : 'outcome error'} role={outcome.ok ? 'status' : 'alert'}>
      {outcome.message}
    </p>
  );
}

/** A load that failed, with the API's message. */
export function LoadError({ message }: { message: string | undefined }) {
  if (!message) return null;
  return (
    <p class="outcome error" role="alert">
      {message}
    </p>
  );
}
