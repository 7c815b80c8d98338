"""Leaderboards: one node per result, metric directions, the best-so-far series, `kg leaderboard`.

The README store (`readme_store`, read-only) is checked against plain Python over the raw
2020 evaluation tables (examples/pwc/evaluation-tables.json.gz)."""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kg.ingest.identity import pwc_slug
from kg.query.directions import DIRECTIONS, metric_direction, parse_rules
from kg.rdf.results import SelectResult
from kg.rdf.store import GraphStore
from tests.conftest import PREFIXES, ROOT, run

RAW_TABLES = ROOT / "examples" / "pwc" / "evaluation-tables.json.gz"


def _select(path: Path, query: str) -> list[dict[str, object]]:
    store = GraphStore.open(path, read_only=True)
    try:
        result = store.query(PREFIXES + query)
        assert isinstance(result, SelectResult)
        return result.dicts()
    finally:
        store.close()


# --- one result, one node -------------------------------------------------------------------


def test_a_result_listed_under_two_spellings_of_its_dataset_is_one_node(
    readme_store: Path, cli: CliRunner
) -> None:
    """The 2020 file lists the unsupervised-translation rows under "WMT2016 English--Romanian"
    and "WMT2016 English-Romanian": one dataset by slug, so one result per row."""
    rows = _select(
        readme_store,
        "SELECT (COUNT(DISTINCT ?r) AS ?n) WHERE { ?r a kg:EvaluationResult }",
    )
    assert int(str(rows[0]["n"])) == 24150
    result = run(
        cli,
        "--store", str(readme_store), "query", "leaderboard", "-f", "json",
        "-p", "task=unsupervised-machine-translation", "-p", "dataset=wmt2016-english-romanian",
        "-p", "metric=BLEU",
    )
    assert result.exit_code == 0, result.output
    bindings = json.loads(result.output)["results"]["bindings"]
    assert [(b["model"]["value"], b["value"]["value"]) for b in bindings] == [
        ("MASS (6-layer Transformer)", "35.2"),
        ("MLM pretraining for encoder and decoder", "33.3"),
        ("GPT-3 175B (Few-Shot)", "21"),
    ]


# --- metric directions ----------------------------------------------------------------------


def _raw_tables() -> list[dict[str, Any]]:
    with gzip.open(RAW_TABLES, "rt", encoding="utf-8") as f:
        data: list[dict[str, Any]] = json.load(f)
    return data


def _raw_metric_names() -> set[str]:
    """Every metric name of the bundled 2020 tables (sota.metrics and the rows' keys),
    whitespace cleaned, found by walking the raw JSON."""
    names: set[str] = set()

    def dataset(d: dict[str, Any]) -> None:
        sota = d.get("sota") or {}
        names.update(" ".join(m.split()) for m in sota.get("metrics") or [])
        for row in sota.get("rows") or []:
            names.update(" ".join(m.split()) for m in row.get("metrics") or {})
        for sub in d.get("subdatasets") or []:
            dataset(sub)

    def task(t: dict[str, Any]) -> None:
        for d in t.get("datasets") or []:
            dataset(d)
        for sub in t.get("subtasks") or []:
            task(sub)

    for t in _raw_tables():
        task(t)
    return names


