"""The five Papers-with-Code dumps: detection, every field mapped, provenance and
replacement, streaming. Real slices where they exist (methods 2022, evaluation tables 2020,
sota-extractor leaderboards), hand-made files in the documented layout for the others."""

from __future__ import annotations

import gzip
import json
import re
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kg.ingest.identity import Iris
from kg.ingest.ingestor import KINDS, IngestReport, ingest
from kg.ingest.mapping import Context
from kg.ingest.reader import read_items
from kg.rdf.store import GraphStore
from kg.testing.dumps import write_archive
from tests import dump_samples
from tests.conftest import BASE, RAW_DIR, run, select

METHODS_GZ = RAW_DIR / "pwc-methods-2022" / "methods.json.gz"
EVALUATION_GZ = RAW_DIR / "pwc-evaluation-tables-2020" / "evaluation-tables.json.gz"
SOTA_DIR = RAW_DIR / "sota-extractor-tasks"
DUMP_KINDS = sorted(dump_samples.ALL)


def load(store: GraphStore, *paths: Path | str, **options: Any) -> IngestReport:
    errors: list[str] = []
    report = ingest(
        store,
        [str(p) for p in paths],
        base_iri=BASE,
        on_error=lambda e: errors.append(str(e)),
        **options,
    )
    assert report.rejected == len(errors)
    return report


def one(store: GraphStore, query: str) -> Any:
    rows = select(store, query)
    assert len(rows) == 1, rows
    return rows[0]


# --- the real slices ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real() -> tuple[GraphStore, IngestReport]:
    store = GraphStore.memory()
    report = load(store, METHODS_GZ, EVALUATION_GZ, SOTA_DIR)
    return store, report


def test_real_slices_load_without_a_rejected_record(real: tuple[GraphStore, IngestReport]) -> None:
    store, report = real
    assert report.rejected == 0, report.errors[:3]
    sota_roots = sum(
        len(json.loads(p.read_text(encoding="utf-8"))) for p in SOTA_DIR.glob("*.json")
    )
    assert report.kinds == {"methods": 1924, "evaluation-tables": 860 + sota_roots}
    # every item is a unit, plus one kg:Dump unit per file, plus one unit per dataset, per
    # table and per cited paper of the evaluation trees (each stated once, in its own graph)
    parts = [
        g for g in store.named_graphs() if re.search(r"/pwc-evaluation/[^/]+/(dataset|table|paper)/", g)
    ]
    assert len(parts) > 1000
    assert report.added == (
        1924 + 860 + sota_roots + 2 + len(list(SOTA_DIR.glob("*.json"))) + len(parts)
    )
    counts = one(
        store,
        """SELECT (COUNT(DISTINCT ?m) AS ?methods) (COUNT(DISTINCT ?r) AS ?results)
                  (COUNT(DISTINCT ?repo) AS ?repos) WHERE {
             { ?m a kg:Method } UNION { ?r a kg:EvaluationResult } UNION { ?repo a kg:Repository } }""",
    )
    assert counts["methods"] >= 1924
    # 50,707 metric values; the same table under several parents gives the same results
    assert counts["results"] > 29_000
    assert counts["repos"] > 10_000


def test_method_fields(real: tuple[GraphStore, IngestReport]) -> None:
    store, _ = real
    row = one(
        store,
        f"""PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
        SELECT ?label ?full ?year ?count ?source ?title ?snippet ?desc WHERE {{
          <{BASE}method/autoencoder> rdfs:label ?label ; kg:fullName ?full ;
             kg:paperCount ?count ; kg:sourceUrl ?source ;
             kg:sourceTitle ?title ; kg:codeSnippet ?snippet ; dcterms:description ?desc
          OPTIONAL {{ <{BASE}method/autoencoder> kg:introducedYear ?year }} }}""",
    )
    assert row["label"] == row["full"] == "AutoEncoder"
    # methods.json gives 2000, its placeholder for "unknown": not stated as a fact
    assert (row.get("year"), row["count"]) == (None, 2602)
    assert row["source"] == "https://science.sciencemag.org/content/313/5786/504"
    assert row["title"] == "Reducing the Dimensionality of Data with Neural Networks"
    assert row["snippet"].startswith("https://github.com/L1aoXingyu/pytorch-beginner/blob/")
    assert row["snippet"].endswith("#L38")
    assert row["desc"].startswith("An **Autoencoder** is a bottleneck architecture")


