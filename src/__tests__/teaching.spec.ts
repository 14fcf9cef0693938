import {
  agoText,
  broadcastLabel,
  courseSections,
  isBroadcastLive,
  newArrivals,
  newDeploymentIds,
  newMaterialHint
} from '../course/format';
import {
  addPattern,
  ancestorsOf,
  checkState,
  deselectPath,
  effectivePaths,
  exclusionReason,
  globToRegExp,
  IPickerIndex,
  isCovered,
  isOverLimit,
  matchesPattern,
  normalizePath,
  normalizeSelection,
  overLimitText,
  selectionTotals,
  selectPath,
  totalsText
} from '../files/selection';
import { durationText, intervalSeconds } from '../format';
import { liveViewAction, liveViewTooltip } from '../liveView/format';
import {
  deadlineState,
  deadlineText,
  initialAssignment,
  orderAssignments,
  ordinal,
  receiptRows,
  receiptSummary,
  shortHash,
  submissionCountText,
  validateSubmission
} from '../submit/format';
import {
  ITemplateForm,
  slugify,
  templateFormDefaults,
  templateNameProblem,
  templateRequest,
  templateVersionNote,
  validateTemplateForm
} from '../templates/format';
import {
  IAssignment,
  IBroadcast,
  ICourses,
  IDeployment,
  IFileEntry,
  ISubmission,
  ITemplateOptions
} from '../apiTypes';
import { trans } from './trans';

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;
const NOW = Date.parse('2026-03-10T12:00:00Z');
const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function file(path: string, size: number, excluded = false): IFileEntry {
  return {
    name: path.split('/').pop() as string,
    path,
    type: 'file',
    size,
    files: 1,
    excluded
  };
}

function dir(
  path: string,
  size: number,
  files: number,
  excluded = false
): IFileEntry {
  return {
    name: path.split('/').pop() as string,
    path,
    type: 'directory',
    size,
    files,
    excluded
  };
}

/** A home: hw.ipynb, data/ (a.csv, b.csv, .ipynb_checkpoints/), notes.pyc. */
const listings: { [folder: string]: IFileEntry[] } = {
  '': [
    dir('data', 3 * MiB, 2),
    dir('.ipynb_checkpoints', 0, 0, true),
    file('hw.ipynb', 100 * 1024),
    file('notes.pyc', 2048, true)
  ],
  data: [
    file('data/a.csv', 1 * MiB),
    file('data/b.csv', 2 * MiB),
    dir('data/.ipynb_checkpoints', 0, 0, true)
  ]
};

function index(loaded: string[] = Object.keys(listings)): IPickerIndex {
  const entries = new Map<string, IFileEntry>();
  for (const folder of loaded) {
    for (const e of listings[folder]) {
      entries.set(e.path, e);
    }
  }
  return {
    entry: path => entries.get(path),
    children: folder => (loaded.includes(folder) ? listings[folder] : undefined)
  };
}

const serverExcluded = (e: IFileEntry): boolean => e.excluded;

describe('path normalisation', () => {
  it('writes a path in one spelling', () => {
    expect(normalizePath('./week1//hw.ipynb/')).toBe('week1/hw.ipynb');
    expect(normalizePath('/data\\raw/./x.csv')).toBe('data/raw/x.csv');
    expect(normalizePath('')).toBe('');
  });

  it('refuses a path that climbs out of the home', () => {
    expect(normalizePath('../etc/passwd')).toBe('');
    expect(normalizePath('a/../../b')).toBe('');
  });

  it('lists the folders above a path', () => {
    expect(ancestorsOf('a/b/c.txt')).toEqual(['a', 'a/b']);
    expect(ancestorsOf('top.txt')).toEqual([]);
  });
});

