/**
 * The file picker's tree: the home's entries with a checkbox each (checked,
 * partly checked through what is chosen inside a folder, or disabled with the
 * reason it is left out), sizes and file counts; folders open to list what
 * they hold. Below it the total of the selection, the warning when it is
 * over the limit, and what could not be listed.
 */
import * as React from 'react';
import { useModel } from '../useModel';
import { IRowState, PickerModel } from './model';
import { normalizePath } from './selection';
import { IFileEntry } from '../apiTypes';

/** A line that stands for what is not there: "Loading…", "empty folder". */
function Placeholder(props: { text: string }): JSX.Element {
  return <li className="cgu-Picker-empty">{props.text}</li>;
}

/** The entries of a folder, or what stands for them. */
function Entries(props: {
  model: PickerModel;
  folder: string;
  loading: string;
}): JSX.Element {
  const { model } = props;
  const entries = model.listing(props.folder);
  if (!entries) {
    return <Placeholder text={props.loading} />;
  }
  if (entries.length === 0) {
    return <Placeholder text={model.trans.__('empty folder')} />;
  }
  return (
    <>
      {entries.map(entry => (
        <PickerRow key={entry.path} model={model} entry={entry} />
      ))}
    </>
  );
}

/** A checkbox ref whose "partly checked" look follows `partial`. */
function useIndeterminate(partial: boolean): React.RefObject<HTMLInputElement> {
  const checkbox = React.useRef<HTMLInputElement>(null);
  React.useEffect(() => {
    if (checkbox.current) {
      checkbox.current.indeterminate = partial;
    }
  }, [partial]);
  return checkbox;
}

/** A folder's open/close button. */
function ExpandToggle(props: {
  model: PickerModel;
  entry: IFileEntry;
  path: string;
  open: boolean;
  disabled: boolean;
}): JSX.Element {
  const { model, path, open } = props;
  const show = model.trans.__('Show what %1 contains', props.entry.name);
  return (
    <button
      type="button"
      className="cgu-Picker-toggle"
      aria-expanded={open ? 'true' : 'false'}
      aria-label={show}
      title={show}
      disabled={props.disabled}
      data-cgu="picker-expand"
      data-path={path}
      onClick={() => void model.expand(path, !open)}
    >
      <span className="cgu-Picker-caret" aria-hidden="true" />
    </button>
  );
}

/** An entry's size, file count and the reason it is left out. */
function RowDetails(props: { id: string; row: IRowState }): JSX.Element {
  const { row } = props;
  return (
    <span id={props.id} className="cgu-Picker-details">
      <span className="cgu-Picker-size" data-cgu="picker-size">
        {row.size}
      </span>
      <span className="cgu-Picker-count" data-cgu="picker-count">
        {row.count}
      </span>
      <span className="cgu-Picker-reason" data-cgu="picker-reason">
        {row.reason}
      </span>
    </span>
  );
}

/** An entry's checkbox: checked, partly checked, or disabled. */
function RowCheckbox(props: {
  model: PickerModel;
  id: string;
  detailsId: string;
  path: string;
  row: IRowState;
}): JSX.Element {
  const { model, path, row } = props;
  const checkbox = useIndeterminate(row.state === 'partial');
  return (
    <input
      type="checkbox"
      ref={checkbox}
      id={props.id}
      className="cgu-Picker-checkbox"
      aria-describedby={props.detailsId}
      checked={row.state === 'checked'}
      disabled={row.excluded}
      data-cgu="picker-checkbox"
      data-path={path}
      onChange={event => model.toggle(path, event.target.checked)}
    />
  );
}

function rowClasses(open: boolean, excluded: boolean): string {
  const classes = ['cgu-Picker-item'];
  if (open) {
    classes.push('cgu-mod-open');
  }
  if (excluded) {
    classes.push('cgu-mod-excluded');
  }
  return classes.join(' ');
}

/** One entry of the tree, and a folder's entries below it when open. */
export function PickerRow(props: {
  model: PickerModel;
  entry: IFileEntry;
}): JSX.Element {
  const { model, entry } = props;
  const path = normalizePath(entry.path);
  const isDir = entry.type === 'directory';
  const open = isDir && model.isOpen(path);
  const row = model.rowState(entry);
  const id = React.useId();
  const detailsId = `${id}-details`;
  return (
    <li
      className={rowClasses(open, row.excluded)}
      data-cgu="picker-entry"
      data-path={path}
      data-type={entry.type}
      data-excluded={row.excluded ? 'true' : 'false'}
      data-state={row.state}
    >
      <div className="cgu-Picker-row">
        {isDir ? (
          <ExpandToggle
            model={model}
            entry={entry}
            path={path}
            open={open}
            disabled={row.excluded}
          />
        ) : (
          <span className="cgu-Picker-togglePlaceholder" />
        )}
        <RowCheckbox
          model={model}
          id={id}
          detailsId={detailsId}
          path={path}
          row={row}
        />
        <label htmlFor={id} className="cgu-Picker-name" title={path}>
          {isDir ? `${entry.name}/` : entry.name}
        </label>
        <RowDetails id={detailsId} row={row} />
      </div>
      {isDir ? (
        <ul className="cgu-Picker-list" hidden={!open}>
          {open ? (
            <Entries
              model={model}
              folder={path}
              loading={model.trans.__('Loading…')}
            />
          ) : null}
        </ul>
      ) : null}
    </li>
  );
}

/** The label, the tree, the total, the warning and the status. */
export function PickerTree(props: { model: PickerModel }): JSX.Element {
  const { model } = props;
  useModel(model);
  const labelId = React.useId();
  const warning = model.warning;
  return (
    <>
      <div className="cgu-Picker-label" id={labelId}>
        {model.options.label}
      </div>
      <div className="cgu-Picker-tree" data-cgu="picker-tree">
        <ul
          className="cgu-Picker-list cgu-Picker-root"
          aria-labelledby={labelId}
        >
          <Entries
            model={model}
            folder=""
            loading={model.trans.__('Loading your files…')}
          />
        </ul>
      </div>
      <div
        className="cgu-Picker-summary"
        role="status"
        aria-live="polite"
        data-cgu="picker-total"
      >
        {model.summary}
      </div>
      <div
        className="cgu-Picker-warning"
        role="alert"
        data-cgu="picker-over-limit"
        hidden={warning === null}
      >
        {warning ?? ''}
      </div>
      <div className="cgu-Picker-status" role="alert" data-cgu="picker-status">
        {model.status}
      </div>
    </>
  );
}
