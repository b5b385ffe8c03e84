// Generated from the service's OpenAPI document by scripts/client-types.ts. Do not edit:
// change the route schemas and run `npm run generate:client` (a test fails while the two differ).

/** 200 answer of GET /. */
export type RootResponse = {
  status: number;
  message: string;
};

/** 200 answer of GET /version. */
export type VersionResponse = {
  status: number;
  /** Semantic version. */
  version: string;
};

/** 200 answer of GET /profile. */
export type ProfileResponse = {
  status: number;
  message: string;
  user: {
    name: string;
    age: number;
  };
};

/** 200 answer of GET /nettest. */
export type NettestResponse = {
  status: number;
  /** Every configured dependency answered. */
  ok: boolean;
  latency_ms: {
    /** Milliseconds, or null when not configured or not answering. */
    database: number | null;
    /** Milliseconds, or null when not configured or not answering. */
    face_service: number | null;
  };
};

/** 200 answer of GET /credits. */
export type CreditsResponse = {
  status: number;
  message: string;
  /** Remaining credits; null when the key is not valid. */
  current_balance: number | null;
  /** Present only when some of the balance expires. Credits of the balance that expire, and when, soonest first (they are spent first). */
  expiring?: Array<{
    credits: number;
    at: string;
  }>;
};

/** 200 answer of GET /document. */
export type DocumentResponse = {
  status: number;
  statusCode: number;
  /** The document: doc_id, title, text and its metadata fields. */
  body: {
    doc_id: string;
    title: string;
    text: string;
    [field: string]: unknown;
  };
};

/** Body of POST /query. */
export type QueryRequest = {
  query: string | Record<string, never>;
  /** Up to 3 keys, each "<key>", "<key>:asc" or "<key>:desc": a metadata field, title, doc_id or _score (default order: _score descending). Ascending, numbers sort before strings (by code point), descending the reverse; documents lacking the field come last either way; an array sorts by its smallest element ascending, its largest descending; ties go to the next key, then the score, then doc_id. Over every match. Lexical only. */
  sort?: Array<string>;
  /** How many documents to return. */
  top_k?: number;
  /** The rank the page starts at; absent: 0, the best match. Past the last match the page is empty; total is unchanged. */
  offset?: number;
  /** Metadata fields whose values to count over every match (after filters), at most 10. */
  facets?: Array<string>;
  /** How many values to return per facet, the most common first; absent: 10. */
  facet_limit?: number;
  /** lexical (default): BM25 over the words. semantic: the documents whose embeddings are nearest the prompt's, by cosine, among the 100 nearest. hybrid: both rankings fused by reciprocal rank. semantic and hybrid need an embedding model (EMBEDDINGS_URL): without one they are a 400; when the model fails, or while the vector index is still being built after a start, semantic is a 503 and hybrid answers lexically with x-search-fallback: lexical. Nothing is charged for a refusal. */
  mode?: "lexical" | "semantic" | "hybrid";
  /** or (the default): a document holding any of the words matches; and: only a document holding every word (in title or text, or in the match clause's field). The ranking among the matches is the same BM25. */
  operator?: "or" | "and";
  /** Metadata fields each document carries in its "fields" (those it has); ["*"]: all of them. Free. */
  fields?: Array<string>;
  /** Each document gains "highlights": the title whole and the text as its best snippet (the window of about snippet_chars holding the most distinct matched words, cut at word boundaries and marked …), the words that matched after analysis wrapped in the tags, HTML-escaped around them. Named string metadata fields come whole. In semantic mode the snippet is the beginning of the text. Free, unless PRICES or the key's prices name /query:highlight: a lexical query asking for highlights then costs that. */
  highlight?: {
    /** title, text or string metadata fields; absent: title and text. */
    fields?: Array<string>;
    /** Before each matched word; absent: <mark>. */
    pre_tag?: string;
    /** After each matched word; absent: </mark>. */
    post_tag?: string;
    /** About how long the text snippet is; absent: 160. */
    snippet_chars?: number;
    /** false: the text comes raw, not HTML-escaped; absent: true. */
    escape?: boolean;
  } | boolean;
  /** How words forgive misspelling (Damerau-Levenshtein: a swap of neighbours is one edit). auto (the default): a word of 5 to 8 characters that no document holds matches the words one edit from it, of 9 or more two, so a correctly spelt query ranks as without it. 1 or 2: every word of at least 4 characters also matches the words that many edits from it, its own matches ranking above them. 0: exact words only. Words in phrases, prefixes and words with digits are matched exactly. The answer's "corrected" says which words matched what (stems, as the index holds them). */
  typos?: "auto" | 0 | 1 | 2;
  /** The language the query is analysed in (ISO 639-1, or none: no stemming, no stopwords), so that its words find the inflections of documents in that language ("Vertrag" finds "Verträgen" in German). Absent: SEARCH_LANGUAGE (en unless the operator set another). zh and ja split the text into words as the documents of those languages are. */
  language?: "da" | "de" | "en" | "es" | "fi" | "fr" | "hu" | "it" | "ja" | "nl" | "no" | "none" | "pt" | "ro" | "ru" | "sv" | "tr" | "zh";
  /** true: the last word of the text is a prefix too, as if it ended in * (search as you type). Absent: false. In the text, word* (at least 2 characters before the *) matches every word that begins with it after stemming (and, when stemming changes the prefix, with its stem: a word typed whole finds itself), ranked as the query of all those words. */
  prefix?: boolean;
  /** Metadata filters, all of which must hold: a field equals the scalar, or any of the list; lies within a range ({"gte": 2016, "lt": 2020}: numbers compare as numbers, strings by code point, so ISO-8601 dates work, and a value of another type does not match); or equals none of {"not": <scalar or list>} (a document lacking the field passes). An array field matches when any element does. */
  filters?: {
    [field: string]: string | number | boolean | null | Array<string | number | boolean | null> | {
      gt?: number | string;
      gte?: number | string;
      lt?: number | string;
      lte?: number | string;
    } | {
      not: string | number | boolean | null | Array<string | number | boolean | null>;
    };
  };
  [field: string]: unknown;
};