describe('selection', () => {
  it('drops duplicates, the home, traversal and what a chosen folder covers', () => {
    expect(
      normalizeSelection([
        'data/a.csv',
        'data',
        './data/',
        'hw.ipynb',
        'hw.ipynb',
        '',
        '../x',
        'database.sqlite'
      ])
    ).toEqual(['data', 'database.sqlite', 'hw.ipynb']);
  });

  it('does not treat a sibling sharing a prefix as inside a folder', () => {
    expect(normalizeSelection(['data', 'data2/x'])).toEqual([
      'data',
      'data2/x'
    ]);
    expect(isCovered('data2/x', ['data'])).toBe(false);
    expect(isCovered('data/a.csv', ['data'])).toBe(true);
  });

  it('choosing a folder replaces the paths chosen inside it', () => {
    expect(selectPath(['data/a.csv', 'hw.ipynb'], 'data')).toEqual([
      'data',
      'hw.ipynb'
    ]);
  });

  it('shows a folder partly chosen when something inside it is', () => {
    expect(checkState('data', ['data/a.csv'])).toBe('partial');
    expect(checkState('data/a.csv', ['data'])).toBe('checked');
    expect(checkState('hw.ipynb', ['data'])).toBe('unchecked');
  });

  it('leaving out a child of a chosen folder keeps its siblings, not the excluded ones', () => {
    const children = index().children;
    expect(
      deselectPath(['data', 'hw.ipynb'], 'data/a.csv', children, serverExcluded)
    ).toEqual(['data/b.csv', 'hw.ipynb']);
  });

  it('leaving out a path removes it and what was chosen inside it', () => {
    const children = index().children;
    expect(deselectPath(['data/a.csv', 'hw.ipynb'], 'data', children)).toEqual([
      'hw.ipynb'
    ]);
    expect(deselectPath(['hw.ipynb'], 'hw.ipynb', children)).toEqual([]);
  });

  it('keeps the selection when a folder on the way is not loaded', () => {
    const children = index(['']).children;
    expect(deselectPath(['data'], 'data/a.csv', children)).toEqual(['data']);
  });
});

describe('excluded patterns', () => {
  it('turns globs into anchored regular expressions', () => {
    expect(globToRegExp('*.pyc').test('x.pyc')).toBe(true);
    expect(globToRegExp('*.pyc').test('x.pyc.bak')).toBe(false);
    expect(globToRegExp('file?.txt').test('file1.txt')).toBe(true);
    expect(globToRegExp('[!a]*').test('abc')).toBe(false);
    expect(globToRegExp('[!a]*').test('bcd')).toBe(true);
    expect(globToRegExp('a.b').test('axb')).toBe(false);
  });

  it('matches the path and each of its parts, as the server does', () => {
    expect(matchesPattern('data', file('data/a.csv', 1))).toBe(true);
    expect(matchesPattern('*.pyc', file('a/b/c.pyc', 1))).toBe(true);
    expect(matchesPattern('*.pyc', file('a/b/c.py', 1))).toBe(false);
    expect(
      matchesPattern('.ipynb_checkpoints', dir('data/.ipynb_checkpoints', 0, 0))
    ).toBe(true);
    expect(matchesPattern('data/raw/*', file('data/raw/x.bin', 1))).toBe(true);
    expect(matchesPattern('data/raw/*', file('other/raw/x.bin', 1))).toBe(
      false
    );
    expect(matchesPattern('  ', file('x', 1))).toBe(false);
  });

  it('says why an entry is left out', () => {
    const defaults = ['.ipynb_checkpoints', '*.pyc'];
    const pyc = file('notes.pyc', 10, true);
    expect(exclusionReason(pyc, defaults, defaults, trans)).toBe(
      'excluded: matches "*.pyc"'
    );
    // Submissions: the platform's flag decides.
    expect(exclusionReason(pyc, null, defaults, trans)).toBe(
      'excluded: matches "*.pyc"'
    );
    expect(exclusionReason(file('x.bin', 1, true), null, [], trans)).toBe(
      'excluded by the platform'
    );
    expect(
      exclusionReason(file('hw.ipynb', 1), null, defaults, trans)
    ).toBeNull();
    // Templates: a pattern the teacher removed no longer excludes.
    expect(
      exclusionReason(pyc, ['.ipynb_checkpoints'], defaults, trans)
    ).toBeNull();
    // ...and one they added does.
    expect(
      exclusionReason(file('model.ckpt', 1), ['*.ckpt'], defaults, trans)
    ).toBe('excluded: matches "*.ckpt"');
  });

  it('adds a pattern once, trimmed, and refuses empty ones and ".."', () => {
    expect(addPattern(['*.pyc'], '  *.ckpt ', trans)).toEqual([
      '*.pyc',
      '*.ckpt'
    ]);
    expect(addPattern(['*.pyc'], '*.pyc', trans)).toBe(
      '"*.pyc" is already in the list.'
    );
    expect(typeof addPattern([], '   ', trans)).toBe('string');
    expect(typeof addPattern([], '../secret', trans)).toBe('string');
  });
});

