"""Identity rules: one paper, repository, task, method, dataset or author gets one IRI.

The rules (documented in docs/identity.md):

* papers: by Papers-with-Code slug; else by arXiv id without version; else by normalised
  title plus year;
* repositories: by normalised URL (host and owner/name lowercased, `.git`, trailing
  slashes and `/tree/<branch>/<path>` dropped; the path is kept on the code link);
* tasks, methods, datasets: by slug; from a bare name, by PwC's slug rule;
* authors: by normalised full name (see docs/identity.md for why).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import unquote, urlsplit

from kg.errors import UsageError
from kg.rdf.engine import iri_error
from kg.rdf.terms import is_absolute_iri, safe_iri, segment

_NON_ALNUM = re.compile(r"[^0-9a-z]+")
_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)
_ARXIV_NEW = re.compile(r"(\d{4}\.\d{4,5})(v\d+)?")
_ARXIV_OLD = re.compile(r"([a-z\-]+(?:\.[A-Z]{2})?/\d{7})(v\d+)?")
_ARXIV_URL = re.compile(r"arxiv\.org/(?:abs|pdf)/([^?#]+?)(?:\.pdf)?/?(?:[?#].*)?$", re.IGNORECASE)


@lru_cache(maxsize=8192)  # a paper's methods and tasks: names that recur across papers
def pwc_slug(name: str) -> str:
    """PwC's slug rule: lowercase, and every run of characters that are not ASCII letters or
    digits becomes one '-' (none at either end).

    Accents are folded first (NFKD, combining marks dropped: "Pokémon" is `pokemon`), as
    PwC's own slugs are ASCII and keep the letter rather than split the word; any other
    character, ASCII or not ("’", "–", "×", "ß"), is a separator like a space.

    >>> pwc_slug("Multi-Head Attention")
    'multi-head-attention'
    >>> pwc_slug("  BERT (large) ")
    'bert-large'
    >>> pwc_slug("THUMOS’14"), pwc_slug("THUMOS'14")
    ('thumos-14', 'thumos-14')
    >>> pwc_slug("Drug–drug interaction extraction"), pwc_slug("Dayton (256×256)")
    ('drug-drug-interaction-extraction', 'dayton-256-256')
    """
    lower = name.lower()
    if lower.isascii():  # NFKD leaves ASCII as it is, and it has no combining marks
        return _NON_ALNUM.sub("-", lower).strip("-")
    decomposed = unicodedata.normalize("NFKD", lower)
    folded = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _NON_ALNUM.sub("-", folded).strip("-")


def clean_name(name: str) -> str:
    """A name as an identity sees it: trimmed, inner whitespace runs made one space.

    >>> clean_name(" FB15k"), clean_name("Speed  (FPS)")
    ('FB15k', 'Speed (FPS)')
    """
    return " ".join(name.split())


#: Abbreviations other sources use for Papers with Code's research areas (the sota-extractor
#: leaderboards file tasks under "NLP"), by slug: the area's own name.
AREA_ABBREVIATIONS = {
    "nlp": "Natural Language Processing",
    "cv": "Computer Vision",
    "rl": "Reinforcement Learning",
}


def name_key(name: str) -> str:
    """A person's name as an identity key: NFKC, casefolded, word runs joined by '-'.

    Unlike `pwc_slug` it keeps non-Latin letters, so 李 and 王 stay distinct.

    >>> name_key("Goro  Kobayashi")
    'goro-kobayashi'
    >>> name_key("Zoë Ábel")
    'zoë-ábel'
    """
    return _NON_WORD.sub("-", unicodedata.normalize("NFKC", name).casefold()).strip("-")


#: Words that tell one part or setting of a dataset from another: a name with one of them
#: more is another dataset ("CIFAR-10" and "CIFAR-10 Test"), not another name of the same.
_SETTING_WORDS = frozenset({
    "test", "val", "validation", "train", "training", "dev", "full", "small", "large", "mini",
    "tiny", "shot", "labels", "labeled", "subset", "split", "clean", "noisy", "hard", "easy",
    "medium", "extended", "sequential", "permuted", "imbalanced", "conditional", "unsupervised",
    "supervised", "leaderboard", "corrupted", "augmented",
})  # fmt: skip
_GENERIC_WORDS = frozenset({"dataset", "the"})


def _name_words(name: str) -> list[str]:
    words = _NON_WORD.sub(" ", unicodedata.normalize("NFKC", name).casefold()).split()
    return [w for w in words if w not in _GENERIC_WORDS]


def possibly_same_dataset(a: str, b: str) -> bool:
    """Whether two dataset names may name one dataset (kg does not merge them; suggestions
    offer neither to a paper that has the other): the same words in the same order, or the
    same words and one more word in front, a name (letters, no setting such as "test" or
    "sequential"), where they share a number and another word ("Oxford 102 Flowers" and
    "Flowers-102"). Word order counts otherwise: "WMT2014 English-German" is not
    "WMT2014 German-English".

    >>> possibly_same_dataset("Oxford 102 Flowers", "Flowers-102")
    True
    >>> possibly_same_dataset("Freiburg Forest", "Freiburg Forest Dataset")
    True
    >>> same = possibly_same_dataset
    >>> same("CIFAR-10", "CIFAR-100"), same("CIFAR-10", "CIFAR-10 Test")
    (False, False)
    >>> same("Flowers-102", "Flowers-102 - 0-Shot"), same("COCO", "MS COCO")
    (False, False)
    >>> same("WMT2014 English-German", "WMT2014 German-English")
    False
    >>> same("CIFAR-10", "Sequential CIFAR-10")
    False
    """
    x, y = _name_words(a), _name_words(b)
    if not x or not y or x == y:
        return bool(x) and x == y
    small, big = sorted((x, y), key=len)
    word, rest = big[0], big[1:]
    return (
        len(big) == len(small) + 1
        and sorted(rest) == sorted(small)
        and len(small) >= 2
        and word.isalpha()
        and len(word) > 1
        and word not in _SETTING_WORDS
        and any(w.isdigit() for w in small)
        and any(not w.isdigit() for w in small)
    )


@lru_cache(maxsize=4096)  # a paper's title is keyed twice as it is learnt (key, IRI)
def title_key(title: str, year: str | None) -> str:
    """A stable hash of a normalised title plus year, for papers with no other id."""
    norm = " ".join(_NON_WORD.sub(" ", unicodedata.normalize("NFKC", title).casefold()).split())
    return hashlib.sha1(f"{norm}|{year or ''}".encode()).hexdigest()[:16]


def slug_from_url(url: str, kind: str) -> str | None:
    """The slug in `/paper/<slug>` or `https://paperswithcode.com/method/<slug>`.

    >>> slug_from_url("/paper/attention-is-all-you-need", "paper")
    'attention-is-all-you-need'
    >>> slug_from_url("https://paperswithcode.com/method/adam", "method")
    'adam'
    >>> slug_from_url("https://arxiv.org/abs/1706.03762", "paper") is None
    True

    A URL with a query or a fragment names no slug (cutting it off would merge different
    URLs into one entity):

    >>> slug_from_url("/paper/q?x=1", "paper") is None
    True
    """
    if "?" in url or "#" in url:
        return None
    try:
        path = urlsplit(url).path if "://" in url else url
    except ValueError:  # e.g. "http://[::1" (an unclosed IPv6 host)
        return None
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[-2] == kind:
        return unquote(parts[-1])
    return None


def arxiv_id(value: str) -> str | None:
    """An arXiv id without its version, from an id or an arxiv.org URL.

    >>> arxiv_id("https://arxiv.org/abs/2004.10102v2")
    '2004.10102'
    >>> arxiv_id("http://arxiv.org/pdf/1412.6980v9.pdf")
    '1412.6980'
    >>> arxiv_id("hep-th/9901001v1")
    'hep-th/9901001'
    >>> arxiv_id("https://example.org/x") is None
    True
    """
    value = value.strip()
    m = _ARXIV_URL.search(value)
    candidate = m.group(1) if m else value
    for rx in (_ARXIV_NEW, _ARXIV_OLD):
        hit = rx.fullmatch(candidate)
        if hit:
            return hit.group(1)
    return None


_CC_LICENCE = re.compile(
    r"^https?://(?:www\.)?creativecommons\.org/(?P<path>(?:licenses|publicdomain)/[a-z0-9.+-]+"
    r"/[0-9.]+(?:/[a-z]{2})?)(?:/(?:legalcode(?:\.[a-z-]+)?|deed\.[a-z-]+)?)?/?(?:[?#].*)?$",
    re.IGNORECASE,
)


def licence_iri(url: str) -> str:
    """One IRI per licence: a Creative Commons licence by its canonical deed IRI (https,
    trailing slash), whichever of its pages (`legalcode`, `deed.en`) the source links to.

    >>> licence_iri("https://creativecommons.org/licenses/by-sa/4.0/legalcode")
    'https://creativecommons.org/licenses/by-sa/4.0/'
    >>> licence_iri("http://creativecommons.org/licenses/by-sa/4.0")
    'https://creativecommons.org/licenses/by-sa/4.0/'
    >>> licence_iri("https://www.apache.org/licenses/LICENSE-2.0")
    'https://www.apache.org/licenses/LICENSE-2.0'
    """
    text = url.strip()
    m = _CC_LICENCE.match(text)
    return f"https://creativecommons.org/{m.group('path').lower()}/" if m else text


@dataclass(frozen=True)
class RepoRef:
    """A normalised repository reference: `key` names the repository, `path` the link's part."""

    key: str  # e.g. "github.com/tensorflow/models"
    url: str  # e.g. "https://github.com/tensorflow/models"
    path: str | None  # e.g. "research/attention_ocr"
    ref: str | None  # branch or tag from /tree/<ref>/...
    view: str = "tree"  # "tree", "blob" or "src": how the URL named the ref and path

    @property
    def link_url(self) -> str:
        """The link's normalised URL: the repository's, plus `/<view>/<ref>/<path>` when the
        link names a path. Spellings that differ only in case, `.git`, trailing slashes or a
        bare `/tree/<branch>` are one link with one URL (docs/identity.md)."""
        if not self.path:
            return self.url
        if self.ref:
            return safe_iri(f"{self.url}/{self.view}/{self.ref}/{self.path}")
        return safe_iri(f"{self.url}/{self.path}")


