/**
 * Pieces of the Share dialog's form: what to share, the access choice, a
 * suggestion of the search list and the chips of the chosen grantees.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { h, replaceChildren, uniqueId } from '../dom';
import { expiryChoices, IGranteeSuggestion } from './format';
import { ShareAccess } from '../tokens';
import type { IShareDialogOptions } from './types';

/**
 * What to share: the whole server or only the file (a choice when the dialog
 * was opened from a notebook), or a sentence saying which.
 */
export function scopeChoice(options: IShareDialogOptions): {
  part: HTMLElement;
  scopeFile: HTMLInputElement | null;
} {
  const trans = options.trans;
  let scopeFile: HTMLInputElement | null = null;
  let part: HTMLElement;
  if (options.mode === 'choose' && options.filePath) {
    const wholeId = uniqueId('cgu-share-scope-all');
    const fileId = uniqueId('cgu-share-scope-file');
    const name = uniqueId('cgu-share-scope');
    scopeFile = h('input', {
      type: 'radio',
      id: fileId,
      name,
      value: 'file',
      checked: true,
      'data-cgu': 'share-scope-file'
    });
    const whole = h('input', {
      type: 'radio',
      id: wholeId,
      name,
      value: 'notebook',
      'data-cgu': 'share-scope-notebook'
    });
    part = h(
      'fieldset',
      { class: 'cgu-Share-fieldset' },
      h('legend', {}, trans.__('What to share')),
      h(
        'div',
        { class: 'cgu-Share-radio' },
        scopeFile,
        h('label', { for: fileId }, trans.__('Only %1', options.filePath))
      ),
      h(
        'div',
        { class: 'cgu-Share-radio' },
        whole,
        h('label', { for: wholeId }, trans.__('The whole notebook server'))
      )
    );
  } else {
    part = h(
      'p',
      { class: 'cgu-Share-what', 'data-cgu': 'share-what' },
      options.mode === 'file' && options.filePath
        ? trans.__('Sharing only %1.', options.filePath)
        : trans.__('Sharing the whole notebook server.')
    );
  }
  return { part, scopeFile };
}

/** The access fieldset: read-only or editable. */
export function accessFieldset(
  initial: ShareAccess,
  onChange: (value: ShareAccess) => void,
  trans: TranslationBundle
): HTMLElement {
  const accessName = uniqueId('cgu-share-access');
  const accessChoice = (
    value: ShareAccess,
    label: string,
    description: string
  ): HTMLElement => {
    const id = uniqueId(`cgu-share-access-${value}`);
    return h(
      'div',
      { class: 'cgu-Share-radio' },
      h('input', {
        type: 'radio',
        id,
        name: accessName,
        value,
        checked: initial === value,
        'data-cgu': `share-access-${value}`,
        onchange: () => onChange(value)
      }),
      h('label', { for: id }, label),
      h('span', { class: 'cgu-Share-note' }, description)
    );
  };
  return h(
    'fieldset',
    { class: 'cgu-Share-fieldset' },
    h('legend', {}, trans.__('Access')),
    accessChoice(
      'read',
      trans.__('Read-only'),
      trans.__('open and read files; no saving, running cells or terminals')
    ),
    accessChoice(
      'edit',
      trans.__('Can edit'),
      trans.__('change and save files, run code, open terminals')
    )
  );
}

/** One option of the suggestion list. */
export function suggestionItem(
  s: IGranteeSuggestion,
  id: string,
  active: boolean,
  onPick: () => void,
  trans: TranslationBundle
): HTMLElement {
  return h(
    'li',
    {
      id,
      role: 'option',
      class: 'cgu-Share-suggestion',
      'aria-selected': active ? 'true' : 'false',
      'data-cgu': 'share-suggestion',
      'data-grantee': `${s.kind}:${s.name}`,
      // Keep the focus in the search box while clicking.
      onmousedown: (event: MouseEvent) => event.preventDefault(),
      onclick: onPick
    },
    h(
      'span',
      { class: `cgu-Badge cgu-Badge-${s.kind}` },
      s.kind === 'group' ? trans.__('group') : trans.__('user')
    ),
    ' ',
    s.label
  );
}

/** The chips of the chosen people and groups; hidden when there is none. */
export function renderChips(
  list: HTMLUListElement,
  picked: ReadonlyArray<IGranteeSuggestion>,
  onRemove: (removed: IGranteeSuggestion) => void,
  trans: TranslationBundle
): void {
  replaceChildren(
    list,
    ...picked.map(p => chipItem(p, () => onRemove(p), trans))
  );
  list.hidden = picked.length === 0;
}