/** 200 answer of POST /query. */
export type QueryResponse = {
  status: number;
  resp: {
    statusCode: number;
    body: {
      hits: {
        /** Every match after filters, not only those returned (whatever the offset). lexical: the documents holding a query word. semantic: the documents among the 100 nearest the prompt that pass the filters and are similar at all (cosine > 0). hybrid: the union of both. */
        total: number;
        documents: Array<{
          doc_id: string;
          title: string;
          /** Non-increasing down the list. lexical: s / (s + 10) of the BM25 score s. semantic: the cosine similarity. hybrid: the fused score over the best possible (first in both rankings). */
          confidence: number;
          /** When "fields" was asked: the named metadata fields the document has. */
          fields?: {
            [field: string]: unknown;
          };
          /** When "highlight" was asked: per field (title, text, metadata), its text with the matched words tagged. */
          highlights?: {
            [field: string]: string;
          };
        }>;
      };
      /** When a word matched through a typo (see typos): per query word, the words it matched instead, as the index holds them (stems: "protect" for protection). */
      corrected?: {
        [field: string]: Array<string>;
      };
      /** When facets were asked: per field, its values and how many matches hold each, the most common first (ties by value); {} for a field no match has. */
      facets?: {
        [field: string]: {
          [field: string]: number;
        };
      };
    };
  };
};

/** Body of POST /face/search. */
export type FaceSearchRequest = {
  /** Base64 image (standard or URL-safe alphabet, padding optional). */
  image_b64?: string;
  /** Alias of image_b64. */
  image_base64?: string;
  /** Alias of image_b64. */
  probe_image_b64?: string;
  /** HTTPS URL of the image, fetched by the service before the debit; only public addresses are fetched. */
  probe_image_url?: string;
  /** At most this many matches. */
  top_k?: number;
  /** Minimum confidence of a returned match. */
  threshold?: number;
  [field: string]: unknown;
};

/** 200 answer of POST /face/search. */
export type FaceSearchResponse = {
  status: number;
  matches: Array<{
    doc_id?: string;
    confidence?: number;
    face_file?: string;
    attributes?: {
      [field: string]: unknown;
    };
    [field: string]: unknown;
  }>;
};

/** 200 answer of GET /usage. */
export type UsageResponse = {
  status: number;
  days: Array<{
    date: string;
    endpoint: string;
    count: number;
  }>;
};

/** Body of POST /admin/accounts. */
export type AdminCreateAccountRequest = {
  name: string;
  /** Your own id for this customer (your billing system's), unique among accounts. */
  external_id?: string;
  /** Your own data about the account: a JSON object of at most 4096 bytes. */
  metadata?: {
    [field: string]: unknown;
  } | null;
  /** The opening balance; absent: 0. */
  credits?: number;
  /** Over all the account's keys together. At most `credits` spent a UTC calendar day, ISO week or calendar month, one cap per interval. A billable request whose price would take a period over a cap is 429 (Retry-After: until the period ends), uncharged, and credits.cap_reached is sent once per cap and period. Decided in the debit itself, on every instance. null: no cap. */
  spend_caps?: Array<{
    credits: number;
    interval: "day" | "week" | "month";
  }> | null;
};

/** 201 answer of POST /admin/accounts. */
export type AdminCreateAccountResponse = {
  id: string;
  name: string;
  /** Your own id for this customer, unique among accounts; null: none. */
  external_id: string | null;
  /** Your own data about the account; null: none. */
  metadata: {
    [field: string]: unknown;
  } | null;
  /** What every key of the account spends from. */
  balance: number;
  created_at: string;
  /** The account's own credits per request, over PRICES; null: PRICES. */
  prices: {
    "/document"?: number;
    "/query"?: number;
    "/face/search"?: number;
    "/query:semantic"?: number;
    "/query:hybrid"?: number;
    "/query:highlight"?: number;
  } | null;
  /** The balance at or below which credits.low is sent; null: LOW_BALANCE_THRESHOLD. */
  low_balance_threshold: number | null;
  /** At most this many credits a UTC day, ISO week or calendar month over all its keys; null: no cap. */
  spend_caps: Array<{
    credits: number;
    interval: string;
  }> | null;
};

/** 200 answer of GET /admin/accounts. */
export type AdminListAccountsResponse = {
  accounts: Array<{
    id: string;
    name: string;
    /** Your own id for this customer, unique among accounts; null: none. */
    external_id: string | null;
    /** Your own data about the account; null: none. */
    metadata: {
      [field: string]: unknown;
    } | null;
    /** What every key of the account spends from. */
    balance: number;
    created_at: string;
    /** The account's own credits per request, over PRICES; null: PRICES. */
    prices: {
      "/document"?: number;
      "/query"?: number;
      "/face/search"?: number;
      "/query:semantic"?: number;
      "/query:hybrid"?: number;
      "/query:highlight"?: number;
    } | null;
    /** The balance at or below which credits.low is sent; null: LOW_BALANCE_THRESHOLD. */
    low_balance_threshold: number | null;
    /** At most this many credits a UTC day, ISO week or calendar month over all its keys; null: no cap. */
    spend_caps: Array<{
      credits: number;
      interval: string;
    }> | null;
  }>;
  next_cursor: string | null;
};

