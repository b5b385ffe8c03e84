import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { formatNumber } from '../format.js';

export interface ChartSeries {
  label: string;
  values: number[];
  color: string;
  /** Drawn dashed: a line that may lie on another stays visible. */
  dashed?: boolean;
}

interface ChartProps {
  title: string;
  /** Each bucket's first instant, in ms. */
  times: number[];
  series: ChartSeries[];
  bucket: 'hour' | 'day';
}

const HEIGHT = 240;

/** A time chart (uPlot on a canvas) with its figures in a table beside it, for screen readers and exact reading. */
export function TimeChart({ title, times, series, bucket }: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const plot = new uPlot(
      {
        width: element.clientWidth,
        height: HEIGHT,
        scales: { x: { time: true }, y: { range: (_plot, _min, max) => [0, Math.max(1, max * 1.1)] } },
        axes: [{}, { values: (_plot, ticks) => ticks.map((tick) => formatNumber(tick)) }],
        series: [
          { label: bucket === 'day' ? 'Day (UTC)' : 'Hour (UTC)' },
          ...series.map((entry) => ({
            label: entry.label,
            stroke: entry.color,
            fill: `${entry.color}22`,
            width: 2,
            ...(entry.dashed ? { dash: [6, 4] } : {}),
            points: { show: times.length <= 60 },
          })),
        ],
        tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'),
      },
      [times.map((time) => time / 1000), ...series.map((entry) => entry.values)],
      element,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: element.clientWidth, height: HEIGHT }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [times, series, bucket]);

  const totals = series.map((entry) => `${formatNumber(entry.values.reduce((sum, value) => sum + value, 0))} ${entry.label.toLowerCase()}`);
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} role="img" aria-label={`${title}: ${totals.join(', ')} in all.`} />
      <details>
        <summary>Show the figures</summary>
        <div class="table-scroll">
          <table>
            <caption class="visually-hidden">{title}</caption>
            <thead>
              <tr>
                <th scope="col">{bucket === 'day' ? 'Day (UTC)' : 'Hour (UTC)'}</th>
                {series.map((entry) => (
                  <th scope="col" key={entry.label} class="number">
                    {entry.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {times.map((time, index) => (
                <tr key={time}>
                  <td>
                    {new Date(time)
                      .toISOString()
                      .slice(0, bucket === 'day' ? 10 : 16)
                      .replace('T', ' ')}
                  </td>
                  {series.map((entry) => (
                    <td key={entry.label} class="number">
                      {formatNumber(entry.values[index] ?? 0)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
