/**
 * "Save as template" (teachers, TAs and admins): publish files of this home,
 * an environment and default resources as a template students can start.
 * The dialog holds the template's names, its visibility, its environment and
 * resources, and a file picker; the snapshot is taken while the dialog shows
 * an indeterminate progress bar.
 *
 * JupyterLab's Dialog with a ReactWidget body: the state is a `TemplateModel`
 * (model.ts), the form its components (fields.tsx).
 */
import { ReactWidget } from '@jupyterlab/ui-components';
import * as React from 'react';
import { CguAPI } from '../api';
import { IFormBody, IKeyAwareBody, openFormDialog } from '../dialog';
import { FilePickerView, pickerKeydown } from '../files/filePicker';
import { FormError, FormProgress } from '../formParts';
import { useModel } from '../useModel';
import { ITemplateCreated, ITemplateRequest } from '../apiTypes';
import { EnvironmentFieldset, NamesGrid, VisibilityFieldset } from './fields';
import { ITemplateForm, templateRequest, validateTemplateForm } from './format';
import { ITemplateFormOptions, TemplateModel } from './model';

/** What the Save-as-template dialog needs. */
export interface ITemplateDialogOptions extends ITemplateFormOptions {
  /** Called once the template is saved. */
  onCreated: (created: ITemplateCreated) => void;
  /** The endpoint; replaceable in tests. */
  create?: (body: ITemplateRequest) => Promise<ITemplateCreated>;
}

/** The Save-as-template form. */
export function TemplateForm(props: { model: TemplateModel }): JSX.Element {
  const { model } = props;
  useModel(model);
  const trans = model.trans;
  return (
    <>
      <NamesGrid model={model} />
      <VisibilityFieldset model={model} />
      <EnvironmentFieldset model={model} />
      <FilePickerView model={model.picker} />
      <FormError message={model.error} dataCgu="template-error" />
      <FormProgress
        text={model.busyText}
        label={trans.__('Saving the template')}
        dataCgu="template-progress"
      />
    </>
  );
}

/** The body of the Save-as-template dialog. */
export class TemplateBody
  extends ReactWidget
  implements IKeyAwareBody, IFormBody<ITemplateForm>
{
  constructor(options: ITemplateFormOptions) {
    super();
    this.addClass('cgu-Template');
    this.node.dataset.cgu = 'template-dialog';
    this.model = new TemplateModel(options);
  }

  /** The form's state (its picker's `ready` resolves once the home is listed). */
  readonly model: TemplateModel;

  handleDialogKeydown(event: KeyboardEvent): boolean {
    return pickerKeydown(this.model.picker, event);
  }

  /** The form's values. */
  getValue(): ITemplateForm {
    return this.model.value();
  }

  /** Show a message (from validation or the server); null hides it. */
  showError(message: string | null): void {
    this.model.setError(message);
  }

  /** Show or hide the progress bar while the snapshot is taken. */
  setBusy(busy: boolean): void {
    this.node.setAttribute('aria-busy', busy ? 'true' : 'false');
    this.model.setBusyText(busy ? this.model.busyMessage() : null);
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.model.dispose();
    super.dispose();
  }

  protected render(): JSX.Element {
    return <TemplateForm model={this.model} />;
  }
}

/** Open the Save-as-template dialog; resolves with the template once saved. */
export async function openTemplateDialog(
  options: ITemplateDialogOptions
): Promise<ITemplateCreated | null> {
  const create = options.create ?? CguAPI.createTemplate;
  const trans = options.trans;
  return openFormDialog({
    title: trans.__('Save as template'),
    body: new TemplateBody(options),
    acceptLabel: trans.__('Save'),
    focusNodeSelector: '[data-cgu="template-display-name"]',
    className: 'cgu-TemplateDialog',
    acceptLandmark: 'template-save',
    trans,
    validate: form => validateTemplateForm(form, trans),
    send: form => create(templateRequest(form)),
    onDone: options.onCreated
  });
}
