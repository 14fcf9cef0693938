/**
 * "Submit" (students): hand in files of this home for an assignment of one of
 * my groups. The dialog lists the assignments (open ones first, with their
 * deadline countdown), a file picker prefilled with the open notebook and
 * what it needs to run elsewhere (the files its code reads, the files its
 * template brought: preselect.ts, each with its size and the total),
 * and a note; the receipt (receipt.ts) is shown afterwards.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { Poll } from '@lumino/polling';
import { Widget } from '@lumino/widgets';
import { CguAPI } from '../api';
import {
  IKeyAwareBody,
  openFormDialog,
  showFormBusy,
  showFormError
} from '../dialog';
import { h, replaceChildren, uniqueId } from '../dom';
import { FilePicker } from '../files/filePicker';
import { formatBytes } from '../format';
import { repaintPoll } from '../polling';
import { ISuggestion, SuggestionList } from './preselect';
import { filesText } from '../files/selection';
import {
  deadlineState,
  deadlineText,
  initialAssignment,
  orderAssignments,
  submissionCountText,
  validateSubmission
} from './format';
import {
  IAssignment,
  IFileListing,
  ISubmission,
  ISubmitRequest
} from '../apiTypes';

/** What the Submit dialog needs. */
export interface ISubmitDialogOptions {
  assignments: ReadonlyArray<IAssignment>;
  /** The assignment to start with (from the Course panel); null for the first open one. */
  assignmentId: number | null;
  /** Paths chosen at the start (the open notebook), relative to the home. */
  initialPaths: ReadonlyArray<string>;
  /** Preselected paths with their sizes and why (added to `initialPaths`). */
  suggestions?: ReadonlyArray<ISuggestion>;
  trans: TranslationBundle;
  /** Called with the receipt once the submission is received. */
  onSubmitted: (receipt: ISubmission) => void;
  /** The endpoints; replaceable in tests. */
  submit?: (body: ISubmitRequest) => Promise<ISubmission>;
  files?: (path: string) => Promise<IFileListing>;
}

/** How often the deadline countdowns are refreshed, in seconds. */
const COUNTDOWN_SECONDS = 30;

/** The name an assignment is shown with. */
function assignmentTitle(assignment: IAssignment): string {
  return assignment.title || assignment.name;
}

/** What the size limit belongs to, for the picker's warning: "Lab 1" quoted. */
function limitOwner(assignment: IAssignment, trans: TranslationBundle): string {
  return trans.__('"%1"', assignmentTitle(assignment));
}

/** The body of the Submit dialog. */
export class SubmitBody extends Widget implements IKeyAwareBody {
  constructor(options: ISubmitDialogOptions) {
    super();
    this.addClass('cgu-Submit');
    this.node.dataset.cgu = 'submit-dialog';
    const trans = options.trans;
    this._trans = trans;
    this._ordered = orderAssignments(options.assignments, Date.now());
    this._chosen = initialAssignment(this._ordered, options.assignmentId);
    const suggested = options.suggestions ?? [];
    this.picker = new FilePicker({
      initial: [...options.initialPaths, ...suggested.map(s => s.path)],
      maxBytes: this._chosen?.max_bytes ?? null,
      limitWhat: this._chosen
        ? limitOwner(this._chosen, trans)
        : trans.__('it'),
      editablePatterns: false,
      label: trans.__('Files to submit'),
      fetch: options.files,
      trans
    });
    this._suggestions = suggested.length
      ? new SuggestionList(suggested, this.picker, trans)
      : null;
    this._deadlines = repaintPoll(
      'cgu-lab:submit-deadlines',
      COUNTDOWN_SECONDS,
      () => this._updateDeadlines()
    );
    this._build();
  }

  /** The file picker. */
  readonly picker: FilePicker;

  /** The chosen assignment. */
  get assignment(): IAssignment | null {
    return this._chosen;
  }

  handleDialogKeydown(event: KeyboardEvent): boolean {
    return this.picker.handleDialogKeydown(event);
  }

  /** The request for the current choices (not validated). */
  getValue(): {
    assignment: IAssignment | null;
    paths: string[];
    note: string;
  } {
    return {
      assignment: this._chosen,
      paths: this.picker.paths,
      note: this._note.value.trim()
    };
  }

  showError(message: string | null): void {
    showFormError(this._error, message);
  }

  setBusy(busy: boolean): void {
    const totals = this.picker.totals;
    showFormBusy(
      this.node,
      this._progress,
      this._progressText,
      busy
        ? this._trans.__(
            'Submitting %1 (%2)…',
            filesText(totals.files, this._trans),
            formatBytes(totals.bytes)
          )
        : null
    );
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._deadlines.dispose();
    this._suggestions?.dispose();
    this.picker.dispose();
    super.dispose();
  }

  protected onAfterAttach(): void {
    void this._deadlines.start();
  }

  protected onBeforeDetach(): void {
    void this._deadlines.stop();
  }

  /* ------------------------------------------------------------ building */

