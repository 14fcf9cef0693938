/**
 * A tiny DOM builder for the small widgets that need no state (status items, notices,
 * lists); the stateful forms are React components. Also the clipboard helper.
 */
import { Clipboard } from '@jupyterlab/apputils';

/** Attributes of `h()`: strings become attributes, `on*` functions listeners. */
export type Attributes = {
  [name: string]:
    string | number | boolean | null | undefined | ((event: any) => void);
};

/** A child of `h()`: a node, a text, or nothing. */
export type Child = Node | string | null | undefined | false;

/**
 * Create an element: `h('button', {class: 'cgu-Button', onclick: f}, 'Share')`.
 * `true` sets an empty attribute, `false`/null/undefined leave it out.
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Array<Child | Child[]>
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (typeof value === 'function') {
      node.addEventListener(name.replace(/^on/, ''), value);
    } else if (value === true) {
      node.setAttribute(name, '');
    } else if (value !== false && value !== null && value !== undefined) {
      node.setAttribute(name, String(value));
    }
  }
  const flat: Child[] = [];
  for (const child of children) {
    if (Array.isArray(child)) {
      flat.push(...child);
    } else {
      flat.push(child);
    }
  }
  for (const child of flat) {
    if (child === null || child === undefined || child === false) {
      continue;
    }
    node.append(child);
  }
  return node;
}

/** Replace all children of a node. */
export function replaceChildren(node: Element, ...children: Child[]): void {
  node.replaceChildren(
    ...(children.filter(c => c !== null && c !== undefined && c !== false) as (
      Node | string
    )[])
  );
}

let counter = 0;

/** A unique element id for `<label for>` associations. */
export function uniqueId(prefix: string): string {
  counter += 1;
  return `${prefix}-${counter}`;
}

/**
 * Copy text: the asynchronous clipboard API when the page may use it,
 * JupyterLab's `execCommand` fallback otherwise. Resolves true when copied.
 */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // Refused (no permission, no focus): try the fallback.
  }
  try {
    Clipboard.copyToSystem(text);
    return true;
  } catch {
    return false;
  }
}
