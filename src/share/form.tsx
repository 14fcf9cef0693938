/**
 * The Share dialog's form: what to share, who (who.tsx), the access, when it
 * ends and the Share button, the status line, the link of the share just
 * made, and the list of current shares (shareList.tsx). Everything it shows
 * comes from the `ShareModel`; JupyterLab's own Button and HTMLSelect.
 */
import { Button, HTMLSelect } from '@jupyterlab/ui-components';
import * as React from 'react';
import { useModel } from '../useModel';
import { expiryChoices } from './format';
import { ShareModel } from './model';
import { ShareList } from './shareList';
import { WhoPart } from './who';
import { ShareAccess } from '../apiTypes';

/** A radio button with its label (and a note), in a `cgu-Share-radio` row. */
function Radio(props: {
  name: string;
  value: string;
  checked: boolean;
  label: string;
  note?: string;
  dataCgu: string;
  onChange: () => void;
}): JSX.Element {
  const id = React.useId();
  return (
    <div className="cgu-Share-radio">
      <input
        type="radio"
        id={id}
        name={props.name}
        value={props.value}
        checked={props.checked}
        data-cgu={props.dataCgu}
        onChange={props.onChange}
      />
      <label htmlFor={id}>{props.label}</label>
      {props.note ? <span className="cgu-Share-note">{props.note}</span> : null}
    </div>
  );
}

/**
 * What to share: the whole server or only the file (a choice when the dialog
 * was opened from a notebook), or a sentence saying which.
 */
function ScopePart(props: { model: ShareModel }): JSX.Element {
  const { model } = props;
  const { trans, options } = model;
  const name = React.useId();
  if (options.mode === 'choose' && options.filePath) {
    return (
      <fieldset className="cgu-Share-fieldset">
        <legend>{trans.__('What to share')}</legend>
        <Radio
          name={name}
          value="file"
          checked={model.scope === 'file'}
          label={trans.__('Only %1', options.filePath)}
          dataCgu="share-scope-file"
          onChange={() => model.setScope('file')}
        />
        <Radio
          name={name}
          value="notebook"
          checked={model.scope === 'notebook'}
          label={trans.__('The whole notebook server')}
          dataCgu="share-scope-notebook"
          onChange={() => model.setScope('notebook')}
        />
      </fieldset>
    );
  }
  return (
    <p className="cgu-Share-what" data-cgu="share-what">
      {options.mode === 'file' && options.filePath
        ? trans.__('Sharing only %1.', options.filePath)
        : trans.__('Sharing the whole notebook server.')}
    </p>
  );
}

/** The access fieldset: read-only or editable. */
function AccessPart(props: { model: ShareModel }): JSX.Element {
  const { model } = props;
  const trans = model.trans;
  const name = React.useId();
  const choice = (value: ShareAccess, label: string, note: string) => (
    <Radio
      name={name}
      value={value}
      checked={model.access === value}
      label={label}
      note={note}
      dataCgu={`share-access-${value}`}
      onChange={() => model.setAccess(value)}
    />
  );
  return (
    <fieldset className="cgu-Share-fieldset">
      <legend>{trans.__('Access')}</legend>
      {choice(
        'read',
        trans.__('Read-only'),
        trans.__('open and read files; no saving, running cells or terminals')
      )}
      {choice(
        'edit',
        trans.__('Can edit'),
        trans.__('change and save files, run code, open terminals')
      )}
    </fieldset>
  );
}

/** The expiry select and the Share button. */
function ExpiryRow(props: { model: ShareModel }): JSX.Element {
  const { model } = props;
  const trans = model.trans;
  const id = React.useId();
  return (
    <div className="cgu-Share-row">
      <label htmlFor={id}>{trans.__('Ends')}</label>
      <HTMLSelect
        id={id}
        className="jp-mod-styled cgu-Share-expiry"
        data-cgu="share-expiry"
        value={model.expiry}
        onChange={event => model.setExpiry(event.target.value)}
        options={expiryChoices(trans).map(choice => ({
          value: choice.id,
          label: choice.label
        }))}
      />
      <span className="cgu-Share-spacer" />
      <Button
        type="button"
        className="jp-mod-styled jp-mod-accept cgu-Share-submit"
        data-cgu="share-submit"
        disabled={!model.canShare}
        onClick={() => void model.share()}
      >
        {trans.__('Share')}
      </Button>
    </div>
  );
}

/** The link of the share just made, with its Copy button. */
function LinkPart(props: { model: ShareModel }): JSX.Element {
  const { model } = props;
  const trans = model.trans;
  const id = React.useId();
  const link = model.link ?? '';
  return (
    <div className="cgu-Share-link" hidden={model.link === null}>
      <label htmlFor={id}>{trans.__('Link to send')}</label>
      <input
        type="text"
        id={id}
        className="jp-mod-styled cgu-Share-linkInput"
        readOnly
        value={link}
        data-cgu="share-link"
        onFocus={event => event.target.select()}
      />
      <Button
        type="button"
        className="jp-mod-styled cgu-Share-copy"
        data-cgu="share-copy"
        onClick={() => void model.copy(link)}
      >
        {trans.__('Copy')}
      </Button>
    </div>
  );
}

/** The whole form. */
export function ShareForm(props: { model: ShareModel }): JSX.Element {
  const { model } = props;
  useModel(model);
  const status = model.status;
  const error = status?.kind === 'error';
  return (
    <>
      <ScopePart model={model} />
      <WhoPart model={model} />
      <AccessPart model={model} />
      <ExpiryRow model={model} />
      <div
        className={`cgu-Share-status${error ? ' cgu-mod-error' : ''}`}
        role={error ? 'alert' : 'status'}
        aria-live="polite"
        data-cgu="share-status"
      >
        {status?.text ?? ''}
      </div>
      <LinkPart model={model} />
      <ShareList model={model} />
    </>
  );
}
