// @ts-check
// Small helpers shared by the course page's tabs.

/**
 * What course.js hands every tab: the course, the signed-in member, and `changed()`,
 * which runs every tab's `listeners` after the membership changed.
 * @typedef {{
 *   group: string, base: string, me: string, myRole: string, isAdmin: boolean,
 *   listeners: (() => unknown)[], changed(): void
 * }} CourseContext
 */

/** Show an informational line in the box `id` (a role=status paragraph), or hide it. */
export function info(id, text) {
  const box = document.getElementById(id);
  box.textContent = text ?? '';
  box.hidden = !text;
}

/** What a member is in the course, in words. */
export function roleInCourse(member) {
  if (member.manager) {
    return { teacher: 'Teacher', admin: 'Administrator, manages the course' }[member.role] ?? 'TA';
  }
  return member.role === 'student' ? 'Student' : `Member (${member.role})`;
}

/** One CSV field, quoted when it needs to be. */
export function csvField(value) {
  const text = String(value ?? '');
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** Offer `text` as a file download named `name`. */
export function download(name, text, type = 'text/csv') {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
