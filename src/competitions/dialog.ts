/**
 * The "Submit to Competition" form: which open competition, which CSV of this
 * home, and a note.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import { IFormBody, showFormBusy, showFormError } from '../dialog';
import { h, uniqueId } from '../dom';
import { fileFor, ICompetition, initialFile } from './format';

/** What the form gives. */
export interface IEntryForm {
  competitionId: number | null;
  path: string;
  note: string;
}

/** The form's body, for `openFormDialog`. */
export class EntryFormBody extends Widget implements IFormBody<IEntryForm> {
  constructor(
    competitions: ReadonlyArray<ICompetition>,
    path: string,
    trans: TranslationBundle,
    notebook: string | null = null
  ) {
    super();
    this.addClass('cgu-CompetitionForm');
    this._competitions = competitions;
    this._initialPath = path;
    this._notebook = notebook;
    this._trans = trans;
    const ids = {
      competition: uniqueId('cgu-comp'),
      path: uniqueId('cgu-comp-path'),
      note: uniqueId('cgu-comp-note')
    };
    this._select = competitionSelect(ids.competition, competitions, trans);
    this._path = h('input', {
      id: ids.path,
      value: path,
      placeholder: 'predictions.csv',
      'data-cgu': 'competition-path'
    });
    this._note = h('input', { id: ids.note, maxlength: 2000 });
    this._hint = h('p', { class: 'cgu-Hint' });
    this._error = h('p', { class: 'cgu-Error', role: 'alert', hidden: true });
    this._progress = h('p', { class: 'cgu-Hint', hidden: true });
    this._label = h('label', { for: ids.path }, trans.__('Predictions file'));
    this._select.addEventListener('change', () => this._describe());
    this._describe();
    this._form = h(
      'form',
      { class: 'cgu-Form' },
      h('label', { for: ids.competition }, trans.__('Competition')),
      this._select,
      this._label,
      this._path,
      this._hint,
      h('label', { for: ids.note }, trans.__('Note')),
      this._note,
      this._error,
      this._progress
    );
    this.node.appendChild(this._form);
  }

  getValue(): IEntryForm {
    const id = Number(this._select.value);
    return {
      competitionId: Number.isInteger(id) && id > 0 ? id : null,
      path: this._path.value.trim(),
      note: this._note.value
    };
  }

  showError(message: string | null): void {
    showFormError(this._error, message);
  }

  setBusy(busy: boolean): void {
    const text = busy ? this._trans.__('Sending your entry…') : null;
    showFormBusy(this._form, this._progress, this._progress, text);
  }

  /** Fits the file field and the hint to the chosen competition's kind. */
  private _describe(): void {
    const trans = this._trans;
    const chosen = this._competitions.find(
      c => String(c.id) === this._select.value
    );
    const code = chosen?.kind === 'code';
    // A code competition takes the open notebook; switching back restores the CSV.
    const current = this._path.value.trim();
    if (code) {
      this._path.value = fileFor(chosen, current, this._notebook);
    } else if (/\.ipynb$/i.test(current) || !current) {
      this._path.value = initialFile(this._initialPath);
    }
    this._path.placeholder = code ? 'model.ipynb' : 'predictions.csv';
    this._label.textContent = code
      ? trans.__('Notebook')
      : trans.__('Predictions file');
    this._hint.textContent = entryHint(chosen, trans);
  }

  private _form: HTMLFormElement;
  private _select: HTMLSelectElement;
  private _path: HTMLInputElement;
  private _note: HTMLInputElement;
  private _hint: HTMLElement;
  private _error: HTMLElement;
  private _progress: HTMLElement;
  private _label: HTMLLabelElement;
  private _trans: TranslationBundle;
  private _competitions: ReadonlyArray<ICompetition>;
  /** The path the form opened with. */
  private _initialPath: string;
  private _notebook: string | null;
}

function competitionSelect(
  id: string,
  competitions: ReadonlyArray<ICompetition>,
  trans: TranslationBundle
): HTMLSelectElement {
  return h(
    'select',
    { id, 'data-cgu': 'competition-select' },
    competitions.map(c =>
      h(
        'option',
        { value: String(c.id) },
        trans.__('%1 (%2)', c.title, c.group)
      )
    )
  );
}

/** What the chosen competition wants: a CSV, or a notebook that writes one. */
function entryHint(
  chosen: ICompetition | undefined,
  trans: TranslationBundle
): string {
  if (chosen?.kind === 'code') {
    return trans.__(
      'A notebook the platform runs on the hidden inputs (their path is in $CGU_COMPETITION_INPUT); it writes a CSV with the columns %1,%2 to $CGU_COMPETITION_OUTPUT, scored by %3.',
      chosen.id_column,
      chosen.target_column,
      chosen.metric_title
    );
  }
  return chosen
    ? trans.__(
        'A CSV with the columns %1,%2, scored by %3.',
        chosen.id_column,
        chosen.target_column,
        chosen.metric_title
      )
    : '';
}
