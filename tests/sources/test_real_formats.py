"""Every parser on responses in the real services' shapes (tests/fixtures/real/, copied from
shared/real-formats with their provenance in each file's header)."""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import threading

import httpx
import pytest
import responses

from paperdex.sources import arxiv, hf, openreview, registry, sync
from paperdex.sources.http import SourceError
from paperdex.sources.merge import ingest_with_merge

from .conftest import Router, fixture, param, real, xml

# --- arXiv OAI-PMH ------------------------------------------------------------------------------


def oai(name: str) -> arxiv.OaiPage:
    return arxiv.parse_oai_page(real("arxiv_oai", name).read_bytes())


def test_arxivraw_keeps_the_first_version_date_of_a_revised_paper():
    page = oai("listrecords_arXivRaw_math.xml")
    assert page.errors == [] and page.token is None
    p = {x.id: x for x in page.papers}
    revised = p["0806.4129"]  # six versions, 2008-06-25 .. 2014-12-12
    assert (revised.published, revised.updated) == ("2008-06-25", "2014-12-12")
    assert revised.extra["arxiv"]["version"] == "v6"
    assert revised.extra["arxiv"]["doi"] == "10.1063/1.3536454"
    assert revised.extra["arxiv"]["journal_ref"] == "AIP Conf.Proc.1316:466-477,2010"
    assert revised.authors == ["Roldao da Rocha", "Waldyr A. Rodrigues Jr"]
    old = p["math/0510544"]  # old-style id; "Dong Liu and and Linsheng Zhu" as sent
    assert old.authors == ["Naihong Hu", "Dong Liu", "Linsheng Zhu"]
    assert old.published == "2005-10-26"
    tex = p["0712.3217"]  # "Fr\\'ed\\'eric Lagouti\\`ere (LJLL)"
    assert tex.authors == ["Francois Delarue", "Frédéric Lagoutière"]
    assert tex.extra["arxiv"]["affiliations"] == ["PMA", "LJLL"]


def test_the_arxiv_format_never_replaces_a_first_version_date(store):
    """Harvests ask for arXivRaw: a record in the ``arXiv`` format (whose ``<created>`` is the
    current version's day) is refused with a reason, never stored over the first version's."""
    ingest_with_merge(store, oai("listrecords_arXivRaw_math.xml").papers)
    for name in ("getrecord_arXiv_0806.4129.xml", "listrecords_arXiv_cs_p1.xml"):
        page = oai(name)
        assert page.papers == [] and page.errors
        assert all("metadataPrefix must be arXivRaw" in e for e in page.errors)
    assert store.get("0806.4129").published == "2008-06-25"


def test_real_pages_with_old_style_ids_and_url_encoded_tokens():
    p1, p2, p3 = (arxiv.parse_oai_page(fixture("arxiv", f"oai_raw_cs_p{i}.xml").read_bytes()) for i in (1, 2, 3))
    assert p1.errors == p2.errors == p3.errors == []
    assert p1.token == (
        "verb%3DListRecords%26metadataPrefix%3DarXivRaw%26set%3Dcs%26from%3D2012-06-29%26until%3D2023-12-31%26skip%3D0"
    )
    assert p2.token.endswith("from%3D2021-03-09%26until%3D2023-12-31%26skip%3D0")
    assert p3.token is None  # <resumptionToken/>: the list is complete
    assert p1.response_date == "2026-11-30"
    ids = [p.id for p in p1.papers]
    assert ids[:3] == ["cs/0001024", "0704.0248", "chao-dyn/9510015"]
    assert "hep-th/9901002" in ids


@pytest.mark.parametrize(
    ("name", "code", "text"),
    [
        ("err_badResumptionToken.xml", "badResumptionToken", "invalid or expired"),
        ("err_bad_set.xml", "badArgument", "Set does not exist"),
        ("err_from_too_early.xml", "badArgument", "start date too early"),
        ("err_noRecordsMatch.xml", "noRecordsMatch", "empty list"),
        ("err_until_too_late.xml", "badArgument", "until date too late"),
    ],
)
def test_oai_error_answers(name, code, text):
    page = oai(name)
    assert page.error_code == code and text in page.error_text


