"""The record mapping on the real seeds, on hand-made bad records and on generated ones."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kg.errors import RecordError
from kg.ingest.identity import Iris
from kg.ingest.mapping import Context, map_record
from kg.rdf.store import GraphStore
from tests.conftest import BASE, select

CTX = Context(Iris(BASE), source_file="seed.json", ingested_at="2026-11-30T00:00:00+00:00")
XSD = "http://www.w3.org/2001/XMLSchema#"


def nquads(record: Any) -> str:
    return map_record(record, CTX).nquads(Iris(BASE).entities_graph())


def loaded(*records: Any) -> GraphStore:
    store = GraphStore.memory()
    for record in records:
        store.load(nquads(record).encode(), "nquads")
    return store


def test_seed_paper_fields_are_typed_and_linked(seed_records: list[dict[str, Any]]) -> None:
    store = loaded(*seed_records)
    rows = select(store, """
        SELECT ?slug ?title ?date ?arxiv ?abs ?pdf ?venue ?year ?month WHERE {
          ?p a kg:Paper ; kg:pwcSlug ?slug ; dcterms:title ?title ; dcterms:issued ?date ;
             kg:arxivId ?arxiv ; kg:abstractPage ?abs ; kg:pdf ?pdf .
          OPTIONAL { ?p kg:venue/<http://www.w3.org/2000/01/rdf-schema#label> ?venue ;
                        kg:venueYear ?year ; kg:venueMonth ?month }
        } ORDER BY ?slug""")
    assert rows[0] == {
        "slug": "attention-module-is-not-only-a-weight",
        "title": "Attention is Not Only a Weight: Analyzing Transformers with Vector Norms",
        "date": "2020-04-21",
        "arxiv": "2004.10102",
        "abs": "https://arxiv.org/abs/2004.10102v2",
        "pdf": "https://arxiv.org/pdf/2004.10102v2.pdf",
        "venue": "EMNLP",
        "year": 2020,
        "month": 11,
    }
    assert rows[1]["slug"] == "self-attention-attribution-interpreting"
    assert "venue" not in rows[1]  # proceeding is null


def test_dates_and_booleans_are_typed_and_strings_are_plain(seed_records: list[dict[str, Any]]) -> None:
    text = nquads(seed_records[0])
    assert f'"2020-04-21"^^<{XSD}date>' in text
    assert f'"true"^^<{XSD}boolean>' in text
    assert f"^^<{XSD}string>" not in text


def test_see_also_links_to_arxiv_and_source_pages(seed_records: list[dict[str, Any]]) -> None:
    rows = select(loaded(seed_records[0]), """
        SELECT ?link WHERE { ?p a kg:Paper ; <http://www.w3.org/2000/01/rdf-schema#seeAlso> ?link }
        ORDER BY ?link""")
    assert [r["link"] for r in rows] == [
        "https://arxiv.org/abs/2004.10102",
        "https://paperswithcode.com/paper/attention-module-is-not-only-a-weight",
        "https://syntology.ai/paper/2004.10102",
    ]


def test_authors_keep_their_order(seed_records: list[dict[str, Any]]) -> None:
    rows = select(loaded(seed_records[0]), """
        SELECT ?pos ?name WHERE { ?p kg:authorship ?a . ?a kg:position ?pos ; kg:author ?who .
          ?who <http://xmlns.com/foaf/0.1/name> ?name } ORDER BY ?pos""")
    assert [r["name"] for r in rows] == ["Goro Kobayashi", "Tatsuki Kuribayashi", "Sho Yokoi", "Kentaro Inui"]
    assert [r["pos"] for r in rows] == [1, 2, 3, 4]


def test_code_links_carry_flags_framework_and_reach(seed_records: list[dict[str, Any]]) -> None:
    rows = select(loaded(seed_records[1]), """
        SELECT ?repo ?official ?paper ?github ?fw ?reach WHERE {
          ?p kg:codeLink ?l . ?l kg:repository ?r ; kg:isOfficial ?official ;
             kg:mentionedInPaper ?paper ; kg:mentionedInGithub ?github ; kg:framework ?fw .
          ?r <https://schema.org/codeRepository> ?repo .
          OPTIONAL { ?l kg:reachStatus ?reach } } ORDER BY ?repo""")
    assert rows == [
        {"repo": "https://github.com/rohanshah13/attattr", "official": False, "paper": False,
         "github": True, "fw": "pytorch", "reach": "ok"},
        {"repo": "https://github.com/yrdddream/attattr", "official": True, "paper": False,
         "github": True, "fw": "pytorch"},
    ]


def test_samples_keep_every_status_field(seed_records: list[dict[str, Any]]) -> None:
    rows = select(loaded(seed_records[0]), """
        SELECT ?sha ?entry ?status ?level ?contract ?tier ?fp ?lic ?inline ?lang ?basis ?kind ?path ?file ?repo
        WHERE { ?p kg:hasSample ?s . ?s kg:codeSha256Prefix ?sha ; kg:entry ?entry ;
          kg:executionStatus ?status ; kg:verificationLevel ?level ; kg:behaviourFingerprint ?fp ;
          kg:inlineOk ?inline ; <https://schema.org/programmingLanguage> ?lang ; kg:linkBasis ?basis .
          OPTIONAL { ?s kg:contractCheck ?contract } OPTIONAL { ?s kg:metamorphicTier ?tier }
          OPTIONAL { ?s kg:licenceName ?lic } OPTIONAL { ?s kg:repoKind ?kind }
          OPTIONAL { ?s kg:filePath ?path } OPTIONAL { ?s kg:fileUrl ?file }
          OPTIONAL { ?s kg:repository ?repo } } ORDER BY ?sha""")
    assert len(rows) == 4
    by_sha = {r["sha"]: r for r in rows}
    assert by_sha["0477f8085bf514b9"] == {
        "sha": "0477f8085bf514b9", "entry": "get_word_word_attention", "status": "ran_fixture",
        "level": 1, "contract": "RAISES", "tier": "invariant", "fp": False, "lic": "NONE",
        "inline": False, "lang": "python", "basis": "first_harvest_node",
        "kind": BASE + "repo-kind/official", "path": "emnlp2020/exp2_nmt/calculate_aer.py",
        "file": "https://github.com/gorokoba560/norm-analysis-of-transformer/blob/HEAD/emnlp2020/exp2_nmt/calculate_aer.py",
        "repo": BASE + "repository/github.com/gorokoba560/norm-analysis-of-transformer",
    }
    # A sample whose code was first harvested elsewhere has no repository.
    assert "repo" not in by_sha["6a5f53701e5acc8a"]
    assert by_sha["5b78bca2eee14ae0"]["status"] == "unverified"
    assert "contract" not in by_sha["5b78bca2eee14ae0"]


def test_provenance_keeps_source_licence_attribution_and_read_at(seed_records: list[dict[str, Any]]) -> None:
    rows = select(loaded(seed_records[0]), """
        SELECT ?g ?archive ?snapshot ?licence ?attribution ?site ?readAt ?hash ?file ?ingested WHERE {
          GRAPH ?g { ?g a kg:Record ; kg:describes ?p ; kg:sourceArchive ?archive ; kg:snapshot ?snapshot ;
            dcterms:license ?licence ; kg:attribution ?attribution ; kg:republishedBy ?site ;
            kg:readAt ?readAt ; kg:contentHash ?hash ; kg:sourceFile ?file ; kg:ingestedAt ?ingested } }""")
    assert len(rows) == 1
    row = rows[0]
    assert row["g"] == BASE + "graph/record/paper/attention-module-is-not-only-a-weight"
    assert row["archive"] == "pwc-archive (Hugging Face), CC BY-SA 4.0"
    assert row["snapshot"] == "2025-07-28"
    # about.licence_url, one IRI per licence (the record says …/4.0/legalcode)
    assert row["licence"] == "https://creativecommons.org/licenses/by-sa/4.0/"
    assert row["attribution"] == "https://codewithpapers.app/attribution"
    assert row["site"] == "https://codewithpapers.app"
    assert row["readAt"] == "2026-09-25T09:33:49Z"  # Oxigraph canonicalises +00:00
    assert str(row["hash"]).startswith("sha256:") and len(str(row["hash"])) == 71
    assert row["file"] == "seed.json"


def test_syntology_aggregates_are_mapped(seed_records: list[dict[str, Any]]) -> None:
    store = loaded(seed_records[0])
    counts = select(store, "SELECT ?status ?n WHERE { ?g kg:statusCount ?c . ?c kg:status ?status ; kg:count ?n } ORDER BY ?status")
    assert {r["status"]: r["n"] for r in counts} == {
        "ran_draft_wrong": 1, "ran_fixture": 1, "ran_honours": 1, "unverified": 1}
    kinds = select(store, """SELECT ?samples ?ran ?repos WHERE { ?g kg:repoKindSummary ?k .
        ?k kg:sampleCount ?samples ; kg:ranCount ?ran ; kg:repositoryCount ?repos }""")
    assert kinds == [{"samples": 2, "ran": 1, "repos": 1}]
    vocab = select(store, """SELECT ?label ?def WHERE { ?k a kg:RepoKind ;
        <http://www.w3.org/2004/02/skos/core#prefLabel> ?label ;
        <http://www.w3.org/2004/02/skos/core#definition> ?def } ORDER BY ?label""")
    assert [r["label"] for r in vocab] == ["community", "found_in_text", "listed", "named_in_paper", "official"]


def test_same_entity_gets_one_iri_across_records(seed_records: list[dict[str, Any]]) -> None:
    store = loaded(*seed_records)
    rows = select(store, "SELECT (COUNT(DISTINCT ?m) AS ?n) WHERE { ?p kg:usesMethod ?m }")
    assert rows == [{"n": 20}]
    shared = select(store, """SELECT (COUNT(DISTINCT ?m) AS ?n) WHERE {
        ?a kg:usesMethod ?m . ?b kg:usesMethod ?m . FILTER(STR(?a) < STR(?b)) }""")
    assert shared == [{"n": 19}]
    # A method's label is stated once (in the entities graph), so the union counts it once.
    labels = select(store, f"""SELECT (COUNT(*) AS ?n) WHERE {{
        <{BASE}method/adam> <http://www.w3.org/2000/01/rdf-schema#label> ?l }}""")
    assert labels == [{"n": 1}]


def test_unknown_keys_are_counted_not_rejected(seed_records: list[dict[str, Any]]) -> None:
    record = copy.deepcopy(seed_records[0])
    record["shiny_new_field"] = 1
    record["code_links"][0]["stars"] = 10
    mapped = map_record(record, CTX)
    assert mapped.unknown_keys == ["code_links[0].stars", "shiny_new_field"]


def test_mapping_is_deterministic(seed_records: list[dict[str, Any]]) -> None:
    assert nquads(seed_records[0]) == nquads(copy.deepcopy(seed_records[0]))


def test_base_iri_is_configurable(seed_records: list[dict[str, Any]]) -> None:
    mapped = map_record(seed_records[0], Context(Iris("http://example.org/kg")))
    assert mapped.subject == "http://example.org/kg/paper/attention-module-is-not-only-a-weight"
    assert BASE not in mapped.nquads("http://example.org/kg/graph/entities")


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (lambda r: r.update(title=5), "title", "expected a string, got number"),
        (lambda r: r.update(date="2020-13-45"), "date", "is not a date"),
        (lambda r: r.update(authors="Goro"), "authors", "expected an array"),
        (lambda r: r["authors"].append(None), "authors[4]", "expected a string, got null"),
        (lambda r: r["code_links"][0].update(is_official="yes"), "code_links[0].is_official", "true/false or 1/0"),
        (lambda r: r["code_links"][0].update(repo_url="not a url"), "code_links[0].repo_url", "not a repository URL"),
        (lambda r: r["code_links"][0].update(repo_url=None), "code_links[0].repo_url", "is required"),
        (lambda r: r["syntology"]["samples"][0].update(verification_level="1"),
         "syntology.samples[0].verification_level", "expected an integer"),
        (lambda r: r["syntology"].update(read_at="yesterday"), "syntology.read_at", "not an ISO date-time"),
        (lambda r: r.update(arxiv_id="not-an-id"), "arxiv_id", "not an arXiv id"),
        (lambda r: r.update(url_abs="arxiv.org/abs/1"), "url_abs", "not an absolute URL"),
        (lambda r: r.update(url_abs="javascript:alert(1)"), "url_abs", "not a web URL"),
        (lambda r: r.update(url_pdf="data:text/html,<script>x</script>"), "url_pdf", "not a web URL"),
        (lambda r: r["syntology"].update(atlas_url="vbscript:x"), "syntology.atlas_url", "not a web URL"),
        (lambda r: r["code_links"][0].update(repo_url="javascript://github.com/o/n"),
         "code_links[0].repo_url", "not a repository URL"),
        (lambda r: r.update(abstract="\ud800"), "abstract", "lone surrogate"),
        (lambda r: r.update(abstract="x" * 1_000_001), "abstract", "longer than the limit"),
        (lambda r: r["methods"].append("adam"), "methods[19]", "expected an object"),
        (lambda r: [r.pop(k) for k in ("url", "arxiv_id", "title")], "url", "names no paper"),
    ],
)
def test_bad_fields_are_rejected_with_their_path(
    seed_records: list[dict[str, Any]], change: Any, field: str, message: str
) -> None:
    record = copy.deepcopy(seed_records[0])
    change(record)
    with pytest.raises(RecordError) as info:
        map_record(record, CTX)
    assert info.value.field == field
    assert message in info.value.message


