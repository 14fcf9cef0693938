/**
 * Pieces of the Save-as-template form: the template and its names, who may
 * use it, and its environment and default resources; each renders from the
 * `TemplateModel`.
 */
import * as React from 'react';
import { AmountInput, Field } from '../formParts';
import { TemplateVisibility } from '../apiTypes';
import { TemplateModel } from './model';

/** Which template, its display name, name (with what it makes), version label, description. */
export function NamesGrid(props: { model: TemplateModel }): JSX.Element {
  const { model } = props;
  const { trans, fields } = model;
  const problem = model.nameProblem;
  return (
    <div className="cgu-Form-grid">
      <Field label={trans.__('Template')}>
        {id => (
          <select
            id={id}
            className="jp-mod-styled"
            data-cgu="template-existing"
            value={fields.existing}
            onChange={event => model.setExisting(event.currentTarget.value)}
          >
            <option value="">{trans.__('A new template')}</option>
            {model.options.templates.map(t => (
              <option key={t.name} value={t.name}>
                {trans.__(
                  'New version of %1 (%2)',
                  t.display_name || t.name,
                  t.name
                )}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label={trans.__('Display name')}>
        {id => (
          <input
            type="text"
            id={id}
            className="jp-mod-styled"
            value={fields.displayName}
            placeholder={trans.__('e.g. Intro to Machine Learning')}
            data-cgu="template-display-name"
            onChange={event => model.setDisplayName(event.currentTarget.value)}
          />
        )}
      </Field>
      <Field
        label={trans.__('Name')}
        note={model.versionNote}
        noteClass={problem ? 'cgu-Form-note cgu-mod-error' : 'cgu-Form-note'}
        noteDataCgu="template-version-note"
      >
        {(id, describedBy) => (
          <input
            type="text"
            id={id}
            className="jp-mod-styled"
            value={fields.name}
            readOnly={model.nameReadOnly}
            placeholder={trans.__('e.g. ml-intro')}
            autoComplete="off"
            spellCheck={false}
            aria-describedby={describedBy}
            aria-invalid={problem ? 'true' : 'false'}
            data-cgu="template-name"
            onChange={event => model.setName(event.currentTarget.value)}
          />
        )}
      </Field>
      <Field label={trans.__('Version label')} note={trans.__('optional')}>
        {(id, describedBy) => (
          <input
            type="text"
            id={id}
            className="jp-mod-styled"
            value={fields.versionLabel}
            placeholder={trans.__('e.g. 2027 spring')}
            aria-describedby={describedBy}
            data-cgu="template-version-label"
            onChange={event =>
              model.setField('versionLabel', event.currentTarget.value)
            }
          />
        )}
      </Field>
      <Field label={trans.__('Description')}>
        {id => (
          <textarea
            id={id}
            className="jp-mod-styled cgu-Form-textarea"
            rows={3}
            value={fields.description}
            placeholder={trans.__('What students find in it')}
            data-cgu="template-description"
            onChange={event =>
              model.setField('description', event.currentTarget.value)
            }
          />
        )}
      </Field>
    </div>
  );
}

/** One radio button of the visibility fieldset, with what follows its label. */
function VisibilityChoice(props: {
  model: TemplateModel;
  name: string;
  value: TemplateVisibility;
  label: string;
  disabled?: boolean;
  children?: React.ReactNode;
}): JSX.Element {
  const { model, value } = props;
  const id = React.useId();
  return (
    <div className="cgu-Form-radio">
      <input
        type="radio"
        id={id}
        name={props.name}
        value={value}
        checked={model.fields.visibility === value}
        disabled={props.disabled ?? false}
        data-cgu={`template-visibility-${value}`}
        onChange={() => model.setField('visibility', value)}
      />
      <label htmlFor={id}>{props.label}</label>
      {props.children}
    </div>
  );
}

/** Who may use the template: everyone, a group (with its select) or only me. */
export function VisibilityFieldset(props: {
  model: TemplateModel;
}): JSX.Element {
  const { model } = props;
  const { trans, options } = model;
  const name = React.useId();
  const hasGroups = options.groups.length > 0;
  return (
    <fieldset className="cgu-Form-fieldset">
      <legend>{trans.__('Who may use it')}</legend>
      <VisibilityChoice
        model={model}
        name={name}
        value="public"
        label={trans.__('Everyone on the platform')}
      />
      <VisibilityChoice
        model={model}
        name={name}
        value="group"
        label={
          hasGroups
            ? trans.__('A group:')
            : trans.__('A group (you belong to none)')
        }
        disabled={!hasGroups}
      >
        {hasGroups ? (
          <select
            className="jp-mod-styled"
            aria-label={trans.__('Group that may use the template')}
            data-cgu="template-group"
            disabled={!model.groupEnabled}
            value={model.fields.group}
            onChange={event =>
              model.setField('group', event.currentTarget.value)
            }
          >
            {options.groups.map(g => (
              <option key={g.name} value={g.name}>
                {g.display_name || g.name}
              </option>
            ))}
          </select>
        ) : null}
      </VisibilityChoice>
      <VisibilityChoice
        model={model}
        name={name}
        value="private"
        label={trans.__('Only me')}
      />
    </fieldset>
  );
}

/** The environment select and the default resources of the template. */
export function EnvironmentFieldset(props: {
  model: TemplateModel;
}): JSX.Element {
  const { model } = props;
  const { trans, fields, options } = model;
  const environments = options.environments.map(e => ({
    name: e.name,
    label: e.display_name || e.name
  }));
  if (
    fields.environment &&
    !environments.some(e => e.name === fields.environment)
  ) {
    environments.push({ name: fields.environment, label: fields.environment });
  }
  const gpuTypes = model.gpuTypes.map(t => ({
    name: t.name,
    label: t.display_name || t.name
  }));
  const ownType = fields.gpuType;
  if (ownType && !gpuTypes.some(t => t.name === ownType)) {
    gpuTypes.push({ name: ownType, label: ownType });
  }
  return (
    <fieldset className="cgu-Form-fieldset">
      <legend>{trans.__('Environment and default resources')}</legend>
      <div className="cgu-Form-grid">
        <Field label={trans.__('Environment')}>
          {id => (
            <select
              id={id}
              className="jp-mod-styled"
              data-cgu="template-environment"
              value={fields.environment}
              onChange={event =>
                model.setField('environment', event.currentTarget.value)
              }
            >
              {environments.map(e => (
                <option key={e.name} value={e.name}>
                  {e.label}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label={trans.__('CPUs')} note={trans.__('e.g. 2 or 0.5')}>
          {(id, describedBy) => (
            <AmountInput
              model={model}
              what="cpus"
              dataCgu="template-cpus"
              id={id}
              describedBy={describedBy}
              min={0.1}
              step="any"
            />
          )}
        </Field>
        <Field
          label={trans.__('Memory (GiB)')}
          note={trans.__('e.g. 4 or 0.5')}
        >
          {(id, describedBy) => (
            <AmountInput
              model={model}
              what="memoryGiB"
              dataCgu="template-memory"
              id={id}
              describedBy={describedBy}
              min={0.1}
              step="any"
            />
          )}
        </Field>
        <Field label={trans.__('GPU type')}>
          {id => (
            <select
              id={id}
              className="jp-mod-styled"
              data-cgu="template-gpu-type"
              value={fields.gpuType}
              onChange={event => model.setGpuType(event.currentTarget.value)}
            >
              <option value="">{trans.__('No GPU')}</option>
              {gpuTypes.map(t => (
                <option key={t.name} value={t.name}>
                  {t.label}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label={trans.__('GPUs')}>
          {id => (
            <AmountInput
              model={model}
              what="gpus"
              dataCgu="template-gpus"
              id={id}
              min={0}
              step={1}
              disabled={!fields.gpuType}
            />
          )}
        </Field>
      </div>
    </fieldset>
  );
}
