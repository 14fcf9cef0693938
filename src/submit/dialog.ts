/**
 * "Submit" (students): hand in files of this home for an assignment of one of
 * my groups. The dialog lists the assignments (open ones first, with their
 * deadline countdown), a file picker prefilled with the open notebook and
 * what it needs to run elsewhere (the files its code reads, the files its
 * template brought: preselect.ts, each with its size and the total),
 * and a note; the receipt (number, time, late or not, size, content hash,
 * link to the receipt page) is shown afterwards.
 */
import { Dialog } from '@jupyterlab/apputils';
import { nullTranslator, TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import { CguAPI } from '../api';
import { IKeyAwareBody, openFormDialog } from '../dialog';
import { h, replaceChildren, uniqueId } from '../dom';
import { FilePicker } from '../files/filePicker';
import { absoluteShareUrl, formatBytes } from '../format';
import { ISuggestion, SuggestionList } from './preselect';
import { filesText } from '../files/selection';
import {
  deadlineState,
  deadlineText,
  initialAssignment,
  orderAssignments,
  receiptRows,
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
  trans?: TranslationBundle;
  /** Called with the receipt once the submission is received. */
  onSubmitted: (receipt: ISubmission) => void;
  /** The endpoints; replaceable in tests. */
  submit?: (body: ISubmitRequest) => Promise<ISubmission>;
  files?: (path: string) => Promise<IFileListing>;
}

/** How often the deadline countdowns are refreshed. */
const COUNTDOWN_MS = 30 * 1000;

/** The name an assignment is shown with. */
function assignmentTitle(assignment: IAssignment): string {
  return assignment.title || assignment.name;
}

/** The body of the Submit dialog. */
export class SubmitBody extends Widget implements IKeyAwareBody {
  constructor(options: ISubmitDialogOptions) {
    super();
    this.addClass('cgu-Submit');
    this.node.dataset.cgu = 'submit-dialog';
    this._ordered = orderAssignments(options.assignments, Date.now());
    this._chosen = initialAssignment(this._ordered, options.assignmentId);
    const suggested = options.suggestions ?? [];
    this.picker = new FilePicker({
      initial: [...options.initialPaths, ...suggested.map(s => s.path)],
      maxBytes: this._chosen?.max_bytes ?? null,
      limitWhat: this._chosen ? `"${assignmentTitle(this._chosen)}"` : 'it',
      editablePatterns: false,
      label: 'Files to submit',
      fetch: options.files
    });
    this._suggestions = suggested.length
      ? new SuggestionList(
          suggested,
          this.picker,
          options.trans ?? nullTranslator.load('cgu_lab')
        )
      : null;
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
    this._error.textContent = message ?? '';
    this._error.hidden = !message;
    if (message) {
      this._error.scrollIntoView?.({ block: 'nearest' });
    }
  }

  setBusy(busy: boolean): void {
    this._progress.hidden = !busy;
    if (busy) {
      this._progress.scrollIntoView?.({ block: 'nearest' });
    }
    this.node.setAttribute('aria-busy', busy ? 'true' : 'false');
    const totals = this.picker.totals;
    this._progressText.textContent = busy
      ? `Submitting ${filesText(totals.files)} (${formatBytes(totals.bytes)})…`
      : '';
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    window.clearInterval(this._timer);
    this._suggestions?.dispose();
    this.picker.dispose();
    super.dispose();
  }

  protected onAfterAttach(): void {
    this._timer = window.setInterval(
      () => this._updateDeadlines(),
      COUNTDOWN_MS
    );
  }

  protected onBeforeDetach(): void {
    window.clearInterval(this._timer);
  }

  /* ------------------------------------------------------------ building */

  private _build(): void {
    const groupName = uniqueId('cgu-submit-assignment');
    this._list = h('div', {
      class: 'cgu-Submit-assignments',
      'data-cgu': 'submit-assignments'
    });
    if (this._ordered.length === 0) {
      this._list.appendChild(
        h(
          'p',
          { class: 'cgu-Form-note', 'data-cgu': 'submit-no-assignments' },
          'None of your groups has an assignment to submit to.'
        )
      );
    }
    const now = Date.now();
    for (const assignment of this._ordered) {
      const id = uniqueId('cgu-submit-assignment');
      const detailsId = uniqueId('cgu-submit-details');
      const state = deadlineState(assignment, now);
      this._list.appendChild(
        h(
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
          h(
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
              deadlineText(assignment, now)
            ),
            ' · ',
            h(
              'span',
              { 'data-cgu': 'submit-count' },
              submissionCountText(assignment.submissions)
            ),
            ` · limit ${formatBytes(assignment.max_bytes)}`
          )
        )
      );
    }
    this._note = h('textarea', {
      id: uniqueId('cgu-submit-note'),
      class: 'jp-mod-styled cgu-Form-textarea',
      rows: 2,
      placeholder: 'Anything the teaching staff should know',
      'data-cgu': 'submit-note'
    });
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
        'aria-label': 'Submitting'
      }),
      this._progressText
    );
    replaceChildren(
      this.node,
      h(
        'fieldset',
        { class: 'cgu-Form-fieldset' },
        h('legend', {}, 'Assignment'),
        this._list
      ),
      ...(this._suggestions ? [this._suggestions.node] : []),
      this.picker.node,
      h(
        'div',
        { class: 'cgu-Form-field cgu-Form-wide' },
        h('label', { for: this._note.id }, 'Note (optional)'),
        this._note
      ),
      this._error,
      this._progress
    );
  }

  private _choose(assignment: IAssignment): void {
    this._chosen = assignment;
    this.picker.setLimit(
      assignment.max_bytes,
      `"${assignmentTitle(assignment)}"`
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
          node.textContent = deadlineText(assignment, now);
        }
      });
  }

  private _suggestions: SuggestionList | null;
  private _ordered: IAssignment[];
  private _chosen: IAssignment | null;
  private _timer = 0;
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
  return openFormDialog({
    title: 'Submit an assignment',
    body: new SubmitBody(options),
    acceptLabel: 'Submit',
    focusNodeSelector: '[data-cgu="submit-assignment-radio"]:checked',
    className: 'cgu-SubmitDialog',
    acceptLandmark: 'submit-send',
    validate: value => validateSubmission(value.assignment, value.paths),
    send: value =>
      submit({
        assignment_id: (value.assignment as IAssignment).id,
        paths: value.paths,
        note: value.note
      }),
    onDone: options.onSubmitted
  });
}

