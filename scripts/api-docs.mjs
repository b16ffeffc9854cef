// Writes docs/elements.md, the reference of every attribute, property, method, event, slot, CSS
// custom property and part of the elements, from custom-elements.json (which the analyzer
// writes from the elements' JSDoc). `npm run build` runs it, so the page never drifts.
import { readFileSync, writeFileSync } from 'node:fs';

const manifest = JSON.parse(readFileSync('custom-elements.json', 'utf8'));

// The manifest has each event's name, description and type (`ForgeEvent<'forge-…'>`, from the
// `@event` tags); the detail that type carries is declared once, in events.ts (a named detail
// type such as `ErrorDetail` in errors.ts).
const source = (file) => readFileSync(`src/${file}`, 'utf8');
const detailsBlock = /interface ForgeEventDetails \{([\s\S]*?)\n\}/.exec(source('events.ts'))[1];
const namedType = (name) => {
  const body = new RegExp(`interface ${name} \\{([\\s\\S]*?)\\n\\}`).exec(source('errors.ts'))?.[1];
  if (!body) return name;
  const fields = body
    .replace(/\/\*\*[\s\S]*?\*\//g, '')
    .trim()
    .split(/;\s*/)
    .filter(Boolean);
  return `{ ${fields.join('; ')} }`;
};
const details = new Map(
  [...detailsBlock.matchAll(/^\s+'(forge-[\w-]+)': (.+);$/gm)].map(([, name, type]) => [
    name,
    type === 'Record<string, never>' ? undefined : /^\w+$/.test(type) ? namedType(type) : type,
  ]),
);
const eventDetail = (event) => {
  const name = /^ForgeEvent<'(forge-[\w-]+)'>$/.exec(event.type?.text ?? '')?.[1];
  if (!name) throw new Error(`The @event tag of ${event.name} gives no ForgeEvent<'…'> type; add one.`);
  return details.get(name);
};

const cell = (text) => (text ?? '').replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|') || '—';
const code = (text) => (text ? `\`${text.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|')}\`` : '—');
const table = (head, rows) =>
  rows.length === 0
    ? []
    : [
        `| ${head.join(' | ')} |`,
        `|${head.map(() => '---').join('|')}|`,
        ...rows.map((r) => `| ${r.join(' | ')} |`),
        '',
      ];

const elements = manifest.modules
  .flatMap((module) => module.declarations ?? [])
  .filter((declaration) => declaration.tagName)
  .sort((a, b) => a.tagName.localeCompare(b.tagName));

const out = [
  '# Elements reference',
  '',
  '<!-- Generated from custom-elements.json by scripts/api-docs.mjs (npm run build). Do not edit. -->',
  '',
  ...elements.map((e) => `- [\`<${e.tagName}>\`](#${e.tagName})`),
  '',
  'Every element also takes the shared configuration of the `ForgeElement` base class (`api-base`, `token-url`, `tokenProvider`), listed in each table.',
  '',
];

for (const element of elements) {
  // The analyzer marks some public members `privacy: "public"` and leaves others unmarked.
  const members = (element.members ?? []).filter(
    (m) => !m.static && (m.privacy ?? 'public') === 'public' && !m.name.startsWith('_'),
  );
  const fields = members.filter((m) => m.kind === 'field');
  const methods = members.filter((m) => m.kind === 'method');
  out.push(`## <a id="${element.tagName}"></a>\`<${element.tagName}>\``, '', element.description ?? '', '');
  out.push(`Class \`${element.name}\`.`, '');

  out.push('### Attributes and properties', '');
  out.push(
    ...table(
      ['Attribute', 'Property', 'Type', 'Default', 'Description'],
      fields.map((f) => [
        code(f.attribute),
        code(f.name),
        code(f.type?.text),
        code(f.default),
        cell(f.deprecated ? `${f.description} **Deprecated:** ${f.deprecated}` : f.description),
      ]),
    ),
  );
  if (methods.length) {
    out.push('### Methods', '');
    out.push(
      ...table(
        ['Method', 'Description'],
        methods.map((m) => {
          const params = (m.parameters ?? []).map((p) => `${p.name}${p.type ? `: ${p.type.text}` : ''}`).join(', ');
          return [code(`${m.name}(${params})${m.return?.type ? `: ${m.return.type.text}` : ''}`), cell(m.description)];
        }),
      ),
    );
  }
  out.push('### Events', '', 'Every event bubbles and is composed; `detail` has the type shown.', '');
  out.push(
    ...table(
      ['Event', 'Detail', 'Description'],
      (element.events ?? []).map((e) => [code(e.name), code(eventDetail(e)), cell(e.description)]),
    ),
  );
  if (element.slots?.length) {
    out.push('### Slots', '');
    out.push(
      ...table(
        ['Slot', 'Description'],
        element.slots.map((s) => [code(s.name || '(default)'), cell(s.description)]),
      ),
    );
  }
  out.push('### CSS custom properties', '');
  out.push(
    ...table(
      ['Property', 'Default', 'Description'],
      (element.cssProperties ?? []).map((p) => [code(p.name), code(p.default), cell(p.description)]),
    ),
  );
  out.push('### CSS parts', '', 'Style them from the page with `::part(name)`.', '');
  out.push(
    ...table(
      ['Part', 'Description'],
      (element.cssParts ?? []).map((p) => [code(p.name), cell(p.description)]),
    ),
  );
}

const reference = out.join('\n').trimEnd();
writeFileSync('docs/elements.md', `${reference}\n`);

// The README carries the same reference, one heading level down, between two markers.
const readme = readFileSync('README.md', 'utf8');
const start = '<!-- elements:start -->';
const end = '<!-- elements:end -->';
const from = readme.indexOf(start);
const to = readme.indexOf(end);
if (from !== -1 && to > from) {
  const body = reference
    .split('\n')
    .slice(4) // the page title and the generated-file note
    .map((line) => (line.startsWith('#') ? `#${line}` : line))
    .join('\n');
  writeFileSync('README.md', `${readme.slice(0, from + start.length)}\n${body}\n${readme.slice(to)}`);
}
