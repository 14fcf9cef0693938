/**
 * `cgu-lab:publish` — "Publish as a Demo…" in the launcher and the command
 * palette, for the notebook's owner where they may publish (a teacher or TA of
 * a course, an administrator): the same publication as the portal's My
 * notebooks page (the controller's lab route `cgu-lab/demos`), of the open
 * notebook as a page with Voilà (made first by the server extension,
 * `cgu-lab/apps/voila`, which runs it from then on), a port, or a declared app.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  ICommandPalette,
  Notification,
  showErrorMessage
} from '@jupyterlab/apputils';
import { ILauncher } from '@jupyterlab/launcher';
import { INotebookTracker } from '@jupyterlab/notebook';
import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';
import { LabIcon } from '@jupyterlab/ui-components';
import { errorMessage, requestAPI } from '../api';
import { IAppList } from '../apps/protocol';
import { registerCommand } from '../commands';
import { DOMAIN, ICguLabSession } from '../tokens';
import { openPublishDialog, PublishModel } from './dialog';
import {
  appPath,
  IDemo,
  IPublishForm,
  IPublishOptions,
  IVoilaPage,
  publishBody,
  publishedSummary
} from './format';

export const COMMAND = 'cgu-lab:publish-demo';

/** A page with rays, for publishing: drawn for this extension. */
export const publishIcon = new LabIcon({
  name: 'cgu-lab:publish',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">' +
    '<path class="jp-icon3" fill="#616161" d="M5 8h9a1 1 0 0 1 1 1v10a1 1 0 0 1-1 1H5a1 1 0 0 1-1-1V9a1 1 0 0 1 1-1zm1 2v8h7v-8zm11-6 1.4 1.4-2.8 2.8-1.4-1.4zm3 5v2h-4V9zm-9-7h2v4h-2z"/>' +
    '</svg>'
});

function postJSON(body: unknown): RequestInit {
  return {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'Content-Type': 'application/json' }
  };
}

/** Publish what the form says: a page is made by the server extension first. */
async function send(
  notebooks: INotebookTracker | null,
  value: IPublishForm
): Promise<IDemo> {
  let app = appPath(value);
  if (app === null) {
    const notebook = value.notebook.trim();
    // The page shows what is on disk: an open notebook with changes is saved first.
    const open = notebooks?.find(panel => panel.context.path === notebook);
    if (open?.context.model.dirty) {
      await open.context.save();
    }
    const page = await requestAPI<IVoilaPage>(
      'apps/voila',
      postJSON({ notebook })
    );
    app = page.app;
  }
  return requestAPI<IDemo>('demos', postJSON(publishBody(value, app)));
}

/** The command: ask what and to whom, publish, say where it is. */
async function publish(
  notebooks: INotebookTracker | null,
  trans: TranslationBundle
): Promise<void> {
  let options: IPublishOptions;
  try {
    options = await requestAPI<IPublishOptions>('demos');
  } catch (error) {
    await showErrorMessage(
      trans.__('Cannot publish'),
      errorMessage(error, trans)
    );
    return;
  }
  const list = await requestAPI<IAppList>('apps').catch(() => null);
  const apps = (list?.apps ?? [])
    .filter(entry => entry.kind === 'web')
    .map((entry): [string, string] => [entry.name, entry.title]);
  const notebook = notebooks?.currentWidget?.context.path ?? null;
  const model = new PublishModel(options.courses, apps, notebook, trans);
  const demo = await openPublishDialog({
    model,
    send: value => send(notebooks, value)
  });
  if (demo) {
    Notification.success(publishedSummary(demo, trans), {
      autoClose: 10000,
      actions: [
        {
          label: trans.__('Open'),
          callback: () => window.open(demo.url, '_blank', 'noopener')
        }
      ]
    });
  }
}

export const publishPlugin: JupyterFrontEndPlugin<void> = {
  id: 'cgu-lab:publish',
  description:
    'Publish as a Demo: the open notebook as a page (Voilà), a port or an app, to a course.',
  autoStart: true,
  requires: [ICguLabSession],
  optional: [INotebookTracker, ILauncher, ICommandPalette, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    notebooks: INotebookTracker | null,
    launcher: ILauncher | null,
    palette: ICommandPalette | null,
    translator: ITranslator | null
  ) => {
    if (!session.info || !session.isOwner) {
      return;
    }
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    // Not awaited: the command appears once the controller says this owner may publish.
    void requestAPI<IPublishOptions>('demos')
      .then(options => {
        if (!options.may_publish) {
          return;
        }
        registerCommand(
          app,
          COMMAND,
          {
            label: trans.__('Publish as a Demo…'),
            caption: trans.__(
              'Let a course use a page or app of this notebook, and nothing else of it'
            ),
            icon: publishIcon,
            execute: () => publish(notebooks, trans)
          },
          { palette }
        );
        launcher?.add({ command: COMMAND, category: trans.__('Other') });
      })
      .catch(() => undefined); // an older controller: no publishing from the lab
  }
};
