/**
 * The Share dialog's list of current shares: who, what access, what, when it
 * ends (repainted by the model's clock), with "Copy link" and "Revoke".
 */
import { Button } from '@jupyterlab/ui-components';
import * as React from 'react';
import { absoluteShareUrl, countdownText } from '../format';
import { useModel } from '../useModel';
import { accessLabel, scopeLabel } from './format';
import { ShareModel } from './model';
import { IShare } from '../apiTypes';

/** One share of the list. */
function ShareRow(props: { share: IShare; model: ShareModel }): JSX.Element {
  const { share, model } = props;
  const trans = model.trans;
  const who =
    share.grantee.kind === 'group'
      ? trans.__('%1 (group)', share.grantee.display_name)
      : share.grantee.display_name || share.grantee.name;
  const url = absoluteShareUrl(share.url, model.options.origin);
  return (
    <tr
      data-cgu="share-row"
      data-share-id={share.id}
      data-grantee={`${share.grantee.kind}:${share.grantee.name}`}
    >
      <td title={share.grantee.name}>{who}</td>
      <td>
        <span className={`cgu-Badge cgu-Badge-${share.access}`}>
          {accessLabel(share.access, trans)}
        </span>
      </td>
      <td className="cgu-Share-path">{scopeLabel(share.path, trans)}</td>
      <td
        className="cgu-Share-expiry"
        data-expires-at={share.expires_at ?? ''}
        title={
          share.expires_at
            ? new Date(share.expires_at).toLocaleString()
            : trans.__('This share does not end.')
        }
      >
        {countdownText(share.expires_at, model.now, trans)}
      </td>
      <td className="cgu-Share-actions">
        <Button
          type="button"
          className="jp-mod-styled cgu-Share-copyLink"
          data-cgu="share-copy-link"
          aria-label={trans.__('Copy the link for %1', who)}
          title={url}
          onClick={() => void model.copy(url)}
        >
          {trans.__('Copy link')}
        </Button>
        <Button
          type="button"
          className="jp-mod-styled jp-mod-warn cgu-Share-revoke"
          data-cgu="share-revoke"
          aria-label={trans.__('Revoke the share with %1', who)}
          disabled={model.isRevoking(share)}
          onClick={() => void model.revoke(share, who)}
        >
          {trans.__('Revoke')}
        </Button>
      </td>
    </tr>
  );
}

/** The current shares, or the error, or "Loading…". */
function ShareTable(props: { model: ShareModel }): JSX.Element {
  const { model } = props;
  const trans = model.trans;
  const shares = model.shares;
  if (model.listError) {
    return (
      <p className="cgu-Share-error" role="alert">
        {model.listError}
      </p>
    );
  }
  if (shares === null) {
    return <p className="cgu-Share-empty">{trans.__('Loading…')}</p>;
  }
  if (shares.length === 0) {
    return (
      <p className="cgu-Share-empty" data-cgu="share-list-empty">
        {trans.__('Not shared with anyone yet.')}
      </p>
    );
  }
  return (
    <table className="cgu-Table">
      <thead>
        <tr>
          <th scope="col">{trans.__('Who')}</th>
          <th scope="col">{trans.__('Access')}</th>
          <th scope="col">{trans.__('What')}</th>
          <th scope="col">{trans.__('Ends')}</th>
          <th scope="col">
            <span className="cgu-sr-only">{trans.__('Actions')}</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {shares.map(share => (
          <ShareRow key={share.id} share={share} model={model} />
        ))}
      </tbody>
    </table>
  );
}

/** The "Current shares" heading and the region of the list. */
export function ShareList(props: { model: ShareModel }): JSX.Element {
  const { model } = props;
  useModel(model);
  const headingId = React.useId();
  return (
    <>
      <h3 id={headingId} className="cgu-Share-heading">
        {model.trans.__('Current shares')}
      </h3>
      <div
        className="cgu-Share-list"
        data-cgu="share-list"
        aria-labelledby={headingId}
        role="region"
      >
        <ShareTable model={model} />
      </div>
    </>
  );
}
