import { cullingLabel, cullingPollSeconds, timeLeft } from '../culling/format';
import {
  absoluteShareUrl,
  countdownText,
  formatBytePair,
  formatBytes,
  formatCores,
  formatMilliCores,
  formatNumber,
  formatPercent,
  percentOf
} from '../format';
import { restartTarget } from '../platform/format';
import {
  accessNotice,
  blockedCommandMessage,
  fullNotice,
  noticeText,
  readOnlyKernelPreference,
  scopeText
} from '../readonly/format';
import {
  gpuLines,
  requestedText,
  statusBarText,
  statusBarTooltip
} from '../resources/format';
import {
  cpuQuantity,
  gpuQuotaLines,
  gpuTypeChoices,
  memoryQuantity,
  quotaAllowsGpuType,
  quotaLines,
  resizeFormFrom,
  resizeRequest,
  validateResize
} from '../resources/quota';
import {
  accessLabel,
  expiryChoices,
  expiryMinutes,
  granteeSuggestions,
  notebookStateLabel,
  scopeLabel,
  sharedText,
  sharePath,
  shouldSearch
} from '../share/format';
import { IDirectory, IQuota, IResources } from '../apiTypes';
import { IServerInfo } from '../tokens';
import { trans } from './trans';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

function resources(overrides: Partial<IResources> = {}): IResources {
  return {
    cpu: { used_cores: 0.12, limit_cores: 1, percent: 12 },
    memory: { used_bytes: 0.8 * GiB, limit_bytes: 2 * GiB },
    gpus: {
      available: true,
      message: '',
      devices: [
        {
          uuid: 'GPU-1',
          model: 'NVIDIA RTX A5000',
          utilization: 30,
          memory_used: 2 * GiB,
          memory_total: 24 * GiB
        }
      ]
    },
    requested: {
      cpu_milli: 1000,
      memory: 2 * GiB,
      gpu_type: 'premium',
      gpus: 1
    },
    ...overrides
  };
}

const noGpu: IResources['gpus'] = {
  available: false,
  message: 'no GPU on this notebook',
  devices: []
};

function quota(overrides: Partial<IQuota> = {}): IQuota {
  return {
    limits: {
      cpu_milli: 4000,
      memory: 8 * GiB,
      gpus: { premium: 1, standard: 2 },
      notebooks: 3
    },
    usage: {
      cpu_milli: 1000,
      memory: 2 * GiB,
      gpus: { premium: 1 },
      notebooks: 1
    },
    gpu_types: [
      { name: 'premium', display_name: 'Premium (whole A5000)', capacity: 4 },
      { name: 'standard', display_name: 'Standard (shared)', capacity: 8 },
      { name: 'half', display_name: 'Half', capacity: 2 }
    ],
    ...overrides
  };
}

function info(
  access: IServerInfo['access'],
  scope: string[] = []
): IServerInfo {
  return {
    version: '0.1.0',
    user: { name: 'bob', display_name: 'Bob' },
    notebook: { owner: 'alice', name: 'nb1' },
    access,
    scope,
    controller_url: '/'
  };
}

describe('byte, percent and core formatting', () => {
  it('formats bytes in binary units', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(800 * MiB)).toBe('800 MiB');
    expect(formatBytes(2 * GiB)).toBe('2.0 GiB');
    expect(formatBytes(Number.NaN)).toBe('–');
  });

  it('formats a used/limit pair in the unit of the larger one', () => {
    expect(formatBytePair(0.8 * GiB, 2 * GiB)).toBe('0.8/2.0 GiB');
    expect(formatBytePair(512 * MiB, GiB)).toBe('0.5/1.0 GiB');
    expect(formatBytePair(300 * MiB, 512 * MiB)).toBe('300/512 MiB');
    expect(formatBytePair(300 * MiB, null)).toBe('300 MiB');
  });

  it('rounds percentages and shows unknown ones as a dash', () => {
    expect(formatPercent(12.4)).toBe('12%');
    expect(formatPercent(99.6)).toBe('100%');
    expect(formatPercent(0)).toBe('0%');
    expect(formatPercent(null)).toBe('–');
    expect(formatPercent(undefined)).toBe('–');
  });

  it('says CPUs as people do', () => {
    expect(formatCores(1, trans)).toBe('1 CPU');
    expect(formatCores(0.5, trans)).toBe('0.5 CPU');
    expect(formatCores(4, trans)).toBe('4 CPUs');
    expect(formatCores(1.25, trans)).toBe('1.25 CPUs');
    expect(formatMilliCores(1500, trans)).toBe('1.5 CPUs');
    expect(formatNumber(0.12345)).toBe('0.12');
    expect(formatNumber(2)).toBe('2');
  });

  it('computes a clamped percentage of a limit', () => {
    expect(percentOf(1, 4)).toBe(25);
    expect(percentOf(5, 4)).toBe(100);
    expect(percentOf(1, null)).toBeNull();
    expect(percentOf(1, 0)).toBeNull();
  });
});

