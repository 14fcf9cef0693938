/**
 * `cgu-lab:help` — Raise hand. On my own notebook: "Ask for help" (notebook
 * toolbar, palette) raises my hand in my course's help queue about this
 * notebook, with an optional question and whether the helper may edit or
 * only watch; the status bar then says where I am in the queue, or who helps
 * me, with Cancel or Thanks. For a course's teacher and TAs: the Help queue
 * panel (right sidebar), where Take shares the student's notebook with them
 * and opens it live in a new tab, and Done ends it.
 *
 * `cgu-lab:presence` — in any notebook shared live, who else is here.
 */
import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  ICommandPalette,
  IToolbarWidgetRegistry,
  Notification,
  showErrorMessage
} from '@jupyterlab/apputils';
import { IStatusBar } from '@jupyterlab/statusbar';
import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';
import { LabIcon } from '@jupyterlab/ui-components';
import { errorMessage } from '../api';
import { registerCommand } from '../commands';
import { DOMAIN, ICguLabSession } from '../tokens';
import { openHelpDialog } from './dialog';
import {
  coursesToAsk,
  IHelpRequest,
  notebookUrl,
  ownOpenRequest,
  ownStatusText
} from './format';
import { HelpModel } from './model';
import { HelpPanel } from './panel';
import { PresenceItem } from './presence';
import { HelpStatusItem } from './status';

export const ASK_COMMAND = 'cgu-lab:ask-help';
export const PANEL_COMMAND = 'cgu-lab:open-help-queue';

/** A raised hand. */
export const helpIcon = new LabIcon({
  name: 'cgu-lab:help',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">' +
    '<path class="jp-icon3" fill="#616161" d="M10 2a1.5 1.5 0 0 1 1.5 1.5V11h1V4.5a1.5 1.5 0 0 1 3 0V11h1V6.5a1.5 1.5 0 0 1 3 0V15a7 7 0 0 1-7 7h-.6a7 7 0 0 1-5.3-2.4l-3.8-4.4a1.5 1.5 0 0 1 2.2-2L7 15.2V5.5a1.5 1.5 0 0 1 3 0V11h-.5V3.5A1.5 1.5 0 0 1 10 2z"/>' +
    '</svg>'
});

export const helpPlugin: JupyterFrontEndPlugin<void> = {
  id: 'cgu-lab:help',
  description:
    'Ask for help: a course help queue, and the staff panel that takes requests.',
  autoStart: true,
  requires: [ICguLabSession],
  optional: [
    ICommandPalette,
    IToolbarWidgetRegistry,
    IStatusBar,
    ILayoutRestorer,
    ITranslator
  ],
  activate: (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    palette: ICommandPalette | null,
    toolbars: IToolbarWidgetRegistry | null,
    statusBar: IStatusBar | null,
    restorer: ILayoutRestorer | null,
    translator: ITranslator | null
  ) => {
    const info = session.info;
    if (!info?.notebook || !session.isOwner) {
      return;
    }
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    const model = new HelpModel();
    const notebook = info.notebook.name;
    registerCommand(
      app,
      ASK_COMMAND,
      {
        label: trans.__('Ask for Help…'),
        caption: trans.__(
          'Raise your hand: a teacher or TA of your course joins you in this notebook'
        ),
        icon: helpIcon,
        execute: () => askForHelp(model, notebook, trans)
      },
      {
        palette,
        button: {
          registry: toolbars,
          id: 'cgu-help',
          label: trans.__('Ask for help'),
          tooltip: trans.__(
            'Raise your hand: a teacher or TA of your course joins you here'
          ),
          icon: helpIcon,
          dataCgu: 'help-button',
          visible: model.ready.then(o => !!o && o.courses.length > 0)
        }
      }
    );
    const end = async (request: IHelpRequest): Promise<void> => {
      try {
        await model.end(request);
      } catch (error) {
        await showErrorMessage(
          trans.__('Cannot end the help request'),
          errorMessage(error, trans)
        );
      }
    };
    const status = new HelpStatusItem(model, trans, end);
    statusBar?.registerStatusItem('cgu-lab:help', {
      item: status,
      align: 'left',
      rank: 5,
      isActive: () => status.active,
      activeStateChanged: model.changed
    });
    void model.ready.then(overview => {
      if (overview && overview.queues.length > 0) {
        addPanel(app, model, info.user.name, info.controller_url, end, trans, {
          palette,
          restorer
        });
      }
    });
    void app.restored.then(() => model.start());
  }
};

