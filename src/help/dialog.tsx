/**
 * The Ask-for-help form: the course (when I am in several), an optional
 * one-line question, and what the helper may do: edit, or only watch.
 * A ReactWidget body over a `HelpAskModel`; the rules are format.ts's.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { ReactWidget } from '@jupyterlab/ui-components';
import * as React from 'react';
import { IFormBody, openFormDialog } from '../dialog';
import { DialogFormModel, Field, FormError } from '../formParts';
import { useModel } from '../useModel';
import {
  HelpAccess,
  IHelpAskForm,
  IHelpRequest,
  QUESTION_MAX,
  validateAsk
} from './format';

/** The form's state. */
export class HelpAskModel extends DialogFormModel {
  constructor(
    readonly courses: ReadonlyArray<string>,
    readonly notebook: string,
    readonly trans: TranslationBundle
  ) {
    super();
    this._group = courses[0] ?? '';
  }

  get group(): string {
    return this._group;
  }
  get question(): string {
    return this._question;
  }
  get access(): HelpAccess {
    return this._access;
  }

  setGroup(group: string): void {
    this._group = group;
    this.emit();
  }

  setQuestion(question: string): void {
    // One line: a pasted line break becomes a space.
    this._question = question.replace(/[\r\n]+/g, ' ');
    this.emit();
  }

  setAccess(access: HelpAccess): void {
    this._access = access;
    this.emit();
  }

  value(): IHelpAskForm {
    return {
      group: this._group,
      question: this._question.trim(),
      access: this._access
    };
  }

  private _group: string;
  private _question = '';
  private _access: HelpAccess = 'edit';
}

/** The form. */
export function HelpAskForm(props: { model: HelpAskModel }): JSX.Element {
  const { model } = props;
  useModel(model);
  const trans = model.trans;
  const accessName = React.useId();
  return (
    <form
      className="cgu-Form cgu-HelpForm"
      onSubmit={event => event.preventDefault()}
    >
      <p className="cgu-Help-hint">
        {trans.__(
          'A teacher or TA of your course joins you in "%1" live.',
          model.notebook
        )}
      </p>
      {model.courses.length > 1 ? (
        <Field label={trans.__('Course')}>
          {id => (
            <select
              id={id}
              data-cgu="help-course"
              value={model.group}
              onChange={event => model.setGroup(event.currentTarget.value)}
            >
              {model.courses.map(c => (
                <option key={c} value={c}>
                  {c}
                </option>
              ))}
            </select>
          )}
        </Field>
      ) : null}
      <Field
        label={trans.__('Your question (optional)')}
        note={trans.__('One line, at most %1 characters.', QUESTION_MAX)}
      >
        {(id, describedBy) => (
          <input
            id={id}
            type="text"
            data-cgu="help-question"
            maxLength={QUESTION_MAX}
            aria-describedby={describedBy}
            placeholder={trans.__('e.g. my loss is NaN after epoch 2')}
            value={model.question}
            onChange={event => model.setQuestion(event.currentTarget.value)}
          />
        )}
      </Field>
      <fieldset className="cgu-HelpForm-access">
        <legend>{trans.__('The helper')}</legend>
        <label>
          <input
            type="radio"
            name={accessName}
            value="edit"
            data-cgu="help-access-edit"
            checked={model.access === 'edit'}
            onChange={() => model.setAccess('edit')}
          />{' '}
          {trans.__('may edit my notebook')}
        </label>
        <label>
          <input
            type="radio"
            name={accessName}
            value="read"
            data-cgu="help-access-read"
            checked={model.access === 'read'}
            onChange={() => model.setAccess('read')}
          />{' '}
          {trans.__('may only watch')}
        </label>
      </fieldset>
      <FormError message={model.error} dataCgu="help-error" />
      <p className="cgu-Help-hint" hidden={model.busyText === null}>
        {model.busyText ?? ''}
      </p>
    </form>
  );
}

/** The form's body, for `openFormDialog`. */
export class HelpAskBody
  extends ReactWidget
  implements IFormBody<IHelpAskForm>
{
  constructor(
    courses: ReadonlyArray<string>,
    notebook: string,
    trans: TranslationBundle
  ) {
    super();
    this.addClass('cgu-HelpAskForm');
    this.model = new HelpAskModel(courses, notebook, trans);
  }

  readonly model: HelpAskModel;

  getValue(): IHelpAskForm {
    return this.model.value();
  }

  showError(message: string | null): void {
    this.model.setError(message);
  }

  setBusy(busy: boolean): void {
    this.model.setBusyText(
      busy ? this.model.trans.__('Raising your hand…') : null
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
    return <HelpAskForm model={this.model} />;
  }
}

/** Open the dialog; resolves with the raised hand, or null when cancelled. */
export function openHelpDialog(options: {
  courses: ReadonlyArray<string>;
  notebook: string;
  send: (value: IHelpAskForm) => Promise<IHelpRequest>;
  trans: TranslationBundle;
}): Promise<IHelpRequest | null> {
  const { trans } = options;
  return openFormDialog<IHelpAskForm, IHelpRequest>({
    title: trans.__('Ask for help'),
    body: new HelpAskBody(options.courses, options.notebook, trans),
    acceptLabel: trans.__('Raise my hand'),
    acceptLandmark: 'help-send',
    focusNodeSelector: 'input[type="text"]',
    className: 'cgu-HelpDialog',
    validate: value => validateAsk(value, trans),
    send: options.send,
    onDone: () => undefined,
    trans
  });
}
