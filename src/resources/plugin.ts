/**
 * `cgu-lab:resources` — status-bar figures, the Resources panel and (owner
 * only) the Resize dialog.
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
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStatusBar } from '@jupyterlab/statusbar';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { Signal } from '@lumino/signaling';
import { CguAPI, errorMessage } from '../api';
import { registerCommand } from '../commands';
import { gaugeIcon } from '../icons';
import { ResourcesModel } from './model';
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
    ITranslator
  ],
  provides: IResourcesModel,
  activate: (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    settingRegistry: ISettingRegistry | null,
    statusBar: IStatusBar | null,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null,
    translator: ITranslator | null
  ): IResourcesModel => {
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    const model = new ResourcesModel({ trans, interval: 5 });
    if (!session.info) {
      return model; // the server extension is not there: nothing to show
    }
    const { commands, shell } = app;

    // Resize (owner only).
    if (session.isOwner) {
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
              onAccepted: (response, target) => {
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
            });
          }
        },
        { palette }
      );
    }

    // The Resources panel.
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

    // The status-bar item, which can be turned off in the settings.
    let showItem = true;
    const activeChanged = new Signal<unknown, void>(model);
    statusBar?.registerStatusItem(resourcesPlugin.id, {
      item: new ResourcesStatus(
        model,
        () => void commands.execute(CommandIDs.openResources),
        trans
      ),
      align: 'left',
      rank: 100,
      isActive: () => showItem,
      activeStateChanged: activeChanged
    });

    if (settingRegistry) {
      void settingRegistry
        .load(resourcesPlugin.id)
        .then(settings => {
          const apply = () => {
            model.interval = Number(settings.get('refreshInterval').composite);
            const show = settings.get('showStatusBarItem').composite !== false;
            if (show !== showItem) {
              showItem = show;
              activeChanged.emit();
            }
          };
          apply();
          settings.changed.connect(apply);
        })
        .catch(reason =>
          console.error('cgu-lab: cannot load the resources settings', reason)
        );
    }
    return model;
  }
};
