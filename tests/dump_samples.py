"""Hand-made items of the five Papers-with-Code dumps, in the documented field layout
(../shared/docs/design-notes.md), for the kinds that have no real slice here and for
fields the real slices leave empty. They agree with each other the way the real dumps do:
the same paper appears by slug, by arXiv id and by title.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

PWC = "https://paperswithcode.com"

#: One paper, named four ways across the dumps.
SLUG = "deep-residual-learning-for-image"
ARXIV = "1512.03385"
TITLE = "Deep Residual Learning for Image Recognition"
DATE = "2015-12-10"

PAPERS: list[dict[str, Any]] = [
    {
        "paper_url": f"{PWC}/paper/{SLUG}",
        "arxiv_id": ARXIV,
        "title": TITLE,
        "abstract": "Deeper neural networks are more difficult to train.",
        "url_abs": f"https://arxiv.org/abs/{ARXIV}v1",
        "url_pdf": f"https://arxiv.org/pdf/{ARXIV}v1.pdf",
        "proceeding": "CVPR 2016 6",
        "authors": ["Kaiming He", "Xiangyu Zhang", "Shaoqing Ren", "Jian Sun"],
        "tasks": ["Image Classification", "Object Detection"],
        "date": DATE,
        "methods": [
            {
                "name": "Residual Connection",
                "full_name": "Residual Connection",
                "description": "Skip connections that add the input to the output.",
                "introduced_year": 2000,
                "source_url": f"https://arxiv.org/abs/{ARXIV}v1",
                "source_title": TITLE,
                "code_snippet_url": "https://github.com/pytorch/vision/blob/main/resnet.py#L118",
                "main_collection": {
                    "name": "Skip Connections",
                    "description": "Connections that skip layers.",
                    "parent": "Feedforward Networks",
                    "area": "General",
                },
            },
            {
                "name": "ReLU",
                "full_name": "Rectified Linear Units",
                "description": "max(0, x).",
                "introduced_year": 2000,
                "source_url": None,
                "source_title": None,
                "code_snippet_url": None,
                "main_collection": None,
            },
        ],
    },
    {
        "paper_url": f"{PWC}/paper/a-paper-without-arxiv",
        "arxiv_id": None,
        "title": "A Paper Without arXiv",
        "abstract": "",
        "url_abs": "https://openreview.net/forum?id=abc",
        "url_pdf": None,
        "proceeding": None,
        "authors": ["Kaiming He"],
        "tasks": [],
        "date": "2019-05-01",
        "methods": [
            {
                "name": "ReLU",
                "full_name": "Rectified Linear Units (a later copy)",
                "description": "A copy that differs: the first one in a run is kept.",
                "introduced_year": 2000,
                "source_url": None,
                "source_title": None,
                "code_snippet_url": None,
                "main_collection": None,
            }
        ],
    },
]

LINKS: list[dict[str, Any]] = [
    {
        "paper_url": f"{PWC}/paper/{SLUG}",
        "paper_title": TITLE,
        "paper_arxiv_id": ARXIV,
        "paper_url_abs": f"https://arxiv.org/abs/{ARXIV}v1",
        "paper_url_pdf": f"https://arxiv.org/pdf/{ARXIV}v1.pdf",
        "repo_url": "https://github.com/KaimingHe/deep-residual-networks",
        "is_official": True,
        "mentioned_in_paper": False,
        "mentioned_in_github": True,
        "framework": "none",
    },
    {
        "paper_url": f"{PWC}/paper/{SLUG}",
        "paper_title": TITLE,
        "paper_arxiv_id": ARXIV,
        "paper_url_abs": f"https://arxiv.org/abs/{ARXIV}v1",
        "paper_url_pdf": f"https://arxiv.org/pdf/{ARXIV}v1.pdf",
        "repo_url": "https://github.com/tensorflow/models/tree/master/official/vision/resnet",
        "is_official": False,
        "mentioned_in_paper": False,
        "mentioned_in_github": False,
        "framework": "tf",
    },
]

METHODS: list[dict[str, Any]] = [
    {
        "url": f"{PWC}/method/resnet",
        "name": "ResNet",
        "full_name": "Residual Network",
        "description": "A **Residual Network** learns residual functions.",
        "paper": {"title": TITLE, "url": f"{PWC}/paper/{SLUG}"},
        "introduced_year": 2015,
        "source_url": f"http://arxiv.org/abs/{ARXIV}v1",
        "source_title": TITLE,
        "code_snippet_url": "https://github.com/pytorch/vision/blob/main/resnet.py#L124",
        "num_papers": 2360,
        "collections": [
            {
                "collection": "Convolutional Neural Networks",
                "area_id": "computer-vision",
                "area": "Computer Vision",
            }
        ],
    }
]

DATASETS: list[dict[str, Any]] = [
    {
        "url": f"{PWC}/dataset/imagenet",
        "name": "ImageNet",
        "full_name": "ImageNet Large Scale Visual Recognition Challenge",
        "homepage": "https://image-net.org/",
        "description": "The **ImageNet** dataset contains 14,197,122 annotated images.",
        "paper": {"title": "ImageNet: A large-scale hierarchical image database", "url": None},
        "introduced_date": "2009-06-20",
        "modalities": ["Images"],
        "tasks": [
            {"task": "Image Classification", "url": f"{PWC}/task/image-classification"},
            {"task": "Few-Shot Learning", "url": None},
        ],
        "languages": ["English"],
        "variants": ["ImageNet", "ImageNet-10k"],
        "num_papers": 9840,
        "data_loaders": [
            {
                "url": "https://huggingface.co/datasets/imagenet-1k",
                "repo": "https://github.com/huggingface/datasets",
                "frameworks": ["pytorch", "tf", "jax"],
            }
        ],
    },
    {
        "url": f"{PWC}/dataset/cifar-10",
        "name": "CIFAR-10",
        "full_name": "",
        "homepage": None,
        "description": "",
        "paper": {"title": "Learning Multiple Layers of Features", "url": f"{PWC}/paper/learning"},
        "introduced_date": None,
        "modalities": [],
        "tasks": [],
        "languages": [],
        "variants": [],
        "num_papers": 0,
        "data_loaders": [],
    },
]

EVALUATION: list[dict[str, Any]] = [
    {
        "task": "Image Classification",
        "description": "Assigning a label to an image.",
        "categories": ["Computer Vision"],
        "source_link": {"title": "An external board", "url": "https://example.org/board"},
        "synonyms": ["Image Recognition"],
        "datasets": [
            {
                "dataset": "ImageNet",
                "description": "",
                "dataset_citations": [
                    "Deng et al. 2009",
                    {"title": "page", "url": "https://x.org/"},
                ],
                "dataset_links": [{"title": "home", "url": "https://image-net.org/"}],
                "sota": {
                    "metrics": ["Top 1 Accuracy", "Params"],
                    "rows": [
                        {
                            "model_name": "ResNet-152",
                            "paper_title": TITLE,
                            "paper_url": f"http://arxiv.org/abs/{ARXIV}v1",
                            "paper_date": DATE,
                            "metrics": {"Top 1 Accuracy": "78.57%", "Params": "-"},
                            "code_links": [
                                {
                                    "title": "tensorflow/models",
                                    "url": "https://github.com/tensorflow/models/tree/master/official/vision/resnet",
                                }
                            ],
                            "model_links": [],
                            "uses_additional_data": False,
                        },
                        {
                            "model_name": "Anonymous entry",
                            "paper_title": None,
                            "paper_url": "",
                            "paper_date": None,
                            "metrics": {"Top 1 Accuracy": "N/A", "Params": 25.6},
                            "code_links": [{"title": "a/b", "url": "https://github.com/a/b"}],
                            "model_links": ["https://example.org/model"],
                        },
                    ],
                },
                "subdatasets": [
                    {
                        "subdataset": "ReaL",
                        "description": "Reassessed labels.",
                        "dataset_citations": [],
                        "dataset_links": [],
                        "sota": {
                            "metrics": ["Accuracy"],
                            "rows": [
                                {
                                    "model_name": "ResNet-50",
                                    "paper_title": TITLE,
                                    "paper_url": "https://openaccess.thecvf.com/resnet.pdf",
                                    "paper_date": DATE,
                                    "metrics": {"Accuracy": "82.9"},
                                    "code_links": [],
                                    "model_links": [],
                                },
                                {  # a page that names no arXiv or PwC paper, and no title
                                    "model_name": "Adamic Adar",
                                    "paper_title": "",
                                    "paper_url": "https://en.wikipedia.org/wiki/Adamic/Adar_index",
                                    "paper_date": None,
                                    "metrics": {"Accuracy": "0.57 ± 0.23"},
                                    "code_links": [],
                                    "model_links": [],
                                },
                            ],
                        },
                        "subdatasets": [],
                    }
                ],
            }
        ],
        "subtasks": [
            {
                "task": "Fine-Grained Image Classification",
                "description": "",
                "categories": [],
                "source_link": None,
                "synonyms": [],
                "datasets": [],
                "subtasks": [],
            }
        ],
    }
]

ALL: dict[str, list[dict[str, Any]]] = {
    "papers-with-abstracts": PAPERS,
    "links-between-papers-and-code": LINKS,
    "methods": METHODS,
    "datasets": DATASETS,
    "evaluation-tables": EVALUATION,
}

#: File names a user would have (the kind is detected from content, not from these).
FILE_NAMES = {
    "papers-with-abstracts": "papers-with-abstracts.json",
    "links-between-papers-and-code": "links-between-papers-and-code.json",
    "methods": "methods.json",
    "datasets": "datasets.json",
    "evaluation-tables": "evaluation-tables.json",
}


def write(
    directory: Path,
    kind: str,
    items: list[dict[str, Any]] | None = None,
    *,
    name: str | None = None,
    gz_mtime: int | None = None,
) -> Path:
    """Write one dump as a JSON array (gzipped, with this header mtime, when given)."""
    directory.mkdir(parents=True, exist_ok=True)
    data = json.dumps(ALL[kind] if items is None else items, indent=1).encode("utf-8")
    path = directory / (name or FILE_NAMES[kind])
    if gz_mtime is None:
        path.write_bytes(data)
    else:
        path = path.with_name(path.name + ".gz") if not path.name.endswith(".gz") else path
        with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=gz_mtime) as out:
            out.write(data)
    return path


def write_all(directory: Path) -> list[Path]:
    return [write(directory, kind) for kind in ALL]
