/**
 * The Share dialog: grant people or groups read-only or editable access to
 * this notebook server or to one file in it, optionally for a limited time;
 * list the current shares with their links, and revoke them.
 *
 * JupyterLab's Dialog with a ReactWidget body: the state is a `ShareModel`
 * (model.ts), the form its components (form.tsx). The body takes the
 * suggestion list's keys before the dialog's own Enter and Escape.
 */
import { Dialog } from '@jupyterlab/apputils';
import { PathExt } from '@jupyterlab/coreutils';
import { ReactWidget } from '@jupyterlab/ui-components';
import { Poll } from '@lumino/polling';
import * as React from 'react';
import { CguAPI } from '../api';
import { CguDialog, IKeyAwareBody } from '../dialog';
import { copyText } from '../dom';
import { repaintPoll } from '../polling';
import { ShareForm } from './form';
import { KeyTarget, ShareModel } from './model';
import { IShareDialogOptions } from './types';
export type { IShareAPI, IShareDialogOptions, ShareMode } from './types';

/** How often the expiry countdowns are refreshed, in seconds. */
const COUNTDOWN_SECONDS = 30;

/** Open the Share dialog; resolves when it is closed. */
export async function openShareDialog(
  options: IShareDialogOptions
): Promise<void> {
  const trans = options.trans;
  const body = new ShareBody(options);
  const name =
    options.mode === 'notebook' || !options.filePath
      ? options.notebookName || trans.__('this notebook')
      : PathExt.basename(options.filePath);
  const dialog = new CguDialog<void>({
    title: trans.__('Share %1', name),
    body,
    buttons: [Dialog.cancelButton({ label: trans.__('Close') })],
    focusNodeSelector: '[data-cgu="share-search"]',
    hasClose: true
  });
  dialog.addClass('cgu-ShareDialog');
  try {
    await dialog.launch();
  } finally {
    dialog.dispose();
  }
}

/** The body of the Share dialog. */
export class ShareBody extends ReactWidget implements IKeyAwareBody {
  constructor(options: IShareDialogOptions) {
    super();
    this.model = new ShareModel({
      ...options,
      api: options.api ?? CguAPI,
      copy: copyText
    });
    this.model.focusRequested.connect(this._focusSearch, this);
    this._countdowns = repaintPoll(
      'cgu-lab:share-countdowns',
      COUNTDOWN_SECONDS,
      () => this.model.tick()
    );
    this.addClass('cgu-Share');
    this.node.dataset.cgu = 'share-dialog';
  }

  /** The form's state. */
  readonly model: ShareModel;

  handleDialogKeydown(event: KeyboardEvent): boolean {
    const target = event.target as HTMLElement | null;
    if (!target || !this.node.contains(target)) {
      return false;
    }
    let where: KeyTarget = 'other';
    if (target.dataset.cgu === 'share-search') {
      where = 'search';
    } else if (
      target instanceof HTMLInputElement ||
      target instanceof HTMLSelectElement
    ) {
      where = 'field';
    }
    if (!this.model.key(event.key, where)) {
      return false;
    }
    event.preventDefault();
    event.stopPropagation();
    return true;
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._countdowns.dispose();
    this.model.dispose();
    super.dispose();
  }

  protected render(): JSX.Element {
    return <ShareForm model={this.model} />;
  }

  protected onAfterAttach(msg: Parameters<ReactWidget['onAfterAttach']>[0]) {
    super.onAfterAttach(msg);
    void this.model.refresh();
    void this._countdowns.start();
  }

  protected onBeforeDetach(msg: Parameters<ReactWidget['onBeforeDetach']>[0]) {
    void this._countdowns.stop();
    super.onBeforeDetach(msg);
  }

  private _focusSearch(): void {
    this.node
      .querySelector<HTMLInputElement>('[data-cgu="share-search"]')
      ?.focus();
  }

  private _countdowns: Poll;
}
