/**
 * `cgu-lab:submit` — "Submit" an assignment, with its receipt; preselects
 * what the notebook reads and what its template brought.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  ICommandPalette,
  IToolbarWidgetRegistry,
  Notification,
  showErrorMessage
} from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';
import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import { CguAPI, errorMessage } from '../api';
import { currentPath, registerCommand } from '../commands';
import { absoluteShareUrl } from '../format';
import { submitIcon } from '../icons';
import { openSubmitDialog } from './dialog';
import { showReceiptDialog } from './receipt';
import { preselectFor } from './preselect';
import { receiptSummary } from './format';
import { CommandIDs, DOMAIN, ICguLabSession } from '../tokens';
import { ISubmission } from '../apiTypes';

/** Submit (owner): the toolbar button, the palette command and the File menu item. */
export const submitPlugin: JupyterFrontEndPlugin<void> = {
  id: 'cgu-lab:submit',
  description: 'Submits files of this home for an assignment.',
  autoStart: true,
  requires: [ICguLabSession],
  optional: [
    INotebookTracker,
    ICommandPalette,
    IToolbarWidgetRegistry,
    ITranslator
  ],
  activate: (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    notebooks: INotebookTracker | null,
    palette: ICommandPalette | null,
    toolbars: IToolbarWidgetRegistry | null,
    translator: ITranslator | null
  ) => {
    if (!session.info || !session.isOwner) {
      return;
    }
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    registerCommand(
      app,
      CommandIDs.submit,
      {
        label: trans.__('Submit Assignment…'),
        caption: trans.__(
          'Hand in files of this home for an assignment of your course'
        ),
        icon: submitIcon,
        execute: args => submitAssignment(app, notebooks, trans, args)
      },
      {
        palette,
        button: {
          registry: toolbars,
          id: 'cgu-submit',
          label: trans.__('Submit'),
          tooltip: trans.__(
            'Submit this notebook (and other files) for an assignment'
          ),
          icon: submitIcon,
          dataCgu: 'submit-button'
        }
      }
    );
  }
};

/** The Submit command: the dialog, then the receipt and a Course refresh. */
async function submitAssignment(
  app: JupyterFrontEnd,
  notebooks: INotebookTracker | null,
  trans: TranslationBundle,
  args: ReadonlyPartialJSONObject
): Promise<void> {
  let assignments;
  try {
    assignments = await CguAPI.assignments();
  } catch (error) {
    await showErrorMessage(
      trans.__('Cannot submit'),
      errorMessage(error, trans)
    );
    return;
  }
  const path = currentPath(app, notebooks, args);
  const requested = Number(args.assignmentId);
  // What the notebook needs to run elsewhere: the files it reads, its template's.
  const suggestions = await preselectFor(app, notebooks, path);
  const receipt = await openSubmitDialog({
    assignments,
    assignmentId: Number.isInteger(requested) ? requested : null,
    initialPaths: path ? [path] : [],
    suggestions,
    trans,
    onSubmitted: submitted => notifySubmitted(submitted, trans)
  });
  if (receipt) {
    await showReceiptDialog(receipt, trans);
    void app.commands.execute(CommandIDs.refreshCourse).catch(() => {
      /* no Course panel */
    });
  }
}

function notifySubmitted(
  submitted: ISubmission,
  trans: TranslationBundle
): void {
  const url = absoluteShareUrl(submitted.url, window.location.origin);
  Notification.success(receiptSummary(submitted, trans), {
    autoClose: 10000,
    actions: submitted.url
      ? [
          {
            label: trans.__('Open receipt'),
            caption: url,
            displayType: 'link',
            callback: () => {
              window.open(url, '_blank', 'noopener');
            }
          }
        ]
      : []
  });
}
