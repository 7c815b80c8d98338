"""Suggested links measured (issue 33): kg's method against the most popular item, TransE and
DistMult (PyKEEN, CPU), on the same split with the same protocol.

    pip install torch==2.13.0 && pip install -e '.[bench]'     # the CPU wheel, then PyKEEN
    python bench/suggest.py [--stores DIR] [--only NAME,...] [--seed 0] [--trials 6]
                            [--trial-seconds 20] [--json OUT]
    python bench/suggest.py --timings [--store STORE --paper IRI] [--train]

For each store (built once into --stores: the README store from examples/, and the real
slices in ../shared/data/raw/):

1. The test split (kg.graph.holdout.split, --seed): 10 % of each relation's links
   (paper–task, paper–dataset, paper–method) held out at random, every statement that gives
   a held-out link hidden (a held-out paper–task link takes the paper's results on that task
   with it). The rest is the training graph; everything below learns from it only.
2. The validation split, carved the same way from the training links (--seed + 1).
   kg tunes its settings on it (kg.graph.suggest.tune: `len(GRID)` trials per relation,
   then `len(TEXT_WEIGHTS) - 1` more for the weight of the paper's text);
   the embedding models get a random search of --trials configurations on the same
   validation split, each trained up to --trial-seconds of CPU, the best per relation
   (validation filtered MRR) then retrained on the whole training graph for as long.
   Their budget (trials and CPU seconds) is at least kg's; the script prints both.
3. Every candidate item of the relation ranked for each held-out (paper, ?) pair, filtered
   (the paper's other true items left out), ties counting half; MRR and Hits@1/3/10.

The embedding models learn from the same links kg does: the training incidence as triples
(paper, relation, item) over all five relations. torch runs on one thread.

kg also reads the papers' titles and abstracts and the items' names (kg.graph.content):
no link, and nothing of an item but its names. A name can still *be* a paper's title (the
method `Layer Normalization` of the paper "Layer Normalization"); the row "kg, strict"
scores each held-out link without the item's names that equal its paper's title, so that
no figure rests on a name copied from the held-out paper.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RAW = ROOT.parent / "shared" / "data" / "raw"
SOURCES = {
    "readme": [ROOT / "examples"],
    "evaluation-tables-2020": [RAW / "pwc-evaluation-tables-2020"],
    "sota-extractor-tasks": [RAW / "sota-extractor-tasks"],
    "methods-2022": [RAW / "pwc-methods-2022"],
}


def build(stores: Path, name: str) -> Path:
    path = stores / name
    if not (path / ".built").exists():
        cmd = [sys.executable, "-m", "kg", "--store", str(path), "ingest", "-q"]
        subprocess.run([*cmd, *map(str, SOURCES[name])], check=True, cwd=ROOT)
        (path / ".built").write_text("ok")
    return path


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


# --- the embedding baselines ------------------------------------------------------------------

SPACE: dict[str, list[Any]] = {
    "embedding_dim": [32, 64, 128],
    "lr": [0.001, 0.003, 0.01, 0.03],
    "num_negs_per_pos": [1, 4, 16],
    "batch_size": [256, 1024],
}
MODEL_SPACE: dict[str, dict[str, list[Any]]] = {
    "TransE": {"scoring_fct_norm": [1, 2]},
    "DistMult": {},
}


def configurations(model: str, trials: int, seed: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    space = {**SPACE, **MODEL_SPACE[model]}
    out: list[dict[str, Any]] = []
    while len(out) < trials:
        config = {k: v[int(rng.integers(len(v)))] for k, v in space.items()}
        if config not in out:
            out.append(config)
    return out


class Embedding:
    """A PyKEEN model over the training incidence: entity ids are paper rows, then
    n_papers + item columns, so scores map straight back to the candidates."""

    def __init__(self, inc: Any, model: str, config: dict[str, Any], seed: int) -> None:
        import torch
        from pykeen.models import DistMult, TransE
        from pykeen.training import SLCWATrainingLoop
        from pykeen.triples import TriplesFactory

        torch.set_num_threads(1)
        torch.manual_seed(seed)
        self.n_papers, n_items = inc.shape
        coo = inc.matrix.tocoo()
        triples = np.stack(
            [coo.row, inc.item_relation[coo.col].astype(np.int64), self.n_papers + coo.col],
            axis=1,
        ).astype(np.int64)
        entities = {str(i): i for i in range(self.n_papers + n_items)}
        relations = {r: i for i, r in enumerate(inc.relations)}
        self.relations = relations
        self.factory = TriplesFactory(
            mapped_triples=torch.as_tensor(triples),
            entity_to_id=entities,
            relation_to_id=relations,
        )
        kind = {"TransE": TransE, "DistMult": DistMult}[model]
        extra = {"scoring_fct_norm": config["scoring_fct_norm"]} if model == "TransE" else {}
        self.model = kind(
            triples_factory=self.factory,
            embedding_dim=config["embedding_dim"],
            random_seed=seed,
            **extra,
        )
        self.loop = SLCWATrainingLoop(
            model=self.model,
            triples_factory=self.factory,
            optimizer=torch.optim.Adam(self.model.get_grad_params(), lr=config["lr"]),
            negative_sampler_kwargs={"num_negs_per_pos": config["num_negs_per_pos"]},
        )
        self.batch_size = config["batch_size"]
        self.epochs = 0

    def train(self, seconds: float, max_epochs: int | None = None) -> float:
        """Train epoch by epoch until `seconds` of CPU are spent (or `max_epochs`)."""
        started = time.process_time()
        while time.process_time() - started < seconds and (
            max_epochs is None or self.epochs < max_epochs
        ):
            self.loop.train(
                triples_factory=self.factory,
                num_epochs=self.epochs + 1,
                batch_size=self.batch_size,
                use_tqdm=False,
                continue_training=self.epochs > 0,
            )
            self.epochs += 1
        return time.process_time() - started

    def scorer(self, relation: str) -> Any:
        import torch

        rel = self.relations[relation]
        n_papers = self.n_papers

        def scores(rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
            self.model.eval()
            with torch.no_grad():
                hr = torch.as_tensor(np.stack([rows, np.full(len(rows), rel)], axis=1))
                all_scores = self.model.score_t(hr).numpy()
            return np.asarray(all_scores[:, n_papers + columns], dtype=np.float64)

        return scores


def embedding_baseline(
    evidence: Any, test: Any, valid: Any, model: str, args: argparse.Namespace
) -> dict[str, Any]:
    from kg.graph.holdout import evaluate

    started = time.process_time()
    train_valid = valid.train()
    trials: list[dict[str, Any]] = []
    for n, config in enumerate(configurations(model, args.trials, args.seed)):
        emb = Embedding(train_valid, model, config, args.seed)
        spent = emb.train(args.trial_seconds)
        scores = evaluate(valid, {r: emb.scorer(r) for r in valid.held_out})
        trials.append({"config": config, "epochs": emb.epochs, "seconds": spent, "valid": scores})
        print(f"  {model} trial {n}: {config} {emb.epochs} epochs {spent:.1f} s "
              + " ".join(f"{r} {s['mrr']:.4f}" for r, s in scores.items()), flush=True)
    tuning = time.process_time() - started
    train = test.train()
    results: dict[str, Any] = {}
    final: dict[int, tuple[Any, float]] = {}
    for relation in test.held_out:
        best = max(
            range(len(trials)),
            key=lambda i: (trials[i]["valid"].get(relation, {}).get("mrr", 0.0), -i),
        )
        if best not in final:
            emb = Embedding(train, model, trials[best]["config"], args.seed)
            spent = emb.train(float("inf"), max_epochs=max(1, trials[best]["epochs"]))
            final[best] = (emb, spent)
        emb, spent = final[best]
        results[relation] = {
            **evaluate(test, {relation: emb.scorer(relation)})[relation],
            "settings": {**trials[best]["config"], "epochs": emb.epochs},
            "train_seconds": round(spent, 1),
        }
    return {"tuning_seconds": round(tuning, 1), "trials": len(trials), "relations": results}


# --- one store --------------------------------------------------------------------------------


def run_store(path: Path, args: argparse.Namespace) -> dict[str, Any]:
    from kg.graph import suggest
    from kg.graph.holdout import Evidence, evaluate, split
    from kg.graph.incidence import load_incidence
    from kg.rdf.store import GraphStore

    store = GraphStore.open(path, read_only=True)
    full = load_incidence(store)
    evidence = Evidence.read(store, full)
    test = split(evidence, seed=args.seed)
    valid = split(evidence, seed=args.seed + 1, kept=test.kept)
    out: dict[str, Any] = {
        "papers": full.shape[0],
        "links": {r: len(h[0]) for r, h in test.held_out.items()},
    }
    # kg: tuned on the validation split, fitted on the training graph.
    started = time.process_time()
    text = suggest.read_text(store, full)
    read = time.process_time() - started
    trained = suggest.tune(evidence, kept=test.kept, seed=args.seed + 1, text=text)
    votes = suggest.votes_of(test.train(), text)
    fitted = time.process_time() - started
    kg_scores = evaluate(
        test,
        {
            r: functools.partial(votes.scores, settings=trained.for_relation(r))
            for r in test.held_out
        },
    )
    out["kg"] = {
        "tuning_seconds": round(fitted, 2),
        "text_read_seconds": round(read, 2),
        "trials": trained.trials,
        "relations": {
            r: {**m, "settings": trained.for_relation(r).as_dict()} for r, m in kg_scores.items()
        },
    }
    strict, dropped = strict_scorers(store, full, test, votes, trained)
    out["kg, strict"] = {
        "dropped": dropped,
        "relations": {
            r: {**m, "settings": {"names equal to the title dropped": dropped[r]}}
            for r, m in evaluate(test, strict).items()
        },
    }
    # the same model trained on the whole store, as `kg suggest` does (its training time)
    started = time.perf_counter()
    suggest.train(store, full)
    out["kg"]["train_whole_store_seconds"] = round(time.perf_counter() - started, 2)
    out["popular"] = {
        "relations": evaluate(
            test,
            {
                r: (lambda g, c: np.tile(votes.prior(c), (len(g), 1)))
                for r in test.held_out
            },
        )
    }
    for model in filter(None, args.models.split(",")):
        out[model] = embedding_baseline(evidence, test, valid, model, args)
    store.close()
    return out


def strict_scorers(
    store: Any, full: Any, test: Any, votes: Any, trained: Any
) -> tuple[dict[str, Any], dict[str, int]]:
    """kg's scorers with, for each held-out (paper, item) link, the item's names whose words
    are the paper's title's (in order) taken out of that link's text score: the score of
    the held-out item can only go down, every other candidate's stays."""
    from kg.graph.content import read_texts, words
    from kg.graph.holdout import relation_columns

    content = votes.content
    titles = read_texts(store, list(full.papers))
    scorers: dict[str, Any] = {}
    dropped: dict[str, int] = {}
    for relation, (rows, cols) in test.held_out.items():
        settings = trained.for_relation(relation)
        columns = relation_columns(full, relation)
        position = {int(c): i for i, c in enumerate(columns)}
        lower: dict[tuple[int, int], float] = {}
        count = 0
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            title = {tuple(s for s, _ in words(t))
                     for t in titles.get(full.papers[r], {}).get("title", [])}
            names = np.flatnonzero(content.name_column == c)
            kept = [n for n in names.tolist()
                    if tuple(s for s, _ in words(content.name_text[n])) not in title]
            count += len(names) - len(kept)
            if len(kept) == len(names) or not settings.text:
                continue
            row = votes.words[r]
            values = [0.0]
            values += [content.name_score(n, row.indices) for n in kept]
            full_text = float(content.scores(row, np.array([c]))[0, 0])
            lower[(r, position[c])] = settings.text * (full_text - max(values))
        dropped[relation] = count

        def scorer(g: Any, c: Any, relation: str = relation,
                   lower: dict[tuple[int, int], float] = lower) -> Any:
            scores = votes.scores(g, c, trained.for_relation(relation))
            for i, r in enumerate(g.tolist()):
                for (row, at), delta in lower.items():
                    if row == r:
                        scores[i, at] = round(scores[i, at] - delta, 12)
            return scores

        scorers[relation] = scorer
    return scorers, dropped


