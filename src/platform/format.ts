/**
 * Pure helpers of the platform watch: where a restarting notebook comes back.
 */

/**
 * Where to send the browser after a resize: the `restart_url` resolved against
 * the page (it is usually a path on the platform's origin), only if it is an
 * http(s) URL; null otherwise (never a `javascript:` or `data:` URL).
 */
export function restartTarget(
  restartUrl: string,
  pageUrl: string
): string | null {
  let target: URL;
  try {
    target = new URL(restartUrl, pageUrl);
  } catch {
    return null;
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    return null;
  }
  return target.href;
}