describe('status-bar text', () => {
  it('shows CPU, memory and GPU figures', () => {
    expect(statusBarText(resources(), trans)).toBe(
      'CPU 12% · Mem 0.8/2.0 GiB · GPU 30%'
    );
  });

  it('says "no GPU" when the notebook has none', () => {
    expect(statusBarText(resources({ gpus: noGpu }), trans)).toBe(
      'CPU 12% · Mem 0.8/2.0 GiB · no GPU'
    );
    // Available but no device reported is the same for the user.
    expect(
      statusBarText(
        resources({ gpus: { available: true, message: '', devices: [] } }),
        trans
      )
    ).toBe('CPU 12% · Mem 0.8/2.0 GiB · no GPU');
  });

  it('copes with null limits and a missing percentage', () => {
    const r = resources({
      cpu: { used_cores: 0.34, limit_cores: null, percent: null },
      memory: { used_bytes: 300 * MiB, limit_bytes: null },
      gpus: noGpu
    });
    expect(statusBarText(r, trans)).toBe(
      'CPU 0.3 cores · Mem 300 MiB · no GPU'
    );
  });

  it('computes the CPU percentage from the limit when the server gives none', () => {
    const r = resources({
      cpu: { used_cores: 0.5, limit_cores: 2, percent: null }
    });
    expect(statusBarText(r, trans)).toBe('CPU 25% · Mem 0.8/2.0 GiB · GPU 30%');
  });

  it('lists every GPU and an unknown utilisation', () => {
    const r = resources();
    r.gpus.devices.push({
      uuid: 'GPU-2',
      model: 'NVIDIA RTX A5000',
      utilization: null,
      memory_used: 0,
      memory_total: 24 * GiB
    });
    expect(statusBarText(r, trans)).toBe(
      'CPU 12% · Mem 0.8/2.0 GiB · GPUs 30%/–'
    );
  });

  it('explains the figures in the tooltip', () => {
    const tip = statusBarTooltip(resources(), trans).split('\n');
    expect(tip).toEqual([
      'CPU: 0.12 cores in use of 1 CPU (12%)',
      'Memory: 819 MiB in use of 2.0 GiB',
      'GPU 0 (NVIDIA RTX A5000): 30% busy, 2.0/24.0 GiB',
      'Click to open the Resources panel.'
    ]);
    const noLimits = statusBarTooltip(
      resources({
        cpu: { used_cores: 1, limit_cores: null, percent: null },
        memory: { used_bytes: GiB, limit_bytes: null },
        gpus: noGpu
      }),
      trans
    ).split('\n');
    expect(noLimits).toEqual([
      'CPU: 1 core in use (no limit)',
      'Memory: 1.0 GiB in use (no limit)',
      'no GPU on this notebook',
      'Click to open the Resources panel.'
    ]);
  });

  it('falls back to a default sentence when the server gives no GPU message', () => {
    expect(
      gpuLines(
        resources({ gpus: { available: false, message: '', devices: [] } }),
        trans
      )
    ).toEqual(['no GPU on this notebook']);
  });

  it('says what the notebook requested', () => {
    expect(requestedText(resources(), trans)).toBe(
      '1 CPU, 2.0 GiB memory, 1 × premium GPU'
    );
    expect(
      requestedText(
        resources({
          requested: {
            cpu_milli: 2500,
            memory: 512 * MiB,
            gpu_type: null,
            gpus: 0
          }
        }),
        trans
      )
    ).toBe('2.5 CPUs, 512 MiB memory, no GPU requested');
  });
});