def test_oai_dc_records_are_refused_with_a_reason():
    page = oai("listrecords_oai_dc_math.xml")
    assert page.papers == [] and len(page.errors) == 3
    assert "metadataPrefix must be arXivRaw" in page.errors[0]


def test_sets_are_the_services_and_misspellings_show_the_right_one():
    listed = set(re.findall(r"<setSpec>([^<]+)</setSpec>", real("arxiv_oai", "listsets.xml").read_text()))
    assert listed == arxiv.SETS
    for wrong, right in [("cs.CL", "cs:cs:CL"), ("hep-th", "physics:hep-th"), ("astro-ph.CO", "physics:astro-ph:CO")]:
        with pytest.raises(ValueError, match=f"write it as '{right}'"):
            arxiv.check_set(wrong)
    assert arxiv.check_set("cs") == "cs"


def test_a_set_the_service_refuses_names_the_spelling(store, make_http):
    router = Router().add(lambda q: True, xml(real("arxiv_oai", "err_bad_set.xml")))
    with pytest.raises(SourceError, match="Set does not exist.*cs:cs:CL"):
        arxiv.harvest(store, make_http(router), arxiv.Harvest("cs", "2025-01-01"))


def test_window_is_clamped_to_what_the_service_accepts(store, make_http):
    from datetime import date

    router = Router().add(lambda q: True, xml(real("arxiv_oai", "err_noRecordsMatch.xml")))
    arxiv.harvest(store, make_http(router), arxiv.Harvest("cs", "2001-01-01", "2026-12-31"), today=date(2026, 11, 29))
    assert param(router.requests[0], "from") == arxiv.EARLIEST
    assert param(router.requests[0], "until") is None  # east of UTC the local date is "too late"
    assert param(router.requests[0], "metadataPrefix") == "arXivRaw"
    assert json.loads(store.get_state("arxiv:oai:cs")) == {"next_from": "2026-11-30"}  # responseDate


# --- arXiv export API ---------------------------------------------------------------------------


def api(name: str) -> httpx.Response:
    rec = json.loads(real("arxiv_api", name).read_text())
    return httpx.Response(rec["status_code"], text=rec["body"], headers={"Content-Type": "application/atom+xml"})


def test_api_old_style_ids_versions_and_journal_refs():
    papers, errors = arxiv.parse_atom(api("id_astro-ph_0601001_s0_m100_3150dca9dc76.json").content)
    assert errors == []
    (p,) = papers
    assert (p.id, p.published, p.categories) == ("astro-ph/0601001", "2006-01-02", ["astro-ph"])
    assert p.extra["arxiv"] == {"version": "v1", "journal_ref": "ActaAstron.56:1-50,2006"}
    assert p.authors == ["Andrew Gould", "Susan Dorsher", "B. Scott Gaudi", "Andrzej Udalski"]
    (q,), _ = arxiv.parse_atom(api("id_quant-ph_0201082v1_s0_m100_86989fe779ef.json").content)
    assert q.id == "quant-ph/0201082"


def test_api_400_is_parsed_per_id_and_the_rest_of_the_chunk_still_arrives(make_http):
    bad = api("id_abc_s0_m100_b79c8dcf6bc3.json")
    assert bad.status_code == 400
    assert arxiv.api_error_ids(arxiv.parse_atom(bad.content)[1]) == {"abc"}

    def answer(req: httpx.Request) -> httpx.Response:
        ids = param(req, "id_list").split(",")
        if "2999.99999" in ids:  # a well-formed id the service refuses
            return bad
        if ids == ["0808.05394", "1707.08567"]:
            return api("id_0808.05394_1707.08567_s0_m100_42e5aa0ec3af.json")
        if ids == ["astro-ph/0601001"]:
            return api("id_astro-ph_0601001_s0_m100_3150dca9dc76.json")
        return httpx.Response(404)

    router = Router().add(lambda q: True, answer)
    ids = ["0808.05394", "1707.08567", "https://arxiv.org/abs/astro-ph/0601001", "2999.99999", "hello"]
    papers, errors = arxiv.fetch_ids(make_http(router, min_interval=0), ids, chunk=2)
    assert sorted(p.id for p in papers) == ["1707.08567", "astro-ph/0601001"]
    assert errors == [
        "not an arXiv id: 'hello'",
        "arXiv API: no paper 0808.05394",
        "arXiv API refused 2999.99999 (HTTP 400: arXiv API error: incorrect id format for abc)",
    ]


