/**
 * The "Submit to Competition" form: which open competition, which CSV of this
 * home (or, for a code competition, which notebook), and a note.
 * A ReactWidget body over an `EntryModel`; the rules are format.ts's.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { ReactWidget } from '@jupyterlab/ui-components';
import * as React from 'react';
import { IFormBody } from '../dialog';
import { DialogFormModel } from '../formParts';
import { useModel } from '../useModel';
import { fileFor, ICompetition, initialFile } from './format';

/** What the form gives. */
export interface IEntryForm {
  competitionId: number | null;
  path: string;
  note: string;
}

/** The entry form's state: the competition chosen, the file and the note as typed. */
export class EntryModel extends DialogFormModel {
  constructor(
    readonly competitions: ReadonlyArray<ICompetition>,
    /** The path the form opened with. */
    private readonly _initialPath: string,
    readonly trans: TranslationBundle,
    private readonly _notebook: string | null = null
  ) {
    super();
    this._competitionId = competitions[0] ? String(competitions[0].id) : '';
    this._path = _initialPath;
    this._path = this._fittedPath();
  }

  get competitionId(): string {
    return this._competitionId;
  }
  get path(): string {
    return this._path;
  }
  get note(): string {
    return this._note;
  }

  /** The chosen competition. */
  get chosen(): ICompetition | undefined {
    return this.competitions.find(c => String(c.id) === this._competitionId);
  }

  /** Whether the chosen competition runs a notebook. */
  get isCode(): boolean {
    return this.chosen?.kind === 'code';
  }

  /** What the chosen competition wants: a CSV, or a notebook that writes one. */
  get hint(): string {
    const chosen = this.chosen;
    const trans = this.trans;
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

  /** Choose a competition; the file follows its kind. */
  setCompetition(id: string): void {
    this._competitionId = id;
    this._path = this._fittedPath();
    this.emit();
  }

  setPath(path: string): void {
    this._path = path;
    this.emit();
  }

  setNote(note: string): void {
    this._note = note;
    this.emit();
  }

  value(): IEntryForm {
    const id = Number(this._competitionId);
    return {
      competitionId: Number.isInteger(id) && id > 0 ? id : null,
      path: this._path.trim(),
      note: this._note
    };
  }

  /** A code competition takes the open notebook; switching back restores the CSV. */
  private _fittedPath(): string {
    const current = this._path.trim();
    if (this.isCode) {
      return fileFor(this.chosen, current, this._notebook);
    }
    if (/\.ipynb$/i.test(current) || !current) {
      return initialFile(this._initialPath);
    }
    return this._path;
  }

  private _competitionId: string;
  private _path: string;
  private _note = '';
}

/** The form. */
export function EntryForm(props: { model: EntryModel }): JSX.Element {
  const { model } = props;
  useModel(model);
  const trans = model.trans;
  const ids = {
    competition: React.useId(),
    path: React.useId(),
    note: React.useId()
  };
  return (
    <form className="cgu-Form" onSubmit={event => event.preventDefault()}>
      <label htmlFor={ids.competition}>{trans.__('Competition')}</label>
      <select
        id={ids.competition}
        data-cgu="competition-select"
        value={model.competitionId}
        onChange={event => model.setCompetition(event.currentTarget.value)}
      >
        {model.competitions.map(c => (
          <option key={c.id} value={String(c.id)}>
            {trans.__('%1 (%2)', c.title, c.group)}
          </option>
        ))}
      </select>
      <label htmlFor={ids.path}>
        {model.isCode ? trans.__('Notebook') : trans.__('Predictions file')}
      </label>
      <input
        id={ids.path}
        value={model.path}
        placeholder={model.isCode ? 'model.ipynb' : 'predictions.csv'}
        data-cgu="competition-path"
        onChange={event => model.setPath(event.currentTarget.value)}
      />
      <p className="cgu-Hint">{model.hint}</p>
      <label htmlFor={ids.note}>{trans.__('Note')}</label>
      <input
        id={ids.note}
        maxLength={2000}
        value={model.note}
        onChange={event => model.setNote(event.currentTarget.value)}
      />
      <p className="cgu-Error" role="alert" hidden={!model.error}>
        {model.error ?? ''}
      </p>
      <p className="cgu-Hint" hidden={model.busyText === null}>
        {model.busyText ?? ''}
      </p>
    </form>
  );
}

/** The form's body, for `openFormDialog`. */
export class EntryFormBody
  extends ReactWidget
  implements IFormBody<IEntryForm>
{
  constructor(
    competitions: ReadonlyArray<ICompetition>,
    path: string,
    trans: TranslationBundle,
    notebook: string | null = null
  ) {
    super();
    this.addClass('cgu-CompetitionForm');
    this.model = new EntryModel(competitions, path, trans, notebook);
  }

  /** The form's state. */
  readonly model: EntryModel;

  getValue(): IEntryForm {
    return this.model.value();
  }

  showError(message: string | null): void {
    this.model.setError(message);
  }

  setBusy(busy: boolean): void {
    this.node
      .querySelector('form')
      ?.setAttribute('aria-busy', busy ? 'true' : 'false');
    this.model.setBusyText(
      busy ? this.model.trans.__('Sending your entry…') : null
    );
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.model.dispose();
    super.dispose();
  }

  protected render(): JSX.Element {
    return <EntryForm model={this.model} />;
  }
}
