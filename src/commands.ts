/**
 * One place to register a command together with where it shows: the command
 * palette, the File menu, the file browser's context menu and a button on
 * every notebook's toolbar that runs it with the notebook's path.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { DocumentRegistry, DocumentWidget } from '@jupyterlab/docregistry';
import { IMainMenu } from '@jupyterlab/mainmenu';
import {
  INotebookModel,
  INotebookTracker,
  NotebookPanel
} from '@jupyterlab/notebook';
import { LabIcon, ToolbarButton } from '@jupyterlab/ui-components';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import { normalizePath } from './files/selection';
import { PALETTE_CATEGORY } from './tokens';

/** What `app.commands.addCommand` takes. */
export type CommandOptions = Parameters<
  JupyterFrontEnd['commands']['addCommand']
>[1];

/** A toolbar button on every notebook that runs a command with its path. */
export interface ICommandButton {
  /** The toolbar item's name. */
  id: string;
  label: string;
  tooltip: string;
  icon: LabIcon;
  /** The button's `data-cgu` attribute. */
  dataCgu: string;
  /** The CSS class of the button; `cgu-ToolbarButton` unless told. */
  className?: string;
  /**
   * The toolbar items to insert it after, tried in order; at the end of the
   * toolbar when none is there. `['cgu-share', 'spacer']` unless told.
   */
  after?: ReadonlyArray<string>;
  /** Resolves whether the button is for this user; shown once true. */
  visible?: Promise<boolean>;
}

/** Where a command shows besides the command registry. */
export interface ICommandPlaces {
  /** The command palette, in the cgu-lab category. */
  palette?: ICommandPalette | null;
  /** The File menu, in a group of this rank. */
  fileMenu?: { mainMenu: IMainMenu | null; rank: number };
  /** The application's context menu. */
  contextMenu?: { selector: string; rank: number };
  /** A button on every notebook's toolbar. */
  button?: ICommandButton;
}

/**
 * Registers a command and adds it to the palette, the File menu, the context
 * menu and the notebook toolbar, as `places` says.
 */
export function registerCommand(
  app: JupyterFrontEnd,
  id: string,
  options: CommandOptions,
  places: ICommandPlaces = {}
): void {
  app.commands.addCommand(id, options);
  places.palette?.addItem({ command: id, category: PALETTE_CATEGORY });
  if (places.contextMenu) {
    app.contextMenu.addItem({
      command: id,
      selector: places.contextMenu.selector,
      rank: places.contextMenu.rank
    });
  }
  if (places.fileMenu?.mainMenu) {
    places.fileMenu.mainMenu.fileMenu.addGroup(
      [{ command: id }],
      places.fileMenu.rank
    );
  }
  if (places.button) {
    app.docRegistry.addWidgetExtension(
      'Notebook',
      new CommandButtonExtension(app, id, places.button)
    );
  }
}

/** A toolbar button on every notebook that runs a command with its path. */
export class CommandButtonExtension implements DocumentRegistry.IWidgetExtension<
  NotebookPanel,
  INotebookModel
> {
  constructor(
    private _app: JupyterFrontEnd,
    private _command: string,
    private _options: ICommandButton
  ) {}

  createNew(
    panel: NotebookPanel,
    context: DocumentRegistry.IContext<INotebookModel>
  ): ToolbarButton {
    const o = this._options;
    const button = new ToolbarButton({
      icon: o.icon,
      label: o.label,
      tooltip: o.tooltip,
      dataset: { cgu: o.dataCgu },
      onClick: () => {
        void this._app.commands.execute(this._command, { path: context.path });
      }
    });
    button.addClass(o.className ?? 'cgu-ToolbarButton');
    if (o.visible) {
      button.hide();
      void o.visible.then(show => {
        if (!button.isDisposed) {
          button.setHidden(!show);
        }
      });
    }
    const after = o.after ?? ['cgu-share', 'spacer'];
    if (!after.some(name => panel.toolbar.insertAfter(name, o.id, button))) {
      panel.toolbar.addItem(o.id, button);
    }
    return button;
  }
}

/**
 * The file a command is about, relative to the home: the `path` argument, or
 * the document in front, or the current notebook.
 */
export function currentPath(
  app: JupyterFrontEnd,
  notebooks: INotebookTracker | null,
  args: ReadonlyPartialJSONObject
): string | null {
  const contents = app.serviceManager.contents;
  if (typeof args.path === 'string' && args.path) {
    return normalizePath(contents.localPath(args.path)) || null;
  }
  const widget = app.shell.currentWidget;
  const context =
    widget instanceof DocumentWidget
      ? widget.context
      : (notebooks?.currentWidget?.context ?? null);
  return context
    ? normalizePath(contents.localPath(context.path)) || null
    : null;
}