#: The metric names of the bundled tables that kg cannot place: column names that are a
#: split or a setting ("Test", "Validation", "Pre-Training Dataset"), and abbreviations the
#: rule does not know. They show "direction unknown"; a rule change that moves one is seen here.
UNKNOWN = {
    "# of clusters (k)", "1-NNA-CD", "10 Hops", "10 fold Cross validation", "10%", "4 Hops",
    "5 Hops", "5 fold cross validation", "6 Hops", "7 Hops", "8 Hops", "9 Hops", "AOP", "ATV",
    "AUC Stdev", "Adversarial", "All", "Ambiguous dataset", "BA", "Base Dataset", "CIS", "CR",
    "CVGTCE", "Consistency", "DE", "DF", "DLD", "DS", "Dev", "EaH@95", "EaH@99", "FRD", "FS",
    "FSF", "GTE", "HP", "I. Obstruction", "IED", "LD", "MOTP", "MOVIE", "MRPC", "MSE stdev",
    "Model Entropy", "Multi-View or Monocular", "NI", "NT", "Number of Events", "Path Difference",
    "Path Length", "Pre-Training Dataset", "ReVerb45k", "Real", "Reference images", "SD", "SIMM",
    "STS", "Scaled time-delay embeddings", "Sparsity", "Step Change (10^−3)", "Test",
    "Training Split", "Training images", "Using 2D ground-truth joints", "VS", "Val", "Validation",
    "count", "rsim",
}
#: Words that make a metric lower-is-better (the issue's list), and the named exceptions.
LOWER_WORDS = ("error", "loss", "perplexity", "fid", "wer", "mae", "rmse", "eer", "latency", "param")
LOWER_EXCEPTIONS = {"AUC (horizon error)"}  # an area under an error curve: higher
HIGHER_WORDS = ("accuracy", "f1", "bleu", "rouge", "precision", "recall", "map", "iou", "psnr")


def test_every_metric_name_of_the_bundled_tables_is_placed() -> None:
    names = _raw_metric_names()
    assert len(names) == 961
    placed = {name: metric_direction(name) for name in names}
    assert set(placed.values()) <= set(DIRECTIONS)
    assert {n for n, d in placed.items() if d == "unknown"} == UNKNOWN
    counts = {d: sum(1 for v in placed.values() if v == d) for d in DIRECTIONS}
    assert counts == {"higher": 665, "lower": 227, "unknown": 69}  # docs/leaderboards.md
    words = re.compile("|".join(LOWER_WORDS))
    for name in names:
        if words.search(name.lower()) and name not in LOWER_EXCEPTIONS:
            assert placed[name] == "lower", name
        elif any(w in name.lower() for w in HIGHER_WORDS) and not words.search(name.lower()):
            assert placed[name] == "higher", name
    assert placed["Top 1 Accuracy"] == "higher" and placed["AUC (horizon error)"] == "higher"
    for name in ("FID", "Word Error Rate (WER)", "Number of params", "Inference Time (ms)",
                 "Test perplexity", "EER", "Mean Rank", "Top-1 Error Rate", "Chamfer Distance"):
        assert placed[name] == "lower", name


def test_the_direction_rule_is_data_and_a_bad_entry_is_named() -> None:
    rules = parse_rules(
        '[exact]\n"My Score" = "lower"\n[[rule]]\ndirection = "higher"\npatterns = ["score"]\n'
    )
    assert rules.place(" my   SCORE ") == "lower"
    assert rules.place("Other Score") == "higher"
    assert rules.place("Widgets") == "unknown"
    with pytest.raises(ValueError, match="sideways"):
        parse_rules('[[rule]]\ndirection = "sideways"\npatterns = ["x"]\n')


# --- the best so far, from the raw tables -----------------------------------------------------

_PLAIN_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?%?$")


