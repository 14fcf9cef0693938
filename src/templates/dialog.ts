/**
 * "Save as template" (teachers, TAs and admins): publish files of this home,
 * an environment and default resources as a template students can start.
 * The dialog holds the template's names, its visibility, its environment and
 * resources, and a file picker; the snapshot is taken while the dialog shows
 * an indeterminate progress bar.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
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
import { filesText } from '../files/selection';
import {
  ITemplateForm,
  slugify,
  templateFormDefaults,
  templateNameProblem,
  templateRequest,
  templateVersionNote,
  validateTemplateForm
} from './format';
import {
  environmentFields,
  formField,
  progressParts,
  visibilityFieldset
} from './fields';
import {
  IFileListing,
  IGpuType,
  ITemplateCreated,
  ITemplateOptions,
  ITemplateRequest,
  TemplateVisibility
} from '../apiTypes';

/** What the Save-as-template dialog needs. */
export interface ITemplateDialogOptions {
  options: ITemplateOptions;
  /** GPU types to offer (from the quota); empty when unknown. */
  gpuTypes: ReadonlyArray<IGpuType>;
  /** Paths chosen at the start (the open notebook), relative to the home. */
  initialPaths: ReadonlyArray<string>;
  /** A display name to start with (the notebook's name). */
  displayName?: string;
  /** Called once the template is saved. */
  onCreated: (created: ITemplateCreated) => void;
  /** The endpoints; replaceable in tests. */
  create?: (body: ITemplateRequest) => Promise<ITemplateCreated>;
  files?: (path: string) => Promise<IFileListing>;
  trans: TranslationBundle;
}

/** The label of the "new template" choice of the template list. */
const NEW_TEMPLATE = '';

/** The body of the Save-as-template dialog. */
export class TemplateBody extends Widget implements IKeyAwareBody {
  constructor(options: ITemplateDialogOptions) {
    super();
    this._options = options;
    this._trans = options.trans;
    this.addClass('cgu-Template');
    this.node.dataset.cgu = 'template-dialog';
    this._form = templateFormDefaults(
      options.options,
      options.displayName ?? ''
    );
    this.picker = new FilePicker({
      initial: options.initialPaths,
      maxBytes: options.options.max_bytes,
      limitWhat: options.trans.__('a template'),
      editablePatterns: true,
      label: options.trans.__('Files to include'),
      fetch: options.files,
      trans: options.trans
    });
    this._build();
  }

  /** The file picker (its `ready` resolves once the home is listed). */
  readonly picker: FilePicker;

  handleDialogKeydown(event: KeyboardEvent): boolean {
    return this.picker.handleDialogKeydown(event);
  }

  /** The form's values. */
  getValue(): ITemplateForm {
    const visibility = (this.node.querySelector<HTMLInputElement>(
      'input[data-cgu^="template-visibility-"]:checked'
    )?.value ?? 'private') as TemplateVisibility;
    return {
      name: this._name.value.trim(),
      displayName: this._displayName.value,
      description: this._description.value,
      versionLabel: this._versionLabel.value,
      visibility,
      group: this._group.value,
      environment: this._environment.value,
      resources: {
        cpus: parseFloat(this._cpus.value),
        memoryGiB: parseFloat(this._memory.value),
        gpuType: this._gpuType.value,
        gpus: this._gpuType.value ? Number(this._gpus.value) : 0
      },
      paths: this.picker.paths,
      excluded: this.picker.patterns
    };
  }

  /** Show a message (from validation or the server); null hides it. */
  showError(message: string | null): void {
    showFormError(this._error, message);
  }

  /** Show or hide the progress bar while the snapshot is taken. */
  setBusy(busy: boolean): void {
    const totals = this.picker.totals;
    showFormBusy(
      this.node,
      this._progress,
      this._progressText,
      busy
        ? this._trans.__(
            'Saving a snapshot of %1 (%2); this can take a while…',
            filesText(totals.files, this._trans),
            formatBytes(totals.bytes)
          )
        : null
    );
  }

  /* ------------------------------------------------------------ building */

  private _build(): void {
    const o = this._options.options;
    const form = this._form;
    const trans = this._trans;
    this._existing = this._existingSelect();
    this._buildNameInputs();

    const { visibility, group } = visibilityFieldset(o, form, trans);
    this._group = group;

    const env = environmentFields(o, form, this._options.gpuTypes, trans);
    this._environment = env.environment;
    this._cpus = env.cpus;
    this._memory = env.memory;
    this._gpuType = env.gpuType;
    this._gpus = env.gpus;

    const progress = progressParts(trans);
    this._error = progress.error;
    this._progressText = progress.progressText;
    this._progress = progress.progress;

    replaceChildren(
      this.node,
      this._namesGrid(),
      visibility,
      this._environmentFieldset(),
      this.picker.node,
      this._error,
      this._progress
    );
    this._updateVersionNote();
  }