def test_method_collections_and_areas(real: tuple[GraphStore, IngestReport]) -> None:
    store, _ = real
    row = one(
        store,
        f"""PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
        SELECT ?collection ?name ?area ?area_name WHERE {{
          <{BASE}method/autoencoder> kg:inCollection ?collection .
          ?collection a kg:Collection ; rdfs:label ?name ; kg:area ?area .
          ?area a kg:Area ; rdfs:label ?area_name }}""",
    )
    assert row == {
        "collection": f"{BASE}collection/generative-models",
        "name": "Generative Models",
        "area": f"{BASE}area/computer-vision",
        "area_name": "Computer Vision",
    }
    # the areas of collections and the categories of tasks are the same nodes
    tasks = select(
        store, f"SELECT ?t WHERE {{ ?t a kg:Task ; kg:area <{BASE}area/computer-vision> }}"
    )
    # each task once (the default graph is a merge; the bag union used to repeat them)
    assert len(tasks) == len({row["t"] for row in tasks}) > 300


def test_introducing_paper_by_slug_with_its_arxiv_id(real: tuple[GraphStore, IngestReport]) -> None:
    """methods.json names the paper by slug, and its source_url is the same paper on arXiv."""
    store, _ = real
    row = one(
        store,
        f"""SELECT ?paper ?slug ?arxiv ?title WHERE {{
          ?paper kg:introducesMethod <{BASE}method/wfst> ; kg:pwcSlug ?slug ;
                 kg:arxivId ?arxiv ; dcterms:title ?title }}""",
    )
    assert row["paper"] == f"{BASE}paper/nemo-inverse-text-normalization-from"
    assert row["arxiv"] == "2104.05055"  # from https://arxiv.org/abs/2104.05055v2
    assert row["title"] == "NeMo Inverse Text Normalization: From Development To Production"


def test_metric_values_raw_and_typed(real: tuple[GraphStore, IngestReport]) -> None:
    store, _ = real
    rows = {
        r["raw"]: r
        for r in select(
            store,
            f"""SELECT ?raw ?number ?percent WHERE {{
              ?r kg:onTask ?task ; kg:metricValue ?raw ; kg:modelName ?model ; kg:metricName ?m .
              OPTIONAL {{ ?r kg:metricNumber ?number ; kg:metricIsPercent ?percent }}
              VALUES (?task ?model ?m) {{
                (<{BASE}task/handwritten-digit-recognition> "CNN" "Accuracy")
                (<{BASE}task/unsupervised-domain-adaptation> "SNR" "rank-10")
                (<{BASE}task/image-to-image-translation> "SIMS" "FID") }} }}""",
        )
    }
    assert rows["96.95%"]["number"] == pytest.approx(96.95) and rows["96.95%"]["percent"] is True
    assert "number" not in rows["-"] and "number" not in rows["N/A"]
    ranked = select(
        store,
        f"""SELECT DISTINCT ?r ?n WHERE {{ ?r kg:inLeaderboard ?b ; kg:metricNumber ?n ;
                                            kg:metricName "Top 1 Accuracy" .
              ?b kg:onTask <{BASE}task/image-classification> ;
                 kg:onDataset <{BASE}dataset/imagenet> }} ORDER BY DESC(?n) LIMIT 20""",
    )
    numbers = [r["n"] for r in ranked]
    assert len(numbers) == 20 and numbers == sorted(numbers, reverse=True)
    assert 85 < numbers[0] < 100 and numbers[-1] < numbers[0]