def test_odd_characters_in_slugs_and_urls_become_safe_iris(seed_records: list[dict[str, Any]]) -> None:
    record = copy.deepcopy(seed_records[0])
    record["url"] = '/paper/a b<c>"d{e}|^`\x01é'
    record["code_links"][0]["paper_slug"] = 'a b<c>"d{e}|^`\x01é'
    record["code_links"][0]["repo_url"] = "https://github.com/Some One/re po>x"
    record["methods"][0]["method_slug"] = "method with/slash"
    store = loaded(record)  # Oxigraph's strict N-Quads parser accepts every IRI
    slug = select(store, "SELECT ?s WHERE { ?p kg:pwcSlug ?s }")
    assert slug == [{"s": 'a b<c>"d{e}|^`\x01é'}]
    papers = select(store, "SELECT ?p WHERE { ?p a kg:Paper }")
    assert papers == [{"p": BASE + "paper/a%20b%3Cc%3E%22d%7Be%7D%7C%5E%60%01é"}]
    methods = select(store, f"SELECT ?m WHERE {{ ?p kg:usesMethod ?m FILTER(STRSTARTS(STR(?m), '{BASE}method/method')) }}")
    assert methods == [{"m": BASE + "method/method%20with%2Fslash"}]


def test_results_keep_raw_and_numeric_metric_values(seed_records: list[dict[str, Any]]) -> None:
    record = copy.deepcopy(seed_records[0])
    record["results"] = [
        {"task": "Machine Translation", "dataset": "WMT2014 English-German", "metric": "BLEU",
         "value": "28.4", "model_name": "Transformer"},
        {"task": "Word Alignment", "dataset": "Gold Alignment", "metrics": {"AER": "21.5%", "F1": "-"}},
    ]
    rows = select(loaded(record), """SELECT ?task ?metric ?raw ?num ?pct WHERE { ?p kg:hasResult ?r .
        ?r kg:metricName ?metric ; kg:metricValue ?raw ; kg:onTask/<http://www.w3.org/2000/01/rdf-schema#label> ?task .
        OPTIONAL { ?r kg:metricNumber ?num ; kg:metricIsPercent ?pct } } ORDER BY ?metric""")
    assert rows == [
        {"task": "Word Alignment", "metric": "AER", "raw": "21.5%", "num": 21.5, "pct": True},
        {"task": "Machine Translation", "metric": "BLEU", "raw": "28.4", "num": 28.4, "pct": False},
        {"task": "Word Alignment", "metric": "F1", "raw": "-"},
    ]