def repository(url: str) -> RepoRef | None:
    """Normalise a repository URL, or None when it names no repository.

    >>> r = repository("https://github.com/tensorflow/models/tree/master/research/attention_ocr")
    >>> (r.key, r.path, r.ref)
    ('github.com/tensorflow/models', 'research/attention_ocr', 'master')
    >>> repository("https://GitHub.com/Foo/Bar.git/").key
    'github.com/foo/bar'
    >>> repository("https://github.com/MIT-HAN-LAB/ProxylessNAS/tree/master").link_url
    'https://github.com/mit-han-lab/proxylessnas'
    >>> r.link_url
    'https://github.com/tensorflow/models/tree/master/research/attention_ocr'
    >>> repository("not a url") is None
    True
    """
    raw = url.strip()
    if "://" not in raw:
        if raw.count("/") == 1 and " " not in raw:  # "owner/name" as in samples: GitHub
            raw = "https://github.com/" + raw
        else:
            return None
    try:
        parts = urlsplit(raw)
        host = (parts.hostname or "").lower()
    except ValueError:  # e.g. "http://[::1" (an unclosed IPv6 host)
        return None
    if not host or parts.scheme.lower() not in ("http", "https", "git", "ssh"):
        return None
    host = host.removeprefix("www.")
    segs = [s for s in parts.path.split("/") if s]
    if not segs:
        return None
    if len(segs) >= 2:
        owner, name = segs[0].lower(), segs[1].lower().removesuffix(".git")
        rest = segs[2:]
        repo_segs = [owner, name]
    else:
        repo_segs, rest = [segs[0].lower().removesuffix(".git")], []
    ref = path = None
    view = "tree"
    if len(rest) >= 2 and rest[0].lower() in ("tree", "blob", "src"):
        view, ref = rest[0].lower(), rest[1]
        path = "/".join(rest[2:]) or None
    elif rest:
        path = "/".join(rest)
    key = "/".join([host, *repo_segs])
    return RepoRef(key=key, url=safe_iri(f"https://{key}"), path=path, ref=ref, view=view)


