import { useRef, useState } from 'preact/hooks';

/** A plain API key shown once, with a button that copies it. */
export function ShownOnce({ label, secret }: { label: string; secret: string }) {
  const field = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<string>();
  const copy = async () => {
    field.current?.select();
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('Copied to the clipboard.');
    } catch {
      // Without HTTPS (other than on localhost) the clipboard API is closed: the key is selected instead.
      setCopied(document.execCommand('copy') ? 'Copied to the clipboard.' : 'Selected: press Ctrl+C (or ⌘C) to copy.');
    }
  };
  return (
    <div class="shown-once" role="region" aria-label={label}>
      <p>
        <strong>{label}.</strong> It is shown once: copy it now and give it to its holder.
      </p>
      <div class="copy-row">
        <input ref={field} type="text" readOnly value={secret} aria-label={label} class="mono" />
        <button type="button" class="primary" onClick={copy}>
          Copy
        </button>
      </div>
      {copied && <p role="status">{copied}</p>}
    </div>
  );
}