def test_repository_url_with_a_tree_path(real: tuple[GraphStore, IngestReport]) -> None:
    """The first row of the 2020 dump links tensorflow/models/tree/master/research/attention_ocr."""
    store, _ = real
    row = one(
        store,
        """SELECT ?paper ?repo ?url ?path WHERE {
          ?paper kg:arxivId "1704.03549" ; kg:codeLink ?link ; kg:hasRepository ?repo .
          ?link kg:repository ?repo ; kg:linkedUrl ?url ; kg:repositoryPath ?path }""",
    )
    assert row["repo"] == f"{BASE}repository/github.com/tensorflow/models"
    assert row["url"] == "https://github.com/tensorflow/models/tree/master/research/attention_ocr"
    assert row["path"] == "research/attention_ocr"
    repo = one(
        store,
        f"""PREFIX schema: <https://schema.org/>
        SELECT ?web ?host WHERE {{ <{row["repo"]}> schema:codeRepository ?web ; kg:host ?host }}""",
    )
    assert repo == {"web": "https://github.com/tensorflow/models", "host": "github.com"}


def test_task_tree_datasets_and_leaderboards(real: tuple[GraphStore, IngestReport]) -> None:
    store, _ = real
    subtasks = {
        r["label"]
        for r in select(
            store,
            f"""PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
            SELECT ?label WHERE {{ ?t kg:subtaskOf <{BASE}task/optical-character-recognition> ;
                                        rdfs:label ?label }}""",
        )
    }
    assert {"Handwriting Recognition", "Handwritten Digit Recognition"} <= subtasks
    board = one(
        store,
        f"""SELECT ?metric WHERE {{
          ?b a kg:Leaderboard ; kg:onTask <{BASE}task/optical-character-recognition> ;
             kg:onDataset <{BASE}dataset/fsns-test> ; kg:leaderboardMetric ?metric .
          <{BASE}dataset/fsns-test> kg:usedForTask <{BASE}task/optical-character-recognition> }}""",
    )
    assert board["metric"] == "Sequence error"
    # sota-extractor subdatasets: "General" is only unique under its parent
    sub = one(
        store,
        f"""SELECT DISTINCT ?sub WHERE {{ ?sub kg:subdatasetOf <{BASE}dataset/semeval-2018> .
             FILTER(STRENDS(STR(?sub), "/general")) }}""",
    )
    assert sub["sub"] == f"{BASE}dataset/semeval-2018/general"


def test_unreadable_links_in_scraped_leaderboards_are_reported_not_fatal(
    real: tuple[GraphStore, IngestReport],
) -> None:
    """nlpprogress.json holds Markdown fragments as URLs: the link is left out and counted."""
    _, report = real
    skipped = {k: n for k, n in report.not_mapped.items() if "(not a URL)" in k}
    assert not any("(not a URL)" in k for k in report.unknown_keys)  # not unknown keys
    assert sum(skipped.values()) >= 70
    assert "datasets[].dataset_links[].url (not a URL)" in skipped


def test_dump_provenance_of_the_real_slices(real: tuple[GraphStore, IngestReport]) -> None:
    store, _ = real
    rows = select(
        store,
        """PREFIX prov: <http://www.w3.org/ns/prov#>
        SELECT ?dump ?kind ?file ?snapshot (COUNT(?g) AS ?entries) WHERE {
          ?g prov:wasDerivedFrom ?dump .  # a kg:DumpEntry, by definition
          ?dump a kg:Dump ; kg:dumpKind ?kind ; kg:sourceFile ?file .
          OPTIONAL { ?dump kg:snapshot ?snapshot } }
        GROUP BY ?dump ?kind ?file ?snapshot""",
    )
    by_file = {r["file"]: r for r in rows}
    assert by_file["methods.json.gz"]["dump"] == f"{BASE}dump/methods/2022-05-20"
    assert by_file["methods.json.gz"]["snapshot"] == "2022-05-20"  # the gzip header's date
    assert by_file["methods.json.gz"]["entries"] == 1924 + 1  # and the dump's own graph
    assert by_file["evaluation-tables.json.gz"]["snapshot"] == "2020-08-28"
    assert by_file["squad.json"]["dump"] == f"{BASE}dump/squad/undated"
    assert "snapshot" not in by_file["squad.json"]
    graph = one(
        store,
        f"""PREFIX foaf: <http://xmlns.com/foaf/0.1/>
        SELECT ?topic WHERE {{ <{BASE}graph/pwc-methods/autoencoder> foaf:primaryTopic ?topic }}""",
    )
    assert graph["topic"] == f"{BASE}method/autoencoder"


