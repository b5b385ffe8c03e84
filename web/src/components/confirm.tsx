import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

interface ConfirmProps {
  title: string;
  confirmLabel: string;
  danger?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
  children: ComponentChildren;
}

/** A modal question (the browser's <dialog>: focus kept inside, Escape cancels). */
export function ConfirmDialog({ title, confirmLabel, danger, onConfirm, onCancel, children }: ConfirmProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  return (
    <dialog ref={dialog} aria-labelledby="confirm-title" onClose={onCancel} class="confirm">
      <h2 id="confirm-title">{title}</h2>
      <div>{children}</div>
      <div class="actions">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="button" class={danger ? 'danger' : 'primary'} onClick={onConfirm}>
          {confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
