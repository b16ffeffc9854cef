import { waitUntil } from './wait.js';

/**
 * Finds things inside an element's shadow root the way a user (or assistive technology) does:
 * by role and accessible name, by label, and by the `part` names the element documents. Tests
 * that go through it do not break when the elements' CSS classes change.
 */

/** The roles the elements use, with the elements that have them implicitly. */
const ROLES: Record<string, string> = {
  button: 'button, [role="button"]',
  heading: 'h1, h2, h3, h4, h5, h6, [role="heading"]',
  form: 'form[aria-label], form[aria-labelledby], [role="form"]',
  switch: '[role="switch"]',
  textbox: 'input:not([type="checkbox"], [type="radio"], [type="number"], [role], [list]), textarea, [role="textbox"]',
  spinbutton: 'input[type="number"], [role="spinbutton"]',
  combobox: 'select:not([multiple], [size]), [role="combobox"]',
  listbox: '[role="listbox"]',
  option: 'option, [role="option"]',
  status: '[role="status"]',
  alert: '[role="alert"]',
  img: 'img[alt]:not([alt=""]), [role="img"]',
};

type Scope = ShadowRoot | Element;

const rootOf = (host: HTMLElement): ShadowRoot => host.shadowRoot!;

// biome-ignore lint/performance/useDomNodeTextContent: what is rendered is the point (no hidden text).
const rendered = (element: Element) => ((element as HTMLElement).innerText ?? element.textContent ?? '').trim();

/** An element's accessible name, as far as these elements give one: aria-label(ledby), a label, or its text. */
/** A label's text without what it hides from assistive technology (a visual "required" mark). */
function shownToAssistiveTechnology(label: Element): string {
  const copy = label.cloneNode(true) as Element;
  for (const hidden of copy.querySelectorAll('[aria-hidden="true"]')) hidden.remove();
  return copy.textContent!.replace(/\s+/g, ' ').trim();
}

export function accessibleName(element: Element): string {
  const root = element.getRootNode() as ShadowRoot | Document;
  const label = element.getAttribute('aria-label');
  if (label) return label.trim();
  const labelledBy = element.getAttribute('aria-labelledby');
  if (labelledBy) {
    return labelledBy
      .split(/\s+/)
      .map((id) => root.getElementById(id)?.textContent?.trim() ?? '')
      .join(' ');
  }
  const id = element.id;
  const forLabel = id ? root.querySelector(`label[for="${id}"]`) : null;
  if (forLabel) return shownToAssistiveTechnology(forLabel);
  const wrapping = element.closest('label');
  if (wrapping && wrapping !== element) return shownToAssistiveTechnology(wrapping);
  return element.textContent!.replace(/\s+/g, ' ').trim();
}

const matches = (text: string, name: string | RegExp | undefined) =>
  name === undefined || (typeof name === 'string' ? text === name : name.test(text));

/** Every element in `scope` with `role` (and accessible name `name`, when given), in document order. */
export function allByRole<E extends Element = HTMLElement>(scope: Scope, role: string, name?: string | RegExp): E[] {
  return [...scope.querySelectorAll<E>(ROLES[role] ?? `[role="${role}"]`)].filter((e) =>
    matches(accessibleName(e), name),
  );
}

export const byRole = <E extends Element = HTMLElement>(scope: Scope, role: string, name?: string | RegExp) =>
  allByRole<E>(scope, role, name)[0] ?? null;

/** Every element in `scope` that has `part` among its parts. */
export const allByPart = <E extends Element = HTMLElement>(scope: Scope, part: string): E[] => [
  ...scope.querySelectorAll<E>(`[part~="${part}"]`),
];

export const byPart = <E extends Element = HTMLElement>(scope: Scope, part: string) =>
  allByPart<E>(scope, part)[0] ?? null;

/** The input labelled `label` in `scope`. */
export function byLabel(scope: Scope, label: string): HTMLInputElement | null {
  return (
    [...scope.querySelectorAll<HTMLInputElement>('input, select, textarea')].find(
      (input) => accessibleName(input) === label,
    ) ?? null
  );
}

/** The harness of one element: the finders above over its shadow root, and waits for them. */
export class Harness {
  constructor(readonly host: HTMLElement) {}

  get root(): ShadowRoot {
    return rootOf(this.host);
  }

  /** What the element shows, as a user reads it. */
  text(scope: Scope = this.root): string {
    const shown = scope instanceof ShadowRoot ? [...scope.children].map(rendered).join(' ') : rendered(scope);
    return shown.replace(/\s+/g, ' ').trim();
  }

  role<E extends Element = HTMLElement>(role: string, name?: string | RegExp, scope: Scope = this.root) {
    return byRole<E>(scope, role, name);
  }

  roles<E extends Element = HTMLElement>(role: string, name?: string | RegExp, scope: Scope = this.root) {
    return allByRole<E>(scope, role, name);
  }

  part<E extends Element = HTMLElement>(part: string, scope: Scope = this.root) {
    return byPart<E>(scope, part);
  }

  parts<E extends Element = HTMLElement>(part: string, scope: Scope = this.root) {
    return allByPart<E>(scope, part);
  }

  field(label: string, scope: Scope = this.root): HTMLInputElement {
    const input = byLabel(scope, label);
    if (!input) throw new Error(`No field labelled ${label}: ${this.text()}`);
    return input;
  }

  /** Waits (ten seconds at most) until `find` answers something; answers it. */
  async until<T>(find: () => T | null | undefined | false, what: string): Promise<T> {
    let found: T | null | undefined | false;
    await waitUntil(() => (found = find()), `${what} never showed; the element shows: ${this.text()}`);
    return found as T;
  }
}