# --- arXiv RSS ----------------------------------------------------------------------------------


def rss(name: str):
    return arxiv.parse_rss(real("arxiv_rss", name).read_bytes())


def test_rss_real_metadata_authors_affiliations_tex_ids_doi_journal():
    papers, errors = rss("rss_realmeta_serialized.xml")
    assert errors == [] and len(papers) == 9
    p = {x.id: x for x in papers}
    neri = p["0903.4542"]
    assert neri.authors == ["C. Neri", "L. Schneider"]  # not ["C. Neri", "London", "UK)", ...]
    assert neri.extra["arxiv-rss"]["affiliations"] == [
        "Lloyds Banking Group, London, UK",
        "EMLYON Business School, Lyon, France",
    ]
    assert p["0712.3217"].authors == ["Francois Delarue", "Frédéric Lagoutière"]
    pal = p["1102.0525"]
    assert pal.authors[0] == "András Pál" and "Loránd Eötvös University" in pal.extra["arxiv-rss"]["affiliations"][0]
    borucki = p["1102.0541"].authors
    assert "Jørgen Christensen-Dalsgaard" in borucki and "Jean-Michel Désert" in borucki
    assert "Thomas N. Gautier III" in borucki and len(borucki) == 66
    assert p["math/0510544"].authors == ["Naihong Hu", "Dong Liu", "Linsheng Zhu"]
    old = p["hep-th/9901002"]  # old-style id, kept
    assert old.extra["arxiv-rss"]["doi"] == "10.1103/PhysRevD.59.126002"
    assert old.extra["arxiv-rss"]["journal_ref"] == "Phys.Rev.D59:126002,1999"
    assert old.listed is None  # a replacement is not a new listing
    assert p["1102.0541"].listed == "2026-11-30"
    assert all(x.sources == ["arxiv-rss"] for x in papers)


def test_rss_and_atom_listings_of_the_feed_service():
    papers, _ = rss("rss_cs.CV_2023-10-26.xml")
    assert [(x.id, x.listed) for x in papers] == [("1234.5646", "2023-10-26"), ("1234.5645", None)]
    assert papers[0].authors == ["Very Real Sr."]
    assert papers[0].extra["arxiv-rss"]["affiliations"] == ["Cornell University"]
    atom, _ = rss("atom_cs.CV_2023-10-26.xml")
    assert [(x.id, x.listed, x.authors) for x in atom] == [
        ("1234.5646", "2023-10-26", ["Very Real Sr."]),
        ("1234.5645", None, ["Very Real Sr."]),
    ]
    assert rss("rss_cs.CV_2023-10-28_empty.xml") == ([], [])
    assert len(rss("rss_cs_2023-10-26.xml")[0]) >= 1
    with pytest.raises(SourceError, match="Bad subject class 'XX'"):
        rss("rss_bad_category.xml")


def test_a_listing_never_overwrites_what_oai_supplied(store):
    ingest_with_merge(store, oai("listrecords_arXivRaw_math.xml").papers)
    ingest_with_merge(store, rss("rss_realmeta_serialized.xml")[0])
    p = store.get("0712.3217")
    assert p.extra["merge"]["fields"]["authors"] == "arxiv"
    assert p.published == "2007-12-19" and p.listed == "2026-11-30"  # the listing filled the gap
    assert p.sources == ["arxiv", "arxiv-rss"]
    # and the other way round: OAI arriving after the listing takes over
    q = store.get("1102.0359")
    assert q.sources == ["arxiv-rss"]


# --- Hugging Face -------------------------------------------------------------------------------


def hf_body() -> bytes:
    return json.dumps(json.loads(real("hf", "daily_papers_item_2602.23229.json").read_text())["response"]).encode()