def test_introduced_methods_and_datasets_are_linked(seed_records: list[dict[str, Any]]) -> None:
    record = copy.deepcopy(seed_records[0])
    record["methods_introduced"] = [{"method_slug": "norm-analysis", "method_name": "Norm Analysis"}]
    record["datasets_introduced"] = ["Gold Alignment v2"]
    rows = select(loaded(record), """SELECT ?kind ?x WHERE {
        { ?p kg:introducesMethod ?x BIND("method" AS ?kind) } UNION
        { ?p kg:introducesDataset ?x BIND("dataset" AS ?kind) } } ORDER BY ?kind""")
    assert rows == [
        {"kind": "dataset", "x": BASE + "dataset/gold-alignment-v2"},
        {"kind": "method", "x": BASE + "method/norm-analysis"},
    ]


# --- property-based: any JSON value either maps to parseable RDF or names a field ---------

json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**40), 2**40), st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
)
json_value = st.recursive(json_leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)), max_leaves=12)

SEED_KEYS = ["url", "title", "arxiv_id", "date", "proceeding", "authors", "abstract", "url_abs",
             "url_pdf", "source", "code_links", "tasks", "methods", "datasets_introduced",
             "methods_introduced", "results", "syntology", "about", "arxiv_metadata"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_mutation_maps_cleanly_or_names_a_field(seed_records: list[dict[str, Any]], data: st.DataObject) -> None:
    record = copy.deepcopy(seed_records[0])
    for _ in range(data.draw(st.integers(1, 4))):
        key = data.draw(st.sampled_from(SEED_KEYS))
        record[key] = data.draw(json_value)
    try:
        mapped = map_record(record, CTX)
    except RecordError as exc:
        assert exc.field or "paper" in exc.message or "JSON" in exc.message
        return
    store = GraphStore.memory()
    store.load(mapped.nquads(Iris(BASE).entities_graph()).encode(), "nquads")  # parses strictly
    assert len(store) >= 1


@settings(max_examples=200, deadline=None)
@given(text=st.text(min_size=1, max_size=60))
def test_any_text_in_any_iri_position_stays_a_valid_iri(seed_records: list[dict[str, Any]], text: str) -> None:
    record = copy.deepcopy(seed_records[1])
    record["url"] = "/paper/" + text.replace("/", "_")
    for link in record["code_links"]:
        link["paper_slug"] = text.replace("/", "_")
    record["authors"] = [text]
    record["tasks"] = [{"task_slug": text, "task_name": text}]
    record["syntology"]["samples"][0]["code_sha256_prefix"] = text
    try:
        mapped = map_record(record, CTX)
    except RecordError as exc:
        assert exc.field  # empty slugs, lone surrogates: named, not crashed
        return
    store = GraphStore.memory()
    store.load(mapped.nquads(Iris(BASE).entities_graph()).encode(), "nquads")
    names = select(store, "SELECT ?n WHERE { ?a <http://xmlns.com/foaf/0.1/name> ?n }")
    assert names == [{"n": text.strip()}]


def test_hashes_ignore_key_order(seed_records: list[dict[str, Any]]) -> None:
    reordered = json.loads(json.dumps(seed_records[0], sort_keys=True))
    assert map_record(reordered, CTX).content_hash == map_record(seed_records[0], CTX).content_hash


# -- content hashes: orjson's bytes where they equal `json`'s -------------------------------
_ANY_CHAR = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, blacklist_categories=())
_JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**63 - 3, max_value=2**64 + 3),  # orjson's range ends here
    st.integers(min_value=-(2**63) - 3, max_value=-(2**63) + 3),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(alphabet=_ANY_CHAR, max_size=12),  # control characters, surrogates, astral
)
_JSON_VALUES = st.recursive(
    _JSON_SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(st.text(alphabet=_ANY_CHAR, max_size=6), inner, max_size=5),
    ),
    max_leaves=25,
)


