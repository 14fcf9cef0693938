/**
 * Pure helpers of "Save as template": the form, its checks and request body.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { normalizeSelection } from '../files/selection';
import {
  cpuQuantity,
  IResizeForm,
  memoryQuantity,
  resizeFormFrom,
  validateResize
} from '../resources/quota';
import {
  ITemplateOptions,
  ITemplateRequest,
  ITemplateSummary,
  TemplateVisibility
} from '../apiTypes';

/* -------------------------------------------------------------- templates */

/** What the Save-as-template dialog's form holds. */
export interface ITemplateForm {
  name: string;
  displayName: string;
  description: string;
  versionLabel: string;
  visibility: TemplateVisibility;
  /** The group, for 'group' visibility; '' when none is chosen. */
  group: string;
  environment: string;
  resources: IResizeForm;
  paths: string[];
  excluded: string[];
}

/** A template name from any text: "Intro to ML (2026)" → "intro-to-ml-2026". */
export function slugify(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/g, '');
}

/** The rule a template name follows. */
export const TEMPLATE_NAME_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The form's starting values from the options. */
export function templateFormDefaults(
  options: ITemplateOptions,
  displayName = ''
): ITemplateForm {
  const d = options.defaults;
  return {
    name: slugify(displayName),
    displayName,
    description: '',
    versionLabel: '',
    visibility: 'private',
    group: options.groups[0]?.name ?? '',
    environment:
      d.environment ||
      (options.environments[0] ? options.environments[0].name : ''),
    resources: resizeFormFrom({
      cpu_milli: d.cpu_milli,
      memory: d.memory,
      gpu_type: d.gpu_type,
      gpus: d.gpus
    }),
    paths: [],
    excluded: []
  };
}

/**
 * What saving under a name makes: a new template, or the next version of one
 * of mine.
 */
export function templateVersionNote(
  templates: ReadonlyArray<ITemplateSummary>,
  name: string,
  trans: TranslationBundle
): string {
  const existing = templates.find(t => t.name === name);
  if (!existing) {
    return trans.__('A new template.');
  }
  return trans._n(
    'Version %2 of "%3" (it has %1 version).',
    'Version %2 of "%3" (it has %1 versions).',
    existing.versions,
    existing.versions + 1,
    existing.display_name || existing.name
  );
}

/** What is wrong with a template name, or null when it is fine. */
export function templateNameProblem(
  name: string,
  trans: TranslationBundle
): string | null {
  if (TEMPLATE_NAME_PATTERN.test(name)) {
    return null;
  }
  return trans.__(
    'The name may use lower-case letters, digits and "-" (e.g. "ml-intro"), starts and ends with a letter or digit, at most 63 characters.'
  );
}

/** A sentence saying what is wrong with the form, or null when it can be sent. */
export function validateTemplateForm(
  form: ITemplateForm,
  trans: TranslationBundle
): string | null {
  if (!form.displayName.trim()) {
    return trans.__('Give the template a display name, e.g. "Intro to ML".');
  }
  const nameProblem = templateNameProblem(form.name, trans);
  if (nameProblem) {
    return nameProblem;
  }
  if (form.visibility === 'group' && !form.group) {
    return trans.__(
      'Choose the group that may use the template, or another visibility.'
    );
  }
  if (!form.environment) {
    return trans.__('Choose an environment.');
  }
  const resources = validateResize(form.resources, trans);
  if (resources) {
    return resources;
  }
  if (normalizeSelection(form.paths).length === 0) {
    return trans.__(
      'Choose at least one file or folder of your home to include.'
    );
  }
  return null;
}

/** The `POST templates` body for a valid form. */
export function templateRequest(form: ITemplateForm): ITemplateRequest {
  const r = form.resources;
  const gpus = r.gpuType ? r.gpus : 0;
  return {
    name: form.name,
    display_name: form.displayName.trim(),
    description: form.description.trim(),
    version_label: form.versionLabel.trim(),
    visibility: form.visibility,
    group: form.visibility === 'group' ? form.group : null,
    environment: form.environment,
    cpu: cpuQuantity(r.cpus),
    memory: memoryQuantity(r.memoryGiB),
    gpu_type: r.gpuType && gpus > 0 ? r.gpuType : null,
    gpus,
    paths: normalizeSelection(form.paths),
    excluded: Array.from(
      new Set(form.excluded.map(p => p.trim()).filter(Boolean))
    )
  };
}