/** 200 answer of GET /admin/accounts/{id}. */
export type AdminGetAccountResponse = {
  id: string;
  name: string;
  /** Your own id for this customer, unique among accounts; null: none. */
  external_id: string | null;
  /** Your own data about the account; null: none. */
  metadata: {
    [field: string]: unknown;
  } | null;
  /** What every key of the account spends from. */
  balance: number;
  created_at: string;
  /** The account's own credits per request, over PRICES; null: PRICES. */
  prices: {
    "/document"?: number;
    "/query"?: number;
    "/face/search"?: number;
    "/query:semantic"?: number;
    "/query:hybrid"?: number;
    "/query:highlight"?: number;
  } | null;
  /** The balance at or below which credits.low is sent; null: LOW_BALANCE_THRESHOLD. */
  low_balance_threshold: number | null;
  /** At most this many credits a UTC day, ISO week or calendar month over all its keys; null: no cap. */
  spend_caps: Array<{
    credits: number;
    interval: string;
  }> | null;
  /** Oldest first. */
  keys: Array<{
    id: string;
    /** The account whose balance this key spends. */
    account_id: string;
    name: string;
    /** The account's balance, which all its keys share. */
    balance: number;
    status: "active" | "disabled" | "revoked";
    /** Requests per second; null for the service's default. */
    rate: number | null;
    created_at: string;
    /** The account's own credits per request, over PRICES; null: PRICES. */
    prices: {
      "/document"?: number;
      "/query"?: number;
      "/face/search"?: number;
      "/query:semantic"?: number;
      "/query:hybrid"?: number;
      "/query:highlight"?: number;
    } | null;
    /** The account's balance at or below which credits.low is sent; null: LOW_BALANCE_THRESHOLD. */
    low_balance_threshold: number | null;
    /** When the key stops working; null: never. */
    expires_at: string | null;
    /** Your own data about the key; null: none. */
    metadata: {
      [field: string]: unknown;
    } | null;
    /** At most this many credits a UTC day, ISO week or calendar month; null: no cap. */
    spend_caps: Array<{
      credits: number;
      interval: string;
    }> | null;
  }>;
  refill: {
    credits: number;
    interval: "day" | "week" | "month";
    mode: "add" | "replace";
    next_refill_at: string;
  } | null;
  /** Credits of the balance that expire, and when, soonest first (they are spent first). */
  expiring: Array<{
    credits: number;
    at: string;
  }>;
  /** Each spend cap's current period: what it has spent, and when it resets. Empty without caps. */
  cap_spend: Array<{
    credits: number;
    interval: "day" | "week" | "month";
    spent: number;
    resets_at: string;
  }>;
  /** Charges and credits spent by all the account's keys on each endpoint, ever. */
  totals_by_endpoint: {
    [field: string]: {
      charges: number;
      credits: number;
    };
  };
};

/** Body of PATCH /admin/accounts/{id}. */
export type AdminUpdateAccountRequest = {
  name?: string;
  /** Your own id for this customer (your billing system's), unique among accounts. */
  external_id?: string | null;
  /** Your own data about the key (your customer id, say): a JSON object of at most 4096 bytes, returned by the admin API and carried in the key's webhook events. null: none. */
  metadata?: {
    [field: string]: unknown;
  } | null;
  prices?: {
    "/document"?: number;
    "/query"?: number;
    "/face/search"?: number;
    "/query:semantic"?: number;
    "/query:hybrid"?: number;
    "/query:highlight"?: number;
  } | null;
  low_balance_threshold?: number | null;
  /** At most `credits` spent a UTC calendar day, ISO week or calendar month, one cap per interval. A billable request whose price would take a period over a cap is 429 (Retry-After: until the period ends), uncharged, and credits.cap_reached is sent once per cap and period. Decided in the debit itself, on every instance. null: no cap. */
  spend_caps?: Array<{
    credits: number;
    interval: "day" | "week" | "month";
  }> | null;
};

/** 200 answer of PATCH /admin/accounts/{id}. */
export type AdminUpdateAccountResponse = {
  id: string;
  name: string;
  /** Your own id for this customer, unique among accounts; null: none. */
  external_id: string | null;
  /** Your own data about the account; null: none. */
  metadata: {
    [field: string]: unknown;
  } | null;
  /** What every key of the account spends from. */
  balance: number;
  created_at: string;
  /** The account's own credits per request, over PRICES; null: PRICES. */
  prices: {
    "/document"?: number;
    "/query"?: number;
    "/face/search"?: number;
    "/query:semantic"?: number;
    "/query:hybrid"?: number;
    "/query:highlight"?: number;
  } | null;
  /** The balance at or below which credits.low is sent; null: LOW_BALANCE_THRESHOLD. */
  low_balance_threshold: number | null;
  /** At most this many credits a UTC day, ISO week or calendar month over all its keys; null: no cap. */
  spend_caps: Array<{
    credits: number;
    interval: string;
  }> | null;
};

/** Body of POST /admin/accounts/{id}/keys. */
export type AdminCreateAccountKeyRequest = {
  name?: string;
  /** Requests per second; null or absent for the service's default. */
  rate?: number | null;
  /** Granted to the account with the key; absent: 0. */
  credits?: number;
  /** When the key stops working (RFC 3339, later than now): after it every request with it is 403, like a disabled key, and key.expired is sent once. null: never. */
  expires_at?: string | null;
  /** At most `credits` spent a UTC calendar day, ISO week or calendar month, one cap per interval. A billable request whose price would take a period over a cap is 429 (Retry-After: until the period ends), uncharged, and credits.cap_reached is sent once per cap and period. Decided in the debit itself, on every instance. null: no cap. */
  spend_caps?: Array<{
    credits: number;
    interval: "day" | "week" | "month";
  }> | null;
  /** Your own data about the key (your customer id, say): a JSON object of at most 4096 bytes, returned by the admin API and carried in the key's webhook events. null: none. */
  metadata?: {
    [field: string]: unknown;
  } | null;
};

