import type { ComponentChildren } from 'preact';
import { hrefOf, type Route } from '../router.js';
import { canOf, type Session } from '../session.js';

/** The pages, each shown to a token with the scope it reads with. */
const LINKS: Array<{ href: string; label: string; pages: Route['page'][]; scope: string }> = [
  { href: hrefOf.overview, label: 'Overview', pages: ['overview'], scope: 'keys:read' },
  { href: hrefOf.accounts, label: 'Accounts', pages: ['accounts', 'account'], scope: 'accounts:read' },
  { href: hrefOf.keys, label: 'Keys', pages: ['keys', 'key'], scope: 'keys:read' },
  { href: hrefOf.documents, label: 'Documents', pages: ['documents'], scope: 'documents:read' },
  { href: hrefOf.search, label: 'Search', pages: ['search'], scope: 'documents:read' },
  { href: hrefOf.searchSettings, label: 'Search settings', pages: ['search-settings'], scope: 'documents:read' },
  { href: hrefOf.auditLog, label: 'Audit log', pages: ['audit-log'], scope: 'audit:read' },
];

interface LayoutProps {
  route: Route;
  session: Session;
  onSignOut: () => void;
  children: ComponentChildren;
}

/** Moves the focus to the page's content without following the link, whose hash the router would take for a page. */
function skipToMain(event: Event): void {
  event.preventDefault();
  document.getElementById('main')?.focus();
}

export function Layout({ route, session, onSignOut, children }: LayoutProps) {
  return (
    <>
      {/* biome-ignore lint/a11y/useValidAnchor: a skip link is a link; its default would change the hash route, so it moves the focus itself */}
      <a class="skip-link" href="#main" onClick={skipToMain}>
        Skip to the content
      </a>
      <header class="top">
        <span class="brand">metered-search</span>
        <nav aria-label="Console">
          <ul>
            {LINKS.filter((link) => canOf(session)(link.scope)).map((link) => (
              <li key={link.href}>
                <a href={link.href} aria-current={link.pages.includes(route.page) ? 'page' : undefined}>
                  {link.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span>
            {session.name}
            {session.readOnly && <span class="badge read-only">read-only</span>}
          </span>
          <button type="button" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
