/**
 * What the Submit dialog selects at the start: the open notebook, the files
 * its code reads (notebookReads.ts) and the files its template brought, those
 * that exist in the home (suggestions.tsx shows each with its size and why
 * it is there, and their total). A TA running the submission then finds
 * `data/iris.csv` too, instead of a FileNotFoundError.
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { INotebookTracker } from '@jupyterlab/notebook';
import { CguAPI } from '../api';
import { candidatePaths, ISuggestion, mergeSuggestions } from './notebookReads';
import { IFileStat, ITemplateFiles } from '../apiTypes';

export type { ISuggestion } from './notebookReads';

/** The code cells' sources of a notebook: the open one's (unsaved edits too), else the saved file's. */
export async function notebookSources(
  app: JupyterFrontEnd,
  notebooks: INotebookTracker | null,
  path: string
): Promise<string[]> {
  const local = (p: string) => app.serviceManager.contents.localPath(p);
  const panel = notebooks?.find(w => local(w.context.path) === path);
  if (panel?.content.model) {
    const sources: string[] = [];
    for (const cell of panel.content.model.cells) {
      if (cell.type === 'code') {
        sources.push(cell.sharedModel.getSource());
      }
    }
    return sources;
  }
  if (!path.endsWith('.ipynb')) {
    return [];
  }
  const model = await app.serviceManager.contents.get(path, { content: true });
  const cells = (model.content?.cells ?? []) as Array<{
    cell_type: string;
    source: string | string[];
  }>;
  return cells
    .filter(c => c.cell_type === 'code')
    .map(c => (Array.isArray(c.source) ? c.source.join('') : c.source));
}

/** Ask the home which of the candidates exist; never fails (no suggestions instead). */
export async function suggestFiles(options: {
  notebookPath: string | null;
  sources: ReadonlyArray<string>;
  templateFiles?: () => Promise<ITemplateFiles>;
  stat?: (paths: ReadonlyArray<string>) => Promise<IFileStat>;
}): Promise<ISuggestion[]> {
  const notebook = options.notebookPath;
  const reads = notebook ? candidatePaths(notebook, options.sources) : [];
  let template: string[] = [];
  try {
    template = (await (options.templateFiles ?? CguAPI.templateFiles)()).files;
  } catch (reason) {
    console.warn('cgu-lab: cannot ask for the template files', reason);
  }
  const asked = [...(notebook ? [notebook] : []), ...reads, ...template].slice(
    0,
    300
  );
  if (!asked.length) {
    return [];
  }
  try {
    const stat = await (options.stat ?? CguAPI.fileStat)(asked);
    return mergeSuggestions(notebook, reads, template, stat.entries);
  } catch (reason) {
    console.warn('cgu-lab: cannot check which files exist', reason);
    return notebook
      ? [{ path: notebook, type: 'file', size: 0, files: 1, why: 'notebook' }]
      : [];
  }
}

/**
 * What Submit and Save as template preselect for the notebook at `path`: itself,
 * the files its code reads and its template's files, those that exist. One rule
 * for both: whoever runs the copy (a TA, a student starting the template) needs
 * the same data files next to the notebook.
 */
export async function preselectFor(
  app: JupyterFrontEnd,
  notebooks: INotebookTracker | null,
  path: string | null,
  ask: Pick<Parameters<typeof suggestFiles>[0], 'templateFiles' | 'stat'> = {}
): Promise<ISuggestion[]> {
  return suggestFiles({
    ...ask,
    notebookPath: path,
    sources: path
      ? await notebookSources(app, notebooks, path).catch(() => [])
      : []
  });
}