def _json_bytes(value: Any) -> bytes | str:
    from kg.ingest.units import canonical_json

    try:
        return canonical_json(value).encode("utf-8")
    except UnicodeEncodeError:
        return "lone surrogate"


@settings(max_examples=400, deadline=None)
@given(_JSON_VALUES)
def test_canonical_bytes_are_json_s_byte_for_byte(value: Any) -> None:
    """Content hashes hash orjson's output when it is `json`'s own (no float, a 64-bit
    integer, no lone surrogate): a store's hashes do not depend on which one wrote them."""
    from kg.ingest.units import canonical_bytes

    try:
        fast: bytes | str = canonical_bytes(value)
    except UnicodeEncodeError:
        fast = "lone surrogate"
    assert fast == _json_bytes(value)


def test_canonical_bytes_past_orjson_s_limits_are_json_s() -> None:
    """What orjson refuses (nesting past 255, an integer past 64 bits) or writes otherwise (a
    float) still hashes as `json` writes it; a float in a record changes nothing else."""
    from kg.ingest.units import canonical_bytes, content_hash

    deep: Any = "leaf"
    for _ in range(300):
        deep = {"k": [deep]}
    for value in (deep, {"n": 2**80}, {"x": [1e-05, 1e16, float("nan"), -0.0]}, "é\x00"):
        assert canonical_bytes(value) == _json_bytes(value)
    assert content_hash({"a": 1, "b": "é"}) == content_hash({"b": "é", "a": 1})
    with pytest.raises(RecordError, match="lone surrogate"):
        content_hash({"title": "\ud800"})
