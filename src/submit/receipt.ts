/**
 * The receipt of a submission (number, time, late or not, size, content hash,
 * link to the receipt page), shown in a dialog once it is received.
 */
import { Dialog } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import { h, replaceChildren } from '../dom';
import { absoluteShareUrl } from '../format';
import { receiptRows } from './format';
import { ISubmission } from '../apiTypes';

/** The receipt's body: a list of facts and the link to the receipt page. */
export class ReceiptBody extends Widget {
  constructor(receipt: ISubmission, origin: string, trans: TranslationBundle) {
    super();
    this.addClass('cgu-Receipt');
    this.node.dataset.cgu = 'submit-receipt';
    const rows = receiptRows(
      receipt,
      iso => {
        const t = Date.parse(iso);
        return Number.isNaN(t) ? iso : new Date(t).toLocaleString();
      },
      trans
    );
    replaceChildren(
      this.node,
      h(
        'dl',
        { class: 'cgu-Receipt-list' },
        ...rows.map(row =>
          h(
            'div',
            { class: 'cgu-Receipt-row' },
            h('dt', {}, row.label),
            h(
              'dd',
              {
                'data-cgu': `receipt-${row.key}`,
                class: row.key === 'late' && receipt.late ? 'cgu-mod-late' : '',
                title: row.key === 'hash' ? receipt.content_hash : ''
              },
              row.value
            )
          )
        )
      ),
      receipt.url
        ? h(
            'a',
            {
              class: 'cgu-Receipt-link',
              href: absoluteShareUrl(receipt.url, origin),
              target: '_blank',
              rel: 'noopener noreferrer',
              'data-cgu': 'receipt-link'
            },
            trans.__('Open the receipt page (new tab)')
          )
        : null
    );
  }
}

/** Show the receipt of a submission in a dialog. */
export async function showReceiptDialog(
  receipt: ISubmission,
  trans: TranslationBundle,
  origin: string = window.location.origin
): Promise<void> {
  const dialog = new Dialog<void>({
    title: receipt.late
      ? trans.__('Submission received (late)')
      : trans.__('Submission received'),
    body: new ReceiptBody(receipt, origin, trans),
    buttons: [Dialog.okButton({ label: trans.__('Close') })]
  });
  dialog.addClass('cgu-ReceiptDialog');
  try {
    await dialog.launch();
  } finally {
    dialog.dispose();
  }
}
