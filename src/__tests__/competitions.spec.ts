import {
  entryContentType,
  entrySummary,
  fileFor,
  ICompetition,
  ICompetitionEntry,
  initialFile,
  isWaiting,
  validateEntry
} from '../competitions/format';
import { trans } from './trans';

const entry = (patch: Partial<ICompetitionEntry>): ICompetitionEntry => ({
  id: 7,
  competition_id: 1,
  file_name: 'p.csv',
  state: 'queued',
  message: '',
  public_score: null,
  ...patch
});

describe('Submit to Competition', () => {
  it('proposes the file it was given only when it is a CSV', () => {
    expect(initialFile('work/predictions.CSV')).toBe('work/predictions.CSV');
    expect(initialFile('analysis.ipynb')).toBe('');
    expect(initialFile(null)).toBe('');
  });

  it('asks for a competition and a file', () => {
    expect(validateEntry(null, 'p.csv', trans)).toBe('Choose a competition.');
    expect(validateEntry(1, '  ', trans)).toContain(
      'path of your predictions file'
    );
    expect(validateEntry(1, 'p.csv', trans)).toBeNull();
  });

  it('sends the notebook to a code competition, a CSV to the others', () => {
    const code = { kind: 'code' } as ICompetition;
    const csv = { kind: 'predictions' } as ICompetition;
    expect(fileFor(code, 'p.csv', 'work/model.ipynb')).toBe('work/model.ipynb');
    expect(fileFor(code, 'other.ipynb', 'work/model.ipynb')).toBe(
      'other.ipynb'
    );
    expect(fileFor(csv, 'p.csv', 'work/model.ipynb')).toBe('p.csv');
    expect(fileFor(csv, 'a.ipynb', 'a.ipynb')).toBe('');
    expect(entryContentType(code)).toBe('application/x-ipynb+json');
    expect(entryContentType(csv)).toBe('text/csv');
    expect(validateEntry(1, 'p.csv', trans, 'code')).toContain(
      'submit a notebook'
    );
    expect(validateEntry(1, 'm.ipynb', trans, 'code')).toBeNull();
  });

  it('says how an entry went', () => {
    expect(isWaiting(entry({ state: 'scoring' }))).toBe(true);
    expect(isWaiting(entry({ state: 'failed' }))).toBe(false);
    expect(
      entrySummary(entry({ state: 'scored', public_score: 0.5 }), trans)
    ).toBe('Entry 7 scored 0.50000 on the public leaderboard.');
    expect(
      entrySummary(
        entry({ state: 'failed', message: 'your file lacks the column id' }),
        trans
      )
    ).toBe('Entry 7 could not be scored: your file lacks the column id');
    expect(entrySummary(entry({}), trans)).toBe(
      'Entry 7 is waiting for the scorer.'
    );
  });
});
