/**
 * Pieces of the file picker: its frame, one entry of the tree, the chips of
 * the excluded patterns and the fieldset to add patterns.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { h, replaceChildren, uniqueId } from '../dom';
import { formatBytes } from '../format';
import { filesText, normalizePath } from './selection';
import { IFileEntry } from '../apiTypes';

/** The picker's frame: its label, the tree, the summary, the warning and the status. */
export function pickerFrame(label: string): {
  tree: HTMLUListElement;
  summary: HTMLElement;
  warning: HTMLElement;
  status: HTMLElement;
  parts: HTMLElement[];
} {
  const labelId = uniqueId('cgu-picker-label');
  const tree = h('ul', {
    class: 'cgu-Picker-list cgu-Picker-root',
    'aria-labelledby': labelId
  });
  const summary = h('div', {
    class: 'cgu-Picker-summary',
    role: 'status',
    'aria-live': 'polite',
    'data-cgu': 'picker-total'
  });
  const warning = h('div', {
    class: 'cgu-Picker-warning',
    role: 'alert',
    'data-cgu': 'picker-over-limit',
    hidden: true
  });
  const status = h('div', {
    class: 'cgu-Picker-status',
    role: 'alert',
    'data-cgu': 'picker-status'
  });
  const parts = [
    h('div', { class: 'cgu-Picker-label', id: labelId }, label),
    h('div', { class: 'cgu-Picker-tree', 'data-cgu': 'picker-tree' }, tree),
    summary,
    warning,
    status
  ];
  return { tree, summary, warning, status, parts };
}

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
  actions: IRowActions,
  trans: TranslationBundle
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
    isDir ? filesText(entry.files, trans) : ''
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
          'aria-label': trans.__('Show what %1 contains', entry.name),
          title: trans.__('Show what %1 contains', entry.name),
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

/** A line of the tree that stands for what is not there: "Loading…", "empty folder". */
export function placeholderItem(text: string): HTMLLIElement {
  return h('li', { class: 'cgu-Picker-empty' }, text);
}

/** The chips of the excluded patterns, or a note when there is none. */
export function renderPatternList(
  list: HTMLUListElement,
  patterns: ReadonlyArray<string>,
  onRemove: (pattern: string) => void,
  trans: TranslationBundle
): void {
  replaceChildren(
    list,
    ...patterns.map(pattern =>
      patternChip(pattern, () => onRemove(pattern), trans)
    ),
    patterns.length === 0
      ? h(
          'li',
          { class: 'cgu-Picker-note' },
          trans.__('No pattern: nothing is left out.')
        )
      : null
  );
}

/** The chip of an excluded pattern, with its remove button. */
export function patternChip(
  pattern: string,
  onRemove: () => void,
  trans: TranslationBundle
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
        'aria-label': trans.__('Remove the pattern %1', pattern),
        title: trans.__('Remove the pattern %1', pattern),
        'data-cgu': 'picker-pattern-remove',
        onclick: onRemove
      },
      '×'
    )
  );
}

/** The editable list of excluded patterns (templates). */
export function patternFieldset(
  onAdd: () => void,
  trans: TranslationBundle
): {
  part: HTMLElement;
  list: HTMLUListElement;
  input: HTMLInputElement;
  error: HTMLElement;
} {
  const inputId = uniqueId('cgu-picker-pattern');
  const noteId = uniqueId('cgu-picker-pattern-note');
  const patternList = h('ul', {
    class: 'cgu-Picker-patterns',
    'aria-label': trans.__('Excluded patterns'),
    'data-cgu': 'picker-patterns'
  });
  const patternInput = h('input', {
    type: 'text',
    id: inputId,
    class: 'jp-mod-styled cgu-Picker-patternInput',
    placeholder: trans.__('e.g. *.ckpt or data/raw'),
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
    h('legend', {}, trans.__('Excluded patterns')),
    patternList,
    h(
      'div',
      { class: 'cgu-Picker-patternRow' },
      h('label', { for: inputId }, trans.__('Add a pattern')),
      patternInput,
      h(
        'button',
        {
          type: 'button',
          class: 'jp-Button jp-mod-styled cgu-Picker-patternAdd',
          'data-cgu': 'picker-pattern-add',
          onclick: onAdd
        },
        trans.__('Add')
      )
    ),
    h(
      'div',
      { id: noteId, class: 'cgu-Picker-note' },
      trans.__(
        'Files and folders matching these patterns are left out (a pattern without "/" matches names anywhere, e.g. *.pyc).'
      )
    ),
    patternError
  );
  return { part, list: patternList, input: patternInput, error: patternError };
}
