/**
 * One place to register a command together with where it shows. Where it is
 * placed (the File menu, the file browser's context menu, a notebook's
 * toolbar) is declared in the feature's settings schema (`schema/*.json`,
 * `jupyter.lab.menus` and `jupyter.lab.toolbars`); the code adds the command,
 * its palette item and, for a toolbar button that needs more than a command
 * button (a `data-cgu` landmark, the notebook's path, a late visibility), the
 * widget for the schema's toolbar item. The palette item is added here because
 * the command palette has no schema form: JupyterLab's settings declare main
 * menus, context menus and toolbars only (the launcher has none either).
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { ICommandPalette, IToolbarWidgetRegistry } from '@jupyterlab/apputils';
import { DocumentWidget } from '@jupyterlab/docregistry';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { LabIcon, ToolbarButton } from '@jupyterlab/ui-components';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import { Widget } from '@lumino/widgets';
import { normalizePath } from './files/selection';
import { PALETTE_CATEGORY } from './tokens';

/** What `app.commands.addCommand` takes. */
export type CommandOptions = Parameters<
  JupyterFrontEnd['commands']['addCommand']
>[1];

/** The toolbar of notebooks, as `jupyter.lab.toolbars` names it. */
export const NOTEBOOK_TOOLBAR = 'Notebook';

/**
 * The widget of a notebook toolbar item that a schema declares
 * (`jupyter.lab.toolbars.Notebook[].name`): a button that runs the command
 * with the notebook's path.
 */
export interface ICommandButton {
  /** The toolbar item's name in the schema. */
  id: string;
  label: string;
  tooltip: string;
  icon: LabIcon;
  /** The button's `data-cgu` attribute. */
  dataCgu: string;
  /** The CSS class of the button; `cgu-ToolbarButton` unless told. */
  className?: string;
  /** Resolves whether the button is for this user; shown once true. */
  visible?: Promise<boolean>;
}

/** What a command adds besides the command registry. */
export interface ICommandPlaces {
  /** The command palette, in the cgu-lab category. */
  palette?: ICommandPalette | null;
  /** The widget of the notebook toolbar item the schema places. */
  button?: { registry: IToolbarWidgetRegistry | null } & ICommandButton;
}

/**
 * Registers a command, its palette item and the widget of its notebook
 * toolbar button, as `places` says; menus and toolbars place it from the
 * schema.
 */
export function registerCommand(
  app: JupyterFrontEnd,
  id: string,
  options: CommandOptions,
  places: ICommandPlaces = {}
): void {
  app.commands.addCommand(id, options);
  places.palette?.addItem({ command: id, category: PALETTE_CATEGORY });
  const button = places.button;
  if (button?.registry) {
    button.registry.addFactory<Widget>(NOTEBOOK_TOOLBAR, button.id, panel =>
      commandButton(app, id, button, panel as NotebookPanel)
    );
  }
}

/** A toolbar button of a notebook that runs a command with its path. */
export function commandButton(
  app: JupyterFrontEnd,
  command: string,
  o: ICommandButton,
  panel: NotebookPanel
): ToolbarButton {
  const button = new ToolbarButton({
    icon: o.icon,
    label: o.label,
    tooltip: o.tooltip,
    dataset: { cgu: o.dataCgu },
    onClick: () => {
      void app.commands.execute(command, { path: panel.context.path });
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
  return button;
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
