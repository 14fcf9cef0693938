import { fixCellList } from '../readonly/cells';
import { blockedCommandMessage } from '../readonly/format';
import { trans } from './trans';

/**
 * A list of cells shaped as `@jupyter/ydoc`'s YNotebook is: the one-cell
 * methods call the range ones through `this`, and loading a file inserts the
 * new cells and deletes the old ones.
 */
class FakeNotebook {
  cells: string[] = [];

  insertCell(index: number, cell: string): unknown {
    return this.insertCells(index, [cell])[0];
  }

  insertCells(index: number, cells: unknown[]): unknown[] {
    this.cells.splice(index, 0, ...(cells as string[]));
    return cells;
  }

  moveCell(fromIndex: number, toIndex: number): void {
    this.moveCells(fromIndex, toIndex);
  }

  moveCells(fromIndex: number, toIndex: number, n = 1): void {
    const moved = this.cells.splice(fromIndex, n);
    this.cells.splice(toIndex, 0, ...moved);
  }

  deleteCell(index: number): void {
    this.deleteCellRange(index, index + 1);
  }

  deleteCellRange(from: number, to: number): void {
    this.cells.splice(from, to - from);
  }

  fromJSON(value: unknown): void {
    const old = this.cells.length;
    this.insertCells(old, (value as { cells: string[] }).cells);
    this.deleteCellRange(0, old);
  }
}

describe('a read-only list of cells', () => {
  it('refuses run-and-advance, insert, move and delete, and says what was tried', () => {
    const notebook = new FakeNotebook();
    notebook.fromJSON({ cells: ['a', 'b'] });
    const refused: string[] = [];
    fixCellList(notebook, what => refused.push(what));

    expect(notebook.insertCell(2, 'new')).toBeUndefined();
    expect(notebook.insertCells(0, ['x', 'y'])).toEqual([]);
    notebook.moveCell(0, 1);
    notebook.deleteCell(0);
    notebook.deleteCellRange(0, 2);

    expect(notebook.cells).toEqual(['a', 'b']);
    expect(refused).toEqual(['insert', 'insert', 'move', 'delete', 'delete']);
  });

  it('still loads the file, and a reload of it, in place of the cells', () => {
    const notebook = new FakeNotebook();
    const refused: string[] = [];
    fixCellList(notebook, what => refused.push(what));
    notebook.fromJSON({ cells: ['a', 'b'] });
    expect(notebook.cells).toEqual(['a', 'b']);
    notebook.fromJSON({ cells: ['c'] });
    expect(notebook.cells).toEqual(['c']);
    expect(refused).toEqual([]);
    // After a load that failed half-way, edits are refused again.
    const broken = {
      get cells(): string[] {
        throw new Error('bad file');
      }
    };
    expect(() => notebook.fromJSON(broken)).toThrow('bad file');
    notebook.insertCell(0, 'x');
    expect(notebook.cells).toEqual(['c']);
  });

  it('is fixed once, and given back its own methods on release', () => {
    const notebook = new FakeNotebook();
    notebook.fromJSON({ cells: ['a'] });
    const release = fixCellList(notebook);
    expect(fixCellList(notebook)).toBe(release);
    release();
    notebook.insertCell(1, 'b');
    expect(notebook.cells).toEqual(['a', 'b']);
  });
});

describe('the structural commands of a read-only view', () => {
  it('say why they change nothing; run-and-advance still says it cannot run', () => {
    for (const id of [
      'notebook:insert-cell-below',
      'notebook:delete-cell',
      'notebook:cut-cell',
      'notebook:paste-cell-below',
      'notebook:move-cell-up',
      'notebook:merge-cells',
      'notebook:change-cell-to-markdown'
    ]) {
      expect(blockedCommandMessage(id, 'read', trans)).toBe(
        'This notebook is shared with you read-only: you cannot change the cells here.'
      );
      expect(blockedCommandMessage(id, 'edit', trans)).toBeNull();
    }
    expect(
      blockedCommandMessage('notebook:run-cell-and-select-next', 'read', trans)
    ).toMatch(/cannot run cells/);
    expect(
      blockedCommandMessage('notebook:copy-cell', 'read', trans)
    ).toBeNull();
  });
});
