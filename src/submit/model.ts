/**
 * The Submit form's state: the assignments (open ones first), the one chosen,
 * the file picker's model (its limit follows the chosen assignment), the
 * note, the time the countdowns show, and the form's problem and busy text.
 * No DOM: the dialog's components render it and the tests drive it.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { createPickerModel } from '../files/filePicker';
import { PickerModel } from '../files/model';
import { filesText } from '../files/selection';
import { formatBytes } from '../format';
import { DialogFormModel } from '../formParts';
import { IAssignment, IFileListing } from '../apiTypes';
import { initialAssignment, orderAssignments } from './format';
import type { ISuggestion } from './notebookReads';

/** What the Submit form starts from. */
export interface ISubmitFormOptions {
  assignments: ReadonlyArray<IAssignment>;
  /** The assignment to start with (from the Course panel); null for the first open one. */
  assignmentId: number | null;
  /** Paths chosen at the start (the open notebook), relative to the home. */
  initialPaths: ReadonlyArray<string>;
  /** Preselected paths with their sizes and why (added to `initialPaths`). */
  suggestions?: ReadonlyArray<ISuggestion>;
  trans: TranslationBundle;
  /** `GET files`; replaceable in tests. */
  files?: (path: string) => Promise<IFileListing>;
}

/** What the form sends (not validated). */
export interface ISubmitValue {
  assignment: IAssignment | null;
  paths: string[];
  note: string;
}

/** The name an assignment is shown with. */
export function assignmentTitle(assignment: IAssignment): string {
  return assignment.title || assignment.name;
}

/** What the size limit belongs to, for the picker's warning: "Lab 1" quoted. */
function limitOwner(assignment: IAssignment, trans: TranslationBundle): string {
  return trans.__('"%1"', assignmentTitle(assignment));
}

export class SubmitModel extends DialogFormModel {
  constructor(options: ISubmitFormOptions, now: number = Date.now()) {
    super();
    const trans = options.trans;
    this.trans = trans;
    this._now = now;
    this.assignments = orderAssignments(options.assignments, now);
    this._chosen = initialAssignment(this.assignments, options.assignmentId);
    this.suggestions = options.suggestions ?? [];
    this.picker = createPickerModel({
      initial: [...options.initialPaths, ...this.suggestions.map(s => s.path)],
      maxBytes: this._chosen?.max_bytes ?? null,
      limitWhat: this._chosen
        ? limitOwner(this._chosen, trans)
        : trans.__('it'),
      editablePatterns: false,
      label: trans.__('Files to submit'),
      fetch: options.files,
      trans
    });
    this.ready = this.picker.start();
  }

  readonly trans: TranslationBundle;
  /** The assignments, open ones first. */
  readonly assignments: ReadonlyArray<IAssignment>;
  /** What was preselected, with sizes and why. */
  readonly suggestions: ReadonlyArray<ISuggestion>;
  /** The file picker's state. */
  readonly picker: PickerModel;
  /** Resolves once the home and the folders of the initial paths are listed. */
  readonly ready: Promise<void>;

  /** The chosen assignment. */
  get assignment(): IAssignment | null {
    return this._chosen;
  }

  /** The time the deadlines are counted down from. */
  get now(): number {
    return this._now;
  }

  get note(): string {
    return this._note;
  }

  choose(assignment: IAssignment): void {
    this._chosen = assignment;
    this.picker.setLimit(
      assignment.max_bytes,
      limitOwner(assignment, this.trans)
    );
    this.setError(null);
  }

  setNote(note: string): void {
    this._note = note;
    this.emit();
  }

  /** Repaint the countdowns at `now`. */
  tick(now: number = Date.now()): void {
    this._now = now;
    this.emit();
  }

  /** The request for the current choices (not validated). */
  value(): ISubmitValue {
    return {
      assignment: this._chosen,
      paths: this.picker.paths,
      note: this._note.trim()
    };
  }

  /** What the progress line says while the files are sent. */
  busyMessage(): string {
    const totals = this.picker.totals;
    return this.trans.__(
      'Submitting %1 (%2)…',
      filesText(totals.files, this.trans),
      formatBytes(totals.bytes)
    );
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.picker.dispose();
    super.dispose();
  }

  private _chosen: IAssignment | null;
  private _note = '';
  private _now: number;
}