def test_hf_item_fields():
    (p,), errors = hf.parse_daily_papers(hf_body(), featured=None)
    assert errors == []
    assert p.id == "2602.23229" and p.published == "2026-02-26"  # publishedAt: the arXiv time
    assert p.code_url == "https://github.com/marco-garosi/CIRCLE"
    assert p.extra["code_stars"] == 9
    h = p.extra["hf"]
    assert h["featured"] == "2026-03-06"  # submittedOnDailyAt
    assert (h["upvotes"], h["comments"], h["github_stars"]) == (10, 1, 9)
    assert h["project_page"] == "https://circle-lmm.github.io/"
    assert h["url"] == "https://huggingface.co/papers/2602.23229"
    assert h["organization"] == "Multimedia and Human Understanding Group"
    assert "in-context learning" in h["ai_keywords"]


def test_hf_pages_until_an_empty_page_even_when_the_server_caps_limit(make_http):
    item = json.loads(hf_body())[0]

    def page(req: httpx.Request) -> httpx.Response:
        p = int(param(req, "p"))  # the server sends 1 item a page whatever `limit` says
        if p >= 3:
            return httpx.Response(200, json=[])
        return httpx.Response(200, json=[{**item, "paper": {**item["paper"], "id": f"2602.2322{p}"}}])

    papers, errors = hf.fetch_daily_papers(
        make_http(Router().add(lambda q: True, page), min_interval=0), week="2026-W10"
    )
    assert [p.id for p in papers] == ["2602.23220", "2602.23221", "2602.23222"] and errors == []


# --- OpenReview ---------------------------------------------------------------------------------

API = "https://api2.openreview.net"


def note() -> dict:
    return json.loads(real("openreview", "note_neurips2024_shape.json").read_text())["note"]


def test_openreview_note_fields():
    import openreview as orlib

    p = openreview.note_to_paper(orlib.api.Note.from_json(note()))
    assert p.id == "openreview:aVh9KRZdRk" and p.venue == "NeurIPS 2024 oral"
    assert p.venue_area == "Social Aspects · Accountability, Transparency and Interpretability"
    o = p.extra["openreview"]
    assert (o["decision"], o["presentation"], o["venueid"]) == ("accepted", "oral", "NeurIPS.cc/2024/Conference")
    assert p.published == "2024-09-25"
    assert p.pdf_url.startswith("https://openreview.net/pdf/")


@pytest.mark.parametrize(
    ("venue", "venueid", "decision", "presentation"),
    [
        ("NeurIPS 2024 poster", "NeurIPS.cc/2024/Conference", "accepted", "poster"),
        ("NeurIPS 2024 spotlight", "NeurIPS.cc/2024/Conference", "accepted", "spotlight"),
        ("NeurIPS 2024 oral", None, "accepted", "oral"),
        ("ICLR 2024 Conference Submission", None, "submitted", None),
        ("ICLR 2024 Conference Submission", "ICLR.cc/2024/Conference/Rejected_Submission", "rejected", None),
        ("Submitted to ICLR 2025", "ICLR.cc/2025/Conference/Submission", "under_review", None),
        ("Under review for TMLR", "TMLR/Under_Review", "under_review", None),
        ("Under review for TMLR", None, "under_review", None),
        ("Decision pending for TMLR", "TMLR/Decision_Pending", "under_review", None),
        ("Accepted by TMLR", "TMLR", "accepted", None),
        (
            "ICLR 2024 Conference Withdrawn Submission",
            "ICLR.cc/2024/Conference/Withdrawn_Submission",
            "withdrawn",
            None,
        ),
        (
            "ICLR 2024 Conference Desk Rejected Submission",
            "ICLR.cc/2024/Conference/Desk_Rejected_Submission",
            "desk_rejected",
            None,
        ),
        ("ICML 2024 Poster", "ICML.cc/2024/Conference", "accepted", "poster"),
        ("ICML 2025 spotlightposter", "ICML.cc/2025/Conference", "accepted", "spotlight"),  # 212 real papers
        ("ICML 2025 oral", "ICML.cc/2025/Conference", "accepted", "oral"),
    ],
)
def test_decisions(venue, venueid, decision, presentation):
    assert openreview.decision_of(venue, venueid) == (decision, presentation)


