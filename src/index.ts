import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, Notification } from '@jupyterlab/apputils';
import { IMainMenu } from '@jupyterlab/mainmenu';
import { handshake } from './handshake';
import { CommandIDs } from './tokens';

/**
 * Core plugin: checks the server extension answers, and offers a way back to
 * the platform's control panel (the list of my notebooks) from the File menu
 * and the command palette.
 */
const corePlugin: JupyterFrontEndPlugin<void> = {
  id: 'cgu-lab:core',
  description: 'Connects JupyterLab to the cgu-lab platform.',
  autoStart: true,
  optional: [ICommandPalette, IMainMenu],
  activate: async (
    app: JupyterFrontEnd,
    palette: ICommandPalette | null,
    mainMenu: IMainMenu | null
  ) => {
    const result = await handshake();
    if (!result.ok) {
      Notification.warning(result.message, { autoClose: false });
      return;
    }
    const controllerUrl = result.info.controller_url;
    if (!controllerUrl) {
      return;
    }
    app.commands.addCommand(CommandIDs.openControlPanel, {
      label: 'cgu-lab Control Panel',
      caption: 'Open the list of your notebooks on the platform',
      execute: () => {
        window.open(controllerUrl, '_blank', 'noopener');
      }
    });
    palette?.addItem({
      command: CommandIDs.openControlPanel,
      category: 'cgu-lab'
    });
    mainMenu?.fileMenu.addGroup([{ command: CommandIDs.openControlPanel }], 99);
  }
};

export default [corePlugin];
