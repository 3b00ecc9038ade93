"""The word search of `lookup`: BM25F over each rule's text, tolerant of typos and truncation.

`text_index(knowledge).search(text) -> dict[rule_id, TextHit]`. Fields and weights: title,
id, signature literals and example lines (the words people paste), summary, diagnosis, root
cause, reference titles, remediation. A query word matches a rule word exactly, through a
synonym (rules/formats/lookup.yaml), as a prefix (a truncated paste: "speculat"), or as a
near spelling (trigram candidates, then an edit ratio: "speculatve"). Standard library only:
for ~50 rules a trigram index and difflib are fast enough (see docs/lookup.md for figures).
"""

from __future__ import annotations

import hashlib
import math
import pickle
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import TYPE_CHECKING

from llamadiag import cache
from llamadiag.knowledge.files import FEATURE_FORMAT_FILES, builtin_rules_dir
from llamadiag.knowledge.formatcache import cached_format
from llamadiag.knowledge.loader import Knowledge
from llamadiag.ruletools.checked import CACHED_AS

if TYPE_CHECKING:  # the rules are light copies from the start-up cache
    from llamadiag.knowledge.rulemodel import Rule

WORD = re.compile(r"[a-z0-9]+(?:_[a-z0-9]+)*")
REGEX_SYNTAX = re.compile(r"\(\?P<\w+>|\(\?[:=!<>a-z]*|\\[dswDSWbBAZ]|\[[^\]]*\]|\{\d*,?\d*\}|[()*+?|^$]")
FIELDS = {  # field: weight
    "title": 3.0,
    "id": 2.0,
    "signature": 2.5,
    "summary": 2.0,
    "example": 1.0,
    "diagnosis": 1.0,
    "reference": 1.0,
    "root_cause": 0.7,
    "remedy": 0.5,
}
K1, B = 1.2, 0.75
HEADLINE = frozenset({"title", "id"})
HEADLINE_BOOST = 1.5  # a word in the title says more than the same word deep in a long rule
KEEP_WORDS = frozenset({"windows", "cuda", "metal", "rocm", "gguf", "jinja", "radeon", "status", "bus"})
FUZZY_MIN = 0.8
SYNONYM_WEIGHT = 0.6
PREFIX_WEIGHT = 0.75





def stem(word: str) -> str:
    """A light English stemmer: enough to meet 'images'/'image', 'failed'/'fails'/'fail'."""
    if word in KEEP_WORDS:
        return word
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 5 and word.endswith("ing"):
        return word[:-3]
    if len(word) > 4 and word.endswith("ed"):
        return word[:-2]
    if len(word) > 3 and word.endswith("es") and word[-3] in "sxz":
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def words(text: str, stop: frozenset[str] = frozenset()) -> list[str]:
    """Stemmed words; a snake_case identifier also gives its parts."""
    out: list[str] = []
    for w in WORD.findall(text.lower()):
        if w.isdigit() and len(w) > 3:
            continue  # sizes, positions, ids: noise for a word search
        parts = [w, *w.split("_")] if "_" in w else [w]
        out += [stem(p) for p in parts if len(p) > 1 and p not in stop]
    return out


def _trigrams(word: str) -> set[str]:
    padded = f" {word} "
    return {padded[i : i + 3] for i in range(len(padded) - 2)}


@dataclass
class TextHit:
    """A rule's word-search score and the query words it matched."""

    score: float
    matched: dict[str, tuple[str, str, set[str]]] = field(
        default_factory=dict
    )  # query word -> (rule word, how, fields)


