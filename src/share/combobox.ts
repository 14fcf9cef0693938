/**
 * The keys of the grantee search box while its suggestion list is open (ARIA
 * combobox pattern), as a pure function so every case is unit-tested: the
 * arrows move the active suggestion round the list, Escape closes the list,
 * Enter picks the active suggestion (or the only one).
 */
import type { TranslationBundle } from '@jupyterlab/translation';

/** What a key does to the open list; null: the key is not the list's. */
export type ComboboxAction =
  | { kind: 'move'; active: number }
  | { kind: 'close' }
  | { kind: 'pick'; index: number }
  | null;

/** The action of `key` on an open list of `count` suggestions, `active` being the active one (-1: none). */
export function comboboxKey(
  key: string,
  count: number,
  active: number
): ComboboxAction {
  if (count <= 0) {
    return null;
  }
  switch (key) {
    case 'ArrowDown':
    case 'ArrowUp': {
      const step = key === 'ArrowDown' ? 1 : -1;
      return { kind: 'move', active: (active + step + count) % count };
    }
    case 'Escape':
      return { kind: 'close' };
    case 'Enter': {
      const index =
        active >= 0 && active < count ? active : count === 1 ? 0 : -1;
      return index >= 0 ? { kind: 'pick', index } : null;
    }
    default:
      return null;
  }
}

/** The hint under the search box: how to use the list, or how to open it. */
export function suggestionsHint(
  count: number,
  trans: TranslationBundle
): string {
  return count > 0
    ? trans._n(
        '%1 suggestion: arrow keys to move, Enter to pick.',
        '%1 suggestions: arrow keys to move, Enter to pick.',
        count
      )
    : trans.__(
        'Type at least 2 letters, then pick from the list (arrow keys and Enter).'
      );
}

/** The id of a suggestion, for `aria-activedescendant`. */
export function suggestionId(listId: string, index: number): string {
  return `${listId}-${index}`;
}