def test_reingesting_the_real_slices_changes_nothing(real: tuple[GraphStore, IngestReport]) -> None:
    store, _ = real
    before = len(store)
    again = load(store, METHODS_GZ)
    assert (again.added, again.updated, again.unchanged) == (0, 0, 1925)
    assert len(store) == before


# --- detection --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", DUMP_KINDS)
def test_each_kind_is_detected_from_content(kind: str, tmp_path: Path) -> None:
    path = dump_samples.write(tmp_path, kind, name="export.json")  # the name says nothing
    store = GraphStore.memory()
    report = load(store, path)
    assert report.rejected == 0, report.errors
    assert dict(report.kinds) == {kind: len(dump_samples.ALL[kind])}
    assert report.unknown_keys == {}, "every field of the documented layout is read"


@pytest.mark.parametrize("kind", DUMP_KINDS)
def test_gzipped_dumps_read_the_same(kind: str, tmp_path: Path) -> None:
    plain, zipped = GraphStore.memory(), GraphStore.memory()
    load(plain, dump_samples.write(tmp_path / "a", kind), snapshot="2020-01-01")
    load(
        zipped, dump_samples.write(tmp_path / "b", kind, gz_mtime=1577836800), snapshot="2020-01-01"
    )

    def quads(store: GraphStore) -> list[str]:
        return sorted(q for q in store.quads_nquads() if "#ingestedAt>" not in q)

    assert quads(plain) == [q.replace('.json.gz" <', '.json" <') for q in quads(zipped)]


def test_kind_option_overrides_detection(tmp_path: Path, cli: CliRunner) -> None:
    """A top-level task without datasets or subtasks looks like nothing in particular."""
    path = tmp_path / "leaderboard.json"
    path.write_text(json.dumps([{"task": "Lonely Task", "description": "No tables yet."}]))
    detected = run(cli, "--memory", "ingest", str(path), "--json")
    assert detected.exit_code == 1 and "names no paper" in detected.output
    told = run(cli, "--memory", "ingest", "--kind", "evaluation-tables", str(path), "--json")
    assert told.exit_code == 0, told.output
    assert '"evaluation-tables": 1' in told.output


def test_bad_kind_and_bad_snapshot_are_usage_errors(tmp_path: Path, cli: CliRunner) -> None:
    path = dump_samples.write(tmp_path, "methods")
    bad_kind = run(cli, "--memory", "ingest", "--kind", "papers", str(path))
    assert bad_kind.exit_code == 2 and "papers-with-abstracts" in bad_kind.output
    bad_date = run(cli, "--memory", "ingest", "--snapshot", "May 2022", str(path))
    assert bad_date.exit_code == 2 and "YYYY-MM-DD" in bad_date.output


def test_an_unreadable_item_is_reported_and_the_rest_loads(tmp_path: Path, cli: CliRunner) -> None:
    items = [*dump_samples.METHODS, {**dump_samples.METHODS[0], "url": "https://example.org/x"}]
    path = dump_samples.write(tmp_path, "methods", items)
    result = run(cli, "--memory", "ingest", str(path), "--json")
    assert result.exit_code == 1
    assert f"{path}:item 1: field 'url': 'https://example.org/x' is not a /method/<slug> URL" in (
        result.output.replace("\n", "")
    )
    assert '"rejected": 1' in result.output and '"added": 2' in result.output


# --- every field of the kinds without a real slice ------------------------------------------


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> GraphStore:
    store = GraphStore.memory()
    report = load(
        store, *dump_samples.write_all(tmp_path_factory.mktemp("dumps")), snapshot="2025-07-28"
    )
    assert report.rejected == 0, report.errors
    return store


