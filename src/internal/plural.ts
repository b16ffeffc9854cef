// The plural types stand alone: the elements' strings name them, and localize.ts names the
// strings (Translation), so keeping them in localize.ts would tie the two in a circle.

/** A text that depends on a count: a form per plural category of the locale (`other` always); `#` stands for the count. */
export type PluralForms = Partial<Record<Intl.LDMLPluralRule, string>> & { other: string };

/** Picks the form of `forms` that fits `count` in the element's locale. */
export type Plural = (count: number, forms: PluralForms) => string;
