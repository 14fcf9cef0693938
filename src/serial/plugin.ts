/**
 * `cgu-lab:serial` — a serial device on the student's computer, used from the
 * notebook: the Serial toolbar button, command and palette item, the dialog,
 * the status-bar item, and re-attaching after a reload. For the owner and
 * editors only; read-only viewers may not drive hardware (the server refuses
 * them too).
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, IToolbarWidgetRegistry } from '@jupyterlab/apputils';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStatusBar } from '@jupyterlab/statusbar';
import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';
import { LabIcon } from '@jupyterlab/ui-components';
import { registerCommand } from '../commands';
import { DOMAIN, ICguLabSession } from '../tokens';
import { openSerialDialog } from './dialog';
import { DEFAULT_OPTIONS, optionsFromSettings } from './format';
import { SerialManager } from './manager';
import { SerialStatusItem } from './status';
import { ISerialOptions } from './webSerial';

/** The commands of the Serial feature. */
export namespace SerialCommandIDs {
  export const open = 'cgu-lab:serial';
  export const disconnect = 'cgu-lab:serial-disconnect';
}

/** A plug, for the toolbar button. */
export const serialIcon = new LabIcon({
  name: 'cgu-lab:serial',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">' +
    '<path class="jp-icon3" fill="#616161" d="M16 7V3h-2v4h-4V3H8v4a2 2 0 0 0-2 2v5.5L9.5 18v3h5v-3l3.5-3.5V9a2 2 0 0 0-2-2z"/>' +
    '</svg>'
});

export const serialPlugin: JupyterFrontEndPlugin<void> = {
  id: 'cgu-lab:serial',
  description:
    'Bridges a serial device of this computer (Web Serial) to a serial port of the notebook.',
  autoStart: true,
  requires: [ICguLabSession],
  optional: [
    ICommandPalette,
    IStatusBar,
    ISettingRegistry,
    ITranslator,
    IToolbarWidgetRegistry
  ],
  activate: (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    palette: ICommandPalette | null,
    statusBar: IStatusBar | null,
    settingRegistry: ISettingRegistry | null,
    translator: ITranslator | null,
    toolbars: IToolbarWidgetRegistry | null
  ) => {
    const info = session.info;
    if (!info || info.access === 'read' || (info.scope?.length ?? 0) > 0) {
      return; // read-only and single-file viewers drive no hardware
    }
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    const manager = new SerialManager(trans);
    const state: ISerialState = { defaults: DEFAULT_OPTIONS, reattach: true };
    const open = () => openSerialDialog(manager, trans, state.defaults);
    registerOpen(app, trans, { palette, toolbars }, open);
    registerDisconnect(app, trans, palette, manager);
    if (statusBar) {
      addStatusItem(statusBar, manager, trans, open);
    }
    const settingsLoaded = loadSerialSettings(settingRegistry, state);
    void Promise.all([app.restored, settingsLoaded]).then(() => {
      if (state.reattach) {
        void manager.reattach();
      }
    });
  }
};

/** The line settings the dialog starts with, and whether to re-attach after a reload. */
interface ISerialState {
  defaults: ISerialOptions;
  reattach: boolean;
}

function registerOpen(
  app: JupyterFrontEnd,
  trans: TranslationBundle,
  places: {
    palette: ICommandPalette | null;
    toolbars: IToolbarWidgetRegistry | null;
  },
  open: () => Promise<void>
): void {
  registerCommand(
    app,
    SerialCommandIDs.open,
    {
      label: trans.__('Serial Device…'),
      caption: trans.__(
        'Connect a serial device of this computer (Arduino, ESP32, micro:bit) to the notebook'
      ),
      icon: serialIcon,
      execute: open
    },
    {
      palette: places.palette,
      button: {
        registry: places.toolbars,
        id: 'cgu-serial',
        label: trans.__('Serial'),
        tooltip: trans.__(
          'Connect a serial device of this computer to the notebook'
        ),
        icon: serialIcon,
        dataCgu: 'serial-button'
      }
    }
  );
}

function registerDisconnect(
  app: JupyterFrontEnd,
  trans: TranslationBundle,
  palette: ICommandPalette | null,
  manager: SerialManager
): void {
  registerCommand(
    app,
    SerialCommandIDs.disconnect,
    {
      label: trans.__('Disconnect Serial Device'),
      caption: trans.__(
        'Close the serial port in the notebook and let the device go'
      ),
      isEnabled: () => manager.connection !== null,
      execute: () => manager.disconnect()
    },
    { palette }
  );
  manager.changed.connect(() =>
    app.commands.notifyCommandChanged(SerialCommandIDs.disconnect)
  );
}

function addStatusItem(
  statusBar: IStatusBar,
  manager: SerialManager,
  trans: TranslationBundle,
  open: () => Promise<void>
): void {
  const item = new SerialStatusItem(manager, trans, () => void open());
  statusBar.registerStatusItem(serialPlugin.id, {
    item,
    align: 'left',
    rank: 5,
    isActive: () => item.active,
    activeStateChanged: manager.changed
  });
}

/** Apply the serial settings now and whenever they change; resolves once loaded (or failed). */
function loadSerialSettings(
  settingRegistry: ISettingRegistry | null,
  state: ISerialState
): Promise<void> {
  return settingRegistry
    ? settingRegistry
        .load(serialPlugin.id)
        .then(settings => {
          const apply = () => {
            state.defaults = optionsFromSettings(
              key => settings.get(key).composite
            );
            state.reattach =
              settings.get('reattachOnReload').composite !== false;
          };
          apply();
          settings.changed.connect(apply);
        })
        .catch(reason =>
          console.error('cgu-lab: cannot load the serial settings', reason)
        )
    : Promise.resolve();
}
