import type { ReactiveController, ReactiveElement } from 'lit';
import type { ConfigModalStrings } from '../config-modal/strings.js';
import type { IntegrationListStrings } from '../integration-list/strings.js';
import type { WorkflowListStrings } from '../workflow-list/strings.js';
import type { Plural } from './plural.js';

/** Translations for one locale: any element's texts, any subset of them. */
export interface Translation {
  configModal?: Partial<ConfigModalStrings>;
  workflowList?: Partial<WorkflowListStrings>;
  integrationList?: Partial<IntegrationListStrings>;
}

const translations = new Map<string, Translation>();
/** Each element's texts, for what reports its failures (events.ts). */
const localizers = new WeakMap<object, { texts: object }>();

/** The texts `host` shows now, when it has any. */
export const textsOf = (host: object): object | undefined => localizers.get(host)?.texts;
/** Counts registrations, so an element knows its cached texts are out of date. */
let registrations = 0;
const localized = new Set<ReactiveElement>();
let observer: MutationObserver | undefined;

const updateAll = () => {
  for (const host of localized) host.requestUpdate();
};

/**
 * Registers texts for a locale (`de`, `pt-BR`: matched without regard to case), for every
 * element on the page: each shows the texts of the nearest `lang` around it, falling back from
 * `pt-BR` to `pt` to English. Registering again adds to (and overrides) what the locale had.
 * An element's own `strings` property still wins over these.
 */
export function registerStrings(locale: string, strings: Translation): void {
  const key = locale.toLowerCase();
  const known: Record<string, object> = { ...translations.get(key) };
  // Each element's texts are merged on their own, so a registration adds to the earlier ones.
  for (const [element, texts] of Object.entries(strings)) known[element] = { ...known[element], ...texts };
  translations.set(key, known);
  registrations++;
  updateAll();
}

/** The `lang` of the nearest element around `element` that has one, across shadow roots. */
function nearestLang(element: Element): string {
  let node: Element | null = element;
  while (node) {
    const marked: Element | null = node.closest('[lang]');
    if (marked) return (marked as HTMLElement).lang;
    const root = node.getRootNode() as ShadowRoot;
    node = root.host ?? null;
  }
  return '';
}

/**
 * An element's texts: English, then what `registerStrings` holds for the locale of the nearest
 * `lang` (the language alone, then the full locale), then the element's own `strings`. A change
 * of `<html lang>` or a registration re-renders the element.
 */
export class Localize<Key extends keyof Translation, Strings extends Required<Translation>[Key]>
  implements ReactiveController
{
  readonly #host: ReactiveElement & { strings: Partial<Strings> };
  readonly #key: Key;
  readonly #defaults: Strings;
  #cache?: { locale: string; own: Partial<Strings>; registrations: number; texts: Strings };
  /** The locale of the current update: looked up once per render, not once per text. */
  #locale?: string | undefined;

  constructor(host: ReactiveElement & { strings: Partial<Strings> }, key: Key, defaults: Strings) {
    this.#host = host;
    this.#key = key;
    this.#defaults = defaults;
    localizers.set(host, this);
    host.addController(this);
  }

  hostConnected(): void {
    localized.add(this.#host);
    if (!observer) {
      observer = new MutationObserver(updateAll);
      observer.observe(document.documentElement, { attributes: true, attributeFilter: ['lang'] });
    }
  }

  hostDisconnected(): void {
    localized.delete(this.#host);
  }

  hostUpdate(): void {
    this.#locale = undefined;
  }

  /** The locale the element speaks: the nearest `lang`, else English. */
  get locale(): string {
    this.#locale ??= nearestLang(this.#host) || 'en';
    return this.#locale;
  }

  /** The texts to show now. */
  get texts(): Strings {
    const { locale } = this;
    const own = this.#host.strings;
    const cache = this.#cache;
    if (cache?.locale === locale && cache.own === own && cache.registrations === registrations) return cache.texts;
    const lower = locale.toLowerCase();
    const registered = (tag: string) => translations.get(tag)?.[this.#key] as Partial<Strings> | undefined;
    const texts = { ...this.#defaults, ...registered(lower.split('-')[0]!), ...registered(lower), ...own };
    this.#cache = { locale, own, registrations, texts };
    return texts;
  }

  /** The form of `forms` for `count` in the element's locale, `#` replaced by the count. */
  readonly plural: Plural = (count, forms) => {
    const { locale } = this;
    // Made once per locale: a grid of 200 cards asks 200 times, and each Intl object costs more to make than to use.
    if (this.#counting?.[0] !== locale) {
      this.#counting = [locale, new Intl.PluralRules(locale), new Intl.NumberFormat(locale)];
    }
    const [, rules, numbers] = this.#counting;
    return (forms[rules.select(count)] ?? forms.other).replace(/#/g, numbers.format(count));
  };
  #counting?: [locale: string, rules: Intl.PluralRules, numbers: Intl.NumberFormat];
}
