/** A table row: metric, value, and optionally the budget or goal (or a note) and whether it holds. */
export type Row = [metric: string, value: string, goal?: string, holds?: boolean];

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