@pytest.mark.parametrize(
    ("raw", "label"),
    [
        ("applications to computer vision, audio, language, and other modalities", "Applications"),
        ("Applications to neuroscience & cognitive science", "Applications · Neuroscience, Cognitive Science"),
        ("foundation or frontier models, including LLMs", "Deep Learning · Large Language Models"),
        (
            "probabilistic methods (Bayesian methods, variational inference, sampling, UQ, etc.)",
            "Probabilistic Methods",
        ),
        ("interpretability_and_explainability", "Social Aspects · Accountability, Transparency and Interpretability"),
        ("human-AI_interaction", "Social Aspects · Human-AI Interaction"),
        ("Deep Learning->Theory", "Deep Learning · Theory"),
    ],
)
def test_primary_areas_of_neurips_iclr_icml(raw, label):
    assert openreview.area_label(raw) == label


ICLR_MODALITIES = "applications to computer vision, audio, language, and other modalities"


@pytest.mark.parametrize(
    ("title", "keywords", "label"),
    [
        ("Whisper-style speech recognition at scale", ["ASR", "audio"], "Applications · Language, Speech and Dialog"),
        ("Open-vocabulary segmentation of video", ["image segmentation"], "Applications · Computer Vision"),
        ("Machine translation for low-resource languages", ["NLP"], "Applications · Language, Speech and Dialog"),
        ("A multimodal benchmark", [], "Applications"),
    ],
)
def test_iclr_modalities_area_follows_the_paper(title, keywords, label):
    """ICLR's one area for vision, audio and language: a speech paper is not Computer Vision."""
    import openreview as orlib

    n = note()
    n["content"]["title"] = {"value": title}
    n["content"]["keywords"] = {"value": keywords}
    n["content"]["primary_area"] = {"value": ICLR_MODALITIES}
    assert openreview.note_to_paper(orlib.api.Note.from_json(n)).venue_area == label


@pytest.mark.parametrize(
    "raw",
    [
        "trustworthy_machine_learning",
        "machine_learning_for_social_sciences",
        "unsupervised_learning",
        "multimodal_models",
        "Social and economic aspects of machine learning (e.g., fairness, interpretability)",
        "Evaluation (e.g., methodology, meta studies, replicability and validity, human-in-the-loop)",
        "Theory (e.g., control theory, learning theory, algorithmic game theory)",
    ],
)
def test_every_area_lands_in_the_label_set(raw):
    """NeurIPS areas no table lists (and NeurIPS 2025's prose ones) still start with one of the
    groups the area filter and the venue pages use."""
    label = openreview.area_label(raw)
    assert label.split(" · ")[0] in openreview.GROUPS, label


def test_a_withdrawn_paper_loses_its_presentation(store):
    """Accepted as a poster, then withdrawn: the merged record says withdrawn, not poster."""
    import openreview as orlib

    n = note()
    n["content"]["venue"] = {"value": "NeurIPS 2024 poster"}
    ingest_with_merge(store, [openreview.note_to_paper(orlib.api.Note.from_json(n))])
    assert store.get("openreview:aVh9KRZdRk").extra["openreview"]["presentation"] == "poster"
    n["content"]["venue"] = {"value": "NeurIPS 2024 Conference Withdrawn Submission"}
    n["content"]["venueid"] = {"value": "NeurIPS.cc/2024/Conference/Withdrawn_Submission"}
    ingest_with_merge(store, [openreview.note_to_paper(orlib.api.Note.from_json(n))])
    o = store.get("openreview:aVh9KRZdRk").extra["openreview"]
    assert (o["decision"], o["presentation"]) == ("withdrawn", None)


def _notes(req) -> tuple:
    body = {"notes": [] if "after=" in req.url else [note()], "count": 1}
    return (200, {"Content-Type": "application/json"}, json.dumps(body))


