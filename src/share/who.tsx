/**
 * "Share with people or groups": the chips of the chosen grantees and the
 * search box with its suggestion list, an ARIA combobox (role=combobox that
 * controls a listbox, the active option named by aria-activedescendant). The
 * list's keys reach the model through the dialog (`ShareModel.key`), which
 * sees them before JupyterLab's dialog would take Enter and Escape.
 */
import * as React from 'react';
import { useModel } from '../useModel';
import { suggestionId } from './combobox';
import { IGranteeSuggestion } from './format';
import { ShareModel } from './model';

/** One option of the suggestion list. */
function Suggestion(props: {
  suggestion: IGranteeSuggestion;
  id: string;
  active: boolean;
  model: ShareModel;
}): JSX.Element {
  const { suggestion: s, model } = props;
  const trans = model.trans;
  return (
    <li
      id={props.id}
      role="option"
      className="cgu-Share-suggestion"
      aria-selected={props.active ? 'true' : 'false'}
      data-cgu="share-suggestion"
      data-grantee={`${s.kind}:${s.name}`}
      // Keep the focus in the search box while clicking.
      onMouseDown={event => event.preventDefault()}
      onClick={() => model.pick(s)}
    >
      <span className={`cgu-Badge cgu-Badge-${s.kind}`}>
        {s.kind === 'group' ? trans.__('group') : trans.__('user')}
      </span>{' '}
      {s.label}
    </li>
  );
}

/** The chip of a chosen person or group, with its remove button. */
function Chip(props: {
  grantee: IGranteeSuggestion;
  model: ShareModel;
}): JSX.Element {
  const { grantee: p, model } = props;
  const trans = model.trans;
  const remove = trans.__('Remove %1', p.display_name);
  return (
    <li
      className="cgu-Chip"
      data-cgu="grantee-chip"
      data-grantee={`${p.kind}:${p.name}`}
    >
      <span className="cgu-Chip-label" title={p.label}>
        {p.kind === 'group'
          ? trans.__('%1 (group)', p.display_name)
          : p.display_name}
      </span>
      <button
        type="button"
        className="cgu-Chip-remove"
        aria-label={remove}
        title={remove}
        onClick={() => model.unpick(p)}
      >
        ×
      </button>
    </li>
  );
}

/** The chosen people and groups. */
function ChipList(props: { model: ShareModel }): JSX.Element {
  const { model } = props;
  return (
    <ul
      className="cgu-Share-chips"
      aria-label={model.trans.__('Chosen people and groups')}
      data-cgu="share-grantees"
      hidden={model.picked.length === 0}
    >
      {model.picked.map(p => (
        <Chip key={`${p.kind}:${p.name}`} grantee={p} model={model} />
      ))}
    </ul>
  );
}

/** The search box and its suggestion list. */
function SearchCombobox(props: {
  model: ShareModel;
  searchId: string;
  listId: string;
  hintId: string;
  activeId: string | undefined;
}): JSX.Element {
  const { model, searchId, listId, hintId, activeId } = props;
  const trans = model.trans;
  const open = model.isOpen;
  return (
    <div className="cgu-Combobox">
      <input
        type="text"
        id={searchId}
        className="jp-mod-styled cgu-Share-search"
        role="combobox"
        autoComplete="off"
        spellCheck={false}
        autoFocus
        aria-autocomplete="list"
        aria-expanded={open ? 'true' : 'false'}
        aria-controls={listId}
        aria-describedby={hintId}
        aria-activedescendant={activeId}
        placeholder={trans.__('Name, user name or group')}
        data-cgu="share-search"
        value={model.query}
        onChange={event => model.setQuery(event.target.value)}
      />
      <ul
        id={listId}
        role="listbox"
        className="cgu-Share-suggestions"
        aria-label={trans.__('Suggestions')}
        data-cgu="share-suggestions"
        hidden={!open}
      >
        {model.suggestions.map((s, index) => (
          <Suggestion
            key={`${s.kind}:${s.name}`}
            suggestion={s}
            id={suggestionId(listId, index)}
            active={index === model.active}
            model={model}
          />
        ))}
      </ul>
    </div>
  );
}

/** Keep the active option in view. */
function useScrollIntoView(id: string | undefined): void {
  React.useEffect(() => {
    if (id) {
      document.getElementById(id)?.scrollIntoView?.({ block: 'nearest' });
    }
  }, [id]);
}

/** The chips, the search box, its suggestion list and its hint. */
export function WhoPart(props: { model: ShareModel }): JSX.Element {
  const { model } = props;
  useModel(model);
  const trans = model.trans;
  const searchId = React.useId();
  const listId = `${searchId}-suggestions`;
  const hintId = `${searchId}-hint`;
  const activeId =
    model.isOpen && model.active >= 0
      ? suggestionId(listId, model.active)
      : undefined;
  useScrollIntoView(activeId);
  return (
    <div className="cgu-Share-who">
      <label htmlFor={searchId}>
        {trans.__('Share with people or groups')}
      </label>
      <ChipList model={model} />
      <SearchCombobox
        model={model}
        searchId={searchId}
        listId={listId}
        hintId={hintId}
        activeId={activeId}
      />
      <div id={hintId} className="cgu-Share-hint">
        {model.hint}
      </div>
    </div>
  );
}