def train_timing(path: Path) -> dict[str, Any]:
    """`kg suggest --train` in a fresh process, the kept model removed first (the incidence
    and the similarity index stay: they are `kg similar`'s cache): wall and CPU seconds and
    the process's peak RSS."""
    import resource

    from kg.graph import cache
    from kg.rdf.store import GraphStore

    with GraphStore.open(path, read_only=True) as store:
        directory = cache.cache_directory(store, cache.content_key(store))
        cache.similarity_index(store, "all", "idf")  # written if it is not yet
    if directory is not None:  # the kept model: its settings and its names' index
        for kept in [*directory.glob("suggest-v*"), *directory.glob("content-v*.npz")]:
            kept.unlink()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = load_average()
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "kg", "--store", str(path), "suggest", "--train"],
        check=True, cwd=ROOT, capture_output=True,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "train_wall_s": round(wall, 1),
        "train_cpu_s": round(cpu, 1),
        "train_peak_rss_mb": round(after.ru_maxrss / 1024),
        "train_load_before": load,
        "train_load_after": load_average(),
    }


def timings(
    path: Path, paper: str = "attention-module-is-not-only-a-weight", train: bool = False
) -> dict[str, Any]:
    """A suggestion cold (a fresh `kg suggest`, the model on disk) and warm (in process),
    side by side with `kg similar` measured the same way; with `train`, the training first."""
    import statistics

    from kg.graph import cache, similarity, suggest
    from kg.rdf.store import GraphStore

    base = "https://w3id.org/kg/id/"
    out: dict[str, Any] = {"load_before": load_average()}
    if train:
        out.update(train_timing(path))
    for command in ("suggest", "similar"):  # the first run writes what the cache lacks
        cold = []
        for _ in range(4):
            started = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "kg", "--store", str(path), command, paper, "--json"],
                check=True, cwd=ROOT, capture_output=True,
            )
            cold.append(time.perf_counter() - started)
        out[f"{command}_cold_s"] = round(statistics.median(cold[1:]), 3)
    with GraphStore.open(path, read_only=True) as store:
        model = cache.suggest_model(store)
        index = cache.similarity_index(store, "all", "idf")
        for name, call in (
            ("suggest", lambda: suggest.suggest(store, paper, base_iri=base, model=model)),
            ("similar", lambda: similarity.similar(store, paper, base_iri=base, index=index)),
        ):
            call()
            warm = []
            for _ in range(30):
                started = time.perf_counter()
                call()
                warm.append(time.perf_counter() - started)
            out[f"{name}_warm_ms"] = round(1000 * statistics.median(warm), 1)
    out["load_after"] = load_average()
    return out


