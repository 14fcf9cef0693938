/**
 * The file picker without a browser: the model lists folders as they open,
 * follows the selection rules of selection.ts, edits the excluded patterns
 * and weighs the selection against the limit; the tree renders each entry's
 * state (checked, partly, excluded with its reason) through React's server
 * renderer.
 */
import * as React from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { PickerModel } from '../files/model';
import { PickerTree } from '../files/tree';
import { IFileEntry, IFileListing } from '../apiTypes';
import { trans } from './trans';

function file(path: string, size: number, excluded = false): IFileEntry {
  const name = path.split('/').pop() as string;
  return { name, path, type: 'file', size, files: 1, excluded };
}

function folder(
  path: string,
  size: number,
  files: number,
  excluded = false
): IFileEntry {
  const name = path.split('/').pop() as string;
  return { name, path, type: 'directory', size, files, excluded };
}

/** A home as the files endpoint lists it, folder by folder. */
const HOME: { [folder: string]: IFileEntry[] } = {
  '': [
    file('hw.ipynb', 100),
    folder('week1', 1210, 3),
    folder('.ipynb_checkpoints', 50, 1, true)
  ],
  week1: [
    file('week1/notes.txt', 10),
    file('week1/model.ckpt', 1000),
    folder('week1/data', 200, 1)
  ],
  'week1/data': [file('week1/data/iris.csv', 200)],
  '.ipynb_checkpoints': [
    file('.ipynb_checkpoints/hw-checkpoint.ipynb', 50, true)
  ],
  empty: []
};

function picker(
  options: {
    initial?: string[];
    editable?: boolean;
    maxBytes?: number | null;
  } = {}
): { model: PickerModel; asked: string[] } {
  const asked: string[] = [];
  const model = new PickerModel({
    initial: options.initial ?? [],
    maxBytes: options.maxBytes ?? null,
    limitWhat: 'a template',
    editablePatterns: options.editable ?? false,
    label: 'Files to include',
    trans,
    fetch: async (path: string): Promise<IFileListing> => {
      asked.push(path);
      const entries = HOME[path];
      if (!entries) {
        throw new Error(`no folder ${path}`);
      }
      return { path, entries, excluded_patterns: ['.ipynb_checkpoints'] };
    }
  });
  return { model, asked };
}

const entry = (path: string): IFileEntry =>
  ([] as IFileEntry[])
    .concat(...Object.values(HOME))
    .find(e => e.path === path) as IFileEntry;

