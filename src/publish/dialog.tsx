/**
 * The Publish form: what to publish (the open notebook as a page, a port, or
 * a declared app), to whom (a course the owner teaches, or everyone logged
 * in) and its title. A ReactWidget body over a `PublishModel`; the rules are
 * format.ts's.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { ReactWidget } from '@jupyterlab/ui-components';
import * as React from 'react';
import { IFormBody, openFormDialog } from '../dialog';
import { DialogFormModel, Field, FormError } from '../formParts';
import { useModel } from '../useModel';
import {
  IDemo,
  initialWhat,
  IPublishCourse,
  IPublishForm,
  PublishWhat,
  TITLE_MAX,
  validatePublish
} from './format';

/** The form's state. */
export class PublishModel extends DialogFormModel {
  constructor(
    readonly courses: ReadonlyArray<IPublishCourse>,
    /** The declared apps that may be published: [name, title]. */
    readonly apps: ReadonlyArray<[string, string]>,
    notebook: string | null,
    readonly trans: TranslationBundle
  ) {
    super();
    this._form = {
      what: initialWhat(notebook),
      notebook: notebook ?? '',
      port: '',
      app: apps[0]?.[0] ?? '',
      course: courses[0]?.name ?? null,
      title: ''
    };
  }

  get form(): Readonly<IPublishForm> {
    return this._form;
  }

  set<K extends keyof IPublishForm>(key: K, value: IPublishForm[K]): void {
    this._form = { ...this._form, [key]: value };
    this.emit();
  }

  value(): IPublishForm {
    return { ...this._form };
  }

  private _form: IPublishForm;
}

/** The form. */
export function PublishForm(props: { model: PublishModel }): JSX.Element {
  const { model } = props;
  useModel(model);
  const { trans, form } = model;
  const whatName = React.useId();
  const choices: [PublishWhat, string][] = [
    ['voila', trans.__('a notebook as a page (Voilà)')],
    ['port', trans.__('a web app this notebook serves on a port')]
  ];
  if (model.apps.length) {
    choices.push(['app', trans.__("an app of this notebook's environment")]);
  }
  return (
    <form className="cgu-Form" onSubmit={event => event.preventDefault()}>
      <fieldset className="cgu-Form-fieldset">
        <legend>{trans.__('Publish')}</legend>
        {choices.map(([what, label]) => (
          <label key={what} className="cgu-Form-radio">
            <input
              type="radio"
              name={whatName}
              value={what}
              data-cgu={`publish-${what}`}
              checked={form.what === what}
              onChange={() => model.set('what', what)}
            />{' '}
            {label}
          </label>
        ))}
      </fieldset>
      <div className="cgu-Form-grid">
        {form.what === 'voila' ? (
          <Field
            label={trans.__('Notebook')}
            note={trans.__(
              'This notebook runs the page itself, again after every restart.'
            )}
          >
            {(id, describedBy) => (
              <input
                id={id}
                type="text"
                data-cgu="publish-notebook"
                aria-describedby={describedBy}
                value={form.notebook}
                onChange={event =>
                  model.set('notebook', event.currentTarget.value)
                }
              />
            )}
          </Field>
        ) : null}
        {form.what === 'port' ? (
          <Field label={trans.__('Port')}>
            {id => (
              <input
                id={id}
                type="text"
                inputMode="numeric"
                data-cgu="publish-port"
                placeholder="8501"
                value={form.port}
                onChange={event => model.set('port', event.currentTarget.value)}
              />
            )}
          </Field>
        ) : null}
        {form.what === 'app' ? (
          <Field label={trans.__('App')}>
            {id => (
              <select
                id={id}
                data-cgu="publish-app"
                value={form.app}
                onChange={event => model.set('app', event.currentTarget.value)}
              >
                {model.apps.map(([name, title]) => (
                  <option key={name} value={name}>
                    {title}
                  </option>
                ))}
              </select>
            )}
          </Field>
        ) : null}
        <Field label={trans.__('Who may use it')}>
          {id => (
            <select
              id={id}
              data-cgu="publish-course"
              value={form.course ?? ''}
              onChange={event =>
                model.set('course', event.currentTarget.value || null)
              }
            >
              {model.courses.map(c => (
                <option key={c.name} value={c.name}>
                  {c.display_name}
                </option>
              ))}
              <option value="">{trans.__('Everyone logged in')}</option>
            </select>
          )}
        </Field>
        <Field label={trans.__('Title (optional)')}>
          {id => (
            <input
              id={id}
              type="text"
              data-cgu="publish-title"
              maxLength={TITLE_MAX}
              value={form.title}
              onChange={event => model.set('title', event.currentTarget.value)}
            />
          )}
        </Field>
      </div>
      <FormError message={model.error} dataCgu="publish-error" />
      <p className="cgu-Form-note" hidden={model.busyText === null}>
        {model.busyText ?? ''}
      </p>
    </form>
  );
}

/** The form's body, for `openFormDialog`. */
export class PublishBody
  extends ReactWidget
  implements IFormBody<IPublishForm>
{
  constructor(model: PublishModel) {
    super();
    this.addClass('cgu-PublishFormBody');
    this.model = model;
  }

  readonly model: PublishModel;

  getValue(): IPublishForm {
    return this.model.value();
  }

  showError(message: string | null): void {
    this.model.setError(message);
  }

  setBusy(busy: boolean): void {
    this.model.setBusyText(busy ? this.model.trans.__('Publishing…') : null);
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.model.dispose();
    super.dispose();
  }

  protected render(): JSX.Element {
    return <PublishForm model={this.model} />;
  }
}

/** Open the dialog; resolves with the published demo, or null when cancelled. */
export function openPublishDialog(options: {
  model: PublishModel;
  send: (value: IPublishForm) => Promise<IDemo>;
}): Promise<IDemo | null> {
  const { model } = options;
  const trans = model.trans;
  return openFormDialog<IPublishForm, IDemo>({
    title: trans.__('Publish as a demo'),
    body: new PublishBody(model),
    acceptLabel: trans.__('Publish'),
    acceptLandmark: 'publish-send',
    focusNodeSelector: 'input[type="radio"]:checked',
    className: 'cgu-PublishDialog',
    validate: value => validatePublish(value, trans),
    send: options.send,
    onDone: () => undefined,
    trans
  });
}