/** 201 answer of POST /admin/accounts/{id}/keys. */
export type AdminCreateAccountKeyResponse = {
  id: string;
  /** The account whose balance this key spends. */
  account_id: string;
  name: string;
  /** The account's balance, which all its keys share. */
  balance: number;
  status: "active" | "disabled" | "revoked";
  /** Requests per second; null for the service's default. */
  rate: number | null;
  created_at: string;
  /** The account's own credits per request, over PRICES; null: PRICES. */
  prices: {
    "/document"?: number;
    "/query"?: number;
    "/face/search"?: number;
    "/query:semantic"?: number;
    "/query:hybrid"?: number;
    "/query:highlight"?: number;
  } | null;
  /** The account's balance at or below which credits.low is sent; null: LOW_BALANCE_THRESHOLD. */
  low_balance_threshold: number | null;
  /** When the key stops working; null: never. */
  expires_at: string | null;
  /** Your own data about the key; null: none. */
  metadata: {
    [field: string]: unknown;
  } | null;
  /** At most this many credits a UTC day, ISO week or calendar month; null: no cap. */
  spend_caps: Array<{
    credits: number;
    interval: string;
  }> | null;
  /** The plain key: 64 hexadecimal characters, shown once. */
  key: string;
};

/** Body of POST /admin/accounts/{id}/topup. */
export type AdminTopUpAccountRequest = {
  credits: number;
  /** Your billing system's reference, kept in the audit log. */
  reference?: string;
  /** When what is left of these credits leaves the balance (RFC 3339, later than now); absent: never. Credits that expire soonest are spent first. */
  expires_at?: string;
};

/** 200 answer of POST /admin/accounts/{id}/topup. */
export type AdminTopUpAccountResponse = {
  id: string;
  balance: number;
};

/** Body of PUT /admin/accounts/{id}/refill. */
export type AdminSetAccountRefillRequest = {
  credits: number;
  interval: "day" | "week" | "month";
  /** Always stated: there is no default. */
  mode: "add" | "replace";
};

/** 200 answer of PUT /admin/accounts/{id}/refill. */
export type AdminSetAccountRefillResponse = {
  id: string;
  balance: number;
  refill: {
    credits: number;
    interval: "day" | "week" | "month";
    mode: "add" | "replace";
    next_refill_at: string;
  } | null;
  /** Credits this request granted: the plan's first period when it starts now, else 0. Less than the plan's credits when the balance had room for only that much under 10^12. */
  granted: number;
};

/** 200 answer of GET /admin/accounts/{id}/usage. */
export type AdminAccountUsageResponse = {
  series: Array<{
    start: string;
    endpoint: string;
    /** The HTTP status the charged requests ended with; null while not known. */
    status: number | null;
    count: number;
    /** The credits those charges took: their prices. */
    credits: number;
  }>;
  totals: {
    count: number;
    credits: number;
    by_endpoint: {
      [field: string]: number;
    };
  };
  by_key: Array<{
    key_id: string;
    endpoint: string;
    charges: number;
    credits: number;
  }>;
};

/** 200 answer of GET /admin/accounts/{id}/events. */
export type AdminAccountEventsResponse = {
  events: Array<{
    id: string;
    type: string;
    created_at: string;
    data: {
      [field: string]: unknown;
    };
  }>;
};

/** Body of POST /admin/keys. */
export type AdminCreateKeyRequest = {
  credits: number;
  name?: string;
  /** The account the key joins; absent: an account of its own. */
  account_id?: string;
  /** Requests per second; null or absent for the service's default. */
  rate?: number | null;
  /** When the key stops working (RFC 3339, later than now): after it every request with it is 403, like a disabled key, and key.expired is sent once. null: never. */
  expires_at?: string | null;
  /** At most `credits` spent a UTC calendar day, ISO week or calendar month, one cap per interval. A billable request whose price would take a period over a cap is 429 (Retry-After: until the period ends), uncharged, and credits.cap_reached is sent once per cap and period. Decided in the debit itself, on every instance. null: no cap. */
  spend_caps?: Array<{
    credits: number;
    interval: "day" | "week" | "month";
  }> | null;
  /** Your own data about the key (your customer id, say): a JSON object of at most 4096 bytes, returned by the admin API and carried in the key's webhook events. null: none. */
  metadata?: {
    [field: string]: unknown;
  } | null;
};

/** 201 answer of POST /admin/keys. */
export type AdminCreateKeyResponse = {
  id: string;
  /** The account whose balance this key spends. */
  account_id: string;
  name: string;
  /** The account's balance, which all its keys share. */
  balance: number;
  status: "active" | "disabled" | "revoked";
  /** Requests per second; null for the service's default. */
  rate: number | null;
  created_at: string;
  /** The account's own credits per request, over PRICES; null: PRICES. */
  prices: {
    "/document"?: number;
    "/query"?: number;
    "/face/search"?: number;
    "/query:semantic"?: number;
    "/query:hybrid"?: number;
    "/query:highlight"?: number;
  } | null;
  /** The account's balance at or below which credits.low is sent; null: LOW_BALANCE_THRESHOLD. */
  low_balance_threshold: number | null;
  /** When the key stops working; null: never. */
  expires_at: string | null;
  /** Your own data about the key; null: none. */
  metadata: {
    [field: string]: unknown;
  } | null;
  /** At most this many credits a UTC day, ISO week or calendar month; null: no cap. */
  spend_caps: Array<{
    credits: number;
    interval: string;
  }> | null;
  /** The plain key: 64 hexadecimal characters, shown once. */
  key: string;
};