describe('PickerModel', () => {
  it('lists the home and opens the folders of the initial paths', async () => {
    const { model, asked } = picker({ initial: ['week1/data/iris.csv'] });
    await model.start();
    expect(asked).toEqual(['', 'week1', 'week1/data']);
    expect(model.isOpen('week1')).toBe(true);
    expect(model.isOpen('week1/data')).toBe(true);
    expect(model.listing('')?.map(e => e.name)).toEqual([
      '.ipynb_checkpoints',
      'week1',
      'hw.ipynb'
    ]);
    expect(model.rowState(entry('week1')).state).toBe('partial');
    expect(model.rowState(entry('week1/data/iris.csv')).state).toBe('checked');
    expect(model.rowState(entry('hw.ipynb')).state).toBe('unchecked');
    expect(model.paths).toEqual(['week1/data/iris.csv']);
    expect(model.summary).toBe('Selected: 1 file, 200 B');
  });

  it('greys out what the platform leaves out, with the reason', async () => {
    const { model } = picker();
    await model.start();
    const state = model.rowState(entry('.ipynb_checkpoints'));
    expect(state).toEqual({
      excluded: true,
      state: 'excluded',
      reason: 'excluded: matches ".ipynb_checkpoints"',
      size: '',
      count: ''
    });
    model.toggle('.ipynb_checkpoints', true);
    expect(model.paths).toEqual([]);
  });

  it('checks a folder, then leaves one entry of it out', async () => {
    const { model } = picker();
    await model.start();
    await model.expand('week1', true);
    model.toggle('week1', true);
    expect(model.paths).toEqual(['week1']);
    expect(model.totals).toMatchObject({ bytes: 1210, files: 3 });
    model.toggle('week1/model.ckpt', false);
    expect(model.paths).toEqual(['week1/data', 'week1/notes.txt']);
    expect(model.rowState(entry('week1')).state).toBe('partial');
    expect(model.rowState(entry('week1/data')).state).toBe('checked');
  });

  it('opens and closes folders, listing each once', async () => {
    const { model, asked } = picker();
    await model.start();
    await model.expand('week1', true);
    await model.expand('week1', false);
    await model.expand('week1', true);
    expect(asked).toEqual(['', 'week1']);
    // Files and unknown paths do not open.
    await model.expand('hw.ipynb', true);
    await model.expand('nowhere', true);
    expect(model.isOpen('hw.ipynb')).toBe(false);
    expect(model.isOpen('nowhere')).toBe(false);
  });

  it('edits the excluded patterns of a template', async () => {
    const { model } = picker({ editable: true, initial: ['week1'] });
    await model.start();
    await model.expand('week1', true);
    expect(model.patterns).toEqual(['.ipynb_checkpoints']);
    model.setDraft('*.ckpt');
    model.addPattern();
    expect(model.patterns).toEqual(['.ipynb_checkpoints', '*.ckpt']);
    expect(model.draft).toBe('');
    expect(model.rowState(entry('week1/model.ckpt')).reason).toBe(
      'excluded: matches "*.ckpt"'
    );
    expect(model.totals).toMatchObject({ bytes: 210, files: 2 });
    model.setDraft('*.ckpt');
    model.addPattern();
    expect(model.patternError).toBe('"*.ckpt" is already in the list.');
    expect(model.draft).toBe('*.ckpt');
    model.setDraft('../x');
    model.addPattern();
    expect(model.patternError).toBe('A pattern cannot contain "..".');
    let focused = 0;
    model.focusRequested.connect(() => (focused += 1));
    model.removePattern('*.ckpt');
    expect(model.patterns).toEqual(['.ipynb_checkpoints']);
    expect(model.totals).toMatchObject({ bytes: 1210, files: 3 });
    expect(focused).toBe(1);
  });

  it('warns when the selection is over the limit, which may change', async () => {
    const { model } = picker({ initial: ['week1'], maxBytes: 1000 });
    await model.start();
    expect(model.overLimit).toBe(true);
    expect(model.warning).toContain('over the 1000 B limit of a template');
    expect(model.summary).toBe('Selected: 3 files, 1.2 KiB of 1000 B allowed');
    model.setLimit(4096, '"Lab 1"');
    expect(model.overLimit).toBe(false);
    expect(model.warning).toBeNull();
    model.setLimit(10, '"Lab 2"');
    expect(model.warning).toContain('limit of "Lab 2"');
  });

  it('says which folder could not be listed', async () => {
    HOME[''].push(folder('broken', 1, 1));
    try {
      const { model } = picker({ initial: ['gone/file.txt'] });
      await model.start();
      expect(model.status).toBe('');
      // An initial path that is not in the home is kept but not measured.
      expect(model.totals.unknown).toEqual(['gone/file.txt']);
      await model.expand('broken', true);
      expect(model.status).toBe('Could not list broken: no folder broken');
      expect(model.listing('broken')).toBeUndefined();
    } finally {
      HOME[''].pop();
    }
  });
});

describe('PickerTree', () => {
  const render = (model: PickerModel): string =>
    renderToStaticMarkup(React.createElement(PickerTree, { model }));

  it('shows that the home is being listed', () => {
    const html = render(picker().model);
    expect(html).toContain('Loading your files…');
    expect(html).toContain('data-cgu="picker-total"');
  });

  it('renders each entry with its state, reason and size', async () => {
    const { model } = picker({ initial: ['week1/data/iris.csv'] });
    await model.start();
    const html = render(model);
    const item = (path: string): string =>
      new RegExp(
        `<li class="[^"]*" data-cgu="picker-entry" data-path="${path.replace(/\./g, '\\.')}"[^>]*>`
      ).exec(html)?.[0] ?? '';
    expect(item('week1')).toContain('data-state="partial"');
    expect(item('week1')).toContain('cgu-mod-open');
    expect(item('.ipynb_checkpoints')).toContain('cgu-mod-excluded');
    expect(item('.ipynb_checkpoints')).toContain('data-state="excluded"');
    const checkbox = (path: string): string =>
      new RegExp(
        `<input type="checkbox"[^>]*data-path="${path.replace(/\./g, '\\.')}"[^>]*>`
      ).exec(html)?.[0] ?? '';
    expect(checkbox('week1/data/iris.csv')).toContain('checked=""');
    expect(checkbox('hw.ipynb')).not.toContain('checked');
    expect(checkbox('.ipynb_checkpoints')).toContain('disabled=""');
    expect(html).toContain('excluded: matches &quot;.ipynb_checkpoints&quot;');
    expect(html).toMatch(
      /aria-expanded="true"[^>]*data-cgu="picker-expand" data-path="week1"/
    );
    expect(html).toMatch(
      /aria-expanded="false"[^>]*disabled=""[^>]*data-cgu="picker-expand" data-path="\.ipynb_checkpoints"/
    );
    expect(html).toContain('Selected: 1 file, 200 B');
  });
});
