/**
 * Pieces of the Share dialog's form: what to share, the access choice, a
 * suggestion of the search list and a chosen grantee's chip.
 */
import { h, uniqueId } from '../dom';
import { EXPIRY_CHOICES, IGranteeSuggestion } from './format';
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
      h('legend', {}, 'What to share'),
      h(
        'div',
        { class: 'cgu-Share-radio' },
        scopeFile,
        h('label', { for: fileId }, `Only ${options.filePath}`)
      ),
      h(
        'div',
        { class: 'cgu-Share-radio' },
        whole,
        h('label', { for: wholeId }, 'The whole notebook server')
      )
    );
  } else {
    part = h(
      'p',
      { class: 'cgu-Share-what', 'data-cgu': 'share-what' },
      options.mode === 'file' && options.filePath
        ? `Sharing only ${options.filePath}.`
        : 'Sharing the whole notebook server.'
    );
  }
  return { part, scopeFile };
}

/** The access fieldset: read-only or editable. */
export function accessFieldset(
  initial: ShareAccess,
  onChange: (value: ShareAccess) => void
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
    h('legend', {}, 'Access'),
    accessChoice(
      'read',
      'Read-only',
      'open and read files; no saving, running cells or terminals'
    ),
    accessChoice(
      'edit',
      'Can edit',
      'change and save files, run code, open terminals'
    )
  );
}

/** One option of the suggestion list. */
export function suggestionItem(
  s: IGranteeSuggestion,
  id: string,
  active: boolean,
  onPick: () => void
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
      s.kind === 'group' ? 'group' : 'user'
    ),
    ' ',
    s.label
  );
}

/** The chip of a chosen person or group, with its remove button. */
export function chipItem(
  p: IGranteeSuggestion,
  onRemove: () => void
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
      p.kind === 'group' ? `${p.display_name} (group)` : p.display_name
    ),
    h(
      'button',
      {
        type: 'button',
        class: 'cgu-Chip-remove',
        'aria-label': `Remove ${p.display_name}`,
        title: `Remove ${p.display_name}`,
        onclick: onRemove
      },
      '×'
    )
  );
}

/** Who: a search box with a suggestion list (ARIA combobox pattern), and the chips of the chosen. */
export function whoPart(onInput: () => void): {
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
    placeholder: 'Name, user name or group',
    'data-cgu': 'share-search',
    oninput: onInput
  });
  const listbox = h('ul', {
    id: listId,
    role: 'listbox',
    class: 'cgu-Share-suggestions',
    'aria-label': 'Suggestions',
    'data-cgu': 'share-suggestions',
    hidden: true
  });
  const chips = h('ul', {
    class: 'cgu-Share-chips',
    'aria-label': 'Chosen people and groups',
    'data-cgu': 'share-grantees'
  });
  const hint = h(
    'div',
    { id: hintId, class: 'cgu-Share-hint' },
    'Type at least 2 letters, then pick from the list (arrow keys and Enter).'
  );
  const part = h(
    'div',
    { class: 'cgu-Share-who' },
    h('label', { for: searchId }, 'Share with people or groups'),
    chips,
    h('div', { class: 'cgu-Combobox' }, search, listbox),
    hint
  );
  return { part, search, listbox, chips, hint };
}

/** The expiry select and the Share button. */
export function expiryRow(
  defaultExpiry: string,
  onShare: () => void
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
    ...EXPIRY_CHOICES.map(choice =>
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
    'Share'
  );
  const part = h(
    'div',
    { class: 'cgu-Share-row' },
    h('label', { for: expiryId }, 'Ends'),
    expiry,
    h('span', { class: 'cgu-Share-spacer' }),
    submit
  );
  return { part, expiry, submit };
}

/** The link of the share just made, with its Copy button. */
export function linkPart(onCopy: (text: string) => void): {
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
    h('label', { for: linkId }, 'Link to send'),
    link,
    h(
      'button',
      {
        type: 'button',
        class: 'jp-Button jp-mod-styled cgu-Share-copy',
        'data-cgu': 'share-copy',
        onclick: () => onCopy(link.value)
      },
      'Copy'
    )
  );
  return { linkBox, link };
}
