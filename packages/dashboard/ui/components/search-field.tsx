/**
 * A search box whose text is applied when committed: Enter, leaving the field, or clearing it (not on
 * every keystroke, so the address and history get one entry per search). It follows `value`, so back
 * and forward update it.
 */
export function SearchField(props: {
  id: string;
  label: string;
  value: string | undefined;
  placeholder: string;
  hint?: string;
  onChange(value: string | undefined): void;
}) {
  const { id, label, value, placeholder, hint, onChange } = props;
  const commit = (text: string) => {
    const next = text.trim() || undefined;
    if (next !== value) onChange(next);
  };
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        key={value ?? ''}
        type="search"
        defaultValue={value ?? ''}
        placeholder={placeholder}
        spellcheck={false}
        autoComplete="off"
        aria-describedby={hint === undefined ? undefined : `${id}-hint`}
        onChange={(event) => commit(event.currentTarget.value)}
        onSearch={(event) => commit(event.currentTarget.value)}
      />
      {hint === undefined ? null : (
        <span class="note" id={`${id}-hint`}>
          {hint}
        </span>
      )}
    </div>
  );
}