/** 200 answer of GET /admin/keys. */
export type AdminListKeysResponse = {
  keys: Array<{
    id: string;
    /** The account whose balance this key spends. */
    account_id: string;
    name: string;
    /** The account's balance, which all its keys share. */
    balance: number;
    status: "active" | "disabled" | "revoked";
    /** Requests per second; null for the service's default. */
    rate: number | null;
    created_at: string;
    /** The account's own credits per request, over PRICES; null: PRICES. */
    prices: {
      "/document"?: number;
      "/query"?: number;
      "/face/search"?: number;
      "/query:semantic"?: number;
      "/query:hybrid"?: number;
      "/query:highlight"?: number;
    } | null;
    /** The account's balance at or below which credits.low is sent; null: LOW_BALANCE_THRESHOLD. */
    low_balance_threshold: number | null;
    /** When the key stops working; null: never. */
    expires_at: string | null;
    /** Your own data about the key; null: none. */
    metadata: {
      [field: string]: unknown;
    } | null;
    /** At most this many credits a UTC day, ISO week or calendar month; null: no cap. */
    spend_caps: Array<{
      credits: number;
      interval: string;
    }> | null;
  }>;
  next_cursor: string | null;
};

/** 200 answer of GET /admin/token. */
export type AdminCurrentTokenResponse = {
  id: string;
  name: string;
  read_only: boolean;
  scopes: Array<"accounts:read" | "accounts:write" | "keys:read" | "keys:write" | "credits:write" | "documents:read" | "documents:write" | "webhooks:read" | "webhooks:write" | "audit:read" | "metrics:read" | "portal:write">;
};

/** 200 answer of GET /admin/keys/{id}. */
export type AdminGetKeyResponse = {
  id: string;
  /** The account whose balance this key spends. */
  account_id: string;
  name: string;
  /** The account's balance, which all its keys share. */
  balance: number;
  status: "active" | "disabled" | "revoked";
  /** Requests per second; null for the service's default. */
  rate: number | null;
  created_at: string;
  /** The account's own credits per request, over PRICES; null: PRICES. */
  prices: {
    "/document"?: number;
    "/query"?: number;
    "/face/search"?: number;
    "/query:semantic"?: number;
    "/query:hybrid"?: number;
    "/query:highlight"?: number;
  } | null;
  /** The account's balance at or below which credits.low is sent; null: LOW_BALANCE_THRESHOLD. */
  low_balance_threshold: number | null;
  /** When the key stops working; null: never. */
  expires_at: string | null;
  /** Your own data about the key; null: none. */
  metadata: {
    [field: string]: unknown;
  } | null;
  /** At most this many credits a UTC day, ISO week or calendar month; null: no cap. */
  spend_caps: Array<{
    credits: number;
    interval: string;
  }> | null;
  last_used_at: string | null;
  charges_by_endpoint: {
    [field: string]: number;
  };
  /** The latest 50 grants, newest first. */
  grants: Array<{
    credits: number;
    reason: "create" | "topup" | "refill";
    at: string;
    expires_at: string | null;
  }>;
  refill: {
    credits: number;
    interval: "day" | "week" | "month";
    mode: "add" | "replace";
    next_refill_at: string;
  } | null;
  /** Credits of the balance that expire, and when, soonest first (they are spent first). */
  expiring: Array<{
    credits: number;
    at: string;
  }>;
  /** Each spend cap's current period: what it has spent, and when it resets. Empty without caps. */
  cap_spend: Array<{
    credits: number;
    interval: "day" | "week" | "month";
    spent: number;
    resets_at: string;
  }>;
};

/** 200 answer of GET /admin/keys/{id}/charges. */
export type AdminKeyChargesResponse = {
  charges: Array<{
    id: number;
    endpoint: string;
    at: string;
    /** The HTTP status the request ended with; null while not known. */
    status: number | null;
    credits: number;
  }>;
  next_cursor: string | null;
};

/** 200 answer of GET /admin/keys/{id}/events. */
export type AdminKeyEventsResponse = {
  events: Array<{
    id: string;
    type: string;
    created_at: string;
    data: {
      [field: string]: unknown;
    };
  }>;
};

/** Body of POST /admin/keys/{id}/topup. */
export type AdminTopUpKeyRequest = {
  credits: number;
  /** Your billing system's reference, kept in the audit log. */
  reference?: string;
  /** When what is left of these credits leaves the balance (RFC 3339, later than now); absent: never. Credits that expire soonest are spent first. */
  expires_at?: string;
};

/** 200 answer of POST /admin/keys/{id}/topup. */
export type AdminTopUpKeyResponse = {
  id: string;
  balance: number;
};

/** 200 answer of POST /admin/keys/{id}/disable. */
export type AdminKeyStatusResponse = {
  id: string;
  /** The account whose balance this key spends. */
  account_id: string;
  name: string;
  /** The account's balance, which all its keys share. */
  balance: number;
  status: "active" | "disabled" | "revoked";
  /** Requests per second; null for the service's default. */
  rate: number | null;
  created_at: string;
  /** The account's own credits per request, over PRICES; null: PRICES. */
  prices: {
    "/document"?: number;
    "/query"?: number;
    "/face/search"?: number;
    "/query:semantic"?: number;
    "/query:hybrid"?: number;
    "/query:highlight"?: number;
  } | null;
  /** The account's balance at or below which credits.low is sent; null: LOW_BALANCE_THRESHOLD. */
  low_balance_threshold: number | null;
  /** When the key stops working; null: never. */
  expires_at: string | null;
  /** Your own data about the key; null: none. */
  metadata: {
    [field: string]: unknown;
  } | null;
  /** At most this many credits a UTC day, ISO week or calendar month; null: no cap. */
  spend_caps: Array<{
    credits: number;
    interval: string;
  }> | null;
  changed: boolean;
};

