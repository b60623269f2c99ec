import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApiError } from '../api.js';
import { asApiError } from '../data/load.js';
import { listPhrase } from './list-name.js';
import { Failure } from './states.js';

/**
 * The confirmation before a suppression is removed, on the Suppressions page and on a message: a modal
 * native `<dialog>` (focus stays inside, Escape cancels). `reason` as people read it (`reasonText`);
 * `stream`, the list it is removed from (the project-wide one when `undefined`). `remove` does the
 * removal; `onClose` says whether it happened.
 */
export function RemoveSuppressionDialog(props: {
  email: string;
  reason: string;
  stream: string | undefined;
  remove(): Promise<unknown>;
  onClose(removed: boolean): void;
}) {
  const { email, reason, stream, remove, onClose } = props;
  const dialog = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError>();
  const removed = useRef(false);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  const confirm = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await remove();
      removed.current = true;
      dialog.current?.close();
    } catch (failure) {
      setError(asApiError(failure));
      setBusy(false);
    }
  };
  return (
    <dialog ref={dialog} aria-labelledby="remove-title" aria-describedby="remove-description" onClose={() => onClose(removed.current)}>
      <h2 id="remove-title">Remove this suppression?</h2>
      <p id="remove-description">
        {stream === undefined ? (
          <>
            <bdi class="literal">{email}</bdi> ({reason}) will no longer be held back from sending.
          </>
        ) : (
          <>
            <bdi class="literal">{email}</bdi> ({reason}) leaves {listPhrase(stream)}: mail of that stream is no longer held back, unless
            the project-wide list holds the address.
          </>
        )}
      </p>
      {error === undefined ? null : <Failure error={error} doing="remove the suppression" />}
      <div class="dialog-buttons">
        <button type="button" class="danger" disabled={busy} onClick={() => void confirm()}>
          Remove
        </button>
        <button type="button" onClick={() => dialog.current?.close()}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}