  private _build(): void {
    const trans = this._trans;
    this._list = this._assignmentList();
    this._note = h('textarea', {
      id: uniqueId('cgu-submit-note'),
      class: 'jp-mod-styled cgu-Form-textarea',
      rows: 2,
      placeholder: trans.__('Anything the teaching staff should know'),
      'data-cgu': 'submit-note'
    });
    this._buildProgress();
    replaceChildren(
      this.node,
      h(
        'fieldset',
        { class: 'cgu-Form-fieldset' },
        h('legend', {}, trans.__('Assignment')),
        this._list
      ),
      ...(this._suggestions ? [this._suggestions.node] : []),
      this.picker.node,
      h(
        'div',
        { class: 'cgu-Form-field cgu-Form-wide' },
        h('label', { for: this._note.id }, trans.__('Note (optional)')),
        this._note
      ),
      this._error,
      this._progress
    );
  }

  /** One radio row per assignment, or a note that there is none. */
  private _assignmentList(): HTMLElement {
    const groupName = uniqueId('cgu-submit-assignment');
    const list = h('div', {
      class: 'cgu-Submit-assignments',
      'data-cgu': 'submit-assignments'
    });
    if (this._ordered.length === 0) {
      list.appendChild(
        h(
          'p',
          { class: 'cgu-Form-note', 'data-cgu': 'submit-no-assignments' },
          this._trans.__('None of your groups has an assignment to submit to.')
        )
      );
    }
    const now = Date.now();
    for (const assignment of this._ordered) {
      list.appendChild(this._assignmentRow(assignment, groupName, now));
    }
    return list;
  }

  private _assignmentRow(
    assignment: IAssignment,
    groupName: string,
    now: number
  ): HTMLElement {
    const id = uniqueId('cgu-submit-assignment');
    const detailsId = uniqueId('cgu-submit-details');
    const state = deadlineState(assignment, now);
    return h(
      'div',
      {
        class: `cgu-Submit-assignment cgu-Deadline-${state}`,
        'data-cgu': 'submit-assignment',
        'data-assignment-id': assignment.id,
        'data-state': state
      },
      h('input', {
        type: 'radio',
        id,
        name: groupName,
        value: String(assignment.id),
        checked: this._chosen?.id === assignment.id,
        disabled: !assignment.open,
        'aria-describedby': detailsId,
        'data-cgu': 'submit-assignment-radio',
        onchange: () => this._choose(assignment)
      }),
      h(
        'label',
        { for: id, title: assignment.description || '' },
        assignmentTitle(assignment),
        h('span', { class: 'cgu-Submit-group' }, ` · ${assignment.group}`)
      ),
      this._assignmentDetails(assignment, detailsId, now)
    );
  }

  /** The deadline, the submission count and the size limit of an assignment. */
  private _assignmentDetails(
    assignment: IAssignment,
    detailsId: string,
    now: number
  ): HTMLElement {
    const trans = this._trans;
    return h(
      'span',
      { id: detailsId, class: 'cgu-Submit-details' },
      h(
        'span',
        {
          class: 'cgu-Submit-deadline',
          'data-cgu': 'submit-deadline',
          'data-assignment-id': assignment.id,
          title: assignment.deadline
            ? new Date(assignment.deadline).toLocaleString()
            : ''
        },
        deadlineText(assignment, now, trans)
      ),
      ' · ',
      h(
        'span',
        { 'data-cgu': 'submit-count' },
        submissionCountText(assignment.submissions, trans)
      ),
      trans.__(' · limit %1', formatBytes(assignment.max_bytes))
    );
  }

  /** The error line and the progress bar shown while submitting. */
  private _buildProgress(): void {
    this._error = h('div', {
      class: 'cgu-Form-error',
      role: 'alert',
      'data-cgu': 'submit-error',
      hidden: true
    });
    this._progressText = h('span', { class: 'cgu-Form-note' });
    this._progress = h(
      'div',
      { class: 'cgu-Progress', 'data-cgu': 'submit-progress', hidden: true },
      h('progress', {
        class: 'cgu-Progress-bar',
        'aria-label': this._trans.__('Submitting')
      }),
      this._progressText
    );
  }

  private _choose(assignment: IAssignment): void {
    this._chosen = assignment;
    this.picker.setLimit(
      assignment.max_bytes,
      limitOwner(assignment, this._trans)
    );
    this.showError(null);
  }

  private _updateDeadlines(): void {
    const now = Date.now();
    this._list
      .querySelectorAll<HTMLElement>('[data-cgu="submit-deadline"]')
      .forEach(node => {
        const assignment = this._ordered.find(
          a => String(a.id) === node.dataset.assignmentId
        );
        if (assignment) {
          node.textContent = deadlineText(assignment, now, this._trans);
        }
      });
  }

  private _trans: TranslationBundle;
  private _suggestions: SuggestionList | null;
  private _deadlines: Poll;
  private _ordered: IAssignment[];
  private _chosen: IAssignment | null;
  private _list!: HTMLElement;
  private _note!: HTMLTextAreaElement;
  private _error!: HTMLElement;
  private _progress!: HTMLElement;
  private _progressText!: HTMLElement;
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
