/**
 * A read-only view's list of cells: fixed. JupyterLab's structural edits
 * (run-and-advance's new cell at the end, insert, delete, cut, paste, move,
 * merge, split, drag and drop) all go through three methods of the notebook's
 * shared model; for a read-only viewer those change nothing, while loading
 * the file (and reloading it when it changed on disk) still fills the list.
 * No DOM and no JupyterLab import: tested in src/__tests__.
 */

/** The methods of `@jupyter/ydoc`'s YNotebook that change the list of cells. */
export interface ICellList {
  insertCells(index: number, cells: unknown[]): unknown[];
  moveCells(fromIndex: number, toIndex: number, n?: number): void;
  deleteCellRange(from: number, to: number): void;
  fromJSON(value: unknown): void;
}

/** Marks a shared model whose list is already fixed (a notebook may be seen twice). */
const FIXED = Symbol('cgu-lab:cells-fixed');

/**
 * Keep `shared`'s list of cells as the file has it: insertions, moves and
 * deletions are refused (`onRefused` is called with what was tried), except
 * while the document itself is (re)loaded through `fromJSON`.
 * Returns a function that gives the list back its own methods.
 */
export function fixCellList(
  shared: ICellList,
  onRefused: (what: 'insert' | 'move' | 'delete') => void = () => undefined
): () => void {
  const marked = shared as ICellList & { [FIXED]?: () => void };
  if (marked[FIXED]) {
    return marked[FIXED];
  }
  const own = {
    insertCells: shared.insertCells,
    moveCells: shared.moveCells,
    deleteCellRange: shared.deleteCellRange,
    fromJSON: shared.fromJSON
  };
  let loading = 0;
  shared.insertCells = function (index: number, cells: unknown[]) {
    if (loading > 0) {
      return own.insertCells.call(this, index, cells);
    }
    onRefused('insert');
    return [];
  };
  shared.moveCells = function (fromIndex: number, toIndex: number, n = 1) {
    if (loading > 0) {
      return own.moveCells.call(this, fromIndex, toIndex, n);
    }
    onRefused('move');
  };
  shared.deleteCellRange = function (from: number, to: number) {
    if (loading > 0) {
      return own.deleteCellRange.call(this, from, to);
    }
    onRefused('delete');
  };
  shared.fromJSON = function (value: unknown) {
    loading += 1;
    try {
      return own.fromJSON.call(this, value);
    } finally {
      loading -= 1;
    }
  };
  const release = (): void => {
    Object.assign(shared, own);
    delete marked[FIXED];
  };
  marked[FIXED] = release;
  return release;
}
