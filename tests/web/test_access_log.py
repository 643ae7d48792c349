"""A token in a URL never reaches the access log, in any encoding (issue 37: `?key=pdx%5F…`
was refused with a 400 and logged in full, because the log's redaction matched the raw
text). paperdex/web/redact.py decodes every part of the URL before it matches."""

from __future__ import annotations

import logging
import time
from urllib.parse import quote

import httpx
import pytest
from live_server import LiveServer

from paperdex.web.redact import RedactTokens, redact, secret_in_query

BODY = "Q7xk" * 11  # a token's random part: letters and digits, so it reads the same in every encoding
TOKEN = "pdx_" + BODY


# Queries a careless client or a probe sends with a token in them. The raw-text rule before
# redacted the plain ones (token=, TOKEN=, Authorization=, q=find+pdx_...) and logged the rest.
VARIANTS = [
    f"key=pdx%5F{BODY}",  # the issue's: the underscore percent-encoded
    f"key=pdx%5f{BODY}",  # lower-case hex
    f"key=pdx%255F{BODY}",  # encoded twice
    "key=" + "".join(f"%{ord(c):02X}" for c in TOKEN),  # every character encoded
    "key=" + "".join(f"%25{ord(c):02X}" for c in TOKEN),  # every character encoded, twice
    f"token={TOKEN}",
    f"TOKEN={TOKEN}",
    f"to%6Ben={BODY}",  # the parameter's name encoded, a value without the prefix
    f"Authorization=Bearer+{BODY}",
    f"q=find+{TOKEN}+papers",  # inside a longer value, '+' for spaces
    f"q=PDX_{BODY}",  # upper case
    f"{TOKEN}",  # pasted as a parameter name
    f"{quote(TOKEN, safe='')}=1",
    f"a=1;token={BODY}",
    "q=" + quote("ｐｄｘ＿" + BODY),  # full-width letters (NFKC folds them)
]


def _logged(target: str) -> str:
    rec = logging.LogRecord("uvicorn.access", logging.INFO, "", 0, '%s - "%s %s HTTP/%s" %d', None, None)
    rec.args = ("127.0.0.1:5000", "GET", target, "1.1", 400)
    RedactTokens().filter(rec)
    return rec.getMessage()


@pytest.mark.parametrize("query", VARIANTS)
def test_a_token_is_redacted_in_every_encoding(query):
    line = _logged(f"/api/tags?x=1&{query}&page=2")
    assert BODY not in line and "REDACTED" in line
    assert "x=1" in line and "page=2" in line  # the rest of the URL is kept
    assert secret_in_query(query)  # the one rule says it is a secret


def test_a_token_in_the_path_is_redacted_and_plain_urls_are_untouched():
    assert BODY not in redact(f"/api/papers/{TOKEN}") and BODY not in redact(f"/api/papers/pdx%5F{BODY}")
    plain = "/api/search?q=weight+decay&mode=hybrid&category=cs.LG&page=2"
    assert redact(plain) == plain and not secret_in_query(plain.partition("?")[2])
    assert redact("/daily") == "/daily"


def test_a_part_encoded_past_the_bound_is_redacted_whole():
    """Nothing legitimate is encoded eight times; decoding without a bound would let one URL
    make the filter (on the event loop) work quadratically."""
    deep = "%" + "25" * 40 + "5F"
    assert redact(f"/x?q={deep}&page=2") == "/x?q=REDACTED&page=2"


def test_a_live_server_logs_no_encoded_token(web_dir, tmp_path):
    """Through a real `paperdex serve`: the issue's URL (refused with a 400) and the ones the
    refusal does not recognise (answered) are logged, without the token."""
    with LiveServer(web_dir, "--log-level", "info", workers=1, log=tmp_path / "serve.log") as srv:
        srv.wait_ready()
        for q in (f"key=pdx%5F{BODY}", f"key=pdx%255F{BODY}", f"q=PDX_{BODY}", f"{quote(TOKEN, safe='')}=1"):
            assert httpx.get(f"{srv.base}/api/tags?{q}&m=end", timeout=30).status_code < 500
        end = time.monotonic() + 30
        while srv.output().count("m=end") < 4:
            assert time.monotonic() < end, srv.output()[-2000:]
            time.sleep(0.1)
        assert BODY not in srv.output() and "key=REDACTED" in srv.output()
