/**
 * The out-of-memory notice: the count of kills the server extension reads is
 * compared answer to answer; a rise is told once, in JupyterLab's own
 * notifications, with the Resize action for the owner; the first answer is a
 * reference only.
 */
import { Notification } from '@jupyterlab/apputils';
import { IResources } from '../apiTypes';
import { ResourcesModel } from '../resources/model';
import {
  newKills,
  outOfMemoryText,
  watchOutOfMemory
} from '../resources/outOfMemory';
import { trans } from './trans';

const GIB = 1024 ** 3;

function answer(
  oomKills: number | null,
  limit: number | null = GIB
): IResources {
  return {
    cpu: { used_cores: 0.1, limit_cores: 1, percent: 10 },
    memory: { used_bytes: GIB / 2, limit_bytes: limit, oom_kills: oomKills },
    gpus: { available: false, message: '', devices: [] },
    requested: { cpu_milli: 1000, memory: GIB, gpu_type: null, gpus: 0 }
  };
}

function ours(): Notification.INotification[] {
  return Notification.manager.notifications.filter(n =>
    n.message.includes('memory limit')
  );
}

describe('counting kills', () => {
  it('counts a rise only, after a first reading', () => {
    expect(newKills(null, 3)).toBe(0); // the first answer is a reference
    expect(newKills(undefined, 3)).toBe(0);
    expect(newKills(3, 3)).toBe(0);
    expect(newKills(3, 5)).toBe(2);
    expect(newKills(3, null)).toBe(0); // unreadable now: nothing is claimed
    expect(newKills(5, 0)).toBe(0); // a new group (the notebook restarted)
  });

  it('says the limit, what was lost and what to do', () => {
    expect(outOfMemoryText(1, GIB, trans, true)).toBe(
      'This notebook reached its memory limit of 1.0 GiB and the system stopped a process in it, most likely the kernel that was running: its variables are lost. Work on less data at once, or resize the notebook.'
    );
    const two = outOfMemoryText(2, GIB, trans, false);
    expect(two).toContain('stopped 2 processes');
    expect(two).toContain('ask the notebook’s owner for more memory');
  });
});

describe('the watch', () => {
  beforeEach(() => Notification.dismiss());

  it('tells a kill once, with the Resize action for the owner', async () => {
    const counts = [0, 0, 1, 1];
    const model = new ResourcesModel({
      trans,
      fetch: async () => answer(counts.shift() ?? 1),
      interval: 3600
    });
    const resized: string[] = [];
    const stop = watchOutOfMemory({
      model,
      trans,
      notebooks: null,
      resize: () => resized.push('resize')
    });
    await model.refresh(); // 0: the reference
    await model.refresh(); // 0
    expect(ours()).toEqual([]);
    await model.refresh(); // 1: a kill
    expect(ours()).toHaveLength(1);
    const [notice] = ours();
    expect(notice.type).toBe('error');
    expect(notice.options.autoClose).toBe(false);
    expect(notice.options.actions?.map(a => a.label)).toEqual(['Resize…']);
    notice.options.actions![0].callback(new MouseEvent('click'));
    expect(resized).toEqual(['resize']);
    await model.refresh(); // still 1: not told again
    expect(ours()).toHaveLength(1);
    stop();
    model.dispose();
  });

  it('claims no kill without a ceiling to name', async () => {
    // (the server counts only in a group whose ceiling is the notebook's limit)
    const counts = [0, 1];
    const model = new ResourcesModel({
      trans,
      fetch: async () => answer(counts.shift() ?? 1, null),
      interval: 3600
    });
    const stop = watchOutOfMemory({
      model,
      trans,
      notebooks: null,
      resize: null
    });
    await model.refresh();
    await model.refresh();
    expect(Notification.manager.notifications).toEqual([]);
    stop();
    model.dispose();
  });

  it('offers no Resize to someone who may not resize', async () => {
    const counts = [2, 3];
    const model = new ResourcesModel({
      trans,
      fetch: async () => answer(counts.shift() ?? 3),
      interval: 3600
    });
    const stop = watchOutOfMemory({
      model,
      trans,
      notebooks: null,
      resize: null
    });
    await model.refresh();
    await model.refresh();
    const [notice] = ours();
    expect(notice.options.actions).toEqual([]);
    stop();
    model.dispose();
  });
});