def table(results: dict[str, Any]) -> str:
    lines = [
        "| store | relation | held out | method | MRR | Hits@1 | Hits@3 | Hits@10 | settings |",
        "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for name, res in results.items():
        if name.startswith("_"):
            continue
        for relation, count in res["links"].items():
            for method in ["kg", "kg, strict", "popular", *[m for m in res if m in MODEL_SPACE]]:
                m = res.get(method, {}).get("relations", {}).get(relation)
                if m is None:
                    continue
                settings = m.get("settings", {})
                shown = ", ".join(f"{k}={v}" for k, v in settings.items())
                lines.append(
                    f"| {name} | {relation} | {count} | {method} | {m['mrr']:.4f} | "
                    f"{m['hits@1']:.4f} | {m['hits@3']:.4f} | {m['hits@10']:.4f} | {shown} |"
                )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stores", type=Path, default=Path("/tmp/kg-bench-suggest"))
    parser.add_argument("--only", default=",".join(SOURCES))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--trials", type=int, default=12)
    parser.add_argument("--trial-seconds", type=float, default=20.0)
    parser.add_argument("--models", default="TransE,DistMult", help="'' for none")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--timings", action="store_true", help="only time a suggestion")
    parser.add_argument("--store", type=Path, help="--timings on this store (default: README)")
    parser.add_argument("--paper", default="attention-module-is-not-only-a-weight")
    parser.add_argument("--train", action="store_true", help="--timings: time a training too")
    args = parser.parse_args()
    if args.timings:
        path = args.store or build(args.stores, "readme")
        print(json.dumps(timings(path, args.paper, args.train), indent=1))
        return
    args.stores.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"_load_before": load_average()}
    for name in args.only.split(","):
        path = build(args.stores, name)
        print(f"{name}: {path} (load {load_average()})", flush=True)
        results[name] = run_store(path, args)
        print(json.dumps(results[name], indent=1), flush=True)
        if args.json:
            args.json.write_text(json.dumps(results, indent=1))
    results["_load_after"] = load_average()
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    print(table(results))
    print(f"load average before {results['_load_before']}, after {results['_load_after']}")


if __name__ == "__main__":
    main()
