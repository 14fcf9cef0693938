// @ts-check
// The course page: a course's managers run it in tabs (course_members.js,
// course_staff.js, course_work.js, course_live.js, course_help.js, class_sessions.js); its students get a
// read-only view (course_student.js). Both see the course's published demos (course_demos.js).
import { formsReady, holdForms, showStatus } from './common.js';

// The tabs' handlers come with their modules, loaded below: a form sent before then waits.
holdForms();

const root = /** @type {HTMLElement} */ (document.getElementById('course-page'));
const group = root.dataset.group ?? '';
/** @type {import('./course_util.js').CourseContext} */
const ctx = {
  group,
  base: `/api/groups/${encodeURIComponent(group)}`,
  me: root.dataset.me ?? '',
  myRole: root.dataset.myRole ?? '',
  isAdmin: root.dataset.admin === 'yes',
  listeners: [],
  /** Run every tab's reload after a change of the membership. */
  changed() {
    for (const listener of this.listeners) listener();
  }
};

/** @param {(tab: string | undefined) => void} onShow */
function setupTabs(onShow) {
  const tabs = [.../** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('.course-tabs [role="tab"]'))];
  /** @type {(tab: HTMLElement, focus?: boolean) => void} */
  const show = (tab, focus = false) => {
    for (const other of tabs) {
      const selected = other === tab;
      other.setAttribute('aria-selected', String(selected));
      other.tabIndex = selected ? 0 : -1;
      document.getElementById(other.getAttribute('aria-controls')).hidden = !selected;
    }
    if (focus) tab.focus();
    history.replaceState(null, '', `#${tab.dataset.tab}`);
    onShow(tab.dataset.tab);
  };
  tabs.forEach((tab, index) => {
    tab.addEventListener('click', () => show(tab));
    tab.addEventListener('keydown', event => {
      const step = /** @type {Record<string, number>} */ ({ ArrowRight: 1, ArrowLeft: -1 })[event.key];
      if (step) {
        event.preventDefault();
        show(tabs[(index + step + tabs.length) % tabs.length], true);
      } else if (event.key === 'Home' || event.key === 'End') {
        event.preventDefault();
        show(tabs[event.key === 'Home' ? 0 : tabs.length - 1], true);
      }
    });
  });
  const wanted = tabs.find(tab => `#${tab.dataset.tab}` === location.hash) ?? tabs[0];
  show(wanted);
}

try {
  (await import('./course_demos.js')).init(ctx);
  if (root.dataset.manage === 'yes') {
    const [members, staff, newTa, work, live, help, sessions] = await Promise.all([
      import('./course_members.js'),
      import('./course_staff.js'),
      import('./course_new_ta.js'),
      import('./course_work.js'),
      import('./course_live.js'),
      import('./course_help.js'),
      import('./class_sessions.js')
    ]);
    members.init(ctx);
    staff.init(ctx);
    newTa.init(ctx);
    work.init(ctx);
    const liveTab = live.init(ctx);
    const helpTab = help.init(ctx);
    const sessionsTab = sessions.initCourse(ctx);
    setupTabs(tab => {
      liveTab.visible(tab === 'live');
      helpTab.visible(tab === 'help');
      sessionsTab.visible(tab === 'sessions');
    });
  } else {
    (await import('./course_student.js')).init(ctx);
  }
} catch (error) {
  showStatus(error.message, 'error');
} finally {
  formsReady();
}
