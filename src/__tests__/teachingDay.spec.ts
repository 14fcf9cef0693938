/**
 * A teaching day without a single raw error: the pure parts of what a student
 * or TA meets inside JupyterLab (sentences, figures, the files a notebook reads).
 */
import { ServerConnection } from '@jupyterlab/services';
import { errorMessage, platformError, statusSentence } from '../api';
import { cullingLabel } from '../culling/format';
import { gpuLines, statusBarText } from '../resources/format';
import {
  idleSecondsAt,
  idleWarningText,
  minutesText,
  serverSkew,
  whenText
} from '../culling/idle';
import {
  candidatePaths,
  commandLineFiles,
  importedModules,
  mergeSuggestions,
  pathFromLiteral,
  resolveInHome,
  stringLiterals
} from '../submit/notebookReads';
import {
  accessChangeText,
  accessLabel,
  PlatformProblem,
  problemOf,
  revokedDialogText,
  stoppedDialogText
} from '../platform/state';
import { ICullingStatus, IFileEntry, IResources } from '../apiTypes';
import { IServerInfo } from '../tokens';
import { trans } from './trans';
const PAGE = 'http://ann--day.localhost:8000/notebook/ann/day/lab';

describe('a notebook that stopped', () => {
  const culled = {
    message:
      "notebook 'day' stopped for idleness (idle for 31 minutes (limit 30))",
    code: 'notebook_stopped',
    reason: 'stopped for idleness',
    detail: 'idle for 31 minutes (limit 30)',
    cause: 'idle',
    state: 'stopped',
    restart_url:
      'http://127.0.0.1:8000/notebook/auto-start/ann/day?next=%2Fnotebook%2Fann%2Fday%2Flab',
    portal_url: 'http://127.0.0.1:8000/'
  };

  it('is recognised from the proxy answer, with where to restart', () => {
    const problem = problemOf(503, culled, PAGE);
    expect(problem).toMatchObject({
      kind: 'stopped',
      cause: 'idle',
      restartUrl: culled.restart_url
    });
    // Other answers are no page problem; unsafe links are dropped.
    expect(problemOf(503, { message: 'busy', code: 'other' }, PAGE)).toBeNull();
    expect(problemOf(500, culled, PAGE)).toBeNull();
    const evil = problemOf(
      503,
      { ...culled, restart_url: 'javascript:alert(1)' },
      PAGE
    ) as Extract<PlatformProblem, { kind: 'stopped' }>;
    expect(evil.restartUrl).toBeNull();
  });

  it('tells the owner it stopped for idleness and offers Restart', () => {
    const problem = problemOf(503, culled, PAGE) as Extract<
      PlatformProblem,
      { kind: 'stopped' }
    >;
    const text = stoppedDialogText(problem, true, trans);
    expect(text.title).toBe('Your notebook stopped for idleness');
    expect(text.body).toBe(
      'It stopped for idleness — restart it to go on. Idle for 31 minutes (limit 30). Files you saved are kept; what ran in its kernels is gone.'
    );
    expect(text.accept).toBe('Restart');
    const visitor = stoppedDialogText(problem, false, trans);
    expect(visitor.body).toContain('Only its owner can restart it');
    expect(visitor.accept).toBe('Open the start page');
  });

  it('says when its server died, and when it is restarting', () => {
    const died = problemOf(
      503,
      {
        ...culled,
        cause: 'died',
        reason: 'its server stopped by itself',
        detail: 'exit code -9'
      },
      PAGE
    ) as Extract<PlatformProblem, { kind: 'stopped' }>;
    expect(stoppedDialogText(died, true, trans).body).toBe(
      'Your notebook stopped: Its server stopped by itself: exit code -9 — restart it to go on. Files you saved are kept.'
    );
    const starting = {
      ...died,
      state: 'starting',
      reason: 'it is starting',
      detail: ''
    };
    expect(stoppedDialogText(starting, true, trans).title).toBe(
      'Your notebook is restarting'
    );
  });
});