describe('expiry choices', () => {
  it('maps each choice to minutes', () => {
    expect(expiryChoices(trans).map(c => c.label)).toEqual([
      'No end',
      '30 minutes',
      '1 hour',
      '2 hours',
      '1 day',
      '1 week'
    ]);
    expect(expiryMinutes('none', trans)).toBeNull();
    expect(expiryMinutes('30m', trans)).toBe(30);
    expect(expiryMinutes('1h', trans)).toBe(60);
    expect(expiryMinutes('2h', trans)).toBe(120);
    expect(expiryMinutes('1d', trans)).toBe(1440);
    expect(expiryMinutes('1w', trans)).toBe(10080);
  });

  it('refuses an unknown choice instead of sharing forever', () => {
    expect(() => expiryMinutes('forever', trans)).toThrow(/Unknown expiry/);
  });
});

describe('share links', () => {
  it('makes the url absolute with the origin', () => {
    expect(
      absoluteShareUrl(
        '/notebook/alice/nb1/lab/tree/hw1.ipynb',
        'https://lab.example.edu'
      )
    ).toBe('https://lab.example.edu/notebook/alice/nb1/lab/tree/hw1.ipynb');
    expect(absoluteShareUrl('notebook/a/b/lab', 'http://h:8000/')).toBe(
      'http://h:8000/notebook/a/b/lab'
    );
  });

  it('keeps an absolute url', () => {
    expect(absoluteShareUrl('https://other/x', 'https://lab')).toBe(
      'https://other/x'
    );
  });

  it('says what a share covers', () => {
    expect(scopeLabel('', trans)).toBe('whole notebook');
    expect(scopeLabel('week1/hw1.ipynb', trans)).toBe('week1/hw1.ipynb');
    expect(sharePath('file', 'hw1.ipynb')).toBe('hw1.ipynb');
    expect(sharePath('notebook', 'hw1.ipynb')).toBe('');
    expect(sharePath('file', null)).toBe('');
    expect(accessLabel('read', trans)).toBe('read-only');
    expect(accessLabel('edit', trans)).toBe('can edit');
  });

  it('says what was shared, with whom and until when', () => {
    expect(sharedText('hw1.ipynb', 'Bob Lee', 'read', null, 0, trans)).toBe(
      'Shared hw1.ipynb with Bob Lee (read-only, no end). Send them the link.'
    );
    expect(
      sharedText('', 'Class A', 'edit', '1970-01-01T01:00:00Z', 0, trans)
    ).toBe(
      'Shared the whole notebook with Class A (can edit, expires in 1 h). Send them the link.'
    );
  });
});

describe('countdown text', () => {
  const now = Date.parse('2025-01-01T12:00:00Z');
  const at = (seconds: number) => new Date(now + seconds * 1000).toISOString();

  it('handles shares without an end', () => {
    expect(countdownText(null, now, trans)).toBe('no end');
  });

  it('counts down in minutes, hours and days', () => {
    expect(countdownText(at(30), now, trans)).toBe(
      'expires in less than a minute'
    );
    expect(countdownText(at(29 * 60 + 59), now, trans)).toBe(
      'expires in 29 min'
    );
    expect(countdownText(at(3600), now, trans)).toBe('expires in 1 h');
    expect(countdownText(at(3900), now, trans)).toBe('expires in 1 h 5 min');
    expect(countdownText(at(86400), now, trans)).toBe('expires in 1 day');
    expect(countdownText(at(2 * 86400 + 3 * 3600), now, trans)).toBe(
      'expires in 2 days 3 h'
    );
  });

  it('says expired and unknown', () => {
    expect(countdownText(at(0), now, trans)).toBe('expired');
    expect(countdownText(at(-600), now, trans)).toBe('expired');
    expect(countdownText('not a date', now, trans)).toBe('unknown expiry');
  });
});