def test_anonymous_403_says_what_to_set(monkeypatch):
    monkeypatch.delenv("OPENREVIEW_USERNAME", raising=False)
    monkeypatch.delenv("OPENREVIEW_PASSWORD", raising=False)
    challenge = {"name": "ChallengeRequiredError", "message": "Challenge required", "status": 403}
    with responses.RequestsMock() as rs:
        rs.add("GET", f"{API}/notes", json=challenge, status=403)
        with pytest.raises(SourceError) as e:
            openreview.fetch_venue("NeurIPS.cc/2024/Conference", openreview.make_client(API))
    msg = str(e.value)
    assert msg.startswith("OpenReview refuses anonymous requests (403 ChallengeRequiredError)")
    assert "OPENREVIEW_USERNAME and OPENREVIEW_PASSWORD" in msg and "{" not in msg


def test_credentials_from_the_environment_log_in(monkeypatch):
    monkeypatch.setenv("OPENREVIEW_USERNAME", "reader@example.org")
    monkeypatch.setenv("OPENREVIEW_PASSWORD", "secret")
    login = {"token": "tok123", "user": {"id": "~Reader1", "profile": {"id": "~Reader1"}}}
    with responses.RequestsMock() as rs:
        rs.add("POST", f"{API}/login", json=login)
        rs.add_callback("GET", f"{API}/notes", callback=_notes)
        config = {"openreview": {"username": "ignored", "password": "x"}}  # the environment wins
        section = sync.source_section(config, "openreview", os.environ)
        client = sync.make_client(registry.get("openreview"), section)
        papers, errors = openreview.fetch_venue("NeurIPS.cc/2024/Conference", client)
        assert json.loads(rs.calls[0].request.body)["id"] == "reader@example.org"  # the environment wins
        assert rs.calls[1].request.headers["Authorization"] == "Bearer tok123"
    assert [p.id for p in papers] == ["openreview:aVh9KRZdRk"] and errors == []


def test_a_source_never_reads_the_environment_itself(monkeypatch, store):
    """OPENREVIEW_USERNAME/PASSWORD reach the client only as the command passes them
    (``environ``): a library call without them is anonymous (no login request is made)."""
    monkeypatch.setenv("OPENREVIEW_USERNAME", "reader@example.org")
    monkeypatch.setenv("OPENREVIEW_PASSWORD", "secret")
    challenge = {"name": "ChallengeRequiredError", "message": "Challenge required", "status": 403}
    with responses.RequestsMock() as rs:
        rs.add("GET", f"{API}/notes", json=challenge, status=403)
        with pytest.raises(SourceError, match="refuses anonymous requests"):
            sync.ingest_source(store, "openreview", venue="NeurIPS.cc/2024/Conference", config={})


def test_retries_are_logged_not_printed(caplog, capsys):
    with responses.RequestsMock() as rs:
        rs.add("GET", f"{API}/notes", status=503, body="busy")
        rs.add_callback("GET", f"{API}/notes", callback=_notes)
        client = openreview.make_client(API)
        client.session.adapters["https://"].max_retries.backoff_factor = 0
        with caplog.at_level(logging.WARNING, logger="paperdex.sources"):
            papers, _ = openreview.fetch_venue("NeurIPS.cc/2024/Conference", client)
    assert len(papers) == 1
    assert capsys.readouterr().out == ""
    assert any("HTTP 503; retrying" in r.getMessage() for r in caplog.records)


def test_a_stalled_server_times_out():
    with socket.socket() as srv:  # accepts the connection, never answers
        srv.bind(("127.0.0.1", 0))
        srv.listen()
        port = srv.getsockname()[1]
        held = []
        t = threading.Thread(target=lambda: held.append(srv.accept()), daemon=True)
        t.start()
        client = openreview.make_client(f"http://127.0.0.1:{port}", timeout=0.3, retries=0)
        with pytest.raises(SourceError, match="Timeout"):
            openreview.fetch_venue("NeurIPS.cc/2024/Conference", client)
        for conn, _ in held:
            conn.close()