describe('a share that ended or changed', () => {
  const info: IServerInfo = {
    version: '0.1.0',
    user: { name: 'tom', display_name: 'Tom' },
    notebook: { owner: 'ann', name: 'day' },
    access: 'edit',
    controller_url: 'http://127.0.0.1:8000/'
  };

  it('is recognised and explained with the way back', () => {
    const body = {
      message: "you no longer have access to ann's notebook 'day'",
      code: 'no_access',
      portal_url: 'http://127.0.0.1:8000/'
    };
    expect(problemOf(404, body, PAGE)).toEqual({
      kind: 'revoked',
      message: body.message,
      portalUrl: 'http://127.0.0.1:8000/'
    });
    expect(problemOf(401, { message: 'log in', code: 'login' }, PAGE)).toEqual({
      kind: 'login',
      message: 'log in'
    });
    const text = revokedDialogText(info, trans);
    expect(text.title).toBe('Access revoked');
    expect(text.body).toContain('ann\'s notebook "day" ended');
    expect(text.accept).toBe('Back to cgu-lab portal');
  });

  it('labels the status bar and says what a change means', () => {
    expect(accessLabel('edit', trans)).toBe('Shared: can edit');
    expect(accessLabel('revoked', trans)).toBe('Access revoked');
    expect(accessLabel('owner', trans)).toBeNull();
    expect(accessChangeText('edit', 'read', trans)).toMatch(
      /now shared with you read-only/
    );
    expect(accessChangeText('read', 'read', trans)).toBeNull();
  });
});

describe('the idle countdown', () => {
  const status: ICullingStatus = {
    enabled: true,
    persistent: false,
    idle_minutes: 5,
    warn_minutes: 1,
    max_lifetime_hours: null,
    last_activity: '2026-12-01T09:00:00Z',
    action: 'warn',
    reason: 'idle for 4 minutes (limit 5); the owner was warned',
    message: 'server words',
    stop_at: '2026-12-01T09:05:00Z',
    now: '2026-12-01T09:04:43Z',
    idle_seconds: 283,
    cause: 'idle',
    exempt: ''
  };
  const serverNow = Date.parse('2026-12-01T09:04:43Z');

  it('says the same thing as the status bar, with correct plurals', () => {
    expect(idleWarningText(status, serverNow, trans)).toBe(
      'This notebook has been idle for 4 minutes (limit 5 minutes) and stops in less than a minute. Run something or press Keep running to keep it.'
    );
    expect(cullingLabel(status, serverNow, trans)).toBe('Idle: stops in 0:17');
    expect(minutesText(61, trans)).toBe('1 minute');
    expect(minutesText(30, trans)).toBe('less than a minute');
    expect(whenText(90, trans)).toBe('in 2 minutes');
    expect(whenText(60, trans)).toBe('in 1 minute');
  });

  it('counts on the server clock, whatever the laptop says', () => {
    const laptop = serverNow - 3 * 60 * 1000; // three minutes slow
    const skew = serverSkew(status, laptop);
    expect(skew).toBe(3 * 60 * 1000);
    expect(cullingLabel(status, laptop + skew + 7000, trans)).toBe(
      'Idle: stops in 0:10'
    );
    expect(idleSecondsAt(status, serverNow + 60 * 1000)).toBe(343);
  });

  it('says nothing once a cell ran, and names a lifetime stop', () => {
    expect(
      idleWarningText(
        { ...status, action: 'keep', idle_seconds: 3 },
        serverNow,
        trans
      )
    ).toBeNull();
    const aged = {
      ...status,
      cause: 'lifetime' as const,
      reason: 'running for 11.9 hours (limit 12)',
      idle_seconds: null
    };
    expect(idleWarningText(aged, serverNow, trans)).toMatch(
      /^This notebook has been running for 11.9 hours \(limit 12\) and stops in less than a minute\. Save your work/
    );
  });
});

