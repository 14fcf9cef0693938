/**
 * What the clipboard feature needs to know of the browser around it: the
 * clipboard permission (where the browser tells), the tab's focus (browsers
 * lend the clipboard only to the tab in front), and what a refusal looks like.
 */

/** Leave the server this much of the kernel's wait to pass the answer on. */
export const SLACK_MS = 500;
export type PermissionStateOrUnknown = PermissionState | 'unknown';

/** What a request may take: its time, and whether the kernel stopped waiting. */
export interface IDeadline {
  ms: number;
  signal: AbortSignal;
}

export function isNotAllowed(error: unknown): boolean {
  return error instanceof DOMException && error.name === 'NotAllowedError';
}

/** The browser's clipboard permission, or 'unknown' where it will not say (Firefox). */
export async function permissionState(
  name: 'clipboard-read' | 'clipboard-write'
): Promise<PermissionStateOrUnknown> {
  try {
    const status = await navigator.permissions.query({
      name: name as PermissionName
    });
    return status.state;
  } catch {
    return 'unknown';
  }
}

/** The bytes that base64 text stands for. */
export function decodedSize(base64: string): number {
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return Math.max(0, (base64.length / 4) * 3 - padding);
}

/** Resolves true once the tab has the focus, false when the time is up first. */
export function focused(deadline: IDeadline): Promise<boolean> {
  if (document.hasFocus()) {
    return Promise.resolve(true);
  }
  return new Promise(resolve => {
    const done = (value: boolean) => {
      window.removeEventListener('focus', onFocus);
      deadline.signal.removeEventListener('abort', onAbort);
      clearTimeout(timer);
      resolve(value);
    };
    const onFocus = () => done(true);
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(false), deadline.ms - SLACK_MS);
    window.addEventListener('focus', onFocus);
    deadline.signal.addEventListener('abort', onAbort);
  });
}