def _raw_boards() -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Rows of each (task slug, top-level dataset slug) in the raw tables, wherever the task
    tree lists them."""
    boards: dict[tuple[str, str], list[dict[str, Any]]] = {}

    def task(t: dict[str, Any]) -> None:
        name = " ".join((t.get("task") or "").split())
        if name:
            for d in t.get("datasets") or []:
                dataset = " ".join((d.get("dataset") or "").split())
                rows = (d.get("sota") or {}).get("rows") or []
                if dataset and rows:
                    boards.setdefault((pwc_slug(name), pwc_slug(dataset)), []).extend(rows)
        for sub in t.get("subtasks") or []:
            task(sub)

    for t in _raw_tables():
        task(t)
    return boards


def _raw_series(rows: list[dict[str, Any]], metric: str) -> list[tuple[str, float, str]] | None:
    """(date, value, model) of each dated row with a plain number, one per distinct result;
    None when a value is not a plain number (kg parses more forms than this test does)."""
    points = set()
    for row in rows:
        raw = (row.get("metrics") or {}).get(metric)
        if raw is None:
            continue
        if not isinstance(raw, str) or not _PLAIN_NUMBER.match(raw.strip()):
            return None
        if row.get("paper_date"):
            model = " ".join((row.get("model_name") or "").split())
            points.add((row["paper_date"][:10], float(raw.strip().rstrip("%")), model))
    return sorted(points)


def _fifty_series() -> list[tuple[str, str, str, list[tuple[str, float, str]]]]:
    """50 leaderboard metrics spread over the raw tables: every metric with at least 5
    dated plain-number results, in (task, dataset, metric) order, every k-th."""
    found = []
    for (task, dataset), rows in sorted(_raw_boards().items()):
        metrics = sorted({" ".join(m.split()) for r in rows for m in (r.get("metrics") or {})})
        for metric in metrics:
            raw_names = {m for r in rows for m in (r.get("metrics") or {}) if " ".join(m.split()) == metric}
            if len(raw_names) != 1:
                continue
            series = _raw_series(rows, raw_names.pop())
            if series is not None and len(series) >= 5:
                found.append((task, dataset, metric, series))
    step = max(1, len(found) // 50)
    return found[::step][:50]


def test_best_so_far_of_50_leaderboards_matches_the_raw_tables(
    readme_store: Path, cli: CliRunner
) -> None:
    """`kg leaderboard --history` against the series computed from the raw JSON: the same
    points (date, value, model), oldest first, and after each date the best value so far."""
    chosen = _fifty_series()
    assert len(chosen) == 50
    for task, dataset, metric, raw in chosen:
        result = run(
            cli, "--store", str(readme_store), "leaderboard", task, dataset,
            "--metric", metric, "--history", "--format", "json",
        )
        assert result.exit_code == 0, (task, dataset, metric, result.output)
        history = json.loads(result.stdout)
        where = f"{task}/{dataset} {metric}"
        assert [set(p) for p in history] == [{"date", "value", "model", "paper", "best"}] * len(history)
        got = sorted((p["date"], float(p["value"]), p["model"] or "") for p in history)
        assert got == raw, where
        dates = [p["date"] for p in history]
        assert dates == sorted(dates), where
        lower = metric_direction(metric) == "lower"
        best: float | None = None
        by_date: dict[str, float] = {}
        for date, value, _ in raw:
            if best is None or (value < best if lower else value > best):
                best = value
            by_date[date] = best
        last_of_date = {p["date"]: float(p["best"]) for p in history}
        assert last_of_date == by_date, where


# --- code: official first, then the source's order ----------------------------------------


def _repo_key(url: str) -> str:
    """owner/name of a GitHub URL, as kg keys repositories (lower case)."""
    parts = url.split("://", 1)[-1].split("/")
    return "/".join(parts[1:3]).lower()


def test_code_is_listed_in_the_order_the_table_rows_give(
    readme_store: Path, cli: CliRunner
) -> None:
    """The tables give no official flag: each paper's code on the ImageNet board comes in
    the order its row lists it (checked against the raw JSON wherever the paper's rows all
    agree on that order), in JSON, CSV and the table alike. NoisyStudent's first."""
    data = json.loads(gzip.decompress(RAW_TABLES.read_bytes()))
    orders: dict[str, set[tuple[str, ...]]] = {}

    def walk(tasks: list[dict[str, Any]]) -> None:
        for t in tasks:
            for d in t.get("datasets") or []:
                for ds in [d, *(d.get("subdatasets") or [])]:
                    for row in (ds.get("sota") or {}).get("rows") or []:
                        links = [_repo_key(c["url"]) for c in row.get("code_links") or [] if c.get("url")]
                        title = " ".join((row.get("paper_title") or "").split())
                        orders.setdefault(title, set()).add(tuple(dict.fromkeys(links)))
            walk(t.get("subtasks") or [])

    walk(data)
    board = json.loads(
        run(cli, "--store", str(readme_store), "leaderboard", "image-classification",
            "imagenet", "--format", "json").stdout
    )
    titles = {e["paper"]: e["title"] for s in board["sections"] for e in s["entries"]}
    checked = 0
    for paper, codes in board["code"].items():
        found = orders.get(titles[paper] or "", set())
        (order, *others) = found or {()}
        if others or not order:
            continue  # rows of this title disagree, or name the paper under another title
        got = [c["repository"].split("/repository/github.com/", 1)[-1] for c in codes]
        assert got == list(order), titles[paper]
        checked += 1
    assert checked > 80  # 91 of the board's papers
    noisy = next(p for p, t in titles.items() if t and t.startswith("Self-training with Noisy"))
    first, second = board["code"][noisy][:2]
    assert first["repository"].endswith("/tensorflow/tpu")
    assert second["repository"].endswith("/google-research/noisystudent")
    as_csv = run(
        cli, "--store", str(readme_store), "leaderboard", "image-classification", "imagenet",
        "--metric", "Top 1 Accuracy", "--format", "csv",
    )
    rows = {r["model"]: r for r in csv.DictReader(io.StringIO(as_csv.stdout))}
    assert rows["NoisyStudent (EfficientNet-L2)"]["code"].startswith("tensorflow/tpu")