def test_a_big_venue_draws_no_progress_bar(capsys):
    """openreview-py draws a tqdm bar past 1,000 notes; a cron sync must print none."""
    with responses.RequestsMock() as rs:
        rs.add_callback(
            "GET",
            f"{API}/notes",
            callback=lambda req: (
                200,
                {"Content-Type": "application/json"},
                json.dumps({"notes": [] if "after=" in req.url else [note()], "count": 1500}),
            ),
        )
        papers, _ = openreview.fetch_venue("NeurIPS.cc/2024/Conference", openreview.make_client(API))
    assert len(papers) == 1
    captured = capsys.readouterr()
    assert "Getting V2 Notes" not in captured.err + captured.out


def test_one_login_serves_back_to_back_runs(tmp_path):
    """Four `ingest openreview` runs in a minute log in once (OpenReview limits logins); a
    saved session the server no longer takes is replaced by one new login."""
    session = tmp_path / openreview.SESSION_FILE
    login = {"token": "tok123", "user": {"id": "~Reader1", "profile": {"id": "~Reader1"}}}
    with responses.RequestsMock() as rs:
        logins = rs.add("POST", f"{API}/login", json=login)
        rs.add_callback("GET", f"{API}/notes", callback=_notes)
        for _ in range(4):
            client = openreview.make_client(API, "reader@example.org", "secret", session_file=session)
            papers, _ = openreview.fetch_venue("NeurIPS.cc/2024/Conference", client)
            assert len(papers) == 1
        assert logins.call_count == 1
        assert all(
            c.request.headers.get("Authorization") == "Bearer tok123" for c in rs.calls if c.request.method == "GET"
        )
    assert oct(session.stat().st_mode & 0o777) == "0o600"

    stale = json.loads(session.read_text())
    session.write_text(json.dumps({**stale, "token": "expired"}))
    challenge = {"name": "TokenExpiredError", "message": "Token expired", "status": 403}
    with responses.RequestsMock() as rs:
        rs.add("GET", f"{API}/notes", json=challenge, status=403)  # the saved session is refused...
        logins = rs.add("POST", f"{API}/login", json=login)  # ...so one new login
        rs.add_callback("GET", f"{API}/notes", callback=_notes)
        client = openreview.make_client(API, "reader@example.org", "secret", session_file=session)
        papers, _ = openreview.fetch_venue("NeurIPS.cc/2024/Conference", client)
        assert len(papers) == 1 and logins.call_count == 1
    assert json.loads(session.read_text())["token"] == "tok123"


def test_a_preprint_merged_with_its_openreview_record_links_its_forum(tmp_path):
    """The real-shape NeurIPS 2024 note meets its arXiv preprint (2406.02550, matched by title
    and first author): the merged paper keeps arXiv's abstract and PDF links and gains a link to
    its OpenReview forum (reviews, decision, discussion) in links, the JSON and the paper page."""
    import openreview as orlib
    from fastapi.testclient import TestClient

    from paperdex.paper import Paper
    from paperdex.store import Store
    from paperdex.web.app import create_app

    forum = "https://openreview.net/forum?id=aVh9KRZdRk"
    preprint = Paper(
        id="2406.02550",
        title="Learning to grok: Emergence of in-context learning and skill composition in modular arithmetic tasks",
        authors=["Tianyu He", "Darshil Doshi", "Aritra Das", "Andrey Gromov"],
        categories=["cs.LG"],
        published="2024-06-04",
        sources=["arxiv"],
    )
    d = tmp_path / "data"
    with Store(d) as store:
        ingest_with_merge(store, [preprint])
        ingest_with_merge(store, [openreview.note_to_paper(orlib.api.Note.from_json(note()))])
        p = store.get("2406.02550")
        assert p.sources == ["arxiv", "openreview"] and store.count() == 1
    assert p.links() == {
        "abs": "https://arxiv.org/abs/2406.02550",
        "pdf": "https://arxiv.org/pdf/2406.02550",
        "openreview": forum,
    }
    assert p.to_dict()["links"]["openreview"] == forum
    client = TestClient(create_app(d, pool_size=1), base_url="http://localhost")
    assert client.get("/api/papers/2406.02550").json()["links"]["openreview"] == forum
    page = client.get("/paper/2406.02550").text
    assert f'href="{forum.replace("&", "&amp;")}"' in page and "OpenReview" in page
