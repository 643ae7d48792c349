"""How a request picks its interface language: an explicit ``?lang=`` (which also sets a
cookie), the ``lang`` cookie, then the browser's ``Accept-Language``. Paper text is never
translated; only the interface (paperdex/messages.toml).
"""

from __future__ import annotations

from paperdex.messages import LANGS, shown, text

COOKIE = "lang"

t = text  # t(lang, code, **fields): the templates' t('code')
message = shown  # message(lang, msg): the templates' msg(...) for a message from the core


def negotiate(query_lang: str | None, cookie_lang: str | None, accept_language: str | None) -> str:
    for v in (query_lang, cookie_lang):
        if v and v.lower()[:2] in LANGS:
            return v.lower()[:2]
    best, best_q = "en", -1.0
    for i, part in enumerate((accept_language or "").split(",")[:20]):
        tag, *params = [b.strip() for b in part.split(";")]
        qs = [b[2:] for b in params if b.startswith("q=")]  # the last one counts
        try:
            q = float(qs[-1]) if qs else 1.0
        except ValueError:
            q = 0.0
        q, tag = q - i * 1e-6, tag.lower()[:2]  # earlier wins a tie
        if tag in LANGS and q > best_q:
            best, best_q = tag, q
    return best