def test_dataset_fields(samples: GraphStore) -> None:
    d = f"<{BASE}dataset/imagenet>"
    row = one(
        samples,
        f"""PREFIX foaf: <http://xmlns.com/foaf/0.1/>
        SELECT ?full ?home ?date ?count (GROUP_CONCAT(DISTINCT ?v; separator="|") AS ?variants)
               (GROUP_CONCAT(DISTINCT STR(?t); separator="|") AS ?tasks) ?mod ?lang WHERE {{
          {d} kg:fullName ?full ; foaf:homepage ?home ; kg:introducedDate ?date ;
              kg:paperCount ?count ; kg:variant ?v ; kg:usedForTask ?t ; kg:modality ?mod ;
              kg:language ?lang }} GROUP BY ?full ?home ?date ?count ?mod ?lang""",
    )
    assert row["full"] == "ImageNet Large Scale Visual Recognition Challenge"
    assert (row["home"], row["date"], row["count"]) == (
        "https://image-net.org/",
        "2009-06-20",
        9840,
    )
    assert set(row["variants"].split("|")) == {"ImageNet", "ImageNet-10k"}
    assert set(row["tasks"].split("|")) == {
        f"{BASE}task/image-classification",
        f"{BASE}task/few-shot-learning",  # no URL: PwC's slug rule on the name
    }
    assert (row["mod"], row["lang"]) == ("Images", "English")
    loader = one(
        samples,
        f"""SELECT ?url ?repo (GROUP_CONCAT(DISTINCT ?f; separator="|") AS ?fw) WHERE {{
          {d} kg:dataLoader ?l . ?l a kg:DataLoader ; kg:linkedUrl ?url ; kg:repository ?repo ;
          kg:framework ?f }} GROUP BY ?url ?repo""",
    )
    assert loader["url"] == "https://huggingface.co/datasets/imagenet-1k"
    assert loader["repo"] == f"{BASE}repository/github.com/huggingface/datasets"
    assert sorted(loader["fw"].split("|")) == ["jax", "pytorch", "tf"]
    introduced = {r["p"] for r in select(samples, "SELECT ?p WHERE { ?p kg:introducesDataset ?d }")}
    assert f"{BASE}paper/learning" in introduced  # by slug
    assert any("/paper/title/" in p for p in introduced)  # ImageNet's paper: title only


def test_paper_row_fields(samples: GraphStore) -> None:
    p = f"<{BASE}paper/{dump_samples.SLUG}>"
    authors = select(
        samples,
        f"""SELECT ?pos ?name WHERE {{ {p} kg:authorship ?a . ?a kg:position ?pos ;
                                     kg:authorName ?name }} ORDER BY ?pos""",
    )
    assert [a["name"] for a in authors] == [
        "Kaiming He",
        "Xiangyu Zhang",
        "Shaoqing Ren",
        "Jian Sun",
    ]
    row = one(
        samples,
        f"""SELECT DISTINCT ?venue ?year ?abstract ?pdf WHERE {{ {p} kg:venue ?venue ; kg:venueYear ?year ;
              dcterms:abstract ?abstract ; kg:pdf ?pdf }}""",
    )
    assert (row["venue"], row["year"]) == (f"{BASE}venue/cvpr", 2016)
    tasks = {r["t"] for r in select(samples, f"SELECT ?t WHERE {{ {p} kg:hasTask ?t }}")}
    assert tasks == {f"{BASE}task/image-classification", f"{BASE}task/object-detection"}
    methods = {r["m"] for r in select(samples, f"SELECT ?m WHERE {{ {p} kg:usesMethod ?m }}")}
    assert methods == {f"{BASE}method/residual-connection", f"{BASE}method/relu"}


def test_embedded_method_objects_are_mapped_once_per_run(samples: GraphStore) -> None:
    row = one(
        samples,
        f"""PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
        SELECT ?collection ?parent ?area ?snippet WHERE {{
          GRAPH <{BASE}graph/pwc-papers-methods/residual-connection> {{
            <{BASE}method/residual-connection> kg:inCollection ?collection ;
                                               kg:codeSnippet ?snippet }}
          ?collection kg:parentCollection ?parent ; kg:area ?area }}""",
    )
    assert row["collection"] == f"{BASE}collection/skip-connections"
    assert row["parent"] == f"{BASE}collection/feedforward-networks"
    assert row["area"] == f"{BASE}area/general"
    # ReLU appears in two rows with different copies: the first one is kept
    names = select(samples, f"SELECT ?n WHERE {{ <{BASE}method/relu> kg:fullName ?n }}")
    assert names == [{"n": "Rectified Linear Units"}]