describe('selection totals', () => {
  it('counts a loaded folder entry by entry, leaving out excluded ones', () => {
    const totals = selectionTotals(
      ['data', 'hw.ipynb'],
      index(),
      serverExcluded
    );
    expect(totals.bytes).toBe(3 * MiB + 100 * 1024);
    expect(totals.files).toBe(3);
    expect(totals.unknown).toEqual([]);
    expect(totals.excluded).toEqual([]);
  });

  it('uses the server total of a folder that is not loaded', () => {
    const totals = selectionTotals(['data'], index(['']), serverExcluded);
    expect(totals).toEqual({
      bytes: 3 * MiB,
      files: 2,
      unknown: [],
      excluded: []
    });
  });

  it('does not count excluded or unknown paths, and does not count twice', () => {
    const totals = selectionTotals(
      ['notes.pyc', 'data', 'data/a.csv', 'later/x.txt'],
      index(),
      serverExcluded
    );
    expect(totals.bytes).toBe(3 * MiB);
    expect(totals.excluded).toEqual(['notes.pyc']);
    expect(totals.unknown).toEqual(['later/x.txt']);
  });

  it('follows an added pattern inside a loaded folder', () => {
    const noCsvB = (e: IFileEntry): boolean => e.excluded || e.name === 'b.csv';
    expect(selectionTotals(['data'], index(), noCsvB).bytes).toBe(1 * MiB);
  });

  it('sends the selection without excluded entries', () => {
    expect(
      effectivePaths(
        ['notes.pyc', 'hw.ipynb', 'later/x'],
        index(),
        serverExcluded
      )
    ).toEqual(['hw.ipynb', 'later/x']);
  });

  it('detects a selection over the limit', () => {
    expect(isOverLimit(101 * MiB, 100 * MiB)).toBe(true);
    expect(isOverLimit(100 * MiB, 100 * MiB)).toBe(false);
    expect(isOverLimit(5 * GiB, null)).toBe(false);
    expect(isOverLimit(5 * GiB, 0)).toBe(false);
    expect(overLimitText(150 * MiB, 100 * MiB, 'a template', trans)).toBe(
      'Too large: the selection is 150 MiB, over the 100 MiB limit of ' +
        'a template. Leave out large files (data sets, checkpoints, outputs) ' +
        'or add an excluded pattern.'
    );
    expect(overLimitText(1, 100 * MiB, 'a template', trans)).toBeNull();
  });

  it('summarises the selection against the limit', () => {
    expect(
      totalsText(
        { bytes: 1.5 * MiB, files: 3, unknown: [], excluded: [] },
        100 * MiB,
        trans
      )
    ).toBe('Selected: 3 files, 1.5 MiB of 100 MiB allowed');
    expect(
      totalsText(
        { bytes: 0, files: 1, unknown: ['x'], excluded: [] },
        null,
        trans
      )
    ).toBe('Selected: 1 file, 0 B (+ 1 not measured yet)');
  });
});