/** Who else is in this notebook, for everyone who may ask. */
export const presencePlugin: JupyterFrontEndPlugin<void> = {
  id: 'cgu-lab:presence',
  description: 'Shows who else has this notebook open live.',
  autoStart: true,
  requires: [ICguLabSession],
  optional: [IStatusBar, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    statusBar: IStatusBar | null,
    translator: ITranslator | null
  ) => {
    const info = session.info;
    // Read-only visitors may not ask the server who is here.
    if (!info || !statusBar || session.access === 'read') {
      return;
    }
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    const item = new PresenceItem(info.user.name, trans);
    statusBar.registerStatusItem('cgu-lab:presence', {
      item,
      align: 'left',
      rank: 6,
      isActive: () => item.active,
      activeStateChanged: item.changed
    });
    void app.restored.then(() => item.start());
  }
};

/** The command: the dialog, then the hand is up (the status item follows it). */
async function askForHelp(
  model: HelpModel,
  notebook: string,
  trans: TranslationBundle
): Promise<void> {
  await model.refresh();
  const open = ownOpenRequest(model.overview);
  if (open) {
    Notification.info(ownStatusText(open, trans), { autoClose: 5000 });
    return;
  }
  const courses = coursesToAsk(model.overview);
  if (!courses.length) {
    await showErrorMessage(
      trans.__('Cannot ask for help'),
      model.error
        ? errorMessage(model.error, trans)
        : trans.__('You are not a student of any course.')
    );
    return;
  }
  const asked = await openHelpDialog({
    courses,
    notebook,
    send: value => model.ask(value),
    trans
  });
  if (asked) {
    Notification.success(
      trans.__(
        'Your hand is up in %1. Keep working; the status bar says when someone joins you.',
        asked.group
      ),
      { autoClose: 6000 }
    );
  }
}

function addPanel(
  app: JupyterFrontEnd,
  model: HelpModel,
  me: string,
  controllerUrl: string | null,
  end: (request: IHelpRequest) => Promise<void>,
  trans: TranslationBundle,
  places: {
    palette: ICommandPalette | null;
    restorer: ILayoutRestorer | null;
  }
): void {
  const panel = new HelpPanel({
    model,
    trans,
    me,
    open: request => {
      window.open(notebookUrl(request, controllerUrl), '_blank', 'noopener');
    },
    take: async request => {
      // Opened now, in the click, so no pop-up blocker stops it; it goes to
      // the notebook once the share exists.
      const tab = window.open('', '_blank');
      try {
        const taken = await model.take(request);
        const url = notebookUrl(taken, controllerUrl);
        if (tab) {
          tab.opener = null;
          tab.location.href = url;
        } else {
          window.open(url, '_blank', 'noopener');
        }
      } catch (error) {
        tab?.close();
        await showErrorMessage(
          trans.__('Cannot take the request'),
          errorMessage(error, trans)
        );
      }
    },
    done: end
  });
  panel.id = 'cgu-lab-help-queue';
  panel.title.icon = helpIcon;
  panel.title.caption = trans.__('Help queue');
  panel.node.setAttribute('aria-label', trans.__('Help queue'));
  app.shell.add(panel, 'right', { rank: 700 });
  places.restorer?.add(panel, 'cgu-lab-help-queue');
  registerCommand(
    app,
    PANEL_COMMAND,
    {
      label: trans.__('Open Help Queue'),
      caption: trans.__('The open help requests of the courses you help in'),
      icon: helpIcon,
      execute: () => app.shell.activateById(panel.id)
    },
    { palette: places.palette }
  );
}
