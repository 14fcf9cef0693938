/**
 * `cgu-lab:competitions` — "Submit to Competition": send a predictions CSV of
 * this home to an open competition of one of my courses (to a code competition:
 * the open notebook, saved first, which the platform runs on the hidden
 * inputs), then tell me its
 * score when the platform's scorer has run (the entry is queued, so the
 * answer comes a few seconds later). From the notebook toolbar, the palette,
 * the File menu and a CSV's context menu in the file browser.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  Dialog,
  ICommandPalette,
  IToolbarWidgetRegistry,
  Notification,
  showDialog,
  showErrorMessage
} from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';
import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import { Widget } from '@lumino/widgets';
import { errorMessage, requestAPI } from '../api';
import { currentPath, registerCommand } from '../commands';
import { openFormDialog } from '../dialog';
import { h } from '../dom';
import { competeIcon } from '../icons';
import { DOMAIN, ICguLabSession } from '../tokens';
import { EntryFormBody, IEntryForm } from './dialog';
import {
  entryContentType,
  entrySummary,
  fileFor,
  ICompetition,
  ICompetitionEntry,
  initialFile,
  isWaiting,
  validateEntry
} from './format';

export const COMMAND = 'cgu-lab:submit-competition';
/** How often to ask for the score, and for how long at most. */
const POLL_MS = 2000;
const POLL_LIMIT_MS = 5 * 60_000;

async function sendEntry(
  app: JupyterFrontEnd,
  notebooks: INotebookTracker | null,
  value: IEntryForm,
  competition: ICompetition | undefined
): Promise<ICompetitionEntry> {
  // What runs is what is on disk: an open notebook with changes is saved first.
  const open = notebooks?.find(panel => panel.context.path === value.path);
  if (open?.context.model.dirty) {
    await open.context.save();
  }
  const file = await app.serviceManager.contents.get(value.path, {
    content: true,
    format: 'text',
    type: 'file'
  });
  const name = value.path.split('/').pop() ?? value.path;
  const query = `file=${encodeURIComponent(name)}&note=${encodeURIComponent(value.note)}`;
  return requestAPI<ICompetitionEntry>(
    `competitions/${value.competitionId}/entries?${query}`,
    {
      method: 'POST',
      body: String(file.content ?? ''),
      headers: { 'Content-Type': entryContentType(competition) }
    }
  );
}

/**
 * Ask for the entry until it is scored (or failed), a notification saying it
 * waits meanwhile; then say how it went in a dialog, with the leaderboard's link.
 */
async function reportScore(
  entry: ICompetitionEntry,
  competition: ICompetition | undefined,
  trans: ReturnType<ITranslator['load']>
): Promise<void> {
  const waiting = Notification.emit(entrySummary(entry, trans), 'in-progress', {
    autoClose: false
  });
  const deadline = Date.now() + POLL_LIMIT_MS;
  let latest = entry;
  try {
    while (isWaiting(latest) && Date.now() < deadline) {
      await new Promise(resolve => setTimeout(resolve, POLL_MS));
      const mine = await requestAPI<ICompetitionEntry[]>(
        `competitions/${entry.competition_id}/entries/mine`
      ).catch(() => []);
      latest = mine.find(e => e.id === entry.id) ?? latest;
    }
  } finally {
    Notification.dismiss(waiting);
  }
  const body = new Widget();
  body.node.appendChild(
    h(
      'p',
      { 'data-cgu': 'competition-result', 'data-state': latest.state },
      entrySummary(latest, trans)
    )
  );
  const leaderboard = Dialog.okButton({ label: trans.__('Open leaderboard') });
  const result = await showDialog({
    title: trans.__('Competition entry'),
    body,
    buttons: competition
      ? [Dialog.cancelButton({ label: trans.__('Close') }), leaderboard]
      : [Dialog.okButton({ label: trans.__('Close') })]
  });
  if (competition && result.button.accept) {
    window.open(competition.url, '_blank', 'noopener');
  }
}

/** Submit to Competition (the notebook's owner). */
export const competitionsPlugin: JupyterFrontEndPlugin<void> = {
  id: 'cgu-lab:competitions',
  description: 'Submits a predictions file to a course competition.',
  autoStart: true,
  requires: [ICguLabSession],
  optional: [
    INotebookTracker,
    ICommandPalette,
    IToolbarWidgetRegistry,
    ITranslator
  ],
  activate: (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    notebooks: INotebookTracker | null,
    palette: ICommandPalette | null,
    toolbars: IToolbarWidgetRegistry | null,
    translator: ITranslator | null
  ) => {
    if (!session.info || !session.isOwner) {
      return;
    }
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    registerCommand(
      app,
      COMMAND,
      {
        label: trans.__('Submit to Competition…'),
        caption: trans.__(
          'Send a predictions file to a competition of your course'
        ),
        icon: competeIcon,
        execute: args => submitToCompetition(app, notebooks, trans, args)
      },
      {
        palette,
        button: {
          registry: toolbars,
          id: 'cgu-competition',
          // Icon only: a label pushed Save as template off a 1280-px toolbar.
          label: '',
          tooltip: trans.__(
            'Compete: submit a predictions file to a course competition'
          ),
          icon: competeIcon,
          dataCgu: 'competition-button'
        }
      }
    );
  }
};

/** The command: choose a competition and a file, send it, report its score. */
async function submitToCompetition(
  app: JupyterFrontEnd,
  notebooks: INotebookTracker | null,
  trans: TranslationBundle,
  args: ReadonlyPartialJSONObject
): Promise<void> {
  const competitions = await openCompetitions(trans);
  if (!competitions) {
    return;
  }
  const given = currentPath(app, notebooks, args) ?? '';
  const notebook = notebooks?.currentWidget?.context.path ?? null;
  const path = fileFor(competitions[0], given, notebook);
  const chosen = (id: number | null) => competitions.find(c => c.id === id);
  const entry = await openFormDialog<IEntryForm, ICompetitionEntry>({
    title: trans.__('Submit to Competition'),
    body: new EntryFormBody(
      competitions,
      path || initialFile(given),
      trans,
      notebook
    ),
    acceptLabel: trans.__('Submit'),
    acceptLandmark: 'competition-submit',
    focusNodeSelector: 'select',
    className: 'cgu-CompetitionDialog',
    validate: value =>
      validateEntry(
        value.competitionId,
        value.path,
        trans,
        chosen(value.competitionId)?.kind
      ),
    send: value =>
      sendEntry(app, notebooks, value, chosen(value.competitionId)),
    onDone: () => undefined,
    trans
  });
  if (entry) {
    const competition = competitions.find(c => c.id === entry.competition_id);
    await reportScore(entry, competition, trans);
  }
}

/** The open competitions; null (after saying why) when there is none to enter. */
async function openCompetitions(
  trans: TranslationBundle
): Promise<ICompetition[] | null> {
  let competitions: ICompetition[];
  try {
    competitions = await requestAPI<ICompetition[]>('competitions');
  } catch (error) {
    await showErrorMessage(
      trans.__('Cannot submit'),
      errorMessage(error, trans)
    );
    return null;
  }
  if (!competitions.length) {
    await showErrorMessage(
      trans.__('No competition is open'),
      trans.__('None of your courses has a competition open now.')
    );
    return null;
  }
  return competitions;
}