const templateOptions: ITemplateOptions = {
  can_publish: true,
  environments: [
    { name: 'pytorch', display_name: 'PyTorch 2' },
    { name: 'tf', display_name: 'TensorFlow' }
  ],
  groups: [{ name: 'ml-2026', display_name: 'ML 2026' }],
  templates: [{ name: 'ml-intro', display_name: 'Intro to ML', versions: 3 }],
  defaults: {
    environment: 'tf',
    cpu_milli: 2000,
    memory: 4 * GiB,
    gpu_type: 'standard',
    gpus: 1
  },
  max_bytes: 500 * MiB
};

function templateForm(overrides: Partial<ITemplateForm> = {}): ITemplateForm {
  return {
    ...templateFormDefaults(templateOptions, 'Intro to ML'),
    paths: ['hw.ipynb'],
    ...overrides
  };
}

describe('template form', () => {
  it('makes names from display names', () => {
    expect(slugify('Intro to ML (2026)')).toBe('intro-to-ml-2026');
    expect(slugify('  Über Déjà vu!  ')).toBe('uber-deja-vu');
    expect(slugify('x'.repeat(70) + ' y')).toHaveLength(63);
    expect(slugify('---')).toBe('');
  });

  it('starts from the defaults of the options', () => {
    const form = templateFormDefaults(templateOptions, 'Intro to ML');
    expect(form).toMatchObject({
      name: 'intro-to-ml',
      environment: 'tf',
      visibility: 'private',
      group: 'ml-2026',
      resources: { cpus: 2, memoryGiB: 4, gpuType: 'standard', gpus: 1 }
    });
  });

  it('explains what is wrong with a name', () => {
    expect(templateNameProblem('ml-intro-2', trans)).toBeNull();
    expect(templateNameProblem('x'.repeat(63), trans)).toBeNull();
    expect(templateNameProblem('x'.repeat(64), trans)).toMatch(/at most 63/);
    expect(templateNameProblem('ML_intro', trans)).toMatch(
      /lower-case letters/
    );
  });

  it('says whether a name makes a new template or a new version', () => {
    expect(
      templateVersionNote(templateOptions.templates, 'ml-intro', trans)
    ).toBe('Version 4 of "Intro to ML" (it has 3 versions).');
    expect(
      templateVersionNote(templateOptions.templates, 'cv-intro', trans)
    ).toBe('A new template.');
  });

  it('checks the form', () => {
    expect(validateTemplateForm(templateForm(), trans)).toBeNull();
    expect(
      validateTemplateForm(templateForm({ displayName: ' ' }), trans)
    ).toMatch(/display name/);
    for (const name of ['ML', 'a_b', '-a', 'a-', '']) {
      expect(validateTemplateForm(templateForm({ name }), trans)).toMatch(
        /lower-case letters/
      );
    }
    expect(
      validateTemplateForm(
        templateForm({ visibility: 'group', group: '' }),
        trans
      )
    ).toMatch(/group/);
    expect(
      validateTemplateForm(templateForm({ environment: '' }), trans)
    ).toMatch(/environment/);
    expect(
      validateTemplateForm(
        templateForm({
          resources: { cpus: 0, memoryGiB: 1, gpuType: '', gpus: 0 }
        }),
        trans
      )
    ).toMatch(/CPUs/);
    expect(
      validateTemplateForm(templateForm({ paths: ['', '..'] }), trans)
    ).toMatch(/at least one file/);
  });

  it('builds the request body', () => {
    const body = templateRequest(
      templateForm({
        displayName: ' Intro to ML ',
        versionLabel: ' 2027 spring ',
        visibility: 'group',
        paths: ['data/a.csv', 'data', 'hw.ipynb'],
        excluded: ['*.pyc', ' *.pyc ', '', '.ipynb_checkpoints'],
        resources: { cpus: 0.5, memoryGiB: 0.5, gpuType: 'standard', gpus: 2 }
      })
    );
    expect(body).toEqual({
      name: 'intro-to-ml',
      display_name: 'Intro to ML',
      description: '',
      version_label: '2027 spring',
      visibility: 'group',
      group: 'ml-2026',
      environment: 'tf',
      cpu: '500m',
      memory: '512Mi',
      gpu_type: 'standard',
      gpus: 2,
      paths: ['data', 'hw.ipynb'],
      excluded: ['*.pyc', '.ipynb_checkpoints']
    });
  });

  it('sends no group unless the visibility is a group, and no GPU type without GPUs', () => {
    const body = templateRequest(
      templateForm({
        visibility: 'public',
        resources: { cpus: 2, memoryGiB: 4, gpuType: '', gpus: 3 }
      })
    );
    expect(body.group).toBeNull();
    expect(body.gpu_type).toBeNull();
    expect(body.gpus).toBe(0);
    expect(body.cpu).toBe('2');
    expect(body.memory).toBe('4Gi');
  });
});

