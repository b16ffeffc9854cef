/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: number[]): number {
  if (values.length === 0) throw new Error('median of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Nearest-rank percentile: the smallest value that at least `p` percent of the values do not exceed. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) throw new Error('percentile of no values');
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Rounds to one decimal place, enough for milliseconds measured on one machine. */
export const round1 = (value: number) => Math.round(value * 10) / 10;

/** Two decimal places, for ratios. */
export const round2 = (value: number) => Math.round(value * 100) / 100;
