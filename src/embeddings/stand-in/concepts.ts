/**
 * The stand-in embedder's table: each line is one concept, and every word on it maps to that
 * concept's axis. It knows nothing else: it shows the mechanics of semantic search (a query finds
 * documents sharing no word with it), not a model's quality.
 */
export const CONCEPTS: readonly string[] = [
  'car automobile vehicle motorcar truck',
  'privacy personal private confidential',
  'data information record records',
  'breach leak incident hack hacked intrusion',
  'security cybersecurity safeguard protection protect secure',
  'employee employer worker staff employment workforce labour labor job',
  'dismissal dismiss fire fired firing sacked termination terminate redundancy',
  'wage salary pay paid overtime remuneration earnings',
  'hours workweek schedule shift disconnect',
  'tax vat gst levy excise',
  'bribery bribe corruption kickback',
  'consumer customer shopper buyer purchaser',
  'refund withdrawal return cancel cancellation reimbursement',
  'child children kid kids minor minors youngster',
  'health medical patient hospital doctor clinic',
  'environment pollution emission emissions air climate sustainability sustainable',
  'slavery trafficking forced servitude',
  'spam unsolicited junk',
  'email mail message messages',
  'disability disabled impairment handicap',
  'contract agreement covenant',
  'competition noncompete compete competitor rival',
  'platform website online internet digital web',
  'erasure erase delete deletion forget forgotten',
  'chemical toxic carcinogen hazardous',
  'supply supplier suppliers vendor procurement',
  'financial accounting audit finance',
  'credit loan lending borrower debt',
  'copyright infringement piracy pirated',
  'artificial intelligence ai algorithm machine',
  'deceptive misleading fraud fraudulent unfair',
  'construction building builder contractor',
];

/** Words to their concept's axis. Words are lower-cased, with a final "s" dropped when the table lacks them with it. */
export const CONCEPT_OF: ReadonlyMap<string, number> = new Map(
  CONCEPTS.flatMap((line, axis) => line.split(' ').map((word) => [word, axis] as [string, number])),
);

export function conceptOf(word: string): number | undefined {
  const lower = word.toLowerCase();
  return CONCEPT_OF.get(lower) ?? (lower.endsWith('s') ? CONCEPT_OF.get(lower.slice(0, -1)) : undefined);
}