function assignment(overrides: Partial<IAssignment> = {}): IAssignment {
  return {
    id: 1,
    group: 'ml-2026',
    name: 'hw1',
    title: 'Homework 1',
    description: '',
    deadline: null,
    allow_late: false,
    open: true,
    max_bytes: 50 * MiB,
    submissions: 0,
    last_submitted_at: null,
    ...overrides
  };
}

describe('times', () => {
  it('writes durations', () => {
    expect(durationText(30, trans)).toBe('less than a minute');
    expect(durationText(29 * 60, trans)).toBe('29 min');
    expect(durationText(65 * 60, trans)).toBe('1 h 5 min');
    expect(durationText(2 * 3600, trans)).toBe('2 h');
    expect(durationText(51 * 3600, trans)).toBe('2 days 3 h');
    expect(durationText(24 * 3600, trans)).toBe('1 day');
  });

  it('writes how long ago', () => {
    expect(agoText(iso(NOW - 10 * 1000), NOW, trans)).toBe('just now');
    expect(agoText(iso(NOW - 5 * 60 * 1000), NOW, trans)).toBe('5 min ago');
    expect(agoText(iso(NOW - 2 * HOUR), NOW, trans)).toBe('2 h ago');
    expect(agoText(iso(NOW - 3 * DAY), NOW, trans)).toBe('3 days ago');
    expect(agoText('not a date', NOW, trans)).toBe('');
    expect(agoText(null, NOW, trans)).toBe('');
  });
});

describe('deadlines', () => {
  it('says where an assignment stands', () => {
    expect(deadlineState(assignment(), NOW)).toBe('no-deadline');
    expect(
      deadlineState(assignment({ deadline: iso(NOW + 3 * DAY) }), NOW)
    ).toBe('open');
    expect(
      deadlineState(assignment({ deadline: iso(NOW + 2 * HOUR) }), NOW)
    ).toBe('soon');
    expect(
      deadlineState(
        assignment({ deadline: iso(NOW - HOUR), allow_late: true }),
        NOW
      )
    ).toBe('late');
    expect(deadlineState(assignment({ open: false }), NOW)).toBe('closed');
  });

  it('counts down to the deadline', () => {
    expect(
      deadlineText(
        assignment({ deadline: iso(NOW + 2 * DAY + 3 * HOUR) }),
        NOW,
        trans
      )
    ).toBe('due in 2 days 3 h');
    expect(deadlineText(assignment(), NOW, trans)).toBe('no deadline');
  });

  it('says when late submissions are accepted, and when closed', () => {
    expect(
      deadlineText(
        assignment({ deadline: iso(NOW - 3 * HOUR), allow_late: true }),
        NOW,
        trans
      )
    ).toBe('late submissions accepted (deadline passed 3 h ago)');
    expect(
      deadlineText(
        assignment({ deadline: iso(NOW - 2 * DAY), open: false }),
        NOW,
        trans
      )
    ).toBe('closed (deadline passed 2 days ago)');
    expect(deadlineText(assignment({ open: false }), NOW, trans)).toBe(
      'closed'
    );
  });

  it('counts submissions', () => {
    expect(submissionCountText(0, trans)).toBe('not submitted yet');
    expect(submissionCountText(1, trans)).toBe('1 submission');
    expect(submissionCountText(4, trans)).toBe('4 submissions');
  });
});