def test_official_code_comes_first_whatever_the_record_order(tmp_path: Path) -> None:
    """A record lists org/zoo first and the official beta-lab/beta second: the official one
    leads; the position of each is kept in the graph (schema:position)."""
    from kg.query.leaderboard import load
    from tests.query_data import BASE, build, write_mini

    store = build(GraphStore.memory(), [str(write_mini(tmp_path))])
    board = load(store, "image-classification", "imagenet", BASE)
    beta = next(p for p in board.code if p.endswith("/beta"))
    assert [(c.repo.rsplit("/", 2)[-2:], c.official) for c in board.code[beta]] == [
        (["beta-lab", "beta"], True), (["org", "zoo"], False),
    ]
    result = store.query(
        "SELECT ?repo ?place WHERE { ?link <https://w3id.org/kg/ontology#repository> ?repo ; "
        "<https://schema.org/position> ?place } ORDER BY ?place"
    )
    assert isinstance(result, SelectResult)
    places = {(str(r["repo"]).rsplit("/", 1)[-1], int(str(r["place"]))) for r in result.dicts()}
    assert {("beta", 2), ("zoo", 1)} <= places


# --- kg leaderboard -----------------------------------------------------------------------------


def test_kg_leaderboard_prints_the_imagenet_table_best_first_with_its_chart(
    readme_store: Path, cli: CliRunner
) -> None:
    result = run(
        cli, "--store", str(readme_store), "leaderboard", "image-classification", "imagenet",
        "--metric", "top 1 accuracy", "--chart", "--format", "table",
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].strip() == "Image Classification on ImageNet: Top 1 Accuracy"
    first = next(line for line in lines if line.lstrip("│ ").startswith("1 "))
    assert "FixEfficientNet-" in first and "88.5%" in first and "2020-03-18" in first
    assert "196 results; higher is better: highest first" in result.stdout
    assert "Top 1 Accuracy: the best so far" in result.stdout and "best so far" in lines[-1]

    as_csv = run(
        cli, "--store", str(readme_store), "leaderboard", "image-classification", "imagenet",
        "--metric", "Top 1 Accuracy", "--format", "csv",
    )
    rows = list(csv.DictReader(io.StringIO(as_csv.stdout)))
    assert (rows[0]["rank"], rows[0]["model"], rows[0]["value"]) == ("1", "FixEfficientNet-L2", "88.5%")
    assert len(rows) == 196 and rows[0]["direction"] == "higher"

    by_name = run(
        cli, "--store", str(readme_store), "leaderboard", "Image Classification", "ImageNet",
        "--metric", "Top 1 Accuracy", "--format", "csv",
    )
    assert by_name.exit_code == 0 and by_name.stdout == as_csv.stdout

    as_json = json.loads(
        run(cli, "--store", str(readme_store), "leaderboard", "image-classification",
            "imagenet", "--format", "json").stdout
    )
    assert [s["metric"] for s in as_json["sections"]] == ["Top 1 Accuracy", "Top 5 Accuracy", "Number of params"]
    assert [s["direction"] for s in as_json["sections"]] == ["higher", "higher", "lower"]
    params = as_json["sections"][2]["entries"]
    assert [e["number"] for e in params] == sorted(e["number"] for e in params if e["number"] is not None)
    (source,) = as_json["sources"]
    assert source["snapshot"] == "2020-08-28"
    assert source["licence"] == "https://creativecommons.org/licenses/by-sa/4.0/"


