"""The search stage, end to end: `plan` reads a request (planning.py; the query language: query.py),
`masks` finds which papers its parts allow, `rank` scores and fuses the two sides, `highlight` marks
the words worth showing, `engine.Searcher` composes them over a `corpus` (the store or Milvus), and
`evaluate` holds `paperdex eval`'s metrics. Callers import the names from here."""

from paperdex.search.corpus import lex_index
from paperdex.search.engine import Hit, Result, Searcher
from paperdex.search.highlight import distinguishing, mark, snippet, stems_of
from paperdex.search.masks import RELAX_BELOW, OverBudget, required
from paperdex.search.planning import MAX_WINDOW, MODES, SORTS, URL_NAMES, Filters, Plan, Request, plan
from paperdex.search.query import QueryError
from paperdex.search.rank import FUSION, MIN_COSINE, RANKED_LIST, close_matches, fuse, rrf, top_k

__all__ = ["lex_index", "Hit", "Result", "Searcher", "distinguishing", "mark", "snippet", "stems_of"]
__all__ += ["RELAX_BELOW", "OverBudget", "required", "QueryError"]
__all__ += ["MAX_WINDOW", "MODES", "SORTS", "URL_NAMES", "Filters", "Plan", "Request", "plan"]
__all__ += ["FUSION", "MIN_COSINE", "RANKED_LIST", "close_matches", "fuse", "rrf", "top_k"]