/** Body of PUT /admin/keys/{id}/rate. */
export type AdminSetKeyRateRequest = {
  /** Requests per second; null for the service's default. */
  rate: number | null;
};

/** 200 answer of PUT /admin/keys/{id}/rate. */
export type AdminSetKeyRateResponse = {
  id: string;
  /** The account whose balance this key spends. */
  account_id: string;
  name: string;
  /** The account's balance, which all its keys share. */
  balance: number;
  status: "active" | "disabled" | "revoked";
  /** Requests per second; null for the service's default. */
  rate: number | null;
  created_at: string;
  /** The account's own credits per request, over PRICES; null: PRICES. */
  prices: {
    "/document"?: number;
    "/query"?: number;
    "/face/search"?: number;
    "/query:semantic"?: number;
    "/query:hybrid"?: number;
    "/query:highlight"?: number;
  } | null;
  /** The account's balance at or below which credits.low is sent; null: LOW_BALANCE_THRESHOLD. */
  low_balance_threshold: number | null;
  /** When the key stops working; null: never. */
  expires_at: string | null;
  /** Your own data about the key; null: none. */
  metadata: {
    [field: string]: unknown;
  } | null;
  /** At most this many credits a UTC day, ISO week or calendar month; null: no cap. */
  spend_caps: Array<{
    credits: number;
    interval: string;
  }> | null;
};

/** Body of POST /admin/keys/{id}/roll. */
export type AdminRollKeyRequest = {
  /** How long the former key keeps working, in seconds (0: it stops at once; at most a week). */
  grace_seconds: number;
};

/** 200 answer of POST /admin/keys/{id}/roll. */
export type AdminRollKeyResponse = {
  id: string;
  /** The account whose balance this key spends. */
  account_id: string;
  name: string;
  /** The account's balance, which all its keys share. */
  balance: number;
  status: "active" | "disabled" | "revoked";
  /** Requests per second; null for the service's default. */
  rate: number | null;
  created_at: string;
  /** The account's own credits per request, over PRICES; null: PRICES. */
  prices: {
    "/document"?: number;
    "/query"?: number;
    "/face/search"?: number;
    "/query:semantic"?: number;
    "/query:hybrid"?: number;
    "/query:highlight"?: number;
  } | null;
  /** The account's balance at or below which credits.low is sent; null: LOW_BALANCE_THRESHOLD. */
  low_balance_threshold: number | null;
  /** When the key stops working; null: never. */
  expires_at: string | null;
  /** Your own data about the key; null: none. */
  metadata: {
    [field: string]: unknown;
  } | null;
  /** At most this many credits a UTC day, ISO week or calendar month; null: no cap. */
  spend_caps: Array<{
    credits: number;
    interval: string;
  }> | null;
  /** The new plain key: 64 hexadecimal characters, shown once. */
  key: string;
  /** When the former key stops working; null: it already has. */
  old_key_valid_until: string | null;
};

/** Body of PATCH /admin/keys/{id}. */
export type AdminUpdateKeyRequest = {
  prices?: {
    "/document"?: number;
    "/query"?: number;
    "/face/search"?: number;
    "/query:semantic"?: number;
    "/query:hybrid"?: number;
    "/query:highlight"?: number;
  } | null;
  low_balance_threshold?: number | null;
  /** When the key stops working (RFC 3339, later than now): after it every request with it is 403, like a disabled key, and key.expired is sent once. null: never. */
  expires_at?: string | null;
  /** At most `credits` spent a UTC calendar day, ISO week or calendar month, one cap per interval. A billable request whose price would take a period over a cap is 429 (Retry-After: until the period ends), uncharged, and credits.cap_reached is sent once per cap and period. Decided in the debit itself, on every instance. null: no cap. */
  spend_caps?: Array<{
    credits: number;
    interval: "day" | "week" | "month";
  }> | null;
  /** Your own data about the key (your customer id, say): a JSON object of at most 4096 bytes, returned by the admin API and carried in the key's webhook events. null: none. */
  metadata?: {
    [field: string]: unknown;
  } | null;
};

/** 200 answer of PATCH /admin/keys/{id}. */
export type AdminUpdateKeyResponse = {
  id: string;
  /** The account whose balance this key spends. */
  account_id: string;
  name: string;
  /** The account's balance, which all its keys share. */
  balance: number;
  status: "active" | "disabled" | "revoked";
  /** Requests per second; null for the service's default. */
  rate: number | null;
  created_at: string;
  /** The account's own credits per request, over PRICES; null: PRICES. */
  prices: {
    "/document"?: number;
    "/query"?: number;
    "/face/search"?: number;
    "/query:semantic"?: number;
    "/query:hybrid"?: number;
    "/query:highlight"?: number;
  } | null;
  /** The account's balance at or below which credits.low is sent; null: LOW_BALANCE_THRESHOLD. */
  low_balance_threshold: number | null;
  /** When the key stops working; null: never. */
  expires_at: string | null;
  /** Your own data about the key; null: none. */
  metadata: {
    [field: string]: unknown;
  } | null;
  /** At most this many credits a UTC day, ISO week or calendar month; null: no cap. */
  spend_caps: Array<{
    credits: number;
    interval: string;
  }> | null;
};

/** Body of PUT /admin/keys/{id}/refill. */
export type AdminSetRefillRequest = {
  credits: number;
  interval: "day" | "week" | "month";
  /** Always stated: there is no default. */
  mode: "add" | "replace";
};

/** 200 answer of PUT /admin/keys/{id}/refill. */
export type AdminSetRefillResponse = {
  id: string;
  balance: number;
  refill: {
    credits: number;
    interval: "day" | "week" | "month";
    mode: "add" | "replace";
    next_refill_at: string;
  } | null;
  /** Credits this request granted: the plan's first period when it starts now, else 0. Less than the plan's credits when the balance had room for only that much under 10^12. */
  granted: number;
};