def test_kg_leaderboard_errors_name_the_fix(readme_store: Path, cli: CliRunner) -> None:
    result = run(
        cli, "--store", str(readme_store), "leaderboard", "image-classification", "imagenet",
        "--metric", "BLEU",
    )
    assert result.exit_code == 1
    assert "--metric 'BLEU' is no metric of Image Classification on ImageNet" in result.stderr
    assert "'Top 1 Accuracy'" in result.stderr
    missing = run(cli, "--store", str(readme_store), "leaderboard", "image-classification", "imagenett")
    assert missing.exit_code == 1
    assert "no dataset named 'imagenett'; did you mean: imagenet (ImageNet)" in missing.stderr
    typo = run(cli, "--store", str(readme_store), "leaderboard", "image-clasification", "imagenet")
    assert typo.exit_code == 1
    assert "no task named 'image-clasification'; did you mean: image-classification" in typo.stderr
    nothing = run(cli, "--store", str(readme_store), "leaderboard", "machine-translation", "imagenet")
    assert nothing.exit_code == 1
    assert "no leaderboard for task 'machine-translation' on dataset 'imagenet'" in nothing.stderr
    bad = run(cli, "--store", str(readme_store), "leaderboard", "a", "b", "--format", "xml")
    assert bad.exit_code == 2 and "--format xml is not one of: table, tsv, csv, json" in bad.stderr


def test_kg_leaderboard_prints_hostile_names_as_text(tmp_path: Path, cli: CliRunner) -> None:
    """Markup in a label, metric or model name is printed as it is, never interpreted."""
    rows = [
        {"model_name": "[/red][bold]Boom", "paper_title": "[link=x]t[/link]", "paper_date": "2020-01-01",
         "paper_url": "https://arxiv.org/abs/2001.00001", "metrics": {"Acc [/] %": "80.1"}},
        {"model_name": "<script>x</script>", "paper_title": "Two", "paper_date": "2019-01-01",
         "paper_url": "https://arxiv.org/abs/1901.00001", "metrics": {"Acc [/] %": "70"}},
    ]
    table = [{"task": "Task [/b]", "datasets": [{"dataset": "Set", "sota": {"rows": rows}}]}]
    path = tmp_path / "evaluation-tables.json"
    path.write_text(json.dumps(table), encoding="utf-8")
    store = str(tmp_path / "store")
    assert run(cli, "--store", store, "ingest", "-q", str(path)).exit_code == 0
    result = run(cli, "--store", store, "leaderboard", "task-b", "set", "--chart", "-f", "table")
    assert result.exit_code == 0, result.output
    assert "Task [/b] on Set: Acc [/] %" in result.stdout
    assert "[/red][bold]Boom" in result.stdout and "<script>x</script>" in result.stdout
    history = json.loads(run(cli, "--store", store, "leaderboard", "Task [/b]", "Set", "--history", "-f", "json").stdout)
    assert [(p["model"], p["best"]) for p in history] == [("<script>x</script>", 70), ("[/red][bold]Boom", 80.1)]