describe('grantee suggestions', () => {
  const directory: IDirectory = {
    users: [
      { name: 'alice', display_name: 'Alice Wu', role: 'teacher' },
      { name: 'bob', display_name: 'Bob Lee', role: 'student' },
      { name: 'carol', display_name: 'Carol Bo', role: '' }
    ],
    groups: [{ name: 'bio101', display_name: 'Biology 101' }]
  };

  it('searches from two characters', () => {
    expect(shouldSearch('b')).toBe(false);
    expect(shouldSearch(' b ')).toBe(false);
    expect(shouldSearch('bo')).toBe(true);
  });

  it('lists people then groups with readable labels, without myself', () => {
    const s = granteeSuggestions(directory, 'xx', [], 'alice', trans);
    expect(s.map(x => x.label)).toEqual([
      'Bob Lee (bob) · student',
      'Carol Bo (carol)',
      'Biology 101 · group'
    ]);
    expect(s[2]).toMatchObject({ kind: 'group', name: 'bio101' });
  });

  it('leaves out who is already chosen, by kind and name', () => {
    const s = granteeSuggestions(
      directory,
      'bo',
      [
        { kind: 'user', name: 'bob' },
        { kind: 'user', name: 'bio101' }
      ],
      null,
      trans
    );
    expect(s.map(x => `${x.kind}:${x.name}`)).toEqual([
      'user:alice',
      'user:carol',
      'group:bio101'
    ]);
  });

  it('puts names starting with the query first and limits the list', () => {
    const s = granteeSuggestions(directory, 'Bi', [], null, trans);
    expect(s[0].name).toBe('bio101');
    expect(
      granteeSuggestions(directory, 'bo', [], null, trans, 2)
    ).toHaveLength(2);
    expect(
      granteeSuggestions(directory, 'bo', [], null, trans).map(x => x.name)
    ).toEqual(['bob', 'alice', 'carol', 'bio101']);
  });

  it('copes with missing display names and lists', () => {
    const s = granteeSuggestions(
      { users: [{ name: 'dan', display_name: '', role: '' }] } as IDirectory,
      'da',
      [],
      null,
      trans
    );
    expect(s).toEqual([
      { kind: 'user', name: 'dan', display_name: 'dan', label: 'dan (dan)' }
    ]);
  });
});

describe('read-only and shared notices', () => {
  it('tells a read-only user what they cannot do', () => {
    expect(noticeText(info('read'), trans)).toBe(
      "You are viewing alice's notebook read-only: you can open and read " +
        'files, but not save, run cells or open terminals.'
    );
  });

  it('tells an editor whose notebook it is', () => {
    expect(noticeText(info('edit'), trans)).toBe(
      "You are editing alice's notebook, shared with you."
    );
  });

  it('shows nothing to the owner', () => {
    expect(noticeText(info('owner'), trans)).toBeNull();
    expect(fullNotice(info('owner'), trans)).toBeNull();
  });

  it('names someone when the notebook is unknown', () => {
    expect(accessNotice('edit', 'another user', trans)).toBe(
      "You are editing another user's notebook, shared with you."
    );
    expect(noticeText({ ...info('edit'), notebook: null }, trans)).toBe(
      "You are editing another user's notebook, shared with you."
    );
  });

  it('adds what a single-file share covers', () => {
    expect(scopeText([], trans)).toBeNull();
    expect(scopeText(undefined, trans)).toBeNull();
    expect(scopeText(['hw1.ipynb'], trans)).toBe(
      'Only hw1.ipynb is shared with you.'
    );
    expect(scopeText(['a.py', 'b.py'], trans)).toBe(
      'Only these files are shared with you: a.py, b.py.'
    );
    expect(fullNotice(info('edit', ['hw1.ipynb']), trans)).toBe(
      "You are editing alice's notebook, shared with you. " +
        'Only hw1.ipynb is shared with you.'
    );
  });

  it('explains the commands a read-only share cannot run', () => {
    expect(blockedCommandMessage('terminal:create-new', 'read', trans)).toBe(
      'This notebook is shared with you read-only: you cannot open terminals here.'
    );
    expect(blockedCommandMessage('docmanager:save', 'read', trans)).toMatch(
      /cannot save files/
    );
    expect(blockedCommandMessage('notebook:run-cell', 'read', trans)).toMatch(
      /cannot run cells/
    );
    expect(
      blockedCommandMessage('terminal:create-new', 'edit', trans)
    ).toBeNull();
    expect(
      blockedCommandMessage('terminal:create-new', 'owner', trans)
    ).toBeNull();
    expect(blockedCommandMessage('docmanager:open', 'read', trans)).toBeNull();
  });

  it('turns off every way a kernel could start or be joined, keeping the name', () => {
    const before = { name: 'python3', shouldReuse: true };
    const after = readOnlyKernelPreference(before);
    expect(after).toEqual({
      name: 'python3',
      shouldReuse: false,
      canStart: false,
      shouldStart: false,
      autoStartDefault: false
    });
    expect(before).toEqual({ name: 'python3', shouldReuse: true });
    expect(readOnlyKernelPreference(after)).toBe(after);
  });
});