describe('assignment order', () => {
  const later = assignment({
    id: 1,
    title: 'Later',
    deadline: iso(NOW + 5 * DAY)
  });
  const sooner = assignment({
    id: 2,
    title: 'Sooner',
    deadline: iso(NOW + HOUR)
  });
  const noDeadline = assignment({ id: 3, title: 'Project' });
  const late = assignment({
    id: 4,
    title: 'Late',
    deadline: iso(NOW - HOUR),
    allow_late: true
  });
  const closedOld = assignment({
    id: 5,
    title: 'Old',
    deadline: iso(NOW - 20 * DAY),
    open: false
  });
  const closedRecent = assignment({
    id: 6,
    title: 'Recent',
    deadline: iso(NOW - 2 * DAY),
    open: false
  });

  it('lists open ones first, the nearest deadline first, closed ones last', () => {
    const ordered = orderAssignments(
      [closedOld, noDeadline, later, closedRecent, late, sooner],
      NOW
    );
    expect(ordered.map(a => a.id)).toEqual([2, 1, 3, 4, 6, 5]);
  });

  it('starts with the asked-for assignment, or the first open one', () => {
    const ordered = orderAssignments([closedOld, later, sooner], NOW);
    expect(initialAssignment(ordered, 1)?.id).toBe(1);
    expect(initialAssignment(ordered, 99)?.id).toBe(2);
    expect(initialAssignment(ordered, null)?.id).toBe(2);
    expect(initialAssignment([closedOld], null)).toBeNull();
  });

  it('checks a submission before sending it', () => {
    expect(validateSubmission(null, ['a'], trans)).toBe(
      'Choose an assignment.'
    );
    expect(validateSubmission(closedOld, ['a'], trans)).toMatch(
      /"Old" is closed/
    );
    expect(validateSubmission(later, [], trans)).toBe(
      'Choose at least one file to submit.'
    );
    expect(validateSubmission(later, ['hw.ipynb'], trans)).toBeNull();
  });
});

describe('receipt', () => {
  const receipt: ISubmission = {
    id: 41,
    number: 2,
    assignment: 'Homework 1',
    content_hash: 'sha256:0123456789abcdef0123456789abcdef',
    submitted_at: '2026-03-10T12:00:00Z',
    late: true,
    files: 3,
    bytes: 1.5 * MiB,
    url: '/controller/submissions/41'
  };

  it('writes ordinals', () => {
    expect(
      [1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111].map(n => ordinal(n, trans))
    ).toEqual([
      '1st',
      '2nd',
      '3rd',
      '4th',
      '11th',
      '12th',
      '13th',
      '21st',
      '22nd',
      '23rd',
      '101st',
      '111th'
    ]);
  });

  it('shortens the content hash', () => {
    expect(shortHash('sha256:0123456789abcdef')).toBe('0123456789ab');
    expect(shortHash('abcdef')).toBe('abcdef');
  });

  it('lists the facts of the receipt', () => {
    const rows = receiptRows(receipt, at => `at ${at}`, trans);
    expect(rows.map(r => [r.key, r.value])).toEqual([
      ['assignment', 'Homework 1'],
      ['number', '2nd submission'],
      ['time', 'at 2026-03-10T12:00:00Z'],
      ['late', 'Late (after the deadline)'],
      ['files', '3 files, 1.5 MiB'],
      ['hash', '0123456789ab']
    ]);
    expect(
      receiptRows({ ...receipt, late: false }, at => at, trans).find(
        r => r.key === 'late'
      )?.value
    ).toBe('On time');
  });

  it('sums it up for the notification', () => {
    expect(receiptSummary(receipt, trans)).toBe(
      'Submitted to Homework 1: your 2nd submission, late, 3 files, 1.5 MiB ' +
        '(hash 0123456789ab).'
    );
    expect(
      receiptSummary({ ...receipt, late: false, number: 1, files: 1 }, trans)
    ).toBe(
      'Submitted to Homework 1: your 1st submission, 1 file, 1.5 MiB ' +
        '(hash 0123456789ab).'
    );
  });
});