def test_link_row_fields(samples: GraphStore) -> None:
    rows = select(
        samples,
        f"""SELECT DISTINCT ?repo ?official ?framework ?path WHERE {{
          <{BASE}paper/{dump_samples.SLUG}> kg:codeLink ?l .
          ?l kg:repository ?repo ; kg:framework ?framework ; kg:isOfficial ?official .
          OPTIONAL {{ ?l kg:repositoryPath ?path }} }} ORDER BY ?repo""",
    )
    assert rows == [
        {
            "repo": f"{BASE}repository/github.com/kaiminghe/deep-residual-networks",
            "official": True,
            "framework": "none",
        },
        {
            "repo": f"{BASE}repository/github.com/tensorflow/models",
            "official": False,
            "framework": "tf",
            "path": "official/vision/resnet",
        },
    ]


def test_evaluation_fields_the_real_slices_leave_empty(samples: GraphStore) -> None:
    t = f"<{BASE}task/image-classification>"
    row = one(
        samples,
        f"""PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
        SELECT ?synonym ?source ?source_title ?area WHERE {{ {t} skos:altLabel ?synonym ;
            kg:sourceUrl ?source ; kg:sourceTitle ?source_title ; kg:area ?area }}""",
    )
    assert row == {
        "synonym": "Image Recognition",
        "source": "https://example.org/board",
        "source_title": "An external board",
        "area": f"{BASE}area/computer-vision",
    }
    cites = one(
        samples, f"SELECT ?c WHERE {{ <{BASE}dataset/imagenet> dcterms:bibliographicCitation ?c }}"
    )
    assert cites["c"] == "Deng et al. 2009"
    # a row with no paper: its results hang under the leaderboard, its code on the results
    orphan = select(
        samples,
        """SELECT ?r ?repo ?extra WHERE { ?r kg:modelName "Anonymous entry" ; kg:repository ?repo .
              FILTER NOT EXISTS { ?p kg:hasResult ?r }
              OPTIONAL { ?r kg:usesAdditionalData ?extra } }""",
    )
    assert len(orphan) == 2  # two metrics
    assert all(
        r["r"].startswith(f"{BASE}leaderboard/image-classification/imagenet/result/")
        for r in orphan
    )
    flag = one(
        samples,
        'SELECT ?extra WHERE { ?r kg:modelName "ResNet-152" ; kg:usesAdditionalData ?extra } LIMIT 1',
    )
    assert flag["extra"] is False


# --- provenance and replacement ---------------------------------------------------------------


def test_a_newer_dump_replaces_exactly_what_the_older_said(tmp_path: Path) -> None:
    store = GraphStore.memory()
    resnet = dump_samples.METHODS[0]
    other = {**resnet, "url": f"{dump_samples.PWC}/method/other", "name": "Other", "paper": None}
    old = dump_samples.write(tmp_path / "2021", "methods", [resnet, other])
    first = load(store, old, snapshot="2021-01-01")
    assert first.added == 3
    changed = {**resnet, "description": "A newer description.", "num_papers": 2500}
    new = {**other, "url": f"{dump_samples.PWC}/method/brand-new", "name": "Brand New"}
    second = load(
        store,
        dump_samples.write(tmp_path / "2022", "methods", [changed, other, new]),
        snapshot="2022-01-01",
    )
    assert (second.added, second.updated, second.unchanged) == (2, 1, 1)  # new, the dump node
    m = f"<{BASE}method/resnet>"
    assert select(store, f"SELECT ?d WHERE {{ {m} dcterms:description ?d }}") == [
        {"d": "A newer description."}
    ]
    assert select(store, f"SELECT ?n WHERE {{ {m} kg:paperCount ?n }}") == [{"n": 2500}]
    origins = {
        r["g"].rsplit("/", 1)[1]: r["dump"].rsplit("/", 1)[1]
        for r in select(
            store,
            """PREFIX prov: <http://www.w3.org/ns/prov#>
            SELECT ?g ?dump WHERE { ?g prov:wasDerivedFrom ?dump .
                                    FILTER(CONTAINS(STR(?g), "pwc-methods")) }""",
        )
    }
    # unchanged entities keep pointing at the dump they were first read from
    assert origins == {"resnet": "2022-01-01", "other": "2021-01-01", "brand-new": "2022-01-01"}