describe('resize dialog', () => {
  it('writes quantities', () => {
    expect(cpuQuantity(2)).toBe('2');
    expect(cpuQuantity(0.5)).toBe('500m');
    expect(cpuQuantity(1.25)).toBe('1250m');
    expect(memoryQuantity(4)).toBe('4Gi');
    expect(memoryQuantity(0.5)).toBe('512Mi');
    expect(memoryQuantity(1.5)).toBe('1536Mi');
  });

  it('starts from what the notebook requested', () => {
    expect(resizeFormFrom(resources().requested)).toEqual({
      cpus: 1,
      memoryGiB: 2,
      gpuType: 'premium',
      gpus: 1
    });
    expect(
      resizeFormFrom({
        cpu_milli: 500,
        memory: 512 * MiB,
        gpu_type: null,
        gpus: 0
      })
    ).toEqual({ cpus: 0.5, memoryGiB: 0.5, gpuType: '', gpus: 0 });
  });

  it('validates the form with sentences a student can act on', () => {
    const ok = { cpus: 2, memoryGiB: 4, gpuType: '', gpus: 0 };
    expect(validateResize(ok, trans)).toBeNull();
    expect(validateResize({ ...ok, cpus: 0 }, trans)).toMatch(/CPUs above 0/);
    expect(validateResize({ ...ok, cpus: Number.NaN }, trans)).toMatch(/CPUs/);
    expect(validateResize({ ...ok, memoryGiB: -1 }, trans)).toMatch(/memory/);
    expect(
      validateResize({ ...ok, gpus: 1.5, gpuType: 'premium' }, trans)
    ).toMatch(/whole number of GPUs/);
    expect(validateResize({ ...ok, gpus: 1 }, trans)).toMatch(
      /Choose a GPU type/
    );
  });

  it('builds the request body', () => {
    expect(
      resizeRequest({ cpus: 0.5, memoryGiB: 2, gpuType: 'premium', gpus: 1 })
    ).toEqual({ cpu: '500m', memory: '2Gi', gpu_type: 'premium', gpus: 1 });
    expect(
      resizeRequest({ cpus: 2, memoryGiB: 4, gpuType: 'premium', gpus: 0 })
    ).toEqual({ cpu: '2', memory: '4Gi', gpu_type: null, gpus: 0 });
    expect(
      resizeRequest({ cpus: 2, memoryGiB: 4, gpuType: '', gpus: 3 })
    ).toEqual({ cpu: '2', memory: '4Gi', gpu_type: null, gpus: 0 });
  });

  it('shows the quota and current use', () => {
    expect(quotaLines(quota(), trans)).toEqual([
      'CPUs: 1 of 4 in use',
      'Memory: 2.0 GiB of 8.0 GiB in use',
      'GPUs (Premium (whole A5000)): 1 of 1 in use',
      'GPUs (Standard (shared)): 0 of 2 in use',
      'Notebooks: 1 of 3 in use'
    ]);
  });

  it('shows null limits as no limit', () => {
    const q = quota({
      limits: { cpu_milli: null, memory: null, gpus: null, notebooks: null }
    });
    expect(quotaLines(q, trans)).toEqual([
      'CPUs: 1 in use (no limit)',
      'Memory: 2.0 GiB in use (no limit)',
      'GPUs: any type, no limit; 1 Premium (whole A5000) in use',
      'Notebooks: 1 in use (no limit)'
    ]);
    expect(
      gpuQuotaLines(
        quota({
          limits: {
            cpu_milli: null,
            memory: null,
            gpus: null,
            notebooks: null
          },
          usage: { cpu_milli: 0, memory: 0, gpus: {}, notebooks: 0 }
        }),
        trans
      )
    ).toEqual(['GPUs: any type, no limit; none in use']);
  });

  it('says when the quota allows no GPU', () => {
    const q = quota({
      limits: { cpu_milli: 4000, memory: 8 * GiB, gpus: {}, notebooks: 3 }
    });
    expect(gpuQuotaLines(q, trans)).toEqual(['GPUs: your quota allows none']);
  });

  it('offers GPU types with capacity and marks those outside the quota', () => {
    const choices = gpuTypeChoices(quota(), trans);
    expect(choices).toEqual([
      { value: '', label: 'No GPU', allowed: true },
      {
        value: 'premium',
        label: 'Premium (whole A5000) (capacity 4)',
        allowed: true
      },
      {
        value: 'standard',
        label: 'Standard (shared) (capacity 8)',
        allowed: true
      },
      {
        value: 'half',
        label: 'Half (capacity 2) — not in your quota',
        allowed: false
      }
    ]);
    const unlimited = quota({
      limits: { cpu_milli: null, memory: null, gpus: null, notebooks: null }
    });
    expect(quotaAllowsGpuType(unlimited, 'half')).toBe(true);
    expect(quotaAllowsGpuType(quota(), 'half')).toBe(false);
    expect(
      quotaAllowsGpuType(
        quota({
          limits: { cpu_milli: 1, memory: 1, gpus: { half: 0 }, notebooks: 1 }
        }),
        'half'
      )
    ).toBe(false);
  });

  it('follows only http(s) restart pages', () => {
    const page = 'https://lab.example.edu/notebook/alice/nb1/lab';
    expect(restartTarget('/notebook/restart/alice/nb1', page)).toBe(
      'https://lab.example.edu/notebook/restart/alice/nb1'
    );
    expect(restartTarget('https://ctl.example.edu/r/1', page)).toBe(
      'https://ctl.example.edu/r/1'
    );
    expect(restartTarget('javascript:alert(1)', page)).toBeNull();
  });
});

