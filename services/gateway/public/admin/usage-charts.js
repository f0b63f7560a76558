/* global document, window, getComputedStyle */
// The dashboard's usage charts: a usage report (GET /admin/api/usage) turned into one uPlot chart
// per meter, with a series per capability and model. Every bucket of the report is a point, an
// empty one drawn as zero. uPlot styles its elements through the DOM (element.style), which the
// page's Content-Security-Policy allows; nothing here writes markup.
import uPlot from './uplot.js';

const CHART_HEIGHT = 220;
const LIGHT = ['#2456c7', '#1f7a44', '#b3261e', '#8a5a00', '#7b3fc4', '#00838f', '#c2185b', '#4e5a6e'];
const DARK = ['#7ea6ff', '#5fcf8e', '#ff8a80', '#e6b450', '#c39bff', '#4dd0e1', '#f48fb1', '#b0bac9'];

const amountFormat = new Intl.NumberFormat(undefined, { maximumFractionDigits: 3 });
/** An amount as people read it: grouped digits, at most three decimals. */
export function amount(value) {
  return amountFormat.format(value);
}

/** A series' name: the capability, and the model where the usage has one. */
export function seriesLabel(capability, model) {
  return model ? `${capability} · ${model}` : capability;
}

/**
 * Per meter (in `meterOrder`, then any other in the order met), a series per capability and model
 * with a value for every bucket of the report (0 where it has none) and their totals.
 * → { times: bucket starts in seconds, meters: [{ meter, total, series: [{ label, capability,
 * model, values, total }] }] }
 */
export function usageSeries(report, meterOrder) {
  const buckets = report.data;
  const times = buckets.map((bucket) => Date.parse(bucket.start) / 1000);
  const meters = new Map();
  buckets.forEach((bucket, index) => {
    for (const result of bucket.results) {
      if (!meters.has(result.meter)) meters.set(result.meter, new Map());
      const series = meters.get(result.meter);
      const label = seriesLabel(result.capability, result.model);
      if (!series.has(label)) {
        series.set(label, {
          label,
          capability: result.capability,
          model: result.model,
          values: new Array(buckets.length).fill(0),
          total: 0,
        });
      }
      const one = series.get(label);
      one.values[index] += result.value;
      one.total += result.value;
    }
  });
  const rank = (meter) => {
    const at = meterOrder.indexOf(meter);
    return at === -1 ? meterOrder.length : at;
  };
  return {
    times,
    meters: [...meters.entries()]
      .sort(([a], [b]) => rank(a) - rank(b))
      .map(([meter, series]) => {
        const list = [...series.values()].sort((a, b) => a.label.localeCompare(b.label));
        return { meter, series: list, total: list.reduce((sum, s) => sum + s.total, 0) };
      }),
  };
}

function cssColour(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#888';
}

/** Room for the widest y-axis label, so big token counts are not cut. */
function axisWidth(_plot, values) {
  const longest = values ? Math.max(0, ...values.map((v) => String(v).length)) : 4;
  return Math.max(40, longest * 8 + 18);
}

const HOUR = 3600;
const DAY = 24 * HOUR;
/** Ticks on whole buckets only: hours for hourly buckets, days (then weeks) for daily ones. */
const tickSteps = {
  hour: [HOUR, 2 * HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY],
  day: [DAY, 2 * DAY, 7 * DAY, 14 * DAY, 28 * DAY],
};
const utc = (ts) => new Date(ts * 1000).toISOString();
/** A tick's label: the hour (the date at midnight) for hourly buckets, the date for daily ones. */
function tickLabel(bucket, ts) {
  const iso = utc(ts);
  if (bucket === 'hour' && iso.slice(11, 13) !== '00') return `${iso.slice(11, 13)}:00`;
  return iso.slice(5, 10);
}
/** A bucket as the legend shows it under the cursor. */
export function bucketLabel(bucket, ts) {
  const iso = utc(ts);
  return bucket === 'hour' ? `${iso.slice(0, 10)} ${iso.slice(11, 13)}:00 UTC` : `${iso.slice(0, 10)} UTC`;
}

/**
 * Draws `meter`'s chart ({ meter, series } from usageSeries) into `target`, an element already in
 * the page (uPlot measures it). Bucket times are shown in UTC, where their edges lie.
 * → the uPlot instance (destroy() it before dropping the element).
 */
export function drawUsageChart(target, times, meter, bucket) {
  const palette = window.matchMedia('(prefers-color-scheme: dark)').matches ? DARK : LIGHT;
  const ink = cssColour('--muted');
  const grid = cssColour('--line');
  const axis = { stroke: ink, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
  const options = {
    width: Math.max(320, target.clientWidth),
    height: CHART_HEIGHT,
    scales: { y: { range: (_plot, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
    axes: [
      {
        ...axis,
        space: 50,
        incrs: tickSteps[bucket],
        values: (_plot, splits) => splits.map((ts) => tickLabel(bucket, ts)),
      },
      { ...axis, size: axisWidth, values: (_plot, splits) => splits.map(amount) },
    ],
    series: [
      { label: 'bucket', value: (_plot, ts) => (ts == null ? '—' : bucketLabel(bucket, ts)) },
      ...meter.series.map((series, index) => ({
        label: series.label,
        stroke: palette[index % palette.length],
        width: 2,
        points: { show: true, size: 5 },
        value: (_plot, value) => (value == null ? '—' : amount(value)),
      })),
    ],
  };
  return new uPlot(options, [times, ...meter.series.map((series) => series.values)], target);
}
