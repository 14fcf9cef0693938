/**
 * "Copy to my home" of a live view in the Course panel: the button beside each
 * live view, the panel calling the controller (a fake here) for this very
 * notebook, its status sentence and the file browser opened on the copy.
 */
import { IBroadcast, IBroadcastCopied, ICourses } from '../apiTypes';
import { copiedText, courseSections } from '../course/format';
import { CoursePanel } from '../course/panel';
import { renderCourseSection } from '../course/section';
import { trans } from './trans';

const NOW = Date.parse('2026-03-10T12:00:00Z');

const live: IBroadcast = {
  id: 42,
  owner: 'prof',
  owner_display_name: 'Prof. Lee',
  notebook: 'lecture',
  url: '/notebook/prof/lecture/lab',
  expires_at: null,
  by: 'prof'
};

const courses: ICourses = {
  groups: [
    {
      name: 'ml-2026',
      display_name: 'ML 2026',
      folder: 'courses/ml-2026',
      deployments: [],
      broadcasts: [live],
      assignments: []
    }
  ]
};

const copied: IBroadcastCopied = {
  notebook: 'mine',
  folder: 'prof-lecture',
  copied: 2,
  skipped: 1,
  conflicts: [{ path: 'a.ipynb', saved_as: 'a (from prof).ipynb' }]
};

function panelWith(
  copy: (group: string, id: number) => Promise<IBroadcastCopied>
) {
  const openPath = jest.fn();
  const panel = new CoursePanel({
    trans,
    openPath,
    submit: jest.fn(),
    fetch: async () => courses,
    markSeen: async () => ({}),
    copyBroadcast: copy
  });
  const status = () =>
    panel.node.querySelector('[data-cgu="course-status"]')?.textContent;
  return { panel, openPath, status };
}

describe('Copy to my home', () => {
  it('puts a button beside each live view that names its course and view', () => {
    const copy = jest.fn();
    const [section] = courseSections(courses, NOW);
    const node = renderCourseSection(section, NOW, {
      openPath: jest.fn(),
      submit: jest.fn(),
      copyBroadcast: copy,
      origin: 'http://alice--lab.localhost',
      trans
    });
    const button = node.querySelector<HTMLButtonElement>(
      '[data-cgu="course-broadcast-copy"]'
    );
    expect(button?.textContent).toBe('Copy to my home');
    button?.click();
    expect(copy).toHaveBeenCalledWith('ml-2026', live);
  });

  it('has no button where the panel cannot copy', () => {
    const [section] = courseSections(courses, NOW);
    const node = renderCourseSection(section, NOW, {
      openPath: jest.fn(),
      submit: jest.fn(),
      origin: 'http://alice--lab.localhost',
      trans
    });
    expect(node.querySelector('[data-cgu="course-broadcast-copy"]')).toBeNull();
  });

  it('says what was copied and shows the folder', async () => {
    const copy = jest.fn(async () => copied);
    const { panel, openPath, status } = panelWith(copy);
    await panel.copyBroadcast('ml-2026', live);
    expect(copy).toHaveBeenCalledWith('ml-2026', 42);
    expect(status()).toBe(copiedText(copied, trans));
    expect(status()).toBe(
      'Copied 2 file(s) into prof-lecture/ (1 already there). 1 file(s) you had already were kept; the copies are beside them.'
    );
    expect(openPath).toHaveBeenCalledWith('prof-lecture');
    panel.dispose();
  });

  it("shows the controller's refusal and opens nothing", async () => {
    const copy = jest.fn(async () => {
      throw new Error('course ml-2026 shows no live view 42 now (it ended?)');
    });
    const { panel, openPath, status } = panelWith(copy);
    await panel.copyBroadcast('ml-2026', live);
    expect(status()).toBe(
      'course ml-2026 shows no live view 42 now (it ended?)'
    );
    expect(openPath).not.toHaveBeenCalled();
    panel.dispose();
  });
});
