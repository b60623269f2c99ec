import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApiError } from '../api.js';
import { asApiError } from '../data/load.js';
import { Failure } from './states.js';

/**
 * A confirmation before an operator's action (resuming a paused stream): a modal native `<dialog>`
 * (focus stays inside, Escape cancels), as the removal of a suppression asks. `run` does the action;
 * a failure is shown inside and the dialog stays open; `onClose` follows either way.
 */
export function ConfirmDialog(props: {
  title: string;
  confirmLabel: string;
  doing: string;
  /** An action that deletes: its button is the danger red, as the removal's. */
  danger?: boolean;
  run(): Promise<unknown>;
  onClose(): void;
  children: ComponentChildren;
}) {
  const { title, confirmLabel, doing, danger = false, run, onClose, children } = props;
  const dialog = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError>();
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  const confirm = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await run();
      dialog.current?.close();
    } catch (failure) {
      setError(asApiError(failure));
      setBusy(false);
    }
  };
  return (
    <dialog ref={dialog} aria-labelledby="confirm-title" aria-describedby="confirm-description" onClose={onClose}>
      <h2 id="confirm-title">{title}</h2>
      <p id="confirm-description">{children}</p>
      {error === undefined ? null : <Failure error={error} doing={doing} />}
      <div class="dialog-buttons">
        <button type="button" class={danger ? 'danger' : 'primary'} disabled={busy} onClick={() => void confirm()}>
          {confirmLabel}
        </button>
        <button type="button" onClick={() => dialog.current?.close()}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}
