import type { TrackingIdPage, TrackingIdSummary } from '@mailwarden/core';
import { useCombobox } from 'downshift';
import { useEffect, useRef } from 'preact/hooks';
import type { Api } from '../api.js';
import { useTrackingIdSearch } from '../data/tracking-ids.js';
import { formatCount, formatRate } from '../format.js';

/** How many tracking IDs the list offers at once; typing narrows it. */
export const OPTION_LIMIT = 20;

/** An option: a tracking ID with its counters, or the one that clears the filter. */
interface Option {
  trackingId: string | null;
  summary?: TrackingIdSummary;
}

const allTrackingIds: Option = { trackingId: null };

/**
 * The Tracking ID combobox (WAI-ARIA combobox with a listbox popup, by downshift): typing searches the
 * project's tracking IDs, each option shows its counters. With no text the first option, All tracking
 * IDs, clears the filter; after typing the options are the matches only, so ArrowDown then Enter, or
 * Enter alone, chooses the first match. Arrow keys, Home / End, Enter, Escape and the mouse work as the
 * pattern says.
 */
export function TrackingIdCombobox({
  api,
  trackingId,
  onChoose,
}: {
  api: Api;
  trackingId: string | null;
  onChoose(trackingId: string | null): void;
}) {
  const { result, wanted, find } = useTrackingIdSearch(api, OPTION_LIMIT);
  const searchText = wanted ?? '';
  // Options answer the text searched: while a newer search runs, the older matches are not offered.
  const current = result !== undefined && result.text === searchText;
  const matches: Option[] = current ? (result.page?.items ?? []).map((summary) => ({ trackingId: summary.trackingId, summary })) : [];
  const options: Option[] = searchText === '' ? [allTrackingIds, ...matches] : matches;
  const selected: Option = trackingId === null ? allTrackingIds : { trackingId };
  // Enter pressed before the search for this text answered: its first match is chosen when it does.
  const chooseFirstOf = useRef<string | undefined>(undefined);
  const { isOpen, highlightedIndex, closeMenu, getLabelProps, getInputProps, getMenuProps, getItemProps, getToggleButtonProps } =
    useCombobox<Option>({
      items: options,
      // The text is downshift's own (a controlled text under Preact loses keystrokes typed quickly); it
      // follows the selected item, so back / forward and links that change the filter change the text.
      selectedItem: selected,
      itemToString: (option) => option?.trackingId ?? '',
      itemToKey: (option) => option?.trackingId ?? null,
      onInputValueChange: ({ inputValue: text = '', type }) => {
        if (type === useCombobox.stateChangeTypes.InputChange) find(text);
      },
      onIsOpenChange: ({ isOpen: open, inputValue: text = '', type }) => {
        // Opening by click or arrow shows the whole list when the box holds the chosen ID; typing searches.
        if (open && type !== useCombobox.stateChangeTypes.InputChange) find(text === (trackingId ?? '') ? '' : text);
      },
      onSelectedItemChange: ({ selectedItem }) => onChoose(selectedItem?.trackingId ?? null),
      stateReducer: (state, { type, changes }) => {
        // Escape closes the list; on a closed list it keeps the filter instead of clearing it.
        if (type === useCombobox.stateChangeTypes.InputKeyDownEscape && !state.isOpen) return state;
        // Enter with nothing highlighted after typing chooses the first match (as ArrowDown, Enter would).
        if (type === useCombobox.stateChangeTypes.InputKeyDownEnter && state.highlightedIndex < 0 && searchText !== '') {
          if (!current) {
            chooseFirstOf.current = searchText;
            return state;
          }
          const [first] = matches;
          if (first !== undefined) return { ...changes, selectedItem: first, inputValue: first.trackingId ?? '' };
        }
        if (type === useCombobox.stateChangeTypes.InputChange) chooseFirstOf.current = undefined;
        return changes;
      },
    });
  useEffect(() => {
    if (result === undefined || chooseFirstOf.current !== result.text) return;
    chooseFirstOf.current = undefined;
    const first = result.page?.items[0];
    if (first === undefined) return;
    closeMenu();
    onChoose(first.trackingId);
  }, [result]);

  const shown = result?.text;
  const searching = isOpen && wanted !== undefined && wanted !== shown;
  const status = !isOpen
    ? ''
    : searching
      ? 'Searching…'
      : result?.error !== undefined
        ? `The search failed: ${result.error.message}`
        : result?.page === undefined
          ? ''
          : describeResult(result.text, result.page);

  return (
    <div class="combobox">
      {/* biome-ignore lint/a11y/noLabelWithoutControl: downshift's getLabelProps gives the label its htmlFor */}
      <label {...getLabelProps()}>Tracking ID</label>
      <div class="combobox-field">
        <input {...getInputProps({ placeholder: 'All tracking IDs: type to search', spellcheck: false, autoComplete: 'off' })} />
        <button type="button" class="combobox-toggle" aria-label="Show tracking IDs" {...getToggleButtonProps()}>
          <svg viewBox="0 0 10 6" aria-hidden="true">
            <path d="M1 1l4 4 4-4" />
          </svg>
        </button>
      </div>
      <ul
        class="listbox"
        hidden={!isOpen || options.length === 0}
        data-search={isOpen && !searching ? shown : undefined}
        {...getMenuProps()}
      >
        {isOpen &&
          options.map((option, index) => (
            <li
              key={option.trackingId ?? ''}
              class={index === highlightedIndex ? 'option highlighted' : 'option'}
              {...getItemProps({ item: option, index })}
            >
              {option.trackingId === null ? (
                <span class="option-all">All tracking IDs</span>
              ) : (
                <span class="option-id literal">
                  <bdi>{option.trackingId}</bdi>
                </span>
              )}
              {option.summary === undefined ? null : <OptionCounts summary={option.summary} />}
            </li>
          ))}
      </ul>
      <p class="combobox-status" role="status">
        {status}
      </p>
    </div>
  );
}

function OptionCounts({ summary }: { summary: TrackingIdSummary }) {
  const { messages, delivered, bounced, complained } = summary;
  return (
    <span class="option-counts">
      {formatCount(messages)} messages · {formatRate(delivered, messages)} delivered · {formatCount(bounced)} bounced ·{' '}
      {formatCount(complained)} complained
    </span>
  );
}

function describeResult(text: string, page: TrackingIdPage): string {
  if (page.count === 0) return text === '' ? 'No tracking IDs yet.' : `No tracking ID contains “${text}”.`;
  const some = page.next_cursor === null ? `${page.count}` : `The first ${page.count}`;
  const of = text === '' ? 'tracking IDs' : `tracking IDs containing “${text}”`;
  return page.next_cursor === null ? `${some} ${of}.` : `${some} ${of}; type to narrow the list.`;
}
