/**
 * Pieces of the file picker: one entry of the tree, the chip of an excluded
 * pattern and the fieldset to add patterns.
 */
import { h, uniqueId } from '../dom';
import { formatBytes } from '../format';
import { filesText, normalizePath } from './selection';
import { IFileEntry } from '../apiTypes';

/** One rendered entry. */
export interface IRow {
  entry: IFileEntry;
  item: HTMLLIElement;
  checkbox: HTMLInputElement;
  size: HTMLElement;
  count: HTMLElement;
  reason: HTMLElement;
  toggle: HTMLButtonElement | null;
  children: HTMLUListElement | null;
}

/** What the controls of an entry do. */
export interface IRowActions {
  toggle: (path: string, checked: boolean) => void;
  expand: (path: string, open: boolean) => void;
}

/** Renders one entry of the tree; `path` is its normalised path. */
export function renderPickerRow(
  entry: IFileEntry,
  actions: IRowActions
): { path: string; row: IRow } {
  const path = normalizePath(entry.path);
  const isDir = entry.type === 'directory';
  const checkboxId = uniqueId('cgu-picker-entry');
  const detailsId = uniqueId('cgu-picker-details');
  const checkbox = h('input', {
    type: 'checkbox',
    id: checkboxId,
    class: 'cgu-Picker-checkbox',
    'aria-describedby': detailsId,
    'data-cgu': 'picker-checkbox',
    'data-path': path,
    onchange: (event: Event) =>
      actions.toggle(path, (event.target as HTMLInputElement).checked)
  });
  const reason = h('span', {
    class: 'cgu-Picker-reason',
    'data-cgu': 'picker-reason'
  });
  const size = h(
    'span',
    { class: 'cgu-Picker-size', 'data-cgu': 'picker-size' },
    formatBytes(entry.size)
  );
  const count = h(
    'span',
    { class: 'cgu-Picker-count', 'data-cgu': 'picker-count' },
    isDir ? filesText(entry.files) : ''
  );
  const children = isDir
    ? h('ul', { class: 'cgu-Picker-list', hidden: true })
    : null;
  const toggle = isDir
    ? h(
        'button',
        {
          type: 'button',
          class: 'cgu-Picker-toggle',
          'aria-expanded': 'false',
          'aria-label': `Show what ${entry.name} contains`,
          title: `Show what ${entry.name} contains`,
          'data-cgu': 'picker-expand',
          'data-path': path,
          onclick: () => {
            const open = toggle?.getAttribute('aria-expanded') !== 'true';
            actions.expand(path, open);
          }
        },
        h('span', { class: 'cgu-Picker-caret', 'aria-hidden': 'true' })
      )
    : null;
  const item = h(
    'li',
    {
      class: 'cgu-Picker-item',
      'data-cgu': 'picker-entry',
      'data-path': path,
      'data-type': entry.type
    },
    h(
      'div',
      { class: 'cgu-Picker-row' },
      toggle ?? h('span', { class: 'cgu-Picker-togglePlaceholder' }),
      checkbox,
      h(
        'label',
        { for: checkboxId, class: 'cgu-Picker-name', title: path },
        isDir ? `${entry.name}/` : entry.name
      ),
      h(
        'span',
        { id: detailsId, class: 'cgu-Picker-details' },
        size,
        count,
        reason
      )
    ),
    children
  );
  const row: IRow = {
    entry,
    item,
    checkbox,
    size,
    count,
    reason,
    toggle,
    children
  };
  return { path, row };
}

/** The chip of an excluded pattern, with its remove button. */
export function patternChip(
  pattern: string,
  onRemove: () => void
): HTMLElement {
  return h(
    'li',
    {
      class: 'cgu-Chip',
      'data-cgu': 'picker-pattern',
      'data-pattern': pattern
    },
    h('code', { class: 'cgu-Chip-label' }, pattern),
    h(
      'button',
      {
        type: 'button',
        class: 'cgu-Chip-remove',
        'aria-label': `Remove the pattern ${pattern}`,
        title: `Remove the pattern ${pattern}`,
        'data-cgu': 'picker-pattern-remove',
        onclick: onRemove
      },
      '×'
    )
  );
}

/** The editable list of excluded patterns (templates). */
export function patternFieldset(onAdd: () => void): {
  part: HTMLElement;
  list: HTMLUListElement;
  input: HTMLInputElement;
  error: HTMLElement;
} {
  const inputId = uniqueId('cgu-picker-pattern');
  const noteId = uniqueId('cgu-picker-pattern-note');
  const patternList = h('ul', {
    class: 'cgu-Picker-patterns',
    'aria-label': 'Excluded patterns',
    'data-cgu': 'picker-patterns'
  });
  const patternInput = h('input', {
    type: 'text',
    id: inputId,
    class: 'jp-mod-styled cgu-Picker-patternInput',
    placeholder: 'e.g. *.ckpt or data/raw',
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': noteId,
    'data-cgu': 'picker-pattern-input'
  });
  const patternError = h('div', {
    class: 'cgu-Picker-patternError',
    role: 'alert',
    'data-cgu': 'picker-pattern-error'
  });
  const part = h(
    'fieldset',
    { class: 'cgu-Picker-fieldset' },
    h('legend', {}, 'Excluded patterns'),
    patternList,
    h(
      'div',
      { class: 'cgu-Picker-patternRow' },
      h('label', { for: inputId }, 'Add a pattern'),
      patternInput,
      h(
        'button',
        {
          type: 'button',
          class: 'jp-Button jp-mod-styled cgu-Picker-patternAdd',
          'data-cgu': 'picker-pattern-add',
          onclick: onAdd
        },
        'Add'
      )
    ),
    h(
      'div',
      { id: noteId, class: 'cgu-Picker-note' },
      'Files and folders matching these patterns are left out ' +
        '(a pattern without "/" matches names anywhere, e.g. *.pyc).'
    ),
    patternError
  );
  return { part, list: patternList, input: patternInput, error: patternError };
}
