/**
 * "Submit" (students): hand in files of this home for an assignment of one of
 * my groups. The dialog lists the assignments (open ones first, with their
 * deadline countdown), a file picker prefilled with the open notebook and
 * what it needs to run elsewhere (the files its code reads, the files its
 * template brought: preselect.ts, shown by suggestions.tsx with each size and
 * the total), and a note; the receipt (receipt.ts) is shown afterwards.
 *
 * JupyterLab's Dialog with a ReactWidget body: the state is a `SubmitModel`
 * (model.ts), the form its components.
 */
import { ReactWidget } from '@jupyterlab/ui-components';
import { Poll } from '@lumino/polling';
import * as React from 'react';
import { CguAPI } from '../api';
import { IFormBody, IKeyAwareBody, openFormDialog } from '../dialog';
import { FilePickerView, pickerKeydown } from '../files/filePicker';
import { formatBytes } from '../format';
import { FormError, FormProgress } from '../formParts';
import { repaintPoll } from '../polling';
import { useModel } from '../useModel';
import {
  deadlineState,
  deadlineText,
  submissionCountText,
  validateSubmission
} from './format';
import {
  assignmentTitle,
  ISubmitFormOptions,
  ISubmitValue,
  SubmitModel
} from './model';
import { SuggestionList } from './suggestions';
import { IAssignment, ISubmission, ISubmitRequest } from '../apiTypes';

/** What the Submit dialog needs. */
export interface ISubmitDialogOptions extends ISubmitFormOptions {
  /** Called with the receipt once the submission is received. */
  onSubmitted: (receipt: ISubmission) => void;
  /** The endpoint; replaceable in tests. */
  submit?: (body: ISubmitRequest) => Promise<ISubmission>;
}

/** How often the deadline countdowns are refreshed, in seconds. */
const COUNTDOWN_SECONDS = 30;

/** One radio row: the assignment, its group, deadline, submissions and limit. */
function AssignmentRow(props: {
  model: SubmitModel;
  assignment: IAssignment;
  groupName: string;
}): JSX.Element {
  const { model, assignment } = props;
  const trans = model.trans;
  const id = React.useId();
  const detailsId = React.useId();
  const state = deadlineState(assignment, model.now);
  return (
    <div
      className={`cgu-Submit-assignment cgu-Deadline-${state}`}
      data-cgu="submit-assignment"
      data-assignment-id={assignment.id}
      data-state={state}
    >
      <input
        type="radio"
        id={id}
        name={props.groupName}
        value={String(assignment.id)}
        checked={model.assignment?.id === assignment.id}
        disabled={!assignment.open}
        aria-describedby={detailsId}
        data-cgu="submit-assignment-radio"
        onChange={() => model.choose(assignment)}
      />
      <label htmlFor={id} title={assignment.description || ''}>
        {assignmentTitle(assignment)}
        <span className="cgu-Submit-group">{` · ${assignment.group}`}</span>
      </label>
      <span id={detailsId} className="cgu-Submit-details">
        <span
          className="cgu-Submit-deadline"
          data-cgu="submit-deadline"
          data-assignment-id={assignment.id}
          title={
            assignment.deadline
              ? new Date(assignment.deadline).toLocaleString()
              : ''
          }
        >
          {deadlineText(assignment, model.now, trans)}
        </span>
        {' · '}
        <span data-cgu="submit-count">
          {submissionCountText(assignment.submissions, trans)}
        </span>
        {trans.__(' · limit %1', formatBytes(assignment.max_bytes))}
      </span>
    </div>
  );
}

