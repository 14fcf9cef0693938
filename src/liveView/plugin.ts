/**
 * `cgu-lab:live-view` — for read-only viewers (a broadcast), open documents
 * reload when the owner saves them.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStatusBar } from '@jupyterlab/statusbar';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { registerCommand } from '../commands';
import { LiveView, LiveViewStatus, openDocuments } from './liveView';
import { intervalSeconds } from '../format';
import { CommandIDs, DOMAIN, ICguLabSession } from '../tokens';

/** Keep the live view's interval as the settings say. */
function followIntervalSetting(
  settingRegistry: ISettingRegistry,
  live: LiveView
): void {
  void settingRegistry
    .load(liveViewPlugin.id)
    .then(settings => {
      const apply = () => {
        live.interval = intervalSeconds(
          settings.get('interval').composite,
          5,
          1
        );
      };
      apply();
      settings.changed.connect(apply);
    })
    .catch(reason =>
      console.error('cgu-lab: cannot load the live-view settings', reason)
    );
}

/**
 * The live view (read-only viewers, e.g. a broadcast to a class): open
 * documents reload when the owner saves them; "Live view" in the status bar.
 */
export const liveViewPlugin: JupyterFrontEndPlugin<void> = {
  id: 'cgu-lab:live-view',
  description:
    'Reloads the documents a read-only viewer has open when the owner saves them.',
  autoStart: true,
  requires: [ICguLabSession],
  optional: [ISettingRegistry, IStatusBar, ICommandPalette, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    settingRegistry: ISettingRegistry | null,
    statusBar: IStatusBar | null,
    palette: ICommandPalette | null,
    translator: ITranslator | null
  ) => {
    const info = session.info;
    if (!info || info.access !== 'read') {
      return;
    }
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    const status = new LiveViewStatus(() => void live.refresh(), trans);
    const live = new LiveView({
      documents: () => openDocuments(app.shell),
      contents: app.serviceManager.contents,
      interval: 5,
      owner: info.notebook?.owner || trans.__('the owner'),
      status,
      trans
    });
    // A landmark for styles and UI tests: <body data-cgu-live-view="on">.
    document.body.dataset.cguLiveView = 'on';
    statusBar?.registerStatusItem(liveViewPlugin.id, {
      item: status,
      align: 'left',
      rank: 1
    });
    registerCommand(
      app,
      CommandIDs.checkLiveView,
      {
        label: trans.__('Check Live View Now'),
        caption: trans.__(
          'Reload the open documents that changed on the server now'
        ),
        execute: () => live.refresh()
      },
      { palette }
    );
    if (settingRegistry) {
      followIntervalSetting(settingRegistry, live);
    }
    void app.restored.then(() => live.start());
  }
};
