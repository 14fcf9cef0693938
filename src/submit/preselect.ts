/**
 * What the Submit dialog selects at the start: the open notebook, the files
 * its code reads (notebookReads.ts) and the files its template brought, those
 * that exist in the home, each shown with its size and why it is there, and
 * their total. A TA running the submission then finds `data/iris.csv` too,
 * instead of a FileNotFoundError.
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { INotebookTracker } from '@jupyterlab/notebook';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import { CguAPI } from '../api';
import { h, replaceChildren } from '../dom';
import type { FilePicker } from '../files/filePicker';
import { formatBytes } from '../format';
import { candidatePaths, ISuggestion, mergeSuggestions } from './notebookReads';
import { isCovered } from '../files/selection';
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

/** The list under "Preselected": each suggestion, its size and why, and the total still included. */
export class SuggestionList extends Widget {
  constructor(
    private readonly suggestions: ReadonlyArray<ISuggestion>,
    private readonly picker: FilePicker,
    private readonly trans: TranslationBundle
  ) {
    super();
    this.addClass('cgu-Suggestions');
    this.node.dataset.cgu = 'submit-suggestions';
    this.picker.changed.connect(this._render, this);
    this._render();
  }

  dispose(): void {
    this.picker.changed.disconnect(this._render, this);
    super.dispose();
  }

  private _why(suggestion: ISuggestion): string {
    switch (suggestion.why) {
      case 'notebook':
        return this.trans.__('this notebook');
      case 'reads':
        return this.trans.__('read by the notebook');
      default:
        return this.trans.__('came with the template');
    }
  }

  private _render(): void {
    const selected = this.picker.paths;
    let total = 0;
    let count = 0;
    const rows = this.suggestions.map(s => {
      const included = isCovered(s.path, selected);
      if (included) {
        total += s.size;
        count += 1;
      }
      return this._row(s, included);
    });
    replaceChildren(
      this.node,
      h(
        'div',
        { class: 'cgu-Picker-label' },
        this.trans.__('Preselected for you')
      ),
      rows.length
        ? h('ul', { class: 'cgu-Suggestions-list' }, ...rows)
        : h(
            'p',
            { class: 'cgu-Form-note' },
            this.trans.__('Nothing to preselect.')
          ),
      h(
        'div',
        {
          class: 'cgu-Suggestions-total',
          'data-cgu': 'submit-suggestion-total'
        },
        this.trans._n(
          '%1 preselected item included: %2',
          '%1 preselected items included: %2',
          count,
          formatBytes(total)
        )
      )
    );
  }

  private _row(s: ISuggestion, included: boolean): HTMLElement {
    return h(
      'li',
      {
        class: `cgu-Suggestions-item${included ? '' : ' cgu-mod-left-out'}`,
        'data-cgu': 'submit-suggestion',
        'data-path': s.path,
        'data-included': included ? 'true' : 'false'
      },
      h(
        'code',
        { class: 'cgu-Suggestions-path' },
        s.type === 'directory' ? `${s.path}/` : s.path
      ),
      h(
        'span',
        {
          class: 'cgu-Suggestions-size',
          'data-cgu': 'submit-suggestion-size'
        },
        formatBytes(s.size)
      ),
      h(
        'span',
        { class: 'cgu-Suggestions-why' },
        included ? this._why(s) : this.trans.__('left out')
      )
    );
  }
}