/** Body of POST /admin/webhooks. */
export type AdminCreateWebhookRequest = {
  /** http or https, without credentials. */
  url: string;
  /** The event types sent there; null or absent: all of them. */
  events?: Array<"credits.low" | "credits.depleted" | "credits.granted" | "credits.expired" | "credits.cap_reached" | "key.revoked" | "key.rolled" | "key.expired"> | null;
};

/** 201 answer of POST /admin/webhooks. */
export type AdminCreateWebhookResponse = {
  id: string;
  url: string;
  /** The event types sent there; null or absent: all of them. */
  events: Array<"credits.low" | "credits.depleted" | "credits.granted" | "credits.expired" | "credits.cap_reached" | "key.revoked" | "key.rolled" | "key.expired"> | null;
  created_at: string;
  /** whsec_ and base64: verify signatures with it. */
  secret: string;
};

/** 200 answer of GET /admin/webhooks. */
export type AdminListWebhooksResponse = {
  webhooks: Array<{
    id: string;
    url: string;
    /** The event types sent there; null or absent: all of them. */
    events: Array<"credits.low" | "credits.depleted" | "credits.granted" | "credits.expired" | "credits.cap_reached" | "key.revoked" | "key.rolled" | "key.expired"> | null;
    created_at: string;
  }>;
};

/** 200 answer of DELETE /admin/webhooks/{id}. */
export type AdminDeleteWebhookResponse = {
  deleted: string;
};

/** 200 answer of GET /admin/webhooks/deliveries. */
export type AdminListWebhookDeliveriesResponse = {
  deliveries: Array<{
    id: string;
    event_id: string;
    type: string;
    endpoint: {
      id: string;
      /** null once the endpoint is deleted. */
      url: string | null;
    };
    attempts: Array<{
      at: string;
      /** What the endpoint answered; null: no answer. */
      status: number | null;
      /** Why the attempt failed, starting with its kind: dns, refused, timeout, tls, connection, or the HTTP status answered. Absent on success. */
      error?: string;
    }>;
    state: "pending" | "delivered" | "failed";
    next_attempt_at: string | null;
    created_at: string;
  }>;
  next_cursor: string | null;
};

/** 200 answer of POST /admin/webhooks/deliveries/{id}/retry. */
export type AdminRetryWebhookDeliveryResponse = {
  id: string;
  state: "pending";
};

/** 200 answer of GET /admin/keys/{id}/usage. */
export type AdminKeyUsageResponse = {
  series: Array<{
    start: string;
    endpoint: string;
    /** The HTTP status the charged requests ended with; null while not known. */
    status: number | null;
    count: number;
    /** The credits those charges took: their prices. */
    credits: number;
  }>;
  totals: {
    count: number;
    credits: number;
    by_endpoint: {
      [field: string]: number;
    };
  };
};

/** 200 answer of GET /admin/usage. */
export type AdminUsageResponse = {
  series: Array<{
    start: string;
    endpoint: string;
    /** The HTTP status the charged requests ended with; null while not known. */
    status: number | null;
    count: number;
    /** The credits those charges took: their prices. */
    credits: number;
  }>;
  totals: {
    count: number;
    credits: number;
    by_endpoint: {
      [field: string]: number;
    };
  };
  top_keys: Array<{
    id: string;
    name: string;
    charges: number;
    /** Credits spent: the charges at their prices. The keys are ordered by it. */
    credits: number;
  }>;
};

/** 200 answer of GET /admin/audit-log. */
export type AdminAuditLogResponse = {
  entries: Array<{
    at: string;
    actor: string;
    action: string;
    target: string | null;
    request_id: string | null;
    detail: {
      [field: string]: unknown;
    };
  }>;
  next_cursor: string | null;
};

/** 200 answer of GET /admin/documents. */
export type AdminCountDocumentsResponse = {
  count: number;
};

/** Body of POST /admin/documents. */
export type AdminIngestDocumentsRequest = Array<{
  doc_id?: string | number;
  _id?: string | number;
  id?: string | number;
  title?: string;
  text?: string;
  [field: string]: unknown;
}>;

/** 200 answer of POST /admin/documents. */
export type AdminIngestDocumentsResponse = {
  ingested: number;
};