def test_the_gzip_header_dates_the_snapshot(tmp_path: Path) -> None:
    store = GraphStore.memory()
    load(store, dump_samples.write(tmp_path, "methods", gz_mtime=1653066858))  # 2022-05-20
    assert one(store, "SELECT ?s WHERE { ?d a kg:Dump ; kg:snapshot ?s }") == {"s": "2022-05-20"}
    # --snapshot wins over the header
    other = GraphStore.memory()
    load(other, tmp_path / "methods.json.gz", snapshot="2023-01-02")
    assert one(other, "SELECT ?s WHERE { ?d a kg:Dump ; kg:snapshot ?s }") == {"s": "2023-01-02"}


def test_dump_names_drop_the_date(tmp_path: Path) -> None:
    """Evaluation graphs are keyed by dump name, so a dated file replaces the undated one."""
    store = GraphStore.memory()
    load(store, dump_samples.write(tmp_path, "evaluation-tables"))
    changed = json.loads(json.dumps(dump_samples.EVALUATION))
    changed[0]["description"] = "Changed."
    report = load(
        store,
        dump_samples.write(
            tmp_path, "evaluation-tables", changed, name="evaluation-tables-2021-03-01.json"
        ),
        snapshot="2021-03-01",
    )
    assert (report.updated, report.added) == (1, 1)  # the table, and the new dump node
    graphs = select(store, "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?t kg:subtaskOf ?p } }")
    assert graphs == [{"g": f"{BASE}graph/pwc-evaluation/evaluation-tables/image-classification"}]


# --- streaming and the generator ------------------------------------------------------------


def test_reading_and_mapping_a_dump_is_streamed(tmp_path: Path) -> None:
    """Memory does not follow file size: a ~25 MB papers dump is mapped in a few MB."""
    path = write_archive(tmp_path, scale=0.01, kinds=("papers-with-abstracts",))[
        "papers-with-abstracts"
    ]
    with gzip.open(path, "rb") as f:
        size = sum(len(chunk) for chunk in iter(lambda: f.read(1 << 20), b""))
    assert size > 20_000_000
    ctx = Context(Iris(BASE), source_file=path.name)
    kind = KINDS["papers-with-abstracts"]
    tracemalloc.start()
    items = 0
    for item in read_items(str(path)):
        for _ in kind.map(item.value, ctx):
            pass
        items += 1
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert items == 5763
    assert peak < size / 5, f"peak {peak:,} bytes for a {size:,}-byte file"


def test_generated_archive_merges_every_paper_reference(tmp_path: Path) -> None:
    """Evaluation rows name papers by arXiv URL or title: all resolve to the slug papers."""
    paths = write_archive(tmp_path, scale=0.002)
    named: set[str] = set()  # the papers the evaluation rows name (by arXiv URL or title)

    def walk(task: dict[str, Any]) -> None:
        for dataset in task["datasets"]:
            named.update(r["paper_title"] for r in dataset["sota"]["rows"] if r["paper_title"])
        for sub in task["subtasks"]:
            walk(sub)

    for root in json.loads(gzip.decompress(paths["evaluation-tables"].read_bytes())):
        walk(root)
    store = GraphStore.memory()
    report = load(store, tmp_path)
    assert report.rejected == 0, report.errors[:3]
    assert set(report.kinds) == set(DUMP_KINDS)
    fallback = select(
        store,
        f"""SELECT (COUNT(DISTINCT ?p) AS ?n) WHERE {{ ?p a kg:Paper
              FILTER(STRSTARTS(STR(?p), "{BASE}paper/arxiv/") || STRSTARTS(STR(?p), "{BASE}paper/title/")) }}""",
    )
    assert fallback == [{"n": 0}]
    merged = one(
        store,
        """SELECT (COUNT(DISTINCT ?p) AS ?n) WHERE { ?p kg:hasResult ?r ; kg:pwcSlug ?s ;
                                                     dcterms:abstract ?a }""",
    )
    assert merged["n"] == len(named) > 10