describe('shared with me', () => {
  it('names notebook states', () => {
    expect(notebookStateLabel('running', trans)).toBe('running');
    expect(notebookStateLabel('starting', trans)).toBe('starting…');
    expect(notebookStateLabel('weird', trans)).toBe('weird');
  });
});

describe('idle countdown', () => {
  const base = {
    enabled: true,
    persistent: false,
    idle_minutes: 60,
    warn_minutes: 10,
    max_lifetime_hours: 12,
    last_activity: null,
    reason: 'idle for 52 minutes (limit 60)',
    message: 'This notebook will be stopped in 8 minutes…'
  };
  const now = Date.parse('2026-12-01T10:00:00Z');

  it('counts down to the stop while warned', () => {
    const status = {
      ...base,
      action: 'warn' as const,
      stop_at: '2026-12-01T10:04:07Z'
    };
    expect(cullingLabel(status, now, trans)).toBe('Idle: stops in 4:07');
    expect(timeLeft('2026-12-01T09:59:00Z', now)).toBe('0:00');
    expect(cullingPollSeconds(status)).toBe(5);
  });

  it('shows nothing when no stop is announced', () => {
    const status = {
      ...base,
      action: 'keep' as const,
      stop_at: '2026-12-01T11:00:00Z'
    };
    expect(cullingLabel(status, now, trans)).toBeNull();
    expect(
      cullingLabel({ ...status, action: 'warn', enabled: false }, now, trans)
    ).toBeNull();
    expect(cullingPollSeconds(status)).toBe(30);
    expect(cullingPollSeconds(null)).toBe(30);
  });

  it('asks again in time for a warning shorter than its poll', () => {
    // idle 18 s with a 9 s warning: the window opens at 9 s of idleness
    const short = { ...base, action: 'keep' as const, stop_at: null };
    const policy = { idle_minutes: 0.3, warn_minutes: 0.15 };
    expect(cullingPollSeconds({ ...short, ...policy, idle_seconds: 0 })).toBe(
      9
    );
    expect(cullingPollSeconds({ ...short, ...policy, idle_seconds: 7 })).toBe(
      5
    );
    expect(cullingPollSeconds({ ...short, ...policy, idle_seconds: 12 })).toBe(
      5
    );
    // far from it, working, exempt or persistent: the usual 30 s
    expect(cullingPollSeconds({ ...short, idle_seconds: 0 })).toBe(30);
    expect(
      cullingPollSeconds({ ...short, ...policy, idle_seconds: null })
    ).toBe(30);
    const exempt = { ...short, ...policy, idle_seconds: 7, exempt: 'staff' };
    expect(cullingPollSeconds(exempt)).toBe(30);
    const kept = { ...short, ...policy, idle_seconds: 7, persistent: true };
    expect(cullingPollSeconds(kept)).toBe(30);
  });
});