class Iris:
    """Builds every instance IRI under one base. Deterministic: same input, same IRI."""

    def __init__(self, base: str) -> None:
        if not base.endswith(("/", "#")):
            base += "/"
        problem = iri_error(base) if is_absolute_iri(base) else "it has no scheme"
        if problem:  # else every record fails to store, one bulk load at a time
            raise UsageError(f"the base IRI {base!r} is not an absolute IRI ({problem})")
        self.base = base

    def paper(self, slug: str) -> str:
        return f"{self.base}paper/{segment(slug)}"

    def paper_by_arxiv(self, arxiv: str) -> str:
        return f"{self.base}paper/arxiv/{segment(arxiv).replace('%2F', '/')}"

    def paper_by_title(self, title: str, year: str | None) -> str:
        return f"{self.base}paper/title/{title_key(title, year)}"

    def author(self, name: str) -> str:
        # A name with no letters or digits ("---") keys on itself rather than on "".
        return f"{self.base}author/{segment(name_key(name) or name.strip())}"

    def repository(self, ref: RepoRef) -> str:
        return f"{self.base}repository/{'/'.join(segment(s) for s in ref.key.split('/'))}"

    def task(self, slug: str) -> str:
        return f"{self.base}task/{segment(slug)}"

    def method(self, slug: str) -> str:
        return f"{self.base}method/{segment(slug)}"

    def dataset(self, slug: str) -> str:
        return f"{self.base}dataset/{segment(slug)}"

    def venue(self, name: str) -> str:
        key = pwc_slug(name) or name_key(name) or name.strip()
        return f"{self.base}venue/{segment(key)}"

    def area(self, slug: str) -> str:
        """An area by its slug or a known abbreviation's (`nlp` is natural-language-processing)."""
        name = AREA_ABBREVIATIONS.get(slug)
        return f"{self.base}area/{segment(pwc_slug(name) if name else slug)}"

    def collection(self, slug: str) -> str:
        return f"{self.base}collection/{segment(slug)}"

    def subdataset(self, parent_slug: str, slug: str) -> str:
        """A dataset listed under another (`subdatasets[]`): its name is only unique there."""
        return f"{self.base}dataset/{segment(parent_slug)}/{segment(slug)}"

    def leaderboard(self, task: str, dataset: str) -> str:
        """The evaluation table of a task IRI on a dataset IRI."""
        task_key = task.removeprefix(f"{self.base}task/")
        return f"{self.base}leaderboard/{task_key}/{dataset.removeprefix(f'{self.base}dataset/')}"

    def dump(self, name: str, snapshot: str | None) -> str:
        """One dump file at one snapshot (`undated` when its date is unknown)."""
        return f"{self.base}dump/{segment(name)}/{segment(snapshot or 'undated')}"

    def dump_graph(self, kind: str, key: str) -> str:
        """The named graph of one dump entry; `key` is already IRI-safe."""
        return f"{self.base}graph/pwc-{kind}/{key}"

    def repo_kind(self, kind: str) -> str:
        return f"{self.base}repo-kind/{segment(kind)}"

    def record_graph(self, paper_key: str) -> str:
        return f"{self.base}graph/record/{paper_key}"

    def entities_graph(self) -> str:
        return f"{self.base}graph/entities"

    def local_key(self, iri: str) -> str:
        """The part of an instance IRI after the base (for graph names and messages)."""
        return iri[len(self.base) :] if iri.startswith(self.base) else iri