function deployment(overrides: Partial<IDeployment> = {}): IDeployment {
  return {
    id: 1,
    title: 'Week 1',
    path: 'courses/ml-2026/week1',
    by: 'prof',
    at: iso(NOW - 2 * DAY),
    new: false,
    ...overrides
  };
}

function broadcast(overrides: Partial<IBroadcast> = {}): IBroadcast {
  return {
    id: 1,
    owner: 'prof',
    owner_display_name: 'Prof. Lee',
    notebook: 'lecture',
    url: '/user/prof/lecture/lab',
    expires_at: null,
    by: 'prof',
    ...overrides
  };
}

const courses: ICourses = {
  groups: [
    {
      name: 'ml-2026',
      display_name: 'ML 2026',
      folder: 'courses/ml-2026',
      deployments: [
        deployment({ id: 1 }),
        deployment({ id: 2, title: 'Week 2', at: iso(NOW - HOUR), new: true })
      ],
      broadcasts: [
        broadcast(),
        broadcast({ owner: 'ta', expires_at: iso(NOW - 60 * 1000) })
      ],
      assignments: [
        assignment({ id: 7, open: false }),
        assignment({ id: 8, deadline: iso(NOW + DAY * 2) })
      ]
    },
    {
      name: 'cv-2026',
      display_name: '',
      folder: 'courses/cv-2026',
      deployments: [
        deployment({
          id: 3,
          title: '',
          path: 'courses/cv-2026/intro',
          new: true
        })
      ],
      broadcasts: [],
      assignments: []
    }
  ]
};

describe('course panel', () => {
  it('groups material newest first with "new" badges, live broadcasts and ordered assignments', () => {
    const sections = courseSections(courses, NOW);
    expect(sections.map(s => s.group.name)).toEqual(['ml-2026', 'cv-2026']);
    const ml = sections[0];
    expect(ml.deployments.map(d => [d.id, d.isNew])).toEqual([
      [2, true],
      [1, false]
    ]);
    expect(ml.newCount).toBe(1);
    expect(ml.broadcasts.map(b => b.owner)).toEqual(['prof']);
    expect(ml.assignments.map(a => a.id)).toEqual([8, 7]);
  });

  it('keeps the badge of material seen during this visit', () => {
    const seen: ICourses = {
      groups: courses.groups.map(g => ({
        ...g,
        deployments: g.deployments.map(d => ({ ...d, new: false }))
      }))
    };
    const sections = courseSections(seen, NOW, new Set([2]));
    expect(sections[0].deployments.find(d => d.id === 2)?.isNew).toBe(true);
    expect(sections[0].newCount).toBe(1);
    expect(sections[1].newCount).toBe(0);
  });

  it('finds what is new and what just arrived', () => {
    expect(Array.from(newDeploymentIds(courses)).sort()).toEqual([2, 3]);
    expect(newArrivals(courses, new Set([2]))).toEqual([
      {
        group: 'cv-2026',
        title: 'courses/cv-2026/intro',
        path: 'courses/cv-2026/intro'
      }
    ]);
    expect(newArrivals(courses, new Set([2, 3]))).toEqual([]);
  });

  it('writes the new-material hint', () => {
    expect(newMaterialHint([], trans)).toBeNull();
    expect(
      newMaterialHint(
        [{ group: 'ML 2026', title: 'Week 2', path: 'w2' }],
        trans
      )
    ).toBe('New course material: Week 2 (ML 2026)');
    expect(
      newMaterialHint(
        [
          { group: 'ML 2026', title: 'Week 2', path: 'w2' },
          { group: 'ML 2026', title: 'Week 3', path: 'w3' },
          { group: 'CV 2026', title: 'Intro', path: 'i' }
        ],
        trans
      )
    ).toBe('New course material: 3 items in ML 2026, CV 2026');
  });

  it('labels live broadcasts and drops ended ones', () => {
    expect(broadcastLabel(broadcast(), trans)).toBe(
      "Live: Prof. Lee's notebook"
    );
    expect(broadcastLabel(broadcast({ owner_display_name: '' }), trans)).toBe(
      "Live: prof's notebook"
    );
    expect(isBroadcastLive(broadcast(), NOW)).toBe(true);
    expect(
      isBroadcastLive(broadcast({ expires_at: iso(NOW + HOUR) }), NOW)
    ).toBe(true);
    expect(isBroadcastLive(broadcast({ expires_at: iso(NOW - 1) }), NOW)).toBe(
      false
    );
  });

  it('reads polling intervals from settings', () => {
    expect(intervalSeconds(120, 60, 10)).toBe(120);
    expect(intervalSeconds(2, 60, 10)).toBe(10);
    expect(intervalSeconds('abc', 60, 10)).toBe(60);
    expect(intervalSeconds(undefined, 5, 1)).toBe(5);
  });
});