describe('what a notebook reads', () => {
  it('finds string literals, but not comments or f-strings with fields', () => {
    const code = [
      "df = pd.read_csv('data/iris.csv')  # not 'this.txt'",
      'with open("notes.txt") as f: pass',
      "path = r'raw\\dir/x.bin'",
      "name = f'{user}.csv'",
      'doc = """a long\ntext"""',
      "s = 'it\\'s'"
    ].join('\n');
    expect(stringLiterals(code)).toEqual([
      'data/iris.csv',
      'notes.txt',
      'raw\\dir/x.bin',
      'a long\ntext',
      "it's"
    ]);
  });

  it('keeps what could be a path of the home', () => {
    expect(pathFromLiteral('data/iris.csv')).toBe('data/iris.csv');
    expect(pathFromLiteral('https://example.org/x.csv')).toBeNull();
    expect(pathFromLiteral('/etc/passwd')).toBeNull();
    expect(pathFromLiteral('hello world')).toBeNull();
    expect(pathFromLiteral('data/*.csv')).toBe('data');
    expect(pathFromLiteral('*.csv')).toBeNull();
    expect(pathFromLiteral('results/')).toBe('results');
  });

  it('knows local imports and command lines', () => {
    expect(
      importedModules(
        'import helper\nfrom utils.io import load\nimport numpy as np, os'
      )
    ).toEqual(['helper', 'utils/io', 'numpy', 'os']);
    expect(
      commandLineFiles('%run prep.py\n!python train.py --data d/x.csv -v')
    ).toEqual(['prep.py', 'train.py', 'd/x.csv']);
  });

  it('resolves from the notebook folder and never leaves the home', () => {
    expect(resolveInHome('week1', 'data/iris.csv')).toBe('week1/data/iris.csv');
    expect(resolveInHome('week1', '../shared/x.csv')).toBe('shared/x.csv');
    expect(resolveInHome('', '../x.csv')).toBeNull();
    expect(resolveInHome('week1', '~/x.csv')).toBe('x.csv');
    expect(
      candidatePaths('week1/hw.ipynb', [
        "import helper\npd.read_csv('data/iris.csv')\nopen('hw.ipynb')"
      ])
    ).toEqual(['week1/data/iris.csv', 'week1/helper.py', 'week1/helper']);
  });

  it('preselects what exists, the notebook first, folders covering files', () => {
    const entry = (
      path: string,
      size: number,
      type: 'file' | 'directory' = 'file'
    ): IFileEntry => ({
      name: path.split('/').pop() as string,
      path,
      type,
      size,
      files: 1,
      excluded: false
    });
    const chosen = mergeSuggestions(
      'hw.ipynb',
      ['data/iris.csv', 'missing.csv', 'data'],
      ['helper.py', 'data/iris.csv', 'cache.pyc'],
      [
        entry('hw.ipynb', 100),
        entry('data/iris.csv', 8),
        entry('data', 8, 'directory'),
        entry('helper.py', 20),
        { ...entry('cache.pyc', 5), excluded: true }
      ]
    );
    expect(chosen.map(c => [c.path, c.why, c.size])).toEqual([
      ['hw.ipynb', 'notebook', 100],
      ['data', 'reads', 8],
      ['helper.py', 'template', 20]
    ]);
  });
});

describe('GPU figures', () => {
  const base: IResources = {
    cpu: { used_cores: 0.12, limit_cores: 1, percent: 12 },
    memory: { used_bytes: 0.5 * 1024 ** 3, limit_bytes: 1024 ** 3 },
    gpus: { available: false, message: '', devices: [] },
    requested: { cpu_milli: 1000, memory: 1024 ** 3, gpu_type: null, gpus: 0 }
  };

  it('shows a MIG slice by its memory, and an unreadable allocation by its type', () => {
    const mig: IResources = {
      ...base,
      gpus: {
        available: true,
        message: '1 GPU',
        devices: [
          {
            uuid: 'MIG-1',
            model: 'NVIDIA H200',
            mig_profile: '1g.18gb',
            utilization: null,
            memory_used: 1024 ** 3,
            memory_total: 16 * 1024 ** 3
          }
        ]
      }
    };
    expect(statusBarText(mig, trans)).toBe(
      'CPU 12% · Mem 0.5/1.0 GiB · GPU 1.0/16.0 GiB'
    );
    expect(gpuLines(mig, trans)).toEqual([
      'GPU 0 (NVIDIA H200, MIG 1g.18gb): use not measured per MIG slice, 1.0/16.0 GiB'
    ]);
    const unreadable: IResources = {
      ...base,
      gpus: {
        available: false,
        message: '1 GPU (h200-1g) allocated; no figures: NVML is missing',
        devices: [],
        allocated: {
          gpu_type: 'h200-1g',
          count: 1,
          devices: ['MIG-1'],
          mig: true
        }
      }
    };
    expect(statusBarText(unreadable, trans)).toBe(
      'CPU 12% · Mem 0.5/1.0 GiB · GPU h200-1g'
    );
    expect(gpuLines(unreadable, trans)[0]).toMatch(/allocated; no figures/);
    expect(statusBarText(base, trans)).toBe(
      'CPU 12% · Mem 0.5/1.0 GiB · no GPU'
    );
  });
});

describe('errors a person can act on', () => {
  it('never shows a body, only its message or a sentence', () => {
    expect(
      platformError({ message: 'read-only', code: 'read_only' })?.code
    ).toBe('read_only');
    expect(platformError('<html>502</html>')).toBeNull();
    expect(statusSentence(502, trans)).toMatch(
      /could not answer \(error 502\)/
    );
    expect(
      errorMessage(
        new ServerConnection.NetworkError(new TypeError('Failed to fetch')),
        trans
      )
    ).toMatch(/cannot be reached/);
    // No readable message in the answer: the status says it, translated.
    const bare = new ServerConnection.ResponseError(
      new Response('<html>502</html>', { status: 502 }),
      ''
    );
    expect(errorMessage(bare, trans)).toMatch(/could not answer \(error 502\)/);
  });
});