/** The Submit form. */
export function SubmitForm(props: { model: SubmitModel }): JSX.Element {
  const { model } = props;
  useModel(model);
  const trans = model.trans;
  const groupName = React.useId();
  const noteId = React.useId();
  return (
    <>
      <fieldset className="cgu-Form-fieldset">
        <legend>{trans.__('Assignment')}</legend>
        <div className="cgu-Submit-assignments" data-cgu="submit-assignments">
          {model.assignments.length === 0 ? (
            <p className="cgu-Form-note" data-cgu="submit-no-assignments">
              {trans.__('None of your groups has an assignment to submit to.')}
            </p>
          ) : null}
          {model.assignments.map(assignment => (
            <AssignmentRow
              key={assignment.id}
              model={model}
              assignment={assignment}
              groupName={groupName}
            />
          ))}
        </div>
      </fieldset>
      {model.suggestions.length ? (
        <SuggestionList
          suggestions={model.suggestions}
          picker={model.picker}
          trans={trans}
        />
      ) : null}
      <FilePickerView model={model.picker} />
      <div className="cgu-Form-field cgu-Form-wide">
        <label htmlFor={noteId}>{trans.__('Note (optional)')}</label>
        <textarea
          id={noteId}
          className="jp-mod-styled cgu-Form-textarea"
          rows={2}
          placeholder={trans.__('Anything the teaching staff should know')}
          data-cgu="submit-note"
          value={model.note}
          onChange={event => model.setNote(event.currentTarget.value)}
        />
      </div>
      <FormError message={model.error} dataCgu="submit-error" />
      <FormProgress
        text={model.busyText}
        label={trans.__('Submitting')}
        dataCgu="submit-progress"
      />
    </>
  );
}

/** The body of the Submit dialog. */
export class SubmitBody
  extends ReactWidget
  implements IKeyAwareBody, IFormBody<ISubmitValue>
{
  constructor(options: ISubmitFormOptions) {
    super();
    this.addClass('cgu-Submit');
    this.node.dataset.cgu = 'submit-dialog';
    this.model = new SubmitModel(options);
    this._deadlines = repaintPoll(
      'cgu-lab:submit-deadlines',
      COUNTDOWN_SECONDS,
      () => this.model.tick()
    );
  }

  /** The form's state. */
  readonly model: SubmitModel;

  handleDialogKeydown(event: KeyboardEvent): boolean {
    return pickerKeydown(this.model.picker, event);
  }

  /** The request for the current choices (not validated). */
  getValue(): ISubmitValue {
    return this.model.value();
  }

  showError(message: string | null): void {
    this.model.setError(message);
  }

  setBusy(busy: boolean): void {
    this.node.setAttribute('aria-busy', busy ? 'true' : 'false');
    this.model.setBusyText(busy ? this.model.busyMessage() : null);
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._deadlines.dispose();
    this.model.dispose();
    super.dispose();
  }

  protected render(): JSX.Element {
    return <SubmitForm model={this.model} />;
  }

  protected onAfterAttach(msg: Parameters<ReactWidget['onAfterAttach']>[0]) {
    super.onAfterAttach(msg);
    void this._deadlines.start();
  }

  protected onBeforeDetach(msg: Parameters<ReactWidget['onBeforeDetach']>[0]) {
    void this._deadlines.stop();
    super.onBeforeDetach(msg);
  }

  private _deadlines: Poll;
}

/** Open the Submit dialog; resolves with the receipt once submitted. */
export async function openSubmitDialog(
  options: ISubmitDialogOptions
): Promise<ISubmission | null> {
  const submit = options.submit ?? CguAPI.submit;
  const trans = options.trans;
  return openFormDialog({
    title: trans.__('Submit an assignment'),
    body: new SubmitBody(options),
    acceptLabel: trans.__('Submit'),
    focusNodeSelector: '[data-cgu="submit-assignment-radio"]:checked',
    className: 'cgu-SubmitDialog',
    acceptLandmark: 'submit-send',
    trans,
    validate: value => validateSubmission(value.assignment, value.paths, trans),
    send: value =>
      submit({
        assignment_id: (value.assignment as IAssignment).id,
        paths: value.paths,
        note: value.note
      }),
    onDone: options.onSubmitted
  });
}
