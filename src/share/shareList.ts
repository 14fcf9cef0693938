/**
 * The Share dialog's list of current shares: who, what access, what, when it
 * ends, with "Copy link" and "Revoke".
 */
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
  handlers: IShareListHandlers
): void {
  if (listError) {
    replaceChildren(
      list,
      h('p', { class: 'cgu-Share-error', role: 'alert' }, listError)
    );
    return;
  }
  if (shares === null) {
    replaceChildren(list, h('p', { class: 'cgu-Share-empty' }, 'Loading…'));
    return;
  }
  if (shares.length === 0) {
    replaceChildren(
      list,
      h(
        'p',
        { class: 'cgu-Share-empty', 'data-cgu': 'share-list-empty' },
        'Not shared with anyone yet.'
      )
    );
    return;
  }
  const now = Date.now();
  const rows = shares.map(share => {
    const who =
      share.grantee.kind === 'group'
        ? `${share.grantee.display_name} (group)`
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
          accessLabel(share.access)
        )
      ),
      h('td', { class: 'cgu-Share-path' }, scopeLabel(share.path)),
      h(
        'td',
        {
          class: 'cgu-Share-expiry',
          'data-expires-at': share.expires_at ?? '',
          title: share.expires_at
            ? new Date(share.expires_at).toLocaleString()
            : 'This share does not end.'
        },
        countdownText(share.expires_at, now)
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
            'aria-label': `Copy the link for ${who}`,
            title: absoluteShareUrl(share.url, origin),
            onclick: () =>
              void handlers.copy(absoluteShareUrl(share.url, origin))
          },
          'Copy link'
        ),
        h(
          'button',
          {
            type: 'button',
            class: 'jp-Button jp-mod-styled jp-mod-warn cgu-Share-revoke',
            'data-cgu': 'share-revoke',
            'aria-label': `Revoke the share with ${who}`,
            onclick: (event: MouseEvent) =>
              void handlers.revoke(
                share,
                who,
                event.currentTarget as HTMLButtonElement
              )
          },
          'Revoke'
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
          h('th', { scope: 'col' }, 'Who'),
          h('th', { scope: 'col' }, 'Access'),
          h('th', { scope: 'col' }, 'What'),
          h('th', { scope: 'col' }, 'Ends'),
          h(
            'th',
            { scope: 'col' },
            h('span', { class: 'cgu-sr-only' }, 'Actions')
          )
        )
      ),
      h('tbody', {}, ...rows)
    )
  );
}

/** Updates the "Ends" cells of the list to the present time. */
export function updateShareCountdowns(list: HTMLElement): void {
  const now = Date.now();
  list.querySelectorAll<HTMLElement>('td.cgu-Share-expiry').forEach(cell => {
    cell.textContent = countdownText(cell.dataset.expiresAt || null, now);
  });
}

/** The "Current shares" heading and the region the list is rendered into. */
export function shareListRegion(): { heading: HTMLElement; list: HTMLElement } {
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
    'Current shares'
  );
  return { heading, list };
}
