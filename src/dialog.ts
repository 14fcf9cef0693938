/**
 * JupyterLab's `Dialog` with two additions the extension's forms need:
 *
 * - the accept button can run an asynchronous action first (e.g. the resize
 *   request) and the dialog stays open, showing the server's message, when the
 *   action fails;
 * - the body may handle keys itself (the grantee search box uses Enter,
 *   arrows and Escape for its suggestion list) before the dialog's own
 *   handling (Enter accepts, Escape cancels).
 *
 * Everything else (focus trap, Escape to cancel, the buttons) is JupyterLab's.
 */
import { Dialog } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import { errorMessage } from './api';

/** A dialog body that may take some key presses for itself. */
export interface IKeyAwareBody {
  /**
   * Handle a keydown inside the dialog; return true to keep the dialog from
   * handling it too.
   */
  handleDialogKeydown(event: KeyboardEvent): boolean;
}

function isKeyAware(body: unknown): body is IKeyAwareBody {
  return (
    !!body && typeof (body as IKeyAwareBody).handleDialogKeydown === 'function'
  );
}

export class CguDialog<T> extends Dialog<T> {
  constructor(options: CguDialog.IOptions<T>) {
    super(options);
    this._buttonList = options.buttons ?? [
      Dialog.cancelButton(),
      Dialog.okButton()
    ];
    this._defaultIndex = options.defaultButton ?? this._buttonList.length - 1;
    this._onAccept = options.onAccept ?? null;
    this._keyBody = isKeyAware(options.body) ? options.body : null;
    this.addClass('cgu-Dialog');
  }

  /** Let the body see key presses first. */
  handleEvent(event: Event): void {
    if (
      event.type === 'keydown' &&
      this._keyBody &&
      this._keyBody.handleDialogKeydown(event as KeyboardEvent)
    ) {
      return;
    }
    super.handleEvent(event);
  }

  /** Run the accept action first; close only when it succeeded. */
  resolve(index?: number): void {
    const i = index ?? this._defaultIndex;
    const button = this._buttonList[i];
    if (!button || !button.accept || !this._onAccept) {
      super.resolve(i);
      return;
    }
    if (this._busy) {
      return;
    }
    this._busy = true;
    this._setButtonsDisabled(true);
    this._onAccept()
      .then(ok => {
        if (ok) {
          super.resolve(i);
        }
      })
      .catch(error => {
        console.error('cgu-lab: dialog action failed', error);
      })
      .finally(() => {
        this._busy = false;
        if (!this.isDisposed) {
          this._setButtonsDisabled(false);
          // A disabled button loses the focus: bring it back into the dialog
          // so Escape, Tab and Enter keep working.
          if (!this.node.contains(document.activeElement)) {
            this.node
              .querySelectorAll<HTMLButtonElement>('.jp-Dialog-footer button')
              [i]?.focus();
          }
        }
      });
  }

  private _setButtonsDisabled(disabled: boolean): void {
    this.node
      .querySelectorAll<HTMLButtonElement>('.jp-Dialog-footer button')
      .forEach(button => {
        if (!button.classList.contains('jp-mod-reject')) {
          button.disabled = disabled;
        }
      });
    this.node.setAttribute('aria-busy', disabled ? 'true' : 'false');
  }

  private _buttonList: ReadonlyArray<Dialog.IButton>;
  private _defaultIndex: number;
  private _onAccept: (() => Promise<boolean>) | null;
  private _keyBody: IKeyAwareBody | null;
  private _busy = false;
}

export namespace CguDialog {
  export interface IOptions<T> extends Partial<Dialog.IOptions<T>> {
    /**
     * Run when an accept button is pressed (or Enter): resolve true to close
     * the dialog, false to keep it open (the body shows why).
     */
    onAccept?: () => Promise<boolean>;
  }
}

/** Give a dialog's accept button a `data-cgu` landmark for UI tests. */
export function markAcceptButton(dialog: Dialog<unknown>, name: string): void {
  const button = dialog.node.querySelector<HTMLButtonElement>(
    '.jp-Dialog-footer button.jp-mod-accept'
  );
  if (button) {
    button.dataset.cgu = name;
  }
}

/** A form in a dialog: its values, a place for a problem, optionally a busy state. */
export interface IFormBody<V> extends Widget {
  getValue(): V;
  showError(message: string | null): void;
  setBusy?(busy: boolean): void;
}

export interface IFormDialogOptions<V, R> {
  title: string;
  body: IFormBody<V>;
  acceptLabel: string;
  focusNodeSelector: string;
  className: string;
  /** The accept button's `data-cgu` landmark, if UI tests look for it. */
  acceptLandmark?: string;
  /** Why the values cannot be sent, or null when they can. */
  validate: (value: V) => string | null;
  send: (value: V) => Promise<R>;
  /** Called with what `send` returned, just before the dialog closes. */
  onDone: (result: R) => void;
  /** For the server's refusal when it has no message of its own. */
  trans: TranslationBundle;
}

/**
 * Open a form whose accept button validates and sends it. A problem, or the
 * server's refusal, shows in the form and the dialog stays open, so nothing
 * typed is lost. Resolves with what was sent back, or null when cancelled.
 */
export async function openFormDialog<V, R>(
  options: IFormDialogOptions<V, R>
): Promise<R | null> {
  const { body } = options;
  let result: R | null = null;
  const dialog = new CguDialog<V>({
    title: options.title,
    body,
    buttons: [
      Dialog.cancelButton(),
      Dialog.okButton({ label: options.acceptLabel })
    ],
    focusNodeSelector: options.focusNodeSelector,
    onAccept: async () => {
      const value = body.getValue();
      const problem = options.validate(value);
      if (problem) {
        body.showError(problem);
        return false;
      }
      body.showError(null);
      body.setBusy?.(true);
      let sent: R;
      try {
        sent = await options.send(value);
      } catch (error) {
        body.showError(errorMessage(error, options.trans));
        return false;
      } finally {
        body.setBusy?.(false);
      }
      result = sent;
      options.onDone(sent);
      return true;
    }
  });
  dialog.addClass(options.className);
  if (options.acceptLandmark) {
    markAcceptButton(dialog, options.acceptLandmark);
  }
  try {
    await dialog.launch();
  } finally {
    dialog.dispose();
  }
  return result;
}