def _citing(task: str, code_link: dict[str, Any]) -> dict[str, Any]:
    """A task entry whose one leaderboard row cites the sample paper with `code_link`."""
    row = {
        "model_name": f"Model for {task}",
        "paper_title": dump_samples.TITLE,
        "paper_url": f"http://arxiv.org/abs/{dump_samples.ARXIV}v1",
        "paper_date": dump_samples.DATE,
        "metrics": {"Accuracy": "90.1"},
        "code_links": [code_link],
        "model_links": [],
    }
    dataset = {"dataset": f"Set of {task}", "sota": {"metrics": ["Accuracy"], "rows": [row]}}
    return {"task": task, "categories": [], "datasets": [dataset], "subtasks": []}


@pytest.mark.parametrize("batch_size", [1, 100])
def test_a_paper_cited_again_is_stated_once_and_reported_each_time(
    tmp_path: Path, batch_size: int
) -> None:
    """Rows of several tables citing one paper with the same code links state it in one
    part graph, but each reports what it leaves out or does not know, as when each was
    mapped on its own (a repeated part is not mapped again, kg/ingest/dumps/evaluation.py `part`)."""
    good = {"title": "a/b", "url": "https://github.com/a/b"}
    odd = {"title": "c/d", "url": "https://github.com/c/d", "stars": 5}
    bad = {"title": "e/f", "url": "not a repository"}
    tasks = [("Task A", good), ("Task B", good), ("Task C", good), ("Task D", odd),
             ("Task E", odd), ("Task F", bad), ("Task G", bad)]  # fmt: skip
    path = tmp_path / "evaluation-tables.json"
    path.write_text(json.dumps([_citing(t, link) for t, link in tasks]), encoding="utf-8")
    store = GraphStore.memory()
    report = load(store, path, batch_size=batch_size)
    assert report.rejected == 0
    where = "datasets[0].sota.rows[0].code_links[0]"
    assert report.unknown_keys[f"{where}.stars"] == 2  # Task D and Task E
    assert report.not_mapped[f"{where.replace('[0]', '[]')}.url (not a repository URL)"] == 2
    parts = select(
        store,
        """SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o }
            FILTER (CONTAINS(STR(?g), "/paper/")) } GROUP BY ?g ORDER BY ?g""",
    )
    # the paper as the first row states it, and what the rows linking c/d add to it (the
    # rows with a link that is no repository add nothing); each link with its position
    assert [(str(r["g"]).rsplit("evaluation-tables/", 1)[1], r["n"]) for r in parts] == [
        (f"paper/arxiv/{dump_samples.ARXIV}", 16),
        (f"paper/arxiv/{dump_samples.ARXIV}/-/1", 10),
    ], parts
    links = select(
        store,
        "SELECT DISTINCT ?url WHERE { ?p kg:codeLink ?c . ?c kg:linkedUrl ?url } ORDER BY ?url",
    )
    assert [str(r["url"]) for r in links] == ["https://github.com/a/b", "https://github.com/c/d"]
    results = select(store, "SELECT (COUNT(?r) AS ?n) WHERE { ?p kg:hasResult ?r }")
    assert results == [{"n": len(tasks)}]


@pytest.mark.parametrize("kind", DUMP_KINDS)
def test_a_2025_archive_file_is_its_kind_licensed_and_reports_a_field_kg_does_not_map(
    kind: str, tmp_path: Path
) -> None:
    """`jul-28-methods.json.gz` is Papers with Code's methods dump (its licence is known),
    and a field the 2025 files might add is counted, not dropped in silence."""
    from kg.testing.dumps import FILES_2025

    items = [dict(item) for item in dump_samples.ALL[kind]]
    items[0]["field_new_in_2025"] = "a value"
    path = tmp_path / FILES_2025[kind][0].removesuffix(".gz")
    path.write_text(json.dumps(items))
    store = GraphStore.memory()
    report = load(store, path, snapshot="2025-07-28")
    assert report.unknown_keys == {"field_new_in_2025": 1}
    assert select(store, "SELECT ?name ?licence WHERE { ?d kg:dumpName ?name ; "
                  "dcterms:license ?licence }") == [
        {"name": kind, "licence": "https://creativecommons.org/licenses/by-sa/4.0/"}
    ]