/** Body of POST /admin/search. */
export type AdminSearchRequest = {
  query: string | Record<string, never>;
  /** Up to 3 keys, each "<key>", "<key>:asc" or "<key>:desc": a metadata field, title, doc_id or _score (default order: _score descending). Ascending, numbers sort before strings (by code point), descending the reverse; documents lacking the field come last either way; an array sorts by its smallest element ascending, its largest descending; ties go to the next key, then the score, then doc_id. Over every match. Lexical only. */
  sort?: Array<string>;
  /** How many documents to return. */
  top_k?: number;
  /** The rank the page starts at; absent: 0, the best match. Past the last match the page is empty; total is unchanged. */
  offset?: number;
  /** Metadata fields whose values to count over every match (after filters), at most 10. */
  facets?: Array<string>;
  /** How many values to return per facet, the most common first; absent: 10. */
  facet_limit?: number;
  /** lexical (default): BM25 over the words. semantic: the documents whose embeddings are nearest the prompt's, by cosine, among the 100 nearest. hybrid: both rankings fused by reciprocal rank. semantic and hybrid need an embedding model (EMBEDDINGS_URL): without one they are a 400; when the model fails, or while the vector index is still being built after a start, semantic is a 503 and hybrid answers lexically with x-search-fallback: lexical. Nothing is charged for a refusal. */
  mode?: "lexical" | "semantic" | "hybrid";
  /** or (the default): a document holding any of the words matches; and: only a document holding every word (in title or text, or in the match clause's field). The ranking among the matches is the same BM25. */
  operator?: "or" | "and";
  /** Metadata fields each document carries in its "fields" (those it has); ["*"]: all of them. Free. */
  fields?: Array<string>;
  /** Each document gains "highlights": the title whole and the text as its best snippet (the window of about snippet_chars holding the most distinct matched words, cut at word boundaries and marked …), the words that matched after analysis wrapped in the tags, HTML-escaped around them. Named string metadata fields come whole. In semantic mode the snippet is the beginning of the text. Free, unless PRICES or the key's prices name /query:highlight: a lexical query asking for highlights then costs that. */
  highlight?: {
    /** title, text or string metadata fields; absent: title and text. */
    fields?: Array<string>;
    /** Before each matched word; absent: <mark>. */
    pre_tag?: string;
    /** After each matched word; absent: </mark>. */
    post_tag?: string;
    /** About how long the text snippet is; absent: 160. */
    snippet_chars?: number;
    /** false: the text comes raw, not HTML-escaped; absent: true. */
    escape?: boolean;
  } | boolean;
  /** How words forgive misspelling (Damerau-Levenshtein: a swap of neighbours is one edit). auto (the default): a word of 5 to 8 characters that no document holds matches the words one edit from it, of 9 or more two, so a correctly spelt query ranks as without it. 1 or 2: every word of at least 4 characters also matches the words that many edits from it, its own matches ranking above them. 0: exact words only. Words in phrases, prefixes and words with digits are matched exactly. The answer's "corrected" says which words matched what (stems, as the index holds them). */
  typos?: "auto" | 0 | 1 | 2;
  /** The language the query is analysed in (ISO 639-1, or none: no stemming, no stopwords), so that its words find the inflections of documents in that language ("Vertrag" finds "Verträgen" in German). Absent: SEARCH_LANGUAGE (en unless the operator set another). zh and ja split the text into words as the documents of those languages are. */
  language?: "da" | "de" | "en" | "es" | "fi" | "fr" | "hu" | "it" | "ja" | "nl" | "no" | "none" | "pt" | "ro" | "ru" | "sv" | "tr" | "zh";
  /** true: the last word of the text is a prefix too, as if it ended in * (search as you type). Absent: false. In the text, word* (at least 2 characters before the *) matches every word that begins with it after stemming (and, when stemming changes the prefix, with its stem: a word typed whole finds itself), ranked as the query of all those words. */
  prefix?: boolean;
  /** Metadata filters, all of which must hold: a field equals the scalar, or any of the list; lies within a range ({"gte": 2016, "lt": 2020}: numbers compare as numbers, strings by code point, so ISO-8601 dates work, and a value of another type does not match); or equals none of {"not": <scalar or list>} (a document lacking the field passes). An array field matches when any element does. */
  filters?: {
    [field: string]: string | number | boolean | null | Array<string | number | boolean | null> | {
      gt?: number | string;
      gte?: number | string;
      lt?: number | string;
      lte?: number | string;
    } | {
      not: string | number | boolean | null | Array<string | number | boolean | null>;
    };
  };
  [field: string]: unknown;
};

/** 200 answer of POST /admin/search. */
export type AdminSearchResponse = {
  hits: {
    /** Every match after filters, not only those returned (whatever the offset). lexical: the documents holding a query word. semantic: the documents among the 100 nearest the prompt that pass the filters and are similar at all (cosine > 0). hybrid: the union of both. */
    total: number;
    documents: Array<{
      doc_id: string;
      title: string;
      /** Non-increasing down the list. lexical: s / (s + 10) of the BM25 score s. semantic: the cosine similarity. hybrid: the fused score over the best possible (first in both rankings). */
      confidence: number;
      /** When "fields" was asked: the named metadata fields the document has. */
      fields?: {
        [field: string]: unknown;
      };
      /** When "highlight" was asked: per field (title, text, metadata), its text with the matched words tagged. */
      highlights?: {
        [field: string]: string;
      };
    }>;
  };
  /** When a word matched through a typo (see typos): per query word, the words it matched instead, as the index holds them (stems: "protect" for protection). */
  corrected?: {
    [field: string]: Array<string>;
  };
  /** When facets were asked: per field, its values and how many matches hold each, the most common first (ties by value); {} for a field no match has. */
  facets?: {
    [field: string]: {
      [field: string]: number;
    };
  };
};

/** 200 answer of GET /admin/synonyms. */
export type AdminGetSynonymsResponse = {
  synonyms: Array<{
    /** Members that all match each other. */
    words: Array<string>;
  } | {
    /** A word, or a phrase of at most 10 words. */
    from: string;
    /** What `from` matches too (not the other way). */
    to: Array<string>;
  }>;
  version: number;
  updated_at: string | null;
};

/** Body of PUT /admin/synonyms. */
export type AdminPutSynonymsRequest = {
  synonyms: Array<{
    /** Members that all match each other. */
    words: Array<string>;
  } | {
    /** A word, or a phrase of at most 10 words. */
    from: string;
    /** What `from` matches too (not the other way). */
    to: Array<string>;
  }>;
};

/** 200 answer of PUT /admin/synonyms. */
export type AdminPutSynonymsResponse = {
  synonyms: Array<{
    /** Members that all match each other. */
    words: Array<string>;
  } | {
    /** A word, or a phrase of at most 10 words. */
    from: string;
    /** What `from` matches too (not the other way). */
    to: Array<string>;
  }>;
  version: number;
  updated_at: string | null;
};

/** 200 answer of DELETE /admin/documents/{doc_id}. */
export type AdminDeleteDocumentResponse = {
  deleted: string;
};

/** Every error answer: status equals the HTTP status code. */
export type ErrorEnvelope = unknown;