/** The chip of a chosen person or group, with its remove button. */
function chipItem(
  p: IGranteeSuggestion,
  onRemove: () => void,
  trans: TranslationBundle
): HTMLElement {
  return h(
    'li',
    {
      class: 'cgu-Chip',
      'data-cgu': 'grantee-chip',
      'data-grantee': `${p.kind}:${p.name}`
    },
    h(
      'span',
      { class: 'cgu-Chip-label', title: p.label },
      p.kind === 'group'
        ? trans.__('%1 (group)', p.display_name)
        : p.display_name
    ),
    h(
      'button',
      {
        type: 'button',
        class: 'cgu-Chip-remove',
        'aria-label': trans.__('Remove %1', p.display_name),
        title: trans.__('Remove %1', p.display_name),
        onclick: onRemove
      },
      '×'
    )
  );
}

/** Who: a search box with a suggestion list (ARIA combobox pattern), and the chips of the chosen. */
export function whoPart(
  onInput: () => void,
  trans: TranslationBundle
): {
  part: HTMLElement;
  search: HTMLInputElement;
  listbox: HTMLUListElement;
  chips: HTMLUListElement;
  hint: HTMLElement;
} {
  // Who: a search box with a suggestion list (ARIA combobox pattern).
  const searchId = uniqueId('cgu-share-search');
  const listId = uniqueId('cgu-share-suggestions');
  const hintId = uniqueId('cgu-share-hint');
  const search = h('input', {
    type: 'text',
    id: searchId,
    class: 'jp-mod-styled cgu-Share-search',
    role: 'combobox',
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-autocomplete': 'list',
    'aria-expanded': 'false',
    'aria-controls': listId,
    'aria-describedby': hintId,
    placeholder: trans.__('Name, user name or group'),
    'data-cgu': 'share-search',
    oninput: onInput
  });
  const listbox = h('ul', {
    id: listId,
    role: 'listbox',
    class: 'cgu-Share-suggestions',
    'aria-label': trans.__('Suggestions'),
    'data-cgu': 'share-suggestions',
    hidden: true
  });
  const chips = h('ul', {
    class: 'cgu-Share-chips',
    'aria-label': trans.__('Chosen people and groups'),
    'data-cgu': 'share-grantees'
  });
  const hint = h(
    'div',
    { id: hintId, class: 'cgu-Share-hint' },
    trans.__(
      'Type at least 2 letters, then pick from the list (arrow keys and Enter).'
    )
  );
  const part = h(
    'div',
    { class: 'cgu-Share-who' },
    h('label', { for: searchId }, trans.__('Share with people or groups')),
    chips,
    h('div', { class: 'cgu-Combobox' }, search, listbox),
    hint
  );
  return { part, search, listbox, chips, hint };
}

/** The expiry select and the Share button. */
export function expiryRow(
  defaultExpiry: string,
  onShare: () => void,
  trans: TranslationBundle
): { part: HTMLElement; expiry: HTMLSelectElement; submit: HTMLButtonElement } {
  // Expiry.
  const expiryId = uniqueId('cgu-share-expiry');
  const expiry = h(
    'select',
    {
      id: expiryId,
      class: 'jp-mod-styled cgu-Share-expiry',
      'data-cgu': 'share-expiry'
    },
    ...expiryChoices(trans).map(choice =>
      h(
        'option',
        {
          value: choice.id,
          selected: choice.id === defaultExpiry
        },
        choice.label
      )
    )
  );
  const submit = h(
    'button',
    {
      type: 'button',
      class: 'jp-Button jp-mod-styled jp-mod-accept cgu-Share-submit',
      'data-cgu': 'share-submit',
      disabled: true,
      onclick: onShare
    },
    trans.__('Share')
  );
  const part = h(
    'div',
    { class: 'cgu-Share-row' },
    h('label', { for: expiryId }, trans.__('Ends')),
    expiry,
    h('span', { class: 'cgu-Share-spacer' }),
    submit
  );
  return { part, expiry, submit };
}

/** The line that says what happened (the dialog makes it an alert on errors). */
export function statusLine(): HTMLElement {
  return h('div', {
    class: 'cgu-Share-status',
    role: 'status',
    'aria-live': 'polite',
    'data-cgu': 'share-status'
  });
}

/** The link of the share just made, with its Copy button. */
export function linkPart(
  onCopy: (text: string) => void,
  trans: TranslationBundle
): {
  linkBox: HTMLElement;
  link: HTMLInputElement;
} {
  // The link of the share just made.
  const linkId = uniqueId('cgu-share-link');
  const link = h('input', {
    type: 'text',
    id: linkId,
    class: 'jp-mod-styled cgu-Share-linkInput',
    readonly: true,
    'data-cgu': 'share-link',
    onfocus: (event: FocusEvent) => (event.target as HTMLInputElement).select()
  });
  const linkBox = h(
    'div',
    { class: 'cgu-Share-link', hidden: true },
    h('label', { for: linkId }, trans.__('Link to send')),
    link,
    h(
      'button',
      {
        type: 'button',
        class: 'jp-Button jp-mod-styled cgu-Share-copy',
        'data-cgu': 'share-copy',
        onclick: () => onCopy(link.value)
      },
      trans.__('Copy')
    )
  );
  return { linkBox, link };
}
