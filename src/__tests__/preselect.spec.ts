/**
 * Submit and Save as template preselect by one rule (preselectFor): the
 * notebook, the files its code reads and its template's files, those that exist.
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
// preselect.ts also holds the list widget, whose DOM modules need a browser to load.
jest.mock('@lumino/widgets', () => ({ Widget: class {} }));
jest.mock('../dom', () => ({ h: jest.fn(), replaceChildren: jest.fn() }));
import { preselectFor } from '../submit/preselect';
import { IFileEntry, ITemplateFiles } from '../apiTypes';

const template = (files: string[]): ITemplateFiles => ({
  template: files.length ? 'ds' : null,
  display_name: 'Data science',
  version: files.length ? 1 : null,
  files
});

const entry = (path: string, size: number): IFileEntry => ({
  name: path.split('/').pop() as string,
  path,
  type: 'file',
  size,
  files: 1,
  excluded: false
});

/** A JupyterLab whose saved notebook `week1/hw.ipynb` reads data/iris.csv. */
const app = {
  serviceManager: {
    contents: {
      localPath: (p: string) => p,
      get: async () => ({
        content: {
          cells: [
            { cell_type: 'markdown', source: "open('notes.txt')" },
            {
              cell_type: 'code',
              source: ['import pandas as pd\n', "pd.read_csv('data/iris.csv')"]
            }
          ]
        }
      })
    }
  }
} as unknown as JupyterFrontEnd;

describe('preselectFor', () => {
  it('selects the notebook, what it reads and its template files that exist', async () => {
    const asked: string[][] = [];
    const chosen = await preselectFor(app, null, 'week1/hw.ipynb', {
      templateFiles: async () => template(['week1/helper.py', 'gone.py']),
      stat: async paths => {
        asked.push([...paths]);
        return {
          entries: [
            entry('week1/hw.ipynb', 100),
            entry('week1/data/iris.csv', 8),
            entry('week1/helper.py', 20)
          ],
          excluded_patterns: []
        };
      }
    });
    expect(asked[0]).toContain('week1/data/iris.csv');
    expect(asked[0]).not.toContain('week1/notes.txt'); // markdown is not code
    expect(chosen.map(c => [c.path, c.why])).toEqual([
      ['week1/hw.ipynb', 'notebook'],
      ['week1/data/iris.csv', 'reads'],
      ['week1/helper.py', 'template']
    ]);
  });

  it('offers nothing without a notebook or template', async () => {
    const chosen = await preselectFor(app, null, null, {
      templateFiles: async () => template([]),
      stat: async () => ({ entries: [], excluded_patterns: [] })
    });
    expect(chosen).toEqual([]);
  });
});