/** The receipt's body: a list of facts and the link to the receipt page. */
export class ReceiptBody extends Widget {
  constructor(receipt: ISubmission, origin: string) {
    super();
    this.addClass('cgu-Receipt');
    this.node.dataset.cgu = 'submit-receipt';
    const rows = receiptRows(receipt, iso => {
      const t = Date.parse(iso);
      return Number.isNaN(t) ? iso : new Date(t).toLocaleString();
    });
    replaceChildren(
      this.node,
      h(
        'dl',
        { class: 'cgu-Receipt-list' },
        ...rows.map(row =>
          h(
            'div',
            { class: 'cgu-Receipt-row' },
            h('dt', {}, row.label),
            h(
              'dd',
              {
                'data-cgu': `receipt-${row.key}`,
                class: row.key === 'late' && receipt.late ? 'cgu-mod-late' : '',
                title: row.key === 'hash' ? receipt.content_hash : ''
              },
              row.value
            )
          )
        )
      ),
      receipt.url
        ? h(
            'a',
            {
              class: 'cgu-Receipt-link',
              href: absoluteShareUrl(receipt.url, origin),
              target: '_blank',
              rel: 'noopener noreferrer',
              'data-cgu': 'receipt-link'
            },
            'Open the receipt page (new tab)'
          )
        : null
    );
  }
}

/** Show the receipt of a submission in a dialog. */
export async function showReceiptDialog(
  receipt: ISubmission,
  origin: string = window.location.origin
): Promise<void> {
  const dialog = new Dialog<void>({
    title: receipt.late ? 'Submission received (late)' : 'Submission received',
    body: new ReceiptBody(receipt, origin),
    buttons: [Dialog.okButton({ label: 'Close' })]
  });
  dialog.addClass('cgu-ReceiptDialog');
  try {
    await dialog.launch();
  } finally {
    dialog.dispose();
  }
}
