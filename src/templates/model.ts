/**
 * The Save-as-template form's state: which template (a new one or a new
 * version of mine), its names (the name follows the display name until it is
 * edited), who may use it, its environment and default resources as typed,
 * the file picker's model, and the form's problem and busy text. No DOM: the
 * dialog's components render it and the tests drive it.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { createPickerModel } from '../files/filePicker';
import { PickerModel } from '../files/model';
import { filesText } from '../files/selection';
import { formatBytes, formatNumber } from '../format';
import { DialogFormModel } from '../formParts';
import { gpuCountFor } from '../resources/quota';
import {
  IFileListing,
  IGpuType,
  ITemplateOptions,
  TemplateVisibility
} from '../apiTypes';
import {
  ITemplateForm,
  slugify,
  templateFormDefaults,
  templateNameProblem,
  templateVersionNote
} from './format';

/** What the Save-as-template form starts from. */
export interface ITemplateFormOptions {
  options: ITemplateOptions;
  /** GPU types to offer (from the quota); empty when unknown. */
  gpuTypes: ReadonlyArray<IGpuType>;
  /** Paths chosen at the start (the open notebook), relative to the home. */
  initialPaths: ReadonlyArray<string>;
  /** A display name to start with (the notebook's name). */
  displayName?: string;
  /** `GET files`; replaceable in tests. */
  files?: (path: string) => Promise<IFileListing>;
  trans: TranslationBundle;
}

/** The form's inputs as typed. */
export interface ITemplateFields {
  /** '' for a new template, else the name of the one to add a version to. */
  existing: string;
  displayName: string;
  name: string;
  description: string;
  versionLabel: string;
  visibility: TemplateVisibility;
  group: string;
  environment: string;
  cpus: string;
  memoryGiB: string;
  gpuType: string;
  gpus: string;
}

export class TemplateModel extends DialogFormModel {
  constructor(options: ITemplateFormOptions) {
    super();
    this.options = options.options;
    this.gpuTypes = options.gpuTypes;
    this.trans = options.trans;
    const form = templateFormDefaults(
      options.options,
      options.displayName ?? ''
    );
    const r = form.resources;
    this._fields = {
      existing: '',
      displayName: form.displayName,
      name: form.name,
      description: form.description,
      versionLabel: form.versionLabel,
      visibility: form.visibility,
      group: form.group,
      environment: form.environment,
      cpus: formatNumber(r.cpus, 3),
      memoryGiB: formatNumber(r.memoryGiB, 3),
      gpuType: r.gpuType,
      gpus: String(r.gpus)
    };
    this.picker = createPickerModel({
      initial: options.initialPaths,
      maxBytes: options.options.max_bytes,
      limitWhat: options.trans.__('a template'),
      editablePatterns: true,
      label: options.trans.__('Files to include'),
      fetch: options.files,
      trans: options.trans
    });
    this.ready = this.picker.start();
  }

  readonly options: ITemplateOptions;
  readonly gpuTypes: ReadonlyArray<IGpuType>;
  readonly trans: TranslationBundle;
  /** The file picker's state. */
  readonly picker: PickerModel;
  /** Resolves once the home and the folders of the initial paths are listed. */
  readonly ready: Promise<void>;

  get fields(): Readonly<ITemplateFields> {
    return this._fields;
  }

  /** A new version of an existing template keeps that template's name. */
  get nameReadOnly(): boolean {
    return this._fields.existing !== '';
  }

  /** What is wrong with the name, or null. */
  get nameProblem(): string | null {
    const name = this._fields.name.trim();
    return name ? templateNameProblem(name, this.trans) : null;
  }

  /** What the name makes (a new template or a new version), or what is wrong with it. */
  get versionNote(): string {
    return (
      this.nameProblem ??
      templateVersionNote(
        this.options.templates,
        this._fields.name.trim(),
        this.trans
      )
    );
  }

  /** Whether the group select can be used. */
  get groupEnabled(): boolean {
    return (
      this._fields.visibility === 'group' && this.options.groups.length > 0
    );
  }

  /** Choose a new template ('') or a new version of one of mine. */
  setExisting(name: string): void {
    const existing = this.options.templates.find(t => t.name === name);
    const f = { ...this._fields, existing: existing ? name : '' };
    if (existing) {
      f.name = existing.name;
      if (!f.displayName.trim()) {
        f.displayName = existing.display_name;
      }
    } else {
      this._nameEdited = false;
      f.name = slugify(f.displayName);
    }
    this._fields = f;
    this.emit();
  }

  /** The display name; the name follows it until edited. */
  setDisplayName(displayName: string): void {
    const f = { ...this._fields, displayName };
    if (!this._nameEdited && !this.nameReadOnly) {
      f.name = slugify(displayName);
    }
    this._fields = f;
    this.emit();
  }

  setName(name: string): void {
    this._nameEdited = true;
    this._fields = { ...this._fields, name };
    this.emit();
  }

  /** No GPU type means no GPUs; a GPU type means at least one. */
  setGpuType(gpuType: string): void {
    this._fields = {
      ...this._fields,
      gpuType,
      gpus: gpuCountFor(gpuType, this._fields.gpus)
    };
    this.emit();
  }

  /** Any other field, as typed. */
  setField(
    name:
      | 'description'
      | 'versionLabel'
      | 'visibility'
      | 'group'
      | 'environment'
      | 'cpus'
      | 'memoryGiB'
      | 'gpus',
    value: string
  ): void {
    this._fields = { ...this._fields, [name]: value };
    this.emit();
  }

  /** The form's values. */
  value(): ITemplateForm {
    const f = this._fields;
    return {
      name: f.name.trim(),
      displayName: f.displayName,
      description: f.description,
      versionLabel: f.versionLabel,
      visibility: f.visibility,
      group: f.group,
      environment: f.environment,
      resources: {
        cpus: parseFloat(f.cpus),
        memoryGiB: parseFloat(f.memoryGiB),
        gpuType: f.gpuType,
        gpus: f.gpuType ? Number(f.gpus) : 0
      },
      paths: this.picker.paths,
      excluded: this.picker.patterns
    };
  }

  /** What the progress line says while the snapshot is taken. */
  busyMessage(): string {
    const totals = this.picker.totals;
    return this.trans.__(
      'Saving a snapshot of %1 (%2); this can take a while…',
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

  private _fields: ITemplateFields;
  private _nameEdited = false;
}
