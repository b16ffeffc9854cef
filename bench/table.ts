/** A table row: metric, value, and optionally the budget or goal (or a note) and whether it holds. */
export type Row = [metric: string, value: string, goal?: string, holds?: boolean];

/** How a number reads in the table: `bytes(12000)` is "12,000 B", `ms(19.5)` is "19.5 ms". */
export type Unit = (n: number) => string;
export const bytes: Unit = (n) => `${n.toLocaleString('en')} B`;
export const ms: Unit = (n) => `${n} ms`;
export const perSecond: Unit = (n) => `${n.toLocaleString('en')}/s`;
export const count: Unit = (n) => n.toLocaleString('en');

/**
 * A row with a budget: it holds while `value` is at most `limit` (`under` for a strict bound,
 * `atLeast` for rates). `npm run bench` exits non-zero while any row's budget does not hold, so
 * adding a budget is one call in the rows run.ts prints, e.g.
 * `atMost('logsP99Ms', result.p99, 10, ms, 'pages 1–10, SQLite')`.
 */
export const atMost = (metric: string, value: number, limit: number, unit: Unit, note = ''): Row => [
  metric,
  unit(value),
  `≤ ${unit(limit)}${note && `; ${note}`}`,
  value <= limit,
];
export const under = (metric: string, value: number, limit: number, unit: Unit, note = ''): Row => [
  metric,
  unit(value),
  `< ${unit(limit)}${note && `; ${note}`}`,
  value < limit,
];
export const atLeast = (metric: string, value: number, limit: number, unit: Unit, note = ''): Row => [
  metric,
  unit(value),
  `≥ ${unit(limit)}${note && `; ${note}`}`,
  value >= limit,
];
/** A row without a budget: a number to read, with a note. */
export const info = (metric: string, value: number | string, unit: Unit = String, note = ''): Row => [
  metric,
  typeof value === 'number' ? unit(value) : value,
  note,
];

/** The rows whose budget does not hold. */
export const missed = (rows: Row[]): Row[] => rows.filter((row) => row[3] === false);

/** A plain-text table that reads well in a terminal and pastes into Markdown. */
export function table(rows: Row[]): string {
  const cells = [
    ['Metric', 'Value', 'Budget / goal / note', 'Holds'],
    ...rows.map(([metric, value, goal = '', holds]) => [
      metric,
      value,
      goal,
      holds === undefined ? '' : holds ? 'yes' : 'NO',
    ]),
  ];
  const widths = cells[0]!.map((_, column) => Math.max(...cells.map((row) => row[column]!.length)));
  const line = (row: string[]) => `| ${row.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`;
  return [line(cells[0]!), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.slice(1).map(line)].join(
    '\n',
  );
}
