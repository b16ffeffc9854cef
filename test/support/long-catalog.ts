import { executeServerCommand } from '@web/test-runner-commands';

const forge = <T>(action: string, args: Record<string, unknown> = {}) =>
  executeServerCommand<T, Record<string, unknown>>('forge', { action, ...args });

/** A new user of the long catalog's service, and how many workflows and apps it offers. */
export interface LongCatalog {
  apiBase: string;
  tokenProvider: () => Promise<string>;
  rows: number;
  apps: number;
}

/**
 * The long catalog's service (web-test-runner.config.mjs): a few hundred workflows over more than
 * a hundred apps, so the workflow list and the grid of apps render only what is near the viewport.
 */
export async function longCatalog(): Promise<LongCatalog> {
  const { userId, ...info } = await forge<Omit<LongCatalog, 'tokenProvider'> & { userId: string }>('longList');
  return { ...info, tokenProvider: () => forge<string>('longToken', { userId }) };
}

/** A row's or card's place in the whole list, as it tells assistive technology. */
export const placeOf = (item: Element) => Number(item.getAttribute('aria-posinset'));

/** Two frames later: a scroll or a focus has been seen and the window rendered what it needs. */
export const nextFrame = () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
