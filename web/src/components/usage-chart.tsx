import { useMemo, useState } from 'preact/hooks';
import { perBucket, SPANS, spanQuery, type UsageRow } from '../usage.js';
import { TimeChart } from './chart.js';

const CREDITS_COLOR = '#b3470f';
const REQUESTS_COLOR = '#1f5fbf';

/** The span a usage chart shows, chosen from SPANS, with its buckets and the API query for it; `round` asks again up to now. */
export function useSpan(round = 0) {
  const [spanIndex, setSpanIndex] = useState(2);
  const span = SPANS[spanIndex] ?? SPANS[0];
  // A new round recomputes the buckets up to now.
  const { times, query } = useMemo(() => spanQuery(span), [span, round]);
  return { span, spanIndex, setSpanIndex, times, query };
}

export function SpanSelect({ value, onChange }: { value: number; onChange: (index: number) => void }) {
  return (
    <label class="inline">
      Span{' '}
      <select value={value} onChange={(event) => onChange(Number((event.target as HTMLSelectElement).value))}>
        {SPANS.map((option, index) => (
          <option key={option.label} value={index}>
            {option.label}
          </option>
        ))}
      </select>
    </label>
  );
}

/** Credits spent and requests charged per bucket, the requests dashed so that equal lines both show. */
export function UsageChart({ times, series, bucket }: { times: number[]; series: UsageRow[] | undefined; bucket: 'hour' | 'day' }) {
  const lines = useMemo(() => {
    const buckets = perBucket(times, series ?? []);
    return [
      { label: 'Credits spent', values: buckets.credits, color: CREDITS_COLOR },
      { label: 'Requests charged', values: buckets.requests, color: REQUESTS_COLOR, dashed: true },
    ];
  }, [times, series]);
  return <TimeChart title={`Credits spent and requests charged per ${bucket}`} times={times} series={lines} bucket={bucket} />;
}
