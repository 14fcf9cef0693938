/**
 * `cgu-lab:resources` — status-bar figures, the Resources panel, (owner only)
 * the Resize dialog, and a notice when the notebook runs out of memory.
 */
import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  ICommandPalette,
  MainAreaWidget,
  Notification,
  showErrorMessage,
  WidgetTracker
} from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStatusBar } from '@jupyterlab/statusbar';
import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';
import { Signal } from '@lumino/signaling';
import { CguAPI, errorMessage } from '../api';
import { registerCommand } from '../commands';
import { gaugeIcon } from '../icons';
import { ResourcesModel } from './model';
import { watchOutOfMemory } from './outOfMemory';
import { ResourcesPanel, ResourcesStatus } from './panel';
import { openResizeDialog } from './resize';
import { CommandIDs, DOMAIN, ICguLabSession, IResourcesModel } from '../tokens';

/**
 * Resources: the status-bar figures, the Resources panel and (owner only)
 * the Resize dialog.
 */
export const resourcesPlugin: JupyterFrontEndPlugin<IResourcesModel> = {
  id: 'cgu-lab:resources',
  description:
    'Shows the CPU, memory and GPU use of this notebook and lets the owner resize it.',
  autoStart: true,
  requires: [ICguLabSession],
  optional: [
    ISettingRegistry,
    IStatusBar,
    ICommandPalette,
    ILayoutRestorer,
    ITranslator,
    INotebookTracker
  ],
  provides: IResourcesModel,
  activate: (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    settingRegistry: ISettingRegistry | null,
    statusBar: IStatusBar | null,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null,
    translator: ITranslator | null,
    notebooks: INotebookTracker | null
  ): IResourcesModel => {
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    const model = new ResourcesModel({ trans, interval: 5 });
    if (!session.info) {
      return model; // the server extension is not there: nothing to show
    }
    if (session.isOwner) {
      registerResize(app, trans, palette);
    }
    registerOpenResources(app, trans, palette, model, session, restorer);
    watchOutOfMemory({
      model,
      trans,
      notebooks,
      resize: session.isOwner
        ? () => void app.commands.execute(CommandIDs.resize)
        : null
    });
    const item = addStatusItem(app, trans, statusBar, model);
    if (settingRegistry) {
      loadResourcesSettings(settingRegistry, model, item);
    }
    return model;
  }
};

/** Whether the status-bar item shows, and the signal that it changed. */
interface IStatusItemState {
  show: boolean;
  changed: Signal<unknown, void>;
}

/** The Resize command (owner only). */
function registerResize(
  app: JupyterFrontEnd,
  trans: TranslationBundle,
  palette: ICommandPalette | null
): void {
  registerCommand(
    app,
    CommandIDs.resize,
    {
      label: trans.__('Resize This Notebook…'),
      caption: trans.__(
        'Change the CPUs, memory and GPUs of this notebook (restarts it)'
      ),
      execute: async () => {
        let quota, resources;
        try {
          [quota, resources] = await Promise.all([
            CguAPI.quota(),
            CguAPI.resources()
          ]);
        } catch (error) {
          await showErrorMessage(
            trans.__('Cannot resize'),
            errorMessage(error, trans)
          );
          return;
        }
        await openResizeDialog({
          quota,
          resources,
          trans,
          onAccepted: (response, target) => followRestart(trans, target)
        });
      }
    },
    { palette }
  );
}

/** Tell the user the notebook restarts, and follow it to `target`. */
function followRestart(trans: TranslationBundle, target: string | null): void {
  Notification.info(
    trans.__(
      'Restarting this notebook with the new resources; this page follows the restart and comes back when it is ready.'
    ),
    { autoClose: false }
  );
  if (target) {
    // A moment to read the notice before the page goes.
    window.setTimeout(() => window.location.assign(target), 800);
  } else {
    Notification.warning(
      trans.__(
        'The server did not say where to follow the restart: reload this page in a minute.'
      ),
      { autoClose: false }
    );
  }
}

/** The Resources panel's command, tracked and restored with the layout. */
function registerOpenResources(
  app: JupyterFrontEnd,
  trans: TranslationBundle,
  palette: ICommandPalette | null,
  model: ResourcesModel,
  session: ICguLabSession,
  restorer: ILayoutRestorer | null
): void {
  const { commands, shell } = app;
  const tracker = new WidgetTracker<MainAreaWidget<ResourcesPanel>>({
    namespace: 'cgu-lab-resources'
  });
  registerCommand(
    app,
    CommandIDs.openResources,
    {
      label: trans.__('Open Resources'),
      caption: trans.__('Show the CPU, memory and GPU use of this notebook'),
      icon: gaugeIcon,
      execute: () => {
        let widget = tracker.currentWidget;
        if (!widget || widget.isDisposed) {
          const content = new ResourcesPanel({
            model,
            onResize: session.isOwner
              ? () => void commands.execute(CommandIDs.resize)
              : null,
            trans
          });
          widget = new MainAreaWidget({ content });
          widget.id = 'cgu-lab-resources';
          widget.title.label = trans.__('Resources');
          widget.title.icon = gaugeIcon;
          widget.title.closable = true;
          void tracker.add(widget);
        }
        if (!widget.isAttached) {
          shell.add(widget, 'main', { mode: 'split-right' });
        }
        shell.activateById(widget.id);
        return widget;
      }
    },
    { palette }
  );
  void restorer?.restore(tracker, {
    command: CommandIDs.openResources,
    name: () => 'resources'
  });
}

/** The status-bar item, which can be turned off in the settings. */
function addStatusItem(
  app: JupyterFrontEnd,
  trans: TranslationBundle,
  statusBar: IStatusBar | null,
  model: ResourcesModel
): IStatusItemState {
  const item: IStatusItemState = {
    show: true,
    changed: new Signal<unknown, void>(model)
  };
  statusBar?.registerStatusItem(resourcesPlugin.id, {
    item: new ResourcesStatus(
      model,
      () => void app.commands.execute(CommandIDs.openResources),
      trans
    ),
    align: 'left',
    rank: 100,
    isActive: () => item.show,
    activeStateChanged: item.changed
  });
  return item;
}

/** Apply the resources settings now and whenever they change. */
function loadResourcesSettings(
  settingRegistry: ISettingRegistry,
  model: ResourcesModel,
  item: IStatusItemState
): void {
  void settingRegistry
    .load(resourcesPlugin.id)
    .then(settings => {
      const apply = () => {
        model.interval = Number(settings.get('refreshInterval').composite);
        const show = settings.get('showStatusBarItem').composite !== false;
        if (show !== item.show) {
          item.show = show;
          item.changed.emit();
        }
      };
      apply();
      settings.changed.connect(apply);
    })
    .catch(reason =>
      console.error('cgu-lab: cannot load the resources settings', reason)
    );
}