class TextIndex:
    """BM25F index over the rules' text for the word search of `lookup`."""

    def __init__(self, knowledge: Knowledge) -> None:
        spec = cached_format("LookupWords")  # validated once, then from the start-up cache
        self.stop = frozenset(spec.stopwords)
        self.synonyms = {stem(k.lower()): [stem(v.lower()) for v in vs] for k, vs in spec.synonyms.items()}
        self.ids: list[str] = []
        self.tf: list[dict[str, float]] = []
        self.fields: list[dict[str, set[str]]] = []
        self.length: list[float] = []
        df: Counter[str] = Counter()
        for loaded in knowledge.rules:
            tf: dict[str, float] = defaultdict(float)
            where: dict[str, set[str]] = defaultdict(set)
            for name, text in _rule_fields(loaded.rule):
                for w in words(text, self.stop):
                    tf[w] += FIELDS[name]
                    where[w].add(name)
            self.ids.append(loaded.rule.id)
            self.tf.append(dict(tf))
            self.fields.append(dict(where))
            self.length.append(sum(tf.values()))
            df.update(tf.keys())
        n = max(1, len(self.ids))
        self.avg_length = sum(self.length) / n if self.length else 1.0
        self.idf = {w: math.log(1 + (n - c + 0.5) / (c + 0.5)) for w, c in df.items()}
        self.by_trigram: dict[str, set[str]] = defaultdict(set)
        for w in self.idf:
            if len(w) >= 4:
                for t in _trigrams(w):
                    self.by_trigram[t].add(w)

    def expand(self, word: str) -> list[tuple[str, float, str]]:
        """Rule words a query word stands for: (word, weight, how)."""
        out: list[tuple[str, float, str]] = []
        if word in self.idf:
            out.append((word, 1.0, "exact"))
        for syn in self.synonyms.get(word, []):
            if syn in self.idf and syn != word:
                out.append((syn, SYNONYM_WEIGHT, "synonym"))
        if out or len(word) < 4:  # a known word (or one with synonyms) is not a typo
            return out
        grams = _trigrams(word)
        counts: Counter[str] = Counter()
        for t in grams:
            counts.update(self.by_trigram.get(t, ()))
        for cand, shared in counts.most_common(40):
            if cand.startswith(word) and len(word) >= 5:
                out.append((cand, PREFIX_WEIGHT, "prefix"))
                continue
            if 2 * shared / (len(grams) + len(_trigrams(cand))) < 0.4:
                continue
            ratio = SequenceMatcher(None, word, cand).ratio()
            if ratio >= FUZZY_MIN:
                out.append((cand, ratio * ratio, "spelling"))
        return out

    def search(self, text: str) -> dict[str, TextHit]:
        """Rules whose text matches the query's words, with their scores."""
        query = list(dict.fromkeys(words(text, self.stop)))
        hits: dict[str, TextHit] = {}
        expansions = {q: self.expand(q) for q in query}
        asked = set(query)
        for i, rule_id in enumerate(self.ids):
            tf, norm = self.tf[i], K1 * (1 - B + B * self.length[i] / self.avg_length)
            total = 0.0
            matched: dict[str, tuple[str, str, set[str]]] = {}
            for q, options in expansions.items():
                best, best_opt = 0.0, None
                for w, weight, how in options:
                    f = tf.get(w)
                    if f and (how == "exact" or w not in asked):  # a synonym must not count a word twice
                        s = weight * self.idf[w] * f * (K1 + 1) / (f + norm)
                        if self.fields[i][w] & HEADLINE:
                            s *= HEADLINE_BOOST
                        if s > best:
                            best, best_opt = s, (w, how)
                if best_opt is not None:
                    total += best
                    matched[q] = (best_opt[0], best_opt[1], self.fields[i][best_opt[0]])
            if total > 0:
                hits[rule_id] = TextHit(total, matched)
        return hits


def _readable(pattern: str) -> str:
    return REGEX_SYNTAX.sub(" ", pattern).replace("\\", "")


def _rule_fields(rule: Rule) -> list[tuple[str, str]]:
    out = [("title", rule.title), ("id", rule.id.replace("-", " ")), ("summary", rule.summary)]
    out.append(("diagnosis", " ".join(filter(None, [rule.diagnosis, rule.diagnosis_fallback]))))
    out.append(("root_cause", rule.root_cause))
    for sig in rule.signatures:
        for entry in sig.entries:
            out.append(("signature", entry.literal or _readable(entry.regex)))
        if sig.diagnosis:
            out.append(("diagnosis", sig.diagnosis))
    for ex in rule.examples:
        if ex.expect != "none":  # negative examples are other rules' lines
            out.append(("example", ex.log))
    for ref in rule.references:
        out.append(("reference", " ".join(filter(None, [ref.title, ref.note]))))
    remedy = [s.text for s in rule.remediation] + [w.text for w in rule.workarounds]
    out.append(("remedy", " ".join(remedy)))
    return out


_CACHE: dict[int, tuple[Knowledge, TextIndex]] = {}


def text_index(knowledge: Knowledge) -> TextIndex:
    """The index for this knowledge, built once per process (the desk asks many times)."""
    hit = _CACHE.get(id(knowledge))
    if hit is None or hit[0] is not knowledge:
        hit = _CACHE[id(knowledge)] = (knowledge, _stored(knowledge))
    return hit[1]


def _stored(knowledge: Knowledge) -> TextIndex:
    """The index from the start-up cache when this knowledge came from there (building it is
    ~0.2 s of every `lookup`), keyed by the knowledge's own cache key (every knowledge file and
    module of llamadiag) and the word lists' file; built and stored otherwise."""
    cached_as = knowledge.derived.get(CACHED_AS)  # set on knowledge read from or written to the cache
    if not isinstance(cached_as, str):
        return TextIndex(knowledge)
    try:
        words_file = (builtin_rules_dir() / "formats" / FEATURE_FORMAT_FILES["LookupWords"]).read_bytes()
    except OSError:
        return TextIndex(knowledge)
    digest = hashlib.sha256(cached_as.encode() + b"\0" + words_file).hexdigest()[:24]
    name = f"lookup-{digest}.pickle"
    data = cache.read(name)
    if data is not None:
        try:
            found = pickle.loads(data)
            if isinstance(found, TextIndex):
                return found
        except Exception:  # stale or foreign: built afresh
            pass
    built = TextIndex(knowledge)
    cache.write(name, pickle.dumps(built, protocol=pickle.HIGHEST_PROTOCOL))
    return built
