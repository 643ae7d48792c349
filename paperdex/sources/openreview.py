"""OpenReview venues through openreview-py (API v2).

``fetch_venue("NeurIPS.cc/2025/Conference")`` reads the venue's accepted papers (notes whose
``content.venueid`` is the venue id) or, with ``submissions=True``, everything submitted to it.
Each note gives title, authors, abstract, the decision/venue string ("NeurIPS 2025 poster"),
the primary area as a readable label ("Deep Learning · Large Language Models", as the venue
search pages show it) and, when the note names one, the arXiv id of its preprint; a note with a
linked arXiv id takes that id, so it is the same record as the preprint.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from ..paper import ARXIV_ID, Paper
from .http import SourceError

SOURCE = "openreview"
API_URL = "https://api2.openreview.net"
SITE_URL = "https://openreview.net"

# snake_case primary areas (NeurIPS, ICLR) -> the "Group · Area" labels of the venue search
# pages (ICML's "Group->Area" taxonomy). Areas not listed get a title-cased label.
AREA_LABELS: dict[str, str] = {
    "machine_vision": "Applications · Computer Vision",
    "applications_to_computer_vision_audio_language_and_other_modalities": "Applications · Computer Vision",
    "natural_language_processing": "Applications · Language, Speech and Dialog",
    "speech_and_audio": "Applications · Language, Speech and Dialog",
    "neuroscience_and_cognitive_science": "Applications · Neuroscience, Cognitive Science",
    "applications_to_neuroscience_&_cognitive_science": "Applications · Neuroscience, Cognitive Science",
    "machine_learning_for_healthcare": "Applications · Health",
    "machine_learning_for_physical_sciences": "Applications · Chemistry, Physics, and Earth Sciences",
    "machine_learning_for_sciences": "Applications · Chemistry, Physics, and Earth Sciences",
    "robotics": "Applications · Robotics",
    "fairness": "Social Aspects · Fairness",
    "privacy": "Social Aspects · Privacy",
    "safety_in_machine_learning": "Social Aspects · Safety",
    "interpretability_and_explainability": ("Social Aspects · Accountability, Transparency and Interpretability"),
    "social_and_economic_aspects_of_machine_learning": "Social Aspects",
    "learning_theory": "Theory · Learning Theory",
    "probabilistic_methods": "Probabilistic Methods",
    "causal_inference": "Probabilistic Methods · Causal Inference",
    "reinforcement_learning": "Reinforcement Learning",
    "online_learning": "General Machine Learning · Online Learning, Active Learning and Bandits",
    "bandits": "General Machine Learning · Online Learning, Active Learning and Bandits",
    "active_learning": "General Machine Learning · Online Learning, Active Learning and Bandits",
    "evaluation": "General Machine Learning · Evaluation",
    "generative_models": "Deep Learning · Generative Models and Autoencoders",
    "diffusion_based_models": "Deep Learning · Generative Models and Autoencoders",
    "deep_learning_architectures": "Deep Learning · Algorithms",
    "optimization_for_deep_networks": "Deep Learning · Algorithms",
    "large_language_models": "Deep Learning · Large Language Models",
    "foundation_or_frontier_models_including_llms": "Deep Learning · Large Language Models",
    "graph_neural_networks": "Deep Learning · Graph Neural Networks",
    "optimization": "Optimization",
    "infrastructure": "Infrastructure",
    "human-ai_interaction": "Social Aspects · Human-AI Interaction",
    "algorithmic_game_theory": "Theory · Game Theory",
}
_PROSE = {"abstract", "TLDR", "tldr", "title", "keywords", "authors"}
_SMALL = {"and", "or", "of", "for", "in", "on", "the", "to", "with", "a", "an"}
_UPPER = {"ai": "AI", "llms": "LLMs", "llm": "LLM", "ml": "ML", "nlp": "NLP", "3d": "3D", "rl": "RL"}
_ARXIV_IN_TEXT = re.compile(r"arxiv\.org/(?:abs|pdf)/(\d{4}\.\d{4,5})(?:v\d+)?|arXiv:\s?(\d{4}\.\d{4,5})", re.I)


def _title_case(words: str) -> str:
    out = []
    for i, w in enumerate(words.split()):
        lw = w.lower()
        if lw in _UPPER:
            out.append(_UPPER[lw])
        elif i and lw in _SMALL:
            out.append(lw)
        else:
            out.append(w[:1].upper() + w[1:])
    return " ".join(out)


def area_label(raw: str | None) -> str | None:
    """A venue's primary area as a readable label.

    ``Deep Learning->Large Language Models`` (ICML) -> ``Deep Learning · Large Language Models``;
    ``machine_vision`` (NeurIPS) -> ``Applications · Computer Vision``; ``Deep learning (e.g.,
    architectures, ...)`` -> ``Deep Learning``."""
    if not raw or not str(raw).strip():
        return None
    raw = " ".join(str(raw).split())
    key = raw.lower()
    if key in AREA_LABELS:
        return AREA_LABELS[key]
    parts = [p.strip() for p in re.split(r"\s*(?:->|→|»|›|·)\s*", raw) if p.strip()]
    labels = []
    for p in parts:
        p = re.sub(r"\s*\([^)]*\)\s*", " ", p).strip()
        if "_" in p and " " not in p:
            p = p.replace("_", " ")
        labels.append(_title_case(p) if p[1:] == p[1:].lower() else p)
    return " · ".join(labels) or None


def _value(content: dict, key: str) -> Any:
    v = content.get(key)
    return v.get("value") if isinstance(v, dict) else v


def _day(ms: Any) -> str | None:
    if isinstance(ms, (int, float)) and ms > 0:
        return datetime.fromtimestamp(ms / 1000, UTC).date().isoformat()
    return None


def find_arxiv_id(note: Any) -> str | None:
    """The arXiv id a note names: an ``arxiv:`` external id, or an arxiv.org link or
    ``arXiv:`` reference in its content (a dedicated field, the code/supplement link, the
    BibTeX, the abstract's trailing "Preprint: ..." line)."""
    for ext in getattr(note, "external_ids", None) or []:
        if isinstance(ext, str) and ext.lower().startswith("arxiv:"):
            aid = ext.split(":", 1)[1]
            if ARXIV_ID.match(aid):
                return re.sub(r"v\d+$", "", aid)
    content = getattr(note, "content", None) or {}
    for key in ("arxiv", "arxiv_id", "arXiv", "arxiv_link", "preprint"):
        v = _value(content, key)
        if isinstance(v, str):
            m = _ARXIV_IN_TEXT.search(v) or re.fullmatch(r"\s*(\d{4}\.\d{4,5})(?:v\d+)?\s*", v)
            if m:
                return next(g for g in m.groups() if g)
    for key, raw in content.items():
        if key in _PROSE:  # an abstract may cite other preprints
            continue
        v = raw.get("value") if isinstance(raw, dict) else raw
        if isinstance(v, str) and (m := _ARXIV_IN_TEXT.search(v)):
            return next(g for g in m.groups() if g)
    return None


def decision_of(venue: str | None) -> str | None:
    """ "NeurIPS 2025 oral" -> "oral"; "Submitted to ICLR 2025" -> "submitted"."""
    if not venue:
        return None
    v = venue.lower()
    if v.startswith("submitted to"):
        return "submitted"
    for word in ("oral", "spotlight", "poster", "highlight", "reject", "withdrawn", "desk rejected"):
        if word in v:
            return word
    return "accepted"


def note_to_paper(note: Any, venue_id: str | None = None) -> Paper:
    content = getattr(note, "content", None) or {}
    title = " ".join(str(_value(content, "title") or "").split())
    if not title:
        raise ValueError("no title")
    authors = _value(content, "authors") or []
    if not isinstance(authors, list):
        raise ValueError("'authors' is not a list")
    venue = _value(content, "venue")
    raw_area = _value(content, "primary_area") or _value(content, "subject_areas")
    if isinstance(raw_area, list):
        raw_area = raw_area[0] if raw_area else None
    arxiv_id = find_arxiv_id(note)
    forum = getattr(note, "forum", None) or note.id
    pdf = _value(content, "pdf")
    code = _value(content, "code")
    keywords = _value(content, "keywords")
    extra = {
        "id": note.id,
        "forum": forum,
        "number": getattr(note, "number", None),
        "venueid": _value(content, "venueid") or venue_id,
        "decision": decision_of(venue),
        "primary_area": raw_area,
        "keywords": keywords if isinstance(keywords, list) else None,
        "tldr": _value(content, "TLDR") or _value(content, "tldr"),
        "arxiv_id": arxiv_id,
        "url": f"{SITE_URL}/forum?id={forum}",
    }
    return Paper(
        id=arxiv_id or f"openreview:{forum}",
        title=title,
        authors=[" ".join(str(a).split()) for a in authors if str(a).strip()],
        abstract=" ".join(str(_value(content, "abstract") or "").split()),
        venue=" ".join(str(venue).split()) if venue else None,
        venue_area=area_label(raw_area),
        published=_day(getattr(note, "pdate", None)) or _day(getattr(note, "cdate", None)),
        abs_url=None if arxiv_id else f"{SITE_URL}/forum?id={forum}",
        pdf_url=(SITE_URL + pdf if isinstance(pdf, str) and pdf.startswith("/") else pdf) if not arxiv_id else None,
        code_url=code if isinstance(code, str) and code.startswith("http") else None,
        sources=[SOURCE],
        extra={"openreview": {k: v for k, v in extra.items() if v not in (None, [], "")}},
    )


def make_client(base_url: str = API_URL) -> Any:
    """An anonymous openreview-py API v2 client (public notes need no login)."""
    import openreview  # imported late: pulls in requests and friends

    return openreview.api.OpenReviewClient(baseurl=base_url)


def fetch_venue(
    venue_id: str, client: Any = None, *, submissions: bool = False, base_url: str = API_URL
) -> tuple[list[Paper], list[str]]:
    """Papers of one venue. Accepted papers carry the venue id in ``content.venueid``; with
    ``submissions`` every note posted to ``<venue>/-/Submission`` is read instead."""
    import openreview

    if not re.fullmatch(r"[\w.\-]+(/[\w.\-]+)+", venue_id):
        raise ValueError(f"not an OpenReview venue id: {venue_id!r} (e.g. NeurIPS.cc/2025/Conference)")
    client = client or make_client(base_url)
    try:
        if submissions:
            notes = client.get_all_notes(invitation=f"{venue_id}/-/Submission")
        else:
            notes = client.get_all_notes(content={"venueid": venue_id})
    except openreview.OpenReviewException as e:
        raise SourceError(f"OpenReview {venue_id}: {e}") from e
    except (KeyError, TypeError, ValueError) as e:  # a response not shaped like API v2 notes
        raise SourceError(f"OpenReview {venue_id}: unexpected response ({type(e).__name__}: {e})") from e
    except Exception as e:  # requests' connection errors, timeouts, bad JSON
        import requests

        if isinstance(e, requests.RequestException):
            raise SourceError(f"OpenReview {venue_id}: {type(e).__name__}: {e}") from e
        raise
    papers, errors = [], []
    for note in notes:
        try:
            papers.append(note_to_paper(note, venue_id))
        except ValueError as e:
            errors.append(f"OpenReview note {getattr(note, 'id', '?')}: {e}; skipped")
    return papers, errors
