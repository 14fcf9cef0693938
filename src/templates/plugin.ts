/**
 * `cgu-lab:templates` — "Save as template" for teachers (toolbar, palette,
 * File menu).
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
import { PathExt } from '@jupyterlab/coreutils';
import { INotebookTracker } from '@jupyterlab/notebook';
import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';
import { CguAPI, errorMessage } from '../api';
import { currentPath, registerCommand } from '../commands';
import { absoluteShareUrl, formatBytes } from '../format';
import { templateIcon } from '../icons';
import { filesText } from '../files/selection';
import { openTemplateDialog } from './dialog';
import { preselectFor } from '../submit/preselect';
import { CommandIDs, DOMAIN, ICguLabSession } from '../tokens';
import { ITemplateCreated } from '../apiTypes';

/**
 * Save as template (teachers, TAs and admins): the toolbar button, the palette
 * command and the File menu item, shown once the server says the user may
 * publish.
 */
export const templatesPlugin: JupyterFrontEndPlugin<void> = {
  id: 'cgu-lab:templates',
  description:
    'Saves files of this home, an environment and resources as a template.',
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
    let canPublish = false;
    const allowed = CguAPI.templateOptions()
      .then(options => {
        canPublish = options.can_publish;
        app.commands.notifyCommandChanged(CommandIDs.saveTemplate);
        return canPublish;
      })
      .catch(reason => {
        console.warn(
          'cgu-lab: cannot ask whether templates may be saved',
          reason
        );
        return false;
      });
    registerSaveTemplate(app, trans, {
      notebooks,
      palette,
      toolbars,
      isVisible: () => canPublish,
      allowed
    });
  }
};

/** Where the Save-as-template command shows, and when. */
interface ISaveTemplatePlaces {
  notebooks: INotebookTracker | null;
  palette: ICommandPalette | null;
  toolbars: IToolbarWidgetRegistry | null;
  isVisible: () => boolean;
  /** Resolves with whether the toolbar button shows. */
  allowed: Promise<boolean>;
}

function registerSaveTemplate(
  app: JupyterFrontEnd,
  trans: TranslationBundle,
  places: ISaveTemplatePlaces
): void {
  registerCommand(
    app,
    CommandIDs.saveTemplate,
    {
      label: trans.__('Save as Template…'),
      caption: trans.__(
        'Publish files of this home, an environment and default resources as a template'
      ),
      icon: templateIcon,
      isVisible: places.isVisible,
      execute: args =>
        saveTemplate(
          app,
          places.notebooks,
          () => currentPath(app, places.notebooks, args),
          trans
        )
    },
    {
      palette: places.palette,
      button: {
        registry: places.toolbars,
        id: 'cgu-save-template',
        label: trans.__('Save as template'),
        tooltip: trans.__(
          'Publish this notebook and other files of your home as a template'
        ),
        icon: templateIcon,
        dataCgu: 'save-template-button',
        visible: places.allowed
      }
    }
  );
}

/**
 * Asks the server what may be published, then opens the dialog on the path
 * `pathNow` gives once the server has answered.
 */
async function saveTemplate(
  app: JupyterFrontEnd,
  notebooks: INotebookTracker | null,
  pathNow: () => string | null,
  trans: TranslationBundle
): Promise<void> {
  let options, quota;
  try {
    [options, quota] = await Promise.all([
      CguAPI.templateOptions(),
      CguAPI.quota().catch(() => null)
    ]);
  } catch (error) {
    await showErrorMessage(
      trans.__('Cannot save a template'),
      errorMessage(error, trans)
    );
    return;
  }
  if (!options.can_publish) {
    await showErrorMessage(
      trans.__('Cannot save a template'),
      trans.__(
        'Only teachers, teaching assistants and administrators can publish templates.'
      )
    );
    return;
  }
  const path = pathNow();
  const baseName = path ? PathExt.basename(path, PathExt.extname(path)) : '';
  // The same preselection as Submit: a student starting the template needs the
  // data files the notebook reads as much as a TA running a submission does.
  const suggested = await preselectFor(app, notebooks, path);
  await openTemplateDialog({
    options,
    gpuTypes: quota?.gpu_types ?? [],
    initialPaths: [
      ...new Set([...(path ? [path] : []), ...suggested.map(s => s.path)])
    ],
    displayName: baseName,
    trans,
    onCreated: created => notifyTemplateSaved(created, trans)
  });
}

function notifyTemplateSaved(
  created: ITemplateCreated,
  trans: TranslationBundle
): void {
  const url = absoluteShareUrl(created.url, window.location.origin);
  Notification.success(
    trans.__(
      'Saved template "%1" version %2: %3, %4.',
      created.name,
      created.version,
      filesText(created.files, trans),
      formatBytes(created.bytes)
    ),
    {
      autoClose: false,
      actions: created.url
        ? [
            {
              label: trans.__('Open template page'),
              caption: url,
              displayType: 'link',
              callback: () => {
                window.open(url, '_blank', 'noopener');
              }
            }
          ]
        : []
    }
  );
}
