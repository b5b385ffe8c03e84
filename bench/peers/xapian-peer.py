"""Xapian for bench:peers: one JSON command a line on stdin, one JSON answer a line on stdout.

build {path, db, id, title, text}: indexes a JSON lines file (title words at twice the weight of
text words, English stemmer, no positions), answers {documents, seconds, bytes}.
time {queries, k, exact, passes}: each query's median time in ms over the passes, and its total
(exact: the whole match set counted; else Xapian's estimate), searched BM25 (k1 1.2, b 0.75);
a query ending in * is a wildcard.
rank {queries, k}: each query's top k document ids.
facets {queries, k, fields, passes}: each query's median time in ms for its top k and a
ValueCountMatchSpy per field over every match (the fields kept as values at build), and the counts.
"""
import json
import os
import sys
import time

import xapian

STOPWORDS = []
db = None
SLOTS = {}


def answer(value):
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()


def folder_bytes(path):
    return sum(os.path.getsize(os.path.join(root, name)) for root, _, names in os.walk(path) for name in names)


def build(command):
    global db
    started = time.perf_counter()
    writable = xapian.WritableDatabase(command["db"], xapian.DB_CREATE_OR_OVERWRITE)
    generator = xapian.TermGenerator()
    generator.set_stemmer(xapian.Stem("english"))
    generator.set_stemming_strategy(xapian.TermGenerator.STEM_SOME)
    count = 0
    SLOTS.clear()
    for slot, field in enumerate(command.get("facets") or []):
        SLOTS[field] = slot
    with open(command["path"], encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            document = xapian.Document()
            generator.set_document(document)
            generator.index_text_without_positions(record.get(command["title"]) or "", 2)
            generator.index_text_without_positions(record.get(command["text"]) or "")
            document.set_data(str(record[command["id"]]))
            for field, slot in SLOTS.items():
                if record.get(field) is not None:
                    document.add_value(slot, str(record[field]))
            writable.add_document(document)
            count += 1
    writable.commit()
    writable.close()
    seconds = time.perf_counter() - started
    db = xapian.Database(command["db"])
    answer({"documents": count, "seconds": seconds, "bytes": folder_bytes(command["db"])})


def enquire_for(text):
    parser = xapian.QueryParser()
    parser.set_stemmer(xapian.Stem("english"))
    parser.set_stemming_strategy(xapian.QueryParser.STEM_SOME)
    parser.set_default_op(xapian.Query.OP_OR)
    stopper = xapian.SimpleStopper()
    for word in STOPWORDS:
        stopper.add(word)
    parser.set_stopper(stopper)
    # A trailing * is Xapian's wildcard (every term beginning so, OR'd), as bench:features' prefixes ask.
    query = parser.parse_query(text, xapian.QueryParser.FLAG_WILDCARD if text.endswith("*") else 0)
    enquire = xapian.Enquire(db)
    enquire.set_weighting_scheme(xapian.BM25Weight(1.2, 0, 1, 0.75, 0.5))
    enquire.set_query(query)
    return enquire


def search(text, k, exact):
    enquire = enquire_for(text)
    everything = db.get_doccount() if exact else 0
    matches = enquire.get_mset(0, k, everything)
    return matches


def time_queries(command):
    k, exact, passes = command["k"], command["exact"], command["passes"]
    medians, totals = [], []
    for text in command["queries"]:
        search(text, k, exact)
        times = []
        total = 0
        for _ in range(passes):
            started = time.perf_counter()
            matches = search(text, k, exact)
            total = matches.get_matches_estimated()
            times.append((time.perf_counter() - started) * 1000)
        times.sort()
        medians.append(times[len(times) // 2])
        totals.append(total)
    answer({"ms": medians, "totals": totals})


def facet_counts(text, k, fields):
    enquire = enquire_for(text)
    spies = [(field, xapian.ValueCountMatchSpy(SLOTS[field])) for field in fields]
    for _, spy in spies:
        enquire.add_matchspy(spy)
    enquire.get_mset(0, k, db.get_doccount())
    return {field: {item.term.decode(): item.termfreq for item in spy.values()} for field, spy in spies}


def time_facets(command):
    k, fields, passes = command["k"], command["fields"], command["passes"]
    medians, counts = [], []
    for text in command["queries"]:
        facet_counts(text, k, fields)
        times = []
        counted = {}
        for _ in range(passes):
            started = time.perf_counter()
            counted = facet_counts(text, k, fields)
            times.append((time.perf_counter() - started) * 1000)
        times.sort()
        medians.append(times[len(times) // 2])
        counts.append(counted)
    answer({"ms": medians, "counts": counts})


def rank(command):
    answer({"ids": [[match.document.get_data().decode() for match in search(text, command["k"], False)] for text in command["queries"]]})


for line in sys.stdin:
    command = json.loads(line)
    if command["op"] == "stopwords":
        STOPWORDS = command["words"]
        answer({})
    elif command["op"] == "build":
        build(command)
    elif command["op"] == "time":
        time_queries(command)
    elif command["op"] == "rank":
        rank(command)
    elif command["op"] == "facets":
        time_facets(command)