describe('live view', () => {
  const t0 = '2026-03-10T12:00:00.000000Z';
  const t1 = '2026-03-10T12:00:07.250000Z';

  it('reloads a document that changed on the server', () => {
    expect(
      liveViewAction({ loaded: t0, current: t1, dirty: false, busy: false })
    ).toBe('revert');
  });

  it('leaves an unchanged document alone, whatever the spelling of the time', () => {
    expect(
      liveViewAction({ loaded: t0, current: t0, dirty: false, busy: false })
    ).toBe('none');
    expect(
      liveViewAction({
        loaded: '2026-03-10T12:00:00Z',
        current: '2026-03-10T12:00:00.000Z',
        dirty: false,
        busy: false
      })
    ).toBe('none');
  });

  it('does not overwrite what the viewer changed', () => {
    expect(
      liveViewAction({ loaded: t0, current: t1, dirty: true, busy: false })
    ).toBe('paused');
  });

  it('reloads a document JupyterLab marked dirty while loading it, but not one the viewer edited', () => {
    expect(
      liveViewAction({
        loaded: t0,
        current: t1,
        dirty: true,
        edited: false,
        busy: false
      })
    ).toBe('revert');
    expect(
      liveViewAction({
        loaded: t0,
        current: t1,
        dirty: true,
        edited: true,
        busy: false
      })
    ).toBe('paused');
  });

  it('waits while a reload runs or a time is unknown', () => {
    expect(
      liveViewAction({ loaded: t0, current: t1, dirty: false, busy: true })
    ).toBe('none');
    expect(
      liveViewAction({ loaded: null, current: t1, dirty: false, busy: false })
    ).toBe('none');
    expect(
      liveViewAction({
        loaded: t0,
        current: undefined,
        dirty: false,
        busy: false
      })
    ).toBe('none');
  });

  it('explains itself in the tooltip', () => {
    expect(liveViewTooltip('prof', 5, [], null, trans)).toBe(
      'Live view: files you have open reload when prof saves them (checked every 5 s).'
    );
    const tip = liveViewTooltip('prof', 5, ['hw.ipynb'], '12:00:07', trans);
    expect(tip).toContain('Last update: 12:00:07.');
    expect(tip).toContain('you changed them: hw.ipynb');
  });
});
