/**
 * The Share dialog's list of current shares: who, what access, what, when it
 * ends, with "Copy link" and "Revoke".
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { h, replaceChildren, uniqueId } from '../dom';
import { absoluteShareUrl, countdownText } from '../format';
import { accessLabel, scopeLabel } from './format';
import { IShare } from '../apiTypes';

/** What the buttons of a row do. */
export interface IShareListHandlers {
  copy: (text: string) => Promise<void>;
  revoke: (
    share: IShare,
    who: string,
    button: HTMLButtonElement
  ) => Promise<void>;
}

/** Renders the current shares (or the error, or "Loading…") into `list`. */
export function renderShareList(
  list: HTMLElement,
  shares: IShare[] | null,
  listError: string | null,
  origin: string,
  handlers: IShareListHandlers,
  trans: TranslationBundle
): void {
  if (listError) {
    replaceChildren(
      list,
      h('p', { class: 'cgu-Share-error', role: 'alert' }, listError)
    );
    return;
  }
  if (shares === null) {
    replaceChildren(
      list,
      h('p', { class: 'cgu-Share-empty' }, trans.__('Loading…'))
    );
    return;
  }
  if (shares.length === 0) {
    replaceChildren(
      list,
      h(
        'p',
        { class: 'cgu-Share-empty', 'data-cgu': 'share-list-empty' },
        trans.__('Not shared with anyone yet.')
      )
    );
    return;
  }
  const now = Date.now();
  const rows = shares.map(share => {
    const who =
      share.grantee.kind === 'group'
        ? trans.__('%1 (group)', share.grantee.display_name)
        : share.grantee.display_name || share.grantee.name;
    return h(
      'tr',
      {
        'data-cgu': 'share-row',
        'data-share-id': share.id,
        'data-grantee': `${share.grantee.kind}:${share.grantee.name}`
      },
      h('td', { title: share.grantee.name }, who),
      h(
        'td',
        {},
        h(
          'span',
          { class: `cgu-Badge cgu-Badge-${share.access}` },
          accessLabel(share.access, trans)
        )
      ),
      h('td', { class: 'cgu-Share-path' }, scopeLabel(share.path, trans)),
      h(
        'td',
        {
          class: 'cgu-Share-expiry',
          'data-expires-at': share.expires_at ?? '',
          title: share.expires_at
            ? new Date(share.expires_at).toLocaleString()
            : trans.__('This share does not end.')
        },
        countdownText(share.expires_at, now, trans)
      ),
      h(
        'td',
        { class: 'cgu-Share-actions' },
        h(
          'button',
          {
            type: 'button',
            class: 'jp-Button jp-mod-styled cgu-Share-copyLink',
            'data-cgu': 'share-copy-link',
            'aria-label': trans.__('Copy the link for %1', who),
            title: absoluteShareUrl(share.url, origin),
            onclick: () =>
              void handlers.copy(absoluteShareUrl(share.url, origin))
          },
          trans.__('Copy link')
        ),
        h(
          'button',
          {
            type: 'button',
            class: 'jp-Button jp-mod-styled jp-mod-warn cgu-Share-revoke',
            'data-cgu': 'share-revoke',
            'aria-label': trans.__('Revoke the share with %1', who),
            onclick: (event: MouseEvent) =>
              void handlers.revoke(
                share,
                who,
                event.currentTarget as HTMLButtonElement
              )
          },
          trans.__('Revoke')
        )
      )
    );
  });
  replaceChildren(
    list,
    h(
      'table',
      { class: 'cgu-Table' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, trans.__('Who')),
          h('th', { scope: 'col' }, trans.__('Access')),
          h('th', { scope: 'col' }, trans.__('What')),
          h('th', { scope: 'col' }, trans.__('Ends')),
          h(
            'th',
            { scope: 'col' },
            h('span', { class: 'cgu-sr-only' }, trans.__('Actions'))
          )
        )
      ),
      h('tbody', {}, ...rows)
    )
  );
}

/** Updates the "Ends" cells of the list to the present time. */
export function updateShareCountdowns(
  list: HTMLElement,
  trans: TranslationBundle
): void {
  const now = Date.now();
  list.querySelectorAll<HTMLElement>('td.cgu-Share-expiry').forEach(cell => {
    cell.textContent = countdownText(
      cell.dataset.expiresAt || null,
      now,
      trans
    );
  });
}

/** The "Current shares" heading and the region the list is rendered into. */
export function shareListRegion(trans: TranslationBundle): {
  heading: HTMLElement;
  list: HTMLElement;
} {
  const headingId = uniqueId('cgu-share-list-heading');
  const list = h('div', {
    class: 'cgu-Share-list',
    'data-cgu': 'share-list',
    'aria-labelledby': headingId,
    role: 'region'
  });
  const heading = h(
    'h3',
    { id: headingId, class: 'cgu-Share-heading' },
    trans.__('Current shares')
  );
  return { heading, list };
}