  /** Which template: a new one, or a new version of one of mine. */
  private _existingSelect(): HTMLSelectElement {
    const trans = this._trans;
    return h(
      'select',
      {
        id: uniqueId('cgu-template-existing'),
        class: 'jp-mod-styled',
        'data-cgu': 'template-existing',
        onchange: () => this._onExistingChange()
      },
      h('option', { value: NEW_TEMPLATE }, trans.__('A new template')),
      ...this._options.options.templates.map(t =>
        h(
          'option',
          { value: t.name },
          trans.__('New version of %1 (%2)', t.display_name || t.name, t.name)
        )
      )
    );
  }

  /** The display name, name (slugified from the display name), description and version label. */
  private _buildNameInputs(): void {
    const trans = this._trans;
    this._displayName = h('input', {
      type: 'text',
      id: uniqueId('cgu-template-display-name'),
      class: 'jp-mod-styled',
      value: this._form.displayName,
      placeholder: trans.__('e.g. Intro to Machine Learning'),
      'data-cgu': 'template-display-name',
      oninput: () => {
        if (!this._nameEdited && !this._name.readOnly) {
          this._name.value = slugify(this._displayName.value);
          this._updateVersionNote();
        }
      }
    });
    this._name = h('input', {
      type: 'text',
      id: uniqueId('cgu-template-name'),
      class: 'jp-mod-styled',
      value: this._form.name,
      placeholder: trans.__('e.g. ml-intro'),
      autocomplete: 'off',
      spellcheck: 'false',
      'data-cgu': 'template-name',
      oninput: () => {
        this._nameEdited = true;
        this._updateVersionNote();
      }
    });
    this._versionNote = h('span', {
      class: 'cgu-Form-note',
      'data-cgu': 'template-version-note'
    });
    this._description = h('textarea', {
      id: uniqueId('cgu-template-description'),
      class: 'jp-mod-styled cgu-Form-textarea',
      rows: 3,
      placeholder: trans.__('What students find in it'),
      'data-cgu': 'template-description'
    });
    this._versionLabel = h('input', {
      type: 'text',
      id: uniqueId('cgu-template-version-label'),
      class: 'jp-mod-styled',
      placeholder: trans.__('e.g. 2027 spring'),
      'data-cgu': 'template-version-label'
    });
  }

  private _namesGrid(): HTMLElement {
    const trans = this._trans;
    return h(
      'div',
      { class: 'cgu-Form-grid' },
      formField(trans.__('Template'), this._existing),
      formField(trans.__('Display name'), this._displayName),
      formField(trans.__('Name'), this._name, this._versionNote),
      formField(
        trans.__('Version label'),
        this._versionLabel,
        trans.__('optional')
      ),
      formField(trans.__('Description'), this._description)
    );
  }

  private _environmentFieldset(): HTMLElement {
    const trans = this._trans;
    return h(
      'fieldset',
      { class: 'cgu-Form-fieldset' },
      h('legend', {}, trans.__('Environment and default resources')),
      h(
        'div',
        { class: 'cgu-Form-grid' },
        formField(trans.__('Environment'), this._environment),
        formField(trans.__('CPUs'), this._cpus, trans.__('e.g. 2 or 0.5')),
        formField(
          trans.__('Memory (GiB)'),
          this._memory,
          trans.__('e.g. 4 or 0.5')
        ),
        formField(trans.__('GPU type'), this._gpuType),
        formField(trans.__('GPUs'), this._gpus)
      )
    );
  }

  dispose(): void {
    this.picker.dispose();
    super.dispose();
  }

  private _onExistingChange(): void {
    const name = this._existing.value;
    const existing = this._options.options.templates.find(t => t.name === name);
    if (existing) {
      this._name.value = existing.name;
      this._name.readOnly = true;
      if (!this._displayName.value.trim()) {
        this._displayName.value = existing.display_name;
      }
    } else {
      this._name.readOnly = false;
      this._nameEdited = false;
      this._name.value = slugify(this._displayName.value);
    }
    this._updateVersionNote();
  }

  /** Say what the name makes (a new template or a new version), or what is wrong with it. */
  private _updateVersionNote(): void {
    const name = this._name.value.trim();
    const problem = name ? templateNameProblem(name, this._trans) : null;
    this._versionNote.textContent =
      problem ??
      templateVersionNote(this._options.options.templates, name, this._trans);
    this._versionNote.classList.toggle('cgu-mod-error', problem !== null);
    this._name.setAttribute('aria-invalid', problem ? 'true' : 'false');
  }

  private _options: ITemplateDialogOptions;
  private _trans: TranslationBundle;
  private _form: ITemplateForm;
  private _nameEdited = false;
  private _existing!: HTMLSelectElement;
  private _displayName!: HTMLInputElement;
  private _name!: HTMLInputElement;
  private _versionNote!: HTMLElement;
  private _description!: HTMLTextAreaElement;
  private _versionLabel!: HTMLInputElement;
  private _group!: HTMLSelectElement;
  private _environment!: HTMLSelectElement;
  private _cpus!: HTMLInputElement;
  private _memory!: HTMLInputElement;
  private _gpuType!: HTMLSelectElement;
  private _gpus!: HTMLInputElement;
  private _error!: HTMLElement;
  private _progress!: HTMLElement;
  private _progressText!: HTMLElement;
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
